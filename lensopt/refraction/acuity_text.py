"""An acuity as a clinician reads it: logMAR signed to two decimals (:func:`logmar_text`,
``+0.13 logMAR``) and the nearest Snellen chart line at 6 m and 20 ft (:func:`snellen_text`,
``("≈ 6/12", "≈ 20/40")``) — the words of the console, the log, the dashboard and the record."""

from __future__ import annotations

import math
from collections.abc import Sequence


def signed_logmar(logmar: float) -> str:
    """``+0.13``, signed to two decimals; a value that rounds to zero is ``+0.00`` (not ``-0.00``,
    which an acuity a hair under zero would show)."""
    return f"{round(float(logmar), 2) + 0.0:+.2f}"


def logmar_text(logmar: float) -> str:
    """``+0.13 logMAR`` (:func:`signed_logmar`)."""
    return f"{signed_logmar(logmar)} logMAR"


#: The Snellen denominators of a letter chart's lines, one decade of them in logMAR steps of 0.1 from
#: -0.3 logMAR (6/3, 20/10) to +0.6 (6/24, 20/80), at 6 m and at 20 ft; each decade on is ten times
#: the last (+0.7 is 6/30, 20/100; +1.0 is 6/60, 20/200). The names printed on charts, not
#: ``6·10^logMAR`` (+0.1 logMAR is the 6/7.5 line, not 6/7.6).
SNELLEN_LINES = {
    6: (3.0, 3.8, 4.8, 6.0, 7.5, 9.5, 12.0, 15.0, 19.0, 24.0),
    20: (10.0, 12.5, 16.0, 20.0, 25.0, 32.0, 40.0, 50.0, 63.0, 80.0),
}
#: The logMAR, in tenths, of the first line of :data:`SNELLEN_LINES`.
SNELLEN_FIRST_LINE_TENTHS = -3
#: The mark of a Snellen line that is only the nearest to an acuity, not the acuity itself.
APPROXIMATE = "≈ "


def snellen_text(logmar: float) -> tuple[str, str]:
    """The Snellen chart line of an acuity, at 6 m and at 20 ft: ``("6/12", "20/40")`` for +0.30
    logMAR, a value on a line; ``("≈ 6/12", "≈ 20/40")`` for +0.27, which is not.

    A clinician reads chart lines, logMAR steps of 0.1: the line is the one nearest to the acuity as
    :func:`signed_logmar` shows it (to two decimals), halfway between two lines the larger letters
    (+0.05 is ≈ 6/7.5: an acuity is never flattered), and marked approximate unless the acuity shown
    is that line's."""
    if not math.isfinite(logmar):
        raise ValueError(f"an acuity in logMAR must be a finite number, got {logmar!r}")
    hundredths = round(round(float(logmar), 2) * 100)  # as signed_logmar shows it
    tenths = (hundredths + 5) // 10  # the nearest line; a tie to the larger letters
    mark = "" if hundredths % 10 == 0 else APPROXIMATE
    decade, step = divmod(tenths - SNELLEN_FIRST_LINE_TENTHS, 10)

    def line(numerator: int) -> str:
        denominator = round(SNELLEN_LINES[numerator][step] * 10.0**decade, 3)
        return f"{mark}{numerator}/{denominator:g}"

    return line(6), line(20)


#: How far (logMAR, one chart line) beyond the letters a session shows a predicted acuity is still
#: reported: further out it is the model's extrapolation (after a few answers, -5 logMAR), not
#: an acuity the letters could measure — the result stores none, and the dashboard shows none.
ACUITY_MARGIN_LOGMAR = 0.1


def measurable_acuity_logmar(acuity_logmar, letter_bounds_logmar: Sequence[float]) -> float | None:
    """``acuity_logmar`` if it is finite and within :data:`ACUITY_MARGIN_LOGMAR` of the letter sizes
    a session shows (``letter_bounds_logmar``, ``(low, high)``), else None: the one rule of the stored
    result, the log, the printed record and the dashboard."""
    if acuity_logmar is None or not math.isfinite(float(acuity_logmar)):
        return None
    value, (low, high) = float(acuity_logmar), letter_bounds_logmar
    return value if low - ACUITY_MARGIN_LOGMAR <= value <= high + ACUITY_MARGIN_LOGMAR else None
