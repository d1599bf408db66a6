"""The field checks of the protocol tables (:mod:`lensopt.experiment.search_sections`,
:mod:`lensopt.experiment.protocol_sections`): each reads one field of a frozen section in its
``__post_init__``, raises the one-line ``ValueError`` that names the field, what it must be and what
it got, and stores the value normalized (``float``, ``int``, a tuple).
"""

from __future__ import annotations

import math


def _number(obj, name, low, high, *, integer=False, low_open=False):
    value = getattr(obj, name)
    kind = "an integer" if integer else "a number"
    ok = not isinstance(value, bool) and isinstance(value, int if integer else (int, float))
    ok = ok and math.isfinite(value) and (low < value if low_open else low <= value) and value <= high
    if not ok:
        bracket = "(" if low_open else "["
        raise ValueError(f"{name} must be {kind} in {bracket}{low:g}, {high:g}], got {value!r}")
    object.__setattr__(obj, name, int(value) if integer else float(value))


def _interval(obj, name, low, high, *, integer=False):
    value = getattr(obj, name)
    kind = "integers" if integer else "numbers"
    types = int if integer else (int, float)
    if (
        not isinstance(value, (list, tuple))
        or len(value) != 2
        or not all(isinstance(v, types) and not isinstance(v, bool) for v in value)
        or not low <= value[0] < value[1] <= high
    ):
        raise ValueError(f"{name} must be two {kind} [low, high] with {low:g} <= low < high <= {high:g}, got {value!r}")
    object.__setattr__(obj, name, tuple(int(v) if integer else float(v) for v in value))


def _choice(obj, name, allowed):
    value = getattr(obj, name)
    if value not in allowed:
        raise ValueError(f"{name} must be one of {', '.join(map(repr, allowed))}, got {value!r}")


def _rate_below_half(obj, name):
    value = getattr(obj, name)
    if (
        isinstance(value, bool)
        or not isinstance(value, (int, float))
        or not math.isfinite(value)
        or not 0.0 <= value < 0.5
    ):
        raise ValueError(f"{name} must be a rate in [0, 0.5), e.g. 0.02, got {value!r}")
    object.__setattr__(obj, name, float(value))


def _flag(obj, name):
    if not isinstance(getattr(obj, name), bool):
        raise ValueError(f"{name} must be true or false, got {getattr(obj, name)!r}")
