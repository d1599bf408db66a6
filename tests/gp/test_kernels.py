"""Kernels: PSD matrices, hand values, preset definitions, and every gradient against finite differences."""

import numpy as np
import pytest

from lensopt.gp.kernels import (
    Kernel,
    LinearContext,
    Matern32,
    Matern52,
    Product,
    SquaredExponential,
    Sum,
    benchmark_context_kernel,
    psychophysics_kernel,
)
from lensopt.gp.kernels.bowl import AcuityBowl

KERNELS = {
    "se_ard": lambda: SquaredExponential([0.4, 1.3, 0.8], variance=1.7),
    "se_iso_active": lambda: SquaredExponential(0.6, variance=0.9, active_dims=(1, 2)),
    "matern32_ard": lambda: Matern32([0.5, 2.0], variance=1.2, active_dims=(0, 2)),
    "matern52_ard": lambda: Matern52([0.7, 0.3, 1.1], variance=0.8),
    "linear_context": lambda: LinearContext(2.5, active_dims=(0,)),
    "linear_two_cols": lambda: LinearContext(0.7, active_dims=(0, 2)),
    "sum": lambda: Sum(Matern32([0.5, 0.9], active_dims=(1, 2)), SquaredExponential(1.5, variance=0.3)),
    "product": lambda: Product(SquaredExponential(0.8, active_dims=(0,)), Matern52([0.6, 1.4], active_dims=(1, 2))),
    "sum_fixed": lambda: (
        SquaredExponential([0.5, 0.9], fixed=("variance",), active_dims=(1, 2)) + LinearContext(1.3, fixed="variance")
    ),
    "product_fixed": lambda: (
        Matern52([0.6, 1.4], active_dims=(1, 2), fixed=("lengthscales",)) * LinearContext(1.0, fixed=("variance",))
    ),
    "psychophysics": lambda: psychophysics_kernel(3.0, [0.9, 1.6], variance=1.4),
    "benchmark": lambda: benchmark_context_kernel(Matern52([0.4, 0.7], variance=1.3, active_dims=(1, 2))),
    "se_meridian_map": lambda: SquaredExponential(
        [0.9, 1.6], variance=1.1, active_dims=(1, 2), input_map=[[1.0, 0.0], [1.0, 1.0]]
    ),
    "acuity_bowl": lambda: AcuityBowl(2.0, 0.7, centre=(0.3, -0.2), active_dims=(0, 1, 2)),
    "acuity_bowl_plus_se": lambda: (
        AcuityBowl(1.5, 0.4, centre=(-0.5, 0.1), active_dims=(0, 1, 2), fixed=("shift_variance",))
        + SquaredExponential(0.9, variance=0.6, active_dims=(1, 2))
    ),
    "matern32_wide_map": lambda: Matern32(
        [0.8, 1.2, 0.5], variance=0.7, active_dims=(0, 2), input_map=[[1.0, 0.5], [0.0, 2.0], [-1.0, 1.0]]
    ),
}


def _inputs(n=9, seed=0):
    """Random (n, 3) inputs with two repeated rows."""
    X = np.random.default_rng(seed).uniform(-1.5, 1.5, size=(n, 3))
    X[-1] = X[0]
    X[-2] = X[1]
    return X


@pytest.fixture(params=sorted(KERNELS))
def kernel(request):
    return KERNELS[request.param]()


def test_covariance_is_symmetric_and_positive_semidefinite(kernel):
    X = _inputs(12)
    K = kernel(X)
    assert K.shape == (12, 12)
    np.testing.assert_allclose(K, K.T, rtol=0, atol=1e-12)
    scale = np.abs(np.diag(K)).max()
    assert np.linalg.eigvalsh(K).min() >= -1e-8 * scale
    np.testing.assert_allclose(kernel.diag(X), np.diag(K), rtol=1e-12)


