"""``lensopt dashboard``: screenshot and report files, and one-line errors (exit code 2)."""

from __future__ import annotations

import os
import sqlite3
import subprocess
import sys

import pytest
from matplotlib.image import imread

from lensopt.cli import main

N_TRIALS = 40


def _store_simulated_session(path, n_trials=N_TRIALS, seed=3):
    """A simulated session (random rule: quick to build); returns its id."""
    from lensopt.observer import SimulatedPatient
    from lensopt.refraction.letters import RefractionOptimizer
    from lensopt.store import SessionStore, TrialRecord

    opt = RefractionOptimizer(rule="random", seed=seed)
    patient = SimulatedPatient(-0.5, 1.0, slope=5.0, seed=seed)
    with SessionStore(path) as store:
        sid = store.create_session("P03", {}, {}, opt.settings_dict(), seed)
        for i in range(1, n_trials + 1):
            trial = opt.ask()
            correct = patient.respond(trial.letter_logmar, trial.sphere_d, trial.cylinder_d)
            opt.tell(trial, correct)
            store.append_trial(
                sid,
                TrialRecord(
                    index=i,
                    sphere_d=trial.sphere_d,
                    cylinder_d=trial.cylinder_d,
                    letter_logmar=trial.letter_logmar,
                    letter="K",
                    response="K",
                    correct=correct,
                    rt_s=1.0,
                    presented_at=10.0 * i,
                    answered_at=10.0 * i + 1,
                ),
            )
        store.set_status(sid, "finished")
        empty = store.create_session("P04", {}, {}, opt.settings_dict(), seed)
    return sid, empty


@pytest.fixture(scope="module")
def db(tmp_path_factory):
    path = tmp_path_factory.mktemp("dashboard-cli") / "sessions.db"
    sid, empty = _store_simulated_session(path)
    return path, sid, empty


def _one_line_error(capsys, *fragments):
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and err.startswith("lensopt dashboard: error: "), err
    for fragment in fragments:
        assert fragment in err, err


def test_screenshot_writes_a_picture_of_all_four_panels(db, tmp_path):
    path, sid, _ = db
    out = tmp_path / "out.png"
    env = {k: v for k, v in os.environ.items() if k not in ("DISPLAY", "WAYLAND_DISPLAY", "QT_QPA_PLATFORM")}
    result = subprocess.run(
        [sys.executable, "-m", "lensopt", "dashboard", str(sid), "--db", str(path), "--screenshot", str(out)],
        capture_output=True,
        text=True,
        env=env,
        timeout=300,
    )
    assert result.returncode == 0, result.stderr
    assert f"written to {out}" in result.stdout
    gray = imread(out)[..., :3].mean(axis=2)
    height, width = gray.shape
    assert width >= 1000 and height >= 600
    top, bottom = int(0.12 * height), int(0.95 * height)  # the panels, between message lines and slider
    middle_y, middle_x = (top + bottom) // 2, width // 2
    for rows in (slice(top, middle_y), slice(middle_y, bottom)):
        for cols in (slice(0, middle_x), slice(middle_x, width)):
            assert gray[rows, cols].std() > 0.05, "a panel of the screenshot is blank"


@pytest.mark.skipif(not os.path.isdir("/proc/self"), reason="needs /proc: a folder no one can write in")
def test_a_screenshot_that_cannot_be_written_is_one_line_not_an_abort(db):
    """Found by a user audit: a screenshot to a full disk or an unwritable folder raised inside a Qt
    callback (a traceback, then an abort: exit 134)."""
    path, sid, _ = db
    env = {k: v for k, v in os.environ.items() if k not in ("DISPLAY", "WAYLAND_DISPLAY", "QT_QPA_PLATFORM")}
    result = subprocess.run(
        [sys.executable, "-m", "lensopt", "dashboard", str(sid), "--db", str(path), "--screenshot", "/proc/d.png"],
        capture_output=True,
        text=True,
        env=env,
        timeout=300,
    )
    assert result.returncode == 2 and "Traceback" not in result.stderr, result.stderr
    (line,) = [x for x in result.stderr.splitlines() if x.startswith("lensopt dashboard: ")]
    assert line.startswith(
        "lensopt dashboard: error: could not write the screenshot /proc/d.png: cannot write in /proc"
    )


