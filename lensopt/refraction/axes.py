"""Intervals of cylinder axes, written one way (no numpy: the store reads stored results with it,
and ``lensopt --help`` imports the store's records without numpy)."""

from __future__ import annotations

import math


def axis_interval_deg(low_deg: float, high_deg: float) -> tuple[float, float]:
    """An interval of cylinder axes (degrees, ``low`` to ``high`` the short way round, ``high`` above
    ``low``) written one way: ``low`` in (0, 180], ``high`` past 180 when it passes 180 — ``(-40,
    108)`` is ``(140, 288)``, from 140 through 180 to 108; ``(172, 188)`` stays. The same arc, as the
    data dictionary and every front end read it (:func:`lensopt.refraction.prescription.interval_text`)."""
    turns = math.ceil(float(low_deg) / 180.0) - 1  # whole half-turns that put low in (0, 180]
    return float(low_deg) - 180.0 * turns, float(high_deg) - 180.0 * turns
