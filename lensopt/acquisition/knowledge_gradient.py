"""Contextual binary knowledge gradient, cBKG (seed paper §3.2, supplements B and C).

``KG(s, x) = μ_c(s, x) μ*₁ + (1 − μ_c(s, x)) μ*₀ − μ*``, where
``μ*_c = max_x' E[f(s₀, x') | D ∪ {(s, x, c)}]`` needs a re-fit of the posterior for each
fantasized outcome ``c``. The inner maximum is taken over a fixed set of system points (scrambled
Halton plus the current optimum), which the outer search shares, so KG differences between
candidates are not blurred by inner-search noise. Each call evaluates KG at every row of ``X``
(value only: the gradient of the paper, through the envelope theorem, is not used; the outer
search keeps the best quasi-random candidate).
"""

from __future__ import annotations

import copy

import numpy as np

from lensopt.gp import uncertainty


class ContextualKnowledgeGradient:
    def __init__(self, model, inner_system_points: np.ndarray, reference_context: np.ndarray):
        """``inner_system_points``: full inputs ``(m, n_dims)`` at the reference context ``s₀``."""
        self.model = model
        self.inner = np.asarray(inner_system_points, float)
        self.reference_context = np.asarray(reference_context, float)
        mean, _ = model.predict_latent(self.inner)
        self.current_best = float(mean.max())

    def _fantasy_best(self, x_new, outcome):
        fantasy = copy.copy(self.model)
        fantasy.fit(
            np.vstack([self.model.X_train_, x_new[None, :]]),
            np.append(self.model.y_train_, outcome),
        )
        mean, _ = fantasy.predict_latent(self.inner)
        return float(mean.max())

    def __call__(self, X):
        X = np.atleast_2d(np.asarray(X, float))
        mu, var = self.model.predict_latent(X)
        floor = (getattr(self.model, "guess_rate", 0.0), getattr(self.model, "lapse_rate", 0.0))
        p_success = uncertainty.floored_mean(mu, var, *floor)  # μ_c when the model has no floor
        values = np.empty(X.shape[0])
        for i, x_new in enumerate(X):
            best_if_success = self._fantasy_best(x_new, 1)
            best_if_failure = self._fantasy_best(x_new, 0)
            values[i] = p_success[i] * best_if_success + (1.0 - p_success[i]) * best_if_failure - self.current_best
        return values
