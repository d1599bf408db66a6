"""The dashboard on a duel or a ranking session: window, follow mode, replay, screenshot and report."""

from __future__ import annotations

import os
import shutil
import sqlite3
import subprocess
import sys

import numpy as np
import pytest

pytest.importorskip("PyQt5")
pytest.importorskip("pytestqt")
from pytestqt.qt_compat import qt_api

if qt_api.pytest_qt_api != "pyqt5":  # PyQt5 and PyQt6 in one process abort it
    pytest.skip("pytest-qt must use pyqt5 (see tests/dashboard/test_window.py)", allow_module_level=True)

from matplotlib.figure import Figure
from matplotlib.image import imread

from lensopt.cli import main
from lensopt.dashboard.comparison_panels import draw_comparison_lens_map
from lensopt.dashboard.model import snapshot_from_store
from lensopt.dashboard.window import DashboardWindow
from lensopt.refraction.duels import DuelRefractionOptimizer, DuelTrial
from lensopt.refraction.rankings import RankingRefractionOptimizer, RankingTrial
from lensopt.store import DuelTrialRecord, RankingTrialRecord, SessionStore
from lensopt.store.claim import claim_session
from tests.dashboard.conftest import legends_over_data, panel_legends

N_TRIALS = 12
#: Generous limits for a loaded 2-core machine; they bound waiting, they do not measure speed.
WAIT_MS = 60_000
#: The kinds of session that compare lenses: (kind, participant of the stored session, default rule).
KINDS = {"duel": ("D02", "muc-ald"), "ranking": ("R02", "mpes-ald")}


@pytest.fixture(scope="module", params=list(KINDS))
def stored(request, tmp_path_factory, store_simulated_duels, store_simulated_rankings):
    """A running simulated session of each kind (a template: tests copy the file before changing it)."""
    kind = request.param
    path = tmp_path_factory.mktemp(f"{kind}-dashboard") / "template.db"
    store = store_simulated_duels if kind == "duel" else store_simulated_rankings
    sid, _ = store(path, N_TRIALS)
    return kind, path, sid


@pytest.fixture
def db_copy(stored, tmp_path):
    kind, path, sid = stored
    copy = tmp_path / "sessions.db"
    shutil.copy(path, copy)
    return kind, copy, sid


def _open(qtbot, db_path, session_id, **kwargs):
    window = DashboardWindow(db_path, session_id, poll_interval_ms=100, **kwargs)
    qtbot.addWidget(window)
    window.show()
    return window


def _rebuilt_best_lens(kind, db_path, sid, n=None):
    """``best()`` of the session's optimizer rebuilt on its first ``n`` stored answers."""
    with SessionStore(db_path, readonly=True) as store:
        info = store.session(sid)
        if kind == "duel":
            history = [
                (DuelTrial(r.first_lens_d, r.second_lens_d, r.letter_logmar), r.answer)
                for r in store.duel_trials(sid)[:n]
            ]
            return DuelRefractionOptimizer.from_settings(info.optimizer_settings, history).best()
        history = [(RankingTrial(r.lenses_d, r.letter_logmar), r.order) for r in store.ranking_trials(sid)[:n]]
    return RankingRefractionOptimizer.from_settings(info.optimizer_settings, history).best()


def _append_one(kind, db_path, sid, index):
    """One more answer, written by another connection as the running experiment would."""
    with SessionStore(db_path) as writer:
        if kind == "duel":
            writer.append_duel_trial(
                sid, DuelTrialRecord(index, -1.0, -0.5, -1.25, -0.5, 0.3, "HKNOR", "same", 0.9, 500.0, 501.0)
            )
        else:
            writer.append_ranking_trial(
                sid,
                RankingTrialRecord(
                    index, ((-1.0, -0.5), (-1.25, -0.5), (0.5, 1.0)), 0.3, "HKNOR", (2, 0, 1), 0.9, 500.0, 501.0
                ),
            )


def _distinct_colours(image_rgb) -> int:
    """Colours (to 1/32) other than the most common one (the background) covering >= 0.05% of pixels."""
    levels = np.round(np.asarray(image_rgb)[..., :3] * 31).astype(int).reshape(-1, 3)
    _, counts = np.unique(levels, axis=0, return_counts=True)
    counts = np.sort(counts)[::-1][1:]
    return int(np.sum(counts >= 0.0005 * len(levels)))


