"""The acuity-bowl kernel's closed forms against its features (lensopt.gp.kernels.bowl)."""

import numpy as np

from lensopt.gp.kernels.bowl import AcuityBowl


def _kernel():
    # the context in column 3, the system in columns 0 and 2: column 1 unread
    return AcuityBowl(3.0, 0.6, centre=(0.4, -0.3), active_dims=(3, 0, 2))


def _inputs(n, seed):
    return np.random.default_rng(seed).uniform(-1.5, 1.5, size=(n, 4))


def _embedded(kernel, grad_active, d):
    out = np.zeros(grad_active.shape[:-1] + (d,))
    out[..., list(kernel.active_dims)] = grad_active
    return out


def test_the_diagonal_and_the_gradients_are_those_of_the_features():
    kernel = _kernel()
    X, Y = _inputs(5, 0), _inputs(12, 1)
    F, G = kernel.features(X)
    FY = kernel.values(Y)
    np.testing.assert_allclose(kernel(X, Y), F @ FY.T, rtol=1e-13, atol=1e-13)
    np.testing.assert_allclose(kernel.diag(X), np.einsum("ij,ij->i", F, F), rtol=1e-13, atol=1e-13)
    np.testing.assert_allclose(
        kernel.gradient_x(X, Y), _embedded(kernel, np.einsum("nka,mk->nma", G, FY), 4), rtol=1e-12, atol=1e-13
    )
    np.testing.assert_allclose(
        kernel.diag_gradient_x(X), _embedded(kernel, 2.0 * np.einsum("nka,nk->na", G, F), 4), rtol=1e-12, atol=1e-13
    )
    assert np.all(kernel.gradient_x(X, Y)[..., 1] == 0.0) and np.all(kernel.diag_gradient_x(X)[:, 1] == 0.0)


def test_the_diagonal_gradient_matches_finite_differences():
    kernel = _kernel()
    X = _inputs(6, 2)
    h = 1e-6
    numeric = np.zeros_like(X)
    for j in range(X.shape[1]):
        step = np.zeros_like(X)
        step[:, j] = h
        numeric[:, j] = (kernel.diag(X + step) - kernel.diag(X - step)) / (2 * h)
    np.testing.assert_allclose(kernel.diag_gradient_x(X), numeric, rtol=1e-6, atol=1e-7)


def test_kept_training_features_follow_a_changed_array():
    """The features of a large input set are kept between calls, but only while its values are the
    same: an array changed in place, or a new one, is computed afresh."""
    kernel = _kernel()
    X, Y = _inputs(3, 3), _inputs(20, 4)
    first = kernel(Y, X)
    assert np.array_equal(kernel(Y, X), first)
    Y[5, 0] += 0.5
    np.testing.assert_allclose(kernel(Y, X), kernel.values(Y) @ kernel.values(X).T, rtol=1e-13)
    assert not np.allclose(kernel(Y, X), first)
