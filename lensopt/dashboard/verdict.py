"""What the dashboard says of each eye's lens: how sure the model is of it and whether it is a
prescription — the closing console's verdict (:func:`lensopt.stopping.enough_to_prescribe`), in the
dashboard's words. Held by :class:`lensopt.dashboard.snapshot.DashboardSnapshot`, drawn by
:mod:`lensopt.dashboard.panels`.
"""

from __future__ import annotations

from dataclasses import dataclass

from lensopt.refraction.shown import ReadThrough
from lensopt.stopping import (
    ESTIMATE_NOT_PRESCRIPTION,
    confidence_text,
    enough_to_prescribe,
    provisional_estimate_text,
    threshold_text,
)

#: What an eye's result says when its confidence is short of the target (the closing console's words).
NOT_ENOUGH = "not enough answers to prescribe"


@dataclass(frozen=True)
class LensConfidence:
    """How sure the model is of its best lens (:class:`lensopt.refraction.certainty.LensCertainty`): the
    posterior probability ``confidence`` that the lens is within ``tolerance_logmar`` of the best
    lens, the best lens's 95 % intervals, and the session's stopping rule (``stop_confidence``,
    ``min_trials``, ``max_trials``; None without one) with its ``check_letters`` and the letters
    read through the lens so far, ``letters_through`` — the rule the session last ran with, its
    ``max_trials`` following a resume's ``--trials`` (:func:`lensopt.store.budget.stored_budget`).
    ``budget_known``: whether that is certain (False: a session started before schema 10, whose
    resumes' budgets are not stored)."""

    confidence: float
    sphere_interval_d: tuple
    cylinder_interval_d: tuple
    tolerance_logmar: float
    stop_confidence: float | None = None
    min_trials: int | None = None
    max_trials: int | None = None
    check_letters: int = 0
    letters_through: int = 0
    budget_known: bool = False

    def __post_init__(self):
        if not 0.0 <= self.confidence <= 1.0:
            raise ValueError(f"LensConfidence.confidence must be in [0, 1], got {self.confidence!r}")
        for name in ("sphere_interval_d", "cylinder_interval_d"):
            low, high = getattr(self, name)
            if not low <= high:
                raise ValueError(f"LensConfidence.{name} must be (low, high) with low <= high")
            object.__setattr__(self, name, (float(low), float(high)))

    @property
    def has_stop_rule(self) -> bool:
        return self.stop_confidence is not None

    def stop_state(self, n_trials: int) -> str:
        """Where the stopping rule stands after ``n_trials``: ``"reached"`` (confident enough, and
        the lens read through ``check_letters`` letters), ``"checking the lens, 2 of 5 letters
        read"``, ``"max trials reached"``, or ``"not yet"``. Past ``max_trials`` a session whose
        budget is not known (:attr:`budget_known`) was resumed with a larger one (``lensopt run
        --resume N --trials M``), which is not said to be reached; one whose budget is known was
        resumed with fewer trials than it had answered, and its budget is behind it."""
        if not self.has_stop_rule:
            return ""
        # a stopping rule comes whole (LensConfidence is built from one StopRule)
        assert self.stop_confidence is not None and self.min_trials is not None and self.max_trials is not None
        open_budget = n_trials < self.max_trials or self.budget_raised(n_trials)
        if n_trials >= self.min_trials and self.confidence >= self.stop_confidence:
            if open_budget and self.letters_through < self.check_letters:
                return f"checking the lens, {self.letters_through} of {self.check_letters} letters read"
            return "reached"
        return "not yet" if open_budget else "max trials reached"

    def budget_raised(self, n_trials: int) -> bool:
        """Whether ``n_trials`` is past ``max_trials`` in a session whose budget is not known: it was
        resumed with more trials before resumes were stored (:attr:`budget_known`)."""
        return not self.budget_known and self.max_trials is not None and n_trials > self.max_trials


#: What an eye's two-parameter lens with a cylinder and no axis is, in the dashboard's words.
NO_AXIS_ESTIMATE = "estimate, not a prescription: a cylinder without an axis"