def test_cross_covariance_matches_joint_matrix(kernel):
    X = _inputs(10)
    np.testing.assert_allclose(kernel(X[:4], X[4:]), kernel(X)[:4, 4:], rtol=1e-12)


def test_gradient_theta_matches_central_differences_in_log_space(kernel):
    X = _inputs(7, seed=1)
    theta = kernel.theta
    G = kernel.gradient_theta(X)
    assert G.shape == (7, 7, theta.size)
    eps = 1e-6
    for j in range(theta.size):
        step = np.zeros_like(theta)
        step[j] = eps
        fd = (kernel.with_theta(theta + step)(X) - kernel.with_theta(theta - step)(X)) / (2 * eps)
        np.testing.assert_allclose(G[:, :, j], fd, rtol=1e-5, atol=1e-8, err_msg=kernel.hyperparameter_names[j])


def test_gradient_x_matches_central_differences(kernel):
    X, Y = _inputs(6, seed=2), _inputs(5, seed=3)
    G = kernel.gradient_x(X, Y)
    assert G.shape == (6, 5, 3)
    eps = 1e-6
    for k in range(3):
        step = np.zeros(3)
        step[k] = eps
        # k(X_i, Y_j) depends on row X_i only, so shifting a whole column gives every ∂/∂X_i[k] at once
        fd = (kernel(X + step, Y) - kernel(X - step, Y)) / (2 * eps)
        np.testing.assert_allclose(G[:, :, k], fd, rtol=1e-5, atol=1e-8)


def test_diag_gradient_x_matches_central_differences(kernel):
    X = _inputs(6, seed=4)
    G = kernel.diag_gradient_x(X)
    assert G.shape == (6, 3)
    eps = 1e-6
    for k in range(3):
        step = np.zeros(3)
        step[k] = eps
        fd = (kernel.diag(X + step) - kernel.diag(X - step)) / (2 * eps)
        np.testing.assert_allclose(G[:, k], fd, rtol=1e-5, atol=1e-8)


def test_theta_round_trip_reproduces_the_kernel(kernel):
    X = _inputs(6)
    theta = kernel.theta
    same = kernel.with_theta(theta)
    np.testing.assert_allclose(same.theta, theta, rtol=1e-14)
    np.testing.assert_allclose(same(X), kernel(X), rtol=1e-12)
    assert kernel.bounds.shape == (theta.size, 2)
    assert np.all(kernel.bounds[:, 0] < kernel.bounds[:, 1])
    assert len(kernel.hyperparameter_names) == theta.size
    with pytest.raises(ValueError, match="expected"):
        kernel.with_theta(np.zeros(theta.size + 1))


def test_with_theta_returns_a_new_kernel_and_leaves_the_original_unchanged():
    k = SquaredExponential([0.5, 2.0], variance=1.5)
    k2 = k.with_theta(np.log([1.0, 3.0, 0.25]))
    np.testing.assert_allclose(k.lengthscales, [0.5, 2.0])
    assert k.variance == 1.5
    np.testing.assert_allclose(k2.lengthscales, [1.0, 3.0])
    assert k2.variance == pytest.approx(0.25)
    with pytest.raises(ValueError, match="read-only"):
        k.lengthscales[0] = 7.0  # read-only


def test_fixed_hyperparameters_are_excluded_from_theta():
    k = SquaredExponential([0.5, 2.0], variance=1.5, fixed=("variance",))
    assert k.hyperparameter_names == ["se.lengthscale[0]", "se.lengthscale[1]"]
    np.testing.assert_allclose(k.theta, np.log([0.5, 2.0]))
    assert k.with_theta(np.log([1.0, 1.0])).variance == 1.5
    bench = benchmark_context_kernel(Matern32([0.3, 0.4], active_dims=(1, 2)))
    assert bench.hyperparameter_names == [
        "matern32.lengthscale[0]",
        "matern32.lengthscale[1]",
        "matern32.variance",
    ]
    assert psychophysics_kernel(2.0, [1.0, 1.0]).hyperparameter_names[0] == "linear.variance"


