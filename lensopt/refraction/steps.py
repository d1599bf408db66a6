"""A phoropter's and a trial frame's steps, without numpy (``lensopt --help`` reads them): the
default power and axis steps and the axis steps a protocol or a benchmark accepts."""

from __future__ import annotations

import math

#: Phoropter steps of the proposed lenses: quarter diopters, axis in whole degrees (a protocol's
#: ``[lens] step_d`` and ``axis_step_deg``: 5° for a trial frame's marks).
DEFAULT_LENS_STEP_D = 0.25
DEFAULT_AXIS_STEP_DEG = 1.0


def is_whole_axis_step(axis_step_deg) -> bool:
    """Whether ``axis_step_deg`` is whole degrees from 1 to 90 that divide 180 — a phoropter dial's
    1°, a trial frame's 5° —, the steps a protocol's ``[lens] axis_step_deg`` and ``lensopt bench
    prescription --axis-step`` accept (the optimizers take any divisor,
    :func:`lensopt.refraction.prescription.checked_lens_steps`)."""
    a = axis_step_deg
    return (
        not isinstance(a, bool)
        and isinstance(a, (int, float))
        and math.isfinite(a)
        and a == int(a)
        and 1 <= a <= 90
        and 180 % int(a) == 0
    )
