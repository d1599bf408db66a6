"""Decoupled-bases sampling: prior draws reproduce k, posterior draws reproduce the exact Gaussian update."""

import numpy as np
import pytest

from lensopt.gp.kernels import (
    LinearContext,
    Matern32,
    Matern52,
    SquaredExponential,
    benchmark_context_kernel,
    psychophysics_kernel,
)
from lensopt.gp.kernels.bowl import AcuityBowl
from lensopt.gp.sampling import PosteriorSample, prior_feature_map, sample_posterior, sample_prior

STATIONARY = {"se": SquaredExponential, "matern32": Matern32, "matern52": Matern52}
ARD = np.array([0.5, 1.2, 2.5])  # unequal lengthscales, so a wrong multi-dimensional density shows


class FakeGP:
    """The four attributes sample_posterior may use, with a latent posterior N(m, S) we choose."""

    def __init__(self, kernel, X_train, mean, cov, jitter=1e-6):
        self.kernel_, self.X_train_, self.jitter = kernel, X_train, jitter
        self._posterior = (mean, cov)

    def training_posterior(self):
        return self._posterior


def _points(d):
    """Three points: a base point, one about a lengthscale away, one about two lengthscales away."""
    ell = ARD[:d]
    x0 = np.linspace(-0.3, 0.4, d)
    return np.vstack([x0, x0 + 0.6 * ell, x0 - ell * np.linspace(1.5, 0.5, d)])


def _draws(make_sample, X, n_draws):
    return np.array([make_sample(i)(X) for i in range(n_draws)])


def _assert_cov_within_mc_error(draws, mean, cov, n_sd=5.0):
    """Empirical mean and covariance of draws (n_draws, n) against the exact ones."""
    n_draws = draws.shape[0]
    sd_mean = np.sqrt(np.diag(cov) / n_draws)
    assert np.all(np.abs(draws.mean(axis=0) - mean) <= n_sd * sd_mean + 1e-12), (draws.mean(axis=0), mean)
    centred = draws - mean
    empirical = centred.T @ centred / n_draws
    v = np.diag(cov)
    sd_cov = np.sqrt((np.outer(v, v) + cov**2) / n_draws)
    assert np.all(np.abs(empirical - cov) <= n_sd * sd_cov + 1e-12), (empirical, cov)


@pytest.mark.parametrize("d", [1, 2, 3])
@pytest.mark.parametrize("name", sorted(STATIONARY))
def test_feature_inner_product_matches_kernel_with_ard_lengthscales(name, d):
    # φ(x)ᵀφ(x') = v mean_j cos(ω_jᵀ(x − x')), standard deviation <= v sqrt(0.5 / q) with q frequencies;
    # independent per-coordinate Student-t frequencies (a classic slip) are off by 0.02-0.09 here.
    kernel = STATIONARY[name](ARD[:d], variance=1.3)
    X = _points(d)
    q = 200_000
    phi = prior_feature_map(kernel, 2 * q, np.random.default_rng(d), n_dims=d)(X)
    assert phi.shape == (3, 2 * q)
    np.testing.assert_allclose(phi @ phi.T, kernel(X), rtol=0, atol=5 * 1.3 * np.sqrt(0.5 / q))


@pytest.mark.parametrize("name", sorted(STATIONARY))
def test_feature_inner_product_matches_kernel_through_an_input_map(name):
    # frequencies drawn for the mapped coordinates u = A x act on x as Aᵀω
    A = np.array([[1.0, 0.0], [1.0, 1.0], [0.5, -2.0]])
    kernel = STATIONARY[name](ARD, variance=1.3, active_dims=(0, 1), input_map=A)
    X = np.array([[0.1, -0.2], [0.5, 0.3], [-0.6, 0.2]])
    q = 200_000
    phi = prior_feature_map(kernel, 2 * q, np.random.default_rng(7), n_dims=2)(X)
    np.testing.assert_allclose(phi @ phi.T, kernel(X), rtol=0, atol=5 * 1.3 * np.sqrt(0.5 / q))


