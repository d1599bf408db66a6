"""The latent posterior mean as an acquisition (the reported optimum's search, a scaled Thompson draw)."""

from __future__ import annotations


class PosteriorMean:
    """The latent posterior mean ``μ(X)``, with its input gradient: the model's mean-only predictions
    (``predict_latent_mean``, the same numbers without the variance's solve) where it has them,
    else the first value of its full ones."""

    def __init__(self, model):
        self.model = model
        self._mean_only = hasattr(model, "predict_latent_mean")

    def __call__(self, X):
        if self._mean_only:
            return self.model.predict_latent_mean(X)
        return self.model.predict_latent(X)[0]

    def value_and_gradient(self, X):
        if self._mean_only:
            return self.model.predict_latent_mean_with_gradient(X)
        mean, _, dmean, _ = self.model.predict_latent_with_gradient(X)
        return mean, dmean
