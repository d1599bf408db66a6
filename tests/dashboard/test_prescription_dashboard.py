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

from dashboard_records import store_simulated_trials
from PyQt5.QtGui import QImage

from lensopt.dashboard.model import PRESCRIPTION_MESSAGE, session_model, snapshot_from_store
from lensopt.dashboard.panels import summary_rows, summary_title
from lensopt.dashboard.verdict import EyeEstimate
from lensopt.dashboard.window import DashboardWindow
from lensopt.observer import SimulatedPatient
from lensopt.refraction.prescription_letters import PrescriptionOptimizer
from lensopt.refraction.shown import untried_d
from lensopt.stopping import confidence_text
from lensopt.store import SessionStore
from tests.dashboard.conftest import legends_over_data, panel_legends

N_TRIALS = 12
#: The clinical-prescription protocol's [stop] table (a session without one is a study's fixed design).
CLINICAL_STOP = {"confidence": 0.95, "min_trials": 20, "max_trials": 80}
WAIT_MS = 60_000


@pytest.fixture(scope="module")
def prescription_db(tmp_path_factory):
    """A 12-trial full-prescription session stored as the experiment stores it, with the clinical
    protocol's [stop] table; (path, id, optimizer)."""
    path = tmp_path_factory.mktemp("prescription-dashboard") / "s.db"
    opt = PrescriptionOptimizer(start="-1.00 / -0.50 x 180", seed=3)
    patient = SimulatedPatient(-1.25, -0.75, slope=14.0, axis_deg=170.0, seed=3)
    with SessionStore(path) as store:
        sid = store.create_session("RX1", {"stop": CLINICAL_STOP}, {}, opt.settings_dict(), 3)
        store_simulated_trials(store, sid, opt, patient, N_TRIALS)
        store.set_status(sid, "finished")
    return path, sid, opt


def test_a_prescription_snapshot_holds_the_history_and_the_optimizers_prescription(prescription_db):
    """12 letters leave the model far from sure (confidence ~0.1): the snapshot holds the optimizer's
    prescription with its confidence, but says "not enough answers to prescribe" as the closing
    console does (the [stop] target is 0.95), the lens only a provisional estimate."""
    path, sid, opt = prescription_db
    with SessionStore(path, readonly=True) as store:
        snap = snapshot_from_store(store, sid)
        earlier = snapshot_from_store(store, sid, n_trials=6)
    rx = opt.prescription()
    assert rx.confidence < 0.95
    assert snap.trials.n == N_TRIALS and snap.lens_map is None and snap.best is None
    # the lens's distance from every lens tried, by the rule the console and the record apply
    untried = untried_d(rx.lens.sphere_d, rx.lens.cylinder_d, rx.lens.axis_deg, [t for t, _ in opt.history])
    (eye,) = snap.eyes
    bare = dataclasses.replace(eye, acuity_logmar=None, intervals=(), read_through=None)  # its details apart
    assert bare == EyeEstimate("", rx.text, rx.confidence, 0.95, N_TRIALS, untried_d=untried)
    assert eye.acuity_logmar == pytest.approx(rx.predicted_acuity_logmar, abs=1e-6)
    assert {key for key, _, _ in eye.intervals} == set(rx.intervals)
    for key, low, high in eye.intervals:
        assert (low, high) == pytest.approx(tuple(rx.intervals[key]), abs=1e-6), key
    said = (
        f"not enough answers to prescribe (confidence {confidence_text(rx.confidence)} < 0.95 after {N_TRIALS} trials)"
    )
    assert snap.prescription == said
    assert snap.message == PRESCRIPTION_MESSAGE.format(trials=f"{N_TRIALS} trials", eyes=said)
    assert snap.summary_line().endswith(f"{N_TRIALS} trials · {said}") and rx.text not in snap.summary_line()
    rows = summary_rows(snap)
    assert ("Prescription", "not enough answers to prescribe", said[33:-1]) in rows
    assert ("", f"provisional estimate {rx.text}, not for prescribing") in rows
    assert (
        summary_title(snap) == "Summary: no prescription yet"
    )  # the panel says "prescription" of a lens to prescribe only
    assert earlier.trials.n == 6 and "After 6 trials" in earlier.message


