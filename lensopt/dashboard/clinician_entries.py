"""The clinician's entries of a stored letter session, as the printed record lists them: the notes
typed on the console and the lenses set differently from the ones asked, each named by its eye and
the console's trial number (:func:`clinician_entries`), and how a long list is cut short
(:func:`shortened`)."""

from __future__ import annotations

from lensopt.dashboard.series import answer_numbers
from lensopt.refraction.lens import Lens
from lensopt.store import NOTED

#: At most this many of the clinician's notes, and of the lenses set differently from the ones
#: asked, are listed on page 1; the rest are counted (the export holds them all).
CLINICIAN_LIMIT = 4


def shortened(items, limit: int) -> list[str]:
    """``items`` as a list, cut after ``limit - 1`` with ``… and N more; see the export`` when more
    than ``limit``."""
    items = list(items)
    if len(items) <= limit:
        return items
    keep = max(limit - 1, 0)
    return [*items[:keep], f"\u2026 and {len(items) - keep} more; see the export"]


def _one_line(note: str) -> str:
    """A stored note on one line: its line breaks and tabs as spaces (the console's entry cannot type
    them, but a note written into the store by another program printed over the record's next row)."""
    return " ".join(note.split())


def _trial_name(eye: str, number: int) -> str:
    """``OD trial 3`` (the console's words), ``trial 3`` of a session that names no eye."""
    return f"{eye} trial {number}" if eye else f"trial {number}"


def clinician_entries(trials, events=()) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """The clinician's notes and the lenses set differently from the ones asked, of a letter
    session's stored ``trials`` and its ``events`` (a ``noted`` event keeps a note that no stored
    answer holds, a crash having come between), each named by its eye and the console's trial
    number (:func:`~lensopt.dashboard.series.answer_numbers`: the answers kept; an undone answer's
    is the number of the answer that replaced it, and it is said undone)."""
    trials = list(trials)
    numbers = answer_numbers([t.eye or "" for t in trials], [t.void for t in trials])
    by_index = {t.index: (t, int(n)) for t, n in zip(trials, numbers, strict=True)}
    notes: list[str] = []
    changes: list[str] = []
    held: set[str] = set()
    for trial, number in by_index.values():
        name = _trial_name(trial.eye or "", number) + (" (answer undone)" if trial.void else "")
        extra = trial.extra if isinstance(trial.extra, dict) else {}
        for key, when in (("note", ""), ("note_after", " (after its answer)")):
            note = extra.get(key)
            if isinstance(note, str) and note.strip():
                notes.append(f"{name}{when}: {_one_line(note)}")
                held.update(part.strip() for part in (note.split("; ") if key == "note_after" else [note]))
        asked = extra.get("asked_lens")
        if isinstance(asked, str) and asked:
            lens = Lens(trial.sphere_d, trial.cylinder_d, trial.axis_deg if trial.axis_deg is not None else 180.0)
            changes.append(f"{name}: asked {asked}, set {lens.format()}")
    for event in events:
        note = event.detail.get("note") if event.event == NOTED else None
        if not isinstance(note, str) or not note.strip() or note.strip() in held:
            continue
        before = event.detail.get("for_trial")
        found = by_index.get(before) if isinstance(before, int) else None
        if found is not None:
            notes.append(f"{_trial_name(found[0].eye or '', found[1])}: {_one_line(note)}")
        else:  # typed before an answer never stored
            last = trials[-1] if trials else None
            eye = (last.eye or "") if last is not None else ""
            kept = sum(1 for t in trials if not t.void and (t.eye or "") == eye)
            notes.append(f"{_trial_name(eye, kept + 1)} (not answered): {_one_line(note)}")
    return tuple(notes), tuple(changes)
