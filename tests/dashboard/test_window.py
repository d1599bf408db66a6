"""The dashboard window under pytest-qt (QT_QPA_PLATFORM=offscreen, set in tests/conftest.py)."""

from __future__ import annotations

import os
import shutil
import sqlite3
import stat
import subprocess
import sys
import textwrap

import numpy as np
import pytest

pytest.importorskip("PyQt5")
pytest.importorskip("pytestqt")
from pytestqt.qt_compat import qt_api

if qt_api.pytest_qt_api != "pyqt5":  # PyQt5 and PyQt6 in one process abort it
    pytest.skip(
        f'pytest-qt uses {qt_api.pytest_qt_api}, the dashboard PyQt5: set qt_api = "pyqt5" in '
        "[tool.pytest.ini_options] (or PYTEST_QT_API=pyqt5)",
        allow_module_level=True,
    )

from PyQt5.QtGui import QImage

from lensopt.dashboard.window import DashboardWindow
from lensopt.experiment.window_layout import MIN_DASHBOARD_PX

N_TRIALS = 40
#: Generous limits for a loaded 2-core machine; they bound waiting, they do not measure speed.
WAIT_MS = 60_000


def _store_simulated_session(path, n_trials=N_TRIALS, rule="ucb-ald", seed=0, status="finished"):
    """A simulated session written the way the experiment writes it; returns (session id, history)."""
    from lensopt.observer import SimulatedPatient
    from lensopt.refraction.letters import RefractionOptimizer
    from lensopt.store import SessionStore, TrialRecord

    opt = RefractionOptimizer(rule=rule, seed=seed)
    patient = SimulatedPatient(-1.25, 0.75, slope=5.0, seed=seed)
    with SessionStore(path) as store:
        sid = store.create_session("P01", {"letters": "ABCDEFGHIJKLMNOPQRSTUVWXYZ"}, {}, opt.settings_dict(), seed)
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
                    response="K" if correct else "X",
                    correct=correct,
                    rt_s=0.8,
                    presented_at=1000.0 + 3 * i,
                    answered_at=1000.8 + 3 * i,
                ),
            )
        store.set_status(sid, status)
    return sid, opt.history


@pytest.fixture(scope="module")
def stored(tmp_path_factory):
    """A running 40-trial simulated session (a template: tests copy the file before changing it)."""
    path = tmp_path_factory.mktemp("dashboard-window") / "template.db"
    sid, history = _store_simulated_session(path, status="running")
    return path, sid, history


@pytest.fixture
def db_copy(stored, tmp_path):
    path, sid, history = stored
    copy = tmp_path / "sessions.db"
    shutil.copy(path, copy)
    return copy, sid, history


def _open(qtbot, db_path, session_id, **kwargs):
    window = DashboardWindow(db_path, session_id, poll_interval_ms=100, **kwargs)
    qtbot.addWidget(window)
    window.show()
    return window


def _best_lens_text(history, info_settings):
    from lensopt.refraction.letters import RefractionOptimizer

    sphere, cylinder = RefractionOptimizer.from_settings(info_settings, history).best()
    # a cylinder without an axis is not prescribed: an estimated lens, not the best lens
    return f"estimated lens S {sphere:+.2f} ± ", f"C {cylinder:+.2f} ± "


def _settings(db_path, sid):
    from lensopt.store import SessionStore

    with SessionStore(db_path, readonly=True) as store:
        return store.session(sid).optimizer_settings


