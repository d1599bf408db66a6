"""The dashboard's numbers: checked against hand values, Monte Carlo and the optimizer itself."""

from __future__ import annotations

import dataclasses
import math
import types

import numpy as np
import pytest
from matplotlib.path import Path as PolygonPath
from scipy.stats import chi2

from lensopt.dashboard import model_parts
from lensopt.dashboard.model import SessionModel, guess_rate_from_protocol, history_checkpoints
from lensopt.dashboard.panels import summary_rows
from lensopt.dashboard.posterior import credible_ellipse
from lensopt.dashboard.snapshot import WAITING_MESSAGE
from lensopt.stopping import confidence_text
from tests.conftest import SETTINGS_AFTER_ISSUE_14 as NEW_SETTINGS  # what sessions of before issue 14 lack

# --------------------------------------------------------------------------- pure helpers


@pytest.mark.parametrize(
    ("protocol", "expected"),
    [
        ({"letters": {"alphabet": "CDHKNORSVZ"}}, 1 / 10),
        ({"task": {"letters": "CDHKNORSVZ"}}, 1 / 10),
        ({"letters": list("ABCDEFGHIJKLMNOPQRSTUVWXYZ")}, 1 / 26),
        ({"response": {"n_alternatives": 4}}, 1 / 4),
        ({"guess_rate": 0.125, "letters": "CDHKNORSVZ"}, 0.125),
        ({}, 1 / 26),
        (None, 1 / 26),
    ],
)
def test_guess_rate_is_one_over_the_number_of_letters_in_the_protocol(protocol, expected):
    assert guess_rate_from_protocol(protocol) == pytest.approx(expected)


def test_history_is_refit_every_trial_up_to_sixty_then_every_fifth_and_at_the_last():
    assert history_checkpoints(0).tolist() == []
    assert history_checkpoints(3).tolist() == [1, 2, 3]
    points = history_checkpoints(72)
    assert points[:60].tolist() == list(range(1, 61))
    assert points[60:].tolist() == [65, 70, 72]


def test_credible_ellipse_boundary_is_the_chi2_quantile_and_holds_95_percent_of_gaussian_draws():
    rng = np.random.default_rng(1)
    center = np.array([-1.0, 0.5])
    cov = np.array([[0.09, 0.05], [0.05, 0.16]])
    boundary = credible_ellipse(center, cov, mass=0.95, n_points=721)
    d = boundary - center
    mahalanobis2 = np.einsum("ni,ij,nj->n", d, np.linalg.inv(cov), d)
    np.testing.assert_allclose(mahalanobis2, chi2.ppf(0.95, df=2), rtol=1e-9)
    draws = rng.multivariate_normal(center, cov, size=40_000)
    inside = PolygonPath(boundary).contains_points(draws).mean()
    assert inside == pytest.approx(0.95, abs=4 * np.sqrt(0.95 * 0.05 / 40_000) + 2e-3)


def test_credible_ellipse_rejects_a_mass_outside_zero_one():
    with pytest.raises(ValueError, match="mass"):
        credible_ellipse([0, 0], np.eye(2), mass=1.0)


# --------------------------------------------------------------------------- with the real optimizer

N_TRIALS = 40


def _old_format(settings: dict) -> dict:
    """``settings`` as a lensopt of before issue 14 stored them (plain probit, Laplace, the paper
    model's kernel and β)."""
    from lensopt.refraction.letters import REFRACTION_BETA, reference_kernel

    return {k: v for k, v in settings.items() if k not in NEW_SETTINGS} | {
        "inference": "laplace",
        "hyperparameters": reference_kernel("probit").to_dict(),
        "beta": REFRACTION_BETA,
    }


def _store_simulated_session(
    path, n_trials=N_TRIALS, rule="ucb-ald", seed=0, status="finished", stop=None, old_format=False
):
    """A simulated session written the way the experiment writes it; returns (session id, history)."""
    from lensopt.modes.registry import get_mode
    from lensopt.observer import SimulatedPatient
    from lensopt.store import SessionStore, TrialRecord

    opt = get_mode("letters").new_optimizer({"stop": stop}, rule=rule, seed=seed)
    if old_format:
        opt = type(opt).from_settings(_old_format(opt.settings_dict()))
    patient = SimulatedPatient(-1.25, 0.75, slope=5.0, seed=seed)
    settings = _old_format(opt.settings_dict()) if old_format else opt.settings_dict()
    with SessionStore(path) as store:
        sid = store.create_session("P01", {"letters": "ABCDEFGHIJKLMNOPQRSTUVWXYZ"}, {}, settings, seed)
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
def session(tmp_path_factory):
    from lensopt.store import SessionStore

    path = tmp_path_factory.mktemp("dashboard-model") / "sessions.db"
    sid, history = _store_simulated_session(path)
    with SessionStore(path, readonly=True) as store:
        info, records = store.session(sid), store.trials(sid)
    session_model = SessionModel(info)
    snap = session_model.update(info, records)
    return {"info": info, "records": records, "history": history, "model": session_model, "snap": snap}


def _rebuilt(info, history):
    from lensopt.refraction.letters import RefractionOptimizer

    return RefractionOptimizer.from_settings(info.optimizer_settings, history)


def test_stored_trials_replay_to_the_experiments_history(session):
    rows = [(r.sphere_d, r.cylinder_d, r.letter_logmar, r.correct) for r in session["records"]]
    assert rows == [(t.sphere_d, t.cylinder_d, t.letter_logmar, c) for t, c in session["history"]]


