"""When a session may stop: the stopping rule a clinician can trust (issue 14).

A session stops once the optimizer is confident enough that its reported lens is as good as the
best lens — ``confidence() ≥ confidence`` — after at least ``min_trials`` trials, and in any case
after ``max_trials``. ``confidence()`` is each optimizer's posterior probability that the reported
lens is within :data:`ACUITY_TOLERANCE_LOGMAR` of the best lens (see
:meth:`lensopt.refraction.RefractionOptimizer.confidence`).
"""

from __future__ import annotations

import math
import numbers
from dataclasses import asdict, dataclass

#: "As good as the best lens": an acuity loss of at most 0.025 logMAR, a quarter of a chart line
#: (about 0.25 D of blur: ``log10(1 + 0.25²) = 0.026``; the paper's final error after 260 trials).
ACUITY_TOLERANCE_LOGMAR = 0.025

#: Defaults: stop at 95 % confidence, never before 20 trials, never after 260 (the paper's budget).
DEFAULT_STOP_CONFIDENCE = 0.95
DEFAULT_MIN_TRIALS = 20
DEFAULT_MAX_TRIALS = 260


def _positive_int(name, value):
    if isinstance(value, bool) or not isinstance(value, numbers.Integral) or value < 1:
        raise ValueError(f"stop {name} must be a positive integer, got {value!r}")
    return int(value)


@dataclass(frozen=True)
class StopRule:
    """Stop at ``confidence`` (in (0, 1)) after ``min_trials``; always stop at ``max_trials``."""

    confidence: float = DEFAULT_STOP_CONFIDENCE
    min_trials: int = DEFAULT_MIN_TRIALS
    max_trials: int = DEFAULT_MAX_TRIALS

    def __post_init__(self):
        c = self.confidence
        if isinstance(c, bool) or not isinstance(c, numbers.Real) or not (math.isfinite(c) and 0.0 < c < 1.0):
            raise ValueError(f"stop confidence must be a number strictly between 0 and 1 (e.g. 0.95), got {c!r}")
        object.__setattr__(self, "confidence", float(c))
        object.__setattr__(self, "min_trials", _positive_int("min_trials", self.min_trials))
        object.__setattr__(self, "max_trials", _positive_int("max_trials", self.max_trials))
        if self.min_trials > self.max_trials:
            raise ValueError(f"stop min_trials ({self.min_trials}) must not exceed max_trials ({self.max_trials})")

    def should_stop(self, n_trials: int, confidence=None, *, reaches=None) -> bool:
        """Whether a session with ``n_trials`` answered trials and this ``confidence`` may stop.

        ``confidence`` is a number, or a function returning it, called only when the answer
        depends on it (from ``min_trials`` to ``max_trials``): it costs milliseconds. ``reaches``,
        if given, is used instead: a function ``reaches(threshold) -> bool`` that answers
        ``confidence() >= threshold`` exactly and may settle it with less work (e.g.
        :func:`lensopt.refraction.certainty.confidence_reaches`)."""
        if n_trials >= self.max_trials:
            return True
        if n_trials < self.min_trials:
            return False
        if reaches is not None:
            return bool(reaches(self.confidence))
        if confidence is None:
            raise TypeError("should_stop needs the confidence (a number or a function) or reaches(threshold)")
        return bool((confidence() if callable(confidence) else confidence) >= self.confidence)

    def reason(self, n_trials: int, confidence: float | None) -> str:
        """Why a session that stopped after ``n_trials`` at ``confidence`` did: ``"confidence"`` (the
        threshold reached from ``min_trials`` on) or ``"max_trials"`` (the budget ran out first)."""
        if n_trials >= self.min_trials and confidence is not None and confidence >= self.confidence:
            return "confidence"
        return "max_trials"

    def describe_stop(self, n_trials: int, confidence: float | None) -> str:
        """One line for a person: after how many trials, at what confidence, and why."""
        at = "" if confidence is None else f" at confidence {confidence:.2f}"
        if self.reason(n_trials, confidence) == "confidence":
            return f"stopped after {n_trials} trials{at} (the confidence threshold {self.confidence:g})"
        return f"stopped after {n_trials} trials{at} (the trial budget; below the threshold {self.confidence:g})"

    def to_dict(self) -> dict:
        return asdict(self)

    @classmethod
    def from_dict(cls, data) -> StopRule | None:
        """``None`` stays ``None`` (no stopping rule); unknown keys are refused by name."""
        if data is None:
            return None
        if not isinstance(data, dict):
            raise ValueError(f"a stop rule must be a table with confidence, min_trials, max_trials; got {data!r}")
        unknown = set(data) - {"confidence", "min_trials", "max_trials"}
        if unknown:
            raise ValueError(
                f"unknown stop setting(s): {', '.join(sorted(unknown))}; use confidence, min_trials, max_trials"
            )
        return cls(**data)


#: The number of comparisons after which lensopt's accuracy with duels and rankings was measured on
#: held-out patients (README, docs/prescription.md): a lens from fewer is no prescription yet
#: (:func:`enough_to_prescribe`; console, sessions list, dashboard, record).
COMPARISONS_EVALUATED = 40


#: The name of an eye's result short of its target confidence in a session without a stopping rule
#: (a protocol without ``[stop]``: a study's fixed number of trials). It is the study's estimate, not a
#: call for more trials; the console, the log, the dashboard and the printed record all name it so.
ESTIMATE_NOT_PRESCRIPTION = "estimate, not a prescription"


def stop_threshold(stop: StopRule | None) -> float | None:
    """The confidence a session's stopping rule stops at (None without a rule): the threshold an
    estimate of the confidence must reach beyond its Monte Carlo noise
    (:func:`lensopt.refraction.certainty.refine_draws`)."""
    return None if stop is None else stop.confidence


def prescription_target(stop_confidence: float | None) -> float:
    """The confidence an eye's lens must reach to be shown as a prescription: the protocol's
    ``[stop] confidence`` (``stop_confidence``), else :data:`DEFAULT_STOP_CONFIDENCE` (a protocol
    without a ``[stop]`` table). The closing console, the dashboard and the printed record all hold
    a lens to it (:func:`enough_to_prescribe`)."""
    return DEFAULT_STOP_CONFIDENCE if stop_confidence is None else float(stop_confidence)


def enough_to_prescribe(confidence: float | None, target: float, n_comparisons: int | None = None) -> bool:
    """Whether a lens found at ``confidence`` may be shown as a prescription: its confidence reached
    ``target`` (:func:`prescription_target`). Short of it, the console, the dashboard and the printed
    record say "not enough answers to prescribe" instead of the lens. A lens without a confidence
    (duels and rankings: no acuity scale, so no stopping rule) is held instead to the number of
    comparisons after which lensopt's accuracy was measured, :data:`COMPARISONS_EVALUATED`, when
    ``n_comparisons`` is given (12 rankings put a lens 1 D and 78° off on a signable record)."""
    if confidence is None:
        return n_comparisons is None or n_comparisons >= COMPARISONS_EVALUATED
    return confidence >= target


def comparisons_shortfall(n_comparisons: int, noun: str) -> str:
    """Why a comparison lens is no prescription yet: ``only 12 rankings; lensopt's accuracy was
    measured after 40``."""
    return f"only {n_comparisons} {noun}; lensopt's accuracy was measured after {COMPARISONS_EVALUATED}"
