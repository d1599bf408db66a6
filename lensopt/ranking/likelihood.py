"""Top-k rankings and top-1 choices with ties under Gumbel noise (Nguyen et al. 2021, §2).

The patient compares a set ``C`` of ``m`` inputs through noisy utilities ``u_i = f_i + ε_i`` with
``ε_i`` i.i.d. standard Gumbel; member ``i`` is preferred to ``j`` when ``u_i − u_j ≥ δ``. A Gumbel
variable shifted by ``δ`` is Gumbel with location ``+δ``, and the maximum of independent Gumbels of
locations ``a_j`` is Gumbel of location ``log Σ_j e^{a_j}``, so

- **top-1 choice with a tie threshold δ ≥ 0** (paper eq. 1): member ``i`` is strictly the best,
  ``u_i ≥ max_{j≠i} u_j + δ``, with probability

      p(i | f; δ) = e^{f_i} / (e^{f_i} + e^δ Σ_{j≠i} e^{f_j});

- **tie** (paper eq. 4): no member is ``δ`` ahead of all others,
  ``p(∅ | f; δ) = 1 − Σ_i p(i | f; δ)``; for a pair, with ``d = f_1 − f_2``, this is
  ``σ(δ − d) − σ(−δ − d)`` (``σ`` the logistic function);

- **top-k ranking without ties** (δ = 0; Plackett–Luce, paper eqs. 2 and 3): an ordering
  ``o = (o_1, …, o_k)``, best first, of ``k ≤ m`` members has probability

      p(o | f) = Π_{i=1..k} e^{f_{o_i}} / Σ_{j ∉ {o_1..o_{i−1}}} e^{f_j}.

  ``k = m`` and ``k = m − 1`` give the same probability (the last factor is 1).

Top-k rankings with ties (``k > 1``, δ > 0) are not modelled: the tie relation is not transitive
(paper Remark 1). Every probability depends on ``f`` only through differences (shift invariance).

Shapes: latent values ``f`` are ``(..., m)``; functions broadcast over the leading axes. The
``canonical`` functions take the members already arranged so that the outcome is ``(0, 1, …, k−1)``
(the winner first); :func:`log_likelihood` and :func:`outcome_probabilities` reorder for you.
"""

from __future__ import annotations

from itertools import permutations

import numpy as np

TIE = "same"
"""The outcome "no member is clearly the best" of a top-1 query with ties allowed (paper eq. 4)."""

TIE_THRESHOLD_BOUNDS = (1e-2, 5.0)
"""Bounds of a learned δ: below 0.01 ties are practically impossible, above 5 nearly certain."""

MIN_PROBABILITY = 1e-300
"""Floor of a tie probability before taking its logarithm."""


def logsumexp(a, axis=-1):
    """``log Σ exp(a)`` over ``axis`` (``−inf`` entries allowed; a lean version for small axes)."""
    top = np.max(a, axis=axis, keepdims=True)
    top = np.where(np.isfinite(top), top, 0.0)
    return np.log(np.sum(np.exp(a - top), axis=axis)) + np.squeeze(top, axis=axis)


# ---- outcomes ----------------------------------------------------------------------------------
def all_outcomes(m: int, top_k: int = 1, ties: bool = False) -> list:
    """Every outcome of a query of ``m`` members: the orderings of ``top_k`` members (tuples, best
    first), plus :data:`TIE` when ties are allowed (then ``top_k`` must be 1)."""
    if m < 2:
        raise ValueError(f"a query needs at least 2 members; got {m}")
    if not 1 <= top_k <= m:
        raise ValueError(f"top_k must be in 1..{m} for {m} members; got {top_k}")
    if ties and top_k != 1:
        raise ValueError("ties are modelled for top-1 choices only (Nguyen et al. 2021, Remark 1); use top_k=1")
    outcomes: list = list(permutations(range(m), top_k))
    if ties:
        outcomes.append(TIE)
    return outcomes


def _arrange(f, order):
    """``f`` with the members of ``order`` first (in that order), then the others in index order."""
    m = f.shape[-1]
    rest = [j for j in range(m) if j not in order]
    return f[..., list(order) + rest]


# ---- canonical closed forms, with gradients ----------------------------------------------------
def log_top_k_canonical(f, k: int):
    """``log p((0, …, k−1) | f)`` under Plackett–Luce (eq. 3) and its gradient ``(..., m)``."""
    f = np.asarray(f, dtype=float)
    m = f.shape[-1]
    value = np.zeros(f.shape[:-1])
    grad = np.zeros(f.shape)
    for i in range(min(k, m - 1)):
        tail = f[..., i:]
        lse = logsumexp(tail, axis=-1)
        value += f[..., i] - lse
        grad[..., i:] -= np.exp(tail - lse[..., None])
        grad[..., i] += 1.0
    return value, grad


def log_choice_canonical(f, delta):
    """``log p(0 | f; δ)`` of eq. 1 (member 0 strictly best), its gradient in ``f`` and in ``δ``.

    ``log p = f_0 − log(e^{f_0} + Σ_{j≥1} e^{f_j + δ})``; with ``s = softmax(f_0, f_1 + δ, …)``,
    ``∂/∂f = e_0 − s`` and ``∂/∂δ = −(1 − s_0)``.
    """
    f = np.asarray(f, dtype=float)
    z = f.copy()
    z[..., 1:] += delta
    lse = logsumexp(z, axis=-1)
    s = np.exp(z - lse[..., None])
    grad = -s
    grad[..., 0] += 1.0
    return f[..., 0] - lse, grad, -(1.0 - s[..., 0])


