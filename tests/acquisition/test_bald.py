import numpy as np
from scipy.stats import norm

from lensopt.acquisition import BALD
from lensopt.binary.settings import KernelSpec
from lensopt.gp import GPClassifier
from lensopt.optimize import MaximizerSettings, maximize_acquisition
from tests.acquisition.conftest import finite_difference_gradient


def test_bald_gradient_matches_finite_differences(fitted_model):
    X = np.random.default_rng(3).uniform([-1, -2, -2], [2, 2, 2], (6, 3))
    value, gradient = BALD(fitted_model).value_and_gradient(X)
    np.testing.assert_allclose(value, BALD(fitted_model)(X))
    np.testing.assert_allclose(gradient, finite_difference_gradient(BALD(fitted_model), X), rtol=1e-4, atol=1e-6)


def _binary_entropy_bits(p):
    p = np.clip(p, 1e-15, 1 - 1e-15)
    return -(p * np.log2(p) + (1 - p) * np.log2(1 - p))


def test_bald_picks_a_letter_size_near_a_known_threshold():
    """Answers at one lens from a psychometric function with threshold 0.4 logMAR and slope 4.

    BALD's letter size (approximation of Houlsby et al., optimized by L-BFGS) must match the
    argmax of the exact mutual information computed by Monte Carlo on the same posterior, and lie
    within the design band of the psychometric function (±1.5/slope around the threshold: the
    informative sizes for both threshold and slope, Fisher-optimal points sitting at ±0.93/slope).
    """
    rng = np.random.default_rng(4)
    threshold, slope = 0.4, 4.0
    s = rng.uniform(-1, 2, 150)
    y = (rng.uniform(size=s.size) < norm.cdf(slope * (s - threshold))).astype(int)
    X = np.column_stack([s, np.zeros_like(s), np.zeros_like(s)])
    kernel = KernelSpec(structure="psychophysics", lengthscales=(1.0, 1.0), variance=16.0, context_variance=16.0).build(
        1, 2
    )
    model = GPClassifier(kernel).fit(X, y)
    point, _ = maximize_acquisition(
        BALD(model),
        [(-1, 2), (-4, 4), (-4, 4)],
        np.random.default_rng(0),
        fixed_features={1: 0.0, 2: 0.0},
        settings=MaximizerSettings(n_candidates=64),
    )

    grid = np.linspace(-1, 2, 601)
    mean, var = model.predict_latent(np.column_stack([grid, np.zeros_like(grid), np.zeros_like(grid)]))
    f = mean + np.sqrt(var) * np.random.default_rng(5).standard_normal((20_000, 1))
    p = norm.cdf(f)
    mutual_information = _binary_entropy_bits(p.mean(0)) - _binary_entropy_bits(p).mean(0)
    assert abs(point[0] - grid[np.argmax(mutual_information)]) < 0.06
    assert abs(point[0] - threshold) < 1.5 / slope