def test_bounds_are_the_log_of_the_natural_bounds():
    k = Matern52(1.0, variance=2.0, bounds={"lengthscales": (0.1, 10.0), "variance": (0.5, 4.0)})
    np.testing.assert_allclose(k.bounds, np.log([[0.1, 10.0], [0.5, 4.0]]))
    assert k.hyperparameter_names == ["matern52.lengthscale", "matern52.variance"]


def test_squared_exponential_at_one_lengthscale_is_variance_times_exp_minus_half():
    k = SquaredExponential([0.5, 2.0], variance=1.7)
    value = k(np.array([[0.0, 0.0]]), np.array([[0.0, 2.0]]))[0, 0]
    assert value == pytest.approx(1.7 * np.exp(-0.5), rel=1e-14)
    value = k(np.array([[0.0, 0.0]]), np.array([[0.5, 2.0]]))[0, 0]
    assert value == pytest.approx(1.7 * np.exp(-1.0), rel=1e-14)


def test_matern_hand_values():
    # r = 0.7 / 0.5 = 1.4; 2 (1 + √3·1.4) e^{−√3·1.4} and 2 (1 + √5·1.4 + 5·1.4²/3) e^{−√5·1.4}
    x, y = np.array([[0.3, 0.0]]), np.array([[0.3, 0.7]])
    assert Matern32([1.0, 0.5], variance=2.0)(x, y)[0, 0] == pytest.approx(0.6061304178259842, rel=1e-12)
    assert Matern52([1.0, 0.5], variance=2.0)(x, y)[0, 0] == pytest.approx(0.646455059263522, rel=1e-12)
    assert Matern32(0.5, variance=2.0)(x, x)[0, 0] == pytest.approx(2.0)


def test_linear_context_hand_value():
    X = np.array([[0.5, 9.0, 2.0], [-1.5, 3.0, 4.0]])
    k = LinearContext(2.0, active_dims=(0, 2))
    assert k(X)[0, 1] == pytest.approx(2.0 * (0.5 * -1.5 + 2.0 * 4.0))


def test_scalar_lengthscale_is_isotropic():
    X = _inputs(6)
    np.testing.assert_allclose(SquaredExponential(0.7)(X), SquaredExponential([0.7, 0.7, 0.7])(X), rtol=1e-14)
    assert SquaredExponential(0.7).theta.size == 2


def test_psychophysics_kernel_equals_its_definition():
    X = _inputs(8)
    theta, ell, v = 2.3, np.array([0.6, 1.7]), 1.4
    s, x = X[:, 0], X[:, 1:]
    d2 = (((x[:, None, :] - x[None, :, :]) / ell) ** 2).sum(axis=2)
    by_hand = theta * np.outer(s, s) + v * np.exp(-0.5 * d2)
    np.testing.assert_allclose(psychophysics_kernel(theta, ell, v)(X), by_hand, rtol=1e-13)
    np.testing.assert_allclose(
        psychophysics_kernel(theta, ell, v, context_dims=(0,), system_dims=(1, 2))(X), by_hand, rtol=1e-13
    )
    np.testing.assert_allclose(psychophysics_kernel(theta, 0.8, v)(X).shape, (8, 8))


def test_benchmark_context_kernel_equals_its_definition():
    X = _inputs(8)
    base = SquaredExponential([0.6, 1.7], variance=1.2, active_dims=(1, 2))
    s, x = X[:, 0], X[:, 1:]
    d2 = (((x[:, None, :] - x[None, :, :]) / np.array([0.6, 1.7])) ** 2).sum(axis=2)
    by_hand = np.outer(s, s) * 1.2 * np.exp(-0.5 * d2)
    np.testing.assert_allclose(benchmark_context_kernel(base)(X), by_hand, rtol=1e-13)


def test_gradient_x_is_zero_on_unread_columns():
    X = _inputs(5)
    G = SquaredExponential([0.5, 0.5], active_dims=(0, 2)).gradient_x(X, X[::-1])
    assert np.all(G[:, :, 1] == 0)
    assert np.any(G[:, :, 0] != 0)