def _choice_terms(f, delta):
    """``log p_i``, ``log(1 − p_i)`` ``(..., m)`` of eq. 1 and ``q_ij = e^{f_j + δ} / D_i`` ``(..., m, m)``,
    ``D_i = e^{f_i} + e^δ Σ_{j≠i} e^{f_j}``, all from log-sum-exps (accurate in the tails)."""
    m = f.shape[-1]
    off = ~np.eye(m, dtype=bool)
    shifted = np.where(off, f[..., None, :] + delta, f[..., None, :])  # row i: f_i, f_j + δ
    log_d = logsumexp(shifted, axis=-1)  # (..., m)
    log_p = f - log_d
    others = np.where(off, f[..., None, :], -np.inf)
    log_not_p = delta + logsumexp(others, axis=-1) - log_d
    q = np.where(off, np.exp(f[..., None, :] + delta - log_d[..., None]), 0.0)
    return log_p, log_not_p, q


def log_tie(f, delta):
    """``log p(∅ | f; δ)`` of eq. 4, its gradient in ``f`` ``(..., m)`` and in ``δ`` ``(...)``.

    Computed as ``log(1 − p_t) + log1p(−Σ_{i≠t} p_i / (1 − p_t))`` with ``t`` the member of largest
    ``f``, which stays accurate when the tie is improbable. Gradients of ``T = 1 − Σ p_i``:
    ``∂p_i/∂f_i = p_i (1 − p_i)``, ``∂p_i/∂f_j = −p_i q_ij`` (``j ≠ i``) and
    ``∂p_i/∂δ = −p_i (1 − p_i)``.
    """
    f = np.asarray(f, dtype=float)
    log_p, log_not_p, q = _choice_terms(f, delta)
    top = np.argmax(f, axis=-1)[..., None]
    log_not_top = np.take_along_axis(log_not_p, top, axis=-1)[..., 0]
    ratio = np.exp(log_p - log_not_top[..., None])
    np.put_along_axis(ratio, top, 0.0, axis=-1)
    remainder = np.clip(1.0 - ratio.sum(axis=-1), MIN_PROBABILITY, None)
    value = log_not_top + np.log(remainder)
    p, not_p = np.exp(log_p), np.exp(log_not_p)
    own = p * not_p  # p_i (1 − p_i)
    # ∂T/∂f_j = −[p_j (1 − p_j) − Σ_{i≠j} p_i q_ij]
    d_tie = -(own - np.einsum("...i,...ij->...j", p, q))
    tie = np.exp(value)
    return value, d_tie / tie[..., None], own.sum(axis=-1) / tie


# ---- any outcome ---------------------------------------------------------------------------------
def log_likelihood(f, outcome, delta: float = 0.0, ties_allowed: bool = False) -> np.ndarray:
    """``log p(outcome | f)`` ``(...)`` for latent values ``f`` ``(..., m)``.

    ``outcome``: an ordering (tuple of member indices, best first) or :data:`TIE`. With
    ``ties_allowed`` a single winner follows eq. 1 with threshold ``delta``; without, orderings
    follow Plackett–Luce (``δ = 0``).
    """
    f = np.asarray(f, dtype=float)
    if isinstance(outcome, str):
        if outcome != TIE or not ties_allowed:
            raise ValueError(f"outcome {outcome!r} needs ties_allowed=True and must be {TIE!r}")
        return log_tie(f, delta)[0]
    order = tuple(int(i) for i in outcome)
    arranged = _arrange(f, order)
    if ties_allowed:
        if len(order) != 1:
            raise ValueError("with ties allowed an outcome is one winner or 'same' (Nguyen et al. 2021, Remark 1)")
        return log_choice_canonical(arranged, delta)[0]
    return log_top_k_canonical(arranged, len(order))[0]


def outcome_probabilities(f, outcomes, delta: float = 0.0, ties_allowed: bool = False) -> np.ndarray:
    """``p(o | f)`` for every ``o`` in ``outcomes``, stacked on the last axis: ``(..., n_outcomes)``.

    A fast path for acquisition functions: with ``e = exp(f − max f)``, a winner has probability
    ``e_i / (e_i + e^δ Σ_{j≠i} e_j)`` (eq. 1), a tie ``1 − Σ_i p_i`` (eq. 4, clipped at 0) and an
    ordering the product of ``e_{o_i} / Σ_{j not yet ranked} e_j`` (eq. 3). Each sum over other
    members is formed directly, never as a difference. :func:`log_likelihood` is the accurate
    log-space version used for inference.
    """
    f = np.asarray(f, dtype=float)
    m = f.shape[-1]
    top = f[..., 0]
    for j in range(1, m):  # column by column: numpy's reductions over a short last axis are slow
        top = np.maximum(top, f[..., j])
    e = np.exp(f - top[..., None])
    out = np.empty(f.shape[:-1] + (len(outcomes),))
    if ties_allowed:
        others = e @ (1.0 - np.eye(m))  # Σ_{j≠i} e_j
        p = e / (e + np.exp(delta) * others)
    for column, o in enumerate(outcomes):
        if isinstance(o, str):
            if o != TIE or not ties_allowed:
                raise ValueError(f"outcome {o!r} needs ties_allowed=True and must be {TIE!r}")
            out[..., column] = np.clip(1.0 - p @ np.ones(m), 0.0, None)
            continue
        order = tuple(int(i) for i in o)
        if ties_allowed:
            if len(order) != 1:
                raise ValueError("with ties allowed an outcome is one winner or 'same' (Nguyen et al. 2021, Remark 1)")
            out[..., column] = p[..., order[0]]
            continue
        prob = np.ones(f.shape[:-1])
        for i in range(min(len(order), m - 1)):
            remaining = np.zeros(m)
            remaining[[j for j in range(m) if j not in order[:i]]] = 1.0
            prob *= e[..., order[i]] / np.maximum(e @ remaining, np.finfo(float).tiny)
        out[..., column] = prob
    return out
