"""The full prescription from duels: phoropter lens pairs, exact rebuild, the answers, the search."""

import dataclasses
import json
import math
from pathlib import Path

import numpy as np
import pytest

from lensopt.modes.registry import get_mode
from lensopt.observer import SimulatedPatient, autorefraction, draw_clinic_patients
from lensopt.refraction.lens import Lens
from lensopt.refraction.prescription_duels import (
    DUEL_MAX_PLUS_OFFSET_D,
    DUEL_SEPARATION_D,
    LENS_LENGTHSCALE_D,
    MAPPED_LENS_LENGTHSCALE_D,
    PLUS_PREFERENCE,
    REPORT_TILT_SHARE,
    START_PRIOR_DEPTH,
    PrescriptionDuelOptimizer,
    PrescriptionDuelTrial,
    prescription_duel_kernel,
    pull_within,
)
from lensopt.simulation import simulate_prescription

START = Lens(-1.0, -0.5, 180.0)
#: Largest power-vector move (D) of rounding one lens to 0.25 D and 1°: sphere and cylinder by
#: 0.125 each (M by up to 0.1875, |J| by 0.0625) and the axis by 0.5° (|J| · sin 1° ≤ 0.05 for
#: the box's cylinders, under 3 D); generously 0.25.
ROUNDING_MOVE_D = 0.25


def _patient(seed=1, **kwargs):
    return SimulatedPatient(-1.25, -0.75, axis_deg=170.0, slope=14.0, seed=seed, **kwargs)


def _answered(n=8, rule="muc-ald", seed=3, same_at=None, **options):
    """An optimizer told ``n`` simulated answers (a "same" at trial ``same_at``, if given)."""
    opt = PrescriptionDuelOptimizer(rule=rule, seed=seed, start=START, n_initial=3, **options)
    respond = get_mode("duel").responder(_patient())
    for t in range(1, n + 1):
        trial = opt.ask()
        opt.tell(trial, "same" if t == same_at else respond(trial))
    return opt


def _on_phoropter(lens: Lens) -> bool:
    return (
        lens.cylinder_d <= 0.0
        and lens.sphere_d / 0.25 == pytest.approx(round(lens.sphere_d / 0.25))
        and lens.cylinder_d / 0.25 == pytest.approx(round(lens.cylinder_d / 0.25))
        and lens.axis_deg == int(lens.axis_deg)
        and 1 <= lens.axis_deg <= 180
    )


@pytest.mark.parametrize("rule", ["muc-ald", "kss-ald", "random"])
def test_ask_gives_two_distinct_close_phoropter_lenses_in_the_box(rule):
    opt = PrescriptionDuelOptimizer(rule=rule, seed=5, start=START, n_initial=3)
    respond = get_mode("duel").responder(_patient())
    (m_lo, m_hi), (j0_lo, j0_hi), (j45_lo, j45_hi) = opt.box.bounds_d
    for _ in range(8):
        trial = opt.ask()
        assert isinstance(trial, PrescriptionDuelTrial) and -1.0 <= trial.letter_logmar <= 2.0
        first, second = trial.first_lens, trial.second_lens
        assert _on_phoropter(first) and _on_phoropter(second) and first != second
        for lens in (first, second):
            pv = lens.power_vector()
            assert m_lo - ROUNDING_MOVE_D <= pv.m_d <= m_hi + ROUNDING_MOVE_D
            assert j0_lo - ROUNDING_MOVE_D <= pv.j0_d <= j0_hi + ROUNDING_MOVE_D
            assert j45_lo - ROUNDING_MOVE_D <= pv.j45_d <= j45_hi + ROUNDING_MOVE_D
        assert first.blur_d(second) <= DUEL_SEPARATION_D + 2 * ROUNDING_MOVE_D
        opt.tell(trial, respond(trial))


def test_the_model_is_told_the_power_vectors_of_the_lenses_shown():
    opt = _answered(n=5)
    assert opt.n_trials == 5 and opt._core.n_trials == 5
    trial, answer = opt.history[-1]
    row = opt._core.duels[-1]
    assert row[0] == trial.letter_logmar
    np.testing.assert_allclose(row[1:4], trial.first_lens.power_vector().to_array())
    np.testing.assert_allclose(row[4:7], trial.second_lens.power_vector().to_array())
    assert opt._core.outcomes[-1] == (answer == "first")


