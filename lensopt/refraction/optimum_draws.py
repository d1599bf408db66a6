"""Where a GP letter model's best lens lies: draws of the argmax of its latent over the lens box.

``best()`` of a GP optimizer is the argmax of the posterior mean (METHOD.md §4, "reported
solution"). The posterior spread of the *location* of the optimum is estimated by Thompson
sampling on a grid: joint draws of the latent ``f(s₀, S, C)`` from the GP posterior
(``predict_latent`` with ``full_cov=True``) on a coarse grid over the lens bounds, then again on a
finer grid around the coarse argmaxes; each draw's argmax is one sample of the optimum, and the
grid's quantization variance ``step²/12`` goes with the samples. ``s₀`` is a reference letter size;
with the psychophysics kernel (slope term ``θ s s'`` plus a lens term) the argmax does not depend
on it. The dashboard draws its ± and credible region from these samples
(:mod:`lensopt.dashboard.posterior`). The optimizers that compare lenses (duels, rankings) sample
their utility the same way (:func:`utility_optimum_draws_d`).
"""

from __future__ import annotations

import numpy as np

#: Points per axis of each of the two grids the optimum is sampled on (coarse, then local).
ARGMAX_GRID_POINTS = 21


def lens_grid(sphere_range, cylinder_range, n):
    """``(n², 2)`` lenses on an ``n × n`` grid (sphere fastest) and the two grid steps."""
    s = np.linspace(sphere_range[0], sphere_range[1], n)
    c = np.linspace(cylinder_range[0], cylinder_range[1], n)
    ss, cc = np.meshgrid(s, c)
    step_s, step_c = (s[1] - s[0], c[1] - c[0]) if n > 1 else (0.0, 0.0)
    return np.column_stack([ss.ravel(), cc.ravel()]), step_s, step_c


def joint_latent_draws(model, X, rng, n_samples) -> np.ndarray:
    """``(n_samples, n_points)`` joint draws of the latent at ``X`` (eigendecomposition: robust to
    the near-singular covariance of a dense grid)."""
    mean, cov = model.predict_latent(X, full_cov=True)
    values, vectors = np.linalg.eigh(0.5 * (cov + cov.T))
    root = vectors * np.sqrt(np.clip(values, 0.0, None))
    return mean + rng.standard_normal((n_samples, len(mean))) @ root.T


def sample_optimum_d(
    model,
    sphere_bounds_d,
    cylinder_bounds_d,
    reference_logmar,
    rng,
    n_samples: int,
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
        draws = joint_latent_draws(model, X, rng, n_samples)
        samples = lenses[np.argmax(draws, axis=1)]
        low, high = samples.min(axis=0), samples.max(axis=0)
        sphere_range = (max(low[0] - step_s, sphere_bounds_d[0]), min(high[0] + step_s, sphere_bounds_d[1]))
        cylinder_range = (max(low[1] - step_c, cylinder_bounds_d[0]), min(high[1] + step_c, cylinder_bounds_d[1]))
    return samples, np.array([step_s**2, step_c**2]) / 12.0


class _UtilityAsLatent:
    """``predict_latent(X, full_cov)`` on ``[letter_logmar, S, C]`` rows of one letter size, from an
    optimizer's ``predict_utility(letter_logmar, lenses_d, full_cov)``."""

    def __init__(self, opt):
        self._opt = opt

    def predict_latent(self, X, full_cov: bool = False):
        X = np.asarray(X, dtype=float)
        if not np.all(X[:, 0] == X[0, 0]):
            raise ValueError("the utility is sampled at one letter size at a time")
        return self._opt.predict_utility(float(X[0, 0]), X[:, 1:], full_cov=full_cov)


def utility_optimum_draws_d(opt, sphere_bounds_d, cylinder_bounds_d, n_samples: int, rng):
    """:func:`sample_optimum_d` of an optimizer that compares lenses (``predict_utility`` and
    ``reference_letter_logmar``): Thompson samples of the argmax of its utility at the reference size."""
    return sample_optimum_d(
        _UtilityAsLatent(opt), sphere_bounds_d, cylinder_bounds_d, opt.reference_letter_logmar, rng, n_samples
    )
