"""Stationary ARD kernels ``k = v g(r²)``: squared exponential and Matérn 3/2, 5/2.

With ``r² = Σ_k ((x_k − x'_k) / ℓ_k)²`` every gradient follows from ``h = dg/d(r²)``:
``∂k/∂log ℓ_k = −2 v h Δ_k²/ℓ_k²`` and ``∂k/∂x_k = 2 v h Δ_k/ℓ_k²`` (Rasmussen & Williams 2006,
eqs. 4.9, 4.14 and 4.17). Each kernel can draw frequencies from its spectral density for random
Fourier features (Rahimi & Recht 2007), used by :mod:`lensopt.gp.sampling`.
"""

from __future__ import annotations

import numpy as np

from lensopt.gp.kernels.base import (
    DEFAULT_LENGTHSCALE_BOUNDS,
    DEFAULT_VARIANCE_BOUNDS,
    _BaseKernel,
    _check_dims,
)


class _Stationary(_BaseKernel):
    """``k = v g(r²)`` with ARD (or isotropic, for a scalar lengthscale) scaled distance r."""

    def __init__(self, lengthscales, variance=1.0, active_dims=None, fixed=(), bounds=None):
        lengthscales_arr = np.array(lengthscales, dtype=float)
        dims = _check_dims(active_dims)
        if lengthscales_arr.ndim > 1:
            raise ValueError(f"{type(self).__name__}: lengthscales must be a scalar or 1-D; got shape {lengthscales_arr.shape}")
        if lengthscales_arr.ndim == 1 and dims is not None and lengthscales_arr.size not in (1, len(dims)):
            raise ValueError(
                f"{type(self).__name__}: {lengthscales_arr.size} lengthscales for {len(dims)} active columns "
                f"{dims}; give one per active column or a scalar"
            )
        super().__init__(
            {"lengthscales": ("lengthscale", lengthscales, True), "variance": ("variance", variance, False)},
            dims,
            fixed,
            bounds,
            {"lengthscales": DEFAULT_LENGTHSCALE_BOUNDS, "variance": DEFAULT_VARIANCE_BOUNDS},
        )

    @property
    def lengthscales(self) -> np.ndarray:
        return self._value("lengthscales")

    @property
    def variance(self) -> float:
        return float(self._value("variance")[0])

    def _g(self, r2):
        """Return ``g(r²)`` and ``h = dg/d(r²)``."""
        raise NotImplementedError

    def _scaled_cols(self, X, Y):
        Xa, Ya = self._cols(X), self._cols(Y)
        ell = self.lengthscales
        if ell.size > 1 and ell.size != Xa.shape[1]:
            raise ValueError(
                f"{type(self).__name__}: {ell.size} lengthscales but {Xa.shape[1]} active columns; "
                "give one per active column or set active_dims"
            )
        return Xa / ell, Ya / ell

    def _scaled_diff(self, X, Y):
        Xs, Ys = self._scaled_cols(X, Y)
        return Xs[:, None, :] - Ys[None, :, :]

    def _k(self, X, Y):
        Xs, Ys = self._scaled_cols(X, Y)
        r2 = np.zeros((Xs.shape[0], Ys.shape[0]))
        for k in range(Xs.shape[1]):  # column by column: no (n, m, d) temporary
            r2 += np.subtract.outer(Xs[:, k], Ys[:, k]) ** 2
        return self.variance * self._g(r2)[0]

    def _diag(self, X):
        self._cols(X)
        return np.full(X.shape[0], self.variance)

    def _grad_theta(self, X):
        D = self._scaled_diff(X, X)
        g, h = self._g(np.einsum("ijk,ijk->ij", D, D))
        v = self.variance
        d_ell = -2.0 * v * h[:, :, None] * D**2
        if self.lengthscales.size == 1:
            d_ell = d_ell.sum(axis=2, keepdims=True)
        return self._select_free([d_ell, (v * g)[:, :, None]])

    def _grad_x(self, X, Y):
        D = self._scaled_diff(X, Y)
        h = self._g(np.einsum("ijk,ijk->ij", D, D))[1]
        return self._embed(2.0 * self.variance * h[:, :, None] * D / self.lengthscales, X.shape[1])

    def _diag_grad_x(self, X):
        self._cols(X)
        return np.zeros(X.shape)

    def _ell_for(self, n_active):
        ell = self.lengthscales
        return np.full(n_active, ell[0]) if ell.size == 1 else ell

    def _spectral_frequencies(self, n_frequencies, n_active, rng):
        """Frequencies ``ω`` ``(n_frequencies, n_active)`` drawn from the normalized spectral density
        ``S(ω)/v`` of this kernel, so ``E[cos(ωᵀ(x − x'))] = k(x, x')/v`` (Bochner; Rahimi & Recht 2007)."""
        raise NotImplementedError


class SquaredExponential(_Stationary):
    """``v exp(−½ Σ_k (Δ_k/ℓ_k)²)`` (R&W eq. 4.9, ARD). Spectral density: ``N(0, diag(ℓ⁻²))``."""

    prefix = "se"

    def _g(self, r2):
        g = np.exp(-0.5 * r2)
        return g, -0.5 * g

    def _spectral_frequencies(self, n_frequencies, n_active, rng):
        return rng.standard_normal((n_frequencies, n_active)) / self._ell_for(n_active)


class _Matern(_Stationary):
    """Matérn-ν; spectral density of the scaled input: multivariate Student-t with 2ν dof."""

    nu = None

    def _spectral_frequencies(self, n_frequencies, n_active, rng):
        # ω = z sqrt(2ν/u), z ~ N(0, I), u ~ χ²(2ν): density ∝ (1 + |ω|²/(2ν))^−(ν + d/2), which is
        # the Matérn spectral density of R&W eq. 4.15 in every dimension d (scaled by 1/ℓ_k).
        z = rng.standard_normal((n_frequencies, n_active))
        u = rng.chisquare(2.0 * self.nu, size=(n_frequencies, 1))
        return z * np.sqrt(2.0 * self.nu / u) / self._ell_for(n_active)


class Matern32(_Matern):
    """``v (1 + √3 r) exp(−√3 r)`` (R&W eq. 4.17, ν = 3/2, ARD)."""

    prefix = "matern32"
    nu = 1.5

    def _g(self, r2):
        r = np.sqrt(r2)
        e = np.exp(-np.sqrt(3.0) * r)
        return (1.0 + np.sqrt(3.0) * r) * e, -1.5 * e


class Matern52(_Matern):
    """``v (1 + √5 r + 5r²/3) exp(−√5 r)`` (R&W eq. 4.17, ν = 5/2, ARD)."""

    prefix = "matern52"
    nu = 2.5

    def _g(self, r2):
        r = np.sqrt(r2)
        e = np.exp(-np.sqrt(5.0) * r)
        return (1.0 + np.sqrt(5.0) * r + 5.0 * r2 / 3.0) * e, -(5.0 / 6.0) * (1.0 + np.sqrt(5.0) * r) * e
