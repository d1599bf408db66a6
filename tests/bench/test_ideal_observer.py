"""The ideal observer: grid posterior, expected information, sessions, confidence, determinism."""

import math

import numpy as np
import pytest

from lensopt.bench.ideal_observer import IdealObserver, binary_entropy_bits
from lensopt.observer import draw_patients
from lensopt.refraction.trial import Trial
from lensopt.stopping import StopRule

HAND_MADE_ANSWERS = [
    (Trial(sphere_d=0.5, cylinder_d=-0.5, letter_logmar=0.1), True),
    (Trial(sphere_d=-1.0, cylinder_d=0.0, letter_logmar=0.3), False),
    (Trial(sphere_d=1.0, cylinder_d=1.0, letter_logmar=0.6), True),
    (Trial(sphere_d=0.0, cylinder_d=0.5, letter_logmar=-0.2), False),
    (Trial(sphere_d=0.0, cylinder_d=0.5, letter_logmar=1.9), True),
]


def _brute_force_posterior(answers, hypotheses, slope, guess, lapse, va_best):
    """Π_i P(c_i | s_i, x_i, h) by plain loops and math.erf, normalized."""
    unnormalized = []
    for h_sphere, h_cylinder in hypotheses:
        product = 1.0
        for trial, correct in answers:
            r_s, r_c = trial.sphere_d - h_sphere, trial.cylinder_d - h_cylinder
            blur2 = 0.5 * (r_s * r_s + (r_s + r_c) ** 2)
            acuity = va_best + math.log10(1.0 + blur2)
            phi = 0.5 * (1.0 + math.erf(slope * (trial.letter_logmar - acuity) / math.sqrt(2.0)))
            p_correct = guess + (1.0 - guess - lapse) * phi
            product *= p_correct if correct else 1.0 - p_correct
        unnormalized.append(product)
    total = sum(unnormalized)
    return np.array([u / total for u in unnormalized])


@pytest.mark.parametrize("lapse, n_alternatives", [(0.0, 26), (0.05, 10)])
def test_grid_posterior_equals_a_brute_force_product_of_likelihoods(lapse, n_alternatives):
    observer = IdealObserver(
        slope=4.0,
        n_alternatives=n_alternatives,
        lapse=lapse,
        va_best_logmar=-0.1,
        sphere_bounds_d=(-1, 1),
        cylinder_bounds_d=(-1, 1),
        grid_step_d=0.5,
    )
    assert observer.hypotheses_d.shape == (25, 2)
    np.testing.assert_allclose(observer.posterior(), np.full(25, 1 / 25))  # uniform prior
    for trial, correct in HAND_MADE_ANSWERS:
        observer.tell(trial, correct)
    expected = _brute_force_posterior(HAND_MADE_ANSWERS, observer.hypotheses_d, 4.0, 1 / n_alternatives, lapse, -0.1)
    np.testing.assert_allclose(observer.posterior(), expected, rtol=1e-10, atol=1e-15)
    assert observer.posterior_grid().shape == (5, 5) and observer.n_trials == 5


def _observer_after(n_answers, seed=100_007, slope=5.0):
    patient = draw_patients(1, seed, slope=slope)[0]
    observer = IdealObserver(slope=slope, seed=seed)
    for _ in range(n_answers):
        trial = observer.ask()
        observer.tell(trial, patient.respond(trial.letter_logmar, trial.sphere_d, trial.cylinder_d))
    return observer


@pytest.mark.parametrize("n_answers", [0, 4, 25])
def test_expected_information_matches_monte_carlo_draws_of_hypothesis_and_answer(n_answers):
    observer = _observer_after(n_answers)
    lenses = observer.candidate_lenses()
    table = observer.information_table(lenses)
    i, j = np.unravel_index(np.argmax(table), table.shape)
    lens, letter = lenses[i], observer.letter_grid_logmar[j]
    exact = observer.expected_information(*lens, letter)

    # Monte Carlo: hypotheses from the posterior, then one answer per hypothesis.
    rng = np.random.default_rng(12345)
    n_draws = 200_000
    draws = rng.choice(len(observer.hypotheses_d), size=n_draws, p=observer.posterior())
    p = observer.p_correct(letter, *lens)[draws]
    answers = rng.random(n_draws) < p
    monte_carlo = binary_entropy_bits(answers.mean()) - binary_entropy_bits(p).mean()
    assert exact > 0.02
    assert monte_carlo == pytest.approx(exact, abs=0.006)
    # the fast, binned and pruned table used by ask() agrees with the exact value
    assert table[i, j] == pytest.approx(exact, abs=2e-3)


def test_expected_information_is_zero_for_an_answer_known_in_advance():
    observer = IdealObserver(slope=5.0, lapse=0.0)
    # a 2.0 logMAR letter through the centre of the box: named under nearly every hypothesis
    assert observer.expected_information(0.0, 0.0, 2.0) < 0.1 * observer.expected_information(0.0, 0.0, 0.5)


