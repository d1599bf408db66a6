"""When the record says things happened (lensopt.dashboard.clock)."""

import time
from datetime import UTC, datetime
from types import SimpleNamespace

import pytest

from lensopt.dashboard.clock import clock_text, results_clock_text


@pytest.fixture
def utc(monkeypatch):
    monkeypatch.setenv("TZ", "UTC")
    time.tzset()
    yield
    monkeypatch.undo()
    time.tzset()


def _utc_text(unix_s: float) -> str:
    return datetime.fromtimestamp(unix_s, tz=UTC).strftime("%Y-%m-%d %H:%M") + " UTC"


def test_a_moment_is_written_to_the_minute_with_its_zone(utc):
    assert clock_text(1_800_000_000.0) == _utc_text(1_800_000_000.0) == "2027-01-15 08:00 UTC"


@pytest.mark.parametrize(
    ("zone", "expected"),
    [
        ("UTC+14", "2027-01-14 18:00 UTC-14:00"),  # POSIX: 14 h behind UTC, though named "UTC"
        ("Nowhere/Foo", "2027-01-15 08:00 Nowhere (UTC+00:00)"),  # unknown to the system: read as UTC
        ("Pacific/Chatham", "2027-01-15 21:45 UTC+13:45"),  # named "+1345" by the system: an offset
        ("Asia/Kolkata", "2027-01-15 13:30 IST (UTC+05:30)"),
        ("America/New_York", "2027-01-15 03:00 EST (UTC-05:00)"),
    ],
)
def test_a_moment_elsewhere_gives_its_offset_from_utc_not_a_name_alone(monkeypatch, zone, expected):
    """Found by a user audit: with ``TZ=UTC+14`` the signed record said "2026-12-06 20:12 UTC" for a
    moment of 10:12 UTC. Hand values: 1,800,000,000 s is 2027-01-15 08:00 UTC."""
    monkeypatch.setenv("TZ", zone)
    time.tzset()
    try:
        assert clock_text(1_800_000_000.0) == expected
    finally:
        monkeypatch.undo()
        time.tzset()


def test_each_eyes_result_is_timed_when_the_eyes_were_computed_apart(utc):
    """OD's result stored before a kill (03:12), OS's after the resume (03:21): the record said
    "Result computed 03:21" alone, as though OD's had been computed then too."""
    od = SimpleNamespace(eye="OD", recorded_at=1_800_000_000.0)
    os_ = SimpleNamespace(eye="OS", recorded_at=1_800_000_540.0)
    assert results_clock_text([od, os_]) == f"OD {_utc_text(od.recorded_at)} · OS {_utc_text(os_.recorded_at)}"
    same_minute = SimpleNamespace(eye="OS", recorded_at=1_800_000_030.0)
    assert results_clock_text([od, same_minute]) == _utc_text(same_minute.recorded_at)  # one time: no eyes named
    assert results_clock_text([SimpleNamespace(eye=None, recorded_at=1e9), od]) == _utc_text(od.recorded_at)
