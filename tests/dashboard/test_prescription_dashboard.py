"""A full-prescription session in the dashboard: it opens, shows its history and its prescription."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest

pytest.importorskip("PyQt5")
pytest.importorskip("pytestqt")
from pytestqt.qt_compat import qt_api

if qt_api.pytest_qt_api != "pyqt5":  # PyQt5 and PyQt6 in one process abort it
    pytest.skip("the dashboard needs pytest-qt on PyQt5 (qt_api = 'pyqt5')", allow_module_level=True)

from PyQt5.QtGui import QImage

from lensopt.dashboard.model import PRESCRIPTION_MESSAGE, session_model, snapshot_from_store
from lensopt.dashboard.window import DashboardWindow
from lensopt.observer import SimulatedPatient
from lensopt.refraction.prescription_letters import PrescriptionOptimizer
from lensopt.store import SessionStore, TrialRecord

N_TRIALS = 12
WAIT_MS = 60_000


@pytest.fixture(scope="module")
def prescription_db(tmp_path_factory):
    """A 12-trial full-prescription session stored as the experiment stores it; (path, id, optimizer)."""
    path = tmp_path_factory.mktemp("prescription-dashboard") / "s.db"
    opt = PrescriptionOptimizer(start="-1.00 / -0.50 x 180", seed=3)
    patient = SimulatedPatient(-1.25, -0.75, slope=14.0, axis_deg=170.0, seed=3)
    with SessionStore(path) as store:
        sid = store.create_session("RX1", {}, {}, opt.settings_dict(), 3)
        for i in range(1, N_TRIALS + 1):
            trial = opt.ask()
            correct = bool(patient.respond(trial.letter_logmar, trial.sphere_d, trial.cylinder_d, trial.axis_deg))
            opt.tell(trial, correct)
            store.append_trial(
                sid,
                TrialRecord(
                    i,
                    trial.sphere_d,
                    trial.cylinder_d,
                    trial.letter_logmar,
                    "K",
                    "K" if correct else "X",
                    correct,
                    0.8,
                    1000.0 + 3 * i,
                    1000.8 + 3 * i,
                    axis_deg=trial.axis_deg,
                ),
            )
        store.set_status(sid, "finished")
    return path, sid, opt


def test_a_prescription_snapshot_holds_the_history_and_the_optimizers_prescription(prescription_db):
    path, sid, opt = prescription_db
    with SessionStore(path, readonly=True) as store:
        snap = snapshot_from_store(store, sid)
        earlier = snapshot_from_store(store, sid, n_trials=6)
    rx = opt.prescription()
    assert snap.trials.n == N_TRIALS and snap.lens_map is None and snap.best is None
    assert snap.prescription == f"{rx.text} (confidence {rx.confidence:.2f})"
    assert snap.message == PRESCRIPTION_MESSAGE.format(n=N_TRIALS, text=rx.text, confidence=rx.confidence)
    assert f"{N_TRIALS} trials" in snap.summary_line() and rx.text in snap.summary_line()
    assert earlier.trials.n == 6 and "After 6 trials" in earlier.message


def test_a_prescription_session_model_rebuilds_the_prescription_optimizer(prescription_db):
    path, sid, opt = prescription_db
    with SessionStore(path, readonly=True) as store:
        info, records = store.session(sid), store.trials(sid)
    followed = session_model(info)
    followed.update(info, records)
    rebuilt = followed._optimizer_after(N_TRIALS)
    assert isinstance(rebuilt, PrescriptionOptimizer) and rebuilt.n_trials == N_TRIALS
    mine, theirs = rebuilt.ask(), opt.ask()  # opt has fitted more (prescriptions): equal to ~1e-12
    assert (mine.sphere_d, mine.cylinder_d, mine.axis_deg) == (theirs.sphere_d, theirs.cylinder_d, theirs.axis_deg)
    assert mine.letter_logmar == pytest.approx(theirs.letter_logmar, abs=1e-9)


def test_the_window_opens_on_a_prescription_session_with_its_history_drawn(qtbot, prescription_db, tmp_path):
    path, sid, opt = prescription_db
    window = DashboardWindow(path, sid, poll_interval_ms=100)
    qtbot.addWidget(window)
    window.show()
    qtbot.waitUntil(lambda: window.snapshot is not None, timeout=WAIT_MS)
    assert opt.prescription().text in window.summary_label.text()
    image = QImage(str(window.save_screenshot(tmp_path / "window.png")))
    gray = np.frombuffer(
        image.convertToFormat(QImage.Format_Grayscale8).constBits().asstring(image.width() * image.height()),
        dtype=np.uint8,
    ).reshape(image.height(), image.width())
    history_panel = gray[
        (image.height() + int(0.12 * image.height())) // 2 : int(0.95 * image.height()), : image.width() // 2
    ]
    assert history_panel.std() > 10.0, "the history panel is blank"
    window.shutdown()


def _next_trial(optimizer):
    trial = optimizer.ask()
    return trial.sphere_d, trial.cylinder_d, trial.axis_deg


def test_the_followed_optimizer_forgets_an_answer_undone_after_it_was_told(prescription_db, tmp_path):
    """The dashboard tells its optimizer what a resumed session would: an answer the clinician undid
    (a stored row marked void later) is dropped from the live model — its next trial equals that of an
    optimizer told the other answers only."""
    path, sid, _ = prescription_db
    copy = tmp_path / "void.db"
    copy.write_bytes(path.read_bytes())
    with SessionStore(copy) as store:
        info, records = store.session(sid), store.trials(sid)
        followed = session_model(info)
        followed.update(info, records)
        store.void_trial(sid, N_TRIALS)
        info, records = store.session(sid), store.trials(sid)
    followed.update(info, records)
    kept = [followed.history_pair(r) for r in records[:-1]]
    expected = PrescriptionOptimizer.from_settings(info.optimizer_settings, kept)
    assert followed._optimizer_after(N_TRIALS).n_trials == N_TRIALS - 1
    assert _next_trial(followed._optimizer_after(N_TRIALS)) == _next_trial(expected)


def _both_eyes(prescription_db):
    """The stored session read as one of both eyes, OD's first half then OS's: (info, records,
    the followed session model told them)."""
    path, sid, _ = prescription_db
    with SessionStore(path, readonly=True) as store:
        info, records = store.session(sid), store.trials(sid)
    half = N_TRIALS // 2
    eyes = [dataclasses.replace(r, eye="OD" if r.index <= half else "OS") for r in records]
    followed = session_model(info)
    followed.update(info, eyes)
    return info, eyes, followed


def test_the_followed_optimizer_of_a_session_of_both_eyes_is_the_second_eyes_own(prescription_db, tmp_path):
    """OD then OS: after the first OS answer the live model is OS's search alone (its own seed, its
    own answers), and the replay of the OD trials is OD's."""
    info, eyes, followed = _both_eyes(prescription_db)
    half = N_TRIALS // 2
    os_settings = dict(info.optimizer_settings, seed=info.optimizer_settings["seed"] + 1)
    os_only = PrescriptionOptimizer.from_settings(os_settings, [followed.history_pair(r) for r in eyes[half:]])
    od_only = PrescriptionOptimizer.from_settings(
        info.optimizer_settings, [followed.history_pair(r) for r in eyes[:half]]
    )
    assert followed._optimizer_after(N_TRIALS).n_trials == N_TRIALS - half
    assert _next_trial(followed._optimizer_after(N_TRIALS)) == _next_trial(os_only)
    assert _next_trial(followed._optimizer_after(half)) == _next_trial(od_only)


