"""Plain records the session store reads and writes: one answered trial, duel or ranking (a session,
its result and a damaged session: :mod:`lensopt.store.session_records`).

Both are frozen dataclasses validated on construction, so a bad value is refused before it
reaches the database. Dictionaries (``extra``, ``protocol``, ``calibration``,
``optimizer_settings``) must be JSON-able: they are stored as JSON text, never pickled.
"""

from __future__ import annotations

import json
import math
import numbers
from dataclasses import dataclass, field

from lensopt.errors import StoreError
from lensopt.refraction.trial import DUEL_ANSWERS

#: The eyes a trial or result may be for: right (oculus dexter), left (oculus sinister).
EYES = ("OD", "OS")
#: Each eye a session may test (its protocol's ``[session] eye``) as the record and the dashboard name it.
EYE_NAMES = {"OD": "OD (right eye)", "OS": "OS (left eye)", "OU": "OU (both eyes)"}


def stored_json(text, what: str):
    """``text`` read as the JSON lensopt wrote; a one-line :class:`StoreError` naming ``what`` if it is
    not (the file was changed by another program)."""
    try:
        return json.loads(text)
    except (TypeError, ValueError) as exc:
        raise StoreError(
            f"{what} is not the JSON lensopt wrote ({exc}); the database was changed by another program: "
            "restore it from a copy"
        ) from None


def check_eye(owner: str, value) -> str | None:
    """``value`` if it is an eye of :data:`EYES` or None, else a ValueError naming ``owner.eye``."""
    if value is not None and value not in EYES:
        raise ValueError(f"{owner}.eye must be one of {', '.join(EYES)} or None, got {value!r}")
    return value


#: Session states: ``running`` while trials are added, then ``finished`` or ``aborted``.
STATUSES = ("running", "finished", "aborted")

#: Session kind of a letter-acuity session: one letter per trial, named or not (``trials`` table).
LETTERS_KIND = "letters"

#: Session kind of a duel session: "lens 1, lens 2, or the same?" (``duel_trials`` table).
DUEL_KIND = "duel"

#: Session kind of a ranking session: several lenses put in order, clearest first (``ranking_trials``).
RANKING_KIND = "ranking"

#: Session kinds, in the order ``lensopt sessions`` documents them.
KINDS = (LETTERS_KIND, DUEL_KIND, RANKING_KIND)

#: How many lenses a ranking compares (``lensopt.ranking.settings.MAX_SET_SIZE`` caps the model).
RANKING_SET_SIZES = (2, 3, 4)


def to_json(owner: str, name: str, value) -> str:
    """``value`` as compact JSON text, or a ValueError naming ``owner.name`` if it is not JSON-able."""
    if not isinstance(value, dict):
        raise ValueError(f"{owner}.{name} must be a dict (JSON object), got {type(value).__name__}")
    try:
        return json.dumps(value, allow_nan=False, separators=(",", ":"))
    except (TypeError, ValueError) as exc:
        raise ValueError(
            f"{owner}.{name} must hold only JSON values (str, finite numbers, bool, None, lists, "
            f"dicts with str keys): {exc}"
        ) from None


def check_finite(owner: str, name: str, value) -> float:
    """``value`` as a float, or a ValueError naming ``owner.name`` if it is not a finite number."""
    if isinstance(value, bool) or not isinstance(value, numbers.Real) or not math.isfinite(value):
        raise ValueError(f"{owner}.{name} must be a finite number, got {value!r}")
    return float(value)


def check_int(owner: str, name: str, value, minimum: int) -> int:
    """``value`` as an int ``>= minimum``, or a ValueError naming ``owner.name``."""
    if isinstance(value, bool) or not isinstance(value, numbers.Integral) or value < minimum:
        raise ValueError(f"{owner}.{name} must be an integer >= {minimum}, got {value!r}")
    return int(value)


def check_text(owner: str, name: str, value) -> str:
    """``value`` if it is a non-empty string, else a ValueError naming ``owner.name``."""
    if not isinstance(value, str) or not value.strip():
        raise ValueError(f"{owner}.{name} must be a non-empty string, got {value!r}")
    return value