def test_a_same_is_told_as_the_duel_answered_once_each_way_by_default():
    opt = _answered(n=5, same_at=4)
    assert opt.same_answers == "both-ways" == opt.settings_dict()["same_answers"]
    assert opt.n_trials == 5 and opt._core.n_trials == 6  # the "same" is two duels, one each way
    trial, answer = opt.history[3]
    assert answer == "same"
    same_rows = opt._core.duels[3:5]
    expected = np.concatenate(
        [[trial.letter_logmar], *(x.power_vector().to_array() for x in (trial.first_lens, trial.second_lens))]
    )
    np.testing.assert_allclose(same_rows, [expected, expected])
    assert list(opt._core.outcomes[3:5]) == [1, 0]


def test_a_same_pulls_the_two_lenses_utilities_together():
    """After "the same" the model's probability that lens 1 is clearer moves towards 1/2 from the
    one it gave before, where "dropped" leaves it as it was."""
    before = _answered(n=12, clarity_link="linear")
    trial = PrescriptionDuelTrial(START, Lens(-0.25, -0.5, 180.0), 0.2)  # 0.75 D apart in M
    members = np.array([trial.first_lens.power_vector().to_array(), trial.second_lens.power_vector().to_array()])
    Z = np.concatenate([[trial.letter_logmar], members.ravel()])[None, :]
    p_before = before.model.duel_probability(Z)[0]
    assert abs(p_before - 0.5) > 0.05  # a duel the model has an opinion about
    both = PrescriptionDuelOptimizer.from_settings(before.settings_dict(), [*before.history, (trial, "same")])
    dropped = PrescriptionDuelOptimizer.from_settings(
        {**before.settings_dict(), "same_answers": "dropped"}, [*before.history, (trial, "same")]
    )
    assert abs(both.model.duel_probability(Z)[0] - 0.5) < 0.5 * abs(p_before - 0.5)
    assert dropped.model.duel_probability(Z)[0] == pytest.approx(p_before, abs=1e-9)


def test_a_session_saved_before_the_same_was_modelled_replays_with_it_dropped():
    """Settings without ``same_answers`` (sessions saved before it) rebuild as those sessions ran:
    "the same" kept in the history only, the model told the other answers."""
    opt = _answered(n=8, same_at=6)
    old_settings = {k: v for k, v in opt.settings_dict().items() if k != "same_answers"}
    old = PrescriptionDuelOptimizer.from_settings(old_settings, list(opt.history))
    assert old.same_answers == "dropped" and old._core.n_trials == 7
    explicit = PrescriptionDuelOptimizer.from_settings({**old_settings, "same_answers": "dropped"}, list(opt.history))
    assert (old.ask(), old.prescription().text) == (explicit.ask(), explicit.prescription().text)
    with pytest.raises(ValueError, match="unknown same_answers 'ignore'; choose one of: both-ways, dropped"):
        PrescriptionDuelOptimizer(start=START, same_answers="ignore")


def test_a_json_state_round_trip_reproduces_the_next_duel_and_the_prescription():
    opt = _answered(n=9, same_at=6)
    state = json.loads(json.dumps(opt.to_state()))
    rebuilt = PrescriptionDuelOptimizer.from_state(state)
    assert rebuilt.to_state() == state and rebuilt.n_trials == 9
    again, first = rebuilt.ask(), opt.ask()
    assert again.first_lens == first.first_lens and again.second_lens == first.second_lens
    assert again.letter_logmar == pytest.approx(first.letter_logmar, abs=1e-9)
    np.testing.assert_allclose(rebuilt.best().to_array(), opt.best().to_array(), atol=1e-6)
    assert rebuilt.prescription().text == opt.prescription().text


