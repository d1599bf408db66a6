"""Information-based choices for the ranking GP: MPES for the compared set, a BALD analogue for the context.

**MPES** (multinomial predictive entropy search, Nguyen et al. 2021 §4, eqs. 7 and 8): the mutual
information between the outcome ``o`` of comparing a set ``C`` and the maximizer ``x*``,

    I(o; x* | D) ≈ Σ_{x* ∈ X*} Σ_o p(o, x* | D) log [p(o, x* | D) / (p(x* | D) p(o | D))],

over a finite set ``X*`` of possible maximizers (here the argmaxes of posterior function draws,
:func:`sample_maximizers`), estimated as in the paper's steps 1–5:

1. draw ``n`` joint samples of ``f`` at ``C ∪ X*`` from the predictive (eq. 6) — here ``f(X*)``
   once for all candidate sets, then ``f(C) | f(X*)`` with the same normal deviates for every set
   (common random numbers, so that sets are compared on the same draws);
2. ``p(x* | D) = n⁻¹ Σ_s 1[x* = argmax f_s(X*)]``;
3. ``p(o, x* | D) = n⁻¹ Σ_s 1[x* = argmax f_s(X*)] p(o | f_s(C))`` with the closed forms of eqs. 1, 3, 4;
4. ``p(o | D) = Σ_{x*} p(o, x* | D)``; 5. ``p(o | D, x*) = p(o, x* | D) / p(x* | D)``.

Every outcome is enumerated (``m ≤ 4``). Values are in nats.

**Context information** (the s-step): for a chosen set, the mutual information between the outcome
and ``f`` at context ``s``, ``H[E_f p(o | f)] − E_f H[p(o | f)]`` (Houlsby et al. 2011's BALD with
a categorical outcome), by Monte Carlo over the joint predictive of ``f([s, x_1..x_m])``.

Shapes: a batch of candidate sets is ``(B, m, n_dims)`` of full inputs ``[s, x]``.
"""

from __future__ import annotations

import numpy as np
from scipy.linalg import solve_triangular

from lensopt.optimize import scrambled_halton
from lensopt.ranking.likelihood import outcome_probabilities
from lensopt.ranking.model import RankingGP, _psd_factor

MPES_SAMPLES = 256
"""Joint posterior draws ``n`` of MPES (the paper used 1000; the draws are shared by all sets)."""

N_MAXIMIZERS = 20
"""Posterior function draws whose argmaxes form ``X*`` (the paper's ``|X*| = 20``)."""

MAXIMIZER_CANDIDATES = 256
"""Quasi-random points on which each function draw is maximized (plus the training inputs)."""

MAXIMIZER_FEATURES = 256
"""Random Fourier features of each posterior function draw."""

SET_JITTER = 1e-10
"""Jitter on the conditional covariance of a set's latent values before its Cholesky factor."""

KERNEL_CHUNK = 128
"""Candidate sets whose prior covariance blocks are computed by one kernel call."""


def _entropy(p, axis=-1):
    """Shannon entropy in nats, ``0 log 0 = 0``."""
    with np.errstate(divide="ignore", invalid="ignore"):
        terms = np.where(p > 0, p * np.log(p), 0.0)
    return -terms.sum(axis=axis)


def _batched_factor(cov):
    """Factors ``L`` ``(B, m, m)`` with ``L Lᵀ ≈ cov`` (Cholesky with a relative jitter, else clipped eigh)."""
    m = cov.shape[-1]
    scale = np.maximum(np.einsum("bii->b", cov) / m, 1e-12)
    try:
        return np.linalg.cholesky(cov + SET_JITTER * scale[:, None, None] * np.eye(m))
    except np.linalg.LinAlgError:
        values, vectors = np.linalg.eigh(cov)
        return vectors * np.sqrt(np.clip(values, 0.0, None))[:, None, :]


