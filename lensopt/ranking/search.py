"""Choosing a query: the compared set by MPES at ``s₀``, then the context by information.

The set search follows the paper (§4: "randomly selecting a number of subsets of ``|C|`` inputs"),
with three kinds of candidate sets scored in one batch — quasi-random sets (scrambled Halton in the
``m·d``-dimensional product box), sets whose first member is the posterior-mean argmax, and subsets
of the sampled maximizers ``X*`` — then :data:`LOCAL_RADII` rounds of Gaussian perturbations
around the best few sets (MPES is evaluated with common random numbers, so it is smooth in ``C``).
"""

from __future__ import annotations

import numpy as np

from lensopt.optimize import scrambled_halton, uniform
from lensopt.ranking.acquisition import MPES, context_information, sample_maximizers
from lensopt.ranking.likelihood import all_outcomes

LOCAL_RADII = (0.1, 0.03)
"""Standard deviations (fractions of each system range) of the perturbation rounds."""

N_LEADERS = 4
"""Best sets perturbed in each refinement round."""

CONTEXT_GRID = 64
"""Points of the one-dimensional grid of the context step."""

DUPLICATE_TOLERANCE = 1e-3
"""Two members closer than this fraction of every system range count as the same point."""


def _with_context(context, members):
    """Full inputs ``[s, x]`` for members ``(..., m, d)``."""
    context = np.asarray(context, dtype=float).reshape(-1)
    shape = members.shape[:-1] + (context.size,)
    return np.concatenate([np.broadcast_to(context, shape), members], axis=-1)


def _box(settings):
    return np.array(settings.system_bounds, dtype=float)


def candidate_sets(settings, rng, best=None, maximizers=None) -> np.ndarray:
    """``(B, m, d)`` candidate sets of system points (see the module docstring)."""
    m, d, n = settings.set_size, settings.n_system, settings.n_candidate_sets
    box = _box(settings)
    sets = [scrambled_halton(np.tile(box, (m, 1)), n, rng).reshape(n, m, d)]
    if best is not None:
        others = scrambled_halton(np.tile(box, (m - 1, 1)), n // 2, rng).reshape(-1, m - 1, d)
        sets.append(np.concatenate([np.broadcast_to(best, (others.shape[0], 1, d)), others], axis=1))
    if maximizers is not None and len(maximizers) >= m:
        picks = np.array([rng.choice(len(maximizers), m, replace=False) for _ in range(n // 4)])
        sets.append(maximizers[picks])
    return np.concatenate(sets, axis=0)


def distinct(sets, settings) -> np.ndarray:
    """``(B,)`` True where no two members of a set are closer than the duplicate tolerance."""
    box = _box(settings)
    width = box[:, 1] - box[:, 0]
    m = sets.shape[1]
    ok = np.ones(sets.shape[0], dtype=bool)
    for i in range(m):
        for j in range(i + 1, m):
            ok &= ~np.all(np.abs(sets[:, i] - sets[:, j]) < DUPLICATE_TOLERANCE * width, axis=1)
    return ok


def choose_members(model, settings, rng, reference, best) -> tuple[np.ndarray, float]:
    """The set ``(m, d)`` maximizing MPES at ``s₀`` and its value in nats."""
    box = _box(settings)
    d = settings.n_system
    k = reference.size
    members_seen = model.inputs_[:, k:]
    maximizers = sample_maximizers(
        model,
        box,
        rng,
        settings.n_maximizers,
        settings.n_maximizer_candidates,
        fixed_columns=reference,
        extra=np.vstack([members_seen, best[None]]),
    )
    outcomes = all_outcomes(settings.set_size, settings.top_k, settings.allow_ties)
    mpes = MPES(model, maximizers, outcomes, settings.allow_ties, rng, settings.n_mpes_samples)

    def score(sets):
        values = mpes(_with_context(reference, sets))
        return np.where(distinct(sets, settings), values, -np.inf)

    sets = candidate_sets(settings, rng, best, maximizers[:, k:])
    values = score(sets)
    width = box[:, 1] - box[:, 0]
    per_leader = max(1, settings.n_candidate_sets // (2 * N_LEADERS))
    for radius in LOCAL_RADII:
        top = np.argsort(values)[::-1][:N_LEADERS]
        leaders = sets[top]
        moves = rng.standard_normal((leaders.shape[0], per_leader) + leaders.shape[1:]) * radius * width
        moved = np.clip(leaders[:, None] + moves, box[:, 0], box[:, 1]).reshape(-1, settings.set_size, d)
        sets = np.concatenate([leaders, moved])
        values = np.concatenate([values[top], score(moved)])
    best_index = int(np.argmax(values))
    return sets[best_index].copy(), float(values[best_index])


def choose_context(model, settings, members, rng) -> np.ndarray:
    """The context ``(1,)`` on a grid maximizing ``I(o; f | s, C)`` for the chosen members."""
    lo, hi = settings.context_bounds[0]
    grid = np.linspace(lo, hi, CONTEXT_GRID)
    sets = np.concatenate(
        [
            np.broadcast_to(grid[:, None, None], (grid.size, members.shape[0], 1)),
            np.broadcast_to(members, (grid.size,) + members.shape),
        ],
        axis=2,
    )
    outcomes = all_outcomes(settings.set_size, settings.top_k, settings.allow_ties)
    values = context_information(model, sets, outcomes, settings.allow_ties, rng, settings.n_mpes_samples)
    return np.array([grid[int(np.argmax(values))]])


def random_query(settings, rng) -> tuple[np.ndarray, np.ndarray]:
    """A uniform context and ``m`` uniform, distinct members."""
    context = uniform(settings.context_bounds, 1, rng)[0] if settings.context_bounds else np.zeros(0)
    members = uniform(settings.system_bounds, settings.set_size, rng)
    while not distinct(members[None], settings)[0]:
        members = uniform(settings.system_bounds, settings.set_size, rng)
    return context, members
