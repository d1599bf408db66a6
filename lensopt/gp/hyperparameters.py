"""Type-II maximum likelihood of kernel hyperparameters: bounded multi-start L-BFGS-B.

The objective is the (Laplace or EP) approximate log marginal likelihood with its analytic
gradient (R&W Algorithm 5.1 / eq. 5.27), in log-hyperparameter space. The first start is the
current ``theta`` (clipped into the bounds); the others are drawn uniformly in the log-space box
from a seeded generator, so a given seed always gives the same result.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
from scipy.optimize import minimize

FAILED_OBJECTIVE = 1e25
"""Value returned to L-BFGS-B where the marginal likelihood cannot be evaluated (non-finite)."""

LBFGS_MAX_ITERATIONS = 200
"""Iteration cap of each L-BFGS-B start."""


@dataclass(frozen=True)
class HyperparameterFit:
    """Result of :func:`maximize_log_marginal_likelihood`."""

    theta: np.ndarray
    log_marginal_likelihood: float
    n_starts: int


def maximize_log_marginal_likelihood(
    objective: Callable[[np.ndarray], tuple[float, np.ndarray]],
    theta0: np.ndarray,
    bounds: np.ndarray,
    n_restarts: int = 5,
    seed: int | np.random.Generator | None = None,
) -> HyperparameterFit:
    """Maximise ``objective(theta) -> (log marginal likelihood, gradient)`` inside ``bounds``.

    ``theta0``: first start, ``bounds``: ``(n_theta, 2)`` in log space, ``n_restarts``: number of
    extra random starts (≥ 0), ``seed``: seed or generator for those starts.
    """
    if int(n_restarts) != n_restarts or n_restarts < 0:
        raise ValueError(f"n_restarts must be a non-negative integer; got {n_restarts}")
    bounds = np.asarray(bounds, dtype=float).reshape(-1, 2)
    theta0 = np.clip(np.asarray(theta0, dtype=float).reshape(-1), bounds[:, 0], bounds[:, 1])
    if theta0.size == 0:
        value, _ = objective(theta0)
        return HyperparameterFit(theta0, float(value), 0)
    rng = np.random.default_rng(seed)
    starts = [theta0] + [rng.uniform(bounds[:, 0], bounds[:, 1]) for _ in range(int(n_restarts))]

    def negative(theta):
        try:
            value, grad = objective(theta)
        except (np.linalg.LinAlgError, FloatingPointError):
            return FAILED_OBJECTIVE, np.zeros_like(theta)
        if not (np.isfinite(value) and np.all(np.isfinite(grad))):
            return FAILED_OBJECTIVE, np.zeros_like(theta)
        return -float(value), -np.asarray(grad, dtype=float)

    best_theta, best_value = theta0, -np.inf
    for start in starts:
        result = minimize(
            negative,
            start,
            jac=True,
            method="L-BFGS-B",
            bounds=bounds,
            options={"maxiter": LBFGS_MAX_ITERATIONS},
        )
        theta = np.clip(result.x, bounds[:, 0], bounds[:, 1])
        value = -float(result.fun)
        if value > best_value and result.fun < FAILED_OBJECTIVE:
            best_theta, best_value = theta, value
    return HyperparameterFit(best_theta, best_value, len(starts))