def test_snapshot_best_lens_is_the_rebuilt_optimizers_best_lens(session):
    opt = _rebuilt(session["info"], session["history"])
    best = session["snap"].best
    np.testing.assert_allclose((best.sphere_d, best.cylinder_d), opt.best(), atol=1e-9)
    mean, sd = opt.predicted_acuity_logmar(*opt.best())
    # the dashboard's model is refitted after every trial (warm-started EP), the rebuilt one once,
    # cold: they agree to EP's convergence (1e-8 in the letter model), not to the last bits
    np.testing.assert_allclose((best.acuity_mean_logmar, best.acuity_sd_logmar), (mean, sd), rtol=1e-7)


def test_lens_map_is_the_predicted_acuity_on_the_grid_and_no_lens_beats_the_best_by_much(session):
    opt = _rebuilt(session["info"], session["history"])
    lens_map = session["snap"].lens_map
    i, j = 7, 29
    mean, sd = opt.predicted_acuity_logmar(lens_map.sphere_d[j], lens_map.cylinder_d[i])
    np.testing.assert_allclose(lens_map.acuity_mean_logmar[i, j], mean, rtol=1e-7)  # warm against cold, as above
    np.testing.assert_allclose(lens_map.acuity_sd_logmar[i, j], sd, rtol=1e-7)
    assert lens_map.sphere_d[[0, -1]].tolist() == [-4.0, 4.0]
    assert np.nanmin(lens_map.acuity_mean_logmar) >= session["snap"].best.acuity_mean_logmar - 0.02


def test_psychometric_curve_crosses_the_threshold_probability_at_the_predicted_acuity(session):
    snap = session["snap"]
    curve = snap.psychometric
    settings = session["info"].optimizer_settings
    n_alternatives, lapse = settings.get("n_alternatives", 26), settings["lapse"]
    guess = 1.0 / n_alternatives
    # the floored model P = γ + (1 − γ − λ) Φ(f) has its threshold where Φ(f) = ½
    assert curve.floored and curve.lapse_rate == lapse
    target = guess + (1.0 - guess - lapse) / 2.0
    assert curve.p_mean.min() >= guess - 1e-12 and curve.p_mean.max() <= 1.0 - lapse + 1e-12
    steps = np.diff(curve.p_mean)
    floor, ceiling = guess + 1e-12, 1.0 - lapse - 1e-12
    unsaturated = (curve.p_mean[1:] > floor) & (curve.p_mean[:-1] < ceiling)
    assert np.all(steps >= 0) and np.all(steps[unsaturated] > 0)  # flat only where P is 0 or 1
    assert unsaturated.sum() > len(steps) // 4
    crossing = np.interp(target, curve.p_mean, curve.letter_logmar)
    assert crossing == pytest.approx(snap.best.acuity_mean_logmar, abs=0.01)
    assert curve.guess_rate == pytest.approx(1.0 / n_alternatives)


def test_psychometric_band_holds_95_percent_of_latent_draws(session):
    snap = session["snap"]
    curve, best = snap.psychometric, snap.best
    k = 60
    X = np.array([[curve.letter_logmar[k], best.sphere_d, best.cylinder_d]])
    mu, var = _rebuilt(session["info"], session["history"]).model.predict_latent(X)
    draws = np.random.default_rng(5).normal(mu[0], np.sqrt(var[0]), 20_000)
    phi = 0.5 * (1.0 + np.vectorize(math.erf)(draws / np.sqrt(2.0)))  # Φ written out, not scipy's ndtr
    p = curve.guess_rate + (1.0 - curve.guess_rate - curve.lapse_rate) * phi  # the floored model's P(correct)
    inside = np.mean((p >= curve.p_low[k]) & (p <= curve.p_high[k]))
    assert inside == pytest.approx(0.95, abs=0.01)
    assert np.all(curve.p_low <= curve.p_mean) and np.all(curve.p_mean <= curve.p_high)


def test_trials_near_the_best_lens_are_those_within_the_radius_in_dioptric_distance(session):
    """ "Near" is the dioptric distance (blur between the lenses: the measure of "the nearest lens
    tried is 0.40 D from this one"), not the distance in the sphere-cylinder plane."""
    from lensopt.refraction.lens import Lens

    snap = session["snap"]
    best, trials = snap.best, snap.trials
    at_best = Lens(best.sphere_d, best.cylinder_d, 180.0)
    expected = [
        (r.letter_logmar, r.correct)
        for r in session["records"]
        if Lens(r.sphere_d, r.cylinder_d, 180.0).blur_d(at_best) <= model_parts.NEAR_LENS_RADIUS_D
    ]
    got = list(zip(snap.psychometric.near_letter_logmar.tolist(), snap.psychometric.near_correct.tolist()))
    assert got == expected
    assert trials.n == N_TRIALS and trials.index.tolist() == list(range(1, N_TRIALS + 1))


def test_history_and_replay_match_an_optimizer_rebuilt_on_the_first_trials(session):
    k = 17
    opt = _rebuilt(session["info"], session["history"][:k])
    mean, _ = opt.predicted_acuity_logmar(*opt.best())
    history = session["snap"].history
    assert history.n_trials.tolist() == list(range(1, N_TRIALS + 1))
    assert history.acuity_mean_logmar[k - 1] == pytest.approx(float(mean), rel=1e-9, abs=1e-12)
    replay = session["model"].snapshot(k)
    assert not replay.live and replay.n_trials == k
    np.testing.assert_allclose((replay.best.sphere_d, replay.best.cylinder_d), opt.best(), atol=1e-9)
    assert replay.history.n_trials.tolist() == list(range(1, k + 1))
    assert session["snap"].history.acuity_mean_logmar[-1] == pytest.approx(session["snap"].best.acuity_mean_logmar)


