"""The acuity-law letter optimizer: its posterior, trial choice, reported lens and confidence, each
checked against an independent computation (direct Bayes with scipy's normal CDF, brute-force
search, Monte Carlo), its saved state, and that it finds a patient."""

import json

import numpy as np
import pytest
from scipy.stats import norm

from lensopt.observer import draw_patients
from lensopt.refraction.acuity_law import AcuityLawOptimizer
from lensopt.refraction.blur_law import blur_acuity_loss_logmar
from lensopt.refraction.letters import RefractionOptimizer
from lensopt.refraction.trial import Trial
from lensopt.simulation import make_patient
from lensopt.stopping import StopRule

ANSWERS = [
    (Trial(sphere_d=1.0, cylinder_d=-2.0, letter_logmar=0.3), True),
    (Trial(sphere_d=-4.0, cylinder_d=4.0, letter_logmar=2.0), False),
    (Trial(sphere_d=0.05, cylinder_d=0.0, letter_logmar=-1.0), True),
    (Trial(sphere_d=0.5, cylinder_d=-0.5, letter_logmar=0.1), False),
    (Trial(sphere_d=-1.5, cylinder_d=1.0, letter_logmar=0.9), True),
]


def p_correct(trial, sphere_d, cylinder_d, va_best, slope, n_alternatives=26, lapse=0.02):
    """The model's P(correct), written out: γ + (1 − γ − λ) Φ(a (s − VA₀ − log10(1 + b²)))."""
    r_s, r_c = trial.sphere_d - sphere_d, trial.cylinder_d - cylinder_d
    b2 = 0.5 * (r_s**2 + (r_s + r_c) ** 2)
    guess = 1.0 / n_alternatives
    va = va_best + np.log10(1.0 + b2)
    return guess + (1.0 - guess - lapse) * norm.cdf(slope * (trial.letter_logmar - va))


def told(answers=ANSWERS, **settings):
    optimizer = AcuityLawOptimizer(seed=3, **settings)
    for trial, correct in answers:
        optimizer.tell(trial, correct)
    return optimizer


def test_posterior_is_the_product_of_the_answers_likelihoods():
    optimizer = told()
    posterior = optimizer.posterior()
    rng = np.random.default_rng(0)
    picks = [
        (rng.integers(len(optimizer._corrections)), rng.integers(posterior.shape[1]), rng.integers(posterior.shape[2]))
        for _ in range(200)
    ]
    log_direct = []
    for i, j, k in picks:
        (S, C), va_best, slope = optimizer._corrections[i], optimizer.va_best_grid_logmar[j], optimizer._slopes[k]
        log_direct.append(
            sum(np.log(p if c else 1.0 - p) for t, c in ANSWERS for p in [p_correct(t, S, C, va_best, slope)])
        )
    log_model = [np.log(posterior[i, j, k]) for i, j, k in picks]
    # equal up to the normalizing constant, which is the same for every hypothesis
    offsets = np.array(log_model) - np.array(log_direct)
    np.testing.assert_allclose(offsets, offsets[0], atol=1e-4)


def test_tabulated_log_likelihood_matches_the_exact_one():
    optimizer = AcuityLawOptimizer(slopes_per_logmar=(2.0, 8.0))
    for trial, correct in ANSWERS:
        approx = optimizer._trial_log_likelihood(trial, correct)
        S, C = optimizer._corrections[:, 0], optimizer._corrections[:, 1]
        for k, slope in enumerate(optimizer._slopes):
            for j, va_best in enumerate(optimizer.va_best_grid_logmar[::5]):
                p = p_correct(trial, S, C, va_best, slope)
                exact = np.log(p if correct else 1.0 - p)
                np.testing.assert_allclose(approx[:, 5 * j, k], exact, atol=1e-4)


def test_information_of_the_binned_draws_matches_the_exact_information():
    optimizer = told()
    lenses = np.array([[0.0, 0.0], [1.0, -2.0], [-2.0, 1.5]])
    table = optimizer.information_table(lenses)
    for i, (S, C) in enumerate(lenses):
        for j in (40, 60, 80, 100):
            exact = optimizer.expected_information(S, C, optimizer.letter_grid_logmar[j])
            assert table[i, j] == pytest.approx(exact, abs=0.02)


