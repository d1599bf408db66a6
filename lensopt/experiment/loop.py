"""The trial loop: instructions, lens prompt, fixation, letter, answer, record, feedback, breaks.

:class:`LoopScreens` holds what every loop shares: the loop itself (ask, show, record, tell, stop),
over the screens of :class:`lensopt.experiment.loop_screens.Screens` (messages, the pause, break and closing
screens, showing a stimulus and saving its frame, waiting for the answer with Escape pausing);
:class:`TrialLoop` runs letter trials (their screens: :class:`lensopt.experiment.letter_screens.LetterScreens`),
:class:`lensopt.experiment.duel_loop.DuelLoop` duels and
:class:`lensopt.experiment.ranking_loop.RankingLoop` rankings (both on a line of letters,
:mod:`lensopt.experiment.line_loop`).

One letter trial (the optimizer's ask/tell, METHOD.md §4, driven from outside as in trieste's ask/tell
loop):

1. ``trial = optimizer.ask()`` — the lens to set and the letter size (logMAR);
2. with a clinician prompt (clinical protocol), "set lens S … C …, press space" when the lens changes
   (a full-prescription trial, with an axis, in clinical notation: "-1.25 / -0.75 x 170");
3. optional fixation cross, then the letter, ``calibration.letter_height_px(trial.letter_logmar)`` tall;
4. forced choice with the letter keys; the pass key counts as wrong; Escape opens the pause screen
   (resume, or quit safely) and the same letter is shown again after resuming;
5. the answer goes to ``record`` (the session store: durable when it returns) **before**
   ``optimizer.tell`` and before the next letter is drawn;
6. optional feedback; then, when the optimizer has a stopping rule (``[stop]``), the session ends
   here if ``optimizer.should_stop()`` (status finished, "stopped at N trials, confidence C");
   else a break every N trials and the inter-trial interval, during which the next trial is
   decided (so the interval is as long as the protocol says, not that plus the decision).
"""

from __future__ import annotations

import dataclasses
import math
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from lensopt.errors import StoreError
from lensopt.experiment.clinician_keys import ClinicianKeys
from lensopt.experiment.keyboard import letter_key
from lensopt.experiment.letter_screens import LetterScreens
from lensopt.experiment.loop_screens import (
    PASS_RESPONSE,
    UNDONE,
    Screens,
    instruction_text_height_px,
    is_mirrored,
    text_wrap_px,
)
from lensopt.experiment.optotypes import LetterStim
from lensopt.modes.base import answered
from lensopt.refraction.acuity_text import logmar_text
from lensopt.refraction.lens import Lens, diopter_text
from lensopt.stopping import confidence_text, stop_threshold
from lensopt.store import TrialRecord


@dataclass(frozen=True)
class LoopResult:
    """How the loop ended: ``"finished"`` (all trials, or stopped by the optimizer's stopping rule:
    ``stopped_at`` is then the last trial and ``confidence`` the optimizer's confidence there),
    ``"quit"`` (from the pause screen) or :data:`UNDO_PREVIOUS_EYE` (Backspace before this eye's
    first answer: the session undoes the last answer of the eye before and continues that eye)."""

    status: str
    n_answered: int
    last_index: int
    stopped_at: int | None = None
    confidence: float | None = None


#: How a letter loop ends when the clinician pressed Backspace before its eye's first answer (at its
#: instructions, its first lens prompt or letter) and the eye before ended in this session: the
#: session voids that eye's last answer, withdraws its result and continues it (OD after OS started).
UNDO_PREVIOUS_EYE = "undo previous eye"

#: After a trial's line in the log, when it was the stopping rule's check through the reported lens
#: (``[stop] check_letters``; stored as ``extra["check"]``).
CHECK_LOG = "  (checking the reported lens)"


def stop_message(n_trials: int, confidence: float, target: float | None = None) -> str:
    """``"stopped at 34 trials, confidence 0.96"``: what the log and the done screen say (the
    confidence to the decimals of the rule's threshold ``target``)."""
    return f"stopped at {n_trials} trials, confidence {confidence_text(confidence, target)}"


