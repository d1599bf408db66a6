"""The linear context kernel ``θ s·s'`` (Fauvel & Chalk, contextual binary BO, eq. 15)."""

from __future__ import annotations

import numpy as np

from lensopt.gp.kernels.base import DEFAULT_VARIANCE_BOUNDS, _BaseKernel


class LinearContext(_BaseKernel):
    """``θ s·s'`` over the active (context) columns: a psychometric slope ``√θ`` shared by all x."""

    prefix = "linear"

    def __init__(self, variance=1.0, active_dims=(0,), fixed=(), bounds=None):
        super().__init__(
            {"variance": ("variance", variance, False)},
            active_dims,
            fixed,
            bounds,
            {"variance": DEFAULT_VARIANCE_BOUNDS},
        )

    @property
    def variance(self) -> float:
        return float(self._value("variance")[0])

    def _k(self, X, Y):
        return self.variance * (self._cols(X) @ self._cols(Y).T)

    def _diag(self, X):
        S = self._cols(X)
        return self.variance * np.einsum("ij,ij->i", S, S)

    def _grad_theta(self, X):
        return self._select_free([self._k(X, X)[:, :, None]])

    def _grad_x(self, X, Y):
        S = self.variance * self._cols(Y)
        return self._embed(np.repeat(S[None, :, :], X.shape[0], axis=0), X.shape[1])

    def _diag_grad_x(self, X):
        return self._embed(2.0 * self.variance * self._cols(X), X.shape[1])
