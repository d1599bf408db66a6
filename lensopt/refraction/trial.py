"""The trial a refraction optimizer asks for."""

from __future__ import annotations

import difflib
import inspect
import math
import numbers
import reprlib
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Self

from lensopt.asktell import check_state_format

DUEL_ANSWERS = ("first", "second", "same")
"""What a patient can answer to a duel: lens 1 clearer, lens 2 clearer, or they look the same (the
one definition: the duel optimizer, the duel mode and the store's duel records read it here)."""

SAME_ANSWERS = ("both-ways", "dropped")
"""How the full prescription's duel optimizer tells a "the same" to its probit model: as the duel
answered once each way (the default, first), or kept in the history only (sessions saved before);
:mod:`lensopt.refraction.prescription_duels`."""


@dataclass(frozen=True)
class Trial:
    """One letter presentation: the lens to set and the letter size to show.

    ``sphere_d`` and ``cylinder_d`` are the lens powers in diopters; ``letter_logmar`` the letter
    size in logMAR (letter height ``5 · 10**letter_logmar`` arcmin). ``axis_deg``: the cylinder axis
    (degrees, 1–180) of a full prescription search (:class:`lensopt.refraction.PrescriptionOptimizer`);
    ``None`` in the two-parameter search, whose cylinder is aligned with the patient's.
    """

    sphere_d: float
    cylinder_d: float
    letter_logmar: float
    axis_deg: float | None = None

    def __post_init__(self):
        names = ("sphere_d", "cylinder_d", "letter_logmar") + (() if self.axis_deg is None else ("axis_deg",))
        for name in names:
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
                raise ValueError(f"Trial.{name} must be a finite number, got {value!r}")
            object.__setattr__(self, name, float(value))


#: The setting holding the bounds of each field of a letter trial (:func:`check_trial_bounds`).
FIELD_BOUNDS = {
    "letter_logmar": "letter_bounds_logmar",
    "sphere_d": "sphere_bounds_d",
    "cylinder_d": "cylinder_bounds_d",
}

#: Slack when checking that a told trial lies within the bounds (a rounding error beyond a bound).
BOUNDS_TOLERANCE = 1e-9


def check_trial_bounds(trial: Trial, **bounds: tuple[float, float]) -> None:
    """A one-line ValueError when a field of ``trial`` lies outside its bounds, given by the setting
    that holds them (:data:`FIELD_BOUNDS`: ``letter_bounds_logmar=(low, high)`` for ``letter_logmar``,
    ...; a field whose setting is not given is not checked). What every letter optimizer's ``tell``
    checks, in the same words."""
    for name, setting in FIELD_BOUNDS.items():
        if setting not in bounds:
            continue
        low, high = (float(b) for b in bounds[setting])
        value = getattr(trial, name)
        if not low - BOUNDS_TOLERANCE <= value <= high + BOUNDS_TOLERANCE:
            raise ValueError(
                f"{name} {value!r} is outside {setting} ({low!r}, {high!r}): tell a trial within the bounds the "
                f"optimizer was made with (ask() keeps to them), or make it with wider {setting}"
            )


def check_no_axis(trial: Trial) -> None:
    """A one-line ValueError when ``trial`` has an ``axis_deg``, told to a two-parameter search (its
    cylinder is aligned with the patient's, so the axis would be dropped without a word)."""
    if trial.axis_deg is not None:
        raise ValueError(
            f"this optimizer searches sphere and cylinder only, but the trial has axis_deg={trial.axis_deg!r}: "
            "tell a Trial without axis_deg, or use lensopt.refraction.PrescriptionOptimizer to search the axis too"
        )


#: The columns of a letter trial in a saved state's history row, before its answer (the full
#: prescription's rows add ``axis_deg``).
LETTER_COLUMNS = ("letter_logmar", "sphere_d", "cylinder_d")


def saved_letter_answer(value: object, row: int) -> bool:
    """The answer of row ``row`` of a saved letter history: ``1``/``0``, as ``to_state`` writes it,
    or ``true``/``false``; anything else is refused (``"false"`` or ``2`` read as a bool would
    silently turn the answer into another one)."""
    if isinstance(value, bool):
        return value
    if isinstance(value, numbers.Integral) and value in (0, 1):
        return bool(value)
    raise ValueError(f"state history[{row}]: the answer must be true or false (or 1 or 0), got {value!r}")