def check_answer_details(record, owner: str) -> None:
    """Validate and normalize the fields every trial record shares: ``rt_s`` (finite, >= 0, or
    None) and ``extra`` (a JSON-able dict; None becomes ``{}``). ``record`` is a frozen dataclass."""
    if record.rt_s is not None:
        rt_s = check_finite(owner, "rt_s", record.rt_s)
        if rt_s < 0:
            raise ValueError(f"{owner}.rt_s must be >= 0 seconds or None, got {rt_s!r}")
        object.__setattr__(record, "rt_s", rt_s)
    extra = {} if record.extra is None else record.extra
    to_json(owner, "extra", extra)
    object.__setattr__(record, "extra", dict(extra))


@dataclass(frozen=True)
class TrialRecord:
    """One answered letter trial, as stored.

    ``index`` is the 1-based trial number within the session; ``response`` the key answered
    (``"K"``), ``"pass"``, or ``None`` (no answer); ``rt_s`` the reaction time in seconds (or
    ``None``); ``presented_at``/``answered_at`` unix times in seconds; ``extra`` a JSON-able dict
    of anything else worth keeping (e.g. ``{"decision_ms": 3.2}``; ``None`` means ``{}``).
    Tuples in ``extra`` come back from the store as lists. ``axis_deg``: the cylinder axis
    (degrees, 0-180) of a full-prescription trial; ``None`` in the two-parameter search (and in
    every trial stored before schema 5). ``void``: the answer was undone by the clinician (kept,
    marked void, schema 6; the optimizer is not told it). ``eye``: ``"OD"`` or ``"OS"`` (schema 7;
    None when the session named no eye).
    """

    index: int
    sphere_d: float
    cylinder_d: float
    letter_logmar: float
    letter: str
    response: str | None
    correct: bool
    rt_s: float | None
    presented_at: float
    answered_at: float
    extra: dict = field(default_factory=dict)
    axis_deg: float | None = None
    void: bool = False
    eye: str | None = None

    def __post_init__(self):
        owner = "TrialRecord"
        check_eye(owner, self.eye)
        if self.void not in (0, 1, True, False):
            raise ValueError(f"{owner}.void must be True or False, got {self.void!r}")
        object.__setattr__(self, "void", bool(self.void))
        object.__setattr__(self, "index", check_int(owner, "index", self.index, 1))
        for name in ("sphere_d", "cylinder_d", "letter_logmar", "presented_at", "answered_at"):
            object.__setattr__(self, name, check_finite(owner, name, getattr(self, name)))
        check_axis(owner, self, "axis_deg")
        check_text(owner, "letter", self.letter)
        if self.response is not None:
            check_text(owner, "response", self.response)
        if not isinstance(self.correct, bool):
            is_numpy_bool = type(self.correct).__name__ in ("bool_", "bool") and hasattr(self.correct, "dtype")
            if is_numpy_bool or (isinstance(self.correct, numbers.Integral) and self.correct in (0, 1)):
                object.__setattr__(self, "correct", bool(self.correct))
            else:
                raise ValueError(f"{owner}.correct must be True or False, got {self.correct!r}")
        check_answer_details(self, owner)

    def extra_json(self) -> str:
        """``extra`` as JSON text (how the store keeps it)."""
        return to_json("TrialRecord", "extra", self.extra)


def check_axis(owner: str, record, name: str) -> None:
    """``record.<name>``, a cylinder axis, as a float in 0-180 degrees, or None (a ValueError naming it)."""
    value = getattr(record, name)
    if value is None:
        return
    axis_deg = check_finite(owner, name, value)
    if not 0.0 <= axis_deg <= 180.0:
        raise ValueError(f"{owner}.{name} must be in 0-180 degrees or None, got {axis_deg!r}")
    object.__setattr__(record, name, axis_deg)