def test_a_session_saved_before_the_prior_about_the_start_replays_with_the_flat_prior():
    """Settings without ``start_prior_depth`` (sessions saved before it) rebuild the flat prior of
    those sessions, which asks the duels they asked; new settings store the depth."""
    opt = _answered(n=7)
    assert opt.settings_dict()["start_prior_depth"] == START_PRIOR_DEPTH > 0
    old_settings = {k: v for k, v in opt.settings_dict().items() if k != "start_prior_depth"}
    history = list(opt._history)
    old = PrescriptionDuelOptimizer.from_settings(old_settings, history)
    flat = PrescriptionDuelOptimizer.from_settings({**old_settings, "start_prior_depth": 0.0}, history)
    assert old.start_prior() is None and old.settings_dict()["start_prior_depth"] == 0.0
    assert (old.ask(), old.prescription().text) == (flat.ask(), flat.prescription().text)
    assert PrescriptionDuelOptimizer(start=None).start_prior() is None  # no start, no bowl


def test_a_rebuilt_optimizer_reports_the_uninterrupted_ones_prescription_bit_for_bit():
    """A resumed session fits the whole history once; the uninterrupted one fitted before every duel.
    The model is refitted from the prior each time, so the two agree to the last bit (a warm-started
    Laplace fit, stopped at its tolerance, left the prescription 1e-16 D apart here)."""
    opt = PrescriptionDuelOptimizer(seed=7, start=START)
    respond = get_mode("duel").responder(SimulatedPatient(-1.25, -0.75, axis_deg=170.0, slope=14.0, seed=7))
    for _ in range(10):
        trial = opt.ask()
        opt.tell(trial, respond(trial))
    rebuilt = PrescriptionDuelOptimizer.from_settings(opt.settings_dict(), opt.history)
    assert rebuilt.prescription() == opt.prescription()
    assert rebuilt.ask() == opt.ask()


def test_the_prior_about_the_start_keeps_the_first_random_duels_report_near_the_start():
    """After the five random first duels, on clinic patients (tuning seeds) with an autorefraction
    start, the reported lens is nearer the truth with the prior about the start than with the flat
    prior, on average, and no farther than the start plus 0.25 D."""
    errors = {START_PRIOR_DEPTH: [], 0.0: []}
    start_errors = []
    for seed in range(7100, 7106):
        patient = draw_clinic_patients(1, seed, slope=14.0)[0]
        start = autorefraction(patient, np.random.SeedSequence([seed, 1]))
        truth = patient.correction.power_vector()
        start_errors.append((start.power_vector() - truth).length_d)
        for depth in errors:
            opt = PrescriptionDuelOptimizer(seed=seed, start=start, start_prior_depth=depth)
            simulate_prescription(patient, opt, 5, feedback="duel")
            errors[depth].append((opt.best() - truth).length_d)
    assert np.mean(errors[START_PRIOR_DEPTH]) < np.mean(errors[0.0])
    assert np.mean(errors[START_PRIOR_DEPTH]) < np.mean(start_errors) + 0.25


def test_the_kernel_is_isotropic_in_power_vectors_and_the_duel_lengthscale_maps_to_2_09_d():
    assert MAPPED_LENS_LENGTHSCALE_D == pytest.approx(math.sqrt(2.5 * 3.5 / 2.0))  # 2.092 D
    assert PrescriptionDuelOptimizer(start=START).settings_dict()["lens_lengthscale_d"] == LENS_LENGTHSCALE_D
    kernel = prescription_duel_kernel()
    x = np.array([[0.5, -1.0, 0.1, 0.0]])
    for step in ([0.6, 0.0, 0.0], [0.0, 0.6, 0.0], [0.0, 0.0, -0.6], [0.6 / math.sqrt(3)] * 3):
        other = x + np.concatenate([[0.0], step])
        expected = 9.0 * math.exp(-0.5 * 0.6**2 / LENS_LENGTHSCALE_D**2)
        assert kernel(x, other)[0, 0] == pytest.approx(expected)


def test_pull_within_moves_a_far_lens_onto_the_ball_and_keeps_a_near_one():
    np.testing.assert_allclose(pull_within([0, 0, 0], [3.0, 4.0, 0.0], 0.5), [0.3, 0.4, 0.0])
    np.testing.assert_allclose(pull_within([1, 0, 0], [1.2, 0.1, 0.0], 0.5), [1.2, 0.1, 0.0])


