"""Type-II ML hyperparameter fitting: recovers a simulated lengthscale, respects bounds, is seeded."""

import numpy as np
import pytest
from scipy.stats import norm

from lensopt.gp import GPClassifier, SquaredExponential
from lensopt.gp.hyperparameters import maximize_log_marginal_likelihood

TRUE_LENGTHSCALE = 1.0
TRUE_VARIANCE = 4.0


def simulated_classification(n, seed):
    """Labels drawn from Φ(f) with f a draw from the SE GP prior (lengthscale 1, variance 4) on [0, 10]."""
    rng = np.random.default_rng(seed)
    X = rng.uniform(0, 10, (n, 1))
    K = SquaredExponential(TRUE_LENGTHSCALE, TRUE_VARIANCE)(X) + 1e-8 * np.eye(n)
    f = np.linalg.cholesky(K) @ rng.standard_normal(n)
    return X, (rng.uniform(size=n) < norm.cdf(f)).astype(float)


@pytest.mark.parametrize("inference, n", [("laplace", 300), ("ep", 120)])
def test_fit_hyperparameters_recovers_the_simulated_lengthscale(inference, n):
    X, y = simulated_classification(n, seed=0)
    start = SquaredExponential(4.0, 1.0)
    gp = GPClassifier(start, inference=inference)
    gp.fit_hyperparameters(X, y, n_restarts=2, seed=1)
    lengthscale = gp.kernel_.lengthscales[0]
    assert 0.5 * TRUE_LENGTHSCALE < lengthscale < 2.0 * TRUE_LENGTHSCALE
    # the fitted kernel explains the data better than the start, and the model is refitted with it
    assert gp.log_marginal_likelihood() > GPClassifier(start, inference=inference).fit(X, y).log_marginal_likelihood()
    assert gp.log_marginal_likelihood() == pytest.approx(
        GPClassifier(gp.kernel_, inference=inference).fit(X, y).log_marginal_likelihood(), abs=1e-8
    )


def test_fit_hyperparameters_stays_within_bounds():
    X, y = simulated_classification(150, seed=2)
    bounds = {"lengthscales": (2.0, 5.0), "variance": (0.5, 2.0)}  # the truth lies outside
    gp = GPClassifier(SquaredExponential(3.0, 1.0, bounds=bounds))
    gp.fit_hyperparameters(X, y, n_restarts=3, seed=0)
    theta, log_bounds = gp.kernel_.theta, gp.kernel_.bounds
    assert np.all(theta >= log_bounds[:, 0] - 1e-12) and np.all(theta <= log_bounds[:, 1] + 1e-12)
    assert gp.kernel_.lengthscales[0] == pytest.approx(2.0, rel=1e-6)  # pushed onto the bound


def test_fit_hyperparameters_is_reproducible_for_a_seed():
    X, y = simulated_classification(80, seed=3)
    fits = [
        GPClassifier(SquaredExponential(2.0, 1.0)).fit_hyperparameters(X, y, n_restarts=3, seed=42).kernel_.theta
        for _ in range(2)
    ]
    np.testing.assert_array_equal(fits[0], fits[1])


def test_fixed_hyperparameters_are_not_fitted():
    X, y = simulated_classification(80, seed=4)
    gp = GPClassifier(SquaredExponential(2.0, 3.0, fixed=("variance",)))
    gp.fit_hyperparameters(X, y, n_restarts=1, seed=0)
    assert gp.kernel_.variance == 3.0
    assert gp.kernel_.theta.shape == (1,)


def test_optimizer_finds_an_interior_maximum_and_clips_to_the_box():
    target = np.array([0.3, -0.5])

    def objective(theta):
        return -np.sum((theta - target) ** 2), -2 * (theta - target)

    inside = maximize_log_marginal_likelihood(objective, np.zeros(2), np.array([[-1, 1], [-1, 1]]), seed=0)
    np.testing.assert_allclose(inside.theta, target, atol=1e-6)
    assert inside.n_starts == 6
    clipped = maximize_log_marginal_likelihood(objective, np.zeros(2), np.array([[0.5, 1], [-1, 1]]), seed=0)
    np.testing.assert_allclose(clipped.theta, [0.5, -0.5], atol=1e-6)


def test_optimizer_survives_a_failing_objective_and_rejects_bad_restarts():
    def objective(theta):
        if theta[0] > 0.5:
            raise np.linalg.LinAlgError("not positive definite")
        return -float(theta[0] ** 2), np.array([-2 * theta[0]])

    result = maximize_log_marginal_likelihood(objective, np.array([0.2]), np.array([[-1.0, 1.0]]), seed=0)
    assert abs(result.theta[0]) < 1e-5
    with pytest.raises(ValueError, match="n_restarts"):
        maximize_log_marginal_likelihood(objective, np.array([0.2]), np.array([[-1.0, 1.0]]), n_restarts=-1)
