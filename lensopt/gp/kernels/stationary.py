"""Stationary ARD kernels ``k = v g(r²)``: squared exponential and Matérn 3/2, 5/2.

With ``r² = Σ_k ((x_k − x'_k) / ℓ_k)²`` every gradient follows from ``h = dg/d(r²)``:
``∂k/∂log ℓ_k = −2 v h Δ_k²/ℓ_k²`` and ``∂k/∂x_k = 2 v h Δ_k/ℓ_k²`` (Rasmussen & Williams 2006,
eqs. 4.9, 4.14 and 4.17). Each kernel can draw frequencies from its spectral density for random
Fourier features (Rahimi & Recht 2007), used by :mod:`lensopt.gp.sampling`.

An optional fixed ``input_map`` ``A`` (``(n_mapped, n_active)``) measures distances in mapped
coordinates ``u = A x`` of the active columns: ``r² = Σ_k ((A(x − x'))_k / ℓ_k)²``, one lengthscale
per mapped coordinate. Refraction uses it to compare lenses by the powers of their two principal
meridians, ``(S, S + C)``, in which the blur ``rs² + (rs + rc)²`` of a lens is isotropic.
Gradients follow by the chain rule (``∂k/∂x = Aᵀ ∂k/∂u``) and spectral frequencies map as
``ω_x = Aᵀ ω_u``.
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

    def __init__(self, lengthscales, variance=1.0, active_dims=None, fixed=(), bounds=None, input_map=None):
        lengthscales_arr = np.array(lengthscales, dtype=float)
        dims = _check_dims(active_dims)
        if lengthscales_arr.ndim > 1:
            raise ValueError(
                f"{type(self).__name__}: lengthscales must be a scalar or 1-D; got shape {lengthscales_arr.shape}"
            )
        self.input_map = None
        if input_map is not None:
            A = np.array(input_map, dtype=float)
            if A.ndim != 2 or not np.all(np.isfinite(A)) or (dims is not None and A.shape[1] != len(dims)):
                raise ValueError(
                    f"{type(self).__name__}: input_map must be a finite (n_mapped, n_active) matrix with one "
                    f"column per active column {dims}; got shape {A.shape}"
                )
            A.setflags(write=False)
            self.input_map = A
        n_read = (
            len(dims)
            if self.input_map is None and dims is not None
            else (None if self.input_map is None else self.input_map.shape[0])
        )
        if lengthscales_arr.ndim == 1 and n_read is not None and lengthscales_arr.size not in (1, n_read):
            raise ValueError(
                f"{type(self).__name__}: {lengthscales_arr.size} lengthscales for {n_read} "
                f"{'mapped coordinates' if self.input_map is not None else f'active columns {dims}'}; "
                "give one per coordinate or a scalar"
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

    def _structure_kwargs(self):
        return {"input_map": self.input_map}

    def __repr__(self):
        text = super().__repr__()
        if self.input_map is None:
            return text
        return f"{text[:-1]}, input_map={self.input_map.tolist()})"

    def _mapped(self, Xa):
        return Xa if self.input_map is None else Xa @ self.input_map.T

    def _scaled_cols(self, X, Y):
        return self._scaled_fixed(X), self._scaled_fixed(Y)

    def _scaled_fixed(self, Y):
        """``Y``'s active columns mapped and scaled; kept for the next call when ``Y`` is read-only
        (a fitted model's training inputs, the ``Y`` of every prediction it makes and the ``X`` of
        its cross-covariances ``k(X_train, x)``): the same numbers, computed once per fit instead
        of once per prediction."""
        memo = self.__dict__.get("_scaled_memo")
        if memo is not None and memo[0] is Y:
            return memo[1]
        Ya = self._mapped(self._cols(Y))
        ell = self.lengthscales
        if ell.size > 1 and ell.size != Ya.shape[1]:
            raise ValueError(
                f"{type(self).__name__}: {ell.size} lengthscales but {Ya.shape[1]} active columns; "
                "give one per active column or set active_dims"
            )
        scaled = Ya / ell
        if not Y.flags.writeable:
            self._scaled_memo = (Y, scaled)
        return scaled

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
        self._check_columns(X)
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
        grad = 2.0 * self.variance * h[:, :, None] * D / self.lengthscales
        if self.input_map is not None:
            grad = grad @ self.input_map
        return self._embed(grad, X.shape[1])

    def _diag_grad_x(self, X):
        self._check_columns(X)
        return np.zeros(X.shape)

    def input_frequencies(self, n_frequencies, n_active, rng):
        """Spectral frequencies over the ``n_active`` active columns (mapped back through ``input_map``)."""
        if self.input_map is None:
            return self._spectral_frequencies(n_frequencies, n_active, rng)
        return self._spectral_frequencies(n_frequencies, self.input_map.shape[0], rng) @ self.input_map

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

    nu: float | None = None  # set by each concrete Matérn kernel

    def _spectral_frequencies(self, n_frequencies, n_active, rng):
        # ω = z sqrt(2ν/u), z ~ N(0, I), u ~ χ²(2ν): density ∝ (1 + |ω|²/(2ν))^−(ν + d/2), which is
        # the Matérn spectral density of R&W eq. 4.15 in every dimension d (scaled by 1/ℓ_k).
        nu = self.nu
        if nu is None:
            raise NotImplementedError(f"{type(self).__name__} sets no smoothness nu (use Matern32 or Matern52)")
        z = rng.standard_normal((n_frequencies, n_active))
        u = rng.chisquare(2.0 * nu, size=(n_frequencies, 1))
        return z * np.sqrt(2.0 * nu / u) / self._ell_for(n_active)


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
