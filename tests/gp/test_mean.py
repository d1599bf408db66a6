"""Prior mean functions: the bowl's and the acuity law's value and gradient by hand, by the simulated
patient and by finite differences; the GP with a
bowl mean against an independent Laplace mode (scipy) and EP's two schedules against each other."""

import math

import numpy as np
import pytest
from scipy.optimize import minimize
from scipy.stats import norm

from lensopt.acquisition.thompson import ThompsonSample
from lensopt.gp import GPClassifier, psychophysics_kernel
from lensopt.gp.ep import ep_posterior, parallel_ep_posterior
from lensopt.gp.mean import AcuityLawMean, BowlMean, check_prior_mean
from lensopt.observer import SimulatedPatient

BOWL = BowlMean(offset=0.5, depth=5.0, centre=(-1.0, 0.2, -0.1), dims=(1, 2, 3))


def _data(n=12, seed=3):
    rng = np.random.default_rng(seed)
    X = np.column_stack([rng.uniform(-0.5, 1.0, n), rng.uniform(-2, 1, n), rng.uniform(-1, 1, (n, 2))])
    y = (rng.uniform(size=n) < 0.6).astype(float)
    return X, y


def test_bowl_value_is_the_acuity_law_around_its_centre():
    X = np.array([[0.3, -1.0, 0.2, -0.1], [0.0, 0.0, 0.2, -0.1], [1.0, -1.0, 1.2, 0.9]])
    expected = [0.5, 0.5 - 5.0 * math.log10(2.0), 0.5 - 5.0 * math.log10(3.0)]
    np.testing.assert_allclose(BOWL(X), expected, rtol=1e-12)


def _gradient_by_finite_differences(mean, X, h=1e-6):
    """``∂m/∂X`` ``(n, d)`` by central differences, a column at a time."""
    columns = []
    for j in range(X.shape[1]):
        step = np.zeros(X.shape[1])
        step[j] = h
        columns.append((mean(X + step) - mean(X - step)) / (2 * h))
    return np.column_stack(columns)


def test_bowl_gradient_matches_finite_differences():
    X, _ = _data()
    grad = BOWL.gradient(X)
    np.testing.assert_allclose(grad, _gradient_by_finite_differences(BOWL, X), atol=1e-7)
    assert np.all(grad[:, 0] == 0.0)  # the letter-size column is not in the bowl


@pytest.mark.parametrize("bad", [dict(depth=-1.0), dict(offset=math.nan), dict(centre=(0.0, 1.0))])
def test_bowl_refuses_bad_values(bad):
    fields = dict(offset=0.0, depth=1.0, centre=(0.0, 0.0, 0.0), dims=(1, 2, 3)) | bad
    with pytest.raises(ValueError, match="BowlMean"):
        BowlMean(**fields)


def test_check_prior_mean_refuses_text():
    with pytest.raises(ValueError, match="prior_mean"):
        check_prior_mean("-3")


def test_laplace_mode_with_a_bowl_mean_matches_a_direct_maximization():
    """The Laplace mode of f − m solves max −½ hᵀK⁻¹h + Σ log Φ((2y − 1)(m + h)); computed here by
    scipy from scratch and compared with the classifier's latent at the training inputs."""
    X, y = _data()
    kernel = psychophysics_kernel(2.0, 1.3, 1.5)
    gp = GPClassifier(kernel, inference="laplace", prior_mean=BOWL).fit(X, y)
    K = kernel(X) + gp.jitter * np.eye(len(y))
    m, sign = BOWL(X), 2 * y - 1
    K_inv = np.linalg.inv(K)

    def negative(h):
        return 0.5 * h @ K_inv @ h - np.sum(norm.logcdf(sign * (m + h)))

    def gradient(h):
        z = sign * (m + h)
        return K_inv @ h - sign * np.exp(norm.logpdf(z) - norm.logcdf(z))

    mode = minimize(negative, np.zeros(len(y)), jac=gradient, method="BFGS", options={"gtol": 1e-10}).x
    mean, _ = gp.predict_latent(X)
    np.testing.assert_allclose(mean, m + mode, atol=2e-5)