def test_the_duel_mode_answers_from_each_lenses_own_axis():
    # the correction against the same lens turned 20°: the residual is a pure cross-cylinder of
    # |C| sin 20° = 0.257 D, so the first lens should win at P = σ(1.702 Δu) (Gumbel noise)
    patient = SimulatedPatient(-1.0, -0.75, axis_deg=90.0, slope=14.0, seed=11)
    correct, turned = Lens(-1.0, -0.75, 90.0), Lens(-1.0, -0.75, 110.0)
    letter = 0.05
    u = [patient.duel_utility(letter, lens.sphere_d, lens.cylinder_d, lens.axis_deg) for lens in (correct, turned)]
    expected = 1.0 / (1.0 + math.exp(-1.702 * (u[0] - u[1])))
    assert 0.6 < expected < 0.95  # the test can tell it from 0.5 and from 1
    respond = get_mode("duel").responder(patient)
    n = 2000
    wins = sum(respond(PrescriptionDuelTrial(correct, turned, letter)) == "first" for _ in range(n))
    assert wins / n == pytest.approx(expected, abs=4 * math.sqrt(expected * (1 - expected) / n))
    with pytest.raises(ValueError, match="take no axis_deg"):
        patient.duel_answer(letter, (-1.0, -0.75, 90.0), (-1.0, -0.75, 110.0), axis_deg=90.0)


def test_duels_find_a_better_lens_than_the_autorefraction_on_average():
    """Clinic patients (tuning seeds) with an autorefraction start: after 50 duels the reported
    lens's blur error is smaller than the start's, on average over four patients."""
    start_errors, end_errors = [], []
    for seed in range(7000, 7004):
        patient = draw_clinic_patients(1, seed, slope=14.0)[0]
        start = autorefraction(patient, np.random.SeedSequence([seed, 1]))
        opt = PrescriptionDuelOptimizer(seed=seed, start=start)
        result = simulate_prescription(patient, opt, 50, feedback="duel")
        truth = patient.correction.power_vector()
        start_errors.append((start.power_vector() - truth).length_d)
        end_errors.append((opt.best() - truth).length_d)
        assert result.final.blur_error_d == pytest.approx(end_errors[-1])
    assert np.mean(end_errors) < np.mean(start_errors)


def test_the_prescription_has_intervals_around_the_lens_and_no_acuity_confidence():
    rx = _answered(n=12).prescription()
    assert _on_phoropter(rx.lens) and rx.trials == 12
    assert rx.confidence is None and rx.predicted_acuity_logmar is None
    assert set(rx.intervals) == {"m_d", "j0_d", "j45_d", "sphere_d", "cylinder_d", "axis_deg"}
    for name, value in zip(("m_d", "j0_d", "j45_d"), rx.power_vector_d.to_array()):
        lo, hi = rx.intervals[name]
        assert lo <= hi and lo - 1e-9 <= value <= hi + 1e-9


class _PosteriorMean:
    """A utility posterior mean ``−c (M − M*)²`` (``−c max(M − M*, 0)²`` with ``plateau``: an
    accommodating eye, flat on the minus side), with the gradient the preference GP gives."""

    def __init__(self, curvature, m_star_d, plateau=False):
        self.c, self.m_star, self.plateau = curvature, m_star_d, plateau

    def predict_utility_with_gradient(self, X):
        X = np.atleast_2d(np.asarray(X, dtype=float))
        r = X[:, 1] - self.m_star
        if self.plateau:
            r = np.maximum(r, 0.0)
        dmean = np.zeros_like(X)
        dmean[:, 1] = -2.0 * self.c * r
        return -self.c * r**2, np.zeros(len(X)), dmean, np.zeros_like(X)


