"""A duel or ranking session's dashboard numbers: checked against the optimizer rebuilt on the same answers."""

from __future__ import annotations

import dataclasses
import re
import sqlite3

import numpy as np
import pytest

from lensopt import stopping
from lensopt.dashboard.comparison_model import DuelSessionModel, RankingSessionModel, utility_profile
from lensopt.dashboard.comparison_snapshot import (
    WAITING_DUEL_MESSAGE,
    WAITING_RANKING_MESSAGE,
    ComparedSets,
    ComparisonSnapshot,
)
from lensopt.dashboard.model import session_model, snapshot_from_store
from lensopt.errors import LensoptError
from lensopt.modes.base import eye_settings
from lensopt.refraction.duels import DuelRefractionOptimizer, DuelTrial
from lensopt.refraction.lens import diopter_text
from lensopt.refraction.rankings import RankingRefractionOptimizer, RankingTrial
from lensopt.store import SessionStore

N_TRIALS = 12
#: (kind, option): duels with the probit and the tie model, rankings of three and of four lenses.
SESSIONS = [("duel", "probit"), ("duel", "ties"), ("ranking", 3), ("ranking", 4)]


def _ids(param):
    return f"{param[0]}-{param[1]}"


@pytest.fixture(scope="module", params=SESSIONS, ids=_ids)
def session(request, tmp_path_factory, store_simulated_duels, store_simulated_rankings):
    kind, option = request.param
    path = tmp_path_factory.mktemp(f"{kind}-model-{option}") / "s.db"
    if kind == "duel":
        sid, opt = store_simulated_duels(path, N_TRIALS, model=option)
    else:
        sid, opt = store_simulated_rankings(path, N_TRIALS, n_lenses=option)
    with SessionStore(path, readonly=True) as store:
        info = store.session(sid)
        records = store.duel_trials(sid) if kind == "duel" else store.ranking_trials(sid)
    model = session_model(info)
    return {
        "kind": kind,
        "info": info,
        "records": records,
        "opt": opt,
        "model": model,
        "snap": model.update(info, records),
        "path": path,
        "sid": sid,
    }


def _rebuilt(session, n=None):
    """The session's optimizer rebuilt on its first ``n`` stored answers, as the experiment resumes it."""
    records, settings = session["records"][:n], session["info"].optimizer_settings
    if session["kind"] == "duel":
        history = [(DuelTrial(r.first_lens_d, r.second_lens_d, r.letter_logmar), r.answer) for r in records]
        return DuelRefractionOptimizer.from_settings(settings, history)
    history = [(RankingTrial(r.lenses_d, r.letter_logmar), r.order) for r in records]
    return RankingRefractionOptimizer.from_settings(settings, history)


def test_the_session_kind_picks_its_model(session):
    expected = DuelSessionModel if session["kind"] == "duel" else RankingSessionModel
    assert type(session["model"]) is expected and session["snap"].kind == session["kind"]


def test_snapshot_best_lens_is_the_rebuilt_optimizers(session):
    snap, opt = session["snap"], _rebuilt(session)
    assert isinstance(snap, ComparisonSnapshot) and snap.live and snap.n_trials == N_TRIALS
    np.testing.assert_allclose((snap.best.sphere_d, snap.best.cylinder_d), opt.best(), atol=1e-12)
    sphere, cylinder = opt.best()
    line = snap.summary_line()
    assert f"{N_TRIALS} {session['kind']}s (" in line
    assert f"best lens S {sphere:+.2f} ± " in line and f"C {cylinder:+.2f} ± " in line
    assert snap.elapsed_s == 10.0 * N_TRIALS - 9.0