def test_trials_told_in_two_batches_give_the_same_model_as_all_at_once(session):
    info, records = session["info"], session["records"]
    split = SessionModel(info)
    split.update(info, records[:25])
    again = split.update(info, records)  # the first 25 are already known and must be skipped
    assert again.n_trials == N_TRIALS
    assert (again.best.sphere_d, again.best.cylinder_d) == (
        session["snap"].best.sphere_d,
        session["snap"].best.cylinder_d,
    )


def test_a_session_without_trials_waits_for_the_first_one(session):
    info = session["info"]
    snap = SessionModel(info).update(info, [])
    assert snap.best is None and snap.lens_map is None and snap.psychometric is None
    assert snap.message == WAITING_MESSAGE
    assert "waiting for the first trial" in snap.summary_line()


def test_a_session_of_one_eye_names_it_in_the_summary_and_a_session_of_none_does_not(session):
    """The protocol's ``[session] eye`` reaches the header: the summary line and panel name the eye
    (a comparison session's records name none, so this is where the clinician sees it)."""
    info = session["info"]
    plain = SessionModel(info).update(info, [])
    assert "eye" not in plain.summary_line() and "eye" not in summary_rows(plain)[0][1]
    left = dataclasses.replace(info, protocol={**info.protocol, "session": {"eye": "OS"}})
    snap = SessionModel(left).update(left, [])
    assert snap.header.eye == "OS"
    assert snap.summary_line().startswith(f"Session {info.session_id} ({info.participant}, OS, ")
    assert summary_rows(snap)[0] == (
        "Session",
        f"{info.session_id} · {info.participant} · OS (left eye) · {info.status}",
    )


def test_a_header_refuses_an_eye_that_is_not_od_os_or_ou(session):
    header = SessionModel(session["info"]).update(session["info"], []).header
    with pytest.raises(ValueError, match=r"SessionHeader\.eye must be one of OD, OS, OU or None, got 'left'"):
        dataclasses.replace(header, eye="left")


def test_replay_outside_the_stored_trials_is_refused(session):
    with pytest.raises(ValueError, match="n_trials must be between 0 and 40"):
        session["model"].snapshot(41)


def test_a_cancelled_update_keeps_what_it_told_and_a_later_update_completes(session):
    info, records = session["info"], session["records"]
    calls = iter(range(10_000))
    follower_model = SessionModel(info)
    assert follower_model.update(info, records[:10], cancelled=lambda: next(calls) >= 4) is None
    assert follower_model.n_trials == 4
    done = follower_model.update(info, records[:10])
    assert done.n_trials == 10 and done.trials.index.tolist() == list(range(1, 11))


# --------------------------------------------------------------------------- confidence and stopping rule


def test_the_snapshot_confidence_is_the_optimizers_certainty_and_shows_its_stop_rule(tmp_path):
    from lensopt.dashboard.panels import summary_rows
    from lensopt.store import SessionStore

    stop = {"confidence": 0.9, "min_trials": 10, "max_trials": 60}
    sid, history = _store_simulated_session(tmp_path / "s.db", n_trials=24, stop=stop)
    with SessionStore(tmp_path / "s.db", readonly=True) as store:
        info, records = store.session(sid), store.trials(sid)
    snap = SessionModel(info).update(info, records)
    certainty = _rebuilt(info, history).certainty()
    c = snap.certainty
    assert c.confidence == certainty.confidence
    assert (c.sphere_interval_d, c.cylinder_interval_d) == (certainty.sphere_interval_d, certainty.cylinder_interval_d)
    assert (c.stop_confidence, c.min_trials, c.max_trials) == (0.9, 10, 60)
    assert f"confidence {confidence_text(certainty.confidence)}" in snap.summary_line()
    rows = {row[0]: row[1:] for row in summary_rows(snap)}
    assert rows["Confidence"] == (
        f"{confidence_text(certainty.confidence)}",
        "that this lens is within 0.025 logMAR of the best",
    )
    low, high = certainty.sphere_interval_d
    assert rows["Sphere"][1] == f"95% interval {low:+.2f} to {high:+.2f} D"
    state = "reached" if certainty.confidence >= 0.9 else "not yet"
    assert rows["Stops at"] == (f"confidence 0.90, trials 10–60: {state}",)
    replay = SessionModel(info)
    replay.update(info, records)
    early = replay.snapshot(12)  # a replay has the confidence of its own trials
    assert early.certainty.confidence == _rebuilt(info, history[:12]).certainty().confidence


def test_a_stopping_rule_that_may_act_at_one_trial_only_names_that_trial_not_a_range(tmp_path):
    """``lensopt run --trials 10`` caps the protocol's [stop] min_trials at 10 too: the summary said
    "trials 10–10"; it says "trial 10"."""
    from lensopt.dashboard.drawing import trial_range_text

    assert trial_range_text(10, 10) == "trial 10" and trial_range_text(20, 80) == "trials 20–80"
    assert trial_range_text(5, 5, "duel") == "duel 5"
    stops_at = _stops_at_row(tmp_path, {"confidence": 0.95, "min_trials": 10, "max_trials": 10}, n_trials=10)
    assert stops_at.startswith("confidence 0.95, trial 10: ") and "10–10" not in stops_at


