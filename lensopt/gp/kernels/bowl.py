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

#: Inputs of at least this many rows have their features kept between calls (:meth:`AcuityBowl._training_values`).
_CACHE_MIN_ROWS = 8


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
        # the features' scales (√θ, √τ, …, √τ): a kernel's hyperparameters never change (with_theta
        # builds a new kernel), so they are computed once
        self._theta, self._tau = self.slope_variance, self.shift_variance
        self._feature_scales = np.sqrt(np.concatenate([[self._theta], np.full(self.centre.size + 1, self._tau)]))
        self._feature_scales.setflags(write=False)
        self._values_cache: tuple | None = None
        self._offsets_cache: tuple | None = None

    def _structure_kwargs(self) -> dict:
        return {"centre": tuple(self.centre)}

    @property
    def slope_variance(self) -> float:
        return float(self._value("slope_variance")[0])

    @property
    def shift_variance(self) -> float:
        return float(self._value("shift_variance")[0])

    def _scales(self) -> np.ndarray:
        return self._feature_scales

    def _offsets(self, X) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """The letter size ``s``, the offset ``r = x − c`` and ``q = 1 + |r|²`` of the rows of ``X``.

        A prediction with gradients asks for the same test points four times (covariance, its
        diagonal and both gradients): the last points' offsets are kept while their values are the
        same (compared by value)."""
        X = np.asarray(X, dtype=float)
        key = (X.shape, X.tobytes())
        cached = self._offsets_cache
        if cached is not None and cached[0] == key:
            return cached[1]
        Z = X if self.active_dims == tuple(range(X.shape[1])) else self._cols(X)
        r = Z[:, 1:] - self.centre
        offsets = (Z[:, 0].copy(), r, 1.0 + np.sum(r**2, axis=1))
        for array in offsets:
            array.setflags(write=False)
        self._offsets_cache = (key, offsets)
        return offsets

    def values(self, X) -> np.ndarray:
        """Scaled features ``(n, 2 + n_sys)``: ``√θ φ``, ``√τ ψ₀``, ``√τ ψ``."""
        s, r, q = self._offsets(X)
        F = np.empty((r.shape[0], r.shape[1] + 2))
        F[:, 0] = s - np.log(q) / _LN10
        F[:, 1] = 1.0 / q
        F[:, 2:] = r / q[:, None]
        return F * self._scales()

    def _training_values(self, X) -> np.ndarray:
        """:meth:`values` of a set of inputs the GP asks about again and again (its training
        inputs, against every test point of a search): the last such set's features are kept and
        reused while its rows are the same (compared by value, so a changed array is recomputed)."""
        X = np.asarray(X, dtype=float)
        if X.shape[0] < _CACHE_MIN_ROWS:
            return self.values(X)
        key = (X.shape, X.tobytes())
        cached = self._values_cache
        if cached is None or cached[0] != key:
            cached = self._values_cache = (key, self.values(X))
        return cached[1]

    def features(self, X) -> tuple[np.ndarray, np.ndarray]:
        """:meth:`values` and their gradients ``(n, 2 + n_sys, n_active)`` in the active columns."""
        _, r, q = self._offsets(X)
        n, m = r.shape
        G = np.zeros((n, m + 2, m + 1))
        G[:, 0, 0] = 1.0
        G[:, 0, 1:] = -2.0 * r / (q[:, None] * _LN10)
        G[:, 1, 1:] = -2.0 * r / (q**2)[:, None]
        eye = np.eye(m)
        G[:, 2:, 1:] = eye[None, :, :] / q[:, None, None] - 2.0 * r[:, :, None] * r[:, None, :] / (q**2)[:, None, None]
        return self.values(X), G * self._scales()[None, :, None]

    def _k(self, X, Y):
        return self._training_values(X) @ self._training_values(Y).T

    def _diag(self, X):
        # |F|² = θ φ² + τ (1 + |r|²) / q² = θ φ² + τ / q
        s, _, q = self._offsets(X)
        phi = s - np.log(q) / _LN10
        return self._theta * phi**2 + self._tau / q

    def _grad_theta(self, X):
        F = self.values(X)
        slope = F[:, :1] @ F[:, :1].T
        shift = F[:, 1:] @ F[:, 1:].T
        return self._select_free([slope[:, :, None], shift[:, :, None]])

    def _grad_x(self, X, Y):
        # k(x, y) = √θ φ(x) F₀(y) + √τ (ψ₀(x) F₁(y) + ψ(x)·F₂(y)) with F = values(y); in x's offset r:
        # ∂φ/∂r = −2r/(q ln10), ∂ψ₀/∂r = −2r/q², ∂ψ_k/∂r_l = δ_kl/q − 2 r_k r_l/q²
        _, r, q = self._offsets(X)
        FY = self._training_values(Y)
        root_theta, root_tau = math.sqrt(self._theta), math.sqrt(self._tau)
        n, m = r.shape
        coef = (-2.0 * root_theta / (q * _LN10))[:, None] * FY[None, :, 0] + (-2.0 * root_tau / q**2)[:, None] * (
            FY[None, :, 1] + r @ FY[:, 2:].T
        )
        grad = np.empty((n, FY.shape[0], m + 1))
        grad[:, :, 0] = root_theta * FY[None, :, 0]
        grad[:, :, 1:] = coef[:, :, None] * r[:, None, :] + (root_tau / q)[:, None, None] * FY[None, :, 2:]
        return self._embed(grad, X.shape[1])

    def _embed(self, grad_active, d):
        if self.active_dims == tuple(range(d)):
            return grad_active  # every column is read, in order: nothing to scatter
        return super()._embed(grad_active, d)

    def _diag_grad_x(self, X):
        # ∂/∂s (θ φ² + τ/q) = 2θφ;  ∂/∂r = 2θφ ∂φ/∂r − 2τ r/q²
        s, r, q = self._offsets(X)
        phi = s - np.log(q) / _LN10
        grad = np.empty((r.shape[0], r.shape[1] + 1))
        grad[:, 0] = 2.0 * self._theta * phi
        grad[:, 1:] = (-4.0 * self._theta * phi / (q * _LN10) - 2.0 * self._tau / q**2)[:, None] * r
        return self._embed(grad, X.shape[1])
