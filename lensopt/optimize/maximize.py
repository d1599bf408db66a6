"""Maximize an acquisition function over a box, with some inputs pinned.

Following the authors' toolbox (METHOD.md §4): evaluate the acquisition on scrambled Halton
candidates, draw a few starting points with weights ``∝ exp(z-score)`` (the best candidate is
always one of them), then run bounded L-BFGS-B from every start at once. As in BoTorch's
``gen_candidates_scipy``, the starts are optimized jointly as one problem whose objective is the
sum of the independent per-start values: one scipy call, vectorized evaluations.

An acquisition is any callable ``acq(X) -> (n_points,)`` on full inputs ``(n_points, n_dims)``;
if it also has ``value_and_gradient(X) -> ((n_points,), (n_points, n_dims))`` the starts are
refined by L-BFGS-B, otherwise the best candidate is returned.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

import numpy as np
from scipy.optimize import minimize

from lensopt.optimize.candidates import as_bounds, scrambled_halton


@dataclass(frozen=True)
class MaximizerSettings:
    """How hard to search.

    The authors' toolbox used 500 Halton points and 10 starts; lensopt's searches are over one to
    three dimensions and must fit in a display frame, so fewer candidates and starts suffice (the
    refraction benchmarks in the README were run with these defaults).
    """

    n_candidates: int = 128
    n_starts: int = 3
    max_iterations: int = 30
    #: L-BFGS-B's ``ftol``: stop when the summed value improves by less than this, relatively
    #: (``None``: scipy's default, 2.2e-9, with which the papers' tables were reproduced).
    tolerance: float | None = None

    def __post_init__(self):
        if self.n_candidates < 1:
            raise ValueError(f"n_candidates must be >= 1, got {self.n_candidates}")
        if self.n_starts < 0:
            raise ValueError(f"n_starts must be >= 0, got {self.n_starts}")
        if self.max_iterations < 1:
            raise ValueError(f"max_iterations must be >= 1, got {self.max_iterations}")
        if self.tolerance is not None and not 0.0 < self.tolerance < 1.0:
            raise ValueError(f"tolerance must be in (0, 1) or None, got {self.tolerance}")


def _full_inputs(free_values, free_dims, fixed, n_dims):
    X = np.empty((free_values.shape[0], n_dims))
    X[:, free_dims] = free_values
    for dim, value in fixed.items():
        X[:, dim] = value
    return X


def _choose_starts(values, n_starts, rng):
    """Indices of the starting candidates: the best one, plus draws weighted by exp(z-score)."""
    order = [int(np.argmax(values))]
    if n_starts <= 1 or values.size <= 1:
        return order
    spread = values.std()
    z = (values - values.mean()) / spread if spread > 0 else np.zeros_like(values)
    weights = np.exp(z - z.max())
    weights[order[0]] = 0.0
    n_more = min(n_starts - 1, int(np.count_nonzero(weights)))
    if n_more > 0:
        extra = rng.choice(values.size, size=n_more, replace=False, p=weights / weights.sum())
        order.extend(int(i) for i in extra)
    return order


def maximize_acquisition(
    acquisition,
    bounds,
    rng: np.random.Generator,
    fixed_features: dict[int, float] | None = None,
    settings: MaximizerSettings = MaximizerSettings(),
    extra_candidates: np.ndarray | None = None,
    best_candidate: list | None = None,
) -> tuple[np.ndarray, float]:
    """Return ``(x_best (n_dims,), value)`` maximizing ``acquisition`` over the box.

    ``fixed_features`` pins input columns (``{column: value}``), e.g. the context in the x-step of
    a sequential rule. ``extra_candidates`` (full inputs) are added to the quasi-random ones, e.g.
    the training inputs or the current optimum. ``best_candidate``, a list, receives the best
    candidate before refinement ``(n_dims,)``: what the same call with ``n_starts=0`` returns, so a
    caller that needs both pays for the candidates once.
    """
    box = as_bounds(bounds)
    n_dims = box.shape[0]
    fixed = dict(fixed_features or {})
    for dim in fixed:
        if not 0 <= dim < n_dims:
            raise ValueError(f"fixed feature column {dim} is outside 0..{n_dims - 1}")
    free_dims = [d for d in range(n_dims) if d not in fixed]
    if not free_dims:
        X = _full_inputs(np.empty((1, 0)), [], fixed, n_dims)
        return X[0], float(acquisition(X)[0])
    free_box = box[free_dims]

    candidates = scrambled_halton(free_box, settings.n_candidates, rng)
    if extra_candidates is not None and len(extra_candidates):
        extra = np.clip(np.asarray(extra_candidates, float)[:, free_dims], free_box[:, 0], free_box[:, 1])
        candidates = np.vstack([candidates, extra])
    values = np.asarray(acquisition(_full_inputs(candidates, free_dims, fixed, n_dims)), float)
    values = np.where(np.isfinite(values), values, -np.inf)
    best = int(np.argmax(values))
    x_best, v_best = candidates[best], float(values[best])
    if best_candidate is not None:
        best_candidate.append(_full_inputs(x_best[None], free_dims, fixed, n_dims)[0])

    if settings.n_starts == 0 or not hasattr(acquisition, "value_and_gradient"):
        return _full_inputs(x_best[None], free_dims, fixed, n_dims)[0], v_best

    finite = np.isfinite(values)
    starts = candidates[_choose_starts(np.where(finite, values, values[finite].min()), settings.n_starts, rng)]
    n_starts, n_free = starts.shape

    def objective(flat):
        X = _full_inputs(flat.reshape(n_starts, n_free), free_dims, fixed, n_dims)
        value, gradient = acquisition.value_and_gradient(X)
        return -float(np.sum(value)), -gradient[:, free_dims].ravel()

    result = minimize(
        objective,
        starts.ravel(),
        jac=True,
        method="L-BFGS-B",
        bounds=np.tile(free_box, (n_starts, 1)),
        options={
            "maxiter": settings.max_iterations,
            **({} if settings.tolerance is None else {"ftol": settings.tolerance}),
        },
    )
    refined = np.clip(result.x.reshape(n_starts, n_free), free_box[:, 0], free_box[:, 1])
    refined_values = np.asarray(acquisition(_full_inputs(refined, free_dims, fixed, n_dims)), float)
    i = int(np.argmax(np.where(np.isfinite(refined_values), refined_values, -np.inf)))
    if np.isfinite(refined_values[i]) and refined_values[i] > v_best:
        x_best, v_best = refined[i], float(refined_values[i])
    return _full_inputs(x_best[None], free_dims, fixed, n_dims)[0], v_best


def maximize_on_line(
    acquisition, bounds, column: int, fixed_features: dict[int, float], n_points: int = 64
) -> tuple[np.ndarray, float]:
    """Maximize over one free column on an even grid, refined by the vertex of a parabola.

    For smooth one-dimensional searches (BALD over the letter size) this costs one batched
    evaluation of ``n_points + 1`` inputs, instead of the dozens of small calls of L-BFGS-B.
    """
    box = as_bounds(bounds)
    lo, hi = box[column]
    grid = np.linspace(lo, hi, n_points)
    X = np.tile(np.array([fixed_features.get(d, 0.0) for d in range(box.shape[0])], float), (n_points, 1))
    X[:, column] = grid
    values = np.asarray(acquisition(X), float)
    i = int(np.argmax(values))
    best_x, best_v = grid[i], float(values[i])
    if 0 < i < n_points - 1:
        v0, v1, v2 = values[i - 1], values[i], values[i + 1]
        curvature = v0 - 2.0 * v1 + v2
        if curvature < 0:
            step = grid[1] - grid[0]
            vertex = grid[i] + 0.5 * step * (v0 - v2) / curvature
            candidate = X[i].copy()
            candidate[column] = vertex
            v = float(np.asarray(acquisition(candidate[None]))[0])
            if v > best_v:
                best_x, best_v = vertex, v
    point = X[i].copy()
    point[column] = best_x
    return point, best_v


#: The search for a reported optimum, ``argmax_x μ(s, x)``, in the three model families.
POSTERIOR_MEAN_SEARCH = MaximizerSettings(n_candidates=128, n_starts=2)


class TiltedMean:
    """A posterior mean tilted towards some points among equals, ``μ(z) + t · z`` (``t`` zero on the
    context columns), with its gradient, for :func:`maximize_posterior_mean`: ``mean(X)`` gives
    ``μ`` ``(n,)`` and ``mean_and_gradient(X)`` gives ``(μ, ∂μ/∂z)`` on full inputs ``[s, x]``.
    (The most-plus prescription: ``t`` the plus preference on the spherical equivalent.)"""

    def __init__(self, mean, mean_and_gradient, tilt):
        self._mean = mean
        self._mean_and_gradient = mean_and_gradient
        self.tilt = np.asarray(tilt, dtype=float)

    def __call__(self, X):
        return self._mean(X) + np.asarray(X, dtype=float) @ self.tilt

    def value_and_gradient(self, X):
        mean, dmean = self._mean_and_gradient(X)
        return mean + np.asarray(X, dtype=float) @ self.tilt, dmean + self.tilt


def maximize_posterior_mean(
    mean,
    context,
    system_bounds,
    rng: np.random.Generator,
    extra_candidates: np.ndarray | None = None,
    refine: bool = True,
    tolerance: float | None = None,
    n_starts: int | None = None,
    best_candidate: list | None = None,
) -> np.ndarray:
    """``argmax_x μ(s, x)`` over the box of system points, the context ``s`` pinned: the one
    posterior-mean maximizer of the binary, preference and ranking models.

    ``mean`` is a posterior mean on full inputs ``[s, x]`` ``(n, n_context + n_system)`` (with
    ``value_and_gradient`` to be refined by L-BFGS-B); ``context`` ``(n_context,)`` is pinned with
    :func:`maximize_acquisition`'s ``fixed_features``; ``extra_candidates`` are system points
    ``(m, n_system)`` offered besides the quasi-random ones (e.g. the points already tried);
    ``refine=False`` keeps the best candidate (:data:`POSTERIOR_MEAN_SEARCH` without its starts);
    ``tolerance``: the L-BFGS-B refinement's relative tolerance (``None``: scipy's default);
    ``n_starts``: refinements from the best candidates (``None``: the search's own);
    ``best_candidate``, a list, receives the system point of the best candidate before refinement
    (what ``refine=False`` returns from the same ``rng`` state).
    Returns the system point ``(n_system,)``.
    """
    context = np.asarray(context, dtype=float).reshape(-1)
    k = context.size
    system = as_bounds(system_bounds)
    bounds = np.vstack([np.column_stack([context, context]), system])
    extra = None
    full: list[np.ndarray] = []  # maximize_acquisition's best candidate, when the caller wants it
    if extra_candidates is not None and len(extra_candidates):
        points = np.atleast_2d(np.asarray(extra_candidates, dtype=float))
        extra = np.hstack([np.broadcast_to(context, (points.shape[0], k)), points])
    point, _ = maximize_acquisition(
        mean,
        bounds,
        rng,
        fixed_features={d: float(v) for d, v in enumerate(context)},
        settings=replace(
            POSTERIOR_MEAN_SEARCH, n_starts=POSTERIOR_MEAN_SEARCH.n_starts if refine else 0, tolerance=tolerance
        ),
        extra_candidates=extra,
        best_candidate=None if best_candidate is None else full,
    )
    if best_candidate is not None:
        best_candidate.append(full[0][k:])
    return point[k:]
