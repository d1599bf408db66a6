"""The acuity-bowl kernel: the acuity law around a starting lens, with a slope and a shift to learn.

A patient whose correction is ``x*`` reads a letter of size ``s`` through the lens ``x`` (power
vectors, D) with the latent ``f = w (s − VA_best − log10(1 + |x − x*|²))`` (METHOD.md §1, the
Blendowske acuity law). Around a starting refraction ``c`` with ``x* = c + δ`` and a small ``δ``,

    log10(1 + |x − x*|²) ≈ v(x) − (2/ln 10) δ·ψ(x) + (|δ|²/ln 10) ψ₀(x),
    v(x) = log10(1 + |x − c|²),   ψ(x) = (x − c) / (1 + |x − c|²),   ψ₀(x) = 1 / (1 + |x − c|²),

so, up to the slope's product with the small terms, ``f`` is linear in the features

    φ(s, x) = s − v(x)          with weight w (the psychometric slope),
    ψ₀(x), ψ(x)                 with weights carrying the shift δ of the correction from c.

A Gaussian prior on the weights is the kernel
``k = θ φ(z) φ(z') + τ (ψ₀(x) ψ₀(x') + ψ(x)·ψ(x'))`` (Bayesian linear regression, R&W §2.1.2),
``θ`` the prior variance of the slope and ``τ`` of the shift's weights. Added to a stationary
kernel it replaces the psychophysics kernel's ``θ s s'``: the slope now multiplies the bowl as well
as the letter size, so the model knows the shape of the acuity surface and learns from each answer
how far and in which direction the patient's correction lies from the start — what the stationary
part would otherwise have to learn point by point. The stationary part keeps the rest (a far
shift, accommodation's plateau on the minus side). The latent stays ``f(s, x) = w s + g(x)``, so
the slope is ``f(1, x) − f(0, x)`` for every ``x`` (the stopping rule's certainty relies on it).
"""

from __future__ import annotations

import math

import numpy as np

from lensopt.gp.kernels.base import DEFAULT_VARIANCE_BOUNDS, _BaseKernel

_LN10 = math.log(10.0)


class AcuityBowl(_BaseKernel):
    """``θ φ(z) φ(z') + τ ψ̄(x)·ψ̄(x')`` with ``φ = s − log10(1 + |x − c|²)`` and
    ``ψ̄ = (1, x − c) / (1 + |x − c|²)`` (see the module docstring). ``active_dims``: the context
    column first, then the system columns (as many as ``centre``)."""

    prefix = "bowl"

    def __init__(
        self, slope_variance=1.0, shift_variance=1.0, centre=(0.0,), active_dims=(0, 1), fixed=(), bounds=None
    ):
        super().__init__(
            {
                "slope_variance": ("slope_variance", slope_variance, False),
                "shift_variance": ("shift_variance", shift_variance, False),
            },
            active_dims,
            fixed,
            bounds,
            {"slope_variance": DEFAULT_VARIANCE_BOUNDS, "shift_variance": DEFAULT_VARIANCE_BOUNDS},
        )
        self.centre = np.asarray(centre, dtype=float).reshape(-1)
        if self.active_dims is None or len(self.active_dims) != self.centre.size + 1:
            raise ValueError(
                f"AcuityBowl reads the context column and one column per centre value: active_dims "
                f"{self.active_dims} for a centre of {self.centre.size}"
            )
        if not np.all(np.isfinite(self.centre)):
            raise ValueError(f"AcuityBowl: centre must be finite, got {centre!r}")

    def _structure_kwargs(self) -> dict:
        return {"centre": tuple(self.centre)}

    @property
    def slope_variance(self) -> float:
        return float(self._value("slope_variance")[0])

    @property
    def shift_variance(self) -> float:
        return float(self._value("shift_variance")[0])

    def _scales(self) -> np.ndarray:
        n = self.centre.size
        return np.sqrt(np.r_[self.slope_variance, np.full(n + 1, self.shift_variance)])

    def values(self, X) -> np.ndarray:
        """Scaled features ``(n, 2 + n_sys)``: ``√θ φ``, ``√τ ψ₀``, ``√τ ψ``."""
        Z = self._cols(np.asarray(X, dtype=float))
        s, r = Z[:, 0], Z[:, 1:] - self.centre
        q = 1.0 + np.sum(r**2, axis=1)
        F = np.empty((r.shape[0], r.shape[1] + 2))
        F[:, 0] = s - np.log(q) / _LN10
        F[:, 1] = 1.0 / q
        F[:, 2:] = r / q[:, None]
        return F * self._scales()

    def features(self, X) -> tuple[np.ndarray, np.ndarray]:
        """:meth:`values` and their gradients ``(n, 2 + n_sys, n_active)`` in the active columns."""
        Z = self._cols(np.asarray(X, dtype=float))
        r = Z[:, 1:] - self.centre
        q = 1.0 + np.sum(r**2, axis=1)
        n, m = r.shape
        G = np.zeros((n, m + 2, m + 1))
        G[:, 0, 0] = 1.0
        G[:, 0, 1:] = -2.0 * r / (q[:, None] * _LN10)
        G[:, 1, 1:] = -2.0 * r / (q**2)[:, None]
        eye = np.eye(m)
        G[:, 2:, 1:] = eye[None, :, :] / q[:, None, None] - 2.0 * r[:, :, None] * r[:, None, :] / (q**2)[:, None, None]
        return self.values(X), G * self._scales()[None, :, None]

    def _k(self, X, Y):
        return self.values(X) @ self.values(Y).T

    def _diag(self, X):
        F = self.values(X)
        return np.einsum("ij,ij->i", F, F)

    def _grad_theta(self, X):
        F = self.values(X)
        slope = F[:, :1] @ F[:, :1].T
        shift = F[:, 1:] @ F[:, 1:].T
        return self._select_free([slope[:, :, None], shift[:, :, None]])

    def _grad_x(self, X, Y):
        _, G = self.features(X)
        FY = self.values(Y)
        return self._embed(np.einsum("nka,mk->nma", G, FY), X.shape[1])

    def _diag_grad_x(self, X):
        F, G = self.features(X)
        return self._embed(2.0 * np.einsum("nka,nk->na", G, F), X.shape[1])