@dataclass(frozen=True)
class EyeEstimate:
    """One eye's result so far: ``lens``, the lens its model would report (clinical notation, or
    ``S -1.25 D, C -0.75 D`` for a two-parameter search), with its ``confidence`` (None: a search
    without one) against ``target`` (the session's ``[stop] confidence``, else 0.95), after
    ``n_trials`` answers (0: the eye has none yet). ``eye``: ``"OD"``, ``"OS"``, or ``""`` in a session
    that names none. Short of the target it is no prescription
    (:func:`lensopt.stopping.enough_to_prescribe`, the closing console's rule): "not enough answers
    to prescribe", the lens only a provisional estimate; in a session without a stopping rule
    (``fixed_design``: a study's fixed number of trials) the lens "(estimate, not a prescription)",
    as the closing console and the log name it."""

    eye: str
    lens: str
    confidence: float | None
    target: float
    n_trials: int
    fixed_design: bool = False
    #: A two-parameter lens with a cylinder and no axis (no ``--axis``): an estimate, whatever its
    #: confidence (:func:`lensopt.store.verdict.withheld_reason`, the console's and the record's rule).
    no_axis: bool = False
    #: The dioptric distance (D) from the lens to the nearest lens the eye was tried with, when beyond
    #: a phoropter step (:func:`lensopt.refraction.shown.untried_d`, the console's and the record's
    #: rule: its acuity predicted, not measured); None otherwise.
    untried_d: float | None = None
    #: Of a full prescription: the acuity (logMAR) the model predicts through the lens, None unknown.
    acuity_logmar: float | None = None
    #: Of a full prescription: the 95 % intervals, ``(key, low, high)`` with the keys of
    #: :data:`lensopt.dashboard.prescription_text.INTERVAL_ROWS` (``sphere_d``, ..., ``axis_deg``).
    intervals: tuple[tuple[str, float, float], ...] = ()
    #: Of a full prescription: what the patient read through the lens (within a phoropter step of
    #: it: :func:`lensopt.refraction.shown.read_through`), None when nothing was.
    read_through: ReadThrough | None = None

    @property
    def prescribable(self) -> bool:
        """Whether the lens may be shown as the eye's prescription (answers, confidence enough, and
        an axis for its cylinder)."""
        return self.n_trials > 0 and enough_to_prescribe(self.confidence, self.target) and not self.no_axis

    @property
    def estimate_only(self) -> bool:
        """Whether a lens short of a prescription is shown as an estimate (a fixed design's, a
        cylinder without an axis) rather than as "not enough answers"."""
        return self.fixed_design or self.no_axis

    @property
    def label(self) -> str:
        """``OD``, ``OS``, or ``Prescription`` for a session that names no eye."""
        return self.eye or "Prescription"

    def verdict(self) -> str:
        """The lens to prescribe, ``not enough answers to prescribe`` (a fixed design's: the lens
        ``(estimate, not a prescription)``), or ``no answer yet``."""
        if self.n_trials == 0:
            return "no answer yet"
        if self.prescribable:
            return self.lens
        return f"{self.lens} ({self.shortfall()})" if self.estimate_only else NOT_ENOUGH

    def shortfall(self) -> str:
        """What the eye's lens is short of its target: ``not enough answers to prescribe``, a fixed
        design's ``estimate, not a prescription``; ``""`` when prescribable (or without answers)."""
        if self.n_trials == 0 or self.prescribable:
            return ""
        if self.no_axis:
            return NO_AXIS_ESTIMATE
        return ESTIMATE_NOT_PRESCRIPTION if self.estimate_only else NOT_ENOUGH

    def evidence(self) -> str:
        """``confidence 0.97 ≥ 0.95 after 40 trials`` (``< 0.95`` short of it); ``40 trials`` without one."""
        trials = f"{self.n_trials} trial{'' if self.n_trials == 1 else 's'}"
        if self.n_trials == 0:
            return ""
        if self.confidence is None:
            return trials
        sign = "≥" if enough_to_prescribe(self.confidence, self.target) else "<"  # the confidence's own comparison
        return f"confidence {confidence_text(self.confidence, self.target)} {sign} {threshold_text(self.target)} after {trials}"

    def provisional(self) -> str:
        """``provisional estimate -1.00 / -0.75 x 024, not for prescribing`` short of the target; else
        ``""`` (also for a fixed design, whose verdict is its estimate)."""
        if self.n_trials == 0 or self.prescribable or self.estimate_only:
            return ""
        return provisional_estimate_text(self.lens)

    def line(self) -> str:
        """One line: ``OD -1.25 / -0.75 x 170 (confidence 0.97 ≥ 0.95 after 40 trials)``, or ``OS not
        enough answers to prescribe (confidence 0.21 < 0.95 after 12 trials)``."""
        evidence = self.evidence()
        return f"{self.eye + ' ' if self.eye else ''}{self.verdict()}" + (f" ({evidence})" if evidence else "")
