"""The preference kernel against its definition as a linear map of the utility's covariance."""

import numpy as np
import pytest

from lensopt.gp.kernels import (
    LinearContext,
    Matern52,
    SquaredExponential,
    benchmark_context_kernel,
    psychophysics_kernel,
)
from lensopt.preference import PreferenceKernel, duel_inputs
from tests.preference.conftest import finite_difference, swap_members

# (base kernel on [s, x], n_context, n_system)
BASES = {
    "se_ard": (lambda: SquaredExponential([0.4, 0.9], variance=1.7, active_dims=(0, 1)), 0, 2),
    "matern52_1d": (lambda: Matern52(0.3, variance=0.8, active_dims=(0,)), 0, 1),
    "benchmark_context": (lambda: benchmark_context_kernel(SquaredExponential([0.5, 0.7], active_dims=(1, 2))), 1, 2),
    "psychophysics": (lambda: psychophysics_kernel(2.0, [0.6, 1.1], variance=1.3), 1, 2),
    "sum_with_context": (
        lambda: (
            LinearContext(0.7, active_dims=(0,)) * Matern52([0.5, 0.8], active_dims=(1, 2))
            + SquaredExponential(0.9, variance=0.4, active_dims=(0, 1, 2))
        ),
        1,
        2,
    ),
}


@pytest.fixture(params=sorted(BASES))
def case(request):
    make, k, d = BASES[request.param]
    return PreferenceKernel(make(), n_context=k), k, d


def _duels(n, k, d, seed=0):
    rng = np.random.default_rng(seed)
    Z = np.hstack([rng.uniform(0.1, 1.0, (n, k)), rng.uniform(-1, 1, (n, 2 * d))])
    Z[-1] = swap_members(Z[:1], k)[0]  # a duel and its mirror image
    return Z


def _members(Z, k, d):
    """``A = [s, x]`` and ``A' = [s, x']`` of each duel."""
    return np.hstack([Z[:, :k], Z[:, k : k + d]]), np.hstack([Z[:, :k], Z[:, k + d :]])


