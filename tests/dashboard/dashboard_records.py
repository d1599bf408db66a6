"""Stored letter trials for the dashboard's tests: a trial the optimizer asked, answered."""

from lensopt.store import TrialRecord


def answered_record(i, trial, correct, eye=None) -> TrialRecord:
    """Trial ``i`` of an ask (``trial``: its lens, letter size and, in a full prescription, axis)
    answered right or wrong ("K" named "K" or "X"), 0.8 s to answer, three seconds apart."""
    return TrialRecord(
        i,
        trial.sphere_d,
        trial.cylinder_d,
        trial.letter_logmar,
        "K",
        "K" if correct else "X",
        correct,
        0.8,
        1000.0 + 3 * i,
        1000.8 + 3 * i,
        axis_deg=getattr(trial, "axis_deg", None),
        eye=eye,
    )