def test_lengthscale_count_mismatch_names_the_problem():
    with pytest.raises(ValueError, match="lengthscales"):
        SquaredExponential([1.0, 2.0, 3.0], active_dims=(1, 2))
    with pytest.raises(ValueError, match="lengthscales"):
        Matern52([1.0, 2.0])(np.zeros((3, 3)))


@pytest.mark.parametrize(
    "build",
    [
        lambda: SquaredExponential(0.0),
        lambda: Matern32([1.0, -1.0]),
        lambda: Matern52(1.0, variance=0.0),
        lambda: LinearContext(-2.0),
        lambda: SquaredExponential(np.nan),
    ],
)
def test_non_positive_hyperparameter_raises(build):
    with pytest.raises(ValueError, match="> 0"):
        build()


def test_bad_arguments_raise_value_error():
    with pytest.raises(ValueError, match="unknown hyperparameter"):
        SquaredExponential(1.0, fixed=("lengthscale_typo",))
    with pytest.raises(ValueError, match="bounds"):
        SquaredExponential(1.0, bounds={"variance": (2.0, 1.0)})
    with pytest.raises(ValueError, match="columns"):
        LinearContext(1.0, active_dims=(4,))(np.zeros((2, 3)))
    with pytest.raises(ValueError, match="2-D"):
        SquaredExponential(1.0)(np.zeros(3))
    with pytest.raises(ValueError, match="context"):
        benchmark_context_kernel(SquaredExponential(1.0))
    with pytest.raises(ValueError, match="overlap"):
        psychophysics_kernel(1.0, 1.0, system_dims=(0, 1))


def test_kernels_compose_with_operators():
    a, b = SquaredExponential(1.0), LinearContext(2.0)
    assert isinstance(a + b, Sum) and isinstance(a * b, Product) and isinstance(a + b, Kernel)
    X = _inputs(4)
    np.testing.assert_allclose((a * b)(X), a(X) * b(X))


def test_input_map_measures_distances_between_mapped_points():
    # k(x, x') = v exp(−½ |(A(x − x'))/ℓ|²) by hand, with A the principal-meridian map (S, S + C)
    A = np.array([[1.0, 0.0], [1.0, 1.0]])
    kernel = SquaredExponential([0.9, 1.6], variance=1.1, active_dims=(1, 2), input_map=A)
    X, Y = _inputs(5, seed=3), _inputs(4, seed=4)
    U, V = X[:, 1:] @ A.T, Y[:, 1:] @ A.T
    by_hand = np.array([[1.1 * np.exp(-0.5 * np.sum(((u - v) / [0.9, 1.6]) ** 2)) for v in V] for u in U])
    np.testing.assert_allclose(kernel(X, Y), by_hand, rtol=1e-12)
    # (S, C) = (1, −1) has 1 D in one meridian and none in the other, like the pure cylinder (0, 1):
    # equally far from plano, whereas the sphere (1, 0) has 1 D in both meridians
    iso = SquaredExponential(1.0, active_dims=(0, 1), input_map=A)
    plano = [[0.0, 0.0]]
    np.testing.assert_allclose(iso([[1.0, -1.0]], plano), iso([[0.0, 1.0]], plano), rtol=1e-12)
    np.testing.assert_allclose(iso([[1.0, 0.0]], plano), np.exp(-1.0), rtol=1e-12)


def test_input_map_survives_with_theta():
    kernel = SquaredExponential([0.9, 1.6], active_dims=(1, 2), input_map=[[1.0, 0.0], [1.0, 1.0]])
    moved = kernel.with_theta(kernel.theta + 0.3)
    X = _inputs()
    np.testing.assert_allclose(moved(X), kernel.with_theta(kernel.theta + 0.3)(X))
    np.testing.assert_array_equal(moved.input_map, kernel.input_map)
    assert "input_map" in repr(moved)


