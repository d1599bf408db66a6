"""Sums and products of kernels, and the two presets of Fauvel & Chalk (contextual binary BO)."""

from __future__ import annotations

import numpy as np

from lensopt.gp.kernels.base import Kernel, _check_dims
from lensopt.gp.kernels.linear import LinearContext
from lensopt.gp.kernels.stationary import SquaredExponential


class _Composite(Kernel):
    def __init__(self, k1: Kernel, k2: Kernel):
        if not (isinstance(k1, Kernel) and isinstance(k2, Kernel)):
            raise ValueError(f"{type(self).__name__} combines two Kernel objects; got {type(k1).__name__}, {type(k2).__name__}")
        self.k1, self.k2 = k1, k2
        if k1.active_dims is None or k2.active_dims is None:
            self.active_dims = None
        else:
            self.active_dims = tuple(sorted(set(k1.active_dims) | set(k2.active_dims)))

    @property
    def theta(self):
        return np.concatenate([self.k1.theta, self.k2.theta])

    @property
    def bounds(self):
        return np.vstack([self.k1.bounds, self.k2.bounds])

    @property
    def hyperparameter_names(self):
        return self.k1.hyperparameter_names + self.k2.hyperparameter_names

    def with_theta(self, theta):
        theta = np.asarray(theta, dtype=float).reshape(-1)
        n1 = self.k1.n_theta
        if theta.size != n1 + self.k2.n_theta:
            raise ValueError(f"{type(self).__name__}.with_theta: expected {n1 + self.k2.n_theta} values; got {theta.size}")
        return type(self)(self.k1.with_theta(theta[:n1]), self.k2.with_theta(theta[n1:]))

    def __repr__(self):
        return f"{type(self).__name__}({self.k1!r}, {self.k2!r})"


class Sum(_Composite):
    """``k1 + k2``; theta is k1's then k2's."""

    def _k(self, X, Y):
        return self.k1._k(X, Y) + self.k2._k(X, Y)

    def _diag(self, X):
        return self.k1._diag(X) + self.k2._diag(X)

    def _grad_theta(self, X):
        return np.concatenate([self.k1._grad_theta(X), self.k2._grad_theta(X)], axis=2)

    def _grad_x(self, X, Y):
        return self.k1._grad_x(X, Y) + self.k2._grad_x(X, Y)

    def _diag_grad_x(self, X):
        return self.k1._diag_grad_x(X) + self.k2._diag_grad_x(X)


class Product(_Composite):
    """``k1 · k2``; theta is k1's then k2's (product rule for every gradient)."""

    def _k(self, X, Y):
        return self.k1._k(X, Y) * self.k2._k(X, Y)

    def _diag(self, X):
        return self.k1._diag(X) * self.k2._diag(X)

    def _grad_theta(self, X):
        K1, K2 = self.k1._k(X, X), self.k2._k(X, X)
        return np.concatenate(
            [self.k1._grad_theta(X) * K2[:, :, None], K1[:, :, None] * self.k2._grad_theta(X)], axis=2
        )

    def _grad_x(self, X, Y):
        K1, K2 = self.k1._k(X, Y), self.k2._k(X, Y)
        return self.k1._grad_x(X, Y) * K2[:, :, None] + K1[:, :, None] * self.k2._grad_x(X, Y)

    def _diag_grad_x(self, X):
        return (
            self.k1._diag_grad_x(X) * self.k2._diag(X)[:, None]
            + self.k1._diag(X)[:, None] * self.k2._diag_grad_x(X)
        )


def psychophysics_kernel(theta, lengthscales, variance=1.0, context_dims=(0,), system_dims=None) -> Sum:
    """``θ s·s' + k_SE(x, x')`` (Fauvel & Chalk, contextual binary BO, eq. 15).

    ``system_dims=None`` means the columns right after the context columns: one per lengthscale
    for ARD lengthscales, or two (the refraction layout ``sphere_d, cylinder_d``) for a scalar one.
    """
    context_dims = _check_dims(context_dims)
    if system_dims is None:
        n_system = np.size(lengthscales) if np.ndim(lengthscales) == 1 else 2
        start = max(context_dims) + 1
        system_dims = tuple(range(start, start + n_system))
    system_dims = _check_dims(system_dims)
    if set(system_dims) & set(context_dims):
        raise ValueError(f"system_dims {system_dims} overlap context_dims {context_dims}")
    return LinearContext(theta, active_dims=context_dims) + SquaredExponential(
        lengthscales, variance, active_dims=system_dims
    )


def benchmark_context_kernel(base: Kernel, context_dims=(0,)) -> Product:
    """``s s' k(x, x')`` (Fauvel & Chalk §4, ``P = Φ(s g(x))``); ``base`` must read only system columns."""
    context_dims = _check_dims(context_dims)
    if base.active_dims is None or set(base.active_dims) & set(context_dims):
        raise ValueError(
            f"benchmark_context_kernel: base kernel reads columns {base.active_dims}, which include the "
            f"context columns {context_dims}; build it with active_dims set to the system columns"
        )
    return LinearContext(1.0, active_dims=context_dims, fixed=("variance",)) * base