def test_an_eye_that_reached_the_sessions_target_shows_its_lens_as_the_prescription(prescription_db):
    """The target is the session's [stop] confidence, as on the closing console: a session held to
    0.05 shows the same lens as its prescription."""
    path, sid, opt = prescription_db
    with SessionStore(path, readonly=True) as store:
        info, records = store.session(sid), store.trials(sid)
    low = dataclasses.replace(info, protocol={"stop": {"confidence": 0.05, "min_trials": 5, "max_trials": 12}})
    snap = session_model(low).update(low, records)
    rx = opt.prescription()
    (eye,) = snap.eyes
    assert eye.prescribable and eye.target == 0.05 and eye.verdict() == rx.text and not eye.provisional()
    assert summary_title(snap) == "Summary: prescription"
    assert (
        snap.prescription == f"{rx.text} (confidence {confidence_text(rx.confidence)} ≥ 0.05 after {N_TRIALS} trials)"
    )
    assert (
        "Prescription",
        rx.text,
        f"confidence {confidence_text(rx.confidence)} ≥ 0.05 after {N_TRIALS} trials",
    ) in summary_rows(snap)


def test_a_session_without_a_stopping_rule_shows_its_lens_as_the_studys_estimate(prescription_db):
    """A protocol without [stop] ran a fixed number of trials (a study's design): short of 0.95 the
    dashboard shows the lens "(estimate, not a prescription)", as the closing console and the log
    name it, not "not enough answers to prescribe" and no provisional row."""
    path, sid, opt = prescription_db
    with SessionStore(path, readonly=True) as store:
        info, records = store.session(sid), store.trials(sid)
    study = dataclasses.replace(info, protocol={})
    snap = session_model(study).update(study, records)
    rx = opt.prescription()
    (eye,) = snap.eyes
    assert eye.fixed_design and not eye.prescribable and not eye.provisional()
    assert eye.verdict() == f"{rx.text} (estimate, not a prescription)"
    evidence = f"confidence {confidence_text(rx.confidence)} < 0.95 after {N_TRIALS} trials"
    assert snap.prescription == f"{rx.text} (estimate, not a prescription) ({evidence})"
    rows = summary_rows(snap)
    assert ("Prescription", eye.verdict(), evidence) in rows
    assert not any("not enough answers" in str(cell) or "provisional" in str(cell) for row in rows for cell in row)


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
    said = f"not enough answers to prescribe (confidence {confidence_text(opt.prescription().confidence)} < 0.95"
    assert said in window.summary_label.text()
    # a finished session has nothing live to follow: its last trial is the latest
    assert window.slider_label.text() == f"trial {N_TRIALS} of {N_TRIALS} (latest)"
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
    """The stored session read as one of both eyes (``--eye OU``), OD's first half then OS's: (info,
    records, the followed session model told them)."""
    path, sid, _ = prescription_db
    with SessionStore(path, readonly=True) as store:
        info, records = store.session(sid), store.trials(sid)
    info = dataclasses.replace(info, protocol={**info.protocol, "session": {"eye": "OU"}})
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


