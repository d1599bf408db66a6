"""The trial loop: instructions, lens prompt, fixation, letter, answer, record, feedback, breaks.

:class:`LoopScreens` holds what every loop shares (instruction, pause and break screens, showing a
stimulus and saving its frame, waiting for the answer with Escape pausing, the loop itself);
:class:`TrialLoop` runs letter trials, :class:`lensopt.experiment.duel_loop.DuelLoop` duels and
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
   else a break every N trials and the inter-trial interval.
"""

from __future__ import annotations

import dataclasses
import math
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from lensopt.experiment.clinician_keys import ClinicianKeys
from lensopt.experiment.keyboard import KeyPress, letter_key
from lensopt.experiment.optotypes import LetterStim
from lensopt.experiment.protocol_sections import show_lens
from lensopt.refraction.lens import Lens
from lensopt.store import TrialRecord

MIRROR_VIEW_SCALE = (-1.0, 1.0)
"""The patient window's ``viewScale`` in mirror mode (``[display] mirror``): x flipped. PsychoPy
flips shapes (the letters) by it but not text, so :func:`is_mirrored` text stims set ``flipHoriz``
(they are centred, so flipping each about its centre flips the screen)."""


def is_mirrored(win) -> bool:
    """Whether ``win`` is flipped left–right (opened with :data:`MIRROR_VIEW_SCALE`)."""
    scale = getattr(win, "viewScale", None)
    return scale is not None and float(scale[0]) < 0


TEXT_HEIGHT_PX = 28
"""Height of instruction text (px); instructions are not optotypes, so font metrics are fine here."""

PATIENT_TEXT_HEIGHT_FRACTION = 0.07
"""Height of the patient's words ("Read the letter", "Done. Thank you!") when a clinician's console
holds everything else, as a fraction of the window's height (76 px on a 1080 px screen)."""

FEEDBACK_COLORS = {True: (-1.0, 0.4, -1.0), False: (0.8, -1.0, -1.0)}
"""Feedback text colour (PsychoPy rgb, -1..1): green for correct, red for wrong or passed."""

FIXATION_SIZE_PX = 24
"""Width of the fixation cross (px)."""

PASS_RESPONSE = "pass"
"""What the store records when the pass key was pressed."""

UNDONE = "undone"
"""What a trial returns when the clinician undid the last answer instead (the trial is asked again)."""

EYE_INSTRUCTIONS = {"OD": "the right eye, the left one occluded", "OS": "the left eye, the right one occluded"}
"""What the console says at the start of each eye's search."""


@dataclass(frozen=True)
class LoopResult:
    """How the loop ended: ``"finished"`` (all trials, or stopped by the optimizer's stopping rule:
    ``stopped_at`` is then the last trial and ``confidence`` the optimizer's confidence there) or
    ``"quit"`` (from the pause screen)."""

    status: str
    n_answered: int
    last_index: int
    stopped_at: int | None = None
    confidence: float | None = None


def stop_message(n_trials: int, confidence: float) -> str:
    """``"stopped at 34 trials, confidence 0.96"``: what the log and the done screen say."""
    return f"stopped at {n_trials} trials, confidence {confidence:.2f}"


