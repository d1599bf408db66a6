"""Backspace in a letter session (:func:`lensopt.experiment.session.run_session`): what a letter loop
needs to undo an answer (:func:`undo_options`), and the undo of the answer that ended an eye, at
the closing screen or before the next eye's first answer (:func:`undoable_eye`, :func:`undo_eye_end`)."""

from __future__ import annotations

from lensopt.experiment.modes import answered, eye_records
from lensopt.store import NOTED


def undoable_eye(records, eyes) -> str | None:
    """The last of ``eyes`` with an answer (not void) among ``records``: the eye whose last answer
    Backspace undoes after it ended (at the closing screen, or before the next eye's first answer)."""
    return next((eye for eye in reversed(eyes) if answered(eye_records(records, eye))), None)


def undo_eye_end(store, mode, session_id: int, records, eye: str | None, log) -> list:
    """Undo the answer that ended eye ``eye`` (its last not void), after its end: marked void in the
    store, durably, as an ordinary undo does it, with the result computed from it withdrawn in the
    same transaction (:meth:`SessionStore.void_trial`), so that a kill at any moment leaves a session
    whose resume continues that eye and no result claiming the void answer. The stored trials now."""
    mine = answered(eye_records(records, eye))
    last = mine[-1]
    withdrawn = store.void_trial(session_id, last.index)
    label = f"{eye} " if eye else ""
    log(
        f"undo: {label}trial {len(mine)} ({last.letter} -> {last.response or '-'}) kept and marked void"
        f"{f'; the {label}result computed from it withdrawn' if withdrawn else ''}; "
        f"the {'eye ' + eye if eye else 'search'} continues, its optimizer rebuilt from {len(mine) - 1} answer{'' if len(mine) == 2 else 's'}"
    )
    return mode.stored_trials(store, session_id)


def undo_options(mode, store, session_id: int, settings: dict, eye: str | None) -> dict:
    """What a letter loop needs to undo an answer: ``void(index)`` marks it void in the store
    (durably), ``rebuild(records)`` rebuilds the eye's optimizer from its records not void; and to
    keep a note no answer followed: ``keep_note(note)``, with the session's last trial; and to record a note as
    it is typed: ``record_note(note, index)``, a ``noted`` event."""
    if mode.kind != "letters":
        return {}
    return {
        "void": lambda index: store.void_trial(session_id, index),
        "rebuild": lambda records: mode.rebuild_optimizer(settings, records, eye),
        "keep_note": lambda note: store.keep_note_after_last_trial(session_id, note),
        "record_note": lambda note, index: store.record_event(session_id, NOTED, {"note": note, "for_trial": index}),
    }
