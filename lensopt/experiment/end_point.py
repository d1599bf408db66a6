"""The end point of a session, per eye: the prescription, or "not enough answers to prescribe".

A search ends by its stopping rule (``[stop]``: the model is ``confidence`` sure that its lens is
within 0.025 logMAR of the best) or at its last trial. Its end point is the prescription with its
95 % intervals and predicted acuity when the confidence reached the target (``[stop] confidence``,
0.95 without a ``[stop]`` table); otherwise the lens the model would report is not shown as a
prescription (late in a search without enough answers it can be a corner of the box) and the
console says "not enough answers to prescribe" with, when the confidence trend justifies one, an
estimate of the trials still needed (:func:`more_trials_estimate`).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from lensopt.stopping import DEFAULT_STOP_CONFIDENCE

TREND_POINTS = 10
"""How many of the last confidences (one per answer) the trend is fitted on."""

MIN_TREND_POINTS = 5
"""Fewer confidences than this: no trend, no number of trials."""

MAX_EXTRAPOLATION = 2.0
"""The trend is not extrapolated further than this many times the answers it rests on."""


def more_trials_estimate(confidences: Sequence[tuple[int, float]], target: float) -> int | None:
    """About how many more answers the confidence needs to reach ``target``: the least-squares line
    through the last :data:`TREND_POINTS` ``(n_answers, confidence)`` pairs, extrapolated to the
    target. None (say "more trials" without a number) with fewer than :data:`MIN_TREND_POINTS`
    points, a trend that does not rise, or a target further than :data:`MAX_EXTRAPOLATION` times the
    answers so far. A straight line is the simplest reading of a noisy, saturating curve: the number
    is an order of magnitude, and the console says "about"."""
    points = list(confidences)[-TREND_POINTS:]
    if len(points) < MIN_TREND_POINTS:
        return None
    n, c = (np.asarray(v, dtype=float) for v in zip(*points))
    slope = float(np.polyfit(n, c, 1)[0])
    if not slope > 0:
        return None
    needed = math.ceil(max(target - c[-1], 0.0) / slope)
    return needed if needed <= MAX_EXTRAPOLATION * n[-1] else None


def confidence_target(protocol) -> float:
    """The confidence an end point needs: the protocol's ``[stop] confidence``, else 0.95."""
    return protocol.stop.confidence if protocol.stop is not None else DEFAULT_STOP_CONFIDENCE


@dataclass(frozen=True)
class EndPoint:
    """One eye's end point: ``lens_text`` and ``details`` (intervals, predicted acuity) when
    ``confident``; otherwise ``more_trials`` (None: no number can be justified)."""

    eye: str | None
    confident: bool
    confidence: float | None
    target: float
    lens_text: str
    details: tuple[str, ...] = ()
    more_trials: int | None = None

    def headline(self) -> str:
        """``OD  -1.25 / -0.75 x 170``, or ``OD  not enough answers to prescribe``."""
        eye = f"{self.eye}  " if self.eye else ""
        return eye + (self.lens_text if self.confident else "not enough answers to prescribe")

    def advice(self) -> str:
        """Why there is no prescription, and what to do: "about N more trials recommended"."""
        if self.confident:
            return ""
        reached = "no confidence yet" if self.confidence is None else f"confidence {self.confidence:.2f}"
        more = (
            "more trials recommended"
            if self.more_trials is None
            else f"about {self.more_trials} more trials recommended"
        )
        return f"{reached} < {self.target:.2f}; {more}"

    def lines(self) -> list[str]:
        """The end point as the log and the console write it."""
        if self.confident:
            return [self.headline(), *self.details]
        return [f"{self.headline()}; {self.advice()}"]
