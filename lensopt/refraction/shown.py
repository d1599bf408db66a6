"""Whether the patient ever looked through the lens a session reports.

A letter search reports the lens its model puts at the best acuity, which need not be a lens it
showed: the acuity-law optimizer places its trials where the acuity surface is steep, often half
a diopter or more from its optimum, and reports the optimum from the law (docs/never-lost.md),
and the full prescription's bracketing rule tries lenses 0.35 and 0.7 D either side of its best.
The predicted acuity through such a lens is then the model's, not an answer's. A clinician checks
it on the chart before prescribing; the end point and the printed record say so
(:func:`not_shown_note`).

"Shown" means within the stopping rule's tolerance: a lens whose residual blur against the
reported one is at most ``b`` with ``log10(1 + b²) = 0.025`` logMAR (:data:`SHOWN_BLUR_D`, 0.24 D;
METHOD.md §1, Raasch's blur strength — the length of the power-vector difference).
"""

from __future__ import annotations

import math
from collections.abc import Iterable

import numpy as np

from lensopt.refraction.lens import power_vector_arrays
from lensopt.stopping import ACUITY_TOLERANCE_LOGMAR

#: The blur (D) whose acuity loss is the stopping rule's tolerance, ``√(10^0.025 − 1)`` ≈ 0.24 D:
#: a lens shown within it measured the reported lens's acuity as well as the rule asks.
SHOWN_BLUR_D = math.sqrt(10.0**ACUITY_TOLERANCE_LOGMAR - 1.0)

#: The axis of a lens without one (a two-parameter search's: every lens on the same meridian).
_NO_AXIS_DEG = 180.0


def nearest_shown_blur_d(sphere_d: float, cylinder_d: float, axis_deg: float | None, trials: Iterable) -> float | None:
    """The residual blur (D) between the lens ``sphere_d / cylinder_d x axis_deg`` and the nearest
    lens of ``trials`` (anything with ``sphere_d``, ``cylinder_d`` and ``axis_deg``: a
    :class:`~lensopt.refraction.trial.Trial` or a stored trial); None without trials. A trial
    without an axis is on the reported lens's meridian (a two-parameter search)."""
    axis = _NO_AXIS_DEG if axis_deg is None else float(axis_deg)
    shown = np.array(
        [(t.sphere_d, t.cylinder_d, axis if t.axis_deg is None else t.axis_deg) for t in trials], dtype=float
    ).reshape(-1, 3)
    return nearest_blur_d(sphere_d, cylinder_d, axis, shown[:, 0], shown[:, 1], shown[:, 2])


def nearest_blur_d(sphere_d, cylinder_d, axis_deg, shown_sphere_d, shown_cylinder_d, shown_axis_deg) -> float | None:
    """:func:`nearest_shown_blur_d` over the lenses given as arrays (axes in degrees); None for none."""
    shown = np.broadcast_arrays(
        *(np.asarray(v, dtype=float).ravel() for v in (shown_sphere_d, shown_cylinder_d, shown_axis_deg))
    )
    if shown[0].size == 0:
        return None
    target = np.array(power_vector_arrays(sphere_d, cylinder_d, axis_deg))
    vectors = np.column_stack(power_vector_arrays(*shown))
    return float(np.sqrt(np.square(vectors - target).sum(axis=1)).min())


def not_shown_note(blur_d: float | None) -> str | None:
    """What to tell the clinician when no lens shown came within :data:`SHOWN_BLUR_D` of the
    reported one (``blur_d``, from :func:`nearest_shown_blur_d`); None when one did (or none known)."""
    if blur_d is None or blur_d <= SHOWN_BLUR_D:
        return None
    return (
        f"this lens was not shown: the nearest lens tried is {blur_d:.2f} D of blur from it, so its acuity "
        "is predicted, not measured; check it on the chart"
    )
