"""The trial a refraction optimizer asks for."""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

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
    def from_settings(cls, settings: dict, history=()):
        """The optimizer of ``settings`` (its ``settings_dict``) told ``history``, ``(trial, answer)``
        pairs in order."""
        opt = cls(**cls._saved_settings(dict(settings)))
        for trial, answer in history:
            opt.tell(trial, answer)
        return opt
