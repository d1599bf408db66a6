"""What an acquisition function is, and what it needs from a model.

An acquisition is a callable on full inputs ``X`` of shape ``(n_points, n_dims)`` returning
``(n_points,)`` values to maximize. Those with an analytic gradient also provide
``value_and_gradient(X) -> ((n_points,), (n_points, n_dims))``; the acquisition optimizer
(:mod:`lensopt.optimize`) uses it when present.
"""

from __future__ import annotations

from typing import Protocol, runtime_checkable

import numpy as np

#: Floor on variances before a square root or a division, to keep gradients finite.
VARIANCE_FLOOR = 1e-12


@runtime_checkable
class SupportsPredictLatent(Protocol):
    """A model giving the Gaussian marginal of the latent function at new inputs."""

    def predict_latent(self, X: np.ndarray) -> tuple[np.ndarray, np.ndarray]: ...


@runtime_checkable
class SupportsPredictLatentGradient(SupportsPredictLatent, Protocol):
    """A model that also gives the input gradients of the latent mean and variance."""

    def predict_latent_with_gradient(self, X: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]: ...


class Acquisition(Protocol):
    def __call__(self, X: np.ndarray) -> np.ndarray: ...


class GradientAcquisition(Acquisition, Protocol):
    def value_and_gradient(self, X: np.ndarray) -> tuple[np.ndarray, np.ndarray]: ...


def chain(d_dmu, d_dvar, dmu_dX, dvar_dX) -> np.ndarray:
    """Input gradient of a function of (latent mean, latent variance): the chain rule."""
    return d_dmu[:, None] * dmu_dX + d_dvar[:, None] * dvar_dX
