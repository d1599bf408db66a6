"""When the record and the report say things happened: a moment in this computer's time zone,
named (``2026-12-01 03:31 UTC``), and when each eye's result was computed."""

from __future__ import annotations

import time


def clock_text(unix_s: float) -> str:
    """``2026-12-01 03:31 UTC``: a moment in this computer's time zone, named (the record, the report):
    ``2026-12-01 04:31 CET (UTC+01:00)`` in another zone. A zone's name alone misled: ``TZ=UTC+14``
    (POSIX for 14 h *behind* UTC) is named "UTC", and a zone the system does not know
    (``TZ=Nowhere/Foo``, read as UTC) is named "Nowhere" — so the offset from UTC is given, and a
    name only where it is a name."""
    moment = time.localtime(unix_s)
    offset_min = round((moment.tm_gmtoff or 0) / 60)
    name = moment.tm_zone or ""
    if offset_min == 0 and name in ("UTC", "GMT", "Z", "UCT"):
        return time.strftime("%Y-%m-%d %H:%M UTC", moment)
    sign = "+" if offset_min >= 0 else "-"
    utc = f"UTC{sign}{abs(offset_min) // 60:02d}:{abs(offset_min) % 60:02d}"
    named = name.isalpha() and name not in ("UTC", "GMT", "UCT")
    return time.strftime("%Y-%m-%d %H:%M ", moment) + (f"{name} ({utc})" if named else utc)


def results_clock_text(results) -> str:
    """When ``results`` were computed: ``2026-12-07 03:21 UTC``, or each eye's when the eyes' differ
    (``OD 2026-12-07 03:12 UTC · OS 2026-12-07 03:21 UTC``: OD's before a kill, OS's after the
    resume; the latest alone said OD's was computed then too)."""
    times = [clock_text(r.recorded_at) for r in results]
    eyes = [getattr(r, "eye", None) for r in results]
    if len(set(times)) == 1 or not all(eyes):
        return clock_text(max(r.recorded_at for r in results))
    return " · ".join(f"{eye} {moment}" for eye, moment in zip(eyes, times))
