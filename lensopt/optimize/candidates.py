"""Quasi-random candidate points in a box (scrambled Halton, as ``scipy.stats.qmc.Halton``)."""

from __future__ import annotations

import math

import numpy as np

#: The Halton sequence's bases, one prime per dimension.
_PRIMES = (2, 3, 5, 7, 11, 13, 17, 19, 23, 29, 31, 37, 41, 43, 47, 53, 59, 61, 67, 71, 73, 79, 83, 89, 97)


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


def _primes(n: int) -> list[int]:
    """The first ``n`` primes."""
    primes = list(_PRIMES[:n])
    candidate = _PRIMES[-1] + 2
    while len(primes) < n:
        if all(candidate % p for p in primes if p * p <= candidate):
            primes.append(candidate)
        candidate += 2
    return primes


def _scrambled_van_der_corput(n_points: int, base: int, rng: np.random.Generator) -> np.ndarray:
    """Points ``0 .. n_points − 1`` of the van der Corput sequence in ``base``, Owen-scrambled.

    As scipy's (``scipy.stats.qmc``, Owen 2017 Algorithm 1): one random permutation ``π_j`` of
    the digits per digit position ``j``, for every ``j`` with ``base^−(j+1) > 2^−54``; point ``i``
    with digits ``d_j`` (least significant first) is ``Σ_j π_j(d_j) base^−(j+1)``, summed in
    order of ``j`` with the weights ``base^−(j+1)`` by repeated division, as scipy sums them. The
    permutations are each row of ``arange(base)`` shuffled in turn, which ``rng.permuted`` does
    in one call with the same draws. Digit positions past the largest index's read ``π_j(0)`` for
    every point."""
    n_digits = math.ceil(54 / math.log2(base)) - 1
    permutations = rng.permuted(np.repeat(np.arange(base)[None], n_digits, axis=0), axis=1)
    weights = [1.0 / base]
    for _ in range(n_digits - 1):
        weights.append(weights[-1] / base)
    weights = np.array(weights)
    n_used = 1  # digit positions where some point's digit is not 0
    while base**n_used < n_points:
        n_used += 1
    n_used = min(n_used, n_digits)
    digits = (np.arange(n_points) // base ** np.arange(n_used)[:, None]) % base  # (n_used, n_points)
    point = np.zeros(n_points)
    for term in permutations[np.arange(n_used)[:, None], digits] * weights[:n_used, None]:
        point += term
    for term in (permutations[n_used:, 0] * weights[n_used:]).tolist():
        point += term  # the same for every point, added in turn all the same: scipy's rounding
    return point


def scrambled_halton(bounds, n_points: int, rng: np.random.Generator) -> np.ndarray:
    """``n_points`` scrambled Halton points in the box, ``(n_points, n_dims)``.

    The points of ``scipy.stats.qmc.Halton(d, scramble=True, seed=rng).random(n_points)``, from the
    same random numbers: the sampler draws its permutations from a generator spawned from
    ``rng`` (``rng`` itself draws nothing; its seed sequence counts one more child), one dimension
    after the other. Built here without the sampler object, whose construction (a spawned generator
    copied for resets, validation) cost more than the points at the search's sizes.
    Degenerate dimensions (low == high) are returned at their single value.
    """
    box = as_bounds(bounds)
    (sampler_rng,) = rng.spawn(1)  # a child from the seed sequence, as scipy's samplers spawn it
    unit = np.empty((n_points, box.shape[0]))
    for dim, base in enumerate(_primes(box.shape[0])):
        unit[:, dim] = _scrambled_van_der_corput(n_points, base, sampler_rng)
    return box[:, 0] + unit * (box[:, 1] - box[:, 0])


def uniform(bounds, n_points: int, rng: np.random.Generator) -> np.ndarray:
    """``n_points`` independent uniform points in the box, ``(n_points, n_dims)``."""
    box = as_bounds(bounds)
    return rng.uniform(box[:, 0], box[:, 1], size=(n_points, box.shape[0]))
