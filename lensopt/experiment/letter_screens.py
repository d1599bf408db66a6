"""The letter loop's screens (:class:`LetterScreens`, over :class:`lensopt.experiment.loop_screens.Screens`):
its instructions, the clinician's lens prompt (the lens to set; a note, the lens actually set, undo),
the console while a letter is shown, the feedback."""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, TypeVar

from lensopt.experiment.loop_screens import FEEDBACK_COLORS, PASS_RESPONSE, UNDONE, Screens, eye_line
from lensopt.experiment.optotypes import LetterStim
from lensopt.experiment.protocol_sections import show_lens, show_two_parameter_lens
from lensopt.refraction.acuity_text import logmar_text
from lensopt.refraction.lens import PHOROPTER_STEP_D, Lens, off_step_note

T = TypeVar("T")

#: The size of an alphabet that is every letter: the instructions then give its number, not its letters.
FULL_ALPHABET_SIZE = 26


def possible_letters(alphabet: str) -> str:
    """The letters a patient may name, as the instructions give them: ``26 possible letters``, or a
    smaller set named, ``one of the 10 letters C D H K N O R S V Z``. The Sloan task's guess rate
    (1/10) assumes the patient knows the set; "10 possible letters" did not say which."""
    if len(alphabet) >= FULL_ALPHABET_SIZE:
        return f"{len(alphabet)} possible letters"
    return f"one of the {len(alphabet)} letters {' '.join(alphabet)}"