class LoopScreens:
    """Runs trials ``first_index..n_trials`` in ``win`` (``units="pix"``); subclasses say what one
    trial is (:meth:`_trial`) and what the instructions say (:meth:`_instructions`).

    ``record(record)`` must make the answer durable before it returns. ``responses`` is a
    source from :mod:`lensopt.experiment.keyboard`. ``frames_dir`` saves each trial's stimulus frame
    as ``trial-NNN.png`` (window size, exactly the back buffer that the next flip shows).
    """

    #: What the break screen counts ("12 of 40 letters done").
    unit = "trials"

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
    ):
        from psychopy import visual

        self.console = console
        self.final = final  # the session's last search (not OD before OS): the patient is done after it
        self.win, self.protocol, self.calibration = win, protocol, calibration
        self.optimizer, self.responses, self.record = optimizer, responses, record
        self.seed, self.first_index = int(seed), int(first_index)
        self.frames_dir = Path(frames_dir) if frames_dir is not None else None
        if self.frames_dir is not None:
            self.frames_dir.mkdir(parents=True, exist_ok=True)
        self.log = log or (lambda message: None)
        wrap_px = 0.85 * win.size[0]
        mirrored = is_mirrored(win)
        self.text = visual.TextStim(
            win,
            units="pix",
            height=TEXT_HEIGHT_PX,
            color="black",
            wrapWidth=wrap_px,
            flipHoriz=mirrored,
            autoLog=False,
        )
        self.patient_text = visual.TextStim(
            win,
            units="pix",
            height=max(TEXT_HEIGHT_PX, PATIENT_TEXT_HEIGHT_FRACTION * win.size[1]),
            color="black",
            wrapWidth=wrap_px,
            flipHoriz=mirrored,
            autoLog=False,
        )
        self.fixation = visual.ShapeStim(
            win, units="pix", vertices="cross", size=FIXATION_SIZE_PX, fillColor="black", lineColor=None, autoLog=False
        )
        self.n_answered = 0
        self.confidences: list[tuple[int, float]] = []  # (answers told, confidence) once the stopping rule may act
        self.n_void = 0  # answers undone (kept, void) before the trial being run: index - n_void is its number

    def _number(self, index: int) -> int:
        """The answer number of stored trial ``index`` (void answers do not count towards the budget)."""
        return index - self.n_void

    # ------------------------------------------------------------------ screens
    def _patient_says(self, text: str) -> None:
        """Draw ``text`` on the patient's window in the patient's large font (no flip). Only words
        meant for the patient come here: with a console, nothing else is written on this window."""
        if text:
            self.patient_text.text = text
            self.patient_text.draw()

    def _message(
        self,
        text: str,
        keys,
        source=None,
        frame_name: str | None = None,
        patient_text: str = "",
        console: dict | None = None,
    ) -> KeyPress | None:
        """Show ``text`` and wait for one of ``keys``. With a clinician's console, ``text`` (and the
        ``console`` fields of :class:`~lensopt.experiment.console.ConsoleState`) go to the console
        and the patient's window shows only ``patient_text``; without one, ``text`` is on the window."""
        if self.console is None:
            self.text.text = text
            self.text.draw()
            if frame_name is not None:
                self._save_frame(frame_name)
            self.win.flip()
        else:
            self._patient_says(patient_text)
            self.win.flip()
            self.console.update(heading=text, **(console or {}))
            if frame_name is not None and self.frames_dir is not None:
                self.console.save_frame(self.frames_dir / frame_name)
        source = source or self.responses
        source.start_timer()
        return source.wait_for(keys)

    def _pause(self) -> bool:
        """The pause screen; True to resume, False to quit. Whoever is at the keyboard decides."""
        keys = self.protocol.keys
        human = getattr(self.responses, "human", self.responses)
        self.log("paused")
        press = self._message(
            f"Paused. Every answer so far is saved.\n\n{keys.confirm.upper()}: resume      "
            f"{keys.quit.upper()} or {keys.pause.upper()}: quit (resume later with --resume)",
            [keys.confirm, keys.quit, keys.pause],
            source=human,
            patient_text="Please wait",
        )
        return press is not None and press.key == keys.confirm

    def _wait_or_pause(
        self, text: str, frame_name: str | None = None, patient_text: str = "", console: dict | None = None
    ) -> bool:
        """Show ``text`` until the confirm key; Escape pauses. False if the person quit. With
        ``frame_name`` and ``frames_dir``, the screen (the console's, if there is one) is saved as
        ``frames_dir/frame_name``; ``patient_text`` and ``console`` as in :meth:`_message`."""
        keys = self.protocol.keys
        while True:
            press = self._message(
                text,
                [keys.confirm, keys.pause],
                frame_name=frame_name,
                patient_text=patient_text,
                console=console,
            )
            if press is None or press.key == keys.confirm:
                return True
            if not self._pause():
                return False

    def _resume_note(self, n_trials: int) -> str:
        number = self._number(self.first_index)
        return f"Resuming at trial {number} of {n_trials}.\n\n" if number > 1 else ""

    def _instructions(self, n_trials: int) -> bool:
        raise NotImplementedError

    def _save_frame(self, name: str) -> None:
        """Save the back buffer (what the next flip shows) as ``frames_dir/name`` (if saving frames)."""
        if self.frames_dir is None:
            return
        frame = self.win.getMovieFrame(buffer="back")
        self.win.movieFrames.clear()
        frame.save(self.frames_dir / name)

    # ------------------------------------------------------------------ one stimulus and its answer
    def _show(self, index: int, draw: Callable[[], None], capture: bool) -> float:
        """Optional fixation, then ``draw()`` and flip (saving the frame); the unix time it appeared."""
        timing = self.protocol.timing
        if timing.fixation_s > 0:
            self.fixation.draw()
            self.win.flip()
            time.sleep(timing.fixation_s)
        draw()
        if capture:
            self._save_frame(f"trial-{index:03d}.png")
        self.responses.clear()
        self.win.callOnFlip(self.responses.start_timer)
        self.win.flip()
        shown_at = time.time()
        if self.console is not None:
            self.console.update(**self._console_while_shown(index))
            if capture and self.frames_dir is not None:
                self.console.save_frame(self.frames_dir / f"trial-{index:03d}-console.png")
        return shown_at

    def _console_while_shown(self, index: int) -> dict:
        """What the console says while trial ``index``'s stimulus is on the patient's screen."""
        return {"heading": "Waiting for the answer"}

    def _answer(self, respond: Callable[[float | None], KeyPress | None]) -> KeyPress | None:
        """``respond(timeout_s)`` until answered; hide the stimulus after ``letter_s`` if set; None if timed out."""
        timing = self.protocol.timing
        timeout_s = timing.response_timeout_s or None
        if timing.letter_s > 0 and (timeout_s is None or timing.letter_s < timeout_s):
            press = respond(timing.letter_s)
            if press is not None:
                return press
            self.win.flip()  # blank screen; keep waiting for the answer
            timeout_s = None if timeout_s is None else timeout_s - timing.letter_s
        return respond(timeout_s)

    def _show_and_answer(self, index: int, draw, respond) -> tuple[KeyPress | None, float] | None:
        """Show the stimulus and wait for the answer; Escape pauses and shows the same stimulus
        again after resuming. ``(press or None if timed out, presented_at)``, or None if the person quit."""
        capture = True
        while True:
            presented_at = self._show(index, draw, capture)
            press = self._answer(respond)
            if press is None or press.key != self.protocol.keys.pause:
                return press, presented_at
            if not self._pause():
                return None
            capture = False  # the frame of this trial is already saved

    # ------------------------------------------------------------------ the loop
    def _trial(self, index: int, n_trials: int) -> bool | str:
        """Ask, show, record the answer (durably), tell; False if the person quit before answering,
        :data:`UNDONE` if the clinician undid the last answer instead (nothing stored at ``index``)."""
        raise NotImplementedError

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
        message = stop_message(number, confidence)
        self.log(message)
        self._done(f"Session finished: {message}")
        return LoopResult("finished", self.n_answered, index, stopped_at=number, confidence=confidence)

    def _done(self, summary: str) -> None:
        """The closing screen: "Done. Thank you!" for the patient, ``summary`` for the clinician."""
        if self.console is None:
            self.text.text = f"Done. Thank you!\n\n({summary})" if summary else "Done. Thank you!"
            self.text.draw()
        else:
            self._patient_says("Done. Thank you!" if self.final else "Please wait")
            if not self.final:  # the other eye comes next
                summary = summary.replace("Session finished", f"Eye {getattr(self, 'eye', '')} finished")
            self.console.update(heading=summary, lens_text="", keys_text="")
        self.win.flip()

    def run(self, n_trials: int) -> LoopResult:
        """Run until trial ``n_trials`` is answered, the optimizer's stopping rule says stop (checked
        after each answer is stored), or the person quits from the pause screen."""
        keys, timing, protocol = self.protocol.keys, self.protocol.timing, self.protocol
        index = self.first_index
        if self._number(index) <= n_trials and not self._instructions(n_trials):
            return LoopResult("quit", self.n_answered, index - 1)
        while self._number(index) <= n_trials:
            outcome = self._trial(index, n_trials)
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
            if on_break and not self._wait_or_pause(
                f"Break: {number} of {n_trials} {self.unit} done.\n\nPress {keys.confirm.upper()} to continue.",
                patient_text="Break: rest your eyes",
            ):
                return LoopResult("quit", self.n_answered, index)
            if timing.iti_s > 0:
                self.win.flip()
                time.sleep(timing.iti_s)
            index += 1
        self._done("" if self.console is None else f"Session finished: all {n_trials} {self.unit} answered")
        return LoopResult("finished", self.n_answered, index - 1)