def _stops_at_row(tmp_path, stop: dict, n_trials: int, events=None) -> str:
    """The summary's "Stops at" row of a stored simulated session of ``n_trials`` with ``stop``
    (``events``: its recorded events instead of those stored, ``()`` for a session of before schema 10)."""
    from lensopt.store import SessionStore

    sid, _ = _store_simulated_session(tmp_path / "s.db", n_trials=n_trials, stop=stop)
    with SessionStore(tmp_path / "s.db", readonly=True) as store:
        info, records = store.session(sid), store.trials(sid)
    if events is not None:
        info = dataclasses.replace(info, events=tuple(events))
    snap = SessionModel(info).update(info, records)
    (stops_at,) = {row[0]: row[1:] for row in summary_rows(snap)}["Stops at"]
    return stops_at


def test_a_session_resumed_past_its_stored_budget_before_resumes_were_stored_says_so(tmp_path):
    """A session started before schema 10 and resumed with ``lensopt run --resume N --trials M`` ran
    past the stored max_trials, its new budget not stored: "Stops at" says the budget was raised, not
    that it was reached. (Since schema 10 the budget is stored: tests/experiment/test_resumed_budget.py.)"""
    stop = {"confidence": 0.999, "min_trials": 5, "max_trials": 8}
    stops_at = _stops_at_row(tmp_path, stop, n_trials=10, events=())
    assert stops_at == "confidence 0.999, trials 5–8 (more on resuming): not yet"


def test_a_session_past_the_budget_its_last_resume_was_given_has_reached_it(tmp_path):
    """Its answers beyond the budget of a resume that found nothing to do (``--trials`` below them, as
    the store keeps it): its budget is behind it, not raised."""
    from lensopt.store import SessionEvent

    stop = {"confidence": 0.999, "min_trials": 5, "max_trials": 8}
    events = (SessionEvent("started", 1.0, 0), SessionEvent("resumed", 2.0, 10, {"trials": 8, "trials_given": 8}))
    stops_at = _stops_at_row(tmp_path, stop, n_trials=10, events=events)
    assert stops_at == "confidence 0.999, trials 5–8: max trials reached"


def test_a_letter_session_short_of_its_target_says_so_as_the_closing_console_does(tmp_path):
    """A two-parameter letter session below its [stop] confidence: the summary panel's title and the
    summary line say "not enough answers to prescribe"; a study without [stop] (a fixed number of
    trials), its estimate; with a target its confidence reaches, neither (the console's rule)."""
    from matplotlib.figure import Figure

    from lensopt.dashboard.panels import draw_summary, summary_rows, summary_title
    from lensopt.store import SessionStore

    stop = {"confidence": 0.9, "min_trials": 10, "max_trials": 60}
    sid, history = _store_simulated_session(tmp_path / "s.db", n_trials=12, stop=stop)
    with SessionStore(tmp_path / "s.db", readonly=True) as store:
        info, records = store.session(sid), store.trials(sid)
    # without an axis the cylinder is an estimate whatever the confidence (the record's rule): below
    # with the phoropter's axis given, as clinical-refraction --axis runs
    without_axis = SessionModel(info).update(info, records)
    assert without_axis.verdict.no_axis and not without_axis.verdict.prescribable
    assert (
        summary_title(without_axis) == "Summary: best lens — estimate, not a prescription: a cylinder without an axis"
    )
    info = dataclasses.replace(
        info, protocol={**info.protocol, "lens": {**info.protocol.get("lens", {}), "axis_deg": 90.0}}
    )
    confidence = _rebuilt(info, history).certainty().confidence
    assert confidence < 0.9
    snap = SessionModel(info).update(info, records)
    assert snap.verdict is not None and not snap.verdict.prescribable and not snap.verdict.fixed_design
    assert summary_title(snap) == "Summary: best lens — not enough answers to prescribe"
    # drawn: the verdict large, the estimate's sphere, cylinder and acuity small (as big as a prescription, they read as one)
    fig = Figure(figsize=(7.0, 4.5), layout="constrained")
    draw_summary(fig, snap)
    (ax,) = fig.axes
    sizes = {t.get_text(): t.get_fontsize() for t in ax.texts}
    assert sizes["not enough answers to prescribe"] > max(sizes[r[1]] for r in summary_rows(snap) if r[0] == "Sphere")
    assert (
        max(sizes[r[1]] for r in summary_rows(snap) if r[0] in ("Sphere", "Cylinder", "Acuity"))
        == sizes[next(r[1] for r in summary_rows(snap) if r[0] == "Trials")]
    )
    # said before the lens, which is called an estimate (a header that led with "best lens" read as the result)
    assert (
        f"trials · not enough answers to prescribe · estimated lens {snap.best_lens_notation}: S "
        in snap.summary_line()
    )
    assert snap.summary_line().endswith(f"confidence {confidence_text(confidence)}")
    study = dataclasses.replace(info, optimizer_settings={**info.optimizer_settings, "stop": None})
    snap = SessionModel(study).update(study, records)
    assert summary_title(snap) == "Summary: best lens — estimate, not a prescription"
    assert "trials · estimate, not a prescription · estimated lens " in snap.summary_line()
    reached = dataclasses.replace(
        info, optimizer_settings={**info.optimizer_settings, "stop": {**stop, "confidence": 1e-3}}
    )
    snap = SessionModel(reached).update(reached, records)
    assert snap.verdict.prescribable and summary_title(snap) == "Summary: best lens"
    fig = Figure(figsize=(7.0, 4.5), layout="constrained")
    draw_summary(fig, snap)  # a lens to prescribe: its sphere as large as the confidence
    sizes = {t.get_text(): t.get_fontsize() for t in fig.axes[0].texts}
    sphere = next(r[1] for r in summary_rows(snap) if r[0] == "Sphere")
    assert sizes[sphere] == sizes[next(r[1] for r in summary_rows(snap) if r[0] == "Confidence")]
    assert snap.summary_line().endswith(f"confidence {confidence_text(confidence, 1e-3)}")  # to its decimals


