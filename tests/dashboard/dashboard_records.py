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


def store_simulated_trials(store, sid, opt, patient, n_trials: int) -> None:
    """``n_trials`` trials ``opt`` asks, answered by the simulated ``patient``, told to ``opt`` and
    stored in session ``sid`` as the experiment stores them (each answer before the next ask)."""
    for i in range(1, n_trials + 1):
        trial = opt.ask()
        correct = bool(patient.respond(trial.letter_logmar, trial.sphere_d, trial.cylinder_d, trial.axis_deg))
        opt.tell(trial, correct)
        store.append_trial(sid, answered_record(i, trial, correct))
