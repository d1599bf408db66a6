"""Posterior utility draws for Thompson sampling, checked against the GP's own moments."""

import numpy as np
import pytest

from lensopt.gp.kernels import SquaredExponential
from lensopt.gp.mean import BowlMean
from lensopt.preference import PreferenceGP, sample_utility
from tests.preference.conftest import finite_difference, simulated_duels, swap_members


@pytest.fixture(scope="module")
def model():
    Z, y = simulated_duels(25, n_system=1, seed=4)
    return PreferenceGP(SquaredExponential([0.25], variance=2.0)).fit(Z, y)


def test_draws_have_the_posterior_mean_and_variance_of_the_utility_differences(model):
    # utility itself is only known up to a constant; its differences are what the model pins down
    X = np.array([[0.1], [0.3], [0.55], [0.9]])
    anchor = np.array([[0.5]])
    Z = np.hstack([X, np.broadcast_to(anchor, X.shape)])
    mean, var = model.predict_duel(Z)
    draws = np.array([sample_utility(model, np.random.default_rng(i), n_features=1024).duel(Z) for i in range(1500)])
    standard_error = np.sqrt(var / len(draws))
    assert np.all(np.abs(draws.mean(axis=0) - mean) < 5 * standard_error + 0.02)
    np.testing.assert_allclose(draws.var(axis=0), var, rtol=0.15, atol=0.01)


def test_draws_under_a_prior_mean_have_the_posterior_mean_and_variance_of_the_utility():
    """With a bowl as the utility's prior mean, the draws carry it: their mean and variance at each
    point are the posterior's (Monte Carlo over 1,500 draws), and a draw's gradient includes it."""
    Z, y = simulated_duels(25, n_system=1, seed=4)
    bowl = BowlMean(0.0, 6.0, (0.7,), (0,))
    model = PreferenceGP(SquaredExponential([0.25], variance=2.0), utility_mean=bowl).fit(Z, y)
    X = np.array([[0.1], [0.3], [0.55], [0.9]])
    mean, var = model.predict_utility(X)
    assert np.ptp(bowl(X)) > 0.7  # the prior mean matters at these points
    draws = np.array([sample_utility(model, np.random.default_rng(i), n_features=1024)(X) for i in range(1500)])
    assert np.all(np.abs(draws.mean(axis=0) - mean) < 5 * np.sqrt(var / len(draws)) + 0.02)
    np.testing.assert_allclose(draws.var(axis=0), var, rtol=0.15, atol=0.01)
    sample = sample_utility(model, np.random.default_rng(3))
    np.testing.assert_allclose(sample.gradient(X), finite_difference(sample, X), rtol=1e-5, atol=1e-6)


def test_a_drawn_duel_value_is_antisymmetric(model):
    Z, _ = simulated_duels(10, n_system=1, seed=9)
    sample = sample_utility(model, np.random.default_rng(0))
    np.testing.assert_allclose(sample.duel(swap_members(Z, 0)), -sample.duel(Z), atol=1e-12)
    np.testing.assert_allclose(sample.duel(np.hstack([Z[:, :1], Z[:, :1]])), 0.0, atol=1e-12)


def test_the_same_generator_draws_the_same_function(model):
    X = np.linspace(0, 1, 7)[:, None]
    a = sample_utility(model, np.random.default_rng(5))(X)
    b = sample_utility(model, np.random.default_rng(5))(X)
    np.testing.assert_array_equal(a, b)


def test_draw_gradients_match_finite_differences(model):
    sample = sample_utility(model, np.random.default_rng(2))
    X = np.array([[0.12], [0.47], [0.8]])
    np.testing.assert_allclose(sample.gradient(X), finite_difference(sample, X), rtol=1e-5, atol=1e-6)


def test_a_contextual_draw_scales_with_the_context():
    # with the kernel s s' k(x, x') every utility is s · h(x): doubling s doubles the draw
    from lensopt.preference import default_kernel

    Z, y = simulated_duels(20, n_system=1, n_context=1, seed=1)
    model = PreferenceGP(default_kernel([(0.0, 1.0)], n_context=1), n_context=1).fit(Z, y)
    sample = sample_utility(model, np.random.default_rng(3))
    x = np.linspace(0, 1, 5)[:, None]
    low, high = np.hstack([np.full_like(x, 0.4), x]), np.hstack([np.full_like(x, 0.8), x])
    np.testing.assert_allclose(sample(high), 2 * sample(low), rtol=1e-9, atol=1e-12)


def test_sampling_an_unfitted_model_is_refused():
    with pytest.raises(ValueError, match="fit"):
        sample_utility(PreferenceGP(SquaredExponential([0.3])), np.random.default_rng(0))