def test_an_old_format_session_loads_with_its_plain_probit_model_and_no_stop_rule(tmp_path):
    from lensopt.dashboard.panels import summary_rows
    from lensopt.store import SessionStore

    sid, history = _store_simulated_session(tmp_path / "old.db", n_trials=15, old_format=True)
    with SessionStore(tmp_path / "old.db", readonly=True) as store:
        info, records = store.session(sid), store.trials(sid)
    assert not set(NEW_SETTINGS) & set(info.optimizer_settings)
    snap = SessionModel(info).update(info, records)
    opt = _rebuilt(info, history)
    assert opt.likelihood == "probit"
    np.testing.assert_allclose((snap.best.sphere_d, snap.best.cylinder_d), opt.best(), atol=1e-9)
    assert not snap.psychometric.floored and snap.psychometric.p_mean.min() < 1e-3  # Φ(f): no guess floor
    assert snap.certainty.confidence == opt.certainty().confidence and not snap.certainty.has_stop_rule
    labels = [row[0] for row in summary_rows(snap)]
    assert "Confidence" in labels and "Stops at" not in labels


def test_an_acuity_law_session_shows_its_grid_posterior(tmp_path):
    """The acuity-law optimizer has no GP: the lens map is its posterior mean acuity, the optimum's
    draws come from its correction posterior, and the psychometric curve at the best lens is the
    posterior mean of P(correct), here checked against the whole grid (not the scoring draws)."""
    from scipy.special import ndtr

    from lensopt.refraction.acuity_law import AcuityLawOptimizer
    from lensopt.store import SessionStore

    path = tmp_path / "sessions.db"
    sid, history = _store_simulated_session(path, n_trials=25, rule="acuity-law", seed=4)
    with SessionStore(path, readonly=True) as store:
        info, records = store.session(sid), store.trials(sid)
    snap = SessionModel(info).update(info, records)
    opt = AcuityLawOptimizer.from_settings(info.optimizer_settings, history)
    assert (snap.best.sphere_d, snap.best.cylinder_d) == opt.best()
    assert np.all(np.isfinite(snap.lens_map.acuity_mean_logmar))
    assert snap.certainty.confidence == opt.confidence()
    curve = snap.psychometric
    w = opt.posterior()
    loss = opt._loss(np.array([opt.best()]), opt._corrections)[0]
    for k in (30, 60, 90):
        va = loss[:, None, None] + opt.va_best_grid_logmar[None, :, None]
        z = opt._slopes[None, None, :] * (curve.letter_logmar[k] - va)
        exact = float((w * (1 / 26 + (1 - 1 / 26 - 0.02) * ndtr(z))).sum())
        assert curve.p_mean[k] == pytest.approx(exact, abs=0.03)
        assert curve.p_low[k] <= curve.p_mean[k] <= curve.p_high[k]
    assert curve.formula == "γ + (1−γ−λ)·Φ(f)" and curve.lapse_rate == 0.02
    region = snap.best.region_d
    assert region[:, 0].min() < snap.best.sphere_d < region[:, 0].max()


def test_a_two_parameter_session_of_both_eyes_names_the_eye_of_its_model_panels_and_shows_the_other(session):
    """OD then OS over (S, C): the lens map, the curve and the summary show OS's live model and say
    so; the summary adds OD's result from OD's own answers, labelled OD; the history's estimated
    acuity is one line per eye (OS's first estimate is not joined to OD's last)."""
    from matplotlib.figure import Figure

    from lensopt.dashboard.drawing import MODEL_COLOR
    from lensopt.dashboard.panels import draw_history, draw_lens_map, draw_psychometric, summary_title

    info = session["info"]
    both = dataclasses.replace(info, protocol={**info.protocol, "session": {"eye": "OU"}})
    half = N_TRIALS // 2
    eyes = [dataclasses.replace(r, eye="OD" if r.index <= half else "OS") for r in session["records"]]
    snap = SessionModel(both).update(both, eyes)
    od = _rebuilt(info, session["history"][:half])
    assert snap.model_eye == "OS (left eye)"
    (other,) = snap.eyes
    sphere_d, cylinder_d = od.best()
    assert (other.eye, other.n_trials, other.confidence) == ("OD", half, od.confidence())
    assert other.lens == f"S {sphere_d:+.2f} D, C {cylinder_d:+.2f} D"
    line = snap.summary_line()
    assert " · OS (left eye): estimate, not a prescription: a cylinder without an axis · estimated lens S " in line
    assert line.endswith(" · " + other.line())
    # the fixture has no [stop] (a fixed number of trials): OS's lens is the study's estimate
    # the fixture has no axis: its cylinder is an estimate (and a study's, without [stop])
    assert (
        summary_title(snap)
        == "Summary: best lens — OS (left eye) — estimate, not a prescription: a cylinder without an axis"
    )
    assert [row[0] for row in summary_rows(snap)].count("OD") == 1
    for draw in (draw_lens_map, draw_psychometric):
        fig = Figure()
        draw(fig, snap)
        assert "— OS (left eye)" in fig.axes[0].get_title(loc="left")
    fig = Figure()
    draw_history(fig, snap)
    acuity = [line for line in fig.axes[0].lines if line.get_color() == MODEL_COLOR]
    assert [(min(a.get_xdata()), max(a.get_xdata())) for a in acuity] == [(1, half), (half + 1, N_TRIALS)]