def test_report_writes_a_one_page_pdf_without_importing_qt(db, tmp_path):
    path, sid, _ = db
    out = tmp_path / "report.pdf"
    script = (
        "import sys\n"
        "from lensopt.cli import main\n"
        f"code = main(['dashboard', '{sid}', '--db', {str(path)!r}, '--report', {str(out)!r}])\n"
        "print('qt loaded:', any(m.split('.')[0] in ('PyQt5', 'PyQt6') for m in sys.modules))\n"
        "sys.exit(code)\n"
    )
    result = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=300)
    assert result.returncode == 0, result.stderr
    assert f"written to {out}" in result.stdout and "qt loaded: False" in result.stdout
    info = subprocess.run(["pdfinfo", str(out)], capture_output=True, text=True, check=True).stdout
    assert "Pages:           1" in info


def test_missing_session_is_one_line(db, capsys):
    path, _, _ = db
    assert main(["dashboard", "99", "--db", str(path), "--report", "x.pdf"]) == 2
    _one_line_error(capsys, "no session 99", "lensopt sessions")


def test_missing_database_is_one_line(tmp_path, capsys):
    assert main(["dashboard", "--latest", "--db", str(tmp_path / "none.db"), "--report", "x.pdf"]) == 2
    _one_line_error(capsys, "no session database", "--db")


def test_empty_session_report_is_one_line(db, tmp_path, capsys):
    path, _, empty = db
    assert main(["dashboard", str(empty), "--db", str(path), "--report", str(tmp_path / "r.pdf")]) == 2
    _one_line_error(capsys, f"session {empty} has no trial yet")


def test_newer_schema_is_one_line(db, tmp_path, capsys):
    from lensopt.store import SCHEMA_VERSION

    path, sid, _ = db
    newer = tmp_path / "newer.db"
    with sqlite3.connect(path) as source, sqlite3.connect(newer) as target:
        source.backup(target)
        target.execute(f"PRAGMA user_version = {SCHEMA_VERSION + 1}")
    assert main(["dashboard", str(sid), "--db", str(newer), "--report", str(tmp_path / "r.pdf")]) == 2
    _one_line_error(capsys, "newer lensopt", "upgrade")


@pytest.mark.parametrize(
    ("arguments", "fragment"),
    [
        (["1", "--latest"], "either a SESSION_ID or --latest"),
        (["0"], "SESSION_ID must be a positive integer"),
        (["1", "--report", "report.svg"], "must end in .pdf or .png"),
        (["1", "--screenshot", "shot.jpg"], "must end in .png"),
        (["1", "--report", "/no/such/folder/r.pdf"], "does not exist"),
        (["1", "--report", f"{__file__}/r.pdf"], f"{__file__} is a file, not a folder"),  # this test file
    ],
)
def test_bad_arguments_are_one_line(db, capsys, arguments, fragment):
    path, _, _ = db
    assert main(["dashboard", *arguments, "--db", str(path)]) == 2
    _one_line_error(capsys, fragment)


def test_window_without_a_display_is_one_line(db, monkeypatch, capsys):
    path, sid, _ = db
    for name in ("DISPLAY", "WAYLAND_DISPLAY", "QT_QPA_PLATFORM"):
        monkeypatch.delenv(name, raising=False)
    assert main(["dashboard", str(sid), "--db", str(path)]) == 2
    _one_line_error(capsys, "no display", "--screenshot")


def test_a_screen_the_desktop_lacks_is_said_and_the_window_still_opens(db, tmp_path):
    path, sid, _ = db
    out = tmp_path / "out.png"
    env = {k: v for k, v in os.environ.items() if k not in ("DISPLAY", "WAYLAND_DISPLAY")}
    command = [sys.executable, "-m", "lensopt", "dashboard", str(sid), "--db", str(path), "--screenshot", str(out)]
    result = subprocess.run(
        [*command, "--screen", "7"],
        capture_output=True,
        text=True,
        env={**env, "QT_QPA_PLATFORM": "offscreen"},
        timeout=300,
    )
    assert result.returncode == 0 and out.exists(), result.stderr
    assert "lensopt dashboard: note: no screen 7 (this desktop has 1)" in result.stderr