def test_with_the_protocols_axis_the_best_lens_is_also_written_in_clinical_notation(session):
    """A duel or ranking session over (S, C) whose protocol gives the phoropter's axis: the summary
    shows the rebuilt optimizer's best lens in clinical notation at that axis (the protocol's
    cylinder convention) above sphere and cylinder; without one, sphere and cylinder only."""
    from lensopt.dashboard.comparison_panels import comparison_summary_rows
    from lensopt.refraction.lens import Lens
    from lensopt.refraction.most_plus import MAY_BE_TOO_MINUS, MOST_PLUS_ADVICE

    info = session["info"]
    assert session["snap"].best_lens_notation is None
    sphere_d, cylinder_d = _rebuilt(session).best()
    plain = (
        "Lens",
        "estimate, not a prescription",
        f"estimate S {diopter_text(sphere_d)} D  C {diopter_text(cylinder_d)} D, not for prescribing",
    )
    assert comparison_summary_rows(session["snap"])[2] == plain
    lens = {**info.protocol.get("lens", {}), "axis_deg": 45.0, "cylinder": "plus"}
    at_45 = dataclasses.replace(info, protocol={**info.protocol, "lens": lens})
    snap = session_model(at_45).update(at_45, session["records"])
    expected = Lens(*_rebuilt(session).best(), 45.0).plus_cylinder().format()
    assert snap.best_lens_notation == expected
    rows = comparison_summary_rows(snap)
    assert [row[0] for row in rows][2:6] == ["Lens", "Accommodation", "Sphere", "Cylinder"]
    # the comparisons take the clearest lens: for an eye that accommodates, among the too-minus ones
    assert rows[3][1:] == (MAY_BE_TOO_MINUS, MOST_PLUS_ADVICE) and "push plus on the chart" in rows[3][2]
    # no prescription from a search without a start: the verdict large, the lens small
    assert rows[2][1:] == ("estimate, not a prescription", f"estimate {expected}, not for prescribing")
    assert f"best lens {expected}: S " in snap.summary_line()


def test_with_the_protocols_steps_the_summary_gives_the_lens_to_set_on_the_phoropter(session):
    """As the closing console does ("on the phoropter (0.25 D steps)"): the best lens rounded to the
    protocol's ``[lens] step_d`` by hand, in clinical notation at the protocol's axis; none without steps."""
    import math

    from lensopt.dashboard.comparison_panels import comparison_summary_rows
    from lensopt.refraction.lens import Lens

    info = session["info"]
    lens = {**info.protocol.get("lens", {}), "axis_deg": 180.0, "cylinder": "minus", "step_d": 0.25}
    stepped = dataclasses.replace(info, protocol={**info.protocol, "lens": lens})
    snap = session_model(stepped).update(stepped, session["records"])
    sphere_d, cylinder_d = (math.floor(4 * v + 0.5) / 4 for v in _rebuilt(session).best())
    expected = Lens(sphere_d, cylinder_d, 180.0).minus_cylinder().format()
    rows = {row[0]: row[1:] for row in comparison_summary_rows(snap)}
    assert rows["Lens"] == (
        "estimate, not a prescription",
        f"estimate {expected} (on the phoropter, 0.25 D steps), not for prescribing",
    )
    no_steps = {**lens, "step_d": 0.0}
    plain = dataclasses.replace(info, protocol={**info.protocol, "lens": no_steps})
    unrounded = Lens(*_rebuilt(session).best(), 180.0).minus_cylinder().format()
    rows = {r[0]: r[1:] for r in comparison_summary_rows(session_model(plain).update(plain, session["records"]))}
    assert rows["Lens"][1] == f"estimate {unrounded}, not for prescribing"


@pytest.mark.parametrize("session", SESSIONS[:2], indirect=True, ids=_ids)
def test_duel_answers_are_counted_as_the_store_names_them(session):
    snap = session["snap"]
    counts = {a: sum(answer == a for _, answer in session["opt"].history) for a in ("first", "second", "same")}
    assert snap.sets.counts() == {1: counts["first"], 2: counts["second"], 0: counts["same"]}
    assert (
        f"{N_TRIALS} duels (first {counts['first']}, second {counts['second']}, same {counts['same']})"
        in snap.summary_line()
    )
    assert snap.model == session["info"].optimizer_settings["model"]
    for ranked, record in zip(snap.sets.ranked_lenses_d(), session["records"]):
        clearer = record.second_lens_d if record.answer == "second" else record.first_lens_d
        assert tuple(ranked[0]) == clearer


