"""PreferenceGP: utility and duel predictions against brute-force Gaussian conditioning and Monte Carlo."""

import numpy as np
import pytest
from scipy.special import ndtr

from lensopt.gp.kernels import SquaredExponential, benchmark_context_kernel
from lensopt.preference import PreferenceGP, duel_inputs
from tests.preference.conftest import finite_difference, simulated_duels, swap_members

CASES = {
    # name: (base kernel on [s, x], n_context, n_system)
    "plain_2d": (lambda: SquaredExponential([0.25, 0.35], variance=1.5, active_dims=(0, 1)), 0, 2),
    "context_1d": (lambda: benchmark_context_kernel(SquaredExponential(0.2, active_dims=(1,))), 1, 1),
}


@pytest.fixture(
    params=[(name, inference) for name in sorted(CASES) for inference in ("laplace", "ep")],
    ids=lambda p: f"{p[0]}-{p[1]}",
)
def fitted(request):
    name, inference = request.param
    make, k, d = CASES[name]
    Z, y = simulated_duels(30, d, k, seed=3)
    return PreferenceGP(make(), n_context=k, inference=inference).fit(Z, y), k, d


def _test_points(k, d, n=5, seed=11):
    rng = np.random.default_rng(seed)
    return np.hstack([rng.uniform(0.2, 1.0, (n, k)), rng.uniform(size=(n, d))])


def test_utility_prediction_matches_brute_force_gaussian_conditioning(fitted):
    # Joint prior of (f(X*), g(Z)) built member by member from the base kernel; condition on
    # g(Z) ~ N(m, S) (the Laplace/EP posterior): E = C K⁻¹ m, V = K** − C K⁻¹ Cᵀ + C K⁻¹ S K⁻¹ Cᵀ.
    model, k, d = fitted
    base, Z = model.base_kernel, model.Z_train_
    n = Z.shape[0]
    A = np.hstack([Z[:, :k], Z[:, k : k + d]])
    A2 = np.hstack([Z[:, :k], Z[:, k + d :]])
    X = _test_points(k, d)
    L = np.hstack([np.eye(n), -np.eye(n)])
    U = np.vstack([A, A2])
    K = L @ base(U) @ L.T + model.jitter * np.eye(n)
    C = base(X, U) @ L.T
    m, S = model.classifier.training_posterior()
    W = np.linalg.solve(K, C.T)  # K⁻¹ Cᵀ
    mean = W.T @ m
    cov = base(X) - C @ W + W.T @ S @ W
    got_mean, got_cov = model.predict_utility(X, full_cov=True)
    np.testing.assert_allclose(got_mean, mean, rtol=1e-6, atol=1e-8)
    np.testing.assert_allclose(got_cov, cov, rtol=1e-6, atol=1e-8)
    got_mean, got_var = model.predict_utility(X)
    np.testing.assert_allclose(got_var, np.diag(cov), rtol=1e-6, atol=1e-8)


def test_duel_prediction_is_the_difference_of_utility_predictions(fitted):
    model, k, d = fitted
    X = _test_points(k, d, n=8)
    first, second = X[:4], np.hstack([X[:4, :k], X[4:, k:]])
    mean, cov = model.predict_utility(np.vstack([first, second]), full_cov=True)
    L = np.hstack([np.eye(4), -np.eye(4)])
    g_mean, g_var = model.predict_duel(duel_inputs(X[:4, :k], X[:4, k:], X[4:, k:]))
    np.testing.assert_allclose(g_mean, L @ mean, rtol=1e-8, atol=1e-10)
    np.testing.assert_allclose(g_var, np.diag(L @ cov @ L.T), rtol=1e-6, atol=1e-9)


def test_posterior_duel_values_are_antisymmetric(fitted):
    model, k, d = fitted
    Z = duel_inputs(_test_points(k, d)[:, :k], _test_points(k, d, seed=1)[:, k:], _test_points(k, d, seed=2)[:, k:])
    mean, var = model.predict_duel(Z)
    mean_s, var_s = model.predict_duel(swap_members(Z, k))
    np.testing.assert_allclose(mean_s, -mean, atol=1e-10)
    np.testing.assert_allclose(var_s, var, atol=1e-10)
    np.testing.assert_allclose(model.duel_probability(swap_members(Z, k)), 1 - model.duel_probability(Z), atol=1e-10)


