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


#: The most letters a stopping rule may have read through the reported lens before a stop
#: (``check_letters``; a chart line has five: a check longer than two lines is a search).
MAX_CHECK_LETTERS = 10


def _positive_int(name, value):
    if isinstance(value, bool) or not isinstance(value, numbers.Integral) or value < 1:
        raise ValueError(f"stop {name} must be a positive integer, got {value!r}")
    return int(value)


def _check_letters(value) -> int:
    if isinstance(value, bool) or not isinstance(value, numbers.Integral) or not 0 <= int(value) <= MAX_CHECK_LETTERS:
        raise ValueError(
            f"stop check_letters must be a whole number from 0 (no check) to {MAX_CHECK_LETTERS}, e.g. 5, got {value!r}"
        )
    return int(value)


#: Confidences at or above this are shown as it (unless a threshold above it is asked for): an
#: estimate from posterior draws is never certain.
_SHOWN_CONFIDENCE_MAX = 0.999


def _decimals(value: float) -> int:
    """The decimals ``value`` is written with (its shortest ``repr``: 0.95 has 2, 0.9499999 has 7)."""
    text = repr(float(value))
    if "e" in text:  # tiny thresholds (1e-06): as many decimals as the exponent says
        mantissa, _, exponent = text.partition("e")
        return max(0, len(mantissa.partition(".")[2]) - int(exponent))
    return len(text.partition(".")[2])


def confidence_text(confidence: float, target: float | None = None) -> str:
    """A confidence as a person reads it: rounded *down*, so that it never reads as reaching a
    threshold it has not reached (0.947 against 0.95 is "0.94", not "0.95") nor as certainty
    (0.996 is "0.996", not "1.00"; 1 is "0.999"). Two decimals, three from 0.99 on, and as many as
    ``target`` has (a threshold of 0.975 shows 0.974 as "0.974"), so that it compares with ``target``
    as the number does; "not computed" for a missing (NaN) one."""
    c = float(confidence)
    if not math.isfinite(c):
        return "not computed"
    cap = _SHOWN_CONFIDENCE_MAX if target is None else max(_SHOWN_CONFIDENCE_MAX, float(target))
    c = min(max(c, 0.0), cap)
    decimals = 3 if c >= 0.99 else 2
    if target is not None:
        decimals = max(decimals, _decimals(target))
    scale = 10**decimals
    return f"{math.floor(c * scale + 1e-9) / scale:.{decimals}f}"


def confidence_percent_text(confidence: float) -> str:
    """A confidence in percent, rounded down as :func:`confidence_text` is: 0.996 is "99 %"."""
    c = min(max(float(confidence), 0.0), _SHOWN_CONFIDENCE_MAX)
    return f"{math.floor(c * 100 + 1e-9)} %"


def threshold_text(threshold: float) -> str:
    """A confidence threshold with two decimals, as a confidence is shown, or as many as it has:
    0.95, 0.90, 0.975."""
    return f"{float(threshold):.{max(2, _decimals(threshold))}f}"


def rebudgeted_limits(min_trials: int, max_trials: int, budget: int, new_budget: int) -> tuple[int, int]:
    """A stopping rule's ``(min_trials, max_trials)`` once its session's trial budget per eye ``budget``
    (``[optimizer] trials``) becomes ``new_budget`` (``--trials``, also on a resume): a ``max_trials``
    that was the whole budget follows the new one, another is capped by it; ``min_trials`` is capped
    by the new ``max_trials``. The one rule of a protocol given ``--trials`` and of a stored session
    read back as its last resume ran it."""
    max_trials = new_budget if max_trials == budget else min(max_trials, new_budget)
    return min(min_trials, max_trials), max_trials


#: The settings of a stopping rule, as a protocol's ``[stop]`` table and a stored session spell them.
STOP_SETTINGS = ("confidence", "min_trials", "max_trials", "check_letters")


