"""Quasi-random candidate points in a box (scrambled Halton, ``scipy.stats.qmc``)."""

from __future__ import annotations

import numpy as np
from scipy.stats import qmc


def as_bounds(bounds) -> np.ndarray:
    """Validate a box given as ``[(low, high), ...]`` and return it as a ``(n_dims, 2)`` array."""
    array = np.asarray(bounds, dtype=float)
    if array.ndim != 2 or array.shape[1] != 2 or array.shape[0] == 0:
        raise ValueError(f"bounds must be a list of (low, high) pairs, got shape {array.shape}")
    if not np.all(np.isfinite(array)):
        raise ValueError("bounds must be finite numbers")
    if np.any(array[:, 0] > array[:, 1]):
        bad = int(np.argmax(array[:, 0] > array[:, 1]))
        raise ValueError(f"bounds are reversed in dimension {bad}: low {array[bad, 0]} > high {array[bad, 1]}")
    return array


def scrambled_halton(bounds, n_points: int, rng: np.random.Generator) -> np.ndarray:
    """``n_points`` scrambled Halton points in the box, ``(n_points, n_dims)``.

    Degenerate dimensions (low == high) are returned at their single value.
    """
    box = as_bounds(bounds)
    sampler = qmc.Halton(d=box.shape[0], scramble=True, seed=rng)
    unit = sampler.random(n_points)
    return box[:, 0] + unit * (box[:, 1] - box[:, 0])


def uniform(bounds, n_points: int, rng: np.random.Generator) -> np.ndarray:
    """``n_points`` independent uniform points in the box, ``(n_points, n_dims)``."""
    box = as_bounds(bounds)
    return rng.uniform(box[:, 0], box[:, 1], size=(n_points, box.shape[0]))
