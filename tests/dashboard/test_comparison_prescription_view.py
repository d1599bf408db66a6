"""A full prescription by duels or rankings through the acuity link: the dashboard draws the acuity
its model predicts — the astigmatism plane and the defocus curve of a letter search's eye — with every
lens compared, marked when judged the clearest; the probit utility keeps its note."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest

pytest.importorskip("PyQt5")
pytest.importorskip("pytestqt")
from pytestqt.qt_compat import qt_api

if qt_api.pytest_qt_api != "pyqt5":  # PyQt5 and PyQt6 in one process abort it
    pytest.skip("pytest-qt must use pyqt5 (see tests/dashboard/test_window.py)", allow_module_level=True)

from matplotlib.figure import Figure

from lensopt.dashboard.comparison_panels import COMPARISON_DRAW, PRESCRIPTION_PANEL_NOTE
from lensopt.dashboard.model import snapshot_from_store
from lensopt.modes.base import eye_settings
from lensopt.modes.registry import get_mode
from lensopt.observer import SimulatedPatient
from lensopt.refraction.prescription_duels import PrescriptionDuelOptimizer
from lensopt.store import DUEL_KIND, DuelTrialRecord, SessionStore
from tests.dashboard.conftest import legends_over_data, panel_legends
from tests.dashboard.test_prescription_dashboard import check_the_window_draws_the_plane_and_the_curve


def _stored_duels(path, n=10, **options):
    """A duel session of the full prescription of the left eye, answered by a simulated patient:
    (session id, the optimizer told the same answers, the answers)."""
    settings = PrescriptionDuelOptimizer(start="-1.00 / -0.50 x 180", seed=4, **options).settings_dict()
    opt = PrescriptionDuelOptimizer.from_settings(eye_settings(settings, "OS"))  # as `lensopt run --eye OS`
    patient = SimulatedPatient(-1.25, -0.75, slope=14.0, axis_deg=170.0, seed=4)
    respond, answers = get_mode("duel").responder(patient, tie_threshold=1.0), []
    with SessionStore(path) as store:
        sid = store.create_session("RXD", {"session": {"eye": "OS"}}, {}, settings, 4, kind=DUEL_KIND)
        for i in range(1, n + 1):
            duel = opt.ask()
            answer = respond(duel)
            opt.tell(duel, answer)
            answers.append(answer)
            (s1, c1, a1), (s2, c2, a2) = [
                (x.sphere_d, x.cylinder_d, x.axis_deg) for x in (duel.first_lens, duel.second_lens)
            ]
            record = DuelTrialRecord(i, s1, c1, s2, c2, duel.letter_logmar, "CDHKN", answer, 1.0, 1e9 + i, 1e9 + i + 1)
            store.append_duel_trial(sid, dataclasses.replace(record, first_axis_deg=a1, second_axis_deg=a2))
    return sid, opt, answers


@pytest.fixture(scope="module")
def duels(tmp_path_factory):
    path = tmp_path_factory.mktemp("prescription-duels") / "s.db"
    sid, opt, answers = _stored_duels(path)
    return path, sid, opt, answers


def _snapshot(path, sid):
    with SessionStore(path, readonly=True) as store:
        return snapshot_from_store(store, sid)


def test_the_view_holds_the_links_predicted_acuity_and_every_lens_compared(duels):
    path, sid, opt, answers = duels
    view = _snapshot(path, sid).prescription_view
    assert view is not None and view.compared and view.eye == "OS"
    best = opt.best()
    assert view.best_d == pytest.approx((best.m_d, best.j0_d, best.j45_d))
    rng = np.random.default_rng(0)
    for i, j in zip(rng.integers(0, len(view.j45_d), 5), rng.integers(0, len(view.j0_d), 5)):
        acuity, _ = opt.acuity_logmar(np.array([[view.best_d[0], view.j0_d[j], view.j45_d[i]]]))
        assert view.plane_acuity_logmar[i, j] == pytest.approx(acuity[0], abs=1e-9)
    assert np.isfinite(view.curve_acuity_logmar).all() and (view.curve_sd_logmar > 0).all()
    # two lenses a duel, in its order, at its letter size; the clearer marked ("the same": neither)
    shown = [lens.power_vector().to_array() for duel, _ in opt.history for lens in (duel.first_lens, duel.second_lens)]
    assert view.tested_d == pytest.approx(np.array(shown), abs=1e-12)
    assert view.tested_letter_logmar.tolist() == [duel.letter_logmar for duel, _ in opt.history for _ in range(2)]
    marks = [[a == "first", a == "second"] for a in answers]
    assert view.tested_correct.tolist() == [m for pair in marks for m in pair]
    assert "same" in answers or view.tested_correct.sum() == len(answers)


def test_the_lens_map_and_profile_slots_draw_the_plane_and_the_curve_with_words_of_comparisons(duels):
    path, sid, _, answers = duels
    snap = _snapshot(path, sid)
    plane, curve = Figure(figsize=(7.0, 4.5), layout="constrained"), Figure(figsize=(7.0, 4.5), layout="constrained")
    COMPARISON_DRAW["lens_map"](plane, snap)
    COMPARISON_DRAW["psychometric"](curve, snap)
    (map_ax,) = [ax for ax in plane.axes if ax.get_xlabel()]
    assert (map_ax.get_xlabel(), map_ax.get_ylabel()) == ("J0 (D)", "J45 (D)")
    assert "(lenses compared: at their own M)" in plane.get_suptitle()
    (curve_ax,) = curve.axes
    assert curve_ax.get_xlabel() == "spherical equivalent M (D)"
    assert "(lenses compared: at their own J)" in curve_ax.get_title(loc="left")
    # duels say which lens is clearer, not how well the eye sees (page 1: "not predicted"): the level is the model's
    assert plane.get_suptitle().startswith("Astigmatism plane: acuity, its level assumed")
    assert curve_ax.get_title(loc="left").startswith("Defocus curve: acuity along M, its level assumed")
    assert "predicted" not in plane.get_suptitle() + curve_ax.get_title(loc="left")
    curve_texts = [t.get_text() for legend in panel_legends(curve) for t in legend.get_texts()]
    assert "acuity threshold, its level assumed" in curve_texts and "predicted acuity threshold" not in curve_texts
    clearer = sum(a != "same" for a in answers)
    for fig in (plane, curve):
        texts = [t.get_text() for legend in panel_legends(fig) for t in legend.get_texts()]
        assert f"lens compared, judged clearest ({clearer})" in texts
        assert f"lens compared, not judged clearest ({2 * len(answers) - clearer})" in texts
        assert not any("correct" in t for t in texts)
        assert legends_over_data(fig) == []


def test_a_probit_utilitys_duels_keep_the_note_in_place_of_the_panels(tmp_path):
    sid, _, _ = _stored_duels(tmp_path / "s.db", n=4, rule="kss-ald")
    snap = _snapshot(tmp_path / "s.db", sid)
    assert snap.prescription_view is None and snap.prescription
    fig = Figure()
    COMPARISON_DRAW["lens_map"](fig, snap)
    words = " ".join(t.get_text() for ax in fig.axes for t in ax.texts)
    assert PRESCRIPTION_PANEL_NOTE.format(nouns="duels").split(":")[0] in words.replace("\n", " ")


def test_the_window_draws_the_duels_predicted_acuity_in_its_top_panels(qtbot, duels, tmp_path):
    path, sid, _, _ = duels
    check_the_window_draws_the_plane_and_the_curve(qtbot, path, sid, tmp_path)
