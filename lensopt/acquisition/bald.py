"""BALD: Bayesian active learning by disagreement (Houlsby et al. 2011; METHOD.md §3).

The mutual information between the next binary outcome and the latent function, in bits,
``H₂(μ_c) − C / sqrt(σ² + C²) · exp(−μ² / (2 (σ² + C²)))``, ``C = sqrt(π ln 2 / 2)``.
"""

from __future__ import annotations

from lensopt.acquisition.base import chain
from lensopt.gp import uncertainty


class BALD:
    """Expected information (bits) of an outcome at ``X``, with its analytic input gradient."""

    def __init__(self, model):
        self.model = model

    def __call__(self, X):
        mu, var = self.model.predict_latent(X)
        return uncertainty.bald_bits(mu, var)

    def value_and_gradient(self, X):
        mu, var, dmu, dvar = self.model.predict_latent_with_gradient(X)
        g_mu, g_var = uncertainty.bald_bits_grad(mu, var)
        return uncertainty.bald_bits(mu, var), chain(g_mu, g_var, dmu, dvar)