def test_the_candidates_information_reads_the_coarse_lenses_loss_table_as_if_computed():
    optimizer = told(lens_step_d=0.25)
    lenses = optimizer.candidate_lenses()
    assert len(lenses) > 81  # the coarse grid first (read from its table), then the rest
    from_table = optimizer.information_table(lenses)
    optimizer._coarse_lenses = optimizer._coarse_lenses + 1.0  # not the candidates' first rows: every loss computed
    assert np.array_equal(from_table, optimizer.information_table(lenses))


def test_exact_information_matches_monte_carlo():
    optimizer = told()
    trial = Trial(sphere_d=0.5, cylinder_d=-1.0, letter_logmar=0.5)
    w = optimizer.posterior().ravel()
    rng = np.random.default_rng(1)
    index = rng.choice(w.size, size=200_000, p=w)
    i, j, k = np.unravel_index(index, optimizer.posterior().shape)
    p = p_correct(
        trial,
        optimizer._corrections[i, 0],
        optimizer._corrections[i, 1],
        optimizer.va_best_grid_logmar[j],
        optimizer._slopes[k],
    )
    answers = rng.random(p.size) < p

    def h2(q):
        return -(q * np.log2(q) + (1 - q) * np.log2(1 - q))

    # I = H(answer) − E[H(answer | h)], the first from the simulated answers
    monte_carlo = h2(answers.mean()) - h2(p).mean()
    exact = optimizer.expected_information(trial.sphere_d, trial.cylinder_d, trial.letter_logmar)
    assert exact == pytest.approx(monte_carlo, abs=0.005)


def test_reported_lens_minimizes_the_expected_loss_over_a_fine_grid():
    optimizer = told()
    marginal = optimizer.correction_posterior().ravel()
    corrections = optimizer._corrections
    grid = np.stack(np.meshgrid(np.arange(-4, 4.01, 0.05), np.arange(-4, 4.01, 0.05), indexing="ij"), -1).reshape(-1, 2)

    def expected_loss(lenses):
        loss = blur_acuity_loss_logmar(
            lenses[:, None, 0] - corrections[None, :, 0], lenses[:, None, 1] - corrections[None, :, 1]
        )
        return loss @ marginal

    brute = min(expected_loss(chunk).min() for chunk in np.array_split(grid, 40))
    best = expected_loss(np.array([optimizer.best()]))[0]
    assert best <= brute + 1e-4


def test_confidence_is_the_posterior_mass_within_the_tolerance():
    optimizer = told()
    lens = np.array(optimizer.best())
    marginal = optimizer.correction_posterior().ravel()
    loss = blur_acuity_loss_logmar(lens[0] - optimizer._corrections[:, 0], lens[1] - optimizer._corrections[:, 1])
    assert optimizer.confidence() == pytest.approx(marginal[loss <= 0.025].sum(), abs=1e-12)
    certainty = optimizer.certainty()
    assert certainty.sphere_interval_d[0] <= certainty.sphere_interval_d[1]


def test_first_trials_spread_over_the_box_and_the_letter_range():
    optimizer = AcuityLawOptimizer(seed=0)
    trial = optimizer.ask()
    assert -4 <= trial.sphere_d <= 4 and -4 <= trial.cylinder_d <= 4
    assert -1 <= trial.letter_logmar <= 2
    # the first answer is most informative where a correct/incorrect split is near even
    info = optimizer.expected_information(trial.sphere_d, trial.cylinder_d, trial.letter_logmar)
    assert info > 0.5


def test_state_round_trip_keeps_settings_stop_and_next_trial():
    stop = StopRule(confidence=0.9, min_trials=4, max_trials=50)
    optimizer = told(n_alternatives=10, lapse=0.05, slopes_per_logmar=(3.0, 6.0), stop=stop)
    state = json.loads(json.dumps(optimizer.to_state()))
    again = AcuityLawOptimizer.from_state(state)
    assert again.settings == optimizer.settings
    assert again.stop == optimizer.stop
    assert again.ask() == optimizer.ask()
    assert again.best() == optimizer.best()