def test_a_bowl_mean_is_a_shift_of_the_prediction_away_from_the_data():
    """Far from every training input the posterior mean returns to the prior mean m(x)."""
    X, y = _data()
    gp = GPClassifier(psychophysics_kernel(0.01, 0.3, 1.0), inference="ep", prior_mean=BOWL).fit(X, y)
    far = np.array([[0.0, 30.0, 0.0, 0.0], [0.0, -30.0, 5.0, 5.0]])
    mean, _ = gp.predict_latent(far)
    np.testing.assert_allclose(mean, BOWL(far), atol=1e-3)


def test_sequential_and_parallel_ep_agree_with_a_per_row_prior_mean():
    X, y = _data(n=10)
    kernel = psychophysics_kernel(2.0, 1.3, 1.5)
    K = kernel(X) + 1e-6 * np.eye(len(y))
    floor = dict(guess_rate=1 / 26, lapse_rate=0.02, prior_mean=BOWL(X))
    sequential = ep_posterior(K, y, tolerance=1e-10, **floor)
    parallel = parallel_ep_posterior(K, y, tolerance=1e-10, **floor)
    np.testing.assert_allclose(sequential.mean, parallel.mean, atol=1e-6)
    np.testing.assert_allclose(sequential.log_marginal_likelihood, parallel.log_marginal_likelihood, atol=1e-6)


def test_latent_gradient_with_a_bowl_mean_matches_finite_differences():
    X, y = _data()
    gp = GPClassifier(psychophysics_kernel(2.0, 1.3, 1.5), inference="ep", prior_mean=BOWL).fit(X, y)
    points = np.array([[0.2, -0.7, 0.1, 0.3], [0.8, -1.6, -0.4, 0.0]])
    mean, _var, dmean, dvar = gp.predict_latent_with_gradient(points)
    h = 1e-6
    for j in range(points.shape[1]):
        step = np.zeros(points.shape[1])
        step[j] = h
        up, down = gp.predict_latent(points + step), gp.predict_latent(points - step)
        np.testing.assert_allclose(dmean[:, j], (up[0] - down[0]) / (2 * h), atol=1e-5)
        np.testing.assert_allclose(dvar[:, j], (up[1] - down[1]) / (2 * h), atol=1e-5)
    np.testing.assert_allclose(mean, gp.predict_latent(points)[0])


def test_thompson_draws_average_to_the_posterior_mean_with_a_bowl_mean():
    X, y = _data(n=8)
    gp = GPClassifier(psychophysics_kernel(2.0, 1.3, 1.5), inference="ep", prior_mean=BOWL).fit(X, y)
    points = np.array([[0.2, -0.7, 0.1, 0.3], [0.5, 0.5, -0.5, 0.5]])
    rng = np.random.default_rng(0)
    draws = np.array([ThompsonSample(gp, rng, n_features=256)(points) for _ in range(600)])
    mean, var = gp.predict_latent(points)
    standard_error = np.sqrt(var / len(draws))
    assert np.all(np.abs(draws.mean(axis=0) - mean) < 5 * standard_error + 0.05)


ACUITY = AcuityLawMean(offset=0.5, depth=5.0, centre=(-1.0, 0.2, -0.1), dims=(1, 2, 3), slope=12.0, va_logmar=0.1)


def test_acuity_law_mean_is_the_bowl_plus_the_letter_size_term_by_hand():
    X = np.array([[0.3, -1.0, 0.2, -0.1], [0.0, 0.0, 0.2, -0.1], [1.0, -1.0, 1.2, 0.9]])
    expected = [
        12.0 * (0.3 - 0.1) + 0.5,
        12.0 * (0.0 - 0.1) + 0.5 - 5.0 * math.log10(2.0),
        12.0 * (1.0 - 0.1) + 0.5 - 5.0 * math.log10(3.0),
    ]
    np.testing.assert_allclose(ACUITY(X), expected, rtol=1e-12)


