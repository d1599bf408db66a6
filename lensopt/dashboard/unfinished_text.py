"""Why a session has no stored prescription, or has results that may not be its last, and the
command that continues it: the words of the printed record, of ``lensopt sessions`` and of the
dashboard's continue row, for a session stopped, interrupted or still running — and for one
finished with eyes short of their target, the command its end advised (:func:`continue_line`)."""

from __future__ import annotations

from lensopt.dashboard.series import count_text
from lensopt.modes.letters import is_prescription
from lensopt.store.claim import INTERRUPTED, STOPPED, session_status
from lensopt.store.db_path import resume_command
from lensopt.store.records import DUEL_KIND, LETTERS_KIND
from lensopt.store.session_records import continue_advice, run_window_options
from lensopt.store.verdict import answer_noun


def missing_reason(info, status: str | None = None, db_path=None) -> str:
    """Why session ``info`` has no stored prescription, and what to do about it. ``status``: the
    session's status as shown (:func:`lensopt.store.claim.session_status`: ``running`` while a
    program runs it, ``interrupted`` when none does), default the stored one; ``db_path``: its
    database, named in the command that continues it (:func:`resume_command`)."""
    sid, n = info.session_id, info.n_answers  # not those undone
    resume = resume_command(sid, db_path, run_window_options(getattr(info, "events", ())))
    status = session_status(None, info.session_id, info.status) if status is None else status
    if info.kind != LETTERS_KIND and not is_prescription(info.optimizer_settings):
        protocol = "clinical-prescription-duel" if info.kind == DUEL_KIND else "clinical-prescription-ranking"
        # one stopped before its end says so, with the command that continues it (as a letter session's)
        unfinished = unfinished_line(
            sid, n, status, db_path, run_window_options(getattr(info, "events", ())), answer_noun(info.kind)
        )
        return (
            f"No prescription is stored: session {sid} is a {info.kind} session of sphere and cylinder, which "
            "reports no prescription. The full prescription (sphere, cylinder and axis) comes from a session "
            f"with a starting refraction: lensopt run --protocol {protocol} --start RX (or clinical-prescription "
            "for letters)." + ("" if unfinished is None else f" {unfinished}")
        )
    if not is_prescription(info.optimizer_settings) and info.status == "finished" and n > 0:
        return (
            f"No prescription is stored: session {sid} is a two-parameter (sphere, cylinder) search that finished "
            f"before such searches stored their best lens; {resume} stores it now. A prescription whose axis is searched too comes from a full-prescription "
            "session: lensopt run --protocol clinical-prescription --start RX."
        )
    if n == 0:
        return f"No prescription is stored: session {sid} has no answered trial."
    trials = count_text(n, answer_noun(info.kind))  # "1 trial", "4 trials", "4 duels"
    if status == "running":
        return (
            f"No prescription is stored yet: session {sid} is still running ({trials} so far). The "
            "prescription is stored when it ends; print again then."
        )
    if status == INTERRUPTED:
        return (
            f"No prescription is stored: session {sid} was interrupted after {trials} (its program was "
            f"closed or crashed before the end). Continue it to store the prescription: {resume}."
        )
    return (
        f"No prescription is stored: session {sid} was {status} after {trials} without one. "
        f"Resume it to finish and store the prescription: {resume}."
    )


def continue_line(info, status: str, db_path=None) -> str | None:
    """For a finished session whose end advised more trials (:func:`lensopt.store.continue_advice`:
    its eyes short of their target, nothing run since), the line that says so with the command that
    gives them (``db_path``: its database, named in it); None otherwise, and for sessions ended
    before the advice was stored (4 Dec 2026)."""
    advice = continue_advice(getattr(info, "events", ()), info.n_trials)
    if status != "finished" or advice is None:
        return None
    return f"More trials recommended: {advice.command(info.session_id, db_path, note_sep=' ')}"


def unfinished_text(info, status: str | None = None, db_path=None) -> str | None:
    """For a session not finished, a line saying so (its stored results may not be its last); None
    for a finished one. ``status`` and ``db_path`` as for :func:`missing_reason`."""
    status = session_status(None, info.session_id, info.status) if status is None else status
    options = run_window_options(getattr(info, "events", ()))
    # answers: not those undone
    return unfinished_line(info.session_id, info.n_answers, status, db_path, options, answer_noun(info.kind))


def unfinished_line(
    session_id: int, n_answers: int, status: str, db_path=None, options: str = "", noun: str = "trial"
) -> str | None:
    """:func:`unfinished_text` of session ``session_id`` after ``n_answers`` answers in ``status``
    (as shown): the record's line, which the dashboard shows too, with the command that continues it
    (carrying the window ``options`` its last run was given, :func:`run_window_options`); ``noun``:
    what an answer is counted as (:func:`answer_noun`)."""
    trials = count_text(n_answers, noun)  # "1 trial", "4 trials", "4 duels"
    resume = resume_command(session_id, db_path, options)
    if status == "running":
        return f"Session not finished: still running ({trials} so far); results may change."
    if status == INTERRUPTED:
        return (
            f"Session not finished: interrupted after {trials}, its program closed or crashed ({resume} continues it)."
        )
    if status == STOPPED:
        return f"Session not finished: stopped after {trials} ({resume} continues it)."
    return None


#: Why a session stored as not finished stopped, in the dashboard's continue row (by its status as shown).
WHY_NOT_FINISHED = {INTERRUPTED: "interrupted: its program closed or crashed", STOPPED: "stopped before its end"}


def continue_row(header) -> tuple[str, str, str] | None:
    """The dashboard's summary row for a session that stopped before its end (``header``: a
    :class:`~lensopt.dashboard.series.SessionHeader`, its status as shown): ``("Continue", the
    record's command that continues it, why it stopped)``; for a finished one whose end advised
    more trials, the command its end gave (the record's "More trials recommended"); None for a
    session running, or finished with nothing advised."""
    advice = getattr(header, "continue_advice", None)
    if header.status == "finished" and advice is not None:
        note = CEILING_WHY if advice.at_most else MORE_TRIALS_WHY
        return ("Continue", advice.command(header.session_id, header.database, note_sep=None), note)
    why = WHY_NOT_FINISHED.get(header.status)
    if why is None:
        return None
    return ("Continue", resume_command(header.session_id, header.database, header.window_options), why)


#: Why a finished session has a "Continue" row: its end advised more trials (a ceiling of them,
#: no trend of the confidence justifying a number: :attr:`lensopt.store.ContinueAdvice.note`).
MORE_TRIALS_WHY = "finished short of its target: more trials recommended"
CEILING_WHY = "short of its target; --trials at most (no trend of the confidence)"