def test_win_probability_and_its_uncertainty_match_monte_carlo(fitted):
    # Draw (f(a), f(a')) jointly from the utility posterior; Φ(f(a) − f(a')) is the win probability.
    model, k, d = fitted
    X = _test_points(k, d, n=6, seed=4)
    first, second = X[:3], np.hstack([X[:3, :k], X[3:, k:]])
    mean, cov = model.predict_utility(np.vstack([first, second]), full_cov=True)
    rng = np.random.default_rng(0)
    draws = rng.multivariate_normal(mean, cov, size=200_000, method="eigh")
    p = ndtr(draws[:, :3] - draws[:, 3:])
    Z = duel_inputs(X[:3, :k], X[:3, k:], X[3:, k:])
    se = p.std(axis=0) / np.sqrt(p.shape[0])
    np.testing.assert_allclose(model.duel_probability(Z), p.mean(axis=0), atol=5 * se.max() + 1e-4)
    np.testing.assert_allclose(model.duel_epistemic_variance(Z), p.var(axis=0), atol=2e-3)

    # BALD (Houlsby's approximation of the second entropy term, in bits) against Monte Carlo
    def entropy(q):
        return -(q * np.log2(np.clip(q, 1e-300, 1)) + (1 - q) * np.log2(np.clip(1 - q, 1e-300, 1)))

    mc_bald = entropy(p.mean(axis=0)) - entropy(p).mean(axis=0)
    np.testing.assert_allclose(model.duel_bald(Z), mc_bald, atol=0.02)


def test_answers_recorded_either_way_round_give_the_same_model(fitted):
    model, k, _ = fitted
    Z, y = model.Z_train_, model.y_train_
    mirrored = PreferenceGP(model.base_kernel, n_context=k, inference=model.inference)
    mirrored.fit(swap_members(Z, k), 1 - y)
    X = _test_points(k, model.n_system_, n=4)
    for got, expected in zip(mirrored.predict_utility(X), model.predict_utility(X)):
        np.testing.assert_allclose(got, expected, rtol=1e-6, atol=1e-8)


def test_utility_gradients_match_finite_differences(fitted):
    model, k, d = fitted
    X = _test_points(k, d, n=4, seed=6)
    _, _, dmean, dvar = model.predict_utility_with_gradient(X)
    np.testing.assert_allclose(dmean, finite_difference(lambda Q: model.predict_utility(Q)[0], X), rtol=1e-5, atol=1e-7)
    np.testing.assert_allclose(dvar, finite_difference(lambda Q: model.predict_utility(Q)[1], X), rtol=1e-5, atol=1e-7)


def test_marginal_likelihood_gradient_matches_finite_differences(fitted):
    model, _, _ = fitted
    theta = model.kernel.theta
    _, grad = model.log_marginal_likelihood(theta, eval_gradient=True)
    step = 1e-5
    for j in range(theta.size):
        e = np.zeros(theta.size)
        e[j] = step
        fd = (model.log_marginal_likelihood(theta + e) - model.log_marginal_likelihood(theta - e)) / (2 * step)
        assert grad[j] == pytest.approx(fd, rel=1e-3, abs=1e-5)


def test_hyperparameter_fit_increases_the_marginal_likelihood():
    make, k, d = CASES["plain_2d"]
    Z, y = simulated_duels(30, d, k, seed=3)
    model = PreferenceGP(make(), n_context=k).fit(Z, y)
    refit = PreferenceGP(make(), n_context=k).fit_hyperparameters(Z, y, n_restarts=0)
    assert refit.log_marginal_likelihood() > model.log_marginal_likelihood() + 1e-3
    assert not np.allclose(refit.base_kernel.theta, model.base_kernel.theta)


def test_prior_predictions_before_any_duel():
    base = SquaredExponential([0.3, 0.4], variance=2.0, active_dims=(0, 1))
    model = PreferenceGP(base).fit(np.zeros((0, 4)), np.zeros(0))
    X = np.array([[0.1, 0.2], [0.5, 0.9]])
    mean, cov = model.predict_utility(X, full_cov=True)
    np.testing.assert_array_equal(mean, 0.0)
    np.testing.assert_allclose(cov, base(X))
    np.testing.assert_allclose(model.duel_probability(duel_inputs([], X[0], X[1])), 0.5)


def test_bad_inputs_name_the_problem():
    model = PreferenceGP(SquaredExponential(0.3, active_dims=(0, 1)))
    with pytest.raises(RuntimeError, match="fit"):
        model.predict_utility(np.zeros((1, 2)))
    with pytest.raises(ValueError, match="2·d columns"):
        model.fit(np.zeros((3, 3)), np.zeros(3))
    Z, y = simulated_duels(5, 2)
    model.fit(Z, y)
    with pytest.raises(ValueError, match="need 2 columns"):
        model.predict_utility(np.zeros((1, 3)))
    with pytest.raises(ValueError, match="labels 0 and 1"):
        model.fit(Z, y + 2)