def test_finds_the_traced_patient_of_issue_14():
    """Seed 306, a patient who needs almost no correction, on whom the paper's UCB-ALD got lost."""
    patient = make_patient(306, slope=5.0, true_correction_d=(-0.12, -0.03))
    optimizer = AcuityLawOptimizer(seed=306)
    for _ in range(100):
        trial = optimizer.ask()
        optimizer.tell(trial, bool(patient.respond(trial.letter_logmar, trial.sphere_d, trial.cylinder_d)))
    error = patient.visual_acuity(*optimizer.best()) - patient.best_acuity_logmar
    assert error < 0.05


def test_learns_a_best_acuity_it_was_not_told():
    patient = draw_patients(1, 11, slope=5.0, va_best_logmar=0.4)[0]
    optimizer = AcuityLawOptimizer(seed=11)
    for _ in range(80):
        trial = optimizer.ask()
        optimizer.tell(trial, bool(patient.respond(trial.letter_logmar, trial.sphere_d, trial.cylinder_d)))
    va_marginal = optimizer.posterior().sum(axis=(0, 2))
    assert va_marginal @ optimizer.va_best_grid_logmar == pytest.approx(0.4, abs=0.1)
    assert patient.visual_acuity(*optimizer.best()) - patient.best_acuity_logmar < 0.05


@pytest.mark.parametrize(
    "settings, message",
    [
        ({"lapse": 0.6}, r"must be a rate in \(0, 0.5\)"),
        (
            {"lapse": 0.0},
            r"lapse \(--model-lapse, \[optimizer\] lapse\) must be a rate in \(0, 0.5\), e.g. 0.02 — above 0",
        ),
        ({"n_alternatives": 1}, "n_alternatives must be an integer >= 2"),
        ({"slopes_per_logmar": (2.0, -1.0)}, "slopes_per_logmar must be positive"),
        ({"slopes_per_logmar": "fast"}, "slopes_per_logmar must be positive"),
        ({"sphere_bounds_d": (2, 1)}, "sphere_bounds_d must be finite with low < high"),
        ({"rule": "ucb-ald"}, "rule must be 'acuity-law'"),
    ],
)
def test_bad_settings_are_refused_in_one_line(settings, message):
    with pytest.raises(ValueError, match=message) as error:
        AcuityLawOptimizer(**settings)
    assert "\n" not in str(error.value)


def test_the_gp_optimizer_asked_for_the_acuity_law_rule_names_the_optimizer_that_has_it():
    with pytest.raises(ValueError, match=r"use lensopt\.refraction\.AcuityLawOptimizer") as error:
        RefractionOptimizer(rule="acuity-law")
    assert "\n" not in str(error.value)


def test_a_state_of_another_optimizer_is_refused():
    with pytest.raises(ValueError, match="not a lensopt acuity-law state"):
        AcuityLawOptimizer.from_state({"format": "lensopt.refraction-state/1", "settings": {}, "history": []})


def test_draws_of_the_optimum_follow_the_correction_posterior_on_its_grid():
    optimizer = told()
    samples, quantization = optimizer.optimum_draws_d(40_000, np.random.default_rng(2))
    np.testing.assert_allclose(quantization, [0.1**2 / 12, 0.1**2 / 12])
    marginal = optimizer.correction_posterior()
    for k in np.argsort(-marginal.ravel())[:5]:  # the most probable corrections, by Monte Carlo
        i, j = np.unravel_index(k, marginal.shape)
        hits = np.mean(
            np.isclose(samples[:, 0], optimizer.sphere_grid_d[i])
            & np.isclose(samples[:, 1], optimizer.cylinder_grid_d[j])
        )
        p = marginal[i, j]
        assert abs(hits - p) < 4 * np.sqrt(p * (1 - p) / 40_000) + 1e-4