def test_the_window_opens_at_the_top_left_of_the_screen_asked_for_within_it(monkeypatch):
    monkeypatch.setenv("QT_QPA_PLATFORM", "offscreen")
    from PyQt5.QtWidgets import QApplication, QWidget

    from lensopt.cli.handlers.dashboard import _place_on_screen

    app = QApplication.instance() or QApplication(["test"])
    window = QWidget()
    window.resize(100_000, 300)  # wider than any screen
    _place_on_screen(app, window, 0)
    area = app.screens()[0].availableGeometry()
    assert (window.x(), window.y()) == (area.x(), area.y()) and window.width() <= area.width()
    window.close()


@pytest.mark.parametrize("screen", ["-1", "16", "1.5"])
def test_a_screen_number_out_of_range_is_one_line(db, capsys, screen):
    path, _, _ = db
    with pytest.raises(SystemExit) as exit_:
        main(["dashboard", "1", "--db", str(path), "--screen", screen])
    assert exit_.value.code == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "argument --screen:" in err, err


@pytest.mark.parametrize("screen", [0, None])  # from screen 0's top left, or on the desktop: the same here
@pytest.mark.parametrize(
    ("geometry", "expected"),
    [
        ((300, 200, 10, 20), (10, 20, 300, 200)),  # within the screen: as asked
        ((100_000, 200, 10, 20), (10, 20, None, 200)),  # wider than the screen: cut at its right edge
        ((300, 200, 100_000, 20), (0, 0, 300, 200)),  # off the screen: at its top left
        ((300, 200, -5000, 20), (0, 0, 300, 200)),  # left of it, on no screen: at its top left
    ],
)
def test_a_geometry_places_the_window_on_its_screen_within_the_screens_area(monkeypatch, screen, geometry, expected):
    monkeypatch.setenv("QT_QPA_PLATFORM", "offscreen")
    from PyQt5.QtCore import Qt
    from PyQt5.QtWidgets import QApplication, QWidget

    from lensopt.cli.handlers.dashboard import WindowPlace, _place

    app = QApplication.instance() or QApplication(["test"])
    assert len(app.screens()) == 1 and app.screens()[0].geometry().topLeft().isNull()
    window = QWidget()
    window.resize(640, 480)
    _place(app, window, WindowPlace(screen=screen, geometry=geometry, no_activate=True))
    area = app.screens()[0].availableGeometry()
    left, top, width, height = expected
    width = area.width() - left if width is None else width
    assert (window.x(), window.y(), window.width(), window.height()) == (
        area.x() + left,
        area.y() + top,
        width,
        height,
    )
    assert window.testAttribute(Qt.WidgetAttribute.WA_ShowWithoutActivating)  # the console keeps the keyboard
    window.close()


def test_a_run_dashboards_options_open_the_window_and_render_it(db, tmp_path):
    """The options lensopt run --dashboard passes (a place beside the console, or minimized, and never
    the keyboard) open the window for real: its screenshot is the session's."""
    path, sid, _ = db
    env = {k: v for k, v in os.environ.items() if k not in ("DISPLAY", "WAYLAND_DISPLAY")}
    for options in (
        ["--screen", "0", "--geometry", "700x660+50+40", "--no-activate"],
        ["--minimized", "--no-activate"],
    ):
        out = tmp_path / f"{options[0].strip('-')}.png"
        command = [sys.executable, "-m", "lensopt", "dashboard", str(sid), "--db", str(path), "--screenshot", str(out)]
        result = subprocess.run(
            [*command, *options],
            capture_output=True,
            text=True,
            env={**env, "QT_QPA_PLATFORM": "offscreen"},
            timeout=300,
        )
        assert result.returncode == 0 and out.stat().st_size > 10_000, result.stderr
        assert f"screenshot of session {sid} written" in result.stdout
