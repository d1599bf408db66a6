"""Expectation Propagation (R&W Alg. 3.5, 3.6, eq. 5.27) against quadrature of the exact posterior."""

import numpy as np
import pytest
from scipy.stats import multivariate_normal, norm

from lensopt.gp.ep import ep_lml_gradient, ep_posterior
from lensopt.gp.laplace import laplace_posterior
from lensopt.gp.likelihood import tilted_moments


def se_cov(x, log_lengthscale, log_variance):
    d2 = (x[:, None] - x[None, :]) ** 2
    ell2, v = np.exp(2 * log_lengthscale), np.exp(log_variance)
    K = v * np.exp(-0.5 * d2 / ell2)
    dK = np.stack([K * d2 / ell2, K], axis=2)
    return K + 1e-6 * np.eye(x.size), dK


def exact_posterior_by_quadrature(K, y, half_width=20.0, n_nodes=1201):
    """Exact ``log p(y)``, posterior mean and variances of 1 or 2 latents on a dense grid
    (the trapezoid rule converges spectrally for these smooth, fast-decaying integrands)."""
    n = K.shape[0]
    axis = np.linspace(-half_width, half_width, n_nodes)
    step = axis[1] - axis[0]
    grid = np.stack(np.meshgrid(*[axis] * n, indexing="ij"), axis=-1).reshape(-1, n)
    t = 2 * y - 1
    log_density = multivariate_normal(np.zeros(n), K).logpdf(grid).reshape(-1) + norm.logcdf(t * grid).sum(1)
    weights = np.exp(log_density) * step**n
    Z = weights.sum()
    mean = weights @ grid / Z
    var = weights @ (grid - mean) ** 2 / Z
    return np.log(Z), mean, var


def summarize(posterior, K):
    return posterior.log_marginal_likelihood, posterior.mean, np.diag(posterior.training_covariance(K))


def test_ep_is_exact_for_a_single_observation():
    K, y = np.array([[2.5]]), np.array([1.0])
    log_z, mean, var = exact_posterior_by_quadrature(K, y, n_nodes=4001)
    ep_log_z, ep_mean, ep_var = summarize(ep_posterior(K, y), K)
    assert ep_log_z == pytest.approx(log_z, abs=1e-9)  # = log ½ for a zero-mean prior
    np.testing.assert_allclose(ep_mean, mean, atol=1e-9)
    np.testing.assert_allclose(ep_var, var, atol=1e-9)


@pytest.mark.parametrize(
    "K, y",
    [
        (np.array([[2.0, 1.2], [1.2, 1.5]]), np.array([1.0, 0.0])),
        (np.array([[4.0, 3.0], [3.0, 4.0]]), np.array([1.0, 1.0])),
        (np.array([[9.0, -4.0], [-4.0, 3.0]]), np.array([0.0, 1.0])),
    ],
)
def test_ep_beats_laplace_against_quadrature_of_two_latents(K, y):
    log_z, mean, var = exact_posterior_by_quadrature(K, y)
    ep = summarize(ep_posterior(K, y), K)
    la = summarize(laplace_posterior(K, y), K)
    for exact, ep_value, la_value in zip((log_z, mean, var), ep, la):
        ep_error = np.max(np.abs(np.asarray(ep_value) - exact))
        la_error = np.max(np.abs(np.asarray(la_value) - exact))
        assert ep_error < 0.5 * la_error
    assert ep[0] == pytest.approx(log_z, abs=5e-3)


def test_ep_fixed_point_matches_tilted_moments_of_every_cavity():
    rng = np.random.default_rng(7)
    x = rng.uniform(-2, 2, 30)
    y = (rng.uniform(size=30) < norm.cdf(2 * x)).astype(float)
    K, _ = se_cov(x, np.log(0.8), np.log(2.0))
    posterior = ep_posterior(K, y)
    marginal_var = np.diag(posterior.training_covariance(K))
    tau, nu = posterior.site_precision, posterior.site_natural_mean
    cavity_precision = 1 / marginal_var - tau
    cavity_mean = (posterior.mean / marginal_var - nu) / cavity_precision
    _, tilted_mean, tilted_var = tilted_moments(y, cavity_mean, 1 / cavity_precision)
    np.testing.assert_allclose(posterior.mean, tilted_mean, atol=1e-7)
    np.testing.assert_allclose(marginal_var, tilted_var, atol=1e-7)


