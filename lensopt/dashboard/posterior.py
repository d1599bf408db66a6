"""Posterior summaries every kind of session draws (no Qt, no pyplot): the lens grid and bounds,
and where the optimum lies.

The letter sessions (:mod:`lensopt.dashboard.model`) and the sessions that compare lenses
(:mod:`lensopt.dashboard.comparison_model`) both build on this module; it imports neither.

Uncertainty of the best lens
----------------------------
Its ± in diopters is the posterior spread of the *location* of the optimum: the standard deviation
of draws of the optimum (an optimizer's ``optimum_draws_d``; for a GP, Thompson samples of the
argmax, :mod:`lensopt.refraction.optimum_draws`) plus the quantization variance of the grid they
lie on, and the credible region is the 95 % ellipse of their covariance (Gaussian approximation).
"""

from __future__ import annotations

import math

import numpy as np

from lensopt.dashboard.series import frozen_array

#: Points per axis of the lens map of predicted acuity.
LENS_MAP_POINTS = 41
#: Posterior mass of the credible region drawn around the best lens.
CREDIBLE_MASS = 0.95
#: Normal quantile of the 95 % credible bands (mean ± z·sd): the psychometric curve's, the utility profile's.
BAND_Z = 1.959963984540054

_DEFAULT_BOUNDS = {
    "sphere_bounds_d": (-4.0, 4.0),
    "cylinder_bounds_d": (-4.0, 4.0),
    "letter_bounds_logmar": (-1.0, 2.0),
}


def credible_ellipse(center, covariance, mass: float = CREDIBLE_MASS, n_points: int = 121) -> np.ndarray:
    """Boundary ``(n_points, 2)`` of the Gaussian credible ellipse holding ``mass``.

    For a 2-D Gaussian, ``(x−m)ᵀ Σ⁻¹ (x−m)`` is χ² with 2 degrees of freedom, whose quantile is
    ``−2 ln(1 − mass)``.
    """
    if not 0.0 < mass < 1.0:
        raise ValueError(f"mass must be in (0, 1), got {mass!r}")
    radius = math.sqrt(-2.0 * math.log1p(-mass))
    values, vectors = np.linalg.eigh(np.asarray(covariance, dtype=float))
    root = vectors * np.sqrt(np.clip(values, 0.0, None))
    angle = np.linspace(0.0, 2.0 * math.pi, n_points)
    circle = np.stack([np.cos(angle), np.sin(angle)])
    return np.asarray(center, dtype=float) + radius * (root @ circle).T


def spread_of_samples(samples, quantization) -> dict:
    """``sphere_sd_d``, ``cylinder_sd_d``, ``samples_d`` and ``region_d`` of a :class:`LensOptimum`,
    from draws of the optimum ``(n, 2)`` and ``quantization``, the variances (D²) added for the grid
    they lie on (an optimizer's ``optimum_draws_d``)."""
    covariance = np.cov(samples.T) + np.diag(quantization)
    return {
        "sphere_sd_d": float(math.sqrt(covariance[0, 0])),
        "cylinder_sd_d": float(math.sqrt(covariance[1, 1])),
        "samples_d": frozen_array(samples),
        "region_d": frozen_array(credible_ellipse(samples.mean(axis=0), covariance)),
    }


def optimizer_bounds(opt, name) -> tuple[float, float]:
    """``opt``'s bounds ``name`` (e.g. ``sphere_bounds_d``), else the paper's."""
    settings = getattr(opt, "settings", None)
    value = getattr(settings, name, None)
    if value is None:
        try:
            value = opt.settings_dict().get(name)
        except Exception:  # noqa: BLE001 - fall back to the paper's bounds
            value = None
    low, high = value if value is not None else _DEFAULT_BOUNDS[name]
    return float(low), float(high)


def settings_bounds(settings: dict) -> tuple:
    """``(sphere_bounds_d, cylinder_bounds_d, letter_bounds_logmar)`` of stored optimizer settings."""
    return tuple(tuple(settings.get(name) or default) for name, default in _DEFAULT_BOUNDS.items())