def test_the_interval_of_the_other_meridian_is_that_of_the_correction_posterior():
    # S + C of 100,000 draws of the correction from its grid posterior (Monte Carlo): its 2.5 % and
    # 97.5 % quantiles, within one grid step of the certainty's (computed from the grid's weights)
    optimizer = told()
    samples, _ = optimizer.optimum_draws_d(100_000, np.random.default_rng(4))
    expected = np.percentile(samples.sum(axis=1), [2.5, 97.5])
    interval = optimizer.certainty().meridian_interval_d
    np.testing.assert_allclose(interval, expected, atol=0.1 + 1e-9)
    # and of the spherical equivalent M = S + C/2 (on a grid of 0.05 D)
    equivalent = np.percentile(samples[:, 0] + 0.5 * samples[:, 1], [2.5, 97.5])
    np.testing.assert_allclose(optimizer.certainty().equivalent_interval_d, equivalent, atol=0.05 + 1e-9)
    assert interval[1] - interval[0] < 0.9 * (np.ptp(optimizer.sphere_grid_d) + np.ptp(optimizer.cylinder_grid_d))


@pytest.mark.parametrize("optimizer_class", [AcuityLawOptimizer, RefractionOptimizer])
def test_predicted_acuity_of_a_lens_given_as_numbers_is_numbers_and_of_arrays_arrays(optimizer_class):
    optimizer, patient = optimizer_class(seed=3), make_patient(3)
    for _ in range(15):
        trial = optimizer.ask()
        optimizer.tell(trial, patient.respond(trial.letter_logmar, trial.sphere_d, trial.cylinder_d))
    mean, sd = optimizer.predicted_acuity_logmar(-1.0, -0.5)
    assert isinstance(mean, float) and isinstance(sd, float) and np.isfinite([mean, sd]).all()
    json.dumps([mean, sd])  # a number a script can write as it is
    means, sds = optimizer.predicted_acuity_logmar(np.array([[-1.0, 0.0]]), np.array([-0.5]))
    assert means.shape == sds.shape == (1, 2)
    assert (means[0, 0], sds[0, 0]) == pytest.approx((mean, sd), rel=1e-9)


def test_the_psychometric_bands_tails_each_hold_about_two_and_a_half_percent_of_the_posterior():
    """The band the dashboard draws (its 95 %), against Monte Carlo: 40,000 hypotheses drawn from the
    whole grid posterior, each one's P(correct) written out (:func:`p_correct`); between the floor
    and the ceiling, about 2.5 % fall below the band and 2.5 % above it (its quantiles come from
    the 1,000 scoring draws). Only the band's mean was checked: a 5 % lower bound passed."""
    optimizer, patient = AcuityLawOptimizer(seed=3), make_patient(3)
    for _ in range(30):
        trial = optimizer.ask()
        optimizer.tell(trial, patient.respond(trial.letter_logmar, trial.sphere_d, trial.cylinder_d))
    sphere_d, cylinder_d = optimizer.best()
    letters = np.linspace(-0.1, 0.85, 20)  # where neither bound sits on the floor (γ) or the ceiling (1 − λ)
    mean, low, high = optimizer.psychometric_band(letters, sphere_d, cylinder_d)
    posterior = optimizer.posterior()
    drawn = np.random.default_rng(7).choice(posterior.size, size=40_000, p=posterior.ravel() / posterior.sum())
    i, j, k = np.unravel_index(drawn, posterior.shape)
    corrections, va_best, slope = optimizer._corrections[i], optimizer.va_best_grid_logmar[j], optimizer._slopes[k]
    for n, letter in enumerate(letters):
        shown = Trial(sphere_d=float(sphere_d), cylinder_d=float(cylinder_d), letter_logmar=float(letter))
        p = p_correct(shown, corrections[:, 0], corrections[:, 1], va_best, slope)
        assert p.mean() == pytest.approx(mean[n], abs=0.01)
        assert np.mean(p < low[n] - 1e-12) == pytest.approx(0.025, abs=0.012)
        assert np.mean(p > high[n] + 1e-12) == pytest.approx(0.025, abs=0.012)
