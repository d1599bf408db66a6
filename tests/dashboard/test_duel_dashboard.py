"""The dashboard on a duel session: window, follow mode, replay, screenshot and report."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys

import numpy as np
import pytest

pytest.importorskip("PyQt5")
pytest.importorskip("pytestqt")
from pytestqt.qt_compat import qt_api  # noqa: E402

if qt_api.pytest_qt_api != "pyqt5":  # PyQt5 and PyQt6 in one process abort it
    pytest.skip("pytest-qt must use pyqt5 (see tests/dashboard/test_window.py)", allow_module_level=True)

from matplotlib.image import imread  # noqa: E402

from lensopt.cli import main  # noqa: E402
from lensopt.dashboard.window import DashboardWindow  # noqa: E402
from lensopt.duel_refraction import DuelRefractionOptimizer, DuelTrial  # noqa: E402
from lensopt.store import DuelTrialRecord, SessionStore  # noqa: E402

N_DUELS = 12
#: Generous limits for a loaded 2-core machine; they bound waiting, they do not measure speed.
WAIT_MS = 60_000


@pytest.fixture(scope="module")
def stored(tmp_path_factory, store_simulated_duels):
    """A running simulated duel session (a template: tests copy the file before changing it)."""
    path = tmp_path_factory.mktemp("duel-dashboard") / "template.db"
    sid, _ = store_simulated_duels(path, N_DUELS)
    return path, sid


@pytest.fixture
def db_copy(stored, tmp_path):
    path, sid = stored
    copy = tmp_path / "sessions.db"
    shutil.copy(path, copy)
    return copy, sid


def _open(qtbot, db_path, session_id, **kwargs):
    window = DashboardWindow(db_path, session_id, poll_interval_ms=100, **kwargs)
    qtbot.addWidget(window)
    window.show()
    return window


def _rebuilt_best_lens(db_path, sid, n=None):
    with SessionStore(db_path, readonly=True) as store:
        info, records = store.session(sid), store.duel_trials(sid)
    history = [(DuelTrial(r.first_lens_d, r.second_lens_d, r.letter_logmar), r.answer) for r in records[:n]]
    return DuelRefractionOptimizer.from_settings(info.optimizer_settings, history).best_lens()


def _distinct_colours(image_rgb) -> int:
    """Colours (to 1/32) other than the most common one (the background) covering >= 0.05% of pixels."""
    levels = np.round(np.asarray(image_rgb)[..., :3] * 31).astype(int).reshape(-1, 3)
    _, counts = np.unique(levels, axis=0, return_counts=True)
    counts = np.sort(counts)[::-1][1:]
    return int(np.sum(counts >= 0.0005 * len(levels)))


def test_window_shows_the_rebuilt_duel_optimizers_best_lens_and_exports_a_one_page_report(qtbot, db_copy, tmp_path):
    db_path, sid = db_copy
    window = _open(qtbot, db_path, sid)
    qtbot.waitUntil(lambda: window.snapshot is not None, timeout=WAIT_MS)
    sphere, cylinder = _rebuilt_best_lens(db_path, sid)
    np.testing.assert_allclose((window.snapshot.best.sphere_d, window.snapshot.best.cylinder_d), (sphere, cylinder),
                               atol=1e-12)
    text = window.summary_label.text()
    assert f"{N_DUELS} duels" in text and f"best lens S {sphere:+.2f} ± " in text and f"C {cylinder:+.2f} ± " in text
    assert "Duel session" in text and "rule muc-ald" in window.message_label.text()

    shot = imread(window.save_screenshot(tmp_path / "window.png"))
    assert shot.shape[1] >= 1000 and shot.shape[0] >= 600
    assert _distinct_colours(shot) >= 8, "the screenshot has too few colours to show the panels"
    pdf = window.export_report(tmp_path / "report.pdf")
    info = subprocess.run(["pdfinfo", str(pdf)], capture_output=True, text=True, check=True).stdout
    assert "Pages:           1" in info
    window.shutdown()


def test_window_follows_a_duel_appended_by_another_connection(qtbot, db_copy):
    db_path, sid = db_copy
    window = _open(qtbot, db_path, sid)
    qtbot.waitUntil(lambda: f"{N_DUELS} duels" in window.summary_label.text(), timeout=WAIT_MS)
    with SessionStore(db_path) as writer:
        writer.append_duel_trial(sid, DuelTrialRecord(N_DUELS + 1, -1.0, -0.5, -1.25, -0.5, 0.3, "HKNOR", "same",
                                                      0.9, 500.0, 501.0))
    qtbot.waitUntil(lambda: f"{N_DUELS + 1} duels" in window.summary_label.text(), timeout=WAIT_MS)
    assert window.snapshot.live and window.slider.maximum() == N_DUELS + 1
    assert window.snapshot.duels.answer[-1] == "same"
    window.shutdown()


def test_replay_slider_shows_a_duel_session_after_an_earlier_duel(qtbot, db_copy):
    db_path, sid = db_copy
    window = _open(qtbot, db_path, sid)
    qtbot.waitUntil(lambda: window.snapshot is not None, timeout=WAIT_MS)
    window.replay_to(6)
    qtbot.waitUntil(lambda: window.snapshot.n_trials == 6, timeout=WAIT_MS)
    assert not window.snapshot.live and "6 duels" in window.summary_label.text()
    np.testing.assert_allclose((window.snapshot.best.sphere_d, window.snapshot.best.cylinder_d),
                               _rebuilt_best_lens(db_path, sid, 6), atol=1e-12)
    window.shutdown()


def test_an_empty_duel_session_says_it_waits_for_the_first_duel(qtbot, tmp_path):
    path = tmp_path / "empty.db"
    with SessionStore(path) as store:
        sid = store.create_session("D05", {}, {}, DuelRefractionOptimizer(seed=1).settings_dict(), 1, kind="duel")
    window = _open(qtbot, path, sid)
    qtbot.waitUntil(lambda: "waiting for the first duel" in window.message_label.text(), timeout=WAIT_MS)
    assert "0 duels" in window.summary_label.text() and window.isVisible()
    window.shutdown()


def test_cli_report_of_a_duel_session_is_one_pdf_page(stored, tmp_path, capsys):
    path, sid = stored
    out = tmp_path / "duel-report.pdf"
    assert main(["dashboard", str(sid), "--db", str(path), "--report", str(out)]) == 0
    assert f"report of session {sid} written to {out}" in capsys.readouterr().out
    info = subprocess.run(["pdfinfo", str(out)], capture_output=True, text=True, check=True).stdout
    assert "Pages:           1" in info and "D02" in info


def test_cli_screenshot_of_a_duel_session_draws_every_panel(stored, tmp_path):
    path, sid = stored
    out = tmp_path / "duel.png"
    env = {k: v for k, v in os.environ.items() if k not in ("DISPLAY", "WAYLAND_DISPLAY", "QT_QPA_PLATFORM")}
    result = subprocess.run(
        [sys.executable, "-m", "lensopt", "dashboard", str(sid), "--db", str(path), "--screenshot", str(out)],
        capture_output=True, text=True, env=env, timeout=300,
    )
    assert result.returncode == 0, result.stderr
    image = imread(out)
    gray = image[..., :3].mean(axis=2)
    height, width = gray.shape
    assert width >= 1000 and height >= 600 and _distinct_colours(image) >= 8
    top, bottom = int(0.12 * height), int(0.95 * height)  # the panels, between message lines and slider
    middle_y, middle_x = (top + bottom) // 2, width // 2
    for rows in (slice(top, middle_y), slice(middle_y, bottom)):
        for cols in (slice(0, middle_x), slice(middle_x, width)):
            assert gray[rows, cols].std() > 0.05, "a panel of the duel screenshot is blank"