class TrialLoop(ClinicianKeys, LoopScreens):
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
        records=(),
        rebuild: Callable | None = None,
        void: Callable[[int], None] | None = None,
        eye: str | None = None,
        index_offset: int = 0,
        **options,
    ):
        from psychopy import visual

        super().__init__(win, protocol, calibration, optimizer, responses, record, **options)
        self.previous_letter, self.previous_lens = previous_letter, None
        self.letter_stim = LetterStim(win, glyphs, color="black")
        self.feedback = visual.TextStim(
            win, units="pix", height=TEXT_HEIGHT_PX * 1.5, flipHoriz=is_mirrored(win), autoLog=False
        )
        keys = protocol.keys
        self.letter_keys = {letter_key(c): c for c in protocol.letters.alphabet}
        self.records = list(records)
        self.eye = eye  # every record of this loop is for this eye (None: the session names none)
        # the rows before this eye's (the first eye's, in a session of both) and the void answers
        # do not count towards this eye's trial numbers
        self.n_void = index_offset + sum(bool(getattr(r, "void", False)) for r in self.records)
        if self.console is not None:
            self.console.update(eye=eye)
        self._rebuild, self._void = rebuild, void
        self.can_undo = rebuild is not None and void is not None
        self.response_keys = [*self.letter_keys, keys.pass_key, keys.pause, *([keys.undo] if self.can_undo else [])]
        self.lens_override: Lens | None = None  # the lens the clinician typed for the coming trial
        self.pending_note: str | None = None  # a note typed at the lens prompt, stored with the next answer

    def _instructions(self, n_trials: int) -> bool:
        keys, p = self.protocol.keys, self.protocol
        if self.console is not None:
            self.console.update(n_trials=n_trials, keys_text=self._answer_keys_text())
            eye = f"Eye {self.eye}: {EYE_INSTRUCTIONS[self.eye]}.\n" if self.eye else ""
            return self._wait_or_pause(
                f"{self._resume_note(n_trials)}{eye}The patient reads each letter aloud; type the letter they name "
                f"({len(p.letters.alphabet)} possible letters).\nPress {keys.confirm.upper()} to start.",
                patient_text="Read the letter",
            )
        return self._wait_or_pause(
            f"{self._resume_note(n_trials)}A letter will appear in the middle of the screen.\n"
            f"Press its key ({len(p.letters.alphabet)} possible letters). If you cannot read it, "
            f"press {keys.pass_key.upper()} (it counts as a miss).\n"
            f"{keys.pause.upper()} pauses.\n\nPress {keys.confirm.upper()} to start."
        )

    def _answer_keys_text(self) -> str:
        """The keys while a letter is shown, as the console lists them."""
        keys = self.protocol.keys
        return (
            f"Keys: the letter named   ·   {keys.pass_key.upper()}: cannot read (a miss)   ·   "
            f"{keys.pause.upper()}: pause / stop"
        )

    def _lens_prompt(self, index: int, sphere_d: float, cylinder_d: float, axis_deg: float | None = None) -> bool:
        """The clinician's prompt to set the lens of trial ``index`` (saved as ``trial-NNN-lens.png``):
        on the console, large, while the patient's window stays blank."""
        if axis_deg is None:
            lens_text = f"S {sphere_d:+.2f} D  C {cylinder_d:+.2f} D"
            shown = f"S {sphere_d:+.2f} D     C {cylinder_d:+.2f} D"
        else:  # a full-prescription lens, in clinical notation
            lens_text = shown = show_lens(Lens(sphere_d, cylinder_d, axis_deg), self.protocol.lens.cylinder)
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
        keys_text += f"   ·   {keys.undo.upper()}: undo the last answer" if self.can_undo else ""
        frame_name = f"trial-{index:03d}-lens.png"
        while True:
            press = self._message(
                f"Set this lens on the phoropter, then press {confirm}",
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
                    self.console.update(message=f"Lens actually set: {set_text} (asked {lens_text})")
                    return True
            if press.key == keys.note:
                note = self._entry("Type a note for this trial", "patient squinting", self._parse_note)
                if note is not None:
                    self.pending_note = note if self.pending_note is None else f"{self.pending_note}; {note}"
                    self.log(f"clinician: note {note!r}")
                    self.console.update(message=f"Note kept with trial {self._number(index)}: {note}")

    def _console_while_shown(self, index: int) -> dict:
        letter, logmar = self.letter_stim.letter, self.shown_logmar
        return {
            "trial_index": self._number(index),
            "heading": f"Letter {letter} shown at {logmar:+.2f} logMAR: type the letter the patient names",
            "keys_text": self._answer_keys_text(),
        }

    def _after_answer(self, index: int, letter: str, response: str | None, correct: bool) -> None:
        """The confidence so far (kept for the end point's trend) and the console's list of answers,
        after the answer is stored and told."""
        confidence = None
        stop = getattr(self.optimizer, "stop", None)
        if stop is not None and self.optimizer.n_trials >= stop.min_trials:
            confidence = float(self.optimizer.confidence())  # the full confidence (~10 ms), between trials
            self.confidences.append((self.optimizer.n_trials, confidence))
        if self.console is None:
            return
        mark = "ok" if correct else "x"
        answer = f"{self._number(index)}: {letter}>{response or '-'} {mark}"
        self.console.update(answers=(*self.console.state.answers, answer), confidence=confidence, message="")

    def letter_for(self, index: int, previous: str | None) -> str:
        """Trial ``index``'s letter, drawn from ``(seed, index)``; never the previous letter again."""
        alphabet = [c for c in self.protocol.letters.alphabet if c != previous]
        rng = np.random.default_rng(np.random.SeedSequence([self.seed, index, 3]))
        return alphabet[int(rng.integers(len(alphabet)))]

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

    def _trial(self, index: int, n_trials: int) -> bool:
        keys, protocol = self.protocol.keys, self.protocol
        trial = self.optimizer.ask()
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
        press, presented_at = shown
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
        extra = {"letter_height_px": float(height_px)}
        if math.isfinite(decision_ms):
            extra["decision_ms"] = float(decision_ms)
        if override is not None:
            extra["asked_lens"] = Lens(asked.sphere_d, asked.cylinder_d, asked.axis_deg).format()
            extra["lens_set_by_clinician"] = True
        if self.pending_note is not None:
            extra["note"] = self.pending_note
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
        self.pending_note = None
        self.optimizer.tell(trial, correct)
        axis = "" if trial.axis_deg is None else f" x {trial.axis_deg:03.0f}"
        self.log(
            f"trial {index:3d}/{n_trials}  S {trial.sphere_d:+.2f} C {trial.cylinder_d:+.2f}{axis}  "
            f"{letter} at {trial.letter_logmar:+.2f} logMAR ({height_px:.1f} px) -> "
            f"{response or '-'} {'correct' if correct else 'wrong'}"
        )
        self.previous_letter = letter
        self._after_answer(index, letter, response, correct)
        self._feedback(correct, response, letter)
        return True
