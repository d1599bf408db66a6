"""Thompson sampling: one function drawn from the GP posterior, to be maximized.

The draw uses decoupled bases (Wilson et al. 2020; METHOD.md §4, seed supplement G.3): a prior
sample from a finite feature expansion plus the exact update through the training inputs, with
the latent values at the training inputs drawn from the Laplace/EP posterior.
"""

from __future__ import annotations

import numpy as np

from lensopt.gp.mean import BowlMean
from lensopt.gp.sampling import sample_posterior

#: Number of random features of the prior sample.
DEFAULT_N_FEATURES = 512


class ThompsonSample:
    """The value of one posterior draw ``f̃(X)``, with its input gradient.

    The draw is of the zero-mean part ``f − m``; a constant prior mean ``m`` changes no argmax and
    is left out (as in the papers' runs), a :class:`lensopt.gp.mean.BowlMean` is added."""

    def __init__(self, model, rng: np.random.Generator, n_features: int = DEFAULT_N_FEATURES):
        self.sample = sample_posterior(model, rng, n_features=n_features)
        mean = getattr(model, "prior_mean", 0.0)
        self.mean = mean if isinstance(mean, BowlMean) else None

    def __call__(self, X):
        value = self.sample(X)
        return value if self.mean is None else value + self.mean(X)

    def value_and_gradient(self, X):
        value, gradient = self.sample(X), self.sample.gradient(X)
        if self.mean is None:
            return value, gradient
        return value + self.mean(X), gradient + self.mean.gradient(X)