def test_in_a_session_of_both_eyes_the_model_panels_count_the_live_eyes_trials_only(session):
    """OS's lens map marks OS's lenses, its curve's near trials are OS's, and the summary counts
    OS's trials (then the session's) and reads OS's stopping rule from OS's trials: after 6 of OS's
    trials of a 30-trial budget it is "not yet", though the session has 30 + 6."""
    from matplotlib.figure import Figure

    from lensopt.dashboard.panels import draw_lens_map
    from lensopt.refraction.lens import Lens

    info = session["info"]
    stop = {"confidence": 0.99, "min_trials": 5, "max_trials": N_TRIALS - 6}
    both = dataclasses.replace(info, protocol={**info.protocol, "session": {"eye": "OU"}, "stop": stop})
    both = dataclasses.replace(both, optimizer_settings={**both.optimizer_settings, "stop": stop})
    eyes = [dataclasses.replace(r, eye="OD" if r.index <= N_TRIALS - 6 else "OS") for r in session["records"]]
    snap = SessionModel(both).update(both, eyes)
    os_trials = snap.model_trials
    assert snap.n_trials == N_TRIALS and os_trials.n == 6 and set(os_trials.eye.tolist()) == {"OS"}
    assert os_trials.index.tolist() == list(range(N_TRIALS - 5, N_TRIALS + 1)) and os_trials.correct.dtype == bool
    fig = Figure()
    draw_lens_map(fig, snap)
    marked = sum(len(c.get_offsets()) for c in fig.axes[0].collections if "lens tried" in str(c.get_label()))
    assert marked == 6
    at_best = Lens(snap.best.sphere_d, snap.best.cylinder_d, 180.0)
    near = [Lens(s, c, 180.0).blur_d(at_best) <= 0.5 for s, c in zip(os_trials.sphere_d, os_trials.cylinder_d)]
    assert len(snap.psychometric.near_letter_logmar) == sum(near)
    rows = {row[0]: row[1] for row in summary_rows(snap)}
    correct = int(os_trials.correct.sum())
    assert rows["Trials"].startswith(f"OS 6, {correct} correct") and rows["Trials"].endswith(f"both eyes {N_TRIALS}")
    assert snap.certainty is not None and snap.certainty.has_stop_rule
    assert rows["Stops at"].endswith((": not yet", ": reached"))  # the session's 30 + 6 would say "max trials reached"


def test_a_session_of_one_eye_names_no_eye_on_its_model_panels(session):
    from lensopt.dashboard.panels import summary_title

    snap = session["snap"]
    assert snap.model_eye is None and snap.eyes == ()
    no_eye = "Summary: best lens — estimate, not a prescription: a cylinder without an axis"
    assert summary_title(snap) == no_eye  # no eye named


def test_with_the_protocols_axis_the_best_lens_is_also_written_in_clinical_notation(session):
    """A two-parameter session whose protocol gives the phoropter's axis (``[lens] axis_deg``, or
    ``lensopt run --axis``): the summary shows the best lens in clinical notation at that axis in the
    protocol's convention above its sphere and signed cylinder, and the other eye's result likewise;
    without an axis (or a protocol stored before it), sphere and cylinder only."""
    from lensopt.refraction.lens import Lens

    info = session["info"]
    assert "axis_deg" not in info.protocol.get("lens", {}) or not info.protocol["lens"]["axis_deg"]
    plain = SessionModel(info).update(info, session["records"])
    assert plain.best_lens_notation is None and "Lens" not in [row[0] for row in summary_rows(plain)]
    for convention in ("minus", "plus"):
        lens = {**info.protocol.get("lens", {}), "axis_deg": 90.0, "cylinder": convention}
        # a stop confidence its lens reaches: a prescription, in clinical notation
        at_90 = dataclasses.replace(info, protocol={**info.protocol, "lens": lens, "stop": {"confidence": 0.01}})
        snap = SessionModel(at_90).update(at_90, session["records"])
        signed = Lens(snap.best.sphere_d, snap.best.cylinder_d, 90.0)
        expected = (signed.plus_cylinder() if convention == "plus" else signed.minus_cylinder()).format()
        assert snap.best_lens_notation == expected
        rows = summary_rows(snap)
        assert [row[0] for row in rows][1:5] == ["Lens", "Accommodation", "Sphere", "Cylinder"] and rows[1][
            1
        ] == expected
        assert f"best lens {expected}: S " in snap.summary_line()
        # one it does not reach: the verdict large, the lens small as an estimate, not for prescribing
        strict = dataclasses.replace(at_90, protocol={**at_90.protocol, "stop": {"confidence": 0.9999}})
        short = SessionModel(strict).update(strict, session["records"])
        assert summary_rows(short)[1] == (
            "Lens",
            "not enough answers to prescribe",
            f"estimate {expected}, not for prescribing",
        )
    both = dataclasses.replace(at_90, protocol={**at_90.protocol, "session": {"eye": "OU"}})
    half = N_TRIALS // 2
    eyes = [dataclasses.replace(r, eye="OD" if r.index <= half else "OS") for r in session["records"]]
    (other,) = SessionModel(both).update(both, eyes).eyes
    sphere_d, cylinder_d = _rebuilt(info, session["history"][:half]).best()
    assert other.lens == Lens(sphere_d, cylinder_d, 90.0).plus_cylinder().format()


