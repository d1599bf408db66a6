"""Boxes of parameters: validated ``(low, high)`` bounds and reference contexts, and the parts of a
settings dataclass that every ask/tell optimizer shares (context columns first, then the system).
"""

from __future__ import annotations

import math
from dataclasses import Field, asdict
from typing import Any, ClassVar, Self

import numpy as np


def bounds_pairs(name: str, value, allow_empty: bool = False) -> tuple[tuple[float, float], ...]:
    """``((low, high), ...)`` as floats, each finite with ``low < high``; a one-line ValueError naming
    ``name`` otherwise."""
    try:
        pairs = tuple((float(lo), float(hi)) for lo, hi in value)
    except (TypeError, ValueError):
        raise ValueError(f"{name} must be a list of (low, high) pairs, got {value!r}") from None
    if not pairs and not allow_empty:
        raise ValueError(f"{name} must not be empty")
    for i, pair in enumerate(pairs):
        bounds_pair(f"{name}[{i}]", pair)
    return pairs


def bounds_pair(name: str, value) -> tuple[float, float]:
    """One ``(low, high)`` as floats, finite with ``low < high``; a one-line ValueError naming ``name``
    (an optimizer's own setting, ``sphere_bounds_d``, not the box column it becomes) otherwise."""
    try:
        lo, hi = (float(v) for v in value)
    except (TypeError, ValueError):
        raise ValueError(f"{name} must be a (low, high) pair, got {value!r}") from None
    if not (math.isfinite(lo) and math.isfinite(hi)):
        raise ValueError(f"{name} must be finite, got ({lo}, {hi})")
    if lo >= hi:
        raise ValueError(f"{name} is reversed or empty: low {lo} must be < high {hi}")
    return lo, hi


def reference_values(reference, context_bounds) -> tuple[float, ...]:
    """A reference context as one float per context column, each inside its bounds."""
    try:
        values = tuple(float(v) for v in np.atleast_1d(np.asarray(reference, dtype=float)))
    except (TypeError, ValueError):
        raise ValueError(f"reference_context must be None or numbers, got {reference!r}") from None
    if len(values) != len(context_bounds):
        raise ValueError(f"reference_context has {len(values)} values for {len(context_bounds)} context columns")
    for i, (v, (lo, hi)) in enumerate(zip(values, context_bounds)):
        if not lo <= v <= hi:
            raise ValueError(f"reference_context[{i}] = {v} is outside the context bounds [{lo}, {hi}]")
    return values


def first_outside(values, bounds) -> int | None:
    """The index of the first value outside its ``(low, high)`` (bounds included), or None: e.g. a
    simulated patient's true correction that no lens of the box could correct."""
    for i, (value, (low, high)) in enumerate(zip(values, bounds)):
        if not low <= value <= high:
            return i
    return None


class BoxSettings:
    """Mixin of a frozen settings dataclass with ``system_bounds``, ``context_bounds`` and an optional
    numeric ``reference_context``: column counts, ``s₀``, and the JSON round trip."""

    #: What the settings are called in error messages ("preference setting", ...).
    setting_name = "setting"

    # Declared for the type checker only (no values: the dataclass that mixes this in defines the
    # fields, and a non-dataclass base's annotations are not fields of it).
    __dataclass_fields__: ClassVar[dict[str, Field[Any]]]
    system_bounds: tuple[tuple[float, float], ...]
    context_bounds: tuple[tuple[float, float], ...]
    reference_context: tuple[float, ...] | None

    def _check_box(self) -> None:
        object.__setattr__(self, "system_bounds", bounds_pairs("system_bounds", self.system_bounds))
        object.__setattr__(
            self, "context_bounds", bounds_pairs("context_bounds", self.context_bounds, allow_empty=True)
        )
        if self.reference_context is not None:
            object.__setattr__(self, "reference_context", reference_values(self.reference_context, self.context_bounds))

    @property
    def n_context(self) -> int:
        return len(self.context_bounds)

    @property
    def n_system(self) -> int:
        return len(self.system_bounds)

    def reference(self) -> np.ndarray:
        """``s₀`` ``(n_context,)``: the given reference context, else the upper context bounds."""
        if self.reference_context is not None:
            return np.array(self.reference_context, dtype=float)
        return np.array([hi for _, hi in self.context_bounds], dtype=float)

    def to_dict(self) -> dict:
        data = asdict(self)
        data["system_bounds"] = [list(b) for b in self.system_bounds]
        data["context_bounds"] = [list(b) for b in self.context_bounds]
        if self.reference_context is not None:
            data["reference_context"] = list(self.reference_context)
        return data

    @classmethod
    def from_dict(cls, data: dict) -> Self:
        unknown = set(data) - set(cls.__dataclass_fields__)
        if unknown:
            raise ValueError(f"unknown {cls.setting_name}(s): {', '.join(sorted(unknown))}")
        return cls(**data)
