"""Letter answers of a simulated patient stored in a session, shared by the CLI's tests that need a
database with a session in it."""

from lensopt.store import TrialRecord


def store_letter_answers(store, session_id: int, optimizer, patient, n_trials: int) -> None:
    """Ask ``optimizer`` ``n_trials`` times, have ``patient`` answer, tell the optimizer and append
    each answer as letter trial 1, 2, ... of ``session_id`` (presented at 10 s × its index)."""
    for i in range(1, n_trials + 1):
        trial = optimizer.ask()
        correct = bool(patient.respond(trial.letter_logmar, trial.sphere_d, trial.cylinder_d))
        optimizer.tell(trial, correct)
        record = TrialRecord(
            i, trial.sphere_d, trial.cylinder_d, trial.letter_logmar, "K", "K", correct, 1.0, 10.0 * i, 10.0 * i + 1
        )
        store.append_trial(session_id, record)
