"""The preference kernel: the covariance of duel values ``g(s, x, x') = f(s, x) − f(s, x')``.

A duel input is ``z = [s (n_context columns), x (d), x' (d)]``; the utility ``f ~ GP(0, k)`` lives on
``[s, x]``. With ``a = (s, x)``, ``a' = (s, x')`` and ``b``, ``b'`` likewise for ``w = [t, y, y']``
(companion paper eqs. 5–6; METHOD.md §5):

    k_g(z, w) = k(a, b) + k(a', b') − k(a, b') − k(a', b)
    cov(f(a), g(w)) = k(a, b) − k(a, b')

so a duel model is :class:`lensopt.gp.GPClassifier` with this kernel on duel inputs, and every
hyperparameter of ``k`` is a hyperparameter of ``k_g`` (same ``theta``, same bounds).
"""

from __future__ import annotations

import numpy as np

from lensopt.gp.kernels import Kernel
from lensopt.gp.kernels.base import _as_2d

DIAG_BLOCK = 256
"""Rows per block when a diagonal ``k(a_i, a'_i)`` is read off a block of the full cross matrix."""


class PreferenceKernel(Kernel):
    """``k_g`` on duel inputs ``[s, x, x']`` from a base kernel ``k`` on ``[s, x]``.

    ``base``: a :class:`Kernel` whose ``active_dims`` index the ``n_context + d`` columns of
    ``[s, x]``; ``n_context``: number of context columns (0 without a context). ``d`` is read from
    the inputs: a duel input has ``n_context + 2 d`` columns.
    """

    def __init__(self, base: Kernel, n_context: int = 0):
        if not isinstance(base, Kernel):
            raise ValueError(f"PreferenceKernel needs a lensopt Kernel as base; got {type(base).__name__}")
        if isinstance(n_context, bool) or int(n_context) != n_context or n_context < 0:
            raise ValueError(f"n_context must be a non-negative integer; got {n_context!r}")
        self.base = base
        self.n_context = int(n_context)
        self.active_dims = None

    # ---- hyperparameters: those of the base kernel --------------------------------------------
    @property
    def theta(self):
        return self.base.theta

    @property
    def bounds(self):
        return self.base.bounds

    @property
    def hyperparameter_names(self):
        return self.base.hyperparameter_names

    def with_theta(self, theta) -> PreferenceKernel:
        return PreferenceKernel(self.base.with_theta(theta), self.n_context)

    def __repr__(self):
        return f"PreferenceKernel({self.base!r}, n_context={self.n_context})"

    # ---- the two members of a duel ------------------------------------------------------------
    def n_system(self, n_columns: int) -> int:
        """``d`` for duel inputs with ``n_columns`` columns (``n_context + 2 d``)."""
        d2 = n_columns - self.n_context
        if d2 <= 0 or d2 % 2:
            raise ValueError(
                f"duel inputs need n_context + 2·d columns ([s, x, x']) with n_context = {self.n_context}; "
                f"got {n_columns} columns"
            )
        return d2 // 2

    def split(self, Z) -> tuple[np.ndarray, np.ndarray]:
        """``(A, A')``: the utility inputs ``[s, x]`` and ``[s, x']`` of duels ``Z`` ``(n, k + 2d)``."""
        Z = _as_2d(Z, "Z")
        d, k = self.n_system(Z.shape[1]), self.n_context
        return Z[:, : k + d], np.hstack([Z[:, :k], Z[:, k + d :]])

    def _stacked(self, Z):
        """``[A; A']`` ``(2n, k + d)``: both members' utility inputs in one array (one base call)."""
        A, A2 = self.split(Z)
        return np.vstack([A, A2]), A.shape[0]

    def _check_utility(self, X, Z):
        X = _as_2d(X)
        U, m = self._stacked(Z)
        if X.shape[1] != U.shape[1]:
            raise ValueError(f"utility inputs need {U.shape[1]} columns [s, x]; got {X.shape[1]}")
        return X, U, m

    def cross_cov(self, X, Z) -> np.ndarray:
        """``cov(f(X_i), g(Z_j)) = k(X_i, B_j) − k(X_i, B'_j)`` as ``(n, m)``, ``X`` ``(n, k + d)``."""
        X, V, m = self._check_utility(X, Z)
        K = self.base._k(X, V)
        return K[:, :m] - K[:, m:]

    def cross_cov_gradient_x(self, X, Z) -> np.ndarray:
        """``(n, m, k + d)``: ``∂ cov(f(X_i), g(Z_j)) / ∂X_i``."""
        X, V, m = self._check_utility(X, Z)
        G = self.base._grad_x(X, V)
        return G[:, :m] - G[:, m:]

    # ---- private, inputs already 2-D; both members are stacked so each base call is one call ---
    def _k(self, Z, W):
        (U, n), (V, m) = self._stacked(Z), self._stacked(W)
        K = self.base._k(U, V)
        return K[:n, :m] + K[n:, m:] - K[:n, m:] - K[n:, :m]

    def _paired(self, function, X, Y):
        """``function(X, Y)[i, i]`` for every row, block by block (never the full n × n matrix)."""
        blocks = []
        for start in range(0, X.shape[0], DIAG_BLOCK):
            block = function(X[start : start + DIAG_BLOCK], Y[start : start + DIAG_BLOCK])
            idx = np.arange(block.shape[0])
            blocks.append(block[idx, idx])
        return np.concatenate(blocks, axis=0)

    def _diag(self, Z):
        U, n = self._stacked(Z)
        if n == 0:
            return np.zeros(0)
        diag = self.base._diag(U)
        return diag[:n] + diag[n:] - 2.0 * self._paired(self.base._k, U[:n], U[n:])

    def _grad_theta(self, Z):
        U, n = self._stacked(Z)
        G = self.base._grad_theta(U)  # (2n, 2n, p): blocks [[AA, AA'], [A'A, A'A']]
        return G[:n, :n] + G[n:, n:] - G[:n, n:] - G[n:, :n]

    def _grad_x(self, Z, W):
        (U, n), (V, m) = self._stacked(Z), self._stacked(W)
        k, d = self.n_context, U.shape[1] - self.n_context
        G = self.base._grad_x(U, V)
        gAB, gAB2, gA2B, gA2B2 = G[:n, :m], G[:n, m:], G[n:, :m], G[n:, m:]
        out = np.empty((n, m, k + 2 * d))
        out[..., :k] = (gAB + gA2B2 - gAB2 - gA2B)[..., :k]  # s appears in all four terms
        out[..., k : k + d] = (gAB - gAB2)[..., k:]  # x only in a
        out[..., k + d :] = (gA2B2 - gA2B)[..., k:]  # x' only in a'
        return out

    def _diag_grad_x(self, Z):
        # k_g(z, z) = k(a, a) + k(a', a') − 2 k(a, a'); by symmetry ∂k(a, a')/∂a' = ∂₁k(a', a)
        U, n = self._stacked(Z)
        k, d = self.n_context, U.shape[1] - self.n_context
        if n == 0:
            return np.zeros((0, k + 2 * d))
        own = self.base._diag_grad_x(U)
        cross = self._paired(self.base._grad_x, U, np.vstack([U[n:], U[:n]]))  # rows: ∂₁k(a, a'), ∂₁k(a', a)
        dA, dA2, cA, cA2 = own[:n], own[n:], cross[:n], cross[n:]
        out = np.empty((n, k + 2 * d))
        out[:, :k] = (dA + dA2 - 2.0 * (cA + cA2))[:, :k]
        out[:, k : k + d] = (dA - 2.0 * cA)[:, k:]
        out[:, k + d :] = (dA2 - 2.0 * cA2)[:, k:]
        return out


def duel_inputs(context, first, second) -> np.ndarray:
    """Duel inputs ``[s, x, x']`` ``(n, k + 2d)`` from a context ``(k,)`` or ``(n, k)`` and members
    ``(d,)`` or ``(n, d)``, broadcast over rows (an empty context gives ``[x, x']``)."""
    parts = [np.asarray(a, dtype=float) for a in (context, first, second)]
    parts = [a.reshape(1, -1) if a.ndim < 2 else a for a in parts]
    n = max(a.shape[0] for a in parts)
    return np.hstack([np.broadcast_to(a, (n, a.shape[1])) for a in parts])