def _quadrant_spreads(image: QImage) -> list[float]:
    width, height = image.width(), image.height()
    pixels = np.frombuffer(
        image.convertToFormat(QImage.Format_Grayscale8).constBits().asstring(image.width() * image.height()),
        dtype=np.uint8,
    )
    gray = pixels.reshape(height, width)
    top = int(0.12 * height)  # below the menu and the message lines
    rows = (slice(top, (top + height) // 2), slice((top + height) // 2, int(0.95 * height)))
    return [float(gray[r, c].std()) for r in rows for c in (slice(0, width // 2), slice(width // 2, width))]


def test_window_opens_on_a_stored_session_shows_the_optimizers_best_lens_and_exports(qtbot, db_copy, tmp_path):
    db_path, sid, history = db_copy
    window = _open(qtbot, db_path, sid)
    qtbot.waitUntil(lambda: window.snapshot is not None, timeout=WAIT_MS)
    text = window.summary_label.text()
    assert f"{N_TRIALS} trials" in text
    sphere_text, cylinder_text = _best_lens_text(history, _settings(db_path, sid))
    assert sphere_text in text and cylinder_text in text
    best = window.snapshot.best
    from lensopt.refraction.letters import RefractionOptimizer

    expected = RefractionOptimizer.from_settings(_settings(db_path, sid), history).best()
    np.testing.assert_allclose((best.sphere_d, best.cylinder_d), expected, atol=1e-9)

    previous = os.umask(0o022)
    try:
        shot = window.save_screenshot(tmp_path / "window.png")
    finally:
        os.umask(previous)
    assert stat.S_IMODE(os.stat(shot).st_mode) == 0o600  # a patient's answers: its owner's only
    image = QImage(str(shot))
    assert image.width() >= 1000 and image.height() >= 600
    assert all(spread > 10.0 for spread in _quadrant_spreads(image)), "a panel is blank"
    pdf = window.export_report(tmp_path / "report.pdf")
    info = subprocess.run(["pdfinfo", str(pdf)], capture_output=True, text=True, check=True).stdout
    assert "Pages:           1" in info
    window.shutdown()


def test_the_windows_report_of_a_session_of_both_eyes_has_each_eyes_page(qtbot, tmp_path):
    """Exported from the window following an OU session, the report gave the live eye's page only."""
    from lensopt.observer import SimulatedPatient
    from lensopt.refraction.letters import RefractionOptimizer
    from lensopt.store import SessionStore
    from tests.dashboard.dashboard_records import answered_record

    path, n_each = tmp_path / "ou.db", 6
    with SessionStore(path) as store:
        settings = RefractionOptimizer(rule="random", seed=5).settings_dict()
        sid = store.create_session("OU1", {"session": {"eye": "OU"}}, {}, settings, 5)
        for k, eye in enumerate(("OD", "OS")):
            opt, patient = RefractionOptimizer(rule="random", seed=5 + k), SimulatedPatient(-1.0, -0.5, seed=k)
            for i in range(1, n_each + 1):
                trial = opt.ask()
                correct = bool(patient.respond(trial.letter_logmar, trial.sphere_d, trial.cylinder_d))
                opt.tell(trial, correct)
                store.append_trial(sid, answered_record(k * n_each + i, trial, correct, eye=eye))
        store.set_status(sid, "finished")
    window = _open(qtbot, path, sid)
    qtbot.waitUntil(lambda: window.snapshot is not None and window.snapshot.n_trials == 2 * n_each, timeout=WAIT_MS)
    assert window.snapshot.model_eye == "OS (left eye)"
    pdf = window.export_report(tmp_path / "report.pdf")
    text = subprocess.run(["pdftotext", str(pdf), "-"], capture_output=True, text=True, check=True).stdout
    pages = text.split("\f")
    assert "model of OD (right eye)" in pages[0] and "model of OS (left eye)" in pages[1]
    window.shutdown()


def test_window_follows_trials_appended_by_another_process(qtbot, db_copy):
    db_path, sid, _ = db_copy
    window = _open(qtbot, db_path, sid)
    qtbot.waitUntil(lambda: f"{N_TRIALS} trials" in window.summary_label.text(), timeout=WAIT_MS)
    writer = textwrap.dedent(f"""
        import time
        from lensopt.store import SessionStore, TrialRecord
        with SessionStore({str(db_path)!r}) as store:
            for i in range({N_TRIALS + 1}, {N_TRIALS + 3}):
                time.sleep(0.3)
                store.append_trial({sid}, TrialRecord(index=i, sphere_d=-1.0, cylinder_d=0.5,
                    letter_logmar=0.3, letter="H", response="H", correct=True, rt_s=0.7,
                    presented_at=2000.0 + i, answered_at=2000.7 + i))
    """)
    process = subprocess.Popen([sys.executable, "-c", writer])
    try:
        qtbot.waitUntil(lambda: f"{N_TRIALS + 2} trials" in window.summary_label.text(), timeout=WAIT_MS)
    finally:
        assert process.wait(timeout=60) == 0
    assert window.snapshot.n_trials == N_TRIALS + 2 and window.snapshot.live
    assert window.slider.maximum() == N_TRIALS + 2
    window.shutdown()


def test_replay_slider_shows_the_session_after_an_earlier_trial_then_follows_again(qtbot, db_copy):
    db_path, sid, history = db_copy
    window = _open(qtbot, db_path, sid)
    qtbot.waitUntil(lambda: window.snapshot is not None, timeout=WAIT_MS)
    window.replay_to(12)
    qtbot.waitUntil(lambda: window.snapshot.n_trials == 12, timeout=WAIT_MS)
    assert not window.snapshot.live
    assert "Replay of session" in window.message_label.text()
    assert "12 trials" in window.summary_label.text()
    sphere_text, cylinder_text = _best_lens_text(history[:12], _settings(db_path, sid))
    assert sphere_text in window.summary_label.text() and cylinder_text in window.summary_label.text()
    window.replay_to(N_TRIALS)
    qtbot.waitUntil(lambda: window.snapshot.n_trials == N_TRIALS and window.snapshot.live, timeout=WAIT_MS)
    window.shutdown()


def test_replay_flag_starts_at_the_first_trial(qtbot, db_copy):
    db_path, sid, _ = db_copy
    window = _open(qtbot, db_path, sid, replay=True)
    qtbot.waitUntil(lambda: window.snapshot is not None, timeout=WAIT_MS)
    assert window.snapshot.n_trials == 1 and window.slider.value() == 1
    window.shutdown()


def test_missing_session_is_a_message_in_the_window(qtbot, db_copy):
    db_path, _, _ = db_copy
    window = _open(qtbot, db_path, 99)
    qtbot.waitUntil(lambda: "no session 99" in window.message_label.text(), timeout=WAIT_MS)
    assert window.snapshot is None and window.isVisible()
    window.shutdown()


def test_missing_database_file_is_a_message_in_the_window(qtbot, tmp_path):
    window = _open(qtbot, tmp_path / "nowhere.db", 1)
    qtbot.waitUntil(lambda: "no session database" in window.message_label.text(), timeout=WAIT_MS)
    window.shutdown()


def test_empty_session_waits_for_the_first_trial_then_shows_it(qtbot, tmp_path):
    from lensopt.refraction.letters import RefractionOptimizer
    from lensopt.store import SessionStore, TrialRecord

    path = tmp_path / "empty.db"
    settings = RefractionOptimizer(rule="random", seed=1).settings_dict()
    with SessionStore(path) as store:
        sid = store.create_session("P02", {}, {}, settings, 1)
    window = _open(qtbot, path, sid)
    qtbot.waitUntil(lambda: "waiting for the first trial" in window.message_label.text(), timeout=WAIT_MS)
    assert "0 trials" in window.summary_label.text()
    with SessionStore(path) as store:
        store.append_trial(
            sid,
            TrialRecord(
                index=1,
                sphere_d=0.0,
                cylinder_d=0.0,
                letter_logmar=0.5,
                letter="K",
                response="K",
                correct=True,
                rt_s=1.0,
                presented_at=1.0,
                answered_at=2.0,
            ),
        )
    qtbot.waitUntil(lambda: "1 trial ·" in window.summary_label.text(), timeout=WAIT_MS)
    window.shutdown()


def test_database_from_a_newer_schema_is_a_message_in_the_window(qtbot, db_copy):
    from lensopt.store import SCHEMA_VERSION

    db_path, sid, _ = db_copy
    with sqlite3.connect(db_path) as conn:
        conn.execute(f"PRAGMA user_version = {SCHEMA_VERSION + 1}")
    window = _open(qtbot, db_path, sid)
    qtbot.waitUntil(lambda: "newer lensopt" in window.message_label.text(), timeout=WAIT_MS)
    assert window.snapshot is None
    window.shutdown()


def test_the_window_counts_the_answers_kept_and_says_the_undone_one_apart(qtbot, tmp_path):
    """8 letter rows, the 5th undone by the clinician: the summary line, the slider and the replay
    line said 8 trials (and "trial 5 of 8" on the undone one); they count 7 answers, the undone one
    said apart."""
    from tests.dashboard.conftest import UNDONE, UNDONE_ROWS, store_undone_letters

    path = tmp_path / "undone.db"
    sid, _ = store_undone_letters(path, prescription=False)
    window = _open(qtbot, path, sid)
    qtbot.waitUntil(lambda: window.snapshot is not None, timeout=WAIT_MS)
    assert " · 7 trials (+1 undone) · " in window.summary_label.text()
    assert window.slider.maximum() == UNDONE_ROWS  # the slider still runs over every row stored
    assert window.slider_label.text() == "trial 7 of 7 (+1 undone, latest)"
    window.replay_to(UNDONE - 1)
    qtbot.waitUntil(lambda: window.snapshot.n_trials == UNDONE - 1, timeout=WAIT_MS)
    assert window.slider_label.text() == f"trial {UNDONE - 1} of 7 (replay)"
    assert window.message_label.text().startswith(f"Replay of session {sid}: first {UNDONE - 1} of 7 trials — ")
    window.replay_to(UNDONE)
    qtbot.waitUntil(lambda: window.snapshot.n_trials == UNDONE, timeout=WAIT_MS)
    assert window.slider_label.text() == f"trial {UNDONE - 1} of 7 (+1 undone, replay)"
    assert window.message_label.text().startswith(
        f"Replay of session {sid}: first {UNDONE - 1} of 7 trials (+1 undone) — "
    )
    assert f" · {UNDONE - 1} trials (+1 undone) · " in window.summary_label.text()
    window.shutdown()


def test_the_place_beside_the_console_holds_the_whole_window(qtbot, db_copy):
    """lensopt run --dashboard looks for a place of at least MIN_DASHBOARD_PX beside the console: the
    window showing a session must fit it, or it would spill off the screen."""
    db_path, sid, _ = db_copy
    window = _open(qtbot, db_path, sid)
    qtbot.waitUntil(lambda: window.snapshot is not None, timeout=WAIT_MS)
    least = window.minimumSizeHint()
    assert least.width() <= MIN_DASHBOARD_PX[0] and least.height() <= MIN_DASHBOARD_PX[1], least
    window.resize(*MIN_DASHBOARD_PX)
    qtbot.waitUntil(lambda: (window.width(), window.height()) == MIN_DASHBOARD_PX, timeout=WAIT_MS)
    window.shutdown()
