"""PreferenceGP: utility and duel predictions against brute-force Gaussian conditioning and Monte Carlo."""

import numpy as np
import pytest
from scipy.integrate import quad
from scipy.special import ndtr
from scipy.stats import norm

from lensopt.gp.kernels import SquaredExponential, benchmark_context_kernel
from lensopt.gp.mean import BowlMean
from lensopt.preference import PreferenceGP, duel_inputs
from lensopt.preference.model import DuelMean
from tests.preference.conftest import finite_difference, simulated_duels, swap_members

CASES = {
    # name: (base kernel on [s, x], n_context, n_system)
    "plain_2d": (lambda: SquaredExponential([0.25, 0.35], variance=1.5, active_dims=(0, 1)), 0, 2),
    "context_1d": (lambda: benchmark_context_kernel(SquaredExponential(0.2, active_dims=(1,))), 1, 1),
}


def bowl(k, d, depth=4.0):
    """A prior mean of the utility peaked at 0.4 on each system column (a starting point)."""
    return BowlMean(0.3, depth, (0.4,) * d, tuple(range(k, k + d)))


@pytest.fixture(
    params=[
        (name, inference, mean) for name in sorted(CASES) for inference in ("laplace", "ep") for mean in ("", "bowl")
    ],
    ids=lambda p: "-".join(filter(None, p)),
)
def fitted(request):
    name, inference, mean = request.param
    make, k, d = CASES[name]
    Z, y = simulated_duels(30, d, k, seed=3)
    utility_mean = bowl(k, d) if mean else None
    return PreferenceGP(make(), n_context=k, inference=inference, utility_mean=utility_mean).fit(Z, y), k, d


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
    m, S = model.classifier.training_posterior()  # of g − m_g, m_g the duel value's prior mean
    W = np.linalg.solve(K, C.T)  # K⁻¹ Cᵀ
    mean = W.T @ m + (0.0 if model.utility_mean is None else bowl(k, d)(X))
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
    mirrored = PreferenceGP(model.base_kernel, n_context=k, inference=model.inference, utility_mean=model.utility_mean)
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


def test_one_duel_with_a_prior_mean_gives_the_exact_posterior_by_quadrature():
    """EP is exact on one observation: the duel value's posterior mean and variance are the moments
    of ``Φ(g) N(g; m_g, k_g)`` (1-D quadrature), and the utility at another point follows by
    Gaussian conditioning, ``E f(a) = m(a) + k_fg (k_g)⁻¹ (E g − m_g)``. The bowl makes the first
    lens a priori worse (``m_g`` ≈ −1.1), so the answer "first preferred" moves the posterior far."""
    base = SquaredExponential([0.3, 0.3], variance=2.0, active_dims=(0, 1))
    prior = bowl(0, 2, depth=8.0)
    model = PreferenceGP(base, inference="ep", utility_mean=prior)
    z = np.array([[0.95, 0.1, 0.45, 0.35]])  # the first lens far from the bowl's centre, the second near it
    model.fit(z, np.array([1.0]))
    m_g = float(prior(z[:, :2])[0] - prior(z[:, 2:])[0])
    assert m_g < -1.0
    A, A2 = z[:, :2], z[:, 2:]
    v = float(base(A)[0, 0] + base(A2)[0, 0] - 2 * base(A, A2)[0, 0] + model.jitter)
    weight = lambda g: ndtr(g) * norm.pdf(g, m_g, np.sqrt(v))  # noqa: E731
    mass = quad(weight, m_g - 12 * np.sqrt(v), m_g + 12 * np.sqrt(v), limit=200)[0]
    mean_g = quad(lambda g: g * weight(g), m_g - 12 * np.sqrt(v), m_g + 12 * np.sqrt(v), limit=200)[0] / mass
    var_g = (
        quad(lambda g: (g - mean_g) ** 2 * weight(g), m_g - 12 * np.sqrt(v), m_g + 12 * np.sqrt(v), limit=200)[0] / mass
    )
    # the classifier's training value carries the jitter (prior variance v = v₀ + jitter); the duel
    # value g predicted at z is the jitter-free one, g | h ~ N(m_g + (v₀/v)(h − m_g), v₀ − v₀²/v)
    v0 = v - model.jitter
    got_mean, got_var = model.predict_duel(z)
    assert got_mean[0] == pytest.approx(m_g + v0 / v * (mean_g - m_g), abs=1e-9)
    assert got_var[0] == pytest.approx(v0 - v0**2 / v + (v0 / v) ** 2 * var_g, abs=1e-9)
    a = np.array([[0.7, 0.6], [0.4, 0.4]])
    k_fg = base(a, A)[:, 0] - base(a, A2)[:, 0]
    expected = prior(a) + k_fg / v * (mean_g - m_g)
    np.testing.assert_allclose(model.predict_utility(a)[0], expected, atol=1e-6)


def test_the_duel_values_prior_mean_and_its_gradient():
    """``DuelMean`` is ``m(s, x) − m(s, x')`` by hand, and its gradient matches finite differences
    (context column included)."""
    from lensopt.preference.kernel import PreferenceKernel

    prior = BowlMean(0.0, 3.0, (0.4, 0.6), (1, 2))
    mean = DuelMean(prior, PreferenceKernel(SquaredExponential(0.3), n_context=1))
    Z = np.random.default_rng(2).uniform(size=(5, 5))
    np.testing.assert_allclose(mean(Z), prior(Z[:, :3]) - prior(np.hstack([Z[:, :1], Z[:, 3:]])), atol=1e-12)
    np.testing.assert_allclose(mean.gradient(Z), finite_difference(mean, Z), rtol=1e-6, atol=1e-8)


def test_a_utility_mean_that_is_not_a_mean_function_is_refused():
    with pytest.raises(ValueError, match=r"utility_mean must be a MeanFunction or None, got 0\.5"):
        PreferenceGP(SquaredExponential(0.3), utility_mean=0.5)


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
