"""The screens of a session and the keys that answer them: what the trial loops show, not their order.

:class:`Screens`, shared by every loop, holds the patient's window (and the clinician's console, when
there is one): a message that waits for one of some keys, the pause screen (resume, or quit safely),
a screen that waits for the confirm key with Escape pausing, the break and closing screens, saving a
frame; then one stimulus and its answer (optional fixation cross, the stimulus, the answer keys with
the stimulus hidden after ``letter_s``, Escape pausing and the same stimulus shown again after
resuming). :class:`LetterScreens` adds the letter loop's: its instructions, the clinician's lens
prompt (a note, the lens actually set, undo), the console while a letter is shown, the feedback.

:class:`lensopt.experiment.loop.LoopScreens` runs the trials over them (ask, show, record, tell,
stop). The window's mirror mode, the text sizes and what the letter screens return or show
(:data:`PASS_RESPONSE`, :data:`UNDONE`, the feedback colours, the eyes' instructions) are here too.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from lensopt.experiment.keyboard import KeyPress

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

INSTRUCTION_TEXT_HEIGHT_FRACTION = 0.05
"""Height of instruction text as a fraction of the window's height, when that is more than
:data:`TEXT_HEIGHT_PX` (54 px on a 1080 px screen): without a console the person at the keys reads
it from the viewing distance, where 28 px was about the smallest letter the session tests (4.7
arcmin of cap height at 4 m), unreadable through a lens that blurs."""


def instruction_text_height_px(win) -> float:
    """The height of the words on the patient's window without a console (instructions, pauses, the
    end; feedback half as large again): :data:`INSTRUCTION_TEXT_HEIGHT_FRACTION` of its height, at
    least :data:`TEXT_HEIGHT_PX`."""
    return max(float(TEXT_HEIGHT_PX), INSTRUCTION_TEXT_HEIGHT_FRACTION * float(win.size[1]))


def text_wrap_px(win) -> float:
    """The width the patient's window wraps its words at: 85 % of it."""
    return 0.85 * float(win.size[0])


PATIENT_TEXT_HEIGHT_FRACTION = 0.07
"""Height of the patient's words ("Read the letter", "Done. Thank you!") when a clinician's console
holds everything else, as a fraction of the window's height (76 px on a 1080 px screen)."""

FIXATION_SIZE_PX = 24
"""Width of the fixation cross (px)."""

FEEDBACK_COLORS = {True: (-1.0, 0.4, -1.0), False: (0.8, -1.0, -1.0)}
"""Feedback text colour (PsychoPy rgb, -1..1): green for correct, red for wrong or passed."""

PASS_RESPONSE = "pass"
"""What the store records when the pass key was pressed."""

UNDONE = "undone"
"""What a trial returns when the clinician undid the last answer instead (the trial is asked again)."""

EYE_INSTRUCTIONS = {"OD": "the right eye, the left one occluded", "OS": "the left eye, the right one occluded"}
"""What the console says at the start of each eye's search."""


def eye_line(eye: str | None) -> str:
    """The instructions' line naming the eye searched (``""`` when the session names none)."""
    return f"Eye {eye}: {EYE_INSTRUCTIONS[eye]}.\n" if eye else ""