def test_ep_log_marginal_likelihood_gradient_matches_finite_differences():
    rng = np.random.default_rng(8)
    x = np.sort(rng.uniform(-2, 2, 20))
    y = (rng.uniform(size=20) < norm.cdf(2 * np.sin(2 * x))).astype(float)
    theta = np.array([np.log(0.6), np.log(1.8)])
    K, dK = se_cov(x, *theta)
    analytic = ep_lml_gradient(K, dK, ep_posterior(K, y, tolerance=1e-12))
    eps = 1e-5
    numeric = []
    for e in np.eye(2) * eps:
        plus = ep_posterior(se_cov(x, *(theta + e))[0], y, tolerance=1e-12).log_marginal_likelihood
        minus = ep_posterior(se_cov(x, *(theta - e))[0], y, tolerance=1e-12).log_marginal_likelihood
        numeric.append((plus - minus) / (2 * eps))
    np.testing.assert_allclose(analytic, numeric, rtol=1e-5, atol=1e-7)


def test_ep_warm_start_from_padded_sites_gives_the_cold_posterior():
    rng = np.random.default_rng(9)
    x = rng.uniform(-3, 3, 41)
    y = (rng.uniform(size=41) < norm.cdf(2 * np.sin(x))).astype(float)
    K, _ = se_cov(x, np.log(1.0), np.log(2.0))
    previous = ep_posterior(K[:40, :40], y[:40])
    sites = (np.append(previous.site_precision, 0.0), np.append(previous.site_natural_mean, 0.0))
    warm = ep_posterior(K, y, sites_init=sites)
    cold = ep_posterior(K, y)
    assert warm.n_iterations <= cold.n_iterations
    np.testing.assert_allclose(warm.mean, cold.mean, atol=1e-8)
    np.testing.assert_allclose(warm.alpha, cold.alpha, atol=1e-8)
    assert warm.log_marginal_likelihood == pytest.approx(cold.log_marginal_likelihood, abs=1e-8)


def test_ep_predictive_probability_beats_laplace_against_quadrature():
    # Exact p(c* = 1 | y) = ∫ p(f | y) Φ(m(f) / sqrt(1 + v)) df with m(f) = k*ᵀK⁻¹f, v = k** − k*ᵀK⁻¹k*
    x = np.array([-0.5, 0.6])
    K, _ = se_cov(x, np.log(0.7), np.log(6.0))
    y = np.array([1.0, 1.0])
    x_star = np.array([0.05, 1.5, -2.0])
    k_star = 6.0 * np.exp(-0.5 * (x[:, None] - x_star[None, :]) ** 2 / 0.49)
    A = np.linalg.solve(K, k_star)
    v = 6.0 - np.sum(k_star * A, axis=0)
    axis = np.linspace(-20, 20, 1201)
    grid = np.stack(np.meshgrid(axis, axis, indexing="ij"), axis=-1).reshape(-1, 2)
    weights = np.exp(multivariate_normal(np.zeros(2), K).logpdf(grid) + norm.logcdf(grid).sum(1))
    exact = weights @ norm.cdf(grid @ A / np.sqrt(1 + v)) / weights.sum()

    def proba(posterior):
        mean, var = posterior.predict(k_star, np.full(3, 6.0))
        return norm.cdf(mean / np.sqrt(1 + var))

    ep_error = np.abs(proba(ep_posterior(K, y)) - exact)
    la_error = np.abs(proba(laplace_posterior(K, y)) - exact)
    assert np.all(ep_error < la_error)
    assert np.all(ep_error < 5e-3)