@pytest.mark.parametrize("d", [1, 2, 3])
@pytest.mark.parametrize("name", sorted(STATIONARY))
def test_prior_sample_variance_and_covariance_match_kernel(name, d):
    kernel = STATIONARY[name](ARD[:d], variance=0.8)
    X = _points(d)
    rng = np.random.default_rng(100 + d)
    draws = _draws(lambda i: sample_prior(kernel, rng, n_features=8, n_dims=d), X, 4000)
    _assert_cov_within_mc_error(draws, np.zeros(3), kernel(X))


def test_psychophysics_prior_sample_matches_kernel_and_is_exactly_linear_in_context():
    kernel = psychophysics_kernel(2.0, [0.7, 1.6], variance=0.9)
    X = np.array([[0.5, 0.1, -0.2], [-0.4, 0.6, 0.3], [1.2, -0.5, 1.0]])
    rng = np.random.default_rng(7)
    draws = _draws(lambda i: sample_prior(kernel, rng, n_features=8), X, 4000)
    _assert_cov_within_mc_error(draws, np.zeros(3), kernel(X))
    # f(s, x) = √θ s w₀ + g(x): exactly linear in s, and the linear part's features are exact
    f = sample_prior(kernel, rng, n_features=64)
    xs = np.array([[0.0, 0.3, -0.1], [1.0, 0.3, -0.1], [-0.7, 0.3, -0.1], [1.9, 0.3, -0.1]])
    values = f(xs)
    slope = values[1] - values[0]
    np.testing.assert_allclose(values[2:], values[0] + xs[2:, 0] * slope, rtol=1e-12, atol=1e-12)
    phi = prior_feature_map(LinearContext(2.0, active_dims=(0,)), 16, rng)(X)
    np.testing.assert_allclose(phi @ phi.T, 2.0 * np.outer(X[:, 0], X[:, 0]), rtol=1e-14)


def test_benchmark_context_prior_sample_is_context_times_a_function():
    kernel = benchmark_context_kernel(Matern52([0.4, 0.9], variance=1.1, active_dims=(1, 2)))
    X = np.array([[0.5, 0.1, -0.2], [0.9, 0.3, 0.3], [0.2, -0.5, 1.0]])
    rng = np.random.default_rng(8)
    draws = _draws(lambda i: sample_prior(kernel, rng, n_features=8), X, 4000)
    _assert_cov_within_mc_error(draws, np.zeros(3), kernel(X))
    f = sample_prior(kernel, rng, n_features=64)
    unit = X.copy()
    unit[:, 0] = 1.0
    np.testing.assert_allclose(f(X), X[:, 0] * f(unit), rtol=1e-12)


FEATURE_KERNELS = {
    "se": lambda: SquaredExponential([0.5, 1.3, 0.8], variance=1.4),
    "matern32_active": lambda: Matern32([0.6, 0.9], active_dims=(0, 2)),
    "matern52_iso": lambda: Matern52(0.7, active_dims=(1, 2)),
    "linear": lambda: LinearContext(1.7, active_dims=(0, 1)),
    "psychophysics": lambda: psychophysics_kernel(2.0, [0.7, 1.6], variance=0.9),
    "benchmark": lambda: benchmark_context_kernel(SquaredExponential([0.4, 0.9], active_dims=(1, 2))),
    "meridian_map": lambda: (
        psychophysics_kernel(2.0, [0.7, 1.6], variance=0.9).k1
        + SquaredExponential([0.7, 1.6], variance=0.9, active_dims=(1, 2), input_map=[[1.0, 0.0], [1.0, 1.0]])
    ),
    "acuity_bowl": lambda: (
        AcuityBowl(2.0, 0.6, centre=(0.2, -0.3), active_dims=(0, 1, 2))
        + SquaredExponential([0.7, 1.6], variance=0.9, active_dims=(1, 2))
    ),
    "product_of_stationary": lambda: (
        Matern52(0.8, active_dims=(0,)) * SquaredExponential([0.5, 0.6], active_dims=(1, 2))
    ),
    "nested": lambda: (
        (LinearContext(1.0) * Matern32([0.5, 0.7], active_dims=(1, 2))) * LinearContext(0.5, active_dims=(2,))
        + SquaredExponential(0.9, active_dims=(1,))
    ),
}


@pytest.fixture(params=sorted(FEATURE_KERNELS))
def feature_kernel(request):
    return FEATURE_KERNELS[request.param]()