def test_window_shows_the_rebuilt_optimizers_best_lens_and_exports_a_one_page_report(qtbot, db_copy, tmp_path):
    kind, db_path, sid = db_copy
    window = _open(qtbot, db_path, sid)
    qtbot.waitUntil(lambda: window.snapshot is not None, timeout=WAIT_MS)
    sphere, cylinder = _rebuilt_best_lens(kind, db_path, sid)
    np.testing.assert_allclose(
        (window.snapshot.best.sphere_d, window.snapshot.best.cylinder_d), (sphere, cylinder), atol=1e-12
    )
    text = window.summary_label.text()
    assert f"{N_TRIALS} {kind}s" in text
    assert f"best lens S {sphere:+.2f} ± " in text and f"C {cylinder:+.2f} ± " in text
    assert f"{kind.capitalize()} session" in text and "waiting" not in text and "trial" not in text
    assert f"rule {KINDS[kind][1]}" in window.message_label.text()
    # stored as running, run by no program (its writer was a test): interrupted, as lensopt sessions says
    assert window.slider_label.text() == f"{kind} {N_TRIALS} of {N_TRIALS} (interrupted)"
    assert f" · interrupted · rule {KINDS[kind][1]}" in window.message_label.text()
    who = KINDS[kind][0]
    assert f"{kind.capitalize()} session {sid} ({who}, interrupted)" in text
    with claim_session(db_path, sid):  # as lensopt run holds a session it runs: nothing new in the database
        qtbot.waitUntil(
            lambda: window.slider_label.text() == f"{kind} {N_TRIALS} of {N_TRIALS} (live)", timeout=WAIT_MS
        )
        assert f" · running · rule {KINDS[kind][1]}" in window.message_label.text()
        assert f"session {sid} ({who}, running)" in window.summary_label.text()
    # its program gone (killed: nothing written), the window says so within a poll or two
    qtbot.waitUntil(lambda: window.slider_label.text().endswith("(interrupted)"), timeout=WAIT_MS)
    assert f"session {sid} ({who}, interrupted)" in window.summary_label.text()

    shot = imread(window.save_screenshot(tmp_path / "window.png"))
    assert shot.shape[1] >= 1000 and shot.shape[0] >= 600
    assert _distinct_colours(shot) >= 8, "the screenshot has too few colours to show the panels"
    pdf = window.export_report(tmp_path / "report.pdf")
    info = subprocess.run(["pdfinfo", str(pdf)], capture_output=True, text=True, check=True).stdout
    assert "Pages:           1" in info
    window.shutdown()


def test_window_follows_an_answer_appended_by_another_connection(qtbot, db_copy):
    kind, db_path, sid = db_copy
    window = _open(qtbot, db_path, sid)
    qtbot.waitUntil(lambda: f"{N_TRIALS} {kind}s" in window.summary_label.text(), timeout=WAIT_MS)
    _append_one(kind, db_path, sid, N_TRIALS + 1)
    qtbot.waitUntil(lambda: f"{N_TRIALS + 1} {kind}s" in window.summary_label.text(), timeout=WAIT_MS)
    assert window.snapshot.live and window.slider.maximum() == N_TRIALS + 1
    sets = window.snapshot.sets
    if kind == "duel":
        assert sets.tied[-1] and sets.clearest[-1] == 0  # "the same"
    else:
        assert sets.order[-1] == (2, 0, 1) and sets.clearest[-1] == 3
    # the live optimizer was told the new answer; a probit duel model warm-starts its fit from the
    # previous one, so it agrees with a rebuild to the fit's tolerance, not to the last bit
    np.testing.assert_allclose(
        (window.snapshot.best.sphere_d, window.snapshot.best.cylinder_d),
        _rebuilt_best_lens(kind, db_path, sid),
        atol=1e-4,
    )
    window.shutdown()


