"""The stopping rule's check through the reported lens, shared by the letter optimizers.

A letter search may report a lens the patient never read through: the acuity-law optimizer asks
its trials where acuity changes fastest and its law puts the optimum between them (31 of 40
held-out sessions, docs/never-lost.md). A clinician's last step is to read the chart through the
lens they are about to prescribe. With :attr:`lensopt.stopping.StopRule.check_letters` the letter
optimizers do it: once their confidence reaches the rule's threshold, their next trials are at the
reported lens — each at the letter size most informative there — until the patient has read that
many letters through it (:func:`lensopt.refraction.shown.letters_through`: within a phoropter
step, and letters that measure its acuity: none more than
:data:`~lensopt.refraction.shown.MEASURED_WITHIN_LOGMAR` larger than the acuity predicted through
it, so a first trial's large letter through the lens does not count); they stop if the confidence
still holds, and search on if it fell. The check is a function of the history alone (no phase is
stored), so a saved or resumed session continues it as it was.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any, cast

from lensopt.refraction.shown import MEASURED_WITHIN_LOGMAR, letters_through
from lensopt.stopping import StopRule


class ReportedLensCheck:
    """:meth:`should_stop` and :meth:`check_due` of a letter optimizer with a ``stop`` rule and a
    ``_history`` of ``(Trial, correct)``, listed after the optimizer's own bases; the optimizer gives
    ``_reported_lens()`` — ``(sphere_d, cylinder_d, axis_deg)`` of the lens it reports, on the
    phoropter's steps (axis None: a two-parameter search, every lens on one meridian) — and
    ``_confidence_test()`` (``{"confidence": ...}`` or ``{"reaches": ...}``, the arguments of
    :meth:`StopRule.should_stop`)."""

    stop: StopRule | None
    _history: list
    n_trials: Any
    _reported_lens: Callable[[], tuple[float, float, float | None]]
    _confidence_test: Callable[[], dict]

    def letters_through_reported(self) -> int:
        """How many letters the patient has read through the reported lens (within a phoropter step)
        that measure its acuity: none more than ``MEASURED_WITHIN_LOGMAR`` larger than the acuity
        predicted through it (every letter when no prediction is known)."""
        sphere_d, cylinder_d, axis_deg = self._reported_lens()
        predicted_logmar = self._reported_acuity_logmar()
        largest_logmar = predicted_logmar + MEASURED_WITHIN_LOGMAR if math.isfinite(predicted_logmar) else None
        trials = (trial for trial, _ in self._history)
        return letters_through(sphere_d, cylinder_d, axis_deg, trials, largest_logmar=largest_logmar)

    def _reported_acuity_logmar(self) -> float:
        """The acuity predicted through the reported lens (nan: not known yet): a two-parameter
        search's ``predicted_acuity_logmar``; a full prescription gives its own."""
        sphere_d, cylinder_d, _ = self._reported_lens()
        mean_logmar, _ = self.predicted_acuity_logmar(sphere_d, cylinder_d)  # type: ignore[attr-defined]
        return float(mean_logmar)

    def should_stop(self) -> bool:
        """Whether the session may stop by its :class:`lensopt.stopping.StopRule` (never without one):
        its confidence reached from ``min_trials`` on, the reported lens read through
        ``check_letters`` letters; or its ``max_trials``."""
        if self.stop is None:
            return False
        return self.stop.should_stop(
            self.n_trials, **self._confidence_test(), letters_through=self.letters_through_reported
        )

    def stop_reason(self) -> str | None:
        """Why the session may stop now: ``"confidence"`` (the threshold reached and the lens read
        through) or ``"max_trials"`` (the rule's budget); None while it may not (or without a rule)."""
        if not self.should_stop():
            return None
        assert self.stop is not None  # should_stop is never true without a rule
        confidence = cast(Callable[[], float], self.confidence)()  # type: ignore[attr-defined]
        return self.stop.reason(self.n_trials, confidence, self.letters_through_reported())

    def check_due(self) -> bool:
        """Whether the next trial is a check through the reported lens
        (:meth:`lensopt.stopping.StopRule.wants_check`). Asked before a trial by the session loop and
        again by :meth:`ask`: remembered for the trial count it was answered at (an optimizer's
        history only grows)."""
        if self.stop is None or not self.stop.check_letters:
            return False
        n = self.n_trials
        remembered = getattr(self, "_check_due_at", None)
        if remembered is None or remembered[0] != n:
            due = self.stop.wants_check(n, **self._confidence_test(), letters_through=self.letters_through_reported)
            remembered = (n, due)
            self._check_due_at = remembered
        return remembered[1]