@pytest.mark.parametrize(
    "curvature, plateau, kappa, expected",
    [
        (3.0, False, 1.0, 1.0 / 6.0),  # the tilted optimum of −3 (M − M*)² + M lies 1/6 D plus of M*
        (3.0, True, 1.0, 1.0 / 6.0),  # measured on the plus side: the flat minus side does not matter
        (6.0, False, 3.0, 0.25),
        (0.2, False, 1.0, 0.5),  # 2.5 D, capped
        (0.0, False, 1.0, 0.0),  # no curvature: no offset
        (3.0, False, 0.0, 0.0),  # no tilt
    ],
)
def test_the_most_plus_offset_is_the_tilt_over_twice_the_curvature(monkeypatch, curvature, plateau, kappa, expected):
    opt = PrescriptionDuelOptimizer(start=START, clarity_link="linear", plus_preference=kappa, max_plus_offset_d=0.5)
    mean = _PosteriorMean(curvature, -1.0, plateau)
    monkeypatch.setattr(PrescriptionDuelOptimizer, "model", property(lambda self: mean))
    tilted_m = -1.0 + (kappa / (2 * curvature) if curvature > 0 else 0.0)
    assert opt.plus_offset_d(np.array([tilted_m, 0.1, -0.1]), kappa) == pytest.approx(expected)
    assert opt.plus_offset_d(np.array([tilted_m, 0.1, -0.1])) == pytest.approx(  # the report's tilt
        min(REPORT_TILT_SHARE * kappa / (2 * curvature), 0.5) if curvature > 0 else 0.0
    )


def test_the_most_plus_offset_is_capped_at_a_quarter_diopter_and_at_half_in_sessions_saved_before(monkeypatch):
    """2.5 D of offset (κ 1 over twice a curvature of 0.2) is capped at ``DUEL_MAX_PLUS_OFFSET_D``
    (0.25 D) by default and stored; settings saved before the cap was a setting rebuild with 0.5 D."""
    mean = _PosteriorMean(0.2, -1.0, False)
    monkeypatch.setattr(PrescriptionDuelOptimizer, "model", property(lambda self: mean))
    opt = PrescriptionDuelOptimizer(start=START, clarity_link="linear", plus_preference=1.0)
    assert DUEL_MAX_PLUS_OFFSET_D == 0.25 == opt.settings_dict()["max_plus_offset_d"]
    assert opt.plus_offset_d(np.array([1.5, 0.1, -0.1]), 1.0) == pytest.approx(0.25)
    old_settings = {k: v for k, v in opt.settings_dict().items() if k != "max_plus_offset_d"}
    old = PrescriptionDuelOptimizer.from_settings(old_settings)
    assert old.max_plus_offset_d == 0.5 and old.plus_offset_d(np.array([1.5, 0.1, -0.1]), 1.0) == pytest.approx(0.5)
    with pytest.raises(ValueError, match=r"max_plus_offset_d must be a number in \(0, 2\], got -0.1"):
        PrescriptionDuelOptimizer(start=START, max_plus_offset_d=-0.1)


class _QuadraticUtility(_PosteriorMean):
    def predict_utility(self, X, full_cov=False):
        mean, var, _, _ = self.predict_utility_with_gradient(X)
        return mean, var


def _optimizer_of(monkeypatch, curvature, m_star_d, shown_m_d):
    """A duel optimizer whose posterior mean is ``−c (M − M*)²`` and whose lenses shown have the
    given M (J0 = J45 = 0)."""
    opt = PrescriptionDuelOptimizer(start=START, clarity_link="linear")
    mean = _QuadraticUtility(curvature, m_star_d)
    monkeypatch.setattr(PrescriptionDuelOptimizer, "model", property(lambda self: mean))
    shown = np.array([[m, 0.0, 0.0] for m in shown_m_d])
    monkeypatch.setattr(PrescriptionDuelOptimizer, "_shown_lenses", lambda self: shown)
    return opt


def test_the_champion_moves_at_most_one_separation_beyond_the_lens_the_answers_favour(monkeypatch):
    # A nearly flat utility (c = 0.5): tilted by κ = 2 its optimum lies 2 D plus of M* = −1.5. The
    # lenses shown at M* + 0.75 and M* + 1.5 look better *tilted* than the one at M*, but the
    # answers favour M*: the champion stays within one duel separation (0.75 D) of it.
    opt = _optimizer_of(monkeypatch, 0.5, -1.5, [-1.5, -0.75, 0.0])
    champion = opt.search_optimum()
    assert champion[0] == pytest.approx(-1.5 + DUEL_SEPARATION_D, abs=1e-3)


