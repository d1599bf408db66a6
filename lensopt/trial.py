"""The trial a refraction optimizer asks for."""

from __future__ import annotations

import math
from dataclasses import dataclass


@dataclass(frozen=True)
class Trial:
    """One letter presentation: the lens to set and the letter size to show.

    ``sphere_d`` and ``cylinder_d`` are the lens powers in diopters; ``letter_logmar`` the letter
    size in logMAR (letter height ``5 · 10**letter_logmar`` arcmin).
    """

    sphere_d: float
    cylinder_d: float
    letter_logmar: float

    def __post_init__(self):
        for name in ("sphere_d", "cylinder_d", "letter_logmar"):
            value = getattr(self, name)
            if not isinstance(value, (int, float)) or not math.isfinite(value):
                raise ValueError(f"Trial.{name} must be a finite number, got {value!r}")
            object.__setattr__(self, name, float(value))