class TrialHistory:
    """What the three refraction optimizers share about their history: the ``(trial, answer)``
    pairs told so far, in order, and the rebuild from settings plus that history (what a resumed
    session does). A subclass sets ``self._history = []`` and appends in ``tell``."""

    _history: list
    #: ``tell(trial, answer)``, each subclass's own (declared, not defined here: a definition would
    #: stand before a mixed-in base's ``tell`` in the method order).
    tell: Callable[[Any, Any], Any]

    @property
    def n_trials(self) -> int:
        return len(self._history)

    @property
    def history(self) -> tuple:
        return tuple(self._history)

    @classmethod
    def _saved_settings(cls, settings: dict) -> dict:
        """Settings as saved by an older version, brought up to date (none to bring by default)."""
        return settings

    @classmethod
    def settings_as_ran(cls, settings: dict, created_at_s: float) -> dict:
        """The stored ``settings`` of a session created at ``created_at_s`` (unix seconds) with what it
        ran with but did not store, which its creation time tells (nothing by default)."""
        return dict(settings)

    @classmethod
    def settings_candidates(cls, settings: dict, created_at_s: float) -> list[dict]:
        """The settings a stored session may have run with, the likeliest (:meth:`settings_as_ran`)
        first: a replay of its trials tells them apart (:func:`lensopt.modes.as_ran.as_ran`)."""
        return [cls.settings_as_ran(settings, created_at_s)]

    #: Settings a saved state may hold besides the named parameters of ``__init__``: those its
    #: ``**options`` passes on (:meth:`setting_names`).
    _option_setting_names: frozenset[str] = frozenset()
    #: The named parameters of the class's ``__init__``, read when the class is defined.
    _init_setting_names: frozenset[str] = frozenset()

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        parameters = inspect.signature(cls.__init__).parameters.values()
        kinds = (inspect.Parameter.POSITIONAL_OR_KEYWORD, inspect.Parameter.KEYWORD_ONLY)
        cls._init_setting_names = frozenset(p.name for p in parameters if p.kind in kinds and p.name != "self")

    @classmethod
    def setting_names(cls) -> frozenset[str]:
        """The settings ``cls(**settings)`` takes: the named parameters of ``__init__`` and
        :attr:`_option_setting_names`."""
        return cls._init_setting_names | cls._option_setting_names

    @classmethod
    def from_letter_state(cls, state: object, state_format: str, what: str, columns=LETTER_COLUMNS) -> Self:
        """The optimizer of a saved letter state (``{"format", "settings", "history"}``, a history row
        ``[*columns, correct]`` per trial), every part checked first (:meth:`from_row_state`); an
        answer must be true/false (1/0: :func:`saved_letter_answer`). ``what`` names the optimizer in
        the messages (e.g. ``"refraction"``)."""

        def trial_of(values):
            return Trial(**dict(zip(columns, values)))

        return cls.from_row_state(state, state_format, what, columns, "correct", trial_of, saved_letter_answer)

    @classmethod
    def from_row_state(
        cls,
        state: object,
        state_format: str,
        what: str,
        columns: tuple[str, ...],
        answer_name: str,
        trial_of: Callable[[list], Any],
        answer_of: Callable[[object, int], Any],
    ) -> Self:
        """The optimizer of a saved state whose history is a list of rows ``[*columns, answer]``, every
        part checked first: a foreign format, settings that are not an object or name a setting
        ``cls`` does not take, a history that is not a list of such rows, a row whose values
        ``trial_of(values)`` refuses (a ValueError or TypeError) or whose answer ``answer_of(answer, row)``
        refuses, is refused in one line naming it (and the row). ``what`` names the optimizer in the
        messages (e.g. ``"duel refraction"``), ``answer_name`` the answer column."""
        state = check_state_format(state, state_format, what)
        row_text = f"[{', '.join(columns)}, {answer_name}]"
        settings, rows = state.get("settings"), state.get("history")
        if not isinstance(settings, dict):
            raise ValueError(
                f"state settings must be a JSON object of the {what} optimizer's settings, got {reprlib.repr(settings)}"
            )
        known = cls.setting_names()
        unknown = sorted(set(settings) - known, key=str)
        if unknown:
            guesses = (difflib.get_close_matches(str(name), known, n=1) for name in unknown)
            named = ", ".join(
                f"{name!r}" + (f" (did you mean {g[0]!r}?)" if g else "") for name, g in zip(unknown, guesses)
            )
            raise ValueError(
                f"unknown {what} setting{'s' * (len(unknown) > 1)} in the state: {named}; remove or rename "
                f"{'them' if len(unknown) > 1 else 'it'} (the settings: {', '.join(sorted(known))})"
            )
        if not isinstance(rows, (list, tuple)):
            raise ValueError(f"state history must be a list of {row_text} rows, got {reprlib.repr(rows)}")
        history = []
        for i, row in enumerate(rows):
            if not isinstance(row, (list, tuple)) or len(row) != len(columns) + 1:
                raise ValueError(f"state history[{i}] must be a row {row_text}, got {reprlib.repr(row)}")
            try:
                trial = trial_of(list(row[:-1]))
            except (TypeError, ValueError) as error:  # a value of the wrong type (a Lens says TypeError)
                raise ValueError(f"state history[{i}]: {error}") from None
            history.append((trial, answer_of(row[-1], i)))
        optimizer = cls.from_settings(settings)
        for i, (trial, answer) in enumerate(history):
            try:
                optimizer.tell(trial, answer)
            except ValueError as error:
                raise ValueError(f"state history[{i}]: {error}") from error
        return optimizer

    @classmethod
    def from_settings(cls, settings: dict, history=()):
        """The optimizer of ``settings`` (its ``settings_dict``) told ``history``, ``(trial, answer)``
        pairs in order."""
        opt = cls(**cls._saved_settings(dict(settings)))
        for trial, answer in history:
            opt.tell(trial, answer)
        return opt
