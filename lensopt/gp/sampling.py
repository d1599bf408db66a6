"""Posterior function draws by decoupled bases, for Thompson sampling.

A draw is ``f(·) = φ(·)ᵀw + k(·, X) K⁻¹ (f_X − φ(X)ᵀw − ε)``, ``w ~ N(0, I)``, ``ε ~ N(0, jitter·I)``,
with ``f_X ~ N(m, S)`` the Gaussian (Laplace or EP) posterior of the latent at the training inputs
and ``K = k(X, X) + jitter·I`` (Wilson et al. 2020, "Efficiently sampling functions from Gaussian
process posteriors", §4). The prior part uses a finite feature map with
``E[φ(x)ᵀφ(x')] = k(x, x')``: random Fourier features for the stationary kernels (Rahimi & Recht
2007; frequencies from the multi-dimensional ARD spectral density, Gaussian for SE, multivariate
Student-t with 2ν dof for Matérn-ν), exact features ``√θ s`` for :class:`LinearContext`,
concatenation for a sum and a tensor product for a product (exact in ``s`` for
``LinearContext * stationary``). Adding ``ε`` gives the prior draw at ``X`` covariance exactly
``K``, so over the random features and weights a draw has mean ``k*ᵀK⁻¹m`` and covariance
``k** − k*ᵀK⁻¹k* + k*ᵀK⁻¹SK⁻¹k*``, the exact Gaussian answer.
"""

from __future__ import annotations

import numpy as np
from scipy.linalg import cho_factor, cho_solve

from lensopt.gp.kernels import Kernel, LinearContext, Product, Sum
from lensopt.gp.kernels.bowl import AcuityBowl
from lensopt.gp.kernels.stationary import _Stationary

DEFAULT_N_FEATURES = 1024
"""Random features per stationary component of the kernel (pairs of cos/sin at 512 frequencies)."""

_MAX_JITTER_TRIES = 6
"""Times the jitter added to a posterior covariance is multiplied by 10 before falling back to eigh."""


class FeatureMap:
    """``φ(X)`` ``(n, n_features)`` with ``E[φ(x)ᵀφ(x')] = k(x, x')`` over the random draw."""

    n_features: int

    def __call__(self, X) -> np.ndarray:
        raise NotImplementedError

    def gradient(self, X) -> np.ndarray:
        """``(n, n_features, d)``: ``∂φ_j(X_i)/∂X_i[k]``."""
        raise NotImplementedError

    def _weighted(self, X, W):
        """``(Σ_j W_j φ_j(X_i), Σ_j W_j ∂φ_j(X_i)/∂X_i)`` for weights ``(m,)`` or per point ``(n, m)``."""
        raise NotImplementedError

    def _value(self, X, w):
        """``φ(X) w`` for weights ``(m,)``, without forming ``φ(X)`` where avoidable."""
        return self(X) @ w


class _Columns:
    def __init__(self, active_dims):
        self.active_dims = active_dims

    def _cols(self, X):
        return X if self.active_dims is None else X[:, self.active_dims]

    def _embed(self, grad_active, d):
        if self.active_dims is None:
            return grad_active
        out = np.zeros(grad_active.shape[:-1] + (d,))
        out[..., self.active_dims] = grad_active
        return out


class _FourierFeatures(FeatureMap, _Columns):
    """``√(v/q) [cos(Xω_jᵀ), sin(Xω_jᵀ)]_{j≤q}`` for frequencies ``ω`` ``(q, a)`` (Rahimi & Recht 2007)."""

    def __init__(self, omega, variance, active_dims):
        _Columns.__init__(self, active_dims)
        self.omega = omega
        self.amplitude = np.sqrt(variance / omega.shape[0])
        self.n_features = 2 * omega.shape[0]

    def __call__(self, X):
        Z = self._cols(X) @ self.omega.T
        return self.amplitude * np.hstack([np.cos(Z), np.sin(Z)])

    def gradient(self, X):
        Z = self._cols(X) @ self.omega.T
        G = np.concatenate([-np.sin(Z), np.cos(Z)], axis=1)[:, :, None] * np.vstack([self.omega, self.omega])
        return self._embed(self.amplitude * G, X.shape[1])

    def _value(self, X, w):
        q = self.omega.shape[0]
        # a cos z + b sin z = r cos(z − ψ), r = |(a, b)|, ψ = atan2(b, a): one cosine per frequency
        radius, phase = np.hypot(w[:q], w[q:]), np.arctan2(w[q:], w[:q])
        Z = self._cols(X) @ self.omega.T
        Z -= phase
        return self.amplitude * (np.cos(Z, out=Z) @ radius)

    def _weighted(self, X, W):
        q = self.omega.shape[0]
        Z = self._cols(X) @ self.omega.T
        cos, sin = np.cos(Z), np.sin(Z)
        Wc, Ws = W[..., :q], W[..., q:]
        value = self.amplitude * np.sum(cos * Wc + sin * Ws, axis=1)
        grad = self.amplitude * ((cos * Ws - sin * Wc) @ self.omega)
        return value, self._embed(grad, X.shape[1])