@pytest.mark.parametrize("session", SESSIONS[2:], indirect=True, ids=_ids)
def test_ranking_orders_are_the_stored_ones_clearest_first(session):
    snap, records = session["snap"], session["records"]
    n_lenses = session["info"].optimizer_settings["n_lenses"]
    assert snap.sets.order == tuple(r.order for r in records) and not snap.sets.tied.any()
    np.testing.assert_array_equal(snap.sets.clearest, [r.order[0] + 1 for r in records])
    for ranked, record in zip(snap.sets.ranked_lenses_d(), records):
        assert ranked.shape == (n_lenses, 2)
        np.testing.assert_array_equal(ranked, record.ranked_lenses_d)
    counts = [sum(r.order[0] == k for r in records) for k in range(n_lenses)]
    text = ", ".join(f"lens {k + 1} ×{count}" for k, count in enumerate(counts))
    assert f"{N_TRIALS} rankings (clearest: {text})" in snap.summary_line() and "same" not in snap.summary_line()
    assert snap.model == "Plackett–Luce"


def test_utility_map_is_the_posterior_mean_at_the_reference_letters_and_peaks_near_the_best_lens(session):
    snap, opt = session["snap"], _rebuilt(session)
    um = snap.utility_map
    assert um.letter_logmar == opt.reference_letter_logmar
    s, c = np.meshgrid(um.sphere_d, um.cylinder_d)
    mean, var = opt.predict_utility(um.letter_logmar, np.column_stack([s.ravel(), c.ravel()]))
    np.testing.assert_allclose(um.mean, mean.reshape(um.mean.shape), rtol=1e-10, atol=1e-10)
    np.testing.assert_allclose(um.sd, np.sqrt(var).reshape(um.sd.shape), rtol=1e-10, atol=1e-10)
    at_best = opt.predict_utility(um.letter_logmar, [opt.best()])[0][0]
    assert at_best >= um.mean.max() - 1e-6  # no grid lens beats the reported best lens


def test_best_lens_spread_is_positive_and_its_region_holds_the_samples_mean(session):
    best = session["snap"].best
    assert best.sphere_sd_d > 0 and best.cylinder_sd_d > 0
    assert best.samples_d.shape[1] == 2 and best.region_d.shape[1] == 2
    center = best.samples_d.mean(axis=0)
    assert np.all(best.region_d.min(axis=0) < center) and np.all(center < best.region_d.max(axis=0))


def test_utility_profile_is_a_difference_from_the_best_lens_with_zero_spread_there(session):
    opt = _rebuilt(session)
    reference = opt.reference_letter_logmar
    on_grid = (0.0, 0.5)  # a lens on both 81-point lines over [-4, 4]: f(x) − f(x) is exactly 0
    profile = utility_profile(opt, reference, on_grid, (-4.0, 4.0), (-4.0, 4.0))
    at = int(np.argmin(np.abs(profile.sphere_d - 0.0)))
    assert profile.sphere_mean[at] == pytest.approx(0.0, abs=1e-9)
    assert profile.sphere_sd[at] == pytest.approx(0.0, abs=1e-4)
    lenses = np.column_stack([profile.cylinder_d * 0.0, profile.cylinder_d])
    mean = opt.predict_utility(reference, lenses)[0] - opt.predict_utility(reference, [on_grid])[0][0]
    np.testing.assert_allclose(profile.cylinder_mean, mean, rtol=1e-9, atol=1e-9)
    best = session["snap"].profile
    assert best.sphere_mean.max() <= 1e-6 and best.cylinder_mean.max() <= 1e-6  # nothing beats the best


