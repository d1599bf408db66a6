"""Laplace approximation (R&W Alg. 3.1, 3.2, 5.1) against brute-force computations."""

import numpy as np
import pytest
from scipy.optimize import minimize
from scipy.stats import norm

from lensopt.gp.laplace import laplace_lml_gradient, laplace_posterior

K2 = np.array([[2.0, 1.2], [1.2, 1.5]])
Y2 = np.array([1.0, 0.0])


def se_cov(x, log_lengthscale, log_variance):
    """Hand-built SE covariance on 1-D inputs and its derivatives in the log-hyperparameters."""
    d2 = (x[:, None] - x[None, :]) ** 2
    ell2, v = np.exp(2 * log_lengthscale), np.exp(log_variance)
    K = v * np.exp(-0.5 * d2 / ell2)
    dK = np.stack([K * d2 / ell2, K], axis=2)
    return K + 1e-6 * np.eye(x.size), dK


def exact_log_posterior(f, K, y):
    """Unnormalised log p(f | y) = log N(f; 0, K) + Σ log Φ(t f), written independently."""
    t = 2 * y - 1
    _, logdet = np.linalg.slogdet(K)
    quad_form = f @ np.linalg.solve(K, f)
    return -0.5 * quad_form - 0.5 * logdet - 0.5 * f.size * np.log(2 * np.pi) + np.sum(norm.logcdf(t * f))


def brute_force_mode(K, y):
    """Grid search, then Nelder–Mead refinement (no derivatives) of the exact log posterior."""
    axis = np.linspace(-4, 4, 161)
    grid = np.stack(np.meshgrid(*[axis] * K.shape[0], indexing="ij"), axis=-1).reshape(-1, K.shape[0])
    t = 2 * y - 1
    values = -0.5 * np.einsum("gi,ij,gj->g", grid, np.linalg.inv(K), grid) + norm.logcdf(t * grid).sum(1)
    start = grid[np.argmax(values)]
    result = minimize(
        lambda f: -exact_log_posterior(f, K, y),
        start,
        method="Nelder-Mead",
        options={"xatol": 1e-11, "fatol": 1e-14, "maxiter": 20000},
    )
    return result.x


def fd_hessian(fun, x, eps=1e-4):
    n = x.size
    H = np.empty((n, n))
    E = np.eye(n) * eps
    for i in range(n):
        for j in range(n):
            H[i, j] = (fun(x + E[i] + E[j]) - fun(x + E[i] - E[j]) - fun(x - E[i] + E[j]) + fun(x - E[i] - E[j])) / (
                4 * eps * eps
            )
    return H


@pytest.mark.parametrize("K, y", [(np.array([[1.7]]), np.array([0.0])), (K2, Y2), (4 * K2, np.array([1.0, 1.0]))])
def test_laplace_mode_is_argmax_of_exact_log_posterior(K, y):
    posterior = laplace_posterior(K, y)
    np.testing.assert_allclose(posterior.mean, brute_force_mode(K, y), atol=1e-6)


@pytest.mark.parametrize("K, y", [(K2, Y2), (4 * K2, np.array([1.0, 1.0]))])
def test_laplace_curvature_equals_exact_hessian_at_the_mode(K, y):
    posterior = laplace_posterior(K, y)
    H = fd_hessian(lambda f: exact_log_posterior(f, K, y), posterior.mean)
    precision = np.linalg.inv(posterior.training_covariance(K))
    np.testing.assert_allclose(precision, -H, rtol=1e-5, atol=1e-6)