class _LinearFeatures(FeatureMap, _Columns):
    """Exact features ``√θ s`` of :class:`LinearContext`."""

    def __init__(self, variance, active_dims, n_active):
        _Columns.__init__(self, active_dims)
        self.scale = np.sqrt(variance)
        self.n_features = n_active

    def __call__(self, X):
        return self.scale * self._cols(X)

    def gradient(self, X):
        n, d = X.shape
        eye = np.broadcast_to(self.scale * np.eye(self.n_features), (n, self.n_features, self.n_features)).copy()
        return self._embed(eye, d)

    def _weighted(self, X, W):
        value = self.scale * np.sum(self._cols(X) * W, axis=1)
        grad = self.scale * np.broadcast_to(W, (X.shape[0], self.n_features))
        return value, self._embed(grad, X.shape[1])


class _BowlFeatures(FeatureMap):
    """Exact features of :class:`lensopt.gp.kernels.bowl.AcuityBowl` (its own, already scaled)."""

    def __init__(self, kernel: AcuityBowl):
        self.kernel = kernel
        self.n_features = kernel.centre.size + 2

    def __call__(self, X):
        return self.kernel.values(X)

    def gradient(self, X):
        return self.kernel._embed(self.kernel.features(X)[1], X.shape[1])

    def _weighted(self, X, W):
        F, G = self.kernel.features(X)
        W = np.broadcast_to(W, F.shape)
        value = np.sum(F * W, axis=1)
        return value, self.kernel._embed(np.einsum("nka,nk->na", G, W), X.shape[1])


class _ConcatFeatures(FeatureMap):
    """``[φ1, φ2]``: features of a sum of kernels."""

    def __init__(self, a: FeatureMap, b: FeatureMap):
        self.a, self.b = a, b
        self.n_features = a.n_features + b.n_features

    def __call__(self, X):
        return np.hstack([self.a(X), self.b(X)])

    def gradient(self, X):
        return np.concatenate([self.a.gradient(X), self.b.gradient(X)], axis=1)

    def _value(self, X, w):
        m = self.a.n_features
        return self.a._value(X, w[:m]) + self.b._value(X, w[m:])

    def _weighted(self, X, W):
        m = self.a.n_features
        va, ga = self.a._weighted(X, W[..., :m])
        vb, gb = self.b._weighted(X, W[..., m:])
        return va + vb, ga + gb


class _TensorFeatures(FeatureMap):
    """``φ1 ⊗ φ2`` (feature ``i·m2 + j`` is ``φ1_i φ2_j``): features of a product of kernels."""

    def __init__(self, a: FeatureMap, b: FeatureMap):
        self.a, self.b = a, b
        self.n_features = a.n_features * b.n_features

    def __call__(self, X):
        A, B = self.a(X), self.b(X)
        return (A[:, :, None] * B[:, None, :]).reshape(X.shape[0], -1)

    def gradient(self, X):
        A, B = self.a(X), self.b(X)
        gA, gB = self.a.gradient(X), self.b.gradient(X)
        G = gA[:, :, None, :] * B[:, None, :, None] + A[:, :, None, None] * gB[:, None, :, :]
        return G.reshape(X.shape[0], self.n_features, X.shape[1])

    def _weighted(self, X, W):
        W = W.reshape(W.shape[:-1] + (self.a.n_features, self.b.n_features))
        A, B = self.a(X), self.b(X)
        per_point = W.ndim == 3
        WA = np.einsum("nij,ni->nj" if per_point else "ij,ni->nj", W, A)  # per-point weights on φ2
        WB = np.einsum("nij,nj->ni" if per_point else "ij,nj->ni", W, B)  # per-point weights on φ1
        value, grad_b = self.b._weighted(X, WA)
        grad_a = self.a._weighted(X, WB)[1]
        return value, grad_a + grad_b