@pytest.mark.parametrize("seed", [100_001, 100_002, 100_003])
def test_simulated_session_reaches_within_005_logmar_in_100_trials(seed):
    patient = draw_patients(1, seed, slope=5.0)[0]
    observer = IdealObserver(slope=5.0, seed=seed)
    for _ in range(100):
        trial = observer.ask()
        observer.tell(trial, patient.respond(trial.letter_logmar, trial.sphere_d, trial.cylinder_d))
    error = patient.visual_acuity(*observer.best()) - patient.best_acuity_logmar
    assert error <= 0.05
    assert observer.n_trials == 100 and observer.last_decision_ms > 0
    certainty = observer.certainty()  # 95 % posterior intervals (grid points) around the reported lens
    assert certainty.confidence == observer.confidence()
    for (low, high), best_d in zip((certainty.sphere_interval_d, certainty.cylinder_interval_d), observer.best()):
        assert low - 0.05 <= best_d <= high + 0.05 and 0 < high - low < 1.5


def test_confidence_is_a_probability_that_grows_with_consistent_answers():
    # A noise-free patient: answers "correct" exactly when P(correct) > ½ — consistent data.
    patient = draw_patients(1, 100_011, slope=5.0)[0]
    observer = IdealObserver(slope=5.0, seed=3)
    confidences = [observer.confidence()]
    for _ in range(60):
        trial = observer.ask()
        observer.tell(trial, patient.p_correct(trial.letter_logmar, trial.sphere_d, trial.cylinder_d) > 0.5)
        confidences.append(observer.confidence())
    assert all(0.0 <= c <= 1.0 for c in confidences)
    assert confidences[0] < 0.05  # a uniform prior over the box: the lens is a guess
    assert confidences[0] < confidences[10] < confidences[60]
    assert confidences[60] > 0.9


def test_stop_rule_stops_at_confidence_after_min_trials_and_never_without_a_rule():
    observer = IdealObserver(slope=8.0, seed=0, stop=StopRule(confidence=0.9, min_trials=10, max_trials=200))
    patient = draw_patients(1, 100_004, slope=8.0)[0]
    unruled = IdealObserver(slope=8.0, seed=0)
    stopped_at = None
    for t in range(1, 121):
        trial = observer.ask()
        observer.tell(trial, patient.respond(trial.letter_logmar, trial.sphere_d, trial.cylinder_d))
        if observer.should_stop():
            stopped_at = t
            break
        assert t < 10 or observer.confidence() < 0.9
    assert stopped_at is not None and stopped_at >= 10 and observer.confidence() >= 0.9
    assert not unruled.should_stop()
    capped = IdealObserver(stop=StopRule(confidence=0.99, min_trials=1, max_trials=1))
    capped.tell(capped.ask(), True)
    assert capped.should_stop()  # max_trials reached


def test_same_seed_and_answers_give_the_same_trials_and_lens():
    def session(seed):
        observer = IdealObserver(slope=5.0, seed=seed)
        answers = np.random.default_rng(7).random(15) < 0.6
        trials = []
        for correct in answers:
            trials.append(observer.ask())
            observer.tell(trials[-1], bool(correct))
        return trials, observer.best()

    assert session(4) == session(4)


def test_lens_step_rounds_every_asked_and_reported_lens():
    observer = IdealObserver(slope=5.0, lens_step_d=0.25, seed=1)
    patient = draw_patients(1, 100_005, slope=5.0)[0]
    for _ in range(8):
        trial = observer.ask()
        for value in (trial.sphere_d, trial.cylinder_d):
            assert value / 0.25 == pytest.approx(round(value / 0.25), abs=1e-9)
        assert -1.0 <= trial.letter_logmar <= 2.0
        observer.tell(trial, patient.respond(trial.letter_logmar, trial.sphere_d, trial.cylinder_d))
    for value in observer.best():
        assert value / 0.25 == pytest.approx(round(value / 0.25), abs=1e-9)


def test_reported_lens_minimizes_the_posterior_expected_acuity_loss():
    observer = _observer_after(20)
    best = np.array(observer.best())
    around = best + np.array([[0.05, 0], [-0.05, 0], [0, 0.05], [0, -0.05], [0.1, -0.1]])
    losses = observer.expected_loss_logmar(np.vstack([best, around]))
    assert losses[0] <= losses[1:].min() + 1e-12


@pytest.mark.parametrize(
    "kwargs, message",
    [
        ({"slope": 0.0}, "slope"),
        ({"n_alternatives": 1}, "n_alternatives"),
        ({"lapse": 0.97}, "lapse"),
        ({"seed": -1}, "seed"),
        ({"sphere_bounds_d": (2, -2)}, "sphere_bounds_d"),
        ({"lens_step_d": 0}, "lens_step_d"),
        ({"stop": {"confidence": 1.5}}, "confidence"),
    ],
)
def test_bad_settings_raise_one_line_value_errors(kwargs, message):
    with pytest.raises(ValueError, match=message):
        IdealObserver(**kwargs)


def test_tell_refuses_a_non_boolean_answer():
    observer = IdealObserver()
    with pytest.raises(ValueError, match=r"True or False \(or 1 or 0\)"):
        observer.tell(observer.ask(), "yes")