def test_laplace_predictive_moments_match_brute_force():
    x = np.array([-0.4, 0.5])
    K, _ = se_cov(x, np.log(0.8), np.log(2.0))
    x_star = np.array([0.1, 1.7])
    k_star = 2.0 * np.exp(-0.5 * (x[:, None] - x_star[None, :]) ** 2 / 0.64)
    # Independent: mode and curvature from the exact posterior, then the Gaussian integral
    # E[f*] = k*ᵀ K⁻¹ f̂, V[f*] = k** − k*ᵀ K⁻¹ k* + k*ᵀ K⁻¹ Σ K⁻¹ k*, Σ = (−∇∇ log p(f|y))⁻¹.
    f_hat = brute_force_mode(K, Y2)
    Sigma = np.linalg.inv(-fd_hessian(lambda f: exact_log_posterior(f, K, Y2), f_hat))
    A = np.linalg.solve(K, k_star)
    mean_bf = A.T @ f_hat
    var_bf = 2.0 - np.sum(k_star * A, axis=0) + np.einsum("im,ij,jm->m", A, Sigma, A)
    mean, var = laplace_posterior(K, Y2).predict(k_star, np.full(2, 2.0))
    np.testing.assert_allclose(mean, mean_bf, atol=2e-6)
    np.testing.assert_allclose(var, var_bf, rtol=1e-5)


def test_laplace_log_marginal_likelihood_matches_hand_formula():
    f_hat = brute_force_mode(K2, Y2)
    H = fd_hessian(lambda f: exact_log_posterior(f, K2, Y2), f_hat)
    # log q(y) = log p(y, f̂) + (n/2) log 2π − ½ log|−H|
    expected = exact_log_posterior(f_hat, K2, Y2) + np.log(2 * np.pi) - 0.5 * np.linalg.slogdet(-H)[1]
    assert laplace_posterior(K2, Y2).log_marginal_likelihood == pytest.approx(expected, abs=1e-6)


def test_laplace_log_marginal_likelihood_gradient_matches_finite_differences():
    rng = np.random.default_rng(3)
    x = np.sort(rng.uniform(-2, 2, 25))
    y = (rng.uniform(size=25) < norm.cdf(2 * np.sin(2 * x))).astype(float)
    theta = np.array([np.log(0.7), np.log(1.5)])
    K, dK = se_cov(x, *theta)
    analytic = laplace_lml_gradient(K, dK, y, laplace_posterior(K, y))
    eps = 1e-5
    numeric = []
    for e in np.eye(2) * eps:
        plus = laplace_posterior(se_cov(x, *(theta + e))[0], y).log_marginal_likelihood
        minus = laplace_posterior(se_cov(x, *(theta - e))[0], y).log_marginal_likelihood
        numeric.append((plus - minus) / (2 * eps))
    np.testing.assert_allclose(analytic, numeric, rtol=1e-5, atol=1e-7)


def test_newton_converges_in_few_iterations_and_warm_start_needs_fewer():
    rng = np.random.default_rng(4)
    x = rng.uniform(-3, 3, 200)
    y = (rng.uniform(size=200) < norm.cdf(3 * np.cos(x))).astype(float)
    K, _ = se_cov(x, np.log(0.8), np.log(3.0))
    cold = laplace_posterior(K, y)
    assert cold.n_iterations <= 10
    warm = laplace_posterior(K, y, alpha_init=cold.alpha)
    assert warm.n_iterations <= 2
    np.testing.assert_allclose(warm.mean, cold.mean, atol=1e-10)


def test_warm_start_from_padded_weights_gives_the_cold_posterior():
    rng = np.random.default_rng(5)
    x = rng.uniform(-3, 3, 61)
    y = (rng.uniform(size=61) < norm.cdf(2 * np.sin(x))).astype(float)
    K, _ = se_cov(x, np.log(1.0), np.log(2.0))
    previous = laplace_posterior(K[:60, :60], y[:60])
    warm = laplace_posterior(K, y, alpha_init=np.append(previous.alpha, 0.0))
    cold = laplace_posterior(K, y)
    assert warm.n_iterations < cold.n_iterations
    np.testing.assert_allclose(warm.mean, cold.mean, atol=1e-8)
    np.testing.assert_allclose(warm.alpha, cold.alpha, atol=1e-8)
    assert warm.log_marginal_likelihood == pytest.approx(cold.log_marginal_likelihood, abs=1e-8)