def _is_exact(kernel: Kernel) -> bool:
    """True when the kernel has a finite exact feature map (no random features)."""
    if isinstance(kernel, (LinearContext, AcuityBowl)):
        return True
    if isinstance(kernel, (Sum, Product)):
        return _is_exact(kernel.k1) and _is_exact(kernel.k2)
    return False


def _n_active(kernel, n_dims):
    if kernel.active_dims is not None:
        if n_dims is not None and max(kernel.active_dims) >= n_dims:
            raise ValueError(f"{type(kernel).__name__} reads columns {kernel.active_dims} but inputs have {n_dims}")
        return len(kernel.active_dims)
    if isinstance(kernel, _Stationary) and kernel.input_map is not None:
        return kernel.input_map.shape[1]
    if isinstance(kernel, _Stationary) and kernel.lengthscales.size > 1:
        return kernel.lengthscales.size
    if n_dims is None:
        raise ValueError(
            f"cannot tell how many columns {type(kernel).__name__} reads: set its active_dims or pass n_dims"
        )
    return n_dims


def _feature_map(kernel, n_features, rng, n_dims):
    if isinstance(kernel, AcuityBowl):
        return _BowlFeatures(kernel)
    if isinstance(kernel, LinearContext):
        return _LinearFeatures(kernel.variance, kernel.active_dims, _n_active(kernel, n_dims))
    if isinstance(kernel, _Stationary):
        n_active = _n_active(kernel, n_dims)
        omega = kernel.input_frequencies(max(1, n_features // 2), n_active, rng)
        return _FourierFeatures(omega, kernel.variance, kernel.active_dims)
    if isinstance(kernel, Sum):
        return _ConcatFeatures(
            _feature_map(kernel.k1, n_features, rng, n_dims), _feature_map(kernel.k2, n_features, rng, n_dims)
        )
    if isinstance(kernel, Product):
        exact1, exact2 = _is_exact(kernel.k1), _is_exact(kernel.k2)
        n1 = n_features if exact1 or exact2 else max(2, int(np.ceil(np.sqrt(n_features))))
        return _TensorFeatures(_feature_map(kernel.k1, n1, rng, n_dims), _feature_map(kernel.k2, n1, rng, n_dims))
    raise ValueError(
        f"no feature map for {type(kernel).__name__}; supported: SE, Matérn, LinearContext, AcuityBowl, Sum, Product"
    )


def prior_feature_map(kernel: Kernel, n_features: int, rng, n_dims=None) -> FeatureMap:
    """A random feature map ``φ`` with ``E[φ(x)ᵀφ(x')] = k(x, x')``.

    ``n_features`` is per stationary component (rounded down to an even number; a product of two
    stationary kernels uses about ``√n_features`` for each factor). ``n_dims`` (the number of input
    columns) is needed only when a component has ``active_dims=None`` and a scalar lengthscale.
    """
    if not isinstance(kernel, Kernel):
        raise ValueError(f"kernel must be a lensopt.gp.kernels.Kernel; got {type(kernel).__name__}")
    if int(n_features) < 2:
        raise ValueError(f"n_features must be >= 2; got {n_features}")
    rng = np.random.default_rng(rng)
    return _feature_map(kernel, int(n_features), rng, n_dims)


class PosteriorSample:
    """One function drawn from the (approximate) GP posterior, or the prior when untrained."""

    def __init__(self, features: FeatureMap, weights, kernel=None, X_train=None, update=None, n_dims=None):
        self.features = features
        self.weights = weights
        self.kernel = kernel
        self.X_train = X_train
        self.update = update  # K⁻¹ (f_X − f̃(X)), or None for a prior draw
        self.n_dims = n_dims
        for array in (weights, X_train, update):
            if array is not None:
                array.setflags(write=False)

    def _check(self, X):
        X = np.asarray(X, dtype=float)
        if X.ndim != 2:
            raise ValueError(f"X must be a 2-D array (n_points, n_dims); got shape {X.shape}")
        if self.n_dims is not None and X.shape[1] != self.n_dims:
            raise ValueError(f"X must have {self.n_dims} columns like the training inputs; got {X.shape[1]}")
        return X

    def __call__(self, X) -> np.ndarray:
        """``f(X)`` as ``(n,)``."""
        X = self._check(X)
        value = self.features._value(X, self.weights)
        if self.update is not None:
            value = value + self.kernel._k(X, self.X_train) @ self.update
        return value

    def gradient(self, X) -> np.ndarray:
        """``∂f(X_i)/∂X_i`` as ``(n, d)``."""
        X = self._check(X)
        grad = self.features._weighted(X, self.weights)[1]
        if self.update is not None:
            grad = grad + np.einsum("nmd,m->nd", self.kernel._grad_x(X, self.X_train), self.update)
        return grad


def sample_prior(kernel: Kernel, rng, n_features: int = DEFAULT_N_FEATURES, n_dims=None) -> PosteriorSample:
    """A prior draw ``f = φᵀw``, ``w ~ N(0, I)``."""
    rng = np.random.default_rng(rng)
    features = prior_feature_map(kernel, n_features, rng, n_dims)
    return PosteriorSample(features, rng.standard_normal(features.n_features), n_dims=n_dims)


def _sample_gaussian(mean, cov, z, jitter):
    """``mean + L z`` with ``L Lᵀ = cov``; adds growing jitter, then clips eigenvalues if needed."""
    scale = max(float(np.mean(np.diag(cov))), 1.0)
    eye = np.eye(cov.shape[0])
    for i in range(_MAX_JITTER_TRIES):
        try:
            L = np.linalg.cholesky(cov + (jitter * 10.0**i * scale if i else 0.0) * eye)
            return mean + L @ z
        except np.linalg.LinAlgError:
            continue
    values, vectors = np.linalg.eigh(cov)
    return mean + vectors @ (np.sqrt(np.clip(values, 0.0, None)) * z)


def sample_posterior(gp, rng, n_features: int = DEFAULT_N_FEATURES) -> PosteriorSample:
    """A draw from the posterior of a fitted classifier by decoupled bases (Wilson et al. 2020).

    Uses only ``gp.kernel_``, ``gp.X_train_``, ``gp.jitter`` and ``gp.training_posterior()`` (and, for
    a classifier with virtual sites, ``gp.virtual`` and ``gp.site_covariance()``).
    """
    rng = np.random.default_rng(rng)
    X_train = getattr(gp, "X_train_", None)
    if X_train is None:
        raise ValueError("sample_posterior needs a fitted classifier; call fit(X, y) first")
    X_train = np.array(X_train, dtype=float)
    kernel, jitter = gp.kernel_, float(gp.jitter)
    n, d = X_train.shape
    features = prior_feature_map(kernel, n_features, rng, n_dims=d)
    weights = rng.standard_normal(features.n_features)
    virtual = getattr(gp, "virtual", None)
    if virtual is not None:  # conditioned on its virtual sites even before the first answer
        return _sample_with_virtual_sites(gp, virtual, features, weights, rng)
    if n == 0:
        return PosteriorSample(features, weights, n_dims=d)
    mean, cov = gp.training_posterior()
    mean, cov = np.asarray(mean, dtype=float).reshape(n), np.asarray(cov, dtype=float).reshape(n, n)
    prior_at_train = features._value(X_train, weights) + np.sqrt(jitter) * rng.standard_normal(n)
    f_train = _sample_gaussian(mean, cov, rng.standard_normal(n), jitter)
    K = kernel(X_train) + jitter * np.eye(n)
    update = cho_solve(cho_factor(K, lower=True), f_train - prior_at_train)
    return PosteriorSample(features, weights, kernel, X_train, update, n_dims=d)


def _sample_with_virtual_sites(gp, virtual, features, weights, rng) -> PosteriorSample:
    """:func:`sample_posterior` of a classifier with virtual sites (:mod:`lensopt.gp.virtual`): the
    sites are linear functions of ``f`` at ``[virtual.points; X_train]``, so the pathwise update
    through the sites is an update through those points with the weights spread back onto them."""
    X_train = np.array(gp.X_train_, dtype=float)
    points = np.vstack([virtual.points, X_train])
    m, jitter = virtual.n_sites, float(gp.jitter)
    mean, cov = gp.training_posterior()
    n_sites = mean.shape[0]
    values = features._value(points, weights)
    prior_at_sites = np.concatenate([virtual.combine(values[: 2 * m]), values[2 * m :]])
    prior_at_sites = prior_at_sites + np.sqrt(jitter) * rng.standard_normal(n_sites)
    f_sites = _sample_gaussian(mean, cov, rng.standard_normal(n_sites), jitter)
    site_weights = cho_solve(cho_factor(gp.site_covariance(), lower=True), f_sites - prior_at_sites)
    update = np.concatenate([virtual.spread(site_weights[:m]), site_weights[m:]])
    return PosteriorSample(features, weights, gp.kernel_, points, update, n_dims=X_train.shape[1])
