"""Upper credible bounds for binary outcomes.

- :class:`ProbitUCB` (UCB_Φ; Fauvel & Chalk 2022 eq. 8, METHOD.md §4): in observation space,
  ``μ_c(x) + β sqrt(V[Φ(f(x))])`` with ``μ_c = Φ(μ / sqrt(1 + σ²))`` and the epistemic variance
  from Owen's T. Default ``β = Φ⁻¹(0.95)`` (contextual paper).
  With a floored likelihood ``P = γ + (1 − γ − λ) Φ(f)`` (METHOD.md §2b) UCB_Φ stays on ``Φ(f)``,
  the probability that the patient *resolves* the letter: ``E[P] + β sqrt(V[P])`` is the affine
  image ``γ + κ (μ_c + β sqrt(V[Φ(f)]))`` of it, so both rank lenses identically, and ``Φ(f)``
  keeps ``β`` on the paper's scale.
- :class:`LatentUCB` (UCB_f; Tesch et al. 2013 style): ``μ(x) + β σ(x)`` in latent space, ``β = 1``.
"""

from __future__ import annotations

import numpy as np
from scipy.stats import norm

from lensopt.acquisition.base import VARIANCE_FLOOR, chain
from lensopt.gp import uncertainty

#: β of UCB_Φ in the contextual paper (the companion paper used Φ⁻¹(0.99)).
DEFAULT_PROBIT_BETA = float(norm.ppf(0.95))
#: β of the latent-space UCB.
DEFAULT_LATENT_BETA = 1.0


class ProbitUCB:
    """``μ_c + β sqrt(V[Φ(f)])`` with its analytic input gradient."""

    def __init__(self, model, beta: float = DEFAULT_PROBIT_BETA):
        self.model = model
        self.beta = float(beta)

    def __call__(self, X):
        mu, var = self.model.predict_latent(X)
        epistemic = np.maximum(uncertainty.epistemic_variance(mu, var), VARIANCE_FLOOR)
        return uncertainty.probit_mean(mu, var) + self.beta * np.sqrt(epistemic)

    def value_and_gradient(self, X):
        mu, var, dmu, dvar = self.model.predict_latent_with_gradient(X)
        mean, epistemic, (m_mu, m_var), (e_mu, e_var) = uncertainty.probit_mean_and_epistemic_variance_with_grads(
            mu, var
        )
        epistemic = np.maximum(epistemic, VARIANCE_FLOOR)
        sd = np.sqrt(epistemic)
        scale = self.beta / (2.0 * sd)
        gradient = chain(m_mu + scale * e_mu, m_var + scale * e_var, dmu, dvar)
        return mean + self.beta * sd, gradient


class LatentUCB:
    """``μ + β σ`` in latent space, with its analytic input gradient."""

    def __init__(self, model, beta: float = DEFAULT_LATENT_BETA):
        self.model = model
        self.beta = float(beta)

    def __call__(self, X):
        mu, var = self.model.predict_latent(X)
        return mu + self.beta * np.sqrt(np.maximum(var, VARIANCE_FLOOR))

    def value_and_gradient(self, X):
        mu, var, dmu, dvar = self.model.predict_latent_with_gradient(X)
        sd = np.sqrt(np.maximum(var, VARIANCE_FLOOR))
        return mu + self.beta * sd, dmu + (self.beta / (2.0 * sd))[:, None] * dvar