@dataclass(frozen=True)
class DuelTrialRecord:
    """One answered duel, as stored: letters ``letters`` of size ``letter_logmar`` seen through
    lens 1 ``(first_sphere_d, first_cylinder_d)`` and lens 2 ``(second_sphere_d, second_cylinder_d)``.

    ``answer`` is ``"first"``, ``"second"`` or ``"same"`` (:data:`DUEL_ANSWERS`); ``rt_s``, the
    unix times and ``extra`` are as in :class:`TrialRecord`. ``first_axis_deg`` and
    ``second_axis_deg``: the lenses' cylinder axes in a duel of the full prescription (schema 8;
    None in a duel of sphere and cylinder, whose axis is the patient's own).
    """

    index: int
    first_sphere_d: float
    first_cylinder_d: float
    second_sphere_d: float
    second_cylinder_d: float
    letter_logmar: float
    letters: str
    answer: str
    rt_s: float | None
    presented_at: float
    answered_at: float
    extra: dict = field(default_factory=dict)
    first_axis_deg: float | None = None
    second_axis_deg: float | None = None

    def __post_init__(self):
        owner = "DuelTrialRecord"
        object.__setattr__(self, "index", check_int(owner, "index", self.index, 1))
        for name in (
            "first_sphere_d",
            "first_cylinder_d",
            "second_sphere_d",
            "second_cylinder_d",
            "letter_logmar",
            "presented_at",
            "answered_at",
        ):
            object.__setattr__(self, name, check_finite(owner, name, getattr(self, name)))
        if not isinstance(self.letters, str) or not self.letters.isalpha() or not self.letters.isupper():
            raise ValueError(f"{owner}.letters must be capital letters A-Z, got {self.letters!r}")
        if self.answer not in DUEL_ANSWERS:
            raise ValueError(f"{owner}.answer must be one of {', '.join(DUEL_ANSWERS)}, got {self.answer!r}")
        check_axis(owner, self, "first_axis_deg")
        check_axis(owner, self, "second_axis_deg")
        if (self.first_axis_deg is None) != (self.second_axis_deg is None):
            raise ValueError(f"{owner}: both lenses have an axis (a duel of the full prescription) or neither")
        check_answer_details(self, owner)

    @property
    def has_axes(self) -> bool:
        """Whether the lenses carry their axes (a duel of the full prescription)."""
        return self.first_axis_deg is not None

    @property
    def first_lens_d(self) -> tuple[float, float]:
        return (self.first_sphere_d, self.first_cylinder_d)

    @property
    def second_lens_d(self) -> tuple[float, float]:
        return (self.second_sphere_d, self.second_cylinder_d)

    def extra_json(self) -> str:
        """``extra`` as JSON text (how the store keeps it)."""
        return to_json("DuelTrialRecord", "extra", self.extra)


