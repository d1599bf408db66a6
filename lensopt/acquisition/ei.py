"""Expected improvement for binary outputs (Tesch, Schneider & Choset 2013).

``EI(x) = E[max(0, Φ(f(x)) − τ)]`` in observation space, ``f(x) ~ N(μ, σ²)``, where the
incumbent ``τ`` is the best predicted success probability among the inputs tried so far.
The expectation is a one-dimensional Gauss–Hermite quadrature (value only; the acquisition
optimizer then keeps the best quasi-random candidate).
"""

from __future__ import annotations

import numpy as np
from scipy.stats import norm

#: Gauss–Hermite nodes used for the expectation over the latent value.
N_QUADRATURE_NODES = 64


class BinaryExpectedImprovement:
    def __init__(self, model, incumbent_probability: float):
        self.model = model
        self.incumbent = float(incumbent_probability)
        nodes, weights = np.polynomial.hermite_e.hermegauss(N_QUADRATURE_NODES)
        self._nodes, self._weights = nodes, weights / np.sqrt(2.0 * np.pi)

    def __call__(self, X):
        mu, var = self.model.predict_latent(X)
        f = mu[:, None] + np.sqrt(np.maximum(var, 0.0))[:, None] * self._nodes[None, :]
        return np.maximum(norm.cdf(f) - self.incumbent, 0.0) @ self._weights
