"""Lenses given as numbers or arrays, as the ``(n, 2)`` columns of sphere and cylinder (D) that the
letter optimizers compute on (:meth:`RefractionOptimizer.predicted_acuity_logmar
<lensopt.refraction.letters.RefractionOptimizer.predicted_acuity_logmar>` and the acuity law's)."""

from __future__ import annotations

import numpy as np


def lens_columns(sphere_d, cylinder_d) -> tuple[np.ndarray, tuple[int, ...]]:
    """Two-parameter lenses (numbers or arrays, D) as an ``(n, 2)`` array of ``(sphere, cylinder)``
    and their broadcast shape; a one-line ValueError for a power that is no finite number."""
    powers = {}
    for name, value in (("sphere_d", sphere_d), ("cylinder_d", cylinder_d)):
        try:
            powers[name] = power = np.asarray(value, dtype=float)
        except (TypeError, ValueError):
            raise ValueError(f"{name} must be numbers of diopters, got {value!r}") from None
        if not np.isfinite(power).all():
            raise ValueError(f"{name} must be finite numbers of diopters, got {float(power[~np.isfinite(power)][0])!r}")
    try:
        shape = np.broadcast(*powers.values()).shape
    except ValueError:
        shapes = " and ".join(f"{name} of shape {power.shape}" for name, power in powers.items())
        raise ValueError(f"{shapes} do not broadcast: give one sphere per cylinder, or a number for either") from None
    return np.column_stack([np.broadcast_to(power, shape).ravel() for power in powers.values()]), shape