def test_value_is_the_covariance_of_utility_differences(case):
    # g = L f with L = [I, −I] on the stacked members [A; A']: cov(g) = L K_f Lᵀ.
    kernel, k, d = case
    Z, W = _duels(6, k, d, seed=1), _duels(4, k, d, seed=2)
    (A, A2), (B, B2) = _members(Z, k, d), _members(W, k, d)
    base = kernel.base
    U, V = np.vstack([A, A2]), np.vstack([B, B2])
    L_Z = np.hstack([np.eye(6), -np.eye(6)])
    L_W = np.hstack([np.eye(4), -np.eye(4)])
    np.testing.assert_allclose(kernel(Z, W), L_Z @ base(U, V) @ L_W.T, rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(kernel(Z), L_Z @ base(U) @ L_Z.T, rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(kernel.diag(Z), np.diag(kernel(Z)), rtol=1e-12, atol=1e-12)
    # cov(f(X), g(W)) = K_f(X, [B; B']) L_Wᵀ
    X = np.hstack([np.full((3, k), 0.5), np.linspace(-1, 1, 3 * d).reshape(3, d)])
    np.testing.assert_allclose(kernel.cross_cov(X, W), base(X, V) @ L_W.T, rtol=1e-12, atol=1e-12)


def test_covariance_is_positive_semidefinite(case):
    kernel, k, d = case
    K = kernel(_duels(15, k, d, seed=3))
    np.testing.assert_allclose(K, K.T, atol=1e-12)
    assert np.linalg.eigvalsh(K).min() >= -1e-9 * np.abs(K).max()


def test_swapping_members_flips_the_sign_of_every_covariance(case):
    kernel, k, d = case
    Z, W = _duels(5, k, d, seed=4), _duels(3, k, d, seed=5)
    Ws = swap_members(W, k)
    np.testing.assert_allclose(kernel(Z, Ws), -kernel(Z, W), atol=1e-12)
    np.testing.assert_allclose(kernel.diag(Ws), kernel.diag(W), atol=1e-12)
    X = _members(Z, k, d)[0]
    np.testing.assert_allclose(kernel.cross_cov(X, Ws), -kernel.cross_cov(X, W), atol=1e-12)
    # a duel of a point with itself has no variance
    same = duel_inputs(Z[:2, :k], Z[:2, k : k + d], Z[:2, k : k + d])
    np.testing.assert_allclose(kernel.diag(same), 0.0, atol=1e-12)


def test_hyperparameters_are_those_of_the_base_kernel(case):
    kernel, _, _ = case
    np.testing.assert_array_equal(kernel.theta, kernel.base.theta)
    np.testing.assert_array_equal(kernel.bounds, kernel.base.bounds)
    moved = kernel.with_theta(kernel.theta + 0.3)
    assert isinstance(moved, PreferenceKernel) and moved.n_context == kernel.n_context
    np.testing.assert_allclose(moved.base.theta, kernel.base.theta + 0.3)


def test_theta_gradient_matches_finite_differences(case):
    kernel, k, d = case
    Z = _duels(7, k, d, seed=6)
    grad = kernel.gradient_theta(Z)
    assert grad.shape == (7, 7, kernel.n_theta)
    step = 1e-6
    for j in range(kernel.n_theta):
        e = np.zeros(kernel.n_theta)
        e[j] = step
        fd = (kernel.with_theta(kernel.theta + e)(Z) - kernel.with_theta(kernel.theta - e)(Z)) / (2 * step)
        np.testing.assert_allclose(grad[:, :, j], fd, rtol=1e-5, atol=1e-7)


def test_input_gradients_match_finite_differences(case):
    kernel, k, d = case
    Z, W = _duels(4, k, d, seed=7), _duels(5, k, d, seed=8)
    grad = kernel.gradient_x(Z, W)
    assert grad.shape == (4, 5, k + 2 * d)
    for j in range(W.shape[0]):
        fd = finite_difference(lambda Q: kernel(Q, W[j : j + 1])[:, 0], Z)  # noqa: B023 - called within this iteration
        np.testing.assert_allclose(grad[:, j, :], fd, rtol=1e-5, atol=1e-7)
    np.testing.assert_allclose(kernel.diag_gradient_x(Z), finite_difference(kernel.diag, Z), rtol=1e-5, atol=1e-7)
    X = _members(Z, k, d)[1]
    cross = kernel.cross_cov_gradient_x(X, W)
    for j in range(W.shape[0]):
        fd = finite_difference(lambda Q: kernel.cross_cov(Q, W[j : j + 1])[:, 0], X)  # noqa: B023 - called within this iteration
        np.testing.assert_allclose(cross[:, j, :], fd, rtol=1e-5, atol=1e-7)


def test_diagonal_is_blocked_without_changing_values(monkeypatch):
    import lensopt.preference.kernel as module

    kernel = PreferenceKernel(SquaredExponential([0.3, 0.5], active_dims=(0, 1)))
    Z = _duels(11, 0, 2, seed=9)
    full = kernel.diag(Z), kernel.diag_gradient_x(Z)
    monkeypatch.setattr(module, "DIAG_BLOCK", 3)
    np.testing.assert_allclose(kernel.diag(Z), full[0], atol=1e-14)
    np.testing.assert_allclose(kernel.diag_gradient_x(Z), full[1], atol=1e-14)


@pytest.mark.parametrize("columns", [1, 2, 4])
def test_inputs_without_two_equal_members_are_rejected(columns):
    kernel = PreferenceKernel(SquaredExponential(0.5, active_dims=(0, 1)), n_context=1)
    with pytest.raises(ValueError, match="n_context \\+ 2·d columns"):
        kernel(np.zeros((2, columns)))


def test_bad_constructor_arguments_are_rejected():
    with pytest.raises(ValueError, match="lensopt Kernel"):
        PreferenceKernel(lambda x, y: 0)
    with pytest.raises(ValueError, match="n_context"):
        PreferenceKernel(SquaredExponential(0.5), n_context=-1)