@dataclass(frozen=True)
class StopRule:
    """Stop at ``confidence`` (in (0, 1)) after ``min_trials``; always stop at ``max_trials``.

    ``check_letters``: before a stop by confidence, the patient reads at least this many letters
    through the lens the session reports (within a phoropter step of it,
    :data:`lensopt.refraction.shown.TRIED_WITHIN_D`, and none more than three lines larger than the
    acuity predicted through it, :data:`lensopt.refraction.shown.MEASURED_WITHIN_LOGMAR`), so that
    its acuity is measured, not only predicted: a clinician's last look at the chart. Once the
    confidence is reached, a letter optimizer asks its trials at that lens (the letter size the most
    informative there) until it holds them; it stops if the confidence still holds, and searches on
    if those answers took it below. 0 (the default, and every rule stored before it): no check."""

    confidence: float = DEFAULT_STOP_CONFIDENCE
    min_trials: int = DEFAULT_MIN_TRIALS
    max_trials: int = DEFAULT_MAX_TRIALS
    check_letters: int = 0

    def __post_init__(self):
        c = self.confidence
        if isinstance(c, bool) or not isinstance(c, numbers.Real) or not (math.isfinite(c) and 0.0 < c < 1.0):
            raise ValueError(f"stop confidence must be a number strictly between 0 and 1 (e.g. 0.95), got {c!r}")
        object.__setattr__(self, "confidence", float(c))
        object.__setattr__(self, "min_trials", _positive_int("min_trials", self.min_trials))
        object.__setattr__(self, "max_trials", _positive_int("max_trials", self.max_trials))
        object.__setattr__(self, "check_letters", _check_letters(self.check_letters))
        if self.min_trials > self.max_trials:
            raise ValueError(f"stop min_trials ({self.min_trials}) must not exceed max_trials ({self.max_trials})")

    def _confident(self, confidence, reaches) -> bool:
        if reaches is not None:
            return bool(reaches(self.confidence))
        if confidence is None:
            raise TypeError("should_stop needs the confidence (a number or a function) or reaches(threshold)")
        return bool((confidence() if callable(confidence) else confidence) >= self.confidence)

    def should_stop(self, n_trials: int, confidence=None, *, reaches=None, letters_through=None) -> bool:
        """Whether a session with ``n_trials`` answered trials and this ``confidence`` may stop.

        ``confidence`` is a number, or a function returning it, called only when the answer
        depends on it (from ``min_trials`` to ``max_trials``): it costs milliseconds. ``reaches``,
        if given, is used instead: a function ``reaches(threshold) -> bool`` that answers
        ``confidence() >= threshold`` exactly and may settle it with less work (e.g.
        :func:`lensopt.refraction.certainty.confidence_reaches`). ``letters_through``: a function
        returning how many letters the patient read through the reported lens, needed (and
        called) only with :attr:`check_letters` and the confidence reached."""
        if n_trials >= self.max_trials:
            return True
        if n_trials < self.min_trials or not self._confident(confidence, reaches):
            return False
        return self._checked(letters_through)

    def wants_check(self, n_trials: int, confidence=None, *, reaches=None, letters_through=None) -> bool:
        """Whether the next trial should be a check through the reported lens: the rule would stop
        by confidence but the patient has read fewer than :attr:`check_letters` letters through
        that lens (:meth:`should_stop`'s arguments)."""
        if not self.check_letters or n_trials >= self.max_trials or n_trials < self.min_trials:
            return False
        return self._confident(confidence, reaches) and not self._checked(letters_through)

    def _checked(self, letters_through) -> bool:
        if not self.check_letters:
            return True
        if letters_through is None:
            raise TypeError("a stop rule with check_letters needs letters_through (a function)")
        return int(letters_through()) >= self.check_letters

    def _confident_at(self, n_trials: int, confidence: float | None) -> bool:
        return n_trials >= self.min_trials and confidence is not None and confidence >= self.confidence

    def _read_through(self, letters_through: int | None) -> bool:
        return not self.check_letters or (letters_through is not None and letters_through >= self.check_letters)

    def reason(self, n_trials: int, confidence: float | None, letters_through: int | None = None) -> str:
        """Why a session that stopped after ``n_trials`` at ``confidence``, with ``letters_through``
        letters read through its lens, did: ``"confidence"`` (the threshold reached from
        ``min_trials`` on, and the check through the lens done) or ``"max_trials"`` (the budget ran
        out first — a check unfinished too; with :attr:`check_letters`, an unknown
        ``letters_through`` counts as unfinished)."""
        if self._confident_at(n_trials, confidence) and self._read_through(letters_through):
            return "confidence"
        return "max_trials"

    def describe_stop(self, n_trials: int, confidence: float | None, letters_through: int | None = None) -> str:
        """One line for a person: after how many trials, at what confidence, and why."""
        at = "" if confidence is None else f" at confidence {confidence_text(confidence, self.confidence)}"
        if self.reason(n_trials, confidence, letters_through) == "confidence":
            checked = f", the lens read through {self.check_letters} letters" if self.check_letters else ""
            return f"stopped after {n_trials} trials{at} (the confidence threshold {threshold_text(self.confidence)}{checked})"
        if self._confident_at(n_trials, confidence):  # the check through the lens was not finished
            read = "" if letters_through is None else f"{letters_through} of "
            return (
                f"stopped after {n_trials} trials{at} (the trial budget, before the check through the lens: "
                f"{read}{self.check_letters} letters read)"
            )
        return f"stopped after {n_trials} trials{at} (the trial budget; below the threshold {threshold_text(self.confidence)})"

    def to_dict(self) -> dict:
        """The settings; ``check_letters`` only when set, so that a rule without it is stored as
        every rule before it was."""
        data = asdict(self)
        if not self.check_letters:
            del data["check_letters"]
        return data

    @classmethod
    def from_dict(cls, data) -> StopRule | None:
        """``None`` stays ``None`` (no stopping rule); unknown keys are refused by name."""
        if data is None:
            return None
        if not isinstance(data, dict):
            raise ValueError(f"a stop rule must be a table with {', '.join(STOP_SETTINGS)}; got {data!r}")
        unknown = set(data) - set(STOP_SETTINGS)
        if unknown:
            raise ValueError(f"unknown stop setting(s): {', '.join(sorted(unknown))}; use {', '.join(STOP_SETTINGS)}")
        return cls(**data)


#: The number of comparisons after which lensopt's accuracy with duels and rankings was measured on
#: held-out patients (README, docs/prescription.md): a lens from fewer is no prescription yet
#: (:func:`enough_to_prescribe`; console, sessions list, dashboard, record).
COMPARISONS_EVALUATED = 40


#: The name of an eye's result short of its target confidence in a session without a stopping rule
#: (a protocol without ``[stop]``: a study's fixed number of trials). It is the study's estimate, not a
#: call for more trials; the console, the log, the dashboard and the printed record all name it so.
ESTIMATE_NOT_PRESCRIPTION = "estimate, not a prescription"


def provisional_estimate_text(lens_text: str, label: str = "provisional estimate") -> str:
    """``provisional estimate -1.00 / -0.75 x 024, not for prescribing``: the lens of an eye short of
    its target, as the closing console, the dashboard and the printed record show it (``label``
    ``"estimate"``: a fixed design's result, which never aimed at a prescription)."""
    return f"{label} {lens_text}, not for prescribing"


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