def test_an_eye_with_a_cylinder_and_no_axis_is_an_estimate_whose_confidence_is_compared_truly():
    """The dashboard said "(estimate, not a prescription) (confidence 0.34 < 0.30 after 21 trials)":
    the comparison must be the confidence's own, and the reason the axis."""
    from lensopt.dashboard.verdict import EyeEstimate

    eye = EyeEstimate("OD", "S -0.50 D, C +1.00 D", 0.34, 0.30, 21, False, True)
    assert not eye.prescribable and eye.provisional() == ""
    assert eye.line() == (
        "OD S -0.50 D, C +1.00 D (estimate, not a prescription: a cylinder without an axis) "
        "(confidence 0.34 ≥ 0.30 after 21 trials)"
    )


def test_the_summary_and_the_record_agree_on_a_lens_no_trial_came_near(tmp_path):
    """An acuity-law session whose lenses were all a diopter from its best: the dashboard's acuity row
    says the acuity is predicted, with the nearest lens tried, as the record does for the same stored
    session; an answer through that lens the clinician undid does not count (the optimizer was not
    told it)."""
    from lensopt.dashboard.panels import summary_rows
    from lensopt.dashboard.prescription_text import build_record
    from lensopt.modes.registry import get_mode
    from lensopt.refraction.phoropter import round_lens
    from lensopt.refraction.shown import untried_summary
    from lensopt.refraction.trial import Trial
    from lensopt.store import ResultRecord, SessionStore, TrialRecord

    opt = get_mode("letters").new_optimizer({"stop": None}, rule="acuity-law", seed=1, lens_step_d=0.25)
    path = tmp_path / "s.db"

    def record(i, sphere_d, cylinder_d, correct):
        return TrialRecord(
            i, sphere_d, cylinder_d, 0.3, "K", "K" if correct else "X", correct, 0.8, 3.0 * i, 3.0 * i + 1
        )

    with SessionStore(path) as store:
        sid = store.create_session("P01", {"lens": {"step_d": 0.25}}, {}, opt.settings_dict(), 1)
        for i, sphere_d in enumerate((-2.0, 0.0, -2.0, 0.0), start=1):
            store.append_trial(sid, record(i, sphere_d, 0.0, False))
            opt.tell(Trial(sphere_d=sphere_d, cylinder_d=0.0, letter_logmar=0.3), False)
        best = round_lens(opt.best(), 0.25, ((-4.0, 4.0), (-4.0, 4.0)))
        store.append_trial(sid, record(5, *best, True))
        store.void_trial(sid, 5)

    def summary_and_record(lens):
        with SessionStore(path, readonly=True) as store:
            info, trials = store.session(sid), store.trials(sid)
        snap = SessionModel(info).update(info, trials)
        acuity = next(row for row in summary_rows(snap) if row[0] == "Acuity")
        stored = ResultRecord("-", *lens, None, 0.25, 0.5, len(trials), {})  # predicted: +0.25 logMAR
        info = dataclasses.replace(info, results=(stored,), result=stored)
        return acuity, build_record(info, printed_at=2e9, trials=trials).eyes[0]

    acuity, eye = summary_and_record(best)
    assert eye.untried_d is not None and eye.untried_d > 0.5 and acuity[2] == untried_summary(eye.untried_d)
    # answers through the lens it reports then (not undone): both say what the patient read there
    for i in (6, 7, 8):
        with SessionStore(path) as store:
            store.append_trial(sid, record(i, *best, i != 7))
        opt.tell(Trial(sphere_d=best[0], cylinder_d=best[1], letter_logmar=0.3), i != 7)
        best = round_lens(opt.best(), 0.25, ((-4.0, 4.0), (-4.0, 4.0)))
    acuity, eye = summary_and_record(best)
    assert eye.untried_d is None and eye.read_through_short.startswith("read ")
    assert acuity[2] == eye.read_through_short


def test_the_summary_says_what_the_patient_read_through_its_lens():
    from lensopt.dashboard.panels import acuity_row_note
    from lensopt.refraction.shown import ReadThrough

    read = types.SimpleNamespace(untried_d=None, read_through=ReadThrough(5, 4, 0.1, 0.18))
    assert acuity_row_note(read) == ("read 4 of 5 right through it, +0.10 to +0.18 logMAR",)
    near = types.SimpleNamespace(untried_d=None, read_through=ReadThrough(5, 4, 0.1, 0.18, predicted_logmar=-0.1))
    assert acuity_row_note(near) == acuity_row_note(read)  # +0.10 is two lines above -0.10: measured
    large = types.SimpleNamespace(untried_d=None, read_through=ReadThrough(1, 1, 0.96, 0.96, predicted_logmar=0.01))
    assert acuity_row_note(large) == (
        "predicted, not measured: read through it only at +0.96 logMAR; check it on the chart",
    )
    untried = types.SimpleNamespace(untried_d=0.5, read_through=None)
    assert acuity_row_note(untried)[0].startswith("predicted, not measured: the nearest lens tried is 0.50 D")
    assert acuity_row_note(types.SimpleNamespace(untried_d=None, read_through=None)) == ()