class LoopScreens(Screens):
    """Runs trials ``first_index..n_trials`` in ``win`` (``units="pix"``); subclasses say what one
    trial is (:meth:`_trial`) and what the instructions say (:meth:`_instructions`).

    ``record(record)`` must make the answer durable before it returns. ``responses`` is a
    source from :mod:`lensopt.experiment.keyboard`. ``frames_dir`` saves each trial's stimulus frame
    as ``trial-NNN.png`` (window size, exactly the back buffer that the next flip shows).
    ``records`` are this search's stored trials (its eye's, void ones included): a resumed search
    starts the console's last answers (and confidence so far) from them, and a new eye starts them
    afresh, never with another eye's.
    """

    #: Set by the letter loop's undo when Backspace came before this eye's first answer and the eye
    #: before is to be undone (:data:`UNDO_PREVIOUS_EYE`); never by the other loops.
    undo_previous_eye = False

    def __init__(
        self,
        win,
        protocol,
        calibration,
        optimizer,
        responses,
        record: Callable,
        *,
        seed: int = 0,
        first_index: int = 1,
        frames_dir: str | Path | None = None,
        log: Callable[[str], None] | None = print,
        console=None,
        final: bool = True,
        eye: str | None = None,
        index_offset: int = 0,
        records=(),
        before: str = "",
    ):
        self.calibration = calibration
        self.optimizer, self.record = optimizer, record
        self.seed, self.first_index = int(seed), int(first_index)
        super().__init__(win, protocol, responses, frames_dir=frames_dir, log=log, console=console, final=final)
        self.n_answered = 0
        self._ahead: tuple[Any, int, Any] | None = None  # (optimizer, its n_trials, query): decided in the interval
        self.confidences: list[tuple[int, float]] = []  # (answers told, confidence) once the stopping rule may act
        self.eye = eye  # every record of this loop is for this eye (None: the session names none)
        self.before = before  # the console's first lines at its start: the eye searched before, its result
        self.records = list(records)
        # stored rows that do not count towards this search's trial numbers (index - n_void is a
        # trial's number): the first eye's, in a session of both, and the answers undone (kept, void)
        self.n_void = int(index_offset) + sum(bool(getattr(r, "void", False)) for r in self.records)
        confidence = self._confidence_so_far()  # a resumed search's, where its trend goes on
        if self.console is not None:  # this eye's console: its own answers and confidence, no other eye's
            self.console.state = dataclasses.replace(  # shown by the first screen (the instructions)
                self.console.state,
                eye=eye,
                trial_index=0,
                answers=self._stored_answers(),
                confidence=confidence,
                confidence_target=stop_threshold(getattr(self.optimizer, "stop", None)),
                message="",
            )

    def _number(self, index: int) -> int:
        """The answer number of stored trial ``index`` (void answers do not count towards the budget)."""
        return index - self.n_void

    def _resume_note(self, n_trials: int) -> str:
        number = self._number(self.first_index)
        return f"Resuming at trial {number} of {n_trials}.\n\n" if number > 1 else ""

    def _instructions(self, n_trials: int) -> bool | str:
        """The instructions; False if the person quit, :data:`UNDONE` if the eye before is to be undone."""
        raise NotImplementedError

    def _trial_label(self, index: int, n_trials: int) -> str:
        """``OS trial   3/80``: how the log counts stored trial ``index``, by its eye's answer number
        (as the console does: a session of both eyes counts each eye from 1, an undone answer does not count)."""
        eye = f"{self.eye} " if self.eye else ""
        return f"{eye}trial {self._number(index):3d}/{n_trials}"

    # ------------------------------------------------------------------ the console's answers
    def _answer_text(self, record) -> str:
        """How the console lists the answer of ``record`` (after its number)."""
        raise NotImplementedError

    def _stored_answers(self) -> tuple[str, ...]:
        """The console's last answers from this search's stored records (those that count), numbered from 1."""
        return tuple(
            f"{number}: {self._answer_text(record)}" for number, record in enumerate(answered(self.records), start=1)
        )

    def _confidence_so_far(self) -> float | None:
        """The model's confidence once its stopping rule may act (``[stop] min_trials``), kept for the
        end point's trend; None before, or for a search without a stopping rule (duels, rankings)."""
        stop = getattr(self.optimizer, "stop", None)
        if stop is None:
            return None
        n_told = self.optimizer.n_trials
        if not n_told or n_told < stop.min_trials:
            return None
        confidence = float(self.optimizer.confidence())  # the full confidence (~10 ms), between trials
        self.confidences.append((n_told, confidence))
        return confidence

    def _note_answer(self, index: int, record, **changes) -> None:
        """Add ``record`` (stored as trial ``index``, and told) to the console's last answers, with
        ``changes`` of its other fields (no console: nothing to do)."""
        if self.console is not None:
            answer = f"{self._number(index)}: {self._answer_text(record)}"
            previous, keys_text = getattr(self, "previous_eye", None), self.console.state.keys_text
            if previous and f"undo {previous}'s last answer" in keys_text:  # this eye has one now
                changes.setdefault("keys_text", keys_text.replace(f"undo {previous}'s", "undo the"))
            self.console.update(answers=(*self.console.state.answers, answer), message="", **changes)

    # ------------------------------------------------------------------ the loop
    def _trial(self, index: int, n_trials: int) -> bool | str:
        """Ask, show, record the answer (durably), tell; False if the person quit before answering,
        :data:`UNDONE` if the clinician undid the last answer instead (nothing stored at ``index``)."""
        raise NotImplementedError

    def _inter_trial_interval(self, seconds: float, decide: bool) -> None:
        """A blank screen for ``seconds``, the next query decided (``decide``) while it shows: the
        next trial comes ``seconds`` after the blank, not ``seconds`` plus the decision (a decision
        longer than the interval delays it by the difference). The answer is stored and told before."""
        self.win.flip()
        blank_at = time.perf_counter()
        if decide:
            self._ahead = (self.optimizer, self.optimizer.n_trials, self.optimizer.ask())
        time.sleep(max(0.0, seconds - (time.perf_counter() - blank_at)))

    def _ask(self):
        """The optimizer's next query: the one decided in the inter-trial interval
        (:meth:`_inter_trial_interval`) when this optimizer decided it and has been told nothing since
        (an undo rebuilds the optimizer), else asked now. A query is a function of the answers
        told, so it is the same either way."""
        ahead, self._ahead = self._ahead, None
        if ahead is not None and ahead[0] is self.optimizer and ahead[1] == self.optimizer.n_trials:
            return ahead[2]
        return self.optimizer.ask()

    def _stop_rule_says_stop(self) -> bool:
        """Whether the optimizer's stopping rule ends the session after the answer just told (asked
        after the answer is stored; never for an optimizer without a rule, e.g. duels)."""
        if getattr(self.optimizer, "stop", None) is None:
            return False
        return bool(self.optimizer.should_stop())

    def _stopped(self, index: int) -> LoopResult:
        """End the session after trial ``index`` by the stopping rule: log and show why."""
        confidence = float(self.optimizer.confidence())
        number = self._number(index)
        message = stop_message(number, confidence, stop_threshold(self.optimizer.stop))
        self.log(message)
        self._done(f"Session finished: {message}")
        return LoopResult("finished", self.n_answered, index, stopped_at=number, confidence=confidence)

    def run(self, n_trials: int) -> LoopResult:
        """Run until trial ``n_trials`` is answered, the optimizer's stopping rule says stop (checked
        after each answer is stored), or the person quits from the pause screen."""
        timing, protocol = self.protocol.timing, self.protocol
        index = self.first_index
        started = self._instructions(n_trials) if self._number(index) <= n_trials else True
        if started == UNDONE:  # Backspace at the instructions of an eye without an answer: the eye before's
            return LoopResult(UNDO_PREVIOUS_EYE, self.n_answered, index - 1)
        if not started:
            return LoopResult("quit", self.n_answered, index - 1)
        while self._number(index) <= n_trials:
            outcome = self._trial(index, n_trials)
            if outcome == UNDONE and self.undo_previous_eye:  # this eye had no answer: the eye before's
                return LoopResult(UNDO_PREVIOUS_EYE, self.n_answered, index - 1)
            if outcome == UNDONE:  # the last answer is void: this trial is asked again, by the rebuilt optimizer
                continue
            if not outcome:
                return LoopResult("quit", self.n_answered, index - 1)
            self.n_answered += 1
            number = self._number(index)
            if number < n_trials and self._stop_rule_says_stop():
                return self._stopped(index)
            every = protocol.breaks.every_trials
            on_break = every and number % every == 0 and number < n_trials
            if on_break and not self._break(number, n_trials):
                return LoopResult("quit", self.n_answered, index)
            if timing.iti_s > 0:
                self._inter_trial_interval(timing.iti_s, decide=number < n_trials)
            index += 1
        self._done("" if self.console is None else f"Session finished: all {n_trials} {self.unit} answered")
        return LoopResult("finished", self.n_answered, index - 1)


