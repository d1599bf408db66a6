"""The trial a refraction optimizer asks for."""

from __future__ import annotations

import math
from dataclasses import dataclass

DUEL_ANSWERS = ("first", "second", "same")
"""What a patient can answer to a duel: lens 1 clearer, lens 2 clearer, or they look the same (the
one definition: the duel optimizer, the duel mode and the store's duel records read it here)."""


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
