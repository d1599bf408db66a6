"""The frozen data the dashboard draws for a session of compared lenses: one :class:`ComparisonSnapshot`
per update.

A *compared set* is the lenses shown on one trial, letters of one size through each: two lenses in
a duel ("which is clearer?", or "the same"), three or four in a ranking ("put them in order,
clearest first"). Both kinds are drawn the same way from the same numbers: the patient's order of
each set and the posterior utility of the lenses.

Built by :mod:`lensopt.dashboard.comparison_model` from stored duels or rankings; drawn by
:mod:`lensopt.dashboard.comparison_panels` (window and report alike). Arrays are read-only numpy arrays.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from lensopt.dashboard.series import SessionHeader, elapsed_s, frozen_array
from lensopt.dashboard.snapshot import (
    LensOptimum,
    PrescriptionView,
    best_lens_notation,
    freeze_bounds,
    phoropter_lens_text,
)
from lensopt.refraction.lens import diopter_text
from lensopt.stopping import comparisons_shortfall, enough_to_prescribe
from lensopt.store.records import DUEL_KIND, RANKING_KIND
from lensopt.store.verdict import trial_noun

#: What one compared set of each session kind is called (the slider and the history count them).
NOUNS = {DUEL_KIND: "duel", RANKING_KIND: "ranking"}
#: A duel's answers by the number of the clearer lens (0: "the same"), as the store names them.
DUEL_ANSWER_NAMES = {1: "first", 2: "second", 0: "same"}


def waiting_message(kind: str) -> str:
    """What a session of ``kind`` shows before its first answer: ``waiting for the first duel…``."""
    return f"waiting for the first {NOUNS[kind]}…"


#: Message shown while a duel session has no answered duel yet.
WAITING_DUEL_MESSAGE = waiting_message(DUEL_KIND)
#: Message shown while a ranking session has no answered ranking yet.
WAITING_RANKING_MESSAGE = waiting_message(RANKING_KIND)


@dataclass(frozen=True)
class ComparedSets:
    """The compared sets shown, one entry per trial (1-based ``index``).

    ``lenses_d``: one read-only ``(k, 2)`` array ``(S, C)`` per set, lens 1 first (as presented);
    ``order``: the lens indices of each set (0 = lens 1), clearest first; ``tied``: the patient saw
    no difference (a duel's "the same"; its ``order`` is then the presentation order).
    """

    index: np.ndarray
    lenses_d: tuple
    order: tuple
    tied: np.ndarray
    letter_logmar: np.ndarray
    presented_at: np.ndarray
    answered_at: np.ndarray

    def __post_init__(self):
        n = len(self.index)
        for name in ("lenses_d", "order", "tied", "letter_logmar", "presented_at", "answered_at"):
            if len(getattr(self, name)) != n:
                raise ValueError(f"ComparedSets.{name} must have {n} entries like index")
        for i, (lenses, order) in enumerate(zip(self.lenses_d, self.order)):
            if np.ndim(lenses) != 2 or np.shape(lenses)[0] < 2 or np.shape(lenses)[1] != 2:
                raise ValueError(f"ComparedSets.lenses_d[{i}] must have shape (k, 2) with k >= 2 lenses")
            if sorted(order) != list(range(len(lenses))):
                raise ValueError(f"ComparedSets.order[{i}] must hold each lens index 0..{len(lenses) - 1} once")

    @classmethod
    def from_records(cls, records, sets) -> ComparedSets:
        """Arrays from store records (``index``, ``letter_logmar``, the times) and their
        ``(lenses_d, order, tied)`` ``sets``, in the same order."""
        sets = list(sets)
        return cls(
            index=frozen_array([r.index for r in records], int),
            lenses_d=tuple(frozen_array(lenses) for lenses, _, _ in sets),
            order=tuple(tuple(int(i) for i in order) for _, order, _ in sets),
            tied=frozen_array([tied for _, _, tied in sets], bool),
            letter_logmar=frozen_array([r.letter_logmar for r in records]),
            presented_at=frozen_array([r.presented_at for r in records]),
            answered_at=frozen_array([r.answered_at for r in records]),
        )

    @property
    def n(self) -> int:
        return len(self.index)

    @property
    def number(self) -> np.ndarray:
        """Each set's place on a plot's axis: its ``index`` (no comparison is undone)."""
        return self.index

    @property
    def max_set_size(self) -> int:
        """Lenses of the largest set (0 without sets)."""
        return max((len(lenses) for lenses in self.lenses_d), default=0)

    @property
    def clearest(self) -> np.ndarray:
        """``(n,)`` number (1 = lens 1) of the lens judged clearest in each set; 0 for a tie."""
        return frozen_array([0 if tied else order[0] + 1 for order, tied in zip(self.order, self.tied)], int)

    def ranked_lenses_d(self) -> tuple:
        """Each set's lenses ``(k, 2)`` in the patient's order, clearest first."""
        return tuple(lenses[list(order)] for lenses, order in zip(self.lenses_d, self.order))

    def counts(self) -> dict[int, int]:
        """How often each lens number was judged clearest (1, 2, ...), then the ties (key 0)."""
        clearest = self.clearest
        return {k: int(np.sum(clearest == k)) for k in (*range(1, self.max_set_size + 1), 0)}


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
class ComparisonSnapshot:
    """Everything the comparison panels draw, for the first ``sets.n`` sets of a session of ``kind``
    (``"duel"`` or ``"ranking"``, :data:`NOUNS`).

    ``utility_map``, ``best`` and ``profile`` are None while there is no answer; ``message`` then
    says why. ``model`` names the answer model (``probit`` or ``ties`` for duels, ``Plackett–Luce``
    for rankings); ``live`` is False for a replay. ``prescription``: the prescription so far in
    clinical notation, of a duel or ranking session of the full prescription (whose utility map is not
    drawn; through the acuity link, ``prescription_view`` instead).
    ``lens_axis_deg`` and ``cylinder_convention``: the protocol's ``[lens] axis_deg`` and
    ``cylinder``, with which a two-parameter session's best lens is also written in clinical notation
    (0: no axis given).
    """

    kind: str
    header: SessionHeader
    sets: ComparedSets
    sphere_bounds_d: tuple
    cylinder_bounds_d: tuple
    letter_bounds_logmar: tuple
    model: str
    utility_map: UtilityMap | None = None
    best: LensOptimum | None = None
    profile: UtilityProfile | None = None
    live: bool = True
    message: str | None = None
    prescription: str | None = None
    lens_axis_deg: float = 0.0
    cylinder_convention: str = "minus"
    #: The protocol's ``[lens] step_d`` (None: continuous powers): the best lens on the phoropter.
    lens_step_d: float | None = None
    #: A full prescription's comparisons through the acuity link: the predicted acuity around its
    #: lens, which the lens map's and the profile's slots draw as a letter search's (None otherwise).
    prescription_view: PrescriptionView | None = None
    #: A full prescription's 95 % intervals, ``(key, low, high)`` (the keys of
    #: :data:`lensopt.refraction.prescription.INTERVAL_UNITS`), shown under its lens.
    prescription_intervals: tuple[tuple[str, float, float], ...] = ()

    def __post_init__(self):
        if self.kind not in NOUNS:
            raise ValueError(f"ComparisonSnapshot.kind must be one of {', '.join(NOUNS)}, got {self.kind!r}")
        freeze_bounds(self)

    @property
    def best_lens_notation(self) -> str | None:
        """The best lens in clinical notation at the protocol's axis, None without an axis."""
        return best_lens_notation(self.best, self.lens_axis_deg, self.cylinder_convention)

    @property
    def phoropter_lens(self) -> str | None:
        """The best lens rounded to the phoropter's steps, as the closing console gives it."""
        bounds = (self.sphere_bounds_d, self.cylinder_bounds_d)
        return phoropter_lens_text(self.best, self.lens_step_d, bounds, self.lens_axis_deg, self.cylinder_convention)

    @property
    def has_model(self) -> bool:
        """Whether the panels draw a model (the best lens and its utility)."""
        return self.best is not None

    @property
    def noun(self) -> str:
        """What one trial is called: ``duel`` or ``ranking``."""
        return NOUNS[self.kind]

    @property
    def nouns(self) -> str:
        """What the trials are called: ``duels`` or ``rankings`` (:func:`lensopt.store.verdict.trial_noun`)."""
        return trial_noun(self.kind)

    @property
    def n_trials(self) -> int:
        return self.sets.n

    @property
    def n_answers(self) -> int:
        """The answers shown: every one (a comparison is never undone, unlike a letter answer)."""
        return self.sets.n

    @property
    def n_undone(self) -> int:
        """Answers undone: none (as :attr:`lensopt.dashboard.snapshot.DashboardSnapshot.n_undone` of letters)."""
        return 0

    @property
    def void(self) -> np.ndarray:
        """Of each set shown, whether its answer was undone: none was."""
        return frozen_array([False] * self.sets.n, bool)

    @property
    def elapsed_s(self) -> float:
        """Seconds from the first set shown to the last answer (0 without sets)."""
        return elapsed_s(self.sets)

    def answer_label(self, clearest: int) -> str:
        """The legend of an answer by the number of the clearest lens (0: "the same")."""
        if clearest == 0:
            return "the same"
        return f"lens {clearest} {'clearer' if self.kind == DUEL_KIND else 'clearest'}"

    def answer_counts(self) -> dict[int, int]:
        """How often each answer was given, by the number of the lens judged clearest (0: "the same");
        a duel always lists 1, 2 and 0, a ranking lists "the same" only when it was given."""
        counts = self.sets.counts()
        if self.kind != DUEL_KIND and counts[0] == 0:
            del counts[0]
        return counts

    def answers_text(self) -> str:
        """Duels: ``first 3, second 4, same 1``; rankings: ``clearest: lens 1 ×2, lens 2 ×3, lens 3 ×1``."""
        counts = self.answer_counts()
        if self.kind == DUEL_KIND:
            return ", ".join(f"{DUEL_ANSWER_NAMES[k]} {count}" for k, count in counts.items())
        return "clearest: " + ", ".join(
            f"lens {k} ×{count}" if k else f"the same ×{count}" for k, count in counts.items()
        )

    @property
    def final(self) -> bool:
        """Whether the snapshot shows the session's end (finished, not a replay part-way): its lens is
        then the prescription, before that the best so far."""
        return self.header.status == "finished" and self.live

    @property
    def shortfall(self) -> str:
        """Why a full prescription's lens at the session's end is no prescription: fewer comparisons
        than lensopt's accuracy was measured after (``only 12 rankings; …``, the printed record's
        rule, :func:`lensopt.stopping.enough_to_prescribe`); ``""`` otherwise."""
        if not (self.final and self.prescription) or enough_to_prescribe(None, math.nan, self.n_trials):
            return ""
        return comparisons_shortfall(self.n_trials, self.nouns)

    @property
    def result_label(self) -> str:
        """What a full prescription's lens is: ``prescription`` (the end, enough comparisons), ``best
        so far`` (before the end), or ``provisional estimate`` (an end short of :attr:`shortfall`)."""
        if not self.final:
            return "best so far"
        return "provisional estimate" if self.shortfall else "prescription"

    def summary_line(self) -> str:
        """One line for the window and the tests: sets, answers, best lens ± sd."""
        h, noun = self.header, self.noun
        head = f"{noun.capitalize()} session {h.session_id} ({h.who}, {h.status}){h.simulated_suffix}"
        n = self.n_trials
        count = f"{n} {noun}{'' if n == 1 else 's'}" + (f" ({self.answers_text()})" if n else "")
        if self.best is None and self.prescription:  # a full prescription: its lens, as far as it goes
            short = f" — not enough answers to prescribe ({self.shortfall})" if self.shortfall else ""
            return f"{head} · {count} · {self.result_label} {self.prescription}{short}"
        if self.best is None:  # none answered yet
            return f"{head} · {count} · {self.message or waiting_message(self.kind)}"
        b, notation = self.best, self.best_lens_notation
        return (
            f"{head} · {count} · "
            f"best lens{f' {notation}:' if notation else ''} S {diopter_text(b.sphere_d)} ± {diopter_text(b.sphere_sd_d, signed=False)} D, "
            f"C {diopter_text(b.cylinder_d)} ± {diopter_text(b.cylinder_sd_d, signed=False)} D"
        )