def test_each_eyes_model_of_a_session_of_both_eyes_is_drawn_from_its_own_answers(prescription_db):
    """The printed record's page 3: one view per eye, OD first, each the view of an optimizer rebuilt
    independently on that eye's answers alone (OS with its own seed)."""
    from lensopt.dashboard.model import compute_prescription_view

    info, eyes, followed = _both_eyes(prescription_db)
    half = N_TRIALS // 2
    od_only = PrescriptionOptimizer.from_settings(
        info.optimizer_settings, [followed.history_pair(r) for r in eyes[:half]]
    )
    os_settings = dict(info.optimizer_settings, seed=info.optimizer_settings["seed"] + 1)
    os_only = PrescriptionOptimizer.from_settings(os_settings, [followed.history_pair(r) for r in eyes[half:]])
    views = followed.eye_views()
    assert [v.eye for v in views] == ["OD", "OS"]
    for view, opt, eye in zip(views, (od_only, os_only), ("OD", "OS")):
        expected = compute_prescription_view(opt, eye)
        assert view.best_d == pytest.approx(expected.best_d)
        np.testing.assert_allclose(view.plane_acuity_logmar, expected.plane_acuity_logmar, atol=1e-9)
        np.testing.assert_allclose(view.curve_acuity_logmar, expected.curve_acuity_logmar, atol=1e-9)
        assert len(view.tested_letter_logmar) == half


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


def test_a_session_of_both_eyes_shows_each_eyes_result_labelled_od_and_os(prescription_db):
    """OD then OS: the snapshot holds both eyes' results, each from its own answers (OD's from an
    optimizer told OD's answers, not only the live OS model), labelled in the summary line, the
    message and the summary panel; an eye short of the target says "not enough answers"."""
    info, eyes, followed = _both_eyes(prescription_db)
    half = N_TRIALS // 2
    os_settings = dict(info.optimizer_settings, seed=info.optimizer_settings["seed"] + 1)
    od_rx = PrescriptionOptimizer.from_settings(
        info.optimizer_settings, [followed.history_pair(r) for r in eyes[:half]]
    ).prescription()
    os_rx = PrescriptionOptimizer.from_settings(
        os_settings, [followed.history_pair(r) for r in eyes[half:]]
    ).prescription()
    snap = followed.snapshot(None)
    assert [(e.eye, e.lens, e.confidence, e.n_trials) for e in snap.eyes] == [
        ("OD", od_rx.text, od_rx.confidence, half),
        ("OS", os_rx.text, os_rx.confidence, N_TRIALS - half),
    ]
    line = snap.summary_line()
    for eye, rx in (("OD", od_rx), ("OS", os_rx)):
        said = f"{eye} not enough answers to prescribe (confidence {confidence_text(rx.confidence)} < 0.95 after {half} trials)"
        assert said in line and said in snap.message
    rows = summary_rows(snap)
    assert [row[0] for row in rows if row[0] in ("OD", "OS")] == ["OD", "OS"]
    assert ("", f"provisional estimate {od_rx.text}, not for prescribing") in rows
    assert summary_title(snap) == "Summary: no prescription yet"  # neither eye may be prescribed
    during_od = followed.snapshot(half - 1)  # replay while OD is searched: OS has no answer yet
    assert [(e.eye, e.verdict()) for e in during_od.eyes][1] == ("OS", "no answer yet")


def test_a_session_of_both_eyes_keeps_the_finished_eyes_result_while_the_other_is_searched(prescription_db):
    """Following OS trial by trial does not refit OD: its result is computed once from its answers."""
    info, eyes, _ = _both_eyes(prescription_db)
    followed = session_model(info)
    half = N_TRIALS // 2
    followed.update(info, eyes[: half + 1])
    first = followed.snapshot(None).eyes[0]
    followed.update(info, eyes)
    assert followed.snapshot(None).eyes[0] is first and first.eye == "OD" and first.n_trials == half


def test_a_session_of_one_eye_labels_its_result_with_that_eye(prescription_db):
    """``--eye OD``: the one result is OD's, labelled so, even where the trials name no eye."""
    path, sid, opt = prescription_db
    with SessionStore(path, readonly=True) as store:
        info, records = store.session(sid), store.trials(sid)
    right = dataclasses.replace(info, protocol={"session": {"eye": "OD"}, "stop": CLINICAL_STOP})
    rx = opt.prescription()
    for stored in (records, [dataclasses.replace(r, eye="OD") for r in records]):
        (eye,) = session_model(right).update(right, stored).eyes
        assert (eye.eye, eye.lens, eye.n_trials) == ("OD", rx.text, N_TRIALS)
        assert eye.line().startswith("OD not enough answers to prescribe (confidence")