def test_the_history_of_a_session_of_both_eyes_names_each_eye_and_marks_the_switch(prescription_db):
    """OD's trials, then OS's: the history panel draws one letter line per eye, a dashed line
    between trial 6 and 7 and the names OD and OS over their trials (matplotlib, no window)."""
    from matplotlib.figure import Figure

    from lensopt.dashboard.panels import draw_history

    _, _, followed = _both_eyes(prescription_db)
    half = N_TRIALS // 2
    snap = followed.snapshot(None)
    assert snap.trials.eye.tolist() == ["OD"] * half + ["OS"] * (N_TRIALS - half)
    assert snap.trials.eye_runs() == [("OD", 0, half - 1), ("OS", half, N_TRIALS - 1)]
    fig = Figure()
    draw_history(fig, snap)
    (ax,) = fig.axes
    switches = [line for line in ax.lines if line.get_linestyle() == "--"]
    assert [float(line.get_xdata()[0]) for line in switches] == [half + 0.5]
    letter_lines = [line for line in ax.lines if line.get_linestyle() == "-" and line.get_color() == "0.75"]
    assert [list(line.get_xdata()) for line in letter_lines] == [
        list(range(1, half + 1)),
        list(range(half + 1, N_TRIALS + 1)),
    ]
    names = {t.get_text(): t.get_position()[0] for t in ax.texts}
    assert names == {"OD": (1 + half) / 2, "OS": (half + 1 + N_TRIALS) / 2}


def test_the_history_of_a_session_without_eyes_has_one_line_and_no_eye_names(prescription_db):
    from matplotlib.figure import Figure

    from lensopt.dashboard.panels import draw_history

    path, sid, _ = prescription_db
    with SessionStore(path, readonly=True) as store:
        snap = snapshot_from_store(store, sid)
    fig = Figure()
    draw_history(fig, snap)
    (ax,) = fig.axes
    assert snap.trials.eye_runs() == [("", 0, N_TRIALS - 1)]
    assert not [line for line in ax.lines if line.get_linestyle() == "--"] and not ax.texts