def test_replay_snapshot_is_the_optimizer_rebuilt_on_the_first_answers(session):
    snap = session["model"].snapshot(5)
    assert not snap.live and snap.n_trials == 5
    np.testing.assert_allclose((snap.best.sphere_d, snap.best.cylinder_d), _rebuilt(session, 5).best(), atol=1e-12)


def test_snapshot_from_store_picks_the_model_of_the_sessions_kind(session):
    with SessionStore(session["path"], readonly=True) as store:
        snap = snapshot_from_store(store, session["sid"])
    assert isinstance(snap, ComparisonSnapshot) and snap.kind == session["kind"]
    assert snap.best.sphere_d == session["snap"].best.sphere_d


def test_a_session_without_answers_waits_for_the_first_one(session):
    snap = session_model(session["info"]).update(session["info"], [])
    waiting = WAITING_DUEL_MESSAGE if session["kind"] == "duel" else WAITING_RANKING_MESSAGE
    assert snap.best is None and snap.utility_map is None and snap.message == waiting
    assert f"0 {session['kind']}s" in snap.summary_line() and waiting in snap.summary_line()
    assert "trial" not in snap.summary_line()


def test_compared_sets_refuse_an_order_that_is_not_a_permutation_and_a_single_lens():
    base = dict(
        index=np.array([1]),
        tied=np.array([False]),
        letter_logmar=np.array([0.2]),
        presented_at=np.array([1.0]),
        answered_at=np.array([2.0]),
    )
    with pytest.raises(ValueError, match=r"order\[0\] must hold each lens index 0..2 once"):
        ComparedSets(lenses_d=(np.zeros((3, 2)),), order=((0, 0, 1),), **base)
    with pytest.raises(ValueError, match=r"lenses_d\[0\] must have shape \(k, 2\)"):
        ComparedSets(lenses_d=(np.zeros((1, 2)),), order=((0,),), **base)
    with pytest.raises(ValueError, match="order must have 1 entries"):
        ComparedSets(lenses_d=(np.zeros((2, 2)),), order=(), **base)


def test_a_session_of_an_unknown_kind_is_refused_with_its_kind_named(tmp_path):
    path = tmp_path / "future.db"
    with SessionStore(path) as store:
        sid = store.create_session("F01", {}, {}, {}, 1, kind="ranking")
    with sqlite3.connect(path) as conn:  # a session written by a future lensopt
        conn.execute("UPDATE sessions SET kind = 'hologram' WHERE id = ?", (sid,))
    with SessionStore(path, readonly=True) as store:
        info = store.session(sid)
        with pytest.raises(LensoptError, match=r"session 1 is a 'hologram' session.*update lensopt"):
            session_model(info)
        with pytest.raises(LensoptError, match="'hologram'"):
            snapshot_from_store(store, sid)