def test_the_prescription_view_is_the_models_acuity_through_the_reported_lens(prescription_db):
    """The lens map and curve panels' numbers, against the model's own latent read lens by lens
    (``g = f(0, x)``, ``w = f(1, x) − f(0, x)``, acuity ``(z − g) / w``), the tried lenses against the
    optimizer's own power vectors, and the curve's best acuity at the reported M."""
    path, sid, opt = prescription_db
    with SessionStore(path, readonly=True) as store:
        view = snapshot_from_store(store, sid).prescription_view
    assert view is not None and view.eye == ""
    best = opt.best()
    assert view.best_d == pytest.approx((best.m_d, best.j0_d, best.j45_d))
    assert view.start_d == pytest.approx(opt.box.start.power_vector().to_array())
    z = opt._core.target_latent

    def by_hand(m, j0, j45):
        mean, var = opt.model.predict_latent(np.array([[0.0, m, j0, j45], [1.0, m, j0, j45]]))
        w = mean[1] - mean[0]
        return (z - mean[0]) / w, np.sqrt(var[0]) / w

    rng = np.random.default_rng(0)
    for i, j in zip(rng.integers(0, len(view.j45_d), 5), rng.integers(0, len(view.j0_d), 5)):
        acuity, _ = by_hand(view.best_d[0], view.j0_d[j], view.j45_d[i])
        assert view.plane_acuity_logmar[i, j] == pytest.approx(acuity, abs=1e-9)
    for k in rng.integers(0, len(view.m_d), 5):
        acuity, sd = by_hand(view.m_d[k], view.best_d[1], view.best_d[2])
        assert (view.curve_acuity_logmar[k], view.curve_sd_logmar[k]) == pytest.approx((acuity, sd), abs=1e-9)
    assert view.tested_d == pytest.approx(opt._core.inputs[:, 1:], abs=1e-12)
    assert view.tested_correct.tolist() == [bool(c) for _, c in opt._history]
    # the reported M is where the defocus curve is best (no most-plus tolerance): within two grid steps
    step = view.m_d[1] - view.m_d[0]
    assert abs(view.m_d[np.argmin(view.curve_acuity_logmar)] - view.best_d[0]) <= 2 * step


def test_the_window_draws_a_prescriptions_astigmatism_plane_and_defocus_curve(qtbot, prescription_db, tmp_path):
    """The two model panels of a full prescription are drawn, not left as a message: their axes
    are the power vectors', and the screenshot's top half is not blank."""
    path, sid, _ = prescription_db
    check_the_window_draws_the_plane_and_the_curve(qtbot, path, sid, tmp_path)


