"""BALD: Bayesian active learning by disagreement (Houlsby et al. 2011; METHOD.md §3).

The mutual information between the next binary outcome and the latent function, in bits,
``H₂(μ_c) − C / sqrt(σ² + C²) · exp(−μ² / (2 (σ² + C²)))``, ``C = sqrt(π ln 2 / 2)``.

A model with a guess floor or a lapse rate (``model.guess_rate``/``model.lapse_rate``, METHOD.md
§2b) gets the BALD of its floored likelihood, ``H₂(E[P]) − E_f[H₂(γ + κ Φ(f))]``: a letter far too
small to read is then worth nothing (the answer is a guess either way), and so is one far too large.
"""

from __future__ import annotations

from lensopt.acquisition.base import chain
from lensopt.gp import uncertainty


class BALD:
    """Expected information (bits) of an outcome at ``X``, with its analytic input gradient."""

    def __init__(self, model):
        self.model = model
        self.floor = (float(getattr(model, "guess_rate", 0.0)), float(getattr(model, "lapse_rate", 0.0)))

    def _value(self, mu, var):
        if any(self.floor):
            return uncertainty.floored_bald_bits(mu, var, *self.floor)
        return uncertainty.bald_bits(mu, var)

    def __call__(self, X):
        return self._value(*self.model.predict_latent(X))

    def value_and_gradient(self, X):
        mu, var, dmu, dvar = self.model.predict_latent_with_gradient(X)
        if any(self.floor):
            g_mu, g_var = uncertainty.floored_bald_bits_grad(mu, var, *self.floor)
        else:
            g_mu, g_var = uncertainty.bald_bits_grad(mu, var)
        return self._value(mu, var), chain(g_mu, g_var, dmu, dvar)