@dataclass(frozen=True)
class RankingTrialRecord:
    """One answered ranking, as stored: letters ``letters`` of size ``letter_logmar`` seen through
    each lens of ``lenses_d`` ``((sphere_d, cylinder_d), ...)`` (lens 1 first), and the patient's
    ``order``: every lens index (0 = lens 1), clearest first.

    ``rt_s`` is the time from the letters appearing to the order being complete; the unix times
    and ``extra`` are as in :class:`TrialRecord`. ``axes_deg``: the lenses' cylinder axes, one per
    lens, in a ranking of the full prescription (schema 9; None in a ranking of sphere and
    cylinder, whose axis is the patient's own).
    """

    index: int
    lenses_d: tuple[tuple[float, float], ...]
    letter_logmar: float
    letters: str
    order: tuple[int, ...]
    rt_s: float | None
    presented_at: float
    answered_at: float
    extra: dict = field(default_factory=dict)
    axes_deg: tuple[float, ...] | None = None

    def __post_init__(self):
        owner = "RankingTrialRecord"
        object.__setattr__(self, "index", check_int(owner, "index", self.index, 1))
        try:
            lenses = tuple(
                (check_finite(owner, "lenses_d", S), check_finite(owner, "lenses_d", C)) for S, C in self.lenses_d
            )
        except (TypeError, ValueError):
            lenses = ()
        axes = self._checked_axes(owner, len(lenses))
        distinct = lenses if axes is None else tuple(zip(lenses, axes, strict=True))
        if len(lenses) not in RANKING_SET_SIZES or len(set(distinct)) != len(distinct):
            raise ValueError(
                f"{owner}.lenses_d must be {RANKING_SET_SIZES[0]} to {RANKING_SET_SIZES[-1]} distinct "
                f"finite (sphere_d, cylinder_d) pairs (distinct with their axes_deg), got {self.lenses_d!r}"
            )
        object.__setattr__(self, "lenses_d", lenses)
        object.__setattr__(self, "axes_deg", axes)
        for name in ("letter_logmar", "presented_at", "answered_at"):
            object.__setattr__(self, name, check_finite(owner, name, getattr(self, name)))
        if not isinstance(self.letters, str) or not self.letters.isalpha() or not self.letters.isupper():
            raise ValueError(f"{owner}.letters must be capital letters A-Z, got {self.letters!r}")
        order = tuple(self.order) if isinstance(self.order, (list, tuple)) else None
        if (
            order is None
            or not all(isinstance(i, numbers.Integral) and not isinstance(i, bool) for i in order)
            or sorted(order) != list(range(len(lenses)))
        ):
            raise ValueError(
                f"{owner}.order must hold each lens index 0..{len(lenses) - 1} once, clearest first, got {self.order!r}"
            )
        object.__setattr__(self, "order", tuple(int(i) for i in order))
        check_answer_details(self, owner)

    def _checked_axes(self, owner: str, n_lenses: int) -> tuple[float, ...] | None:
        """``axes_deg`` as floats in 0-180 degrees, one per lens, or None (a ValueError naming it)."""
        if self.axes_deg is None:
            return None
        try:
            axes = tuple(check_finite(owner, "axes_deg", a) for a in self.axes_deg)
        except (TypeError, ValueError):
            axes = ()
        if len(axes) != n_lenses or not all(0.0 <= a <= 180.0 for a in axes):
            raise ValueError(
                f"{owner}.axes_deg must be None or one axis in 0-180 degrees per lens ({n_lenses}), got {self.axes_deg!r}"
            )
        return axes

    @property
    def has_axes(self) -> bool:
        """Whether the lenses carry their axes (a ranking of the full prescription)."""
        return self.axes_deg is not None

    @property
    def ranked_lenses_d(self) -> tuple[tuple[float, float], ...]:
        """The lenses in the patient's order, clearest first."""
        return tuple(self.lenses_d[i] for i in self.order)

    def lenses_json(self) -> str:
        """``lenses_d`` as JSON text ``[[S, C], ...]`` (how the store keeps it)."""
        return json.dumps([list(lens) for lens in self.lenses_d], allow_nan=False, separators=(",", ":"))

    def order_json(self) -> str:
        """``order`` as JSON text ``[i, j, ...]`` (how the store keeps it)."""
        return json.dumps(list(self.order), separators=(",", ":"))

    def axes_json(self) -> str | None:
        """``axes_deg`` as JSON text ``[a1, a2, ...]`` (how the store keeps it), None without axes."""
        return None if self.axes_deg is None else json.dumps(list(self.axes_deg), separators=(",", ":"))

    def extra_json(self) -> str:
        """``extra`` as JSON text (how the store keeps it)."""
        return to_json("RankingTrialRecord", "extra", self.extra)

    @classmethod
    def from_row(
        cls,
        index,
        lenses_json,
        letter_logmar,
        letters,
        order_json,
        rt_s,
        presented_at,
        answered_at,
        extra_json,
        axes_json=None,
    ) -> RankingTrialRecord:
        """The record of a stored row (columns in ``schema.COLUMNS["ranking_trials"]`` order)."""
        what = f"ranking trial {index}'s"
        return cls(
            index,
            tuple(tuple(lens) for lens in stored_json(lenses_json, f"{what} lenses")),
            letter_logmar,
            letters,
            tuple(stored_json(order_json, f"{what} order")),
            rt_s,
            presented_at,
            answered_at,
            stored_json(extra_json, f"{what} extra values"),
            None if axes_json is None else tuple(stored_json(axes_json, f"{what} axes")),
        )
