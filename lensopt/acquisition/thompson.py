"""Thompson sampling: one function drawn from the GP posterior, to be maximized.

The draw uses decoupled bases (Wilson et al. 2020; METHOD.md §4, seed supplement G.3): a prior
sample from a finite feature expansion plus the exact update through the training inputs, with
the latent values at the training inputs drawn from the Laplace/EP posterior.
"""

from __future__ import annotations

import numpy as np

from lensopt.acquisition.mean import PosteriorMean
from lensopt.gp.mean import MeanFunction
from lensopt.gp.sampling import sample_posterior

#: Number of random features of the prior sample.
DEFAULT_N_FEATURES = 512


class ThompsonSample:
    """The value of one posterior draw ``f̃(X)``, with its input gradient.

    The draw is of the zero-mean part ``f − m``; a constant prior mean ``m`` changes no argmax and
    is left out (as in the papers' runs), a :class:`lensopt.gp.mean.MeanFunction` (a bowl) is added, and so is
    the ``objective_tilt`` of a tilted model (:class:`lensopt.binary.rules.TiltedObjective`).

    ``scale`` ``c`` ≠ 1: the value is ``μ + c (f̃ − μ)`` (up to the constant ``m``, which changes no
    argmax), the draw's deviation from the posterior mean ``μ`` (:class:`PosteriorMean` of the
    ``model``) scaled: ``c > 1`` explores more widely than the posterior, ``c < 1`` less."""

    def __init__(self, model, rng: np.random.Generator, n_features: int = DEFAULT_N_FEATURES, scale: float = 1.0):
        self.sample = sample_posterior(model, rng, n_features=n_features)
        mean = getattr(model, "prior_mean", 0.0)
        self.mean = mean if isinstance(mean, MeanFunction) else None
        self.tilt = getattr(model, "objective_tilt", None)  # lensopt.binary.rules.TiltedObjective
        self.posterior_mean, self.scale = PosteriorMean(model), float(scale)

    def __call__(self, X):
        return self.value_and_gradient(X, gradient=False)[0]

    def value_and_gradient(self, X, gradient: bool = True):
        value = self.sample(X)
        grad = self.sample.gradient(X) if gradient else None
        if self.mean is not None:
            value = value + self.mean(X)
            grad = None if grad is None else grad + self.mean.gradient(X)
        if self.tilt is not None:
            value = value + np.asarray(X, dtype=float) @ self.tilt
            grad = None if grad is None else grad + self.tilt
        if self.scale == 1.0:
            return value, grad
        if grad is None:
            return (1.0 - self.scale) * self.posterior_mean(X) + self.scale * value, None
        mu, dmu = self.posterior_mean.value_and_gradient(X)
        return (1.0 - self.scale) * mu + self.scale * value, (1.0 - self.scale) * dmu + self.scale * grad
