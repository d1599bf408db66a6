"""The acuity-law optimizer's prior over accommodation (``accommodation_d``): its blur law against
the simulated eye's optics, its posterior and information against direct Bayes and Monte Carlo,
its settings and saved state, and that an accommodating eye's session ends at the most-plus lens
instead of too minus."""

import json
from dataclasses import replace

import numpy as np
import pytest
from scipy.stats import norm

from lensopt.observer import accommodated_blur_d, draw_patients
from lensopt.refraction.acuity_law import AcuityLawOptimizer
from lensopt.refraction.acuity_law_settings import AcuityLawSettings, accommodation_phrase, modelled_accommodation_d
from lensopt.refraction.blur_law import accommodated_acuity_loss_logmar, blur_acuity_loss_logmar
from lensopt.refraction.trial import Trial

AMPLITUDES_D = (0.0, 1.0, 4.0)

ANSWERS = [
    (Trial(sphere_d=1.0, cylinder_d=-2.0, letter_logmar=0.3), True),
    (Trial(sphere_d=-3.0, cylinder_d=0.5, letter_logmar=0.1), True),  # far too minus, read: accommodation
    (Trial(sphere_d=0.05, cylinder_d=0.0, letter_logmar=-0.1), True),
    (Trial(sphere_d=1.5, cylinder_d=-0.5, letter_logmar=0.3), False),
    (Trial(sphere_d=-1.5, cylinder_d=1.0, letter_logmar=0.2), True),
]


def loss_by_the_eyes_optics(r_s, r_c, amplitude_d):
    """``log10(1 + b²)`` with ``b`` from the simulated patient's power-vector optics."""
    r_s, r_c = np.asarray(r_s, float), np.asarray(r_c, float)
    b = accommodated_blur_d(r_s + 0.5 * r_c, 0.5 * np.abs(r_c), 0.0, amplitude_d)
    return np.log10(1.0 + np.square(b))


def p_correct(trial, sphere_d, cylinder_d, va_best, slope, amplitude_d, n_alternatives=26, lapse=0.02):
    """P(correct), written out from the eye's optics: γ + (1 − γ − λ) Φ(a (s − VA₀ − loss))."""
    loss = loss_by_the_eyes_optics(trial.sphere_d - sphere_d, trial.cylinder_d - cylinder_d, amplitude_d)
    guess = 1.0 / n_alternatives
    return guess + (1.0 - guess - lapse) * norm.cdf(slope * (trial.letter_logmar - va_best - loss))


def told(answers=ANSWERS, **settings):
    optimizer = AcuityLawOptimizer(seed=3, accommodation_d=AMPLITUDES_D, **settings)
    for trial, correct in answers:
        optimizer.tell(trial, correct)
    return optimizer