def test_acuity_law_mean_reads_the_letter_size_from_its_context_column():
    """The letter size in the last column and the lens in the first three: the same values as
    with the columns in the default order."""
    moved = AcuityLawMean(0.5, 5.0, (-1.0, 0.2, -0.1), (0, 1, 2), slope=12.0, va_logmar=0.1, context_dim=3)
    X, _ = _data()
    np.testing.assert_allclose(moved(np.roll(X, -1, axis=1)), ACUITY(X), rtol=1e-12)
    np.testing.assert_allclose(moved.gradient(np.roll(X, -1, axis=1)), np.roll(ACUITY.gradient(X), -1, axis=1))


def test_acuity_law_mean_is_the_letter_latent_of_a_patient_corrected_by_its_centre():
    """``a (s − VA(lens))`` of a simulated patient (its own blur and acuity law) on power-vector
    columns, the centre the patient's correction, written by hand as ``M = S + C/2``,
    ``J0 = −C/2 cos 2α``, ``J45 = −C/2 sin 2α``."""

    def power_vector(sphere, cylinder, axis_deg):
        angle = math.radians(2.0 * axis_deg)
        return sphere + cylinder / 2, -cylinder / 2 * math.cos(angle), -cylinder / 2 * math.sin(angle)

    patient = SimulatedPatient(-1.5, -0.75, slope=12.0, va_best_logmar=0.05, axis_deg=30.0)
    mean = AcuityLawMean(0.0, 12.0, power_vector(-1.5, -0.75, 30.0), (1, 2, 3), slope=12.0, va_logmar=0.05)
    lenses = [(-1.5, -0.75, 30.0), (-1.0, -0.75, 30.0), (-2.25, -1.5, 100.0), (0.0, 0.0, 0.0), (-1.75, -0.25, 170.0)]
    sizes = [0.0, 0.3, -0.1, 1.0, 0.5]
    X = np.array([[s, *power_vector(*lens)] for s, lens in zip(sizes, lenses)])
    expected = [12.0 * (s - patient.visual_acuity(*lens)) for s, lens in zip(sizes, lenses)]
    np.testing.assert_allclose(mean(X), expected, rtol=1e-10, atol=1e-10)


def test_acuity_law_mean_gradient_matches_finite_differences():
    X, _ = _data()
    grad = ACUITY.gradient(X)
    assert grad.shape == X.shape
    np.testing.assert_allclose(grad, _gradient_by_finite_differences(ACUITY, X), atol=1e-7)
    np.testing.assert_allclose(grad[:, 0], 12.0)  # the letter-size column: the slope alone


def test_acuity_law_mean_is_frozen():
    with pytest.raises(AttributeError, match="cannot assign to field 'slope'"):
        ACUITY.slope = 5.0  # type: ignore[misc]


@pytest.mark.parametrize(
    "bad, message",
    [
        (dict(slope=0.0), "slope must be > 0"),
        (dict(slope=-14.0), "slope must be > 0"),
        (dict(slope=math.nan), "slope must be a finite number"),
        (dict(slope=math.inf), "slope must be a finite number"),
        (dict(va_logmar=math.nan), "va_logmar must be a finite number"),
        (dict(va_logmar=-math.inf), "va_logmar must be a finite number"),
        (dict(context_dim=2), "context_dim must not be one of the lens columns"),
        (dict(depth=-1.0), "depth must be >= 0"),
        (dict(offset=math.inf), "offset must be a finite number"),
    ],
)
def test_acuity_law_mean_refuses_bad_values_with_a_clear_message(bad, message):
    fields = dict(offset=0.0, depth=14.0, centre=(0.0, 0.0, 0.0), dims=(1, 2, 3)) | bad
    with pytest.raises(ValueError, match=message):
        AcuityLawMean(**fields)