def test_a_duel_session_of_the_full_prescription_shows_the_rebuilt_optimizers_prescription(monkeypatch, tmp_path):
    """A stored duel session of sphere, cylinder and axis (schema 8 axes) of the left eye is rebuilt
    as the PrescriptionDuelOptimizer it was — with the left eye's own seed, as `lensopt run` made it,
    so that its 95 % intervals are the ones the console gave: the snapshot names its prescription and
    the eye (its records name none: a comparison session tests one eye), and the replay of the first
    duels is that optimizer told only them."""
    from lensopt.dashboard.comparison_model import PRESCRIPTION_LINK_MESSAGE
    from lensopt.dashboard.comparison_panels import comparison_summary_rows
    from lensopt.observer import SimulatedPatient
    from lensopt.refraction.prescription_duels import PrescriptionDuelOptimizer
    from lensopt.store import DUEL_KIND, DuelTrialRecord

    # the session's settings, and the left eye's search as `lensopt run --eye OS` makes it: its own seed
    settings = PrescriptionDuelOptimizer(start="-1.00 / -0.50 x 180", seed=4).settings_dict()
    opt = PrescriptionDuelOptimizer.from_settings(eye_settings(settings, "OS"))
    assert opt.seed != settings["seed"]
    patient = SimulatedPatient(-1.25, -0.75, slope=14.0, axis_deg=170.0, seed=4)
    path, told = tmp_path / "s.db", []
    with SessionStore(path) as store:
        protocol = {"session": {"eye": "OS"}}
        sid = store.create_session("RXD", protocol, {}, settings, 4, kind=DUEL_KIND)
        for i in range(1, 9):
            duel = opt.ask()
            lenses = [(lens.sphere_d, lens.cylinder_d, lens.axis_deg) for lens in (duel.first_lens, duel.second_lens)]
            answer = patient.duel_answer(duel.letter_logmar, *lenses)
            opt.tell(duel, answer)
            told.append((duel, answer))
            (s1, c1, a1), (s2, c2, a2) = lenses
            record = DuelTrialRecord(i, s1, c1, s2, c2, duel.letter_logmar, "CDHKN", answer, 1.0, 1e9 + i, 1e9 + i + 1)
            store.append_duel_trial(sid, dataclasses.replace(record, first_axis_deg=a1, second_axis_deg=a2))
        snap = snapshot_from_store(store, sid)
        early = session_model(store.session(sid))
        early.update(store.session(sid), early.read_records(store, sid))
        replay = early.snapshot(5)
    assert snap.kind == "duel" and snap.sets.n == 8 and snap.utility_map is None
    assert snap.prescription == opt.prescription().text
    assert snap.message == PRESCRIPTION_LINK_MESSAGE.format(nouns="duels", n=8, text=opt.prescription().text)
    assert f"· 8 duels ({snap.answers_text()}) · " in snap.summary_line()  # not "0 duels"
    # stored as running, run by no program (its writer was this test): interrupted, as lensopt sessions says
    assert snap.summary_line().startswith(f"Duel session {sid} (RXD, OS, interrupted)")
    assert comparison_summary_rows(snap)[0] == ("Session", f"{sid} · RXD · OS (left eye) · interrupted")
    # running or interrupted: its lens is the best so far, not yet the prescription; a finished one's is
    assert ("Best so far", snap.prescription) in comparison_summary_rows(snap)
    # under it the 95 % intervals, the lens as written then its power vector, as the closing console gives them
    rows = comparison_summary_rows(snap)
    at = rows.index(("Best so far", snap.prescription))
    (label, lens_line), (blank, vector_line) = rows[at + 1], rows[at + 2]
    assert (label, blank) == ("95% intervals", "")
    intervals = opt.prescription().intervals
    for key, line in (("sphere_d", lens_line), ("cylinder_d", lens_line), ("m_d", vector_line), ("j45_d", vector_line)):
        low, high = intervals[key]
        label = {"sphere_d": "S", "cylinder_d": "C", "m_d": "M", "j45_d": "J45"}[key]
        said = re.search(rf"\b{label} ([+-]?\d+\.\d\d|plano) to ([+-]?\d+\.\d\d|plano) D", line)
        values = [0.0 if v == "plano" else float(v) for v in said.groups()]
        assert values == pytest.approx([low, high], abs=0.005)
    assert re.search(r"axis \d{3} to \d{3}", lens_line)
    assert snap.summary_line().endswith(f" · best so far {snap.prescription}")
    finished = dataclasses.replace(snap, header=dataclasses.replace(snap.header, status="finished"))
    # finished after 8 duels: fewer than lensopt's accuracy was measured after (40), no prescription yet
    short = "only 8 duels; lensopt's accuracy was measured after 40"
    assert ("Not prescribed", f"provisional estimate {snap.prescription}", short) in comparison_summary_rows(finished)
    assert finished.summary_line().endswith(
        f" · provisional estimate {snap.prescription} — not enough answers to prescribe ({short})"
    )
    monkeypatch.setattr(stopping, "COMPARISONS_EVALUATED", 8)  # as after 40 duels
    assert ("Prescription", snap.prescription) in comparison_summary_rows(finished)
    assert finished.summary_line().endswith(f" · prescription {snap.prescription}")
    first_five = PrescriptionDuelOptimizer.from_settings(opt.settings_dict(), told[:5])
    assert replay.prescription == first_five.prescription().text and not replay.live
    finished_replay = dataclasses.replace(replay, header=dataclasses.replace(replay.header, status="finished"))
    assert ("Best so far", replay.prescription) in comparison_summary_rows(finished_replay)  # part-way


