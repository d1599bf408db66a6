"""Thompson sampling: one function drawn from the GP posterior, to be maximized.

The draw uses decoupled bases (Wilson et al. 2020; METHOD.md §4, seed supplement G.3): a prior
sample from a finite feature expansion plus the exact update through the training inputs, with
the latent values at the training inputs drawn from the Laplace/EP posterior.
"""

from __future__ import annotations

import numpy as np

from lensopt.gp.sampling import sample_posterior

#: Number of random features of the prior sample.
DEFAULT_N_FEATURES = 512


class ThompsonSample:
    """The value of one posterior draw ``f̃(X)``, with its input gradient."""

    def __init__(self, model, rng: np.random.Generator, n_features: int = DEFAULT_N_FEATURES):
        self.sample = sample_posterior(model, rng, n_features=n_features)

    def __call__(self, X):
        return self.sample(X)

    def value_and_gradient(self, X):
        return self.sample(X), self.sample.gradient(X)
