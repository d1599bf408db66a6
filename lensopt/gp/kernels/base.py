"""Kernel base classes: hyperparameter bookkeeping (theta in log space), shapes and validation,
and the kernel algebra: ``k1 + k2`` (:class:`Sum`) and ``k1 * k2`` (:class:`Product`).

The sum and the product live beside :class:`Kernel`, as in scikit-learn and GPyTorch, so that the
operators need no import of a module that itself builds on this one.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

DEFAULT_LENGTHSCALE_BOUNDS = (1e-2, 1e2)
"""Default (low, high) bounds of a lengthscale, in the units of its input column."""

DEFAULT_VARIANCE_BOUNDS = (1e-3, 1e4)
"""Default (low, high) bounds of a variance (SE/Matérn amplitude, LinearContext slope² θ)."""


@dataclass(frozen=True)
class _Param:
    """One named positive hyperparameter (possibly a vector, e.g. ARD lengthscales)."""

    name: str
    label: str  # name shown in hyperparameter_names, e.g. "lengthscale"
    value: np.ndarray  # 1-D, positive
    bounds: tuple[float, float]
    fixed: bool
    vector: bool  # True: one entry per active column, labelled label[i]


def _as_2d(X, what="X"):
    X = np.asarray(X, dtype=float)
    if X.ndim != 2:
        raise ValueError(f"{what} must be a 2-D array (n_points, n_dims); got shape {X.shape}")
    return X


def _check_dims(active_dims):
    if active_dims is None:
        return None
    dims = tuple(int(i) for i in np.atleast_1d(active_dims))
    if not dims or min(dims) < 0 or len(set(dims)) != len(dims):
        raise ValueError(f"active_dims must be distinct non-negative column indices; got {active_dims}")
    return dims


class Kernel:
    """Abstract covariance function ``k(X, Y)``; see the module docstring for conventions."""

    active_dims: tuple[int, ...] | None = None

    # ---- hyperparameters -------------------------------------------------------------------
    @property
    def theta(self) -> np.ndarray:
        """Log of the free positive hyperparameters, in ``hyperparameter_names`` order."""
        raise NotImplementedError

    @property
    def bounds(self) -> np.ndarray:
        """``(n_theta, 2)`` bounds of ``theta`` (log space)."""
        raise NotImplementedError

    @property
    def hyperparameter_names(self) -> list[str]:
        raise NotImplementedError

    @property
    def n_theta(self) -> int:
        return len(self.theta)

    def with_theta(self, theta) -> Kernel:
        """A new kernel with these log-hyperparameters (fixed ones unchanged)."""
        raise NotImplementedError

    # ---- evaluation ------------------------------------------------------------------------
    def __call__(self, X, Y=None) -> np.ndarray:
        """Covariance matrix ``(n, m)``; ``Y=None`` means ``Y = X``."""
        X = _as_2d(X)
        Y = X if Y is None else _as_2d(Y, "Y")
        if X.shape[1] != Y.shape[1]:
            raise ValueError(f"X and Y must have the same number of columns; got {X.shape[1]} and {Y.shape[1]}")
        return self._k(X, Y)

    def diag(self, X) -> np.ndarray:
        """``k(X_i, X_i)`` as ``(n,)``."""
        return self._diag(_as_2d(X))

    def gradient_theta(self, X) -> np.ndarray:
        """``(n, n, n_theta)``: ``∂K(X, X)/∂theta_j`` with theta in log space."""
        return self._grad_theta(_as_2d(X))

    def gradient_x(self, X, Y) -> np.ndarray:
        """``(n, m, d)``: ``∂k(X_i, Y_j)/∂X_i[k]`` over all ``d`` columns (zero on unread ones)."""
        X, Y = _as_2d(X), _as_2d(Y, "Y")
        if X.shape[1] != Y.shape[1]:
            raise ValueError(f"X and Y must have the same number of columns; got {X.shape[1]} and {Y.shape[1]}")
        return self._grad_x(X, Y)

    def diag_gradient_x(self, X) -> np.ndarray:
        """``(n, d)``: ``∂k(X_i, X_i)/∂X_i`` (zero for stationary kernels)."""
        return self._diag_grad_x(_as_2d(X))

    def __add__(self, other) -> Kernel:
        return Sum(self, other)

    def __mul__(self, other) -> Kernel:
        return Product(self, other)

    # private, inputs already validated 2-D arrays
    def _k(self, X, Y):
        raise NotImplementedError

    def _diag(self, X):
        raise NotImplementedError

    def _grad_theta(self, X):
        raise NotImplementedError

    def _grad_x(self, X, Y):
        raise NotImplementedError

    def _diag_grad_x(self, X):
        raise NotImplementedError


# ---- kernel algebra ----------------------------------------------------------------------
class _Composite(Kernel):
    def __init__(self, k1: Kernel, k2: Kernel):
        if not (isinstance(k1, Kernel) and isinstance(k2, Kernel)):
            raise ValueError(
                f"{type(self).__name__} combines two Kernel objects; got {type(k1).__name__}, {type(k2).__name__}"
            )
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
            raise ValueError(
                f"{type(self).__name__}.with_theta: expected {n1 + self.k2.n_theta} values; got {theta.size}"
            )
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
        return self.k1._diag_grad_x(X) * self.k2._diag(X)[:, None] + self.k1._diag(X)[:, None] * self.k2._diag_grad_x(X)


class _BaseKernel(Kernel):
    """A kernel with its own named hyperparameters (not a sum or product)."""

    prefix = "kernel"

    def __init__(self, params: dict, active_dims, fixed, bounds, default_bounds: dict):
        self.active_dims = _check_dims(active_dims)
        # the active columns as an index array and the columns an input needs, once: _cols runs
        # a few hundred times per decision
        if self.active_dims is not None:
            self._column_index = np.array(self.active_dims, dtype=np.intp)
            self._column_index.setflags(write=False)
            self._n_columns_read = max(self.active_dims) + 1
        fixed = (fixed,) if isinstance(fixed, str) else tuple(fixed)
        bounds = dict(bounds or {})
        unknown = (set(fixed) | set(bounds)) - set(params)
        if unknown:
            raise ValueError(
                f"{type(self).__name__}: unknown hyperparameter(s) {sorted(unknown)}; allowed: {sorted(params)}"
            )
        spec = []
        for name, (label, raw, vector) in params.items():
            value = np.array(raw, dtype=float).reshape(-1)
            if value.size == 0 or not np.all(np.isfinite(value)) or np.any(value <= 0):
                raise ValueError(f"{type(self).__name__}: {name} must be finite and > 0; got {raw}")
            lo, hi = (float(b) for b in bounds.get(name, default_bounds[name]))
            if not 0 < lo < hi:
                raise ValueError(f"{type(self).__name__}: bounds of {name} must satisfy 0 < low < high; got {(lo, hi)}")
            value.setflags(write=False)
            spec.append(_Param(name, label, value, (lo, hi), name in fixed, vector and value.size > 1))
        self._params = tuple(spec)
        self._values = {p.name: p.value for p in spec}
        self._fixed = fixed
        self._bounds_natural = bounds

    def _value(self, name):
        return self._values[name]

    @property
    def theta(self):
        free = [np.log(p.value) for p in self._params if not p.fixed]
        return np.concatenate(free) if free else np.zeros(0)

    @property
    def bounds(self):
        rows = [np.log([p.bounds] * p.value.size) for p in self._params if not p.fixed]
        return np.vstack(rows) if rows else np.zeros((0, 2))

    @property
    def hyperparameter_names(self):
        names = []
        for p in self._params:
            if p.fixed:
                continue
            if p.vector:
                names += [f"{self.prefix}.{p.label}[{i}]" for i in range(p.value.size)]
            else:
                names.append(f"{self.prefix}.{p.label}")
        return names

    def with_theta(self, theta):
        theta = np.asarray(theta, dtype=float).reshape(-1)
        if theta.size != self.n_theta:
            raise ValueError(f"{type(self).__name__}.with_theta: expected {self.n_theta} values; got {theta.size}")
        values: dict[str, Any] = {}
        i = 0
        for p in self._params:
            if p.fixed:
                values[p.name] = p.value
            else:
                new = np.exp(theta[i : i + p.value.size])
                values[p.name] = new if p.value.size > 1 else float(new[0])
                i += p.value.size
        return type(self)(
            **values,
            active_dims=self.active_dims,
            fixed=self._fixed,
            bounds=self._bounds_natural,
            **self._structure_kwargs(),
        )

    def _structure_kwargs(self) -> dict:
        """Constructor arguments other than hyperparameters that ``with_theta`` must carry over."""
        return {}

    def _cols(self, X):
        if self.active_dims is None:
            return X
        self._check_columns(X)
        return X[:, self._column_index]

    def _check_columns(self, X):
        """Refuse an ``X`` without every column this kernel reads."""
        if self.active_dims is not None and self._n_columns_read > X.shape[1]:
            raise ValueError(f"{type(self).__name__} reads columns {self.active_dims} but X has {X.shape[1]} columns")

    def _embed(self, grad_active, d):
        """Scatter a gradient over the active columns into all ``d`` columns."""
        if self.active_dims is None:
            return grad_active
        out = np.zeros(grad_active.shape[:-1] + (d,))
        out[..., self._column_index] = grad_active
        return out

    def _select_free(self, grads):
        """Stack per-parameter gradients ``(n, n, size)`` keeping only the free ones."""
        kept = [g for g, p in zip(grads, self._params) if not p.fixed]
        if not kept:
            return np.zeros(grads[0].shape[:2] + (0,))
        return np.concatenate(kept, axis=2)

    def __repr__(self):
        args = ", ".join(
            f"{p.name}={p.value.tolist() if p.value.size > 1 else float(p.value[0])}" for p in self._params
        )
        return f"{type(self).__name__}({args}, active_dims={self.active_dims}, fixed={self._fixed})"
