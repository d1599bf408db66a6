"""Shared helpers of the ranking tests: a bump utility, Gumbel-noise answers, finite differences."""

import numpy as np


def bump(x, centre=0.3, width=0.1, amplitude=3.0):
    """A smooth utility on [0, 1]^d with its maximum ``amplitude`` at ``centre``."""
    x = np.atleast_2d(x)
    return amplitude * np.exp(-np.sum((x - centre) ** 2, axis=1) / (2 * width**2))


def gumbel_answer(utilities, rng, delta=0.0, top_k=1):
    """Simulate the paper's noise model directly: ``u = f + Gumbel``; "same" when the best noisy
    utility is less than ``delta`` ahead of the second (only if ``delta > 0``), else the indices of the
    ``top_k`` largest noisy utilities, best first."""
    u = np.asarray(utilities, dtype=float) + rng.gumbel(size=len(utilities))
    order = np.argsort(-u)
    if delta > 0 and u[order[0]] - u[order[1]] < delta:
        return "same"
    return tuple(int(i) for i in order[:top_k])


def finite_difference(function, x, step=1e-6):
    """Central differences of a scalar function of a vector."""
    grad = np.zeros_like(x, dtype=float)
    for i in range(x.size):
        e = np.zeros_like(x, dtype=float)
        e.flat[i] = step
        grad.flat[i] = (function(x + e) - function(x - e)) / (2 * step)
    return grad