def test_the_reported_lens_of_a_quadratic_utility_is_its_peak_and_the_champion_leans_plus(monkeypatch):
    # −3 (M − M*)²: the champion maximizes it plus κ M (κ/(2c) = 1/3 D plus of M*); the report, with
    # half the tilt, lies 1/6 D plus and moves back by 1/6 D onto M*.
    m_star = -1.25
    opt = _optimizer_of(monkeypatch, 3.0, m_star, [m_star - 0.25, m_star, m_star + 0.25])
    assert opt.search_optimum()[0] == pytest.approx(m_star + PLUS_PREFERENCE / 6.0, abs=1e-3)
    assert opt.best().m_d == pytest.approx(m_star, abs=1e-3)


def _one_line_value_error(call, match):
    with pytest.raises(ValueError, match=match) as info:
        call()
    assert "\n" not in str(info.value)


def test_bad_input_is_one_clear_value_error():
    _one_line_value_error(lambda: PrescriptionDuelOptimizer(rule="ucb-ald", start=START), "unknown duel rule 'ucb-ald'")
    _one_line_value_error(lambda: PrescriptionDuelOptimizer(start=START, lens_step_d=0), "lens_step_d")
    _one_line_value_error(lambda: PrescriptionDuelOptimizer(start=START, plus_preference=-1), "plus_preference")
    _one_line_value_error(
        lambda: PrescriptionDuelOptimizer(start=START, axis_step_deg=7), "axis_step_deg must be degrees in"
    )
    _one_line_value_error(lambda: PrescriptionDuelOptimizer(start=START, start_prior_depth=-1), "start_prior_depth")
    opt = PrescriptionDuelOptimizer(start=START)
    far = PrescriptionDuelTrial(Lens(3.0, -0.5, 180.0), START, 0.3)  # M 2.75 D from the start's
    _one_line_value_error(lambda: opt.tell(far, "first"), "first lens \\+3.00 / -0.50 x 180 is outside the search box")
    trial = opt.ask()
    _one_line_value_error(lambda: opt.tell(trial, "maybe"), "a duel answer must be one of")
    _one_line_value_error(lambda: PrescriptionDuelTrial((-1.0, -0.5), START, 0.3), "first_lens must be a Lens")
    assert opt.n_trials == 0


#: The fixtures of old states (tests/refraction/data/make_prescription_comparisons_fixture.py), by
#: the commit whose code saved them, and that commit's time (unix seconds): c1303ab (26 Nov 2026)
#: centred the trust region by the tilted mean and its duels reported with the whole tilt; a247e62
#: (27 Nov 2026 15:29 UTC) by the mean, with half, yet stored neither nor a prior about the start.
OLD_STATES = {"c1303ab": 1795714062, "a247e62": 1795793347}


def _old_state(commit: str) -> dict:
    return json.loads((Path(__file__).parent / "data" / f"prescription-comparisons-{commit}.json").read_text())


def _continues_as_then(opt, then: dict, kind: str) -> None:
    """``opt`` asks the lenses and letter sizes the old code asked after its state, and reports its best lens."""
    for trial_then in then["continued"]:
        trial = opt.ask()
        shown = [trial.first_lens, trial.second_lens] if kind == "duel" else list(trial.lenses)
        assert [[x.sphere_d, x.cylinder_d, x.axis_deg] for x in shown] == trial_then["lenses"]
        assert trial.letter_logmar == pytest.approx(trial_then["letter_logmar"], abs=1e-6)
        opt.tell(trial, trial_then["answer"])
    np.testing.assert_allclose(opt.best().to_array(), then["best"], atol=1e-6)


@pytest.mark.parametrize("kind", ["duel", "ranking"])
def test_a_session_saved_by_the_code_of_26_nov_resumes_with_the_trials_it_would_have_asked(kind):
    """States saved by commit c1303ab (before the trust region was centred by the untilted mean and
    duels reported with half the tilt; tests/refraction/data/make_prescription_comparisons_fixture.py)
    resume as that code continued them: the same lenses, letter sizes and best lens. Their duels
    diverged from the second trial after a resume, 1.5 D of M apart at the end, before the
    settings ``trust_centre`` and ``report_tilt_share`` were stored."""
    from lensopt.refraction.prescription_rankings import PrescriptionRankingOptimizer

    fixture = _old_state("c1303ab")
    optimizer_class = PrescriptionDuelOptimizer if kind == "duel" else PrescriptionRankingOptimizer
    opt = optimizer_class.from_state(fixture[kind]["state"])
    assert opt.trust_centre == "tilted" and opt.report_tilt_share == 1.0
    _continues_as_then(opt, fixture[kind], kind)
    again = json.loads(json.dumps(opt.to_state()))
    assert again["settings"]["trust_centre"] == "tilted"  # stored now, kept on the next resume
    assert optimizer_class.from_state(again).ask() == opt.ask()


