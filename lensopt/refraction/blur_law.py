"""The blur–acuity law every eye obeys, on (sphere, signed cylinder) grids of one meridian.

Through a lens ``x = (S, C)`` an eye whose correction is ``(S*, C*)`` loses ``log10(1 + b²)``
logMAR of acuity, ``b² = ½ (r_S² + (r_S + r_C)²)`` with ``r = x − (S*, C*)`` (METHOD.md §1:
Raasch's blur of the residual, Blendowske's acuity law) — the shape the acuity-law optimizer
(:mod:`lensopt.refraction.acuity_law`) assumes and the lens grids it reasons over. The simulated
patient's own optics, in power vectors, are :mod:`lensopt.observer.optics` (a layer the refraction
domain does not import).
"""

from __future__ import annotations

import numpy as np

from lensopt.refraction.grid_posterior import grid_axis


def blur_acuity_loss_logmar(residual_sphere_d, residual_cylinder_d):
    """``log10(1 + b²)``, ``b² = ½ (r_S² + (r_S + r_C)²)``: the acuity lost (logMAR) to a residual
    refractive error ``(r_S, r_C)`` (D), with the cylinder at the correction's axis (METHOD.md §1)."""
    b2 = 0.5 * (np.square(residual_sphere_d) + np.square(np.add(residual_sphere_d, residual_cylinder_d)))
    return np.log10(1.0 + b2)


def accommodated_acuity_loss_logmar(residual_sphere_d, residual_cylinder_d, accommodation_d):
    """:func:`blur_acuity_loss_logmar` of an eye with ``accommodation_d`` D of accommodation: in the
    power vector ``b² = r_M² + r_J²`` (``r_M = r_S + r_C/2``, ``r_J = r_C/2``), and a residual too
    minus (``r_M < 0``) is focused away up to ``A``: ``r_M' = max(r_M, min(r_M + A, 0))`` (the simulated
    patient's :func:`lensopt.observer.accommodated_residual_m_d`). ``A = 0`` is the law itself."""
    r_m = np.add(residual_sphere_d, 0.5 * np.asarray(residual_cylinder_d))
    r_m = np.maximum(r_m, np.minimum(r_m + accommodation_d, 0.0))
    return np.log10(1.0 + np.square(r_m) + 0.25 * np.square(residual_cylinder_d))


def accommodate_columns(loss, lenses, corrections, accommodation_d) -> np.ndarray:
    """``loss`` (lenses × draws, the law's: :func:`acuity_loss_table` of ``lenses`` and the draws'
    ``corrections``) with each draw's column through its own amplitude ``accommodation_d`` (one
    per draw; those of 0 kept), in place; returned."""
    for amplitude in np.unique(accommodation_d[accommodation_d > 0.0]):
        drawn = accommodation_d == amplitude
        loss[:, drawn] = acuity_loss_table(lenses, corrections[drawn], amplitude)
    return loss


def lens_grid(sphere_bounds_d, cylinder_bounds_d, step_d) -> np.ndarray:
    """Every ``(sphere_d, cylinder_d)`` of the box at ``step_d``, sphere-major, one per row."""
    gs, gc = np.meshgrid(grid_axis(sphere_bounds_d, step_d), grid_axis(cylinder_bounds_d, step_d), indexing="ij")
    return np.column_stack([gs.ravel(), gc.ravel()])


def acuity_loss_table(lenses, corrections, accommodation_d: float = 0.0) -> np.ndarray:
    """Acuity loss ``log10(1 + b²)`` of each lens (rows) under each correction (columns), by an eye
    with ``accommodation_d`` D of accommodation (:func:`accommodated_acuity_loss_logmar`; 0: the law)."""
    r_s, r_c = lenses[:, None, 0] - corrections[None, :, 0], lenses[:, None, 1] - corrections[None, :, 1]
    if accommodation_d == 0.0:
        return blur_acuity_loss_logmar(r_s, r_c)
    return accommodated_acuity_loss_logmar(r_s, r_c, accommodation_d)