def _set_blocks(kernel, sets):
    """Prior covariance of the members of each set ``(B, m, m)``."""
    B, m, D = sets.shape
    blocks = np.empty((B, m, m))
    for start in range(0, B, KERNEL_CHUNK):
        chunk = sets[start : start + KERNEL_CHUNK]
        c = chunk.shape[0]
        K = kernel(chunk.reshape(c * m, D)).reshape(c, m, c, m)
        blocks[start : start + c] = K[np.arange(c), :, np.arange(c), :]
    return blocks


def set_predictive(model: RankingGP, sets):
    """Joint predictive of the latent at each candidate set: means ``(B, m)``, covariances ``(B, m, m)``,
    and the whitened cross terms ``(A, L̃ᵀA)`` ``(n, B·m)`` for covariances with other points."""
    sets = np.asarray(sets, dtype=float)
    B, m, D = sets.shape
    prior = _set_blocks(model.kernel_, sets)
    if model.inputs_ is None or model.inputs_.shape[0] == 0:
        return np.zeros((B, m)), prior, None
    A, Bw = model._whitened_cross(sets.reshape(B * m, D))
    mean = (A.T @ model.mean_whitened_).reshape(B, m)
    A3, B3 = A.T.reshape(B, m, -1), Bw.T.reshape(B, m, -1)
    cov = prior - A3 @ np.swapaxes(A3, 1, 2) + B3 @ np.swapaxes(B3, 1, 2)
    return mean, cov, (A, Bw)


def sample_maximizers(
    model: RankingGP,
    bounds,
    rng,
    n_maximizers: int = N_MAXIMIZERS,
    n_candidates: int = MAXIMIZER_CANDIDATES,
    fixed_columns=None,
    extra=None,
    n_features: int = MAXIMIZER_FEATURES,
) -> np.ndarray:
    """Distinct argmaxes ``X*`` ``(p, n_dims)`` of ``n_maximizers`` posterior function draws.

    ``bounds``: box of the free columns (the system parameters); ``fixed_columns``: values of the
    leading columns (the reference context ``s₀``) prepended to every point; ``extra``: more free
    points to offer as candidates (e.g. the training members and the posterior-mean argmax).
    """
    fixed = np.zeros(0) if fixed_columns is None else np.asarray(fixed_columns, dtype=float).reshape(-1)
    points = scrambled_halton(bounds, n_candidates, rng)
    if extra is not None and len(extra):
        points = np.vstack([points, np.asarray(extra, dtype=float).reshape(-1, points.shape[1])])
    full = np.hstack([np.broadcast_to(fixed, (points.shape[0], fixed.size)), points])
    draws = model.sample_functions(n_maximizers, rng, n_features)(full)  # (N, S)
    winners = np.unique(np.argmax(draws, axis=0))
    return full[winners]