def test_a_ranking_session_of_the_full_prescription_shows_the_rebuilt_optimizers_prescription(tmp_path):
    """A stored ranking session of sphere, cylinder and axis (schema 9 axes) is rebuilt as the
    PrescriptionRankingOptimizer it was: the snapshot names its prescription, and the replay of the
    first rankings is that optimizer told only them."""
    from lensopt.dashboard.comparison_model import PRESCRIPTION_LINK_MESSAGE
    from lensopt.observer import SimulatedPatient
    from lensopt.refraction.prescription_rankings import PrescriptionRankingOptimizer
    from lensopt.store import RANKING_KIND, RankingTrialRecord

    opt = PrescriptionRankingOptimizer(start="-1.00 / -0.50 x 180", seed=4, n_initial=3)
    patient = SimulatedPatient(-1.25, -0.75, slope=14.0, axis_deg=170.0, seed=4)
    path, told = tmp_path / "s.db", []
    with SessionStore(path) as store:
        sid = store.create_session("RXR", {}, {}, opt.settings_dict(), 4, kind=RANKING_KIND)
        for i in range(1, 7):
            ranking = opt.ask()
            order = patient.rank_lenses(ranking.letter_logmar, ranking.lens_triples)
            opt.tell(ranking, order)
            told.append((ranking, order))
            pairs = tuple((lens.sphere_d, lens.cylinder_d) for lens in ranking.lenses)
            axes = tuple(lens.axis_deg for lens in ranking.lenses)
            record = RankingTrialRecord(
                i, pairs, ranking.letter_logmar, "CDHKN", order, 1.0, 1e9 + i, 1e9 + i + 1, axes_deg=axes
            )
            store.append_ranking_trial(sid, record)
        snap = snapshot_from_store(store, sid)
        early = session_model(store.session(sid))
        early.update(store.session(sid), early.read_records(store, sid))
        replay = early.snapshot(4)
    assert snap.kind == "ranking" and snap.sets.n == 6 and snap.utility_map is None
    assert snap.prescription == opt.prescription().text
    assert snap.message == PRESCRIPTION_LINK_MESSAGE.format(nouns="rankings", n=6, text=opt.prescription().text)
    # the acuity its link predicts, drawn as a letter search's: every lens ranked, the clearest marked
    view = snap.prescription_view
    shown = [lens.power_vector().to_array() for ranking, _ in told for lens in ranking.lenses]
    assert view.compared and view.tested_d == pytest.approx(np.array(shown), abs=1e-12)
    assert view.tested_correct.tolist() == [i == order[0] for _, order in told for i in range(3)]
    assert f"· 6 rankings ({snap.answers_text()}) · " in snap.summary_line()  # not "0 rankings"
    first_four = PrescriptionRankingOptimizer.from_settings(opt.settings_dict(), told[:4])
    assert replay.prescription == first_four.prescription().text and not replay.live
    assert snap.model == "Plackett–Luce through the acuity link"  # the default model of these rankings