def shape_of(optimizer, k):
    """``(slope, amplitude)`` of index ``k`` of the posterior's last axis, accommodation-major."""
    slopes = optimizer.settings.slopes_per_logmar
    return slopes[k % len(slopes)], optimizer.settings.accommodation_d[k // len(slopes)]


@pytest.mark.parametrize("amplitude_d", [0.0, 0.5, 2.0, 8.0])
def test_the_accommodated_loss_is_the_simulated_eyes_optics(amplitude_d):
    rng = np.random.default_rng(4)
    r_s, r_c = rng.uniform(-6, 6, 2000), rng.uniform(-4, 4, 2000)
    np.testing.assert_allclose(
        accommodated_acuity_loss_logmar(r_s, r_c, amplitude_d),
        loss_by_the_eyes_optics(r_s, r_c, amplitude_d),
        atol=1e-12,
    )


def test_without_accommodation_the_loss_is_the_law_and_a_lens_too_minus_within_the_amplitude_costs_nothing():
    r_s, r_c = np.linspace(-5, 5, 41), np.linspace(-3, 3, 41)
    np.testing.assert_allclose(accommodated_acuity_loss_logmar(r_s, r_c, 0.0), blur_acuity_loss_logmar(r_s, r_c))
    # by hand: 1.5 D too minus (spherical equivalent), 2 D of accommodation, no cylinder: no loss;
    # 3 D too minus: 1 D left, log10(2); 0.5 D too plus: accommodation cannot help, log10(1.25)
    assert accommodated_acuity_loss_logmar(-1.5, 0.0, 2.0) == 0.0
    assert accommodated_acuity_loss_logmar(-3.0, 0.0, 2.0) == pytest.approx(np.log10(2.0))
    assert accommodated_acuity_loss_logmar(0.5, 0.0, 2.0) == pytest.approx(np.log10(1.25))


def test_the_posterior_over_accommodation_is_the_product_of_the_answers_likelihoods():
    optimizer = told()
    posterior = optimizer.posterior()
    assert posterior.shape[2] == len(AMPLITUDES_D) * len(optimizer.settings.slopes_per_logmar)
    rng = np.random.default_rng(0)
    picks = [tuple(rng.integers(n) for n in posterior.shape) for _ in range(300)]
    log_direct = []
    for i, j, k in picks:
        (S, C), va_best = optimizer._corrections[i], optimizer.va_best_grid_logmar[j]
        slope, amplitude = shape_of(optimizer, k)
        ps = [(p_correct(t, S, C, va_best, slope, amplitude), c) for t, c in ANSWERS]
        log_direct.append(sum(np.log(p if c else 1.0 - p) for p, c in ps))
    offsets = np.array([np.log(posterior[p]) for p in picks]) - np.array(log_direct)
    np.testing.assert_allclose(offsets, offsets[0], atol=1e-4)  # up to the normalizing constant


def test_an_answer_far_too_minus_read_right_moves_the_posterior_to_accommodating_eyes():
    optimizer = told(answers=ANSWERS[:2])
    by_amplitude = optimizer.posterior().sum(axis=(0, 1)).reshape(len(AMPLITUDES_D), -1).sum(axis=1)
    assert by_amplitude[0] < by_amplitude[1] < by_amplitude[2]


def h2(q):
    return -(q * np.log2(q) + (1 - q) * np.log2(1 - q))


def test_information_of_the_binned_draws_is_that_of_the_draws_under_the_eyes_optics():
    """The trial's score: the mutual information over the posterior's scoring draws (each its own
    correction, best acuity, slope and amplitude), binned by acuity — against the same draws' exact
    information, each draw's P(correct) from the eye's optics."""
    optimizer = told()
    lenses = np.array([[0.0, 0.0], [-2.5, 0.5], [1.5, -1.0]])
    table = optimizer.information_table(lenses)
    corrections, va_best, shape, weights = optimizer._scoring_hypotheses()
    assert len(np.unique(shape // 3)) == len(AMPLITUDES_D)  # draws of every amplitude
    slope, amplitude = (np.array(v) for v in zip(*(shape_of(optimizer, k) for k in shape)))
    for i, (S, C) in enumerate(lenses):
        loss = np.array([loss_by_the_eyes_optics(S - c[0], C - c[1], a) for c, a in zip(corrections, amplitude)])
        for j in (40, 60, 80, 100):
            p = 1 / 26 + (1 - 1 / 26 - 0.02) * norm.cdf(slope * (optimizer.letter_grid_logmar[j] - va_best - loss))
            assert table[i, j] == pytest.approx(h2(p @ weights) - h2(p) @ weights, abs=2e-3)


def test_exact_information_over_accommodation_matches_monte_carlo():
    optimizer = told()
    trial = Trial(sphere_d=-2.5, cylinder_d=0.5, letter_logmar=0.2)
    w = optimizer.posterior()
    rng = np.random.default_rng(1)
    i, j, k = np.unravel_index(rng.choice(w.size, size=200_000, p=w.ravel()), w.shape)
    slopes = np.array(optimizer.settings.slopes_per_logmar)
    n = len(slopes)
    amplitudes = np.array(optimizer.settings.accommodation_d)[k // n]
    corrections = optimizer._corrections[i]
    loss = np.empty(len(i))
    for amplitude in np.unique(amplitudes):  # the eye's optics, one amplitude at a time
        here = amplitudes == amplitude
        loss[here] = loss_by_the_eyes_optics(
            trial.sphere_d - corrections[here, 0], trial.cylinder_d - corrections[here, 1], amplitude
        )
    z = slopes[k % n] * (trial.letter_logmar - optimizer.va_best_grid_logmar[j] - loss)
    p = 1 / 26 + (1 - 1 / 26 - 0.02) * norm.cdf(z)
    answers = rng.random(p.size) < p
    monte_carlo = h2(answers.mean()) - h2(p).mean()  # I = H(answer) − E[H(answer | h)]
    exact = optimizer.expected_information(trial.sphere_d, trial.cylinder_d, trial.letter_logmar)
    assert exact == pytest.approx(monte_carlo, abs=0.005)


def test_one_amplitude_of_zero_is_the_law_itself_and_is_stored_as_said():
    default, zero = AcuityLawOptimizer(seed=3), AcuityLawOptimizer(seed=3, accommodation_d=[0])
    for trial, correct in ANSWERS:
        default.tell(trial, correct)
        zero.tell(trial, correct)
    assert np.array_equal(default.posterior(), zero.posterior())
    assert default.ask() == zero.ask()
    assert "accommodation_d" not in default.to_state()["settings"]  # not said: as a state saved before the setting
    # said (an eye that does not accommodate): kept, so the front ends need not warn that it might
    state = json.loads(json.dumps(zero.to_state()))
    assert state["settings"]["accommodation_d"] == [0.0]
    again = AcuityLawOptimizer.from_state(state)
    assert again.settings.accommodation_d == (0.0,) and again.settings.amplitudes_d == (0.0,)
    assert AcuityLawOptimizer.from_state(default.to_state()).settings.accommodation_d is None
    assert np.array_equal(again.posterior(), zero.posterior()) and again.ask() == zero.ask()


def test_the_amplitudes_survive_the_saved_state_and_the_next_trial_is_the_same():
    optimizer = told(lens_step_d=0.25)
    state = json.loads(json.dumps(optimizer.to_state()))
    assert state["settings"]["accommodation_d"] == list(AMPLITUDES_D)
    again = AcuityLawOptimizer.from_state(state)
    assert again.settings.accommodation_d == AMPLITUDES_D
    assert again.ask() == optimizer.ask() and again.best() == optimizer.best()


@pytest.mark.parametrize("value", [[], [-1.0], [0.0, 25.0], True, [float("nan")], "4", [0, True]])
def test_bad_amplitudes_are_refused_in_one_line_naming_the_setting(value):
    with pytest.raises(
        ValueError, match=r"^accommodation_d must be amplitudes of accommodation from 0 to 20 D"
    ) as refused:
        AcuityLawSettings(accommodation_d=value)
    assert "\n" not in str(refused.value)


def test_amplitudes_are_kept_distinct_and_ascending():
    assert AcuityLawSettings(accommodation_d=[4, 0, 1, 4]).accommodation_d == (0.0, 1.0, 4.0)
    assert AcuityLawSettings(accommodation_d=2).accommodation_d == (2.0,)


def session_m_error_d(seed, accommodation_d, model_accommodation_d, n_trials=60):
    """Reported minus true spherical equivalent (D) of a session with an accommodating patient."""
    patient = replace(draw_patients(1, seed, slope=5.0)[0], accommodation_d=accommodation_d)
    optimizer = AcuityLawOptimizer(seed=seed, accommodation_d=model_accommodation_d)
    for _ in range(n_trials):
        trial = optimizer.ask()
        optimizer.tell(trial, bool(patient.respond(trial.letter_logmar, trial.sphere_d, trial.cylinder_d)))
    sphere_d, cylinder_d = optimizer.best()
    true_sphere_d, true_cylinder_d = patient.true_correction_d
    return (sphere_d + cylinder_d / 2) - (true_sphere_d + true_cylinder_d / 2)


def test_an_accommodating_eye_ends_at_the_most_plus_lens_with_the_prior_and_too_minus_without():
    """Tuning patient 506 (4 D of accommodation): the law alone reads its plateau of clear minus
    lenses as a correction more minus; with amplitudes up to 8 D its session ends at the most-plus
    lens of best acuity, the correction."""
    assert session_m_error_d(506, 4.0, (0.0,)) < -0.75
    assert abs(session_m_error_d(506, 4.0, (0.0, 1.0, 4.0, 8.0))) < 0.25


def test_the_predicted_acuity_through_lenses_is_the_accommodating_eyes():
    """The acuity the record and the check compare with (what the patient will read): over the
    scoring draws, each through its own amplitude — a lens too minus reads better than the law
    alone says."""
    optimizer = told()
    corrections, va_best, shape, weights = optimizer._scoring_hypotheses()
    slope, amplitude = (np.array(v) for v in zip(*(shape_of(optimizer, k) for k in shape)))
    spheres, cylinders = np.array([[0.0, -2.5], [1.0, -4.0]]), np.array([[0.0, 0.5], [-1.0, 0.0]])
    mean, sd = optimizer.predicted_acuity_logmar(spheres, cylinders)
    assert mean.shape == sd.shape == (2, 2)
    for index in np.ndindex(2, 2):
        S, C = spheres[index], cylinders[index]
        va = va_best + np.array(
            [loss_by_the_eyes_optics(S - c[0], C - c[1], a) for c, a in zip(corrections, amplitude)]
        )
        assert mean[index] == pytest.approx(va @ weights, abs=1e-9)
        assert sd[index] == pytest.approx(np.sqrt(np.square(va - va @ weights) @ weights), abs=1e-9)
    letters = np.array([0.0, 0.3])
    band_mean, _, _ = optimizer.psychometric_band(letters, -2.5, 0.5)
    va = va_best + np.array(
        [loss_by_the_eyes_optics(-2.5 - c[0], 0.5 - c[1], a) for c, a in zip(corrections, amplitude)]
    )
    p = 1 / 26 + (1 - 1 / 26 - 0.02) * norm.cdf(slope[None, :] * (letters[:, None] - va[None, :]))
    np.testing.assert_allclose(band_mean, p @ weights, atol=1e-9)


@pytest.mark.parametrize(
    ("settings", "expected"),
    [
        ({"rule": "acuity-law", "accommodation_d": [8, 0, 0.5]}, (0.0, 0.5, 8.0)),
        ({"rule": "acuity-law", "accommodation_d": [0.0]}, None),  # the law alone
        ({"rule": "acuity-law"}, None),  # saved before the setting
        ({"rule": "ucb-ald", "beta": 2.0}, None),  # a GP rule has none
        ({"rule": "acuity-law", "accommodation_d": [-3]}, None),  # no session could have run with it
        (None, None),
    ],
)
def test_the_modelled_amplitudes_are_read_from_stored_settings(settings, expected):
    assert modelled_accommodation_d(settings) == expected


def test_the_phrase_names_the_largest_amplitude_then_each():
    assert accommodation_phrase((0.0, 0.5, 8.0)) == "accommodation up to 8 D (0, 0.5, 8 D)"
