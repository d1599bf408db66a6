"""Posterior summaries every kind of session draws (no Qt, no pyplot): the lens grid and bounds,
and where the optimum lies.

The letter sessions (:mod:`lensopt.dashboard.model`) and the sessions that compare lenses
(:mod:`lensopt.dashboard.comparison_model`) both build on this module; it imports neither.

Uncertainty of the best lens
----------------------------
``best()`` is the argmax of the posterior mean (METHOD.md §4, "reported solution"). Its ± in
diopters is the posterior spread of the *location* of the optimum, estimated by Thompson sampling
on a grid: joint draws of the latent ``f(s₀, S, C)`` from the GP posterior (``predict_latent`` with
``full_cov=True``) on a coarse grid over the lens bounds, then again on a finer grid around the
coarse argmaxes; each draw's argmax is one sample of the optimum. The ± is the standard deviation of
those samples (plus the grid's quantization variance ``step²/12``) and the credible region is the
95 % ellipse of their covariance (Gaussian approximation). ``s₀`` is the upper letter bound; with
the psychophysics kernel (slope term ``θ s s'`` plus a lens term) the argmax does not depend on it.
"""

from __future__ import annotations

import math

import numpy as np

from lensopt.dashboard.snapshot import frozen_array

#: Points per axis of the lens map of predicted acuity.
LENS_MAP_POINTS = 41
#: Joint posterior draws used to sample the location of the optimum.
ARGMAX_SAMPLES = 256
#: Points per axis of each of the two grids the optimum is sampled on (coarse, then local).
ARGMAX_GRID_POINTS = 21
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


def _joint_latent_samples(model, X, rng, n_samples) -> np.ndarray:
    """``(n_samples, n_points)`` joint draws of the latent at ``X`` (eigendecomposition: robust to
    the near-singular covariance of a dense grid)."""
    mean, cov = model.predict_latent(X, full_cov=True)
    values, vectors = np.linalg.eigh(0.5 * (cov + cov.T))
    root = vectors * np.sqrt(np.clip(values, 0.0, None))
    return mean + rng.standard_normal((n_samples, len(mean))) @ root.T


def lens_grid(sphere_range, cylinder_range, n):
    """``(n², 2)`` lenses on an ``n × n`` grid (sphere fastest) and the two grid steps."""
    s = np.linspace(*sphere_range, n)
    c = np.linspace(*cylinder_range, n)
    ss, cc = np.meshgrid(s, c)
    step_s, step_c = (s[1] - s[0], c[1] - c[0]) if n > 1 else (0.0, 0.0)
    return np.column_stack([ss.ravel(), cc.ravel()]), step_s, step_c


def sample_optimum_d(
    model,
    sphere_bounds_d,
    cylinder_bounds_d,
    reference_logmar,
    rng,
    n_samples: int = ARGMAX_SAMPLES,
    grid_points: int = ARGMAX_GRID_POINTS,
):
    """Thompson samples of the optimal lens: ``(samples (n, 2), quantization variance (2,))``.

    Stage 1 draws on a grid over the bounds; stage 2 on a grid spanning the stage-1 argmaxes
    (± one coarse step, clipped to the bounds). ``model`` needs ``predict_latent(X, full_cov=True)``
    with columns ``[letter_logmar, sphere_d, cylinder_d]``.
    """
    sphere_range, cylinder_range = tuple(sphere_bounds_d), tuple(cylinder_bounds_d)
    samples = None
    for _stage in range(2):
        lenses, step_s, step_c = lens_grid(sphere_range, cylinder_range, grid_points)
        X = np.column_stack([np.full(len(lenses), reference_logmar), lenses])
        draws = _joint_latent_samples(model, X, rng, n_samples)
        samples = lenses[np.argmax(draws, axis=1)]
        low, high = samples.min(axis=0), samples.max(axis=0)
        sphere_range = (max(low[0] - step_s, sphere_bounds_d[0]), min(high[0] + step_s, sphere_bounds_d[1]))
        cylinder_range = (max(low[1] - step_c, cylinder_bounds_d[0]), min(high[1] + step_c, cylinder_bounds_d[1]))
    return samples, np.array([step_s**2, step_c**2]) / 12.0


def optimum_spread(model, sphere_bounds_d, cylinder_bounds_d, reference_logmar, rng) -> dict:
    """``sphere_sd_d``, ``cylinder_sd_d``, ``samples_d`` and ``region_d`` of a :class:`LensOptimum`,
    from the Thompson samples of :func:`sample_optimum_d` (see the module docstring)."""
    samples, quantization = sample_optimum_d(model, sphere_bounds_d, cylinder_bounds_d, reference_logmar, rng)
    return spread_of_samples(samples, quantization)


def spread_of_samples(samples, quantization) -> dict:
    """:func:`optimum_spread` of given draws of the optimum ``(n, 2)``, ``quantization`` the variances
    (D²) added for the grid they lie on."""
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