def test_a_duel_session_of_27_nov_is_shown_and_recorded_with_the_settings_it_ran_with(tmp_path):
    """A full-prescription duel session created with the code of commit a247e62 (27 Nov 2026 15:29 UTC:
    the trust region centred by the mean, the report with half the tilt, neither stored) is rebuilt
    for the dashboard and the record with those settings, as its creation time tells
    (``session_settings``): the prescription of the duels that code asked. Rebuilt from its stored
    settings alone, with the tilted centre and the whole tilt, it was another lens."""
    import json
    from pathlib import Path

    from lensopt.dashboard.model import followed_from_store
    from lensopt.refraction.lens import Lens
    from lensopt.refraction.prescription_duels import PrescriptionDuelOptimizer, PrescriptionDuelTrial
    from lensopt.store import DUEL_KIND, DuelTrialRecord

    data = Path(__file__).parents[1] / "refraction" / "data" / "prescription-comparisons-a247e62.json"
    fixture = json.loads(data.read_text())["duel"]
    state = fixture["state"]
    rows = [row[:7] for row in state["history"]] + [
        [then["letter_logmar"], *then["lenses"][0], *then["lenses"][1]] for then in fixture["continued"]
    ]
    answers = [row[7] for row in state["history"]] + [then["answer"] for then in fixture["continued"]]
    told = [
        (PrescriptionDuelTrial(Lens(*row[1:4]), Lens(*row[4:7]), row[0]), answer)
        for row, answer in zip(rows, answers, strict=True)
    ]
    path = tmp_path / "s.db"
    with SessionStore(path) as store:
        sid = store.create_session("RX27", {}, {}, state["settings"], 3, kind=DUEL_KIND)
        for i, (row, answer) in enumerate(zip(rows, answers, strict=True), start=1):
            s, (s1, c1, a1), (s2, c2, a2) = row[0], row[1:4], row[4:7]
            record = DuelTrialRecord(i, s1, c1, s2, c2, s, "CDHKN", answer, 1.0, 1e9 + i, 1e9 + i + 1)
            store.append_duel_trial(sid, dataclasses.replace(record, first_axis_deg=a1, second_axis_deg=a2))
    with sqlite3.connect(path) as conn:
        conn.execute("UPDATE sessions SET created_at = ? WHERE id = ?", (1795793347.0, sid))
    conn.close()
    with SessionStore(path, readonly=True) as store:
        model = followed_from_store(store, sid)
    as_ran = {**state["settings"], "trust_centre": "mean", "report_tilt_share": 0.5}
    expected = PrescriptionDuelOptimizer.from_settings(as_ran, told)
    np.testing.assert_allclose(expected.best().to_array(), fixture["best"], atol=1e-6)  # as that code ended
    assert model.snapshot().prescription == expected.prescription().text
    # after 10 duels the lens that code reported was 1.25 D of M less plus than the tilted centre's
    tenth = PrescriptionDuelOptimizer.from_settings(as_ran, told[:10]).prescription().text
    assert model.snapshot(10).prescription == tenth
    assert tenth != PrescriptionDuelOptimizer.from_settings(state["settings"], told[:10]).prescription().text


def test_a_finished_searchs_best_lens_on_the_box_edge_is_warned_of_as_the_closing_console_does(session):
    from lensopt.dashboard.comparison_panels import EDGE_ADVICE, comparison_summary_rows

    snap = session["snap"]
    b = snap.best
    # the box moved so that its low sphere edge is the best lens's sphere
    on_edge = dataclasses.replace(snap, sphere_bounds_d=(b.sphere_d, b.sphere_d + 8.0))
    finished = dataclasses.replace(on_edge, header=dataclasses.replace(snap.header, status="finished"))
    warning = ("Warning", f"on the lens box's edge (sphere {diopter_text(b.sphere_d)} D)", EDGE_ADVICE)
    assert warning in comparison_summary_rows(finished)
    assert warning not in comparison_summary_rows(dataclasses.replace(finished, live=False))  # a replay part-way
    inside = dataclasses.replace(finished, sphere_bounds_d=(b.sphere_d - 4.0, b.sphere_d + 4.0))
    assert all(row[0] != "Warning" for row in comparison_summary_rows(inside))