def test_replay_slider_shows_the_session_after_an_earlier_answer(qtbot, db_copy):
    kind, db_path, sid = db_copy
    window = _open(qtbot, db_path, sid)
    qtbot.waitUntil(lambda: window.snapshot is not None, timeout=WAIT_MS)
    window.replay_to(6)
    qtbot.waitUntil(lambda: window.snapshot.n_trials == 6, timeout=WAIT_MS)
    assert not window.snapshot.live and f"6 {kind}s" in window.summary_label.text()
    assert f"first 6 of {N_TRIALS} {kind}s" in window.message_label.text()
    np.testing.assert_allclose(
        (window.snapshot.best.sphere_d, window.snapshot.best.cylinder_d),
        _rebuilt_best_lens(kind, db_path, sid, 6),
        atol=1e-12,
    )
    window.shutdown()


@pytest.mark.parametrize("kind", list(KINDS))
def test_an_empty_session_says_it_waits_for_the_first_answer(qtbot, tmp_path, kind):
    path = tmp_path / "empty.db"
    optimizer = DuelRefractionOptimizer(seed=1) if kind == "duel" else RankingRefractionOptimizer(seed=1)
    with SessionStore(path) as store:
        sid = store.create_session("E05", {}, {}, optimizer.settings_dict(), 1, kind=kind)
    window = _open(qtbot, path, sid)
    qtbot.waitUntil(lambda: f"waiting for the first {kind}" in window.message_label.text(), timeout=WAIT_MS)
    assert f"0 {kind}s" in window.summary_label.text() and window.isVisible()
    assert "trial" not in window.summary_label.text() + window.message_label.text()
    window.shutdown()


def _future_session(tmp_path):
    """A database holding one session of a kind this version does not know (written by a newer lensopt)."""
    path = tmp_path / "future.db"
    with SessionStore(path) as store:
        sid = store.create_session("F01", {}, {}, {}, 1, kind="ranking")
    with sqlite3.connect(path) as conn:
        conn.execute("UPDATE sessions SET kind = 'hologram' WHERE id = ?", (sid,))
    return path, sid


def test_a_session_of_an_unknown_kind_is_a_message_never_an_empty_letter_session(qtbot, tmp_path, capsys):
    path, sid = _future_session(tmp_path)
    window = _open(qtbot, path, sid)
    qtbot.waitUntil(lambda: "'hologram' session" in window.message_label.text(), timeout=WAIT_MS)
    assert window.snapshot is None and "waiting" not in window.message_label.text()
    window.shutdown()
    assert main(["dashboard", str(sid), "--db", str(path), "--report", str(tmp_path / "r.pdf")]) == 2
    err = capsys.readouterr().err
    assert "'hologram' session" in err and "no trial yet" not in err and not (tmp_path / "r.pdf").exists()


def test_cli_report_is_one_pdf_page(stored, tmp_path, capsys):
    kind, path, sid = stored
    out = tmp_path / f"{kind}-report.pdf"
    assert main(["dashboard", str(sid), "--db", str(path), "--report", str(out)]) == 0
    assert f"report of session {sid} written to {out}" in capsys.readouterr().out
    info = subprocess.run(["pdfinfo", str(out)], capture_output=True, text=True, check=True).stdout
    assert "Pages:           1" in info and KINDS[kind][0] in info


def test_cli_screenshot_draws_every_panel(stored, tmp_path):
    kind, path, sid = stored
    out = tmp_path / f"{kind}.png"
    env = {k: v for k, v in os.environ.items() if k not in ("DISPLAY", "WAYLAND_DISPLAY", "QT_QPA_PLATFORM")}
    result = subprocess.run(
        [sys.executable, "-m", "lensopt", "dashboard", str(sid), "--db", str(path), "--screenshot", str(out)],
        capture_output=True,
        text=True,
        env=env,
        timeout=300,
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
            assert gray[rows, cols].std() > 0.05, f"a panel of the {kind} screenshot is blank"


@pytest.mark.parametrize("size_in", [(5.85, 3.9), (7.0, 4.5)])  # the report's panel, a window's
def test_the_lens_maps_legend_covers_no_compared_lens(stored, size_in):
    """The lens map's legend sat inside the map (``loc="best"``) over lenses compared and their lines:
    it lies under the map now, clear of every lens, at the report's and a window's panel size."""
    kind, path, sid = stored
    with SessionStore(path, readonly=True) as store:
        snap = snapshot_from_store(store, sid)
    fig = Figure(figsize=size_in, layout="constrained")
    draw_comparison_lens_map(fig, snap)
    assert panel_legends(fig), f"the {kind} lens map has no legend"
    assert legends_over_data(fig) == []