@pytest.mark.parametrize("kind", ["duel", "ranking"])
@pytest.mark.parametrize("commit", list(OLD_STATES))
def test_a_session_resumes_with_the_trust_centre_its_creation_time_says_it_ran_with(kind, commit):
    """A session created at the time of the code that saved it resumes with the settings that code ran
    with (``settings_as_ran``): those of a247e62, after the trust region came to be centred by the
    mean but before the prior about the start, store neither, and resumed with the tilted centre,
    their duels from the third trial on and rankings from the second on other lenses."""
    from lensopt.refraction.prescription_rankings import PrescriptionRankingOptimizer

    fixture = _old_state(commit)
    optimizer_class = PrescriptionDuelOptimizer if kind == "duel" else PrescriptionRankingOptimizer
    state = fixture[kind]["state"]
    settings = optimizer_class.settings_as_ran(state["settings"], OLD_STATES[commit])
    opt = optimizer_class.from_state({**state, "settings": settings})
    assert opt.trust_centre == ("tilted" if commit == "c1303ab" else "mean")
    if kind == "duel":
        assert opt.report_tilt_share == (1.0 if commit == "c1303ab" else 0.5)
    _continues_as_then(opt, fixture[kind], kind)


def test_settings_that_store_their_trust_centre_keep_it_whenever_their_session_was_created():
    stored = PrescriptionDuelOptimizer(start=START, trust_centre="tilted", report_tilt_share=0.75).settings_dict()
    for created_at_s in OLD_STATES.values():
        assert PrescriptionDuelOptimizer.settings_as_ran(stored, created_at_s) == stored


def test_new_sessions_store_the_trust_centre_and_refuse_an_unknown_one():
    opt = PrescriptionDuelOptimizer(start=START)
    assert opt.settings_dict()["trust_centre"] == "mean" and opt.settings_dict()["report_tilt_share"] == 0.5
    with pytest.raises(ValueError, match="unknown trust_centre 'median'; choose one of: mean, tilted"):
        PrescriptionDuelOptimizer(start=START, trust_centre="median")


@pytest.mark.parametrize("answer", ["first", "same"])
def test_a_duel_of_a_lens_against_itself_is_refused_and_the_search_goes_on(answer):
    """Found by an audit of the Python API: told, it broke every later ask() and best() (the link's
    fit refused a pair of one point), and a saved state kept it broken: no resume."""
    optimizer = PrescriptionDuelOptimizer(start="-1.00 / -0.50 x 180", seed=0)
    trial = optimizer.ask()
    with pytest.raises(ValueError, match=r"^a duel's two lenses must differ; both are -1.00 / -0.50 x 180"):
        optimizer.tell(dataclasses.replace(trial, second_lens=trial.first_lens), answer)
    assert optimizer.n_trials == 0
    optimizer.tell(trial, "first")
    again = PrescriptionDuelOptimizer.from_state(json.loads(json.dumps(optimizer.to_state())))
    assert again.ask() == optimizer.ask() and optimizer.best() is not None


def test_a_start_beyond_a_phoropter_is_refused_by_both_prescription_optimizers():
    """PrescriptionOptimizer(start="-40 …") asked a -40 D lens that its own tell() then refused; the
    duel optimizer asked and took -30 D lenses."""
    from lensopt.refraction import PrescriptionOptimizer

    for make in (PrescriptionOptimizer, PrescriptionDuelOptimizer):
        with pytest.raises(ValueError, match=r"has a meridian of -40\.50 D, beyond a phoropter's ±20 D"):
            make(start="-40.00 / -0.50 x 180")
    assert PrescriptionOptimizer(start="-19.50 / -0.50 x 180").ask().sphere_d > -20.5  # -20.00 D: within
