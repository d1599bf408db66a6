"""When the record and the report say things happened: a moment in this computer's time zone,
named (``2026-12-01 03:31 UTC``), and when each eye's result was computed."""

from __future__ import annotations

import time


def clock_text(unix_s: float) -> str:
    """``2026-12-01 03:31 UTC``: a moment in this computer's time zone, named (the record, the report)."""
    return time.strftime("%Y-%m-%d %H:%M %Z", time.localtime(unix_s))


def results_clock_text(results) -> str:
    """When ``results`` were computed: ``2026-12-07 03:21 UTC``, or each eye's when the eyes' differ
    (``OD 2026-12-07 03:12 UTC · OS 2026-12-07 03:21 UTC``: OD's before a kill, OS's after the
    resume; the latest alone said OD's was computed then too)."""
    times = [clock_text(r.recorded_at) for r in results]
    eyes = [getattr(r, "eye", None) for r in results]
    if len(set(times)) == 1 or not all(eyes):
        return clock_text(max(r.recorded_at for r in results))
    return " · ".join(f"{eye} {moment}" for eye, moment in zip(eyes, times))
