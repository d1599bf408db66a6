"""The clinician's keys of a letter session, on the console: undo, the lens actually set, a note.

:class:`ClinicianKeys` is mixed into :class:`lensopt.experiment.loop.TrialLoop`; it needs the loop's
``console``, ``responses``, ``records``, ``optimizer``, ``log`` and the ``rebuild(records)`` and
``void(index)`` callables the session gives it.

* undo (``[keys] undo``, Backspace): the last answer that is not void is marked void in the store
  (durably: ``void(index)``), the optimizer is rebuilt from the others (``rebuild(records)``), the
  lens is asked for again; before the eye's first answer, the last answer of the eye before
  (``previous_eye``, OD before OS): the loop ends (``undo_previous_eye``) and the session undoes it
  and continues that eye;
* an entry typed on the console (:meth:`ClinicianKeys._entry`): the lens actually set
  (:meth:`ClinicianKeys._parse_lens_set`, clinical notation) or a note; Enter accepts, Escape
  cancels, Backspace deletes; a text that is refused is said on the console and can be corrected.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from typing import Any, TypeVar

from lensopt.refraction.lens import Lens, parse_lens
from lensopt.store import TrialRecord

T = TypeVar("T")

ENTRY_CHARACTERS = {
    **{str(d): str(d) for d in range(10)},
    **{f"num_{d}": str(d) for d in range(10)},
    **{c: c for c in "abcdefghijklmnopqrstuvwxyz"},
    "minus": "-",
    "num_subtract": "-",
    "plus": "+",
    "equal": "+",
    "num_add": "+",
    "period": ".",
    "num_decimal": ".",
    "slash": "/",
    "num_divide": "/",
    "comma": ",",
    "space": " ",
}
"""PsychoPy key name -> the character it types in a console entry (the lens actually set, a note);
``equal`` types ``+`` so a plus power needs no shift key."""

ENTRY_ACCEPT, ENTRY_CANCEL, ENTRY_DELETE = "return", "escape", "backspace"
"""Keys that end a console entry (accept, cancel) or delete its last character."""

MAX_LENS_OVERRIDE_D = 20.0
"""Largest sphere or cylinder (D, in size) the clinician may enter as the lens actually set."""


class ClinicianKeys:
    """Undo and console entries for a letter loop (see the module docstring)."""

    # What the loop it is mixed into provides (:class:`lensopt.experiment.loop.TrialLoop`): declared
    # for the type checker only, never set here.
    console: Any
    responses: Any
    optimizer: Any
    log: Callable[[str], None]
    records: list[TrialRecord]
    eye: str | None
    previous_eye: str | None
    undo_previous_eye: bool
    n_void: int
    previous_lens: tuple[float, float, float | None] | None
    _rebuild: Callable[[list[TrialRecord]], Any] | None
    _void: Callable[[int], None] | None

    @staticmethod
    def _parse_lens_set(text: str) -> Lens:
        """The lens the clinician typed, in minus cylinder; a ValueError (one line) otherwise."""
        lens = parse_lens(text).minus_cylinder()
        if max(abs(lens.sphere_d), abs(lens.cylinder_d)) > MAX_LENS_OVERRIDE_D:
            raise ValueError(f"powers above {MAX_LENS_OVERRIDE_D:g} D are not a phoropter lens")
        if not lens.cylinder_d:
            lens = Lens(lens.sphere_d, 0.0, 180.0)
        return lens

    @staticmethod
    def _parse_note(text: str) -> str:
        if not text.strip():
            raise ValueError("the note is empty")
        return text.strip()

    def _entry(self, prompt: str, example: str, parse: Callable[[str], T]) -> T | None:
        """Text typed on the console (the clinician's keyboard) until Enter: ``parse(text)``, or None if
        cancelled with Escape. A text ``parse`` refuses is said on the console and can be corrected."""
        human = getattr(self.responses, "human", self.responses)
        wait = getattr(human, "wait_keys", None)
        accepted = [*ENTRY_CHARACTERS, ENTRY_ACCEPT, ENTRY_CANCEL, ENTRY_DELETE]
        typed, problem = "", ""
        saved = self.console.state
        while True:
            self.console.update(
                heading=f"{prompt} (e.g. {example})",
                lens_text=typed + "_",
                keys_text="ENTER: accept   ·   ESCAPE: cancel   ·   BACKSPACE: delete",
                message=problem,
            )
            press = wait(accepted, None) if wait is not None else human.wait_for(accepted)
            if press is None or press.key == ENTRY_CANCEL:
                self.console.state = saved
                return None
            if press.key == ENTRY_DELETE:
                typed = typed[:-1]
            elif press.key == ENTRY_ACCEPT:
                try:
                    value = parse(typed)
                except (ValueError, TypeError) as exc:
                    problem = f"not accepted: {str(exc).splitlines()[0]}; correct it or press ESCAPE"
                    self.log(f"clinician: entry {typed!r} {problem}")
                    continue
                self.console.state = saved
                return value
            else:
                typed += ENTRY_CHARACTERS[press.key]
            problem = ""

    def _undo(self) -> None:
        """Void the last answer that is not void (kept in the store, marked void, durably), and
        rebuild the optimizer from the others; the lens is asked for again. Before this eye's first
        answer, the eye before's last answer: :attr:`undo_previous_eye`, for the session to undo."""
        last = next((r for r in reversed(self.records) if not getattr(r, "void", False)), None)
        if last is None and self.previous_eye:
            self.undo_previous_eye = True
            return
        if last is None:
            self.log("undo: no answer to undo")
            if self.console is not None:
                self.console.update(message="Nothing to undo")
            return
        # undo is offered only when the loop was given both (its ``can_undo``)
        assert self._void is not None and self._rebuild is not None, "undo needs the loop's void and rebuild"
        number = sum(not getattr(r, "void", False) for r in self.records)  # its answer number, as the log counted it
        self._void(last.index)
        self.records[self.records.index(last)] = dataclasses.replace(last, void=True)
        self.n_void += 1
        self.optimizer = self._rebuild(self.records)
        self.previous_lens = None
        eye = f"{self.eye} " if self.eye else ""
        self.log(
            f"undo: {eye}trial {number} ({last.letter} -> {last.response or '-'}) kept and marked void; "
            f"the optimizer is rebuilt from {self.optimizer.n_trials} answer{'' if self.optimizer.n_trials == 1 else 's'}"
        )
        if self.console is not None:
            answers = self.console.state.answers
            self.console.update(
                answers=answers[:-1] if answers else answers,
                message=f"Answer {last.letter} -> {last.response or '-'} undone (kept in the record, marked void)",
            )