class TrialLoop(ClinicianKeys, LetterScreens, LoopScreens):
    """Letter trials: one letter at the size the optimizer asks for, named with the letter keys.

    ``previous_letter`` (the last letter shown before a resume) is not shown again first.
    """

    unit = "letters"

    def __init__(
        self,
        win,
        protocol,
        calibration,
        optimizer,
        responses,
        record: Callable,
        *,
        previous_letter: str | None = None,
        glyphs=None,
        rebuild: Callable | None = None,
        void: Callable[[int], None] | None = None,
        keep_note: Callable[[str], int] | None = None,
        record_note: Callable[[str, int], None] | None = None,
        previous_eye: str | None = None,
        **options,
    ):
        from psychopy import visual

        super().__init__(win, protocol, calibration, optimizer, responses, record, **options)
        self._keep_note, self._record_note = keep_note, record_note
        self.previous_letter, self.previous_lens = previous_letter, None
        self.letter_stim = LetterStim(win, glyphs, color="black")
        self.feedback = visual.TextStim(
            win,
            units="pix",
            height=instruction_text_height_px(win) * 1.5,
            wrapWidth=text_wrap_px(win),  # PsychoPy's default broke "Wrong: it | was J" at this height
            flipHoriz=is_mirrored(win),
            autoLog=False,
        )
        keys = protocol.keys
        self.letter_keys = {letter_key(c): c for c in protocol.letters.alphabet}
        self._rebuild, self._void = rebuild, void
        self.can_undo = rebuild is not None and void is not None
        # the eye ended before this one in this session, whose last answer Backspace undoes while this
        # eye has none (the session does it: :data:`UNDO_PREVIOUS_EYE`); None for the first eye
        self.previous_eye = previous_eye if self.can_undo else None
        self.response_keys = [*self.letter_keys, keys.pass_key, keys.pause, *([keys.undo] if self.can_undo else [])]
        self.lens_override: Lens | None = None  # the lens the clinician typed for the coming trial
        self.pending_note: str | None = None  # a note typed at the lens prompt, stored with the next answer
        self.shown_lens_text = ""  # the lens set for the letter shown (the console shows it meanwhile)

    def run(self, n_trials: int) -> LoopResult:
        """The loop (:meth:`LoopScreens.run`); a note typed after the last answer, which no answer
        followed (the session quit, paused, stopped or ended: :meth:`_keep_pending_note`), is kept."""
        try:
            return super().run(n_trials)
        finally:
            self._keep_pending_note()

    def _note_typed(self, note: str, index: int) -> None:
        """A note typed at the lens prompt of trial ``index``: logged, and recorded at once (``record_note``:
        the session's ``noted`` event), so that a crash before the next answer, which stores it with
        that answer, loses nothing."""
        self.log(f"clinician: note {note!r}")
        if self._record_note is None:
            return
        try:
            self._record_note(note, index)
        except StoreError as exc:
            self.log(
                f"clinician: note {note!r} not recorded yet ({str(exc).splitlines()[0]}); kept for the next answer"
            )

    def _keep_pending_note(self) -> None:
        """A note is stored with the next answer; with none to come, with the last one (``keep_note``:
        its trial's ``note_after``), or said lost on the log when the store cannot keep it."""
        note, self.pending_note = self.pending_note, None
        if note is None:
            return
        if self._keep_note is None:
            self.log(f"clinician: note {note!r} not stored: no answer followed it")
            return
        try:
            index = self._keep_note(note)
        except StoreError as exc:
            self.log(f"clinician: note {note!r} not stored ({str(exc).splitlines()[0]})")
            return
        eye = f"{self.eye} " if self.eye else ""  # numbered as the console numbers it: answers kept
        self.log(f"clinician: note {note!r} kept with {eye}trial {self._number(index)}, the last answered")

    def _answer_text(self, record) -> str:
        """``O>K x``: the letter shown, the letter named (``-`` for none), right (ok) or wrong (x);
        ``O>O ok check`` for a letter of the stopping rule's check through the reported lens."""
        check = " check" if record.extra.get("check") else ""
        return f"{record.letter}>{record.response or '-'} {'ok' if record.correct else 'x'}{check}"

    def _after_answer(self, index: int, record: TrialRecord) -> None:
        """The confidence so far (kept for the end point's trend) and the console's list of answers,
        after the answer is stored and told."""
        self._note_answer(index, record, confidence=self._confidence_so_far())

    def letter_for(self, index: int, previous: str | None) -> str:
        """Trial ``index``'s letter, drawn from ``(seed, index)``; never the previous letter again."""
        alphabet = [c for c in self.protocol.letters.alphabet if c != previous]
        rng = np.random.default_rng(np.random.SeedSequence([self.seed, index, 3]))
        return alphabet[int(rng.integers(len(alphabet)))]

    def _trial(self, index: int, n_trials: int) -> bool | str:
        keys, protocol = self.protocol.keys, self.protocol
        check_due = getattr(self.optimizer, "check_due", None)
        checking = bool(check_due()) if check_due is not None else False  # its stopping rule's check
        trial = self._ask()
        decision_ms = self.optimizer.last_decision_ms
        lens = (trial.sphere_d, trial.cylinder_d, trial.axis_deg)
        if protocol.lens.prompt and lens != self.previous_lens:
            prompted = self._lens_prompt(index, *lens)
            if prompted == UNDONE or not prompted:
                self.lens_override = None
                return prompted
        asked, override = trial, self.lens_override
        self.lens_override = None
        if override is not None:  # the optimizer is told, and the store keeps, the lens actually set
            trial = dataclasses.replace(
                trial, sphere_d=override.sphere_d, cylinder_d=override.cylinder_d, axis_deg=override.axis_deg
            )
        self.previous_lens = (trial.sphere_d, trial.cylinder_d, trial.axis_deg)
        self.shown_lens_text = self._lens_texts(*self.previous_lens)[1]  # the lens actually set, if typed
        letter = self.letter_for(index, self.previous_letter)
        height_px = self.calibration.letter_height_px(trial.letter_logmar)
        self.letter_stim.set_letter(letter, height_px)
        self.shown_logmar = trial.letter_logmar
        shown = self._show_and_answer(
            index,
            self.letter_stim.draw,
            lambda timeout_s: self.responses.letter_response(trial, letter, self.response_keys, timeout_s, index=index),
        )
        if shown is None:
            return False
        press, presented_at = shown.press, shown.presented_at
        answered_at = time.time()
        if press is not None and self.can_undo and press.key == keys.undo:
            self._undo()
            return UNDONE
        if press is None:
            response, rt_s = None, None
        elif press.key == keys.pass_key:
            response, rt_s = PASS_RESPONSE, press.rt_s
        else:
            response, rt_s = self.letter_keys[press.key], press.rt_s
        correct = response == letter
        extra: dict[str, float | str | bool] = {"letter_height_px": float(height_px)}
        extra.update(shown.pause_extra())
        if math.isfinite(decision_ms):
            extra["decision_ms"] = float(decision_ms)
        if override is not None:
            extra["asked_lens"] = Lens(asked.sphere_d, asked.cylinder_d, asked.axis_deg).format()
            extra["lens_set_by_clinician"] = True
        if self.pending_note is not None:  # with this answer now: stored with it, or rescued with it
            extra["note"], self.pending_note = self.pending_note, None
        if checking:  # asked at the reported lens before a stop ([stop] check_letters)
            extra["check"] = True
        record = TrialRecord(
            index=index,
            sphere_d=trial.sphere_d,
            cylinder_d=trial.cylinder_d,
            letter_logmar=trial.letter_logmar,
            letter=letter,
            response=response,
            correct=correct,
            rt_s=rt_s,
            presented_at=presented_at,
            answered_at=max(answered_at, presented_at),
            extra=extra,
            axis_deg=trial.axis_deg,
            eye=self.eye,
        )
        self.record(record)
        self.records.append(record)
        self.optimizer.tell(trial, correct)
        # the trial's lens with its axis: the full prescription's own, or the phoropter's ([lens] axis_deg)
        axis_deg = (self.protocol.lens.axis_deg or None) if trial.axis_deg is None else trial.axis_deg
        sphere_d, cylinder_d = trial.sphere_d, trial.cylinder_d
        if axis_deg is not None:  # as the clinician set it: in the protocol's cylinder convention
            set_lens = Lens(sphere_d, cylinder_d, axis_deg)
            plus = self.protocol.lens.cylinder == "plus"
            as_set = set_lens.plus_cylinder() if plus else set_lens.minus_cylinder()
            sphere_d, cylinder_d, axis_deg = as_set.sphere_d, as_set.cylinder_d, as_set.axis_deg
        axis = "" if axis_deg is None or cylinder_d == 0 else f" x {axis_deg:03.0f}"  # no cylinder: no axis (DS)
        self.log(
            f"{self._trial_label(index, n_trials)}  S {diopter_text(sphere_d)} C {diopter_text(cylinder_d)}{axis}  "
            f"{letter} at {logmar_text(trial.letter_logmar)} ({height_px:.1f} px) -> "
            f"{response or '-'} {'correct' if correct else 'wrong'}" + (CHECK_LOG if checking else "")
        )
        self.previous_letter = letter
        self._after_answer(index, record)
        self._feedback(correct, response, letter)
        return True