@pytest.mark.parametrize("input_map", [[[1.0, 0.0, 2.0]], [1.0, 2.0], [[np.nan, 0.0], [0.0, 1.0]]])
def test_bad_input_map_names_the_problem(input_map):
    with pytest.raises(ValueError, match="input_map"):
        SquaredExponential(1.0, active_dims=(1, 2), input_map=input_map)


def test_acuity_bowl_is_bayesian_linear_regression_on_its_features_by_hand():
    """k = θ φφ' + τ (ψ₀ψ₀' + ψ·ψ'), φ = s − log10(1 + |x − c|²), ψ̄ = (1, x − c)/(1 + |x − c|²)."""
    kernel = AcuityBowl(4.0, 0.5, centre=(1.0,), active_dims=(0, 1))
    a, b = np.array([[0.2, 2.0]]), np.array([[-0.1, 1.0]])
    phi_a, phi_b = 0.2 - np.log10(2.0), -0.1
    psi_a, psi_b = np.array([0.5, 0.5]), np.array([1.0, 0.0])
    expected = 4.0 * phi_a * phi_b + 0.5 * psi_a @ psi_b
    np.testing.assert_allclose(kernel(a, b), [[expected]], rtol=1e-12)


def test_acuity_bowl_latent_is_linear_in_the_letter_size_with_one_slope():
    """f(1, x) − f(0, x) is the same draw of the slope for every lens (what the certainty reads)."""
    kernel = AcuityBowl(3.0, 1.0, centre=(0.0, 0.0), active_dims=(0, 1, 2))
    lenses = np.random.default_rng(2).uniform(-2, 2, size=(6, 2))
    X = np.vstack([np.column_stack([np.zeros(6), lenses]), np.column_stack([np.ones(6), lenses])])
    D = np.hstack([-np.eye(6), np.eye(6)])  # rows: f(1, x_i) − f(0, x_i)
    cov = D @ kernel(X) @ D.T
    np.testing.assert_allclose(cov, np.full((6, 6), 3.0), rtol=1e-12)


def test_acuity_bowl_refuses_a_centre_that_does_not_fit_its_columns():
    with pytest.raises(ValueError, match="centre"):
        AcuityBowl(1.0, 1.0, centre=(0.0, 0.0), active_dims=(0, 1))


def test_a_read_only_input_set_is_scaled_once_and_gives_the_same_covariances():
    """A stationary kernel keeps the scaled columns of a read-only ``Y`` (a fitted model's training
    inputs) between calls; the covariances and gradients are those of a fresh, writable copy, also
    after the kernel has seen another read-only set, and a writable ``Y`` is never kept (it may change)."""
    rng = np.random.default_rng(3)
    kernel = SquaredExponential([0.7, 1.3], variance=2.0, active_dims=(1, 2), input_map=[[1.0, 0.0], [1.0, 1.0]])
    train, other, X = rng.normal(size=(20, 3)), rng.normal(size=(9, 3)), rng.normal(size=(4, 3))
    frozen, frozen_other = train.copy(), other.copy()
    frozen.setflags(write=False)
    frozen_other.setflags(write=False)
    for Y, fresh in [(frozen, train), (frozen_other, other), (frozen, train)]:
        assert np.array_equal(kernel(Y, X), SquaredExponential(**_same(kernel))(fresh.copy(), X))
        assert np.array_equal(kernel.gradient_x(X, Y), SquaredExponential(**_same(kernel)).gradient_x(X, fresh.copy()))
    writable = train.copy()
    kernel(X, writable)
    writable[:, 1:] += 1.0  # changed in place: the next call must see the change
    assert np.array_equal(kernel(X, writable), SquaredExponential(**_same(kernel))(X, writable))


def _same(kernel):
    return dict(
        lengthscales=kernel.lengthscales,
        variance=kernel.variance,
        active_dims=kernel.active_dims,
        input_map=kernel.input_map,
    )