class MPES:
    """``I(o; x* | D)`` of candidate sets, for fixed maximizers ``X*`` and fixed random draws.

    ``outcomes``: every outcome of a query (:func:`lensopt.ranking.likelihood.all_outcomes`);
    ``ties_allowed``: whether winners follow eq. 1 with the model's δ; ``maximizers``: ``X*``
    ``(p, n_dims)``; ``n_samples``: the ``n`` of step 1; ``rng``: draws ``f(X*)`` and the deviates
    shared by all sets. Call on ``(B, m, n_dims)`` to get ``(B,)`` values in nats.
    """

    def __init__(self, model: RankingGP, maximizers, outcomes, ties_allowed: bool, rng, n_samples: int = MPES_SAMPLES):
        self.model = model
        self.outcomes = list(outcomes)
        self.ties_allowed = bool(ties_allowed)
        self.maximizers = np.asarray(maximizers, dtype=float)
        self.n_samples = int(n_samples)
        rng = np.random.default_rng(rng)
        mean, cov = model.predict(self.maximizers, full_cov=True)
        self._chol_star = _psd_factor(cov)
        self._mean_star = mean
        self._z_star = rng.standard_normal((self.maximizers.shape[0], self.n_samples))  # step 1, f(X*)
        f_star = mean[:, None] + self._chol_star @ self._z_star
        winners = np.argmax(f_star, axis=0)
        self.winners = np.eye(self.maximizers.shape[0])[winners]  # (n, p)
        self.p_maximizer = self.winners.mean(axis=0)  # step 2
        self._rng = rng
        self._z_set: np.ndarray | None = None
        if model.inputs_ is not None and model.inputs_.shape[0]:
            self._A_star, self._B_star = model._whitened_cross(self.maximizers)
        else:
            self._A_star = self._B_star = None

    def _solve_star(self, rhs):
        F = self._chol_star
        if np.allclose(np.triu(F, 1), 0.0):
            return solve_triangular(F, rhs, lower=True)
        return np.linalg.pinv(F) @ rhs  # the eigendecomposition fallback of a singular Σ(X*, X*)

    def _deviates(self, m):
        if self._z_set is None or self._z_set.shape[1] != m:
            self._z_set = self._rng.standard_normal((self.n_samples, m))
        return self._z_set

    def joint(self, sets) -> np.ndarray:
        """``p(o, x* | D)`` ``(B, n_outcomes, p)`` (step 3)."""
        sets = np.asarray(sets, dtype=float)
        if sets.ndim != 3:
            raise ValueError(f"sets must be (B, m, n_dims); got shape {sets.shape}")
        B, m, D = sets.shape
        mean, cov, cross = set_predictive(self.model, sets)
        flat = sets.reshape(B * m, D)
        k_cross = self.model.kernel_(flat, self.maximizers)
        if cross is not None:
            A, Bw = cross
            k_cross = k_cross - A.T @ self._A_star + Bw.T @ self._B_star  # Σ(C, X*) (B·m, p)
        W = self._solve_star(k_cross.T)  # F*⁻¹ Σ(X*, C)  (p, B·m), with F* F*ᵀ = Σ(X*, X*)
        cond_mean = mean.reshape(B * m)[:, None] + W.T @ self._z_star  # (B·m, n)
        W3 = W.T.reshape(B, m, -1)
        cond_cov = cov - W3 @ np.swapaxes(W3, 1, 2)
        L = _batched_factor(cond_cov)
        f = cond_mean.reshape(B, m, self.n_samples).transpose(0, 2, 1) + self._deviates(m) @ np.swapaxes(L, 1, 2)
        probs = outcome_probabilities(f, self.outcomes, self.model.tie_threshold_, self.ties_allowed)  # (B, n, O)
        return np.swapaxes(probs, 1, 2) @ self.winners / self.n_samples

    def __call__(self, sets) -> np.ndarray:
        joint = self.joint(sets)
        p_outcome = joint.sum(axis=2, keepdims=True)  # step 4
        expected = p_outcome * self.p_maximizer[None, None, :]
        with np.errstate(divide="ignore", invalid="ignore"):
            terms = np.where(joint > 0, joint * np.log(joint / expected), 0.0)
        return np.maximum(terms.sum(axis=(1, 2)), 0.0)


def context_information(
    model: RankingGP, sets, outcomes, ties_allowed: bool, rng, n_samples: int = MPES_SAMPLES
) -> np.ndarray:
    """``I(o; f | C)`` in nats for each set ``(B, m, n_dims)`` (the same deviates for every set)."""
    sets = np.asarray(sets, dtype=float)
    mean, cov, _ = set_predictive(model, sets)
    _, m = mean.shape
    z = np.random.default_rng(rng).standard_normal((n_samples, m))
    f = mean[:, None, :] + z @ np.swapaxes(_batched_factor(cov), 1, 2)
    probs = outcome_probabilities(f, list(outcomes), model.tie_threshold_, ties_allowed)  # (B, n, O)
    return np.maximum(_entropy(probs.mean(axis=1)) - _entropy(probs).mean(axis=1), 0.0)