def test_feature_gradient_matches_central_differences(feature_kernel):
    fmap = prior_feature_map(feature_kernel, 16, np.random.default_rng(3))
    X = np.random.default_rng(4).uniform(-1, 1, size=(5, 3))
    G = fmap.gradient(X)
    assert G.shape == (5, fmap.n_features, 3)
    eps = 1e-6
    for k in range(3):
        step = np.zeros(3)
        step[k] = eps
        fd = (fmap(X + step) - fmap(X - step)) / (2 * eps)
        np.testing.assert_allclose(G[:, :, k], fd, rtol=1e-5, atol=1e-7)


def test_weighted_features_agree_with_full_features(feature_kernel):
    fmap = prior_feature_map(feature_kernel, 16, np.random.default_rng(5))
    X = np.random.default_rng(6).uniform(-1, 1, size=(4, 3))
    w = np.random.default_rng(7).standard_normal(fmap.n_features)
    value, grad = fmap._weighted(X, w)
    np.testing.assert_allclose(value, fmap(X) @ w, rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(fmap._value(X, w), fmap(X) @ w, rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(grad, np.einsum("nmd,m->nd", fmap.gradient(X), w), rtol=1e-10, atol=1e-12)


def _fake_posterior(kernel, d, jitter, seed=0, n_train=4):
    rng = np.random.default_rng(seed)
    X_train = rng.uniform(-1, 1, size=(n_train, d))
    mean = rng.normal(0.0, 1.0, n_train)
    A = rng.normal(0.0, 0.5, (n_train, n_train))
    cov = A @ A.T + 0.05 * np.eye(n_train)  # a posterior covariance comparable to the prior
    return FakeGP(kernel, X_train, mean, cov, jitter)


def _exact_posterior(gp, X):
    K = gp.kernel_(gp.X_train_) + gp.jitter * np.eye(len(gp.X_train_))
    k_star = gp.kernel_(gp.X_train_, X)
    m, S = gp.training_posterior()
    A = np.linalg.solve(K, k_star)  # K⁻¹ k*
    return A.T @ m, gp.kernel_(X) - k_star.T @ A + A.T @ S @ A


@pytest.mark.parametrize(
    "kernel, jitter",
    [
        (Matern52([0.6, 1.1], variance=1.2), 1e-6),
        (SquaredExponential([0.5, 0.9], variance=0.8), 0.2),  # large jitter: the ε term keeps it exact
        (psychophysics_kernel(1.5, [0.6, 1.3], variance=1.0), 1e-6),
        (
            LinearContext(1.5, active_dims=(0,))
            + SquaredExponential([0.6, 1.3], active_dims=(1, 2), input_map=[[1.0, 0.0], [1.0, 1.0]]),
            1e-6,
        ),
    ],
)
def test_posterior_samples_match_the_exact_gaussian_update(kernel, jitter):
    d = 3 if kernel.active_dims is not None else 2
    gp = _fake_posterior(kernel, d, jitter, seed=d)
    X = np.vstack([gp.X_train_[0] + 0.1, gp.X_train_[1] - 0.2, np.full(d, 0.9)])
    mean, cov = _exact_posterior(gp, X)
    rng = np.random.default_rng(11)
    draws = _draws(lambda i: sample_posterior(gp, rng, n_features=8), X, 4000)
    _assert_cov_within_mc_error(draws, mean, cov)


def test_posterior_sample_gradient_matches_central_differences():
    kernel = psychophysics_kernel(1.5, [0.6, 1.3], variance=1.0)
    gp = _fake_posterior(kernel, 3, 1e-6, n_train=6)
    f = sample_posterior(gp, np.random.default_rng(2), n_features=64)
    X = np.random.default_rng(9).uniform(-1, 1, size=(5, 3))
    G = f.gradient(X)
    assert G.shape == (5, 3)
    eps = 1e-6
    for k in range(3):
        step = np.zeros(3)
        step[k] = eps
        np.testing.assert_allclose(G[:, k], (f(X + step) - f(X - step)) / (2 * eps), rtol=1e-5, atol=1e-7)


def test_prior_sample_gradient_matches_central_differences():
    f = sample_prior(Matern32([0.4, 0.8]), np.random.default_rng(1), n_features=32)
    X = np.random.default_rng(2).uniform(-1, 1, size=(4, 2))
    eps = 1e-6
    fd = np.column_stack([(f(X + e) - f(X - e)) / (2 * eps) for e in np.eye(2) * eps])
    np.testing.assert_allclose(f.gradient(X), fd, rtol=1e-5, atol=1e-7)


def test_same_seed_gives_the_same_sample():
    gp = _fake_posterior(Matern52([0.6, 1.1]), 2, 1e-6)
    X = np.random.default_rng(0).uniform(-1, 1, size=(5, 2))
    a = sample_posterior(gp, np.random.default_rng(42))(X)
    b = sample_posterior(gp, np.random.default_rng(42))(X)
    c = sample_posterior(gp, np.random.default_rng(43))(X)
    np.testing.assert_array_equal(a, b)
    assert not np.allclose(a, c)


def test_rank_deficient_training_posterior_still_samples():
    gp = _fake_posterior(SquaredExponential([0.6, 1.1]), 2, 1e-8)
    u = np.array([1.0, -2.0, 0.5, 0.0])
    gp._posterior = (gp._posterior[0], np.outer(u, u))  # singular S
    f = sample_posterior(gp, np.random.default_rng(0))
    assert np.all(np.isfinite(f(np.zeros((2, 2)))))


def test_empty_training_set_gives_a_prior_sample():
    gp = FakeGP(SquaredExponential(0.5), np.zeros((0, 2)), np.zeros(0), np.zeros((0, 0)))
    f = sample_posterior(gp, np.random.default_rng(0), n_features=16)
    assert isinstance(f, PosteriorSample) and f(np.zeros((3, 2))).shape == (3,)


def test_bad_input_raises_value_error():
    with pytest.raises(ValueError, match="fit"):
        sample_posterior(FakeGP(SquaredExponential(0.5), None, None, None), np.random.default_rng(0))
    with pytest.raises(ValueError, match="n_features"):
        sample_prior(SquaredExponential([0.5, 0.5]), np.random.default_rng(0), n_features=1)
    with pytest.raises(ValueError, match="n_dims"):
        sample_prior(SquaredExponential(0.5), np.random.default_rng(0))
    assert sample_prior(SquaredExponential(0.5), np.random.default_rng(0), n_dims=2)(np.zeros((1, 2))).shape == (1,)
    gp = _fake_posterior(Matern52([0.6, 1.1]), 2, 1e-6)
    with pytest.raises(ValueError, match="columns"):
        sample_posterior(gp, np.random.default_rng(0))(np.zeros((2, 3)))


@pytest.mark.parametrize("n_answers", [20, 0])
def test_posterior_samples_with_virtual_sign_sites_match_the_classifier_posterior(n_answers):
    # The draws' update runs through the sign sites' points; their moments must be the classifier's
    # own Gaussian prediction (which conditions on the sites directly), within Monte Carlo error —
    # also before the first answer, when the sites are all the classifier knows.
    from lensopt.gp import GPClassifier
    from lensopt.gp.virtual import box_edge_signs

    rng = np.random.default_rng(5)
    X_train = np.column_stack([rng.uniform(-1, 2, 20), rng.uniform(-2, 2, 20), rng.uniform(-2, 2, 20)])
    y = (rng.uniform(size=20) < 0.5).astype(float)
    kernel = psychophysics_kernel(1.5, [1.0, 1.5], variance=1.0)
    signs = box_edge_signs(1, ((-2.0, 2.0), (-2.0, 2.0)), noise=0.5, points_per_edge=3)
    gp = GPClassifier(kernel, inference="ep", guess_rate=0.1, lapse_rate=0.02, prior_mean=-1.0, virtual=signs)
    gp.fit(X_train[:n_answers], y[:n_answers])
    X = np.array([[0.5, 1.9, -1.9], [0.0, 0.0, 0.3], [1.0, -1.5, 1.0]])
    mean, cov = gp.predict_latent(X, full_cov=True)
    draws = _draws(lambda i: sample_posterior(gp, rng, n_features=8), X, 4000)
    _assert_cov_within_mc_error(draws + gp.prior_mean_at(X), mean, cov)
