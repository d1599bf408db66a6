"""Whether the patient ever read through the lens a session reports.

A letter search reports the lens its model puts at the best acuity, which need not be a lens it
tried: the acuity-law optimizer asks its trials where acuity changes fastest, often half a
diopter or more from its optimum, and reports the optimum from the law (docs/never-lost.md); the
full prescription's bracketing rule tries lenses 0.35 and 0.7 D either side of its best. The
predicted acuity through such a lens is then the model's, not an answer's, and a clinician checks
it on the chart before prescribing. The closing console and the log (:func:`untried_note`), the
printed record (:func:`untried_short`) and the dashboard (:func:`untried_summary`) say so by one
rule, :func:`untried_d`.

"Tried" means within a phoropter step: some lens the patient answered through (an answer undone
is not counted: the model was not told it) lies within :data:`TRIED_WITHIN_D` of the reported one
in dioptric distance — the length of the power-vector difference, which is Raasch's blur of the
residual (METHOD.md §1; 0.25 D of it costs 0.026 logMAR, about the stopping rule's tolerance).
"""

from __future__ import annotations

from collections.abc import Iterable

import numpy as np

from lensopt.refraction.lens import diopter_text, power_vector_arrays

#: How near (D, dioptric distance) a lens tried must be for the reported lens to count as tried:
#: one phoropter step.
TRIED_WITHIN_D = 0.25

#: The meridian of a two-parameter search without ``--axis`` (every lens on the same one).
NO_AXIS_MERIDIAN_DEG = 180.0


def nearest_tried_d(
    sphere_d: float, cylinder_d: float, axis_deg: float | None, trials: Iterable, meridian_deg: float | None = None
) -> float | None:
    """The dioptric distance (D) between the lens ``sphere_d / cylinder_d x axis_deg`` and the nearest
    lens of ``trials`` (anything with ``sphere_d``, ``cylinder_d`` and ``axis_deg``: a
    :class:`~lensopt.refraction.trial.Trial` or a stored trial); None without trials.

    A two-parameter search's trials have no axis: their cylinder lies along the session's
    ``meridian_deg`` (the protocol's ``[lens] axis_deg``; None or 0: none given, one common meridian),
    whatever axis the reported lens is written at (a plus cylinder stored transposed, 90° away)."""
    meridian = meridian_deg if meridian_deg else NO_AXIS_MERIDIAN_DEG
    lens_axis = meridian if axis_deg is None else float(axis_deg)
    tried = np.array(
        [(t.sphere_d, t.cylinder_d, meridian if t.axis_deg is None else t.axis_deg) for t in trials], dtype=float
    ).reshape(-1, 3)
    if not len(tried):
        return None
    target = np.array(power_vector_arrays(sphere_d, cylinder_d, lens_axis))
    vectors = np.column_stack(power_vector_arrays(tried[:, 0], tried[:, 1], tried[:, 2]))
    return float(np.sqrt(np.square(vectors - target).sum(axis=1)).min())


def untried_d(
    sphere_d: float, cylinder_d: float, axis_deg: float | None, trials: Iterable, meridian_deg: float | None = None
) -> float | None:
    """:func:`nearest_tried_d` when it is beyond :data:`TRIED_WITHIN_D` as written (to 0.01 D: a
    lens "0.25 D away" counts as tried), else None — the one rule of every place that says so."""
    distance_d = nearest_tried_d(sphere_d, cylinder_d, axis_deg, trials, meridian_deg)
    if distance_d is None or float(diopter_text(distance_d, signed=False)) <= TRIED_WITHIN_D:
        return None
    return distance_d


def untried_note(distance_d: float | None) -> str | None:
    """The closing console's and the log's sentence on a lens not tried (``distance_d`` from
    :func:`untried_d`), or None."""
    if distance_d is None:
        return None
    return (
        f"this lens was not tried: the nearest lens the patient read through is {diopter_text(distance_d, False)} D "
        "from it, so its acuity is predicted, not measured; check it on the chart"
    )


def untried_short(distance_d: float | None) -> str | None:
    """:func:`untried_note` in the width of an eye's column of the printed record, or None."""
    return None if distance_d is None else f"not tried; nearest tried {diopter_text(distance_d, False)} D away"


def untried_summary(distance_d: float | None) -> str | None:
    """:func:`untried_note` under the dashboard's predicted acuity, or None."""
    if distance_d is None:
        return None
    return f"predicted, not measured: the nearest lens tried is {diopter_text(distance_d, False)} D from this one"
