"""Covariance functions for the latent GP, with hyperparameter and input gradients.

Kernels are immutable: ``with_theta`` returns a new kernel. Hyperparameters are positive and are
exposed to optimizers as ``theta`` = log of the free (not fixed) ones, in a fixed order (a sum or
product lists its first kernel's, then its second's). Shapes: ``X`` is ``(n, d)``, ``Y`` is
``(m, d)``; a kernel reads only its ``active_dims`` columns (``None`` = all). Contextual inputs
put the context columns first (refraction: ``letter_logmar, sphere_d, cylinder_d``).
"""

from lensopt.gp.kernels.base import (
    DEFAULT_LENGTHSCALE_BOUNDS,
    DEFAULT_VARIANCE_BOUNDS,
    Kernel,
    Product,
    Sum,
)
from lensopt.gp.kernels.linear import LinearContext
from lensopt.gp.kernels.presets import benchmark_context_kernel, psychophysics_kernel
from lensopt.gp.kernels.stationary import Matern32, Matern52, SquaredExponential

__all__ = [
    "DEFAULT_LENGTHSCALE_BOUNDS",
    "DEFAULT_VARIANCE_BOUNDS",
    "Kernel",
    "LinearContext",
    "Matern32",
    "Matern52",
    "Product",
    "SquaredExponential",
    "Sum",
    "benchmark_context_kernel",
    "psychophysics_kernel",
]
