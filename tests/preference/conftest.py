"""Shared helpers of the preference tests: simulated probit duels and finite differences."""

import numpy as np
from scipy.stats import norm


def bump(x, centre=0.3, width=0.15, amplitude=3.0):
    """A smooth utility on [0, 1]^d with its maximum ``amplitude`` at ``centre``."""
    x = np.atleast_2d(x)
    return amplitude * np.exp(-np.sum((x - centre) ** 2, axis=1) / (2 * width**2))


def simulated_duels(n, n_system, n_context=0, seed=0, utility=bump):
    """``n`` uniform duels ``[s, x, x']`` on [0, 1] (context on [0.2, 1]) with probit answers
    ``P(first preferred) = Φ(s (u(x) − u(x')))`` (``s = 1`` without a context)."""
    rng = np.random.default_rng(seed)
    s = rng.uniform(0.2, 1.0, (n, n_context))
    x, x2 = rng.uniform(size=(n, n_system)), rng.uniform(size=(n, n_system))
    scale = s[:, 0] if n_context else 1.0
    y = (rng.uniform(size=n) < norm.cdf(scale * (utility(x) - utility(x2)))).astype(float)
    return np.hstack([s, x, x2]), y


def swap_members(Z, n_context):
    """The same duels with their two members exchanged."""
    d = (Z.shape[1] - n_context) // 2
    return np.hstack([Z[:, :n_context], Z[:, n_context + d :], Z[:, n_context : n_context + d]])


def finite_difference(function, X, step=1e-6):
    """Central differences of a row-wise function ``(n, D) -> (n,)``: ``(n, D)``."""
    grad = np.zeros_like(X)
    for k in range(X.shape[1]):
        e = np.zeros(X.shape[1])
        e[k] = step
        grad[:, k] = (function(X + e) - function(X - e)) / (2 * step)
    return grad
