"""The two kernel presets of Fauvel & Chalk (contextual binary BO): the psychophysics kernel
``θ s·s' + k_SE(x, x')`` and the benchmark's context kernel ``s s' k(x, x')``."""

from __future__ import annotations

import numpy as np

from lensopt.gp.kernels.base import Kernel, _check_dims
from lensopt.gp.kernels.linear import LinearContext
from lensopt.gp.kernels.stationary import SquaredExponential


def psychophysics_kernel(theta, lengthscales, variance=1.0, context_dims=(0,), system_dims=None) -> Kernel:
    """``θ s·s' + k_SE(x, x')`` (Fauvel & Chalk, contextual binary BO, eq. 15).

    ``system_dims=None`` means the columns right after the context columns: one per lengthscale
    for ARD lengthscales, or two (the refraction layout ``sphere_d, cylinder_d``) for a scalar one.
    """
    context_dims = _check_dims(context_dims)
    if system_dims is None:
        n_system = np.size(lengthscales) if np.ndim(lengthscales) == 1 else 2
        start = max(context_dims) + 1
        system_dims = tuple(range(start, start + n_system))
    system_dims = _check_dims(system_dims)
    if set(system_dims) & set(context_dims):
        raise ValueError(f"system_dims {system_dims} overlap context_dims {context_dims}")
    return LinearContext(theta, active_dims=context_dims) + SquaredExponential(
        lengthscales, variance, active_dims=system_dims
    )


def benchmark_context_kernel(base: Kernel, context_dims=(0,)) -> Kernel:
    """``s s' k(x, x')`` (Fauvel & Chalk §4, ``P = Φ(s g(x))``); ``base`` must read only system columns."""
    context_dims = _check_dims(context_dims)
    if base.active_dims is None or set(base.active_dims) & set(context_dims):
        raise ValueError(
            f"benchmark_context_kernel: base kernel reads columns {base.active_dims}, which include the "
            f"context columns {context_dims}; build it with active_dims set to the system columns"
        )
    return LinearContext(1.0, active_dims=context_dims, fixed=("variance",)) * base
