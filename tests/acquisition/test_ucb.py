import numpy as np
import pytest
from scipy.stats import norm

from lensopt.acquisition import DEFAULT_PROBIT_BETA, LatentUCB, ProbitUCB
from tests.acquisition.conftest import finite_difference_gradient


def test_default_beta_is_the_papers_95th_percentile():
    assert DEFAULT_PROBIT_BETA == pytest.approx(1.6448536269514722)


def test_probit_ucb_equals_monte_carlo_mean_plus_beta_sd(fitted_model):
    X = np.array([[0.5, 0.0, 0.0], [1.5, 1.0, -1.0], [-0.5, 0.3, 0.2]])
    mu, var = fitted_model.predict_latent(X)
    f = mu + np.sqrt(var) * np.random.default_rng(0).standard_normal((400_000, 3))
    p = norm.cdf(f)
    expected = p.mean(0) + 1.3 * p.std(0)
    np.testing.assert_allclose(ProbitUCB(fitted_model, beta=1.3)(X), expected, atol=3e-3)


def test_probit_ucb_gradient_matches_finite_differences(fitted_model):
    X = np.random.default_rng(1).uniform([-1, -2, -2], [2, 2, 2], (6, 3))
    value, gradient = ProbitUCB(fitted_model).value_and_gradient(X)
    np.testing.assert_allclose(value, ProbitUCB(fitted_model)(X))
    np.testing.assert_allclose(gradient, finite_difference_gradient(ProbitUCB(fitted_model), X), rtol=1e-4, atol=1e-6)


def test_latent_ucb_is_mean_plus_beta_sd_with_matching_gradient(fitted_model):
    X = np.random.default_rng(2).uniform([-1, -2, -2], [2, 2, 2], (5, 3))
    mu, var = fitted_model.predict_latent(X)
    acq = LatentUCB(fitted_model, beta=2.0)
    np.testing.assert_allclose(acq(X), mu + 2.0 * np.sqrt(var))
    np.testing.assert_allclose(acq.value_and_gradient(X)[1], finite_difference_gradient(acq, X), rtol=1e-4, atol=1e-6)