def test_each_eyes_summary_says_when_its_lens_was_not_tried():
    """A full prescription's summary rows: under an eye's lens (a prescription, or the provisional
    estimate of an eye short of its target), the note of a lens the eye was not tried with."""
    from lensopt.dashboard.panels import eye_rows
    from lensopt.dashboard.verdict import EyeEstimate
    from lensopt.refraction.shown import untried_summary

    od = EyeEstimate("OD", "-1.25 / -0.75 x 170", 0.97, 0.95, 60, untried_d=0.5)
    os_ = EyeEstimate("OS", "-1.00 / -0.50 x 010", 0.40, 0.95, 20, untried_d=0.375)
    tried = EyeEstimate("OD", "-1.25 / -0.75 x 170", 0.97, 0.95, 60)
    assert eye_rows([od, os_]) == [
        ("OD", "-1.25 / -0.75 x 170", "confidence 0.97 ≥ 0.95 after 60 trials"),
        ("", untried_summary(0.5)),
        ("OS", "not enough answers to prescribe", "confidence 0.40 < 0.95 after 20 trials"),
        ("", "provisional estimate -1.00 / -0.50 x 010, not for prescribing"),
        ("", untried_summary(0.375)),
    ]
    assert eye_rows([tried]) == [("OD", "-1.25 / -0.75 x 170", "confidence 0.97 ≥ 0.95 after 60 trials")]


def test_a_provisional_eyes_summary_says_when_its_acuity_was_read_only_with_large_letters():
    """The printed record warns under a provisional lens read through only with letters far larger
    than its predicted acuity ("not measured ... check it on the chart"); the dashboard's summary
    said nothing there. A lens read at its predicted acuity gets no warning."""
    from lensopt.dashboard.panels import eye_rows
    from lensopt.dashboard.verdict import EyeEstimate
    from lensopt.refraction.shown import ReadThrough

    large = ReadThrough(letters=1, right=1, smallest_logmar=0.96, largest_logmar=0.96, predicted_logmar=0.01)
    at_threshold = ReadThrough(letters=5, right=3, smallest_logmar=0.0, largest_logmar=0.1, predicted_logmar=0.01)
    assert not large.measured and at_threshold.measured
    provisional = EyeEstimate("OS", "-1.00 / -0.50 x 010", 0.40, 0.95, 20, read_through=large)
    rows = eye_rows([provisional])
    assert rows[:2] == [
        ("OS", "not enough answers to prescribe", "confidence 0.40 < 0.95 after 20 trials"),
        ("", "provisional estimate -1.00 / -0.50 x 010, not for prescribing"),
    ]
    assert len(rows) == 3 and "not measured" in rows[2][1] and "+0.96 logMAR" in rows[2][1]
    assert "check it on the chart" in rows[2][1]
    measured = EyeEstimate("OS", "-1.00 / -0.50 x 010", 0.40, 0.95, 20, read_through=at_threshold)
    assert len(eye_rows([measured])) == 2


#: Six answers of a simulated session (sphere, cylinder, letter logMAR, correct), rounded from one a
#: user's audit found: mostly wrong, the model's acuity at its best lens extrapolates to -6 logMAR.
MOSTLY_WRONG = [
    (0.48, -3.81, 0.48, False),
    (-1.7, -3.87, 0.29, False),
    (-2.24, 0.47, 0.37, True),
    (-3.65, 3.29, 0.82, False),
    (2.91, -0.7, 0.28, False),
    (-0.79, 0.57, 1.0, True),
]


def test_an_acuity_extrapolated_beyond_the_letters_shown_is_not_shown(tmp_path):
    """The dashboard (title, summary, psychometric legend) and page 2 of the record said "predicted
    acuity -6.23 ± 7.82 logMAR (≈ 20/0)" where page 1 and the log said "not predicted": the
    dashboard now holds the model's acuity to the same rule (within a line of the letters shown),
    and the lens map's colours to the acuities that may be shown."""
    from lensopt.dashboard.drawing import measurable_range
    from lensopt.refraction.letters import RefractionOptimizer
    from lensopt.refraction.trial import Trial
    from lensopt.store import SessionStore, TrialRecord

    settings = {**RefractionOptimizer(seed=1).settings_dict(), "letter_bounds_logmar": [-0.3, 1.0]}
    history = [(Trial(s, c, letter), correct) for s, c, letter, correct in MOSTLY_WRONG]
    rebuilt = RefractionOptimizer.from_settings(settings, history)
    extrapolated, _ = rebuilt.predicted_acuity_logmar(*rebuilt.best())
    assert extrapolated < -0.3 - 0.1  # the case: beyond the smallest letter by more than a line
    with SessionStore(tmp_path / "s.db") as store:
        sid = store.create_session("P01", {}, {}, settings, 1)
        for i, (trial, correct) in enumerate(history, start=1):
            record = TrialRecord(
                i, trial.sphere_d, trial.cylinder_d, trial.letter_logmar, "K", "K", correct, 0.5, i, i + 0.5
            )
            store.append_trial(sid, record)
        info, records = store.session(sid), store.trials(sid)
    snap = SessionModel(info).update(info, records)
    assert math.isnan(snap.best.acuity_mean_logmar) and math.isnan(snap.psychometric.threshold_logmar)
    assert "predicted acuity not estimable yet" in snap.summary_line() and "20/0" not in snap.summary_line()
    low, high = measurable_range(snap.lens_map.acuity_mean_logmar, (-0.3, 1.0))
    assert (low, high) == (-0.4, 1.1)  # the map's values run far beyond both ends
    assert measurable_range(np.array([[0.1, 0.5], [0.3, np.nan]]), (-0.3, 1.0)) == (0.1, 0.5)  # within: its own
    assert measurable_range(np.array([[-6.0, -5.0]]), (-0.3, 1.0)) is None  # none shown: matplotlib's own
