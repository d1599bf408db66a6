"""Posterior utility functions drawn from a preference GP, for Thompson sampling.

Decoupled bases (Wilson et al. 2020; METHOD.md §4) carried over to duels as in the companion
paper's supplement D: a prior utility ``f̃(s, x) = φ(s, x)ᵀw``, ``w ~ N(0, I)``, from a finite feature
map of the base kernel (:func:`lensopt.gp.sampling.prior_feature_map`: random Fourier features for
stationary parts, exact features for a ``LinearContext`` part); its duel values
``g̃(z) = (φ(s, x) − φ(s, x'))ᵀw`` are antisymmetric by construction (supplement eq. S10). The
exact update through the training duels ``Z`` is

    f(·) = m(·) + f̃(·) + k_fg(·, Z) K_g⁻¹ (h_Z − g̃(Z) − ε),   h_Z ~ N(μ, S),   ε ~ N(0, jitter·I)

with ``N(μ, S)`` the Laplace/EP posterior of ``h = g − m_g`` at ``Z`` (the classifier's latent is
centred on the prior mean ``m_g(s, x, x') = m(s, x) − m(s, x')``), ``K_g = k_g(Z, Z) + jitter·I``
and ``m`` the utility's prior mean (zero without one). Over
the features and weights, a draw has the mean and covariance of :meth:`PreferenceGP.predict_utility`.
"""

from __future__ import annotations

import numpy as np
from scipy.linalg import cho_factor, cho_solve

from lensopt.gp.sampling import DEFAULT_N_FEATURES, FeatureMap, prior_feature_map

JITTER_GROWTH_TRIES = 6
"""Times the jitter of a singular posterior covariance is multiplied by 10 before using eigh."""


def _gaussian_draw(mean, cov, z, jitter):
    """``mean + L z`` with ``L Lᵀ = cov`` (growing jitter, then clipped eigenvalues, if singular)."""
    scale = max(float(np.mean(np.diag(cov))), 1.0)
    eye = np.eye(cov.shape[0])
    for i in range(JITTER_GROWTH_TRIES):
        try:
            return mean + np.linalg.cholesky(cov + (jitter * 10.0**i * scale if i else 0.0) * eye) @ z
        except np.linalg.LinAlgError:
            continue
    values, vectors = np.linalg.eigh(cov)
    return mean + vectors @ (np.sqrt(np.clip(values, 0.0, None)) * z)


class UtilitySample:
    """One utility function ``f(s, x)`` drawn from the posterior (or the prior before any duel).

    Call it on utility inputs ``[s, x]`` ``(n, k + d)``; :meth:`duel` gives ``f(s, x) − f(s, x')``
    on duel inputs ``[s, x, x']``.
    """

    def __init__(self, features: FeatureMap, weights, kernel, Z_train=None, update=None, mean=None):
        self.features = features
        self.mean = mean  # the utility's prior mean (a lensopt.gp.mean.MeanFunction), or None
        self.weights = np.array(weights, dtype=float)
        self.kernel = kernel  # the PreferenceKernel (for the cross-covariance of the update)
        self.Z_train = None if Z_train is None else np.array(Z_train, dtype=float)
        self.update = None if update is None else np.array(update, dtype=float)
        for array in (self.weights, self.Z_train, self.update):
            if array is not None:
                array.setflags(write=False)

    def _check(self, X):
        X = np.asarray(X, dtype=float)
        if X.ndim != 2:
            raise ValueError(f"X must be a 2-D array (n_points, n_context + n_system); got shape {X.shape}")
        return X

    def __call__(self, X) -> np.ndarray:
        """``f(X)`` as ``(n,)``."""
        X = self._check(X)
        value = self.features(X) @ self.weights
        if self.update is not None:
            value = value + self.kernel.cross_cov(X, self.Z_train) @ self.update
        return value if self.mean is None else value + self.mean(X)

    def gradient(self, X) -> np.ndarray:
        """``∂f(X_i)/∂X_i`` as ``(n, k + d)``."""
        X = self._check(X)
        grad = np.einsum("nfd,f->nd", self.features.gradient(X), self.weights)
        if self.update is not None:
            grad = grad + np.einsum("nmd,m->nd", self.kernel.cross_cov_gradient_x(X, self.Z_train), self.update)
        return grad if self.mean is None else grad + self.mean.gradient(X)

    def duel(self, Z) -> np.ndarray:
        """``g(z) = f(s, x) − f(s, x')`` for duel inputs ``(n, k + 2d)``."""
        A, A2 = self.kernel.split(Z)
        return self(A) - self(A2)


def sample_utility(model, rng, n_features: int = DEFAULT_N_FEATURES) -> UtilitySample:
    """A posterior utility draw of a fitted :class:`lensopt.preference.PreferenceGP`.

    Draw order from ``rng``: feature frequencies, weights, then (with training duels) the jitter
    noise and the posterior duel values, so a given generator always gives the same function.
    """
    rng = np.random.default_rng(rng)
    Z = model.Z_train_
    if Z is None:
        raise ValueError("sample_utility needs a fitted PreferenceGP; call fit(Z, y) first")
    kernel = model.kernel
    n, n_utility = Z.shape[0], kernel.n_context + kernel.n_system(Z.shape[1])
    features = prior_feature_map(kernel.base, n_features, rng, n_dims=n_utility)
    weights = rng.standard_normal(features.n_features)
    mean = getattr(model, "utility_mean", None)
    if n == 0:
        return UtilitySample(features, weights, kernel, mean=mean)
    jitter = model.jitter
    A, A2 = kernel.split(Z)
    prior_at_train = (features(A) - features(A2)) @ weights + np.sqrt(jitter) * rng.standard_normal(n)
    centred, cov = model.classifier.training_posterior()  # of g − m_g: the classifier's latent is centred
    g_train = _gaussian_draw(centred, cov, rng.standard_normal(n), jitter)
    K = kernel(Z) + jitter * np.eye(n)
    update = cho_solve(cho_factor(K, lower=True), g_train - prior_at_train)
    return UtilitySample(features, weights, kernel, Z, update, mean=mean)
