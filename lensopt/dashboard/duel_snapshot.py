"""The frozen data the dashboard draws for a duel session: one :class:`DuelSnapshot` per update.

Built by :mod:`lensopt.dashboard.duel_model` from stored duels; drawn by
:mod:`lensopt.dashboard.duel_panels` (window and report alike). Arrays are read-only numpy arrays.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

import numpy as np

from lensopt.dashboard.snapshot import LensOptimum, SessionHeader, elapsed_s, freeze_bounds, frozen_array
from lensopt.store.records import DUEL_ANSWERS, DUEL_KIND

#: Message shown while a duel session has no answered duel yet.
WAITING_DUEL_MESSAGE = "waiting for the first duel…"


@dataclass(frozen=True)
class DuelSeries:
    """The duels shown, as parallel arrays (1-based ``index``); lenses are ``(n, 2)`` ``(S, C)``
    and ``answer`` is ``"first"``, ``"second"`` or ``"same"``."""

    index: np.ndarray
    first_lens_d: np.ndarray
    second_lens_d: np.ndarray
    letter_logmar: np.ndarray
    answer: np.ndarray
    presented_at: np.ndarray
    answered_at: np.ndarray

    def __post_init__(self):
        n = len(self.index)
        for name in ("first_lens_d", "second_lens_d", "letter_logmar", "answer", "presented_at", "answered_at"):
            if len(getattr(self, name)) != n:
                raise ValueError(f"DuelSeries.{name} must have {n} entries like index")
        for name in ("first_lens_d", "second_lens_d"):
            if np.shape(getattr(self, name)) != (n, 2):
                raise ValueError(f"DuelSeries.{name} must have shape (n, 2) = ({n}, 2)")
        unknown = set(self.answer.tolist()) - set(DUEL_ANSWERS)
        if unknown:
            raise ValueError(f"DuelSeries.answer must hold only {', '.join(DUEL_ANSWERS)}; got {sorted(unknown)}")

    @property
    def n(self) -> int:
        return len(self.index)

    def counts(self) -> dict[str, int]:
        """How many duels got each answer, in the order of ``DUEL_ANSWERS``."""
        return {answer: int(np.sum(self.answer == answer)) for answer in DUEL_ANSWERS}

    @classmethod
    def from_records(cls, records) -> "DuelSeries":
        """Arrays from store ``DuelTrialRecord`` objects."""
        return cls(
            index=frozen_array([r.index for r in records], int),
            first_lens_d=frozen_array(np.reshape([r.first_lens_d for r in records], (-1, 2))),
            second_lens_d=frozen_array(np.reshape([r.second_lens_d for r in records], (-1, 2))),
            letter_logmar=frozen_array([r.letter_logmar for r in records]),
            answer=frozen_array([r.answer for r in records], str),
            presented_at=frozen_array([r.presented_at for r in records]),
            answered_at=frozen_array([r.answered_at for r in records]),
        )


@dataclass(frozen=True)
class UtilityMap:
    """Posterior utility at letters of ``letter_logmar`` on a lens grid: arrays ``(n_cylinder, n_sphere)``."""

    sphere_d: np.ndarray
    cylinder_d: np.ndarray
    mean: np.ndarray
    sd: np.ndarray
    letter_logmar: float

    def __post_init__(self):
        shape = (len(self.cylinder_d), len(self.sphere_d))
        for name in ("mean", "sd"):
            if np.shape(getattr(self, name)) != shape:
                raise ValueError(f"UtilityMap.{name} must have shape (n_cylinder, n_sphere) = {shape}")


@dataclass(frozen=True)
class UtilityProfile:
    """``f(lens) − f(best)`` at letters of ``letter_logmar``, along two lines through the best lens:
    sphere varied (cylinder at its best value) and cylinder varied (sphere at its best value).

    ``*_mean`` and ``*_sd`` are the posterior mean and sd of the *difference* (the covariance with
    the best lens included), so the band says how sure the model is that the best lens is better.
    """

    sphere_d: np.ndarray
    sphere_mean: np.ndarray
    sphere_sd: np.ndarray
    cylinder_d: np.ndarray
    cylinder_mean: np.ndarray
    cylinder_sd: np.ndarray
    letter_logmar: float

    def __post_init__(self):
        for axis in ("sphere", "cylinder"):
            n = len(getattr(self, f"{axis}_d"))
            for name in (f"{axis}_mean", f"{axis}_sd"):
                if len(getattr(self, name)) != n:
                    raise ValueError(f"UtilityProfile.{name} must have {n} entries like {axis}_d")


@dataclass(frozen=True)
class DuelSnapshot:
    """Everything the duel panels draw, for the first ``duels.n`` duels of a session.

    ``utility_map``, ``best`` and ``profile`` are None while there is no duel; ``message`` then
    says why. ``model`` is the duel model (``probit`` or ``ties``); ``live`` is False for a replay.
    """

    #: The session kind drawn.
    kind: ClassVar[str] = DUEL_KIND

    header: SessionHeader
    duels: DuelSeries
    sphere_bounds_d: tuple
    cylinder_bounds_d: tuple
    letter_bounds_logmar: tuple
    model: str
    utility_map: UtilityMap | None = None
    best: LensOptimum | None = None
    profile: UtilityProfile | None = None
    live: bool = True
    message: str | None = None

    def __post_init__(self):
        freeze_bounds(self)

    @property
    def n_trials(self) -> int:
        return self.duels.n

    @property
    def elapsed_s(self) -> float:
        """Seconds from the first duel shown to the last answer (0 without duels)."""
        return elapsed_s(self.duels)

    def answers_text(self) -> str:
        """``first 3, second 4, same 1``."""
        return ", ".join(f"{answer} {count}" for answer, count in self.duels.counts().items())

    def summary_line(self) -> str:
        """One line for the window and the tests: duels, answers, best lens ± sd."""
        h = self.header
        head = f"Duel session {h.session_id} ({h.participant}, {h.status})"
        if self.best is None:
            return f"{head} · 0 duels · {self.message or WAITING_DUEL_MESSAGE}"
        b = self.best
        return (f"{head} · {self.n_trials} duel{'' if self.n_trials == 1 else 's'} ({self.answers_text()}) · "
                f"best lens S {b.sphere_d:+.2f} ± {b.sphere_sd_d:.2f} D, C {b.cylinder_d:+.2f} ± {b.cylinder_sd_d:.2f} D")