def check_the_window_draws_the_plane_and_the_curve(qtbot, path, sid, tmp_path) -> None:
    """The window on session ``sid`` draws the astigmatism plane and the defocus curve in its top
    panels, and its screenshot's top half is not blank."""
    window = DashboardWindow(path, sid, poll_interval_ms=100)
    qtbot.addWidget(window)
    window.show()
    qtbot.waitUntil(lambda: window.snapshot is not None, timeout=WAIT_MS)
    (plane,) = [ax for ax in window.figures["lens_map"].axes if ax.get_xlabel()]
    (curve,) = window.figures["psychometric"].axes
    assert (plane.get_xlabel(), plane.get_ylabel()) == ("J0 (D)", "J45 (D)")
    assert curve.get_xlabel() == "spherical equivalent M (D)" and curve.get_title(loc="left").startswith(
        "Defocus curve"
    )
    assert "database" in window.message_label.text()  # the status line, not a message standing in for the model
    image = QImage(str(window.save_screenshot(tmp_path / "window.png")))
    gray = np.frombuffer(
        image.convertToFormat(QImage.Format_Grayscale8).constBits().asstring(image.width() * image.height()),
        dtype=np.uint8,
    ).reshape(image.height(), image.width())
    top = gray[int(0.15 * image.height()) : image.height() // 2]
    assert top[:, : image.width() // 2].std() > 20.0 and top[:, image.width() // 2 :].std() > 10.0
    window.shutdown()


def test_the_history_names_each_eyes_long_runs_and_marks_every_turn_without_overprinting():
    """An OU session resumed twice with a few more trials per eye (80 + 80, then 8, 4 and 11): every
    turn to the other eye is a dashed line; only runs long enough for their name are named, so the
    short ones do not overprint one another ("ODOS OD") — and the last, the eye being searched."""
    import types

    from matplotlib.figure import Figure

    from lensopt.dashboard.panels import mark_eyes

    tr = types.SimpleNamespace(index=np.arange(1, 184), number=np.arange(1, 184))
    runs = [("OD", 0, 79), ("OS", 80, 159), ("OD", 160, 167), ("OS", 168, 171), ("OD", 172, 182)]
    ax = Figure().add_subplot()
    mark_eyes(ax, tr, runs)
    assert [t.get_text() for t in ax.texts] == ["OD", "OS", "OD"]  # the last, the eye searched now, too
    assert [line.get_xdata()[0] for line in ax.lines] == [80.5, 160.5, 168.5, 172.5]
    # the second eye of a live OU session is named from its first trial
    live = Figure().add_subplot()
    mark_eyes(
        live, types.SimpleNamespace(index=np.arange(1, 22), number=np.arange(1, 22)), [("OD", 0, 19), ("OS", 20, 20)]
    )
    assert [(t.get_text(), t.get_position()[0]) for t in live.texts] == [("OD", 10.5), ("OS", 21.0)]


def test_the_eyes_names_stay_clear_of_the_title_and_of_every_letter_shown():
    """A short first run (15 of 90 trials) named over the axes overprinted the panel's title
    ("HistoryOD"): the names sit in a band at the top of the axes, under the title, above the data."""
    import types

    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure
    from matplotlib.text import Text

    from lensopt.dashboard.panels import mark_eyes

    fig = Figure(figsize=(6.8, 3.6))
    FigureCanvasAgg(fig)
    ax = fig.add_subplot()
    letters = np.linspace(-0.3, 1.0, 90)
    ax.plot(np.arange(1, 91), letters, "o")
    ax.set_ylim(-0.4, 1.1)
    ax.set_title("History", loc="left")
    tr = types.SimpleNamespace(index=np.arange(1, 91), number=np.arange(1, 91))
    mark_eyes(ax, tr, [("OD", 0, 14), ("OS", 15, 29), ("OD", 30, 59), ("OS", 60, 89)])
    renderer = fig.canvas.get_renderer()
    title = ax.get_title(loc="left")
    (title_box,) = [t.get_window_extent(renderer) for t in ax.findobj(Text) if t.get_text() == title]
    names = [t.get_window_extent(renderer) for t in ax.texts]
    assert len(names) == 4 and not any(box.overlaps(title_box) for box in names)
    inside = ax.get_window_extent(renderer)
    assert all(box.y1 <= inside.y1 and box.y0 >= inside.y0 for box in names)  # within the axes
    highest_letter_px = ax.transData.transform((1.0, letters.max()))[1]
    assert all(box.y0 > highest_letter_px for box in names)  # above every letter shown


def test_the_panels_hold_every_lens_tried_even_beyond_the_models_grid(prescription_db):
    """The full prescription's bracketing lenses may lie beyond its box (up to 0.7 D): they were drawn
    outside the axes, over the tick labels. The plane's and the curve's limits hold every lens tried."""
    import dataclasses as dc

    from matplotlib.figure import Figure

    from lensopt.dashboard.prescription_panels import draw_astigmatism_plane, draw_defocus_curve

    path, sid, _ = prescription_db
    with SessionStore(path, readonly=True) as store:
        snap = snapshot_from_store(store, sid)
    view = snap.prescription_view
    far = view.tested_d.copy()
    far[0] = (view.m_d[0] - 1.0, view.box_j0_d[0] - 0.7, view.box_j45_d[1] + 0.6)  # beyond the box on three sides
    view = dc.replace(view, tested_d=far)
    plane, curve = Figure(), Figure()
    draw_astigmatism_plane(plane, view)
    draw_defocus_curve(curve, view, snap.letter_bounds_logmar)
    (x0, x1), (y0, y1) = plane.axes[0].get_xlim(), plane.axes[0].get_ylim()
    assert x0 < far[0, 1] and y1 > far[0, 2] and x1 >= view.box_j0_d[1] and y0 <= view.box_j45_d[0]
    assert curve.axes[0].get_xlim()[0] < far[0, 0]


def test_a_prescribed_eye_has_no_footnote_about_eyes_held_back(prescription_db):
    from matplotlib.figure import Figure

    from lensopt.dashboard.panels import draw_summary

    path, sid, _ = prescription_db
    with SessionStore(path, readonly=True) as store:
        info, records = store.session(sid), store.trials(sid)
    footnotes = {}
    for target in (0.05, 0.999):  # the eye prescribed, then held back
        held = dataclasses.replace(info, protocol={"stop": {"confidence": target, "min_trials": 5, "max_trials": 12}})
        fig = Figure()
        draw_summary(fig, session_model(held).update(held, records))
        footnotes[target] = [t.get_text() for t in fig.axes[0].texts if "below the target" in t.get_text()]
    assert footnotes[0.05] == [] and len(footnotes[0.999]) == 1


@pytest.mark.parametrize("size_in", [(5.85, 3.9), (7.0, 4.5)])  # the report's panel, a window's
def test_the_astigmatism_planes_and_defocus_curves_legends_cover_no_lens_tried(prescription_db, size_in):
    """The plane's legend sat in its lower left corner over lenses tried, the curve's (``loc="best"``)
    over letters tried: both lie under their axes now, clear of every point; the start is drawn
    rimmed in black, so that its square is seen in the legend too (white on white, it was not)."""
    from matplotlib.figure import Figure

    from lensopt.dashboard.prescription_panels import draw_astigmatism_plane, draw_defocus_curve

    path, sid, _ = prescription_db
    with SessionStore(path, readonly=True) as store:
        snap = snapshot_from_store(store, sid)
    plane, curve = Figure(figsize=size_in, layout="constrained"), Figure(figsize=size_in, layout="constrained")
    draw_astigmatism_plane(plane, snap.prescription_view)
    draw_defocus_curve(curve, snap.prescription_view, snap.letter_bounds_logmar)
    for fig in (plane, curve):
        assert panel_legends(fig) and legends_over_data(fig) == []
    (legend,) = panel_legends(plane)
    start = dict(zip([t.get_text() for t in legend.get_texts()], legend.legend_handles))["start"]
    assert tuple(start.get_edgecolor()[0][:3]) == (0.0, 0.0, 0.0)


def test_the_astigmatism_plane_fills_its_panel_with_its_colours_spanning_the_search_box(prescription_db):
    """The plane's grid reaches beyond the search box (centred on it) so that the map fills the
    panel at equal scales; its colours span the acuities inside the box, where the optimum lies."""
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.collections import QuadMesh
    from matplotlib.figure import Figure

    from lensopt.dashboard.model_parts import PLANE_SPAN
    from lensopt.dashboard.prescription_panels import draw_astigmatism_plane

    path, sid, opt = prescription_db
    with SessionStore(path, readonly=True) as store:
        view = snapshot_from_store(store, sid).prescription_view
    (_, _), (j0_lo, j0_hi), (j45_lo, j45_hi) = opt.box.bounds_d
    assert (view.box_j0_d, view.box_j45_d) == ((j0_lo, j0_hi), (j45_lo, j45_hi))
    for grid, (lo, hi), span in (
        (view.j0_d, (j0_lo, j0_hi), PLANE_SPAN[0]),
        (view.j45_d, (j45_lo, j45_hi), PLANE_SPAN[1]),
    ):
        assert grid[-1] - grid[0] == pytest.approx(span * (hi - lo))
        assert 0.5 * (grid[0] + grid[-1]) == pytest.approx(0.5 * (lo + hi))
    fig = Figure(figsize=(7.5, 4.2), layout="constrained")
    FigureCanvasAgg(fig)
    draw_astigmatism_plane(fig, view)
    fig.canvas.draw()
    ax = fig.axes[0]
    assert ax.get_position().width > 0.6  # not a square leaving half the panel empty
    (x0, x1), (y0, y1) = ax.get_xlim(), ax.get_ylim()
    assert x0 >= view.j0_d[0] and x1 <= view.j0_d[-1] and y0 >= view.j45_d[0] and y1 <= view.j45_d[-1]  # all mapped
    inside = [
        view.plane_acuity_logmar[i, j]
        for i, j45 in enumerate(view.j45_d)
        for j, j0 in enumerate(view.j0_d)
        if j0_lo <= j0 <= j0_hi and j45_lo <= j45 <= j45_hi
    ]
    (mesh,) = [c for c in ax.collections if isinstance(c, QuadMesh)]
    assert mesh.get_clim() == pytest.approx((min(inside), max(inside)))


def test_the_window_of_an_interrupted_session_gives_the_records_command_to_continue_it(
    qtbot, prescription_db, tmp_path
):
    """A session whose program was killed (stored as running, run by none): the message line says
    "interrupted" and, as the printed record does, how to continue it (``lensopt run --resume N
    --db /absolute/path``), in the record's own words."""
    import shutil

    from lensopt.dashboard.unfinished_text import unfinished_text

    path, sid, _ = prescription_db
    killed = tmp_path / "killed.db"
    shutil.copy(path, killed)
    with SessionStore(killed) as store:
        store.set_status(sid, "running")  # as a killed `lensopt run` leaves it
        info = store.session(sid)
    window = DashboardWindow(killed, sid, poll_interval_ms=100)
    qtbot.addWidget(window)
    qtbot.waitUntil(lambda: window.snapshot is not None, timeout=WAIT_MS)
    record_line = unfinished_text(info, "interrupted", killed)
    assert record_line is not None and f"lensopt run --resume {sid} --db {killed.resolve()}" in record_line
    lines = window.message_label.text().split("\n")
    assert "· interrupted ·" in lines[0] and record_line in lines
    window.shutdown()


def test_the_history_draws_smaller_letters_up_as_the_defocus_curve_beside_it_does(prescription_db):
    """The History panel drew larger logMAR up and the defocus curve beside it better acuity up: the
    estimated best acuity rose in one panel as it fell in the other. Both draw smaller logMAR up now,
    every letter shown inside the axes and under the band of the eyes' names."""
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    from lensopt.dashboard.panels import draw_history
    from lensopt.dashboard.prescription_panels import draw_defocus_curve

    _, _, followed = _both_eyes(prescription_db)
    snap = followed.snapshot(None)
    history, curve = Figure(), Figure()
    draw_history(history, snap)
    draw_defocus_curve(curve, snap.prescription_view, snap.letter_bounds_logmar)
    for fig in (history, curve):
        FigureCanvasAgg(fig).draw()
        ax = fig.axes[0]
        up = ax.transData.transform([(0.0, 0.0), (0.0, 0.5)])[:, 1]
        assert up[0] > up[1], ax.get_ylabel()  # logMAR 0.0 above logMAR 0.5 on the screen
        assert "better up" in ax.get_ylabel()
    ax = history.axes[0]
    letters_y = ax.transData.transform(np.column_stack([snap.trials.number, snap.trials.letter_logmar]))[:, 1]
    box = ax.get_window_extent()
    names_bottom = min(t.get_window_extent().y0 for t in ax.texts)
    assert (letters_y >= box.y0).all() and (letters_y < names_bottom).all()