class Screens:
    """The screens of a loop on the patient's ``win`` (``units="pix"``) and, with a clinician's
    ``console``, on the console; ``final`` is the session's last search (the patient is done after it).

    ``responses`` is a source from :mod:`lensopt.experiment.keyboard`. ``frames_dir`` saves each
    trial's stimulus frame as ``trial-NNN.png`` (window size, exactly the back buffer that the next
    flip shows).
    """

    #: What the break screen counts ("12 of 40 letters done").
    unit = "trials"

    def __init__(
        self,
        win,
        protocol,
        responses,
        *,
        frames_dir: str | Path | None = None,
        log: Callable[[str], None] | None = print,
        console=None,
        final: bool = True,
    ):
        from psychopy import visual

        self.console = console
        self.final = final  # the session's last search (not OD before OS): the patient is done after it
        self.win, self.protocol, self.responses = win, protocol, responses
        self.frames_dir = Path(frames_dir) if frames_dir is not None else None
        if self.frames_dir is not None:
            self.frames_dir.mkdir(parents=True, exist_ok=True)
        self.log = log or (lambda message: None)
        wrap_px = text_wrap_px(win)
        mirrored = is_mirrored(win)
        self.text = visual.TextStim(
            win,
            units="pix",
            height=instruction_text_height_px(win),
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
            if frame_name is not None:
                self._save_console_frame(frame_name)
        source = source or self.responses
        source.start_timer()
        return source.wait_for(keys)

    def _pause(self) -> bool:
        """The pause screen; True to resume, False to quit. Whoever is at the keyboard decides. On the
        console only the pause screen's keys are listed while paused; what it showed before comes back
        with the screen that follows (each redraws its own fields)."""
        keys = self.protocol.keys
        human = getattr(self.responses, "human", self.responses)
        self.log("paused")
        resume, quit_ = (
            f"{keys.confirm.upper()}: resume",
            f"{keys.quit.upper()} or {keys.pause.upper()}: quit (resume later with --resume)",
        )
        saved = None if self.console is None else self.console.state
        press = self._message(
            "Paused. Every answer so far is saved."
            + ("" if self.console is not None else f"\n\n{resume}      {quit_}"),
            [keys.confirm, keys.quit, keys.pause],
            source=human,
            patient_text="Please wait",
            console={"keys_text": f"{resume}   ·   {quit_}"},
        )
        if self.console is not None and saved is not None:
            self.console.state = saved  # the screen paused is shown again by its own loop
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

    def _break(self, number: int, n_trials: int) -> bool:
        """The break screen after answer ``number`` of ``n_trials``; False if the person quit."""
        keys = self.protocol.keys
        return self._wait_or_pause(
            f"Break: {number} of {n_trials} {self.unit} done.\n\nPress {keys.confirm.upper()} to continue.",
            patient_text="Break: rest your eyes",
            # no lens on the console at a break: the last trial's would read as the next one to set
            console={
                "keys_text": f"{keys.confirm.upper()}: continue   ·   {keys.pause.upper()}: pause / stop",
                "lens_text": "",
            },
        )

    def _save_frame(self, name: str) -> None:
        """Save the back buffer (what the next flip shows) as ``frames_dir/name`` (if saving frames)."""
        if self.frames_dir is None:
            return
        frame = self.win.getMovieFrame(buffer="back")
        self.win.movieFrames.clear()
        try:
            frame.save(self.frames_dir / name)
        except OSError as exc:
            self._frames_failed(name, exc)

    def _save_console_frame(self, name: str) -> None:
        """The console's screen as ``frames_dir/name`` (if saving frames); shown whether or not it is saved."""
        if self.console is None or self.frames_dir is None:
            return
        try:
            self.console.save_frame(self.frames_dir / name)
        except OSError as exc:
            self._frames_failed(name, exc)

    def _frames_failed(self, name: str, exc: OSError) -> None:
        """A frame could not be written (the folder removed, a full disk, a stick pulled out): frames are
        diagnostics, the patient is in the chair — say so once and go on without them."""
        self.log(
            f"warning: frames are no longer saved: {name} could not be written to {self.frames_dir} "
            f"({exc.strerror or exc}); the session goes on, every answer is stored"
        )
        self.frames_dir = None

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

    # ------------------------------------------------------------------ one stimulus and its answer
    def _show(self, index: int, draw: Callable[[], None], capture: bool) -> float:
        """Optional fixation, then ``draw()`` and flip (saving the frame); the unix time it appeared."""
        timing = self.protocol.timing
        if self.console is not None:
            # at once, before the fixation: the lens prompt stayed on the console through it, so a
            # clinician whose press seemed not taken pressed the key again — and the pass key is the
            # one that sets the lens, so that press could land on the letter as the patient's miss
            self.console.update(**self._console_while_shown(index))
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
        if self.console is not None and capture and self.frames_dir is not None:
            self._save_console_frame(f"trial-{index:03d}-console.png")
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

    def _show_and_answer(self, index: int, draw, respond) -> Shown | None:
        """Show the stimulus and wait for the answer; Escape pauses and shows the same stimulus
        again after resuming (its answer time counted from then on). What was answered, or None if
        the person quit."""
        capture = True
        first_presented_at, pauses = None, 0
        while True:
            presented_at = self._show(index, draw, capture)
            first_presented_at = presented_at if first_presented_at is None else first_presented_at
            press = self._answer(respond)
            if press is None or press.key != self.protocol.keys.pause:
                return Shown(press, presented_at, first_presented_at, pauses)
            if not self._pause():
                return None
            pauses += 1
            capture = False  # the frame of this trial is already saved


@dataclass(frozen=True)
class Shown:
    """A stimulus shown and answered: the key ``press`` (None if the answer timed out), the unix time
    ``presented_at`` it was last shown (the answer time counts from it), and — when the person paused
    while it was up, ``pauses`` times — when it was first shown (``first_presented_at``; ``first_presented_at_s`` in the trial)."""

    press: KeyPress | None
    presented_at: float
    first_presented_at: float
    pauses: int = 0

    def pause_extra(self) -> dict[str, float | int]:
        """What a trial's ``extra`` keeps of the pauses while its stimulus was up (nothing without one):
        ``pauses`` and ``first_presented_at_s``, so that the time it was seen before a pause is not lost."""
        if not self.pauses:
            return {}
        return {"pauses": self.pauses, "first_presented_at_s": self.first_presented_at}
