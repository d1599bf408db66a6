"""Quasi-random candidate points in a box (scrambled Halton, the numbers of ``scipy.stats.qmc``)."""

from __future__ import annotations

import functools
import math

import numpy as np

DOUBLE_DIGITS_BITS = 54
"""A digit of base ``b`` is scrambled while ``b⁻ᵏ > 2⁻⁵⁴`` (Owen 2017, Algorithm 1; scipy's count)."""


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


def first_primes(n: int) -> list[int]:
    """The first ``n`` primes (the Halton bases of ``n`` dimensions)."""
    primes: list[int] = []
    candidate = 2
    while len(primes) < n:
        if all(candidate % p for p in primes if p * p <= candidate):
            primes.append(candidate)
        candidate += 1
    return primes


CACHED_POINTS = 4096
"""Digit tables of up to this many points are kept between calls (a table holds ``n_points × 53``
integers in base 2: 1.7 MB at this size)."""


def _digit_table(n_points: int, base: int) -> tuple[np.ndarray, np.ndarray]:
    """Where the scrambled digits of the first ``n_points`` integers are read from, and their weights:
    ``(index (n_points, count), weights (count,))`` with ``index[i, k] = k·base + d_k(i)`` (the
    ``k``-th digit of ``i`` in a ``(count, base)`` table of permutations) and ``weights[k] =
    b⁻⁽ᵏ⁺¹⁾``, divided down as scipy divides them. Read-only: :func:`_kept_digit_table` keeps the small ones."""
    count = math.ceil(DOUBLE_DIGITS_BITS / math.log2(base)) - 1
    positions = np.arange(count)
    digits = (np.arange(n_points)[:, None] // base ** positions[None, :]) % base
    index = digits + base * positions[None, :]
    weights = np.empty(count)
    weight = 1.0 / base
    for k in range(count):
        weights[k] = weight
        weight /= base
    index.setflags(write=False)
    weights.setflags(write=False)
    return index, weights


_kept_digit_table = functools.lru_cache(maxsize=32)(_digit_table)


def _scrambled_radical_inverse(n_points: int, base: int, rng: np.random.Generator) -> np.ndarray:
    """The first ``n_points`` of the van der Corput sequence in ``base``, every digit scrambled by a
    random permutation of ``0..base−1`` (one per digit position, drawn row by row from ``rng``).

    Each point is ``Σ_k π_k(d_k) b⁻⁽ᵏ⁺¹⁾`` over its digits ``d_k``, the terms added from the most
    significant digit on, in scipy's order: its numbers to the bit."""
    index, weights = (_kept_digit_table if n_points <= CACHED_POINTS else _digit_table)(n_points, base)
    permutations = rng.permuted(np.tile(np.arange(base), (weights.size, 1)), axis=1)
    terms = permutations.ravel()[index] * weights
    # accumulate, not reduce: numpy may sum a reduction pairwise, scipy's loop adds in order
    return np.add.accumulate(terms, axis=1)[:, -1]


def scrambled_halton(bounds, n_points: int, rng: np.random.Generator) -> np.ndarray:
    """``n_points`` scrambled Halton points in the box, ``(n_points, n_dims)``.

    The points of ``scipy.stats.qmc.Halton(d, scramble=True, seed=rng).random(n_points)``, bit for
    bit, with the same use of ``rng`` (the permutations come from one child spawned from it, so the
    parent's stream does not advance), in a third of the time: scipy's engine deep-copies its
    generator and shuffles each permutation in a Python loop, half a millisecond a call, and the
    letter rules draw candidates twice a decision. Degenerate dimensions (low == high) are returned
    at their single value.
    """
    box = as_bounds(bounds)
    (child,) = rng.spawn(1)
    unit = np.column_stack([_scrambled_radical_inverse(n_points, b, child) for b in first_primes(box.shape[0])])
    return box[:, 0] + unit * (box[:, 1] - box[:, 0])


def uniform(bounds, n_points: int, rng: np.random.Generator) -> np.ndarray:
    """``n_points`` independent uniform points in the box, ``(n_points, n_dims)``."""
    box = as_bounds(bounds)
    return rng.uniform(box[:, 0], box[:, 1], size=(n_points, box.shape[0]))