class LetterScreens(Screens):
    """The screens of a letter loop (:class:`lensopt.experiment.loop.TrialLoop`): the instructions,
    the clinician's lens prompt (the lens to set; a note, the lens actually set, undo), the console
    while a letter is shown, the feedback.

    Mixed in before :class:`lensopt.experiment.loop.LoopScreens`; it needs the loop's ``eye``,
    ``letter_stim``, ``shown_logmar``, ``shown_lens_text``, ``feedback``, ``can_undo``,
    ``lens_override``, ``pending_note``, its ``_number``, ``_resume_note`` and ``_note_typed``, and the ``_undo`` and ``_entry`` of
    :class:`~lensopt.experiment.clinician_keys.ClinicianKeys`.
    """

    # What the loop and ClinicianKeys provide (see above): declared for the type checker only, never
    # set or defined here (a method defined here would hide the loop's, which comes later in the MRO).
    eye: str | None
    letter_stim: LetterStim
    shown_logmar: float
    feedback: Any
    can_undo: bool
    records: list  # this eye's stored answers (TrialRecord), those undone marked void
    lens_override: Lens | None
    pending_note: str | None
    shown_lens_text: str

    if TYPE_CHECKING:

        def _number(self, index: int) -> int: ...

        def _resume_note(self, n_trials: int) -> str: ...

        def _undo(self) -> None: ...

        def _note_typed(self, note: str, index: int) -> None: ...

        def _entry(self, prompt: str, example: str, parse: Callable[[str], T]) -> T | None: ...

        @staticmethod
        def _parse_lens_set(text: str) -> Lens: ...

        @staticmethod
        def _parse_note(text: str) -> str: ...

    def _instructions(self, n_trials: int) -> bool | str:
        """The instructions, until the confirm key; False if the person quit. On the console, Backspace
        undoes the last answer when there is one to undo (:meth:`_undo_offered`): this eye's, and
        the instructions are shown again; before its first answer, the eye before's: :data:`UNDONE`
        (the session undoes it and continues that eye)."""
        keys, p = self.protocol.keys, self.protocol
        while self.console is not None:
            offered = [keys.confirm, keys.pause, *([keys.undo] if self._undo_offered() else [])]
            press = self._message(
                f"{getattr(self, 'before', '')}{self._resume_note(n_trials)}{eye_line(self.eye)}"
                "The patient reads each letter aloud; type the letter they name "
                f"({possible_letters(p.letters.alphabet)}).\nPress {keys.confirm.upper()} to start.",
                offered,
                patient_text="Read the letter",
                console={"n_trials": n_trials, "keys_text": self._start_keys_text()},
            )
            if press is None or press.key == keys.confirm:
                return True
            if press.key == keys.undo:
                self._undo()
                if getattr(self, "undo_previous_eye", False):
                    return UNDONE
                continue
            if not self._pause():
                return False
        return self._wait_or_pause(
            f"{self._resume_note(n_trials)}A letter will appear in the middle of the screen.\n"
            f"Press its key ({possible_letters(p.letters.alphabet)}). If you cannot read it, "
            f"press {keys.pass_key.upper()} (it counts as a miss).\n"
            f"{keys.pause.upper()} pauses.\n\nPress {keys.confirm.upper()} to start."
        )

    def _undo_offered(self) -> bool:
        """Whether the console lists the undo key: the loop can undo and holds an answer (not void)
        to undo (none at an eye's first trial), or the eye before ended in this session (its last
        answer is undone then: ``previous_eye``)."""
        records = getattr(self, "records", ())
        if not getattr(self, "can_undo", False):
            return False
        return bool(getattr(self, "previous_eye", None)) or any(not getattr(r, "void", False) for r in records)

    def _start_keys_text(self) -> str:
        """The keys of the instructions screen, as the console lists them: the confirm key starts. The
        letter keys come with the first letter — listed here, "SPACE: cannot read (a miss)" stood
        beside "Press SPACE to start", and SPACE started the session."""
        keys = self.protocol.keys
        return f"Keys: {keys.confirm.upper()}: start   ·   {keys.pause.upper()}: pause / stop{self._undo_keys_text()}"

    def _answer_keys_text(self) -> str:
        """The keys while a letter is shown, as the console lists them."""
        keys = self.protocol.keys
        return (
            f"Keys: the letter named   ·   {keys.pass_key.upper()}: cannot read (a miss)   ·   "
            f"{keys.pause.upper()}: pause / stop{self._undo_keys_text()}"
        )

    def _undo_keys_text(self) -> str:
        """``   ·   BACKSPACE: undo the last answer`` when the undo is offered (:meth:`_undo_offered`), else
        ``""``; ``undo OD's last answer`` when this eye has none and the undo reaches back to the eye
        before (beside this eye's "Last answers: none yet")."""
        if not self._undo_offered():
            return ""
        records = getattr(self, "records", ())
        previous = getattr(self, "previous_eye", None)
        whose = f"{previous}'s" if previous and all(getattr(r, "void", False) for r in records) else "the"
        return f"   ·   {self.protocol.keys.undo.upper()}: undo {whose} last answer"

    def _lens_texts(self, sphere_d: float, cylinder_d: float, axis_deg: float | None = None) -> tuple[str, str]:
        """A lens as the log writes it and as the console shows it, in clinical notation in the
        protocol's cylinder convention; a two-parameter search's (``axis_deg`` None) at the
        protocol's ``[lens] axis_deg``, or as ``S +0.50 D  C -1.00 D`` without one."""
        if axis_deg is None:
            lens = self.protocol.lens
            return show_two_parameter_lens(sphere_d, cylinder_d, lens), show_two_parameter_lens(
                sphere_d, cylinder_d, lens, gap="     "
            )
        text = show_lens(Lens(sphere_d, cylinder_d, axis_deg), self.protocol.lens.cylinder)
        return text, text

    def _lens_prompt(self, index: int, sphere_d: float, cylinder_d: float, axis_deg: float | None = None) -> bool | str:
        """The clinician's prompt to set the lens of trial ``index`` (saved as ``trial-NNN-lens.png``):
        on the console, large, while the patient's window stays blank. False if the person quit,
        :data:`UNDONE` if the clinician undid the last answer instead."""
        lens_text, shown = self._lens_texts(sphere_d, cylinder_d, axis_deg)
        self.log(f"clinician: set lens {lens_text}")
        keys = self.protocol.keys
        confirm = keys.confirm.upper()
        if self.console is None:
            return self._wait_or_pause(
                f"Clinician: set the lens\n\n{shown}\n\nthen press {confirm}",
                frame_name=f"trial-{index:03d}-lens.png",
            )
        full = axis_deg is not None
        offered = [keys.confirm, keys.pause, keys.note, *([keys.undo] if self.can_undo else [])]
        offered += [keys.lens_set] if full else []
        keys_text = (
            f"{confirm}: the lens is set   ·   {keys.note.upper()}: note   ·   {keys.pause.upper()}: pause / stop"
        )
        keys_text += f"\n{keys.lens_set.upper()}: type the lens actually set" if full else ""
        keys_text += self._undo_keys_text()
        frame_name: str | None = f"trial-{index:03d}-lens.png"
        while True:
            press = self._message(
                f"Set this lens {self.protocol.lens.instrument}, then press {confirm}",
                [*offered],
                frame_name=frame_name,
                console={"lens_text": shown, "trial_index": self._number(index), "keys_text": keys_text},
            )
            frame_name = None
            if press is None or press.key == keys.confirm:
                return True
            if press.key == keys.pause and not self._pause():
                return False
            if press.key == keys.undo:
                self._undo()
                return UNDONE
            if press.key == keys.lens_set:
                lens = self._entry("Type the lens actually set", "-1.25 / -0.75 x 170", self._parse_lens_set)
                if lens is not None:
                    self.lens_override = lens
                    set_text = show_lens(lens, self.protocol.lens.cylinder)
                    self.log(f"clinician: lens actually set {set_text} (asked {lens_text})")
                    # accepted as typed (it is what was set), but a power off the steps is likely a typo
                    off_step = off_step_note(lens, self.protocol.lens.step_d or PHOROPTER_STEP_D)
                    if off_step:
                        self.log(f"clinician: note: {off_step}")
                    self.console.update(
                        message=f"Lens actually set: {set_text} (asked {lens_text})"
                        + (f"\nNote: {off_step}" if off_step else "")
                    )
                    return True
            if press.key == keys.note:
                note = self._entry("Type a note for this trial", "patient squinting", self._parse_note)
                if note is not None:
                    self.pending_note = note if self.pending_note is None else f"{self.pending_note}; {note}"
                    self._note_typed(note, index)
                    self.console.update(message=f"Note kept with trial {self._number(index)}: {note}")

    def _console_while_shown(self, index: int) -> dict:
        """The trial, the letter, the lens set (the one the clinician typed with L, if any) and the keys."""
        letter, logmar = self.letter_stim.letter, self.shown_logmar
        shown = {
            "trial_index": self._number(index),
            "heading": f"Letter {letter} shown at {logmar_text(logmar)}: type the letter the patient names",
            "keys_text": self._answer_keys_text(),
        }
        return {**shown, "lens_text": self.shown_lens_text} if self.shown_lens_text else shown

    def _feedback(self, correct: bool, response: str | None, letter: str) -> None:
        seconds = self.protocol.timing.feedback_s
        if not self.protocol.feedback.enabled or seconds <= 0:
            return
        if correct:
            self.feedback.text = "Correct"
        else:
            self.feedback.text = f"{'Passed' if response == PASS_RESPONSE else 'Wrong'}: it was {letter}"
        self.feedback.color = FEEDBACK_COLORS[bool(correct)]
        self.feedback.draw()
        self.win.flip()
        time.sleep(seconds)
