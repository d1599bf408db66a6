"""The clinician's console: a second PsychoPy window with what only the clinician should read.

The patient's window shows letters and a few patient-facing words ("Read the letter", "Done. Thank
you!"); everything else — the lens to set, in clinical notation and large, the eye, trial k of n,
the answer keys, the last answers and the confidence so far — is drawn here.

Why a second PsychoPy window rather than the Qt dashboard: the console must answer in the same
frame as the trial loop (a key pressed on either window is one event in PsychoPy's queue, which
``event.getKeys`` fills by dispatching every pyglet window), and it must be drawn by the loop that
knows what is on the patient's screen, with no thread or process in between. Two windows in one
pyglet event loop give both; the dashboard stays what it is, a follower of the store in its own
process (``--dashboard``).

Where the windows go is the protocol's ``[screens]`` table (:class:`ScreensSection`): ``patient``
and ``console`` name the screens (0, 1, ...); on one screen the console sits beside a windowed
patient display (``[display] fullscreen = false``), at ``console_pos_px`` (default: right of the
patient window), ``console_size_px`` big.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from pathlib import Path

from lensopt.stopping import confidence_text, threshold_text

CONSOLE_TEXT_HEIGHT_PX = 24
"""Height of the console's ordinary text (px)."""

CONSOLE_LENS_HEIGHT_PX = 64
"""Height of the lens to set, the console's largest text (px): readable across the room."""

LENS_MEASURE_WIDTH_PX = 100_000
"""Wrap width at which the lens text is measured (px): wide enough that no line wraps."""

LENS_FIT_MARGIN = 0.97
"""A lens line is made this fraction of the console's wrap width at most, so it never wraps."""

CONSOLE_BACKGROUND = (-0.85, -0.85, -0.8)
"""The console's background (PsychoPy rgb, -1..1): dark, so it does not light the patient's room."""

CONSOLE_TEXT_COLOR = (0.9, 0.9, 0.9)
"""The console's text colour (PsychoPy rgb)."""

CONSOLE_LENS_COLOR = (1.0, 0.85, -0.2)
"""The colour of the lens to set (PsychoPy rgb): amber, the one thing to look for."""

LAST_ANSWERS_SHOWN = 5
"""How many of the last answers the console lists (five keep ``100: D>D ok`` answers on one line)."""

MIN_TEXT_SCALE = 0.5
"""The console's text is set no smaller than this fraction of its heights to fit the window's height
(a block longer than that runs on past the window's foot rather than into unreadable print)."""

#: What separates the keys listed on one line (``SPACE: continue   ·   ESCAPE: pause / stop``).
KEY_SEPARATOR = "   ·   "

NO_BREAK = "\u00a0"
"""Joins the parts of one listed answer (``20: W>W ok``), so that a line of answers too wide for the
console wraps between answers, never inside one (pyglet breaks lines only at spaces, tabs and
zero-width spaces)."""


@dataclass(frozen=True)
class ConsoleState:
    """What the console shows. ``lens_text``: the lens to set (or being shown), in clinical notation;
    ``heading``: what to do now ("Set the lens, then press SPACE"); ``keys_text``: the keys that
    work now; ``answers``: the last answers, newest last; ``confidence``: the model's confidence that
    its lens is within 0.025 logMAR of the best (None before there is one); ``message``: one line
    more (a refused entry, a note saved)."""

    trial_index: int = 0
    n_trials: int = 0
    eye: str | None = None
    lens_text: str = ""
    heading: str = ""
    keys_text: str = ""
    answers: tuple[str, ...] = ()
    confidence: float | None = None
    confidence_target: float | None = None  # the stopping rule's threshold: the confidence shown to its decimals
    message: str = ""
    body: str = field(default="")


def wants_console(protocol) -> bool:
    """Whether a session of ``protocol`` has a clinician, who gets a console of their own: the
    protocol prompts for the lenses (``[lens] prompt = true``)."""
    return bool(protocol.lens.prompt)


def console_size_and_pos(screens, display, patient_size_px) -> tuple[tuple[int, int], tuple[int, int] | None]:
    """The console window's size and position (px) from ``[screens]``: its own ``console_pos_px``,
    or beside the patient window when both share a screen, or the top left of its own screen."""
    size = tuple(screens.console_size_px)
    if screens.console_pos_px is not None:
        return size, tuple(screens.console_pos_px)
    if screens.console == screens.patient and not display.fullscreen:
        left = (screens.patient_pos_px or (0, 0))[0] + int(patient_size_px[0])
        return size, (left, (screens.patient_pos_px or (0, 0))[1])
    return size, (0, 0)


def open_console_window(protocol):
    """The console's PsychoPy window (``units="pix"``), placed by the protocol's ``[screens]``."""
    from psychopy import visual

    size, pos = console_size_and_pos(protocol.screens, protocol.display, protocol.display.window_size_px)
    return visual.Window(
        size=list(size),
        pos=None if pos is None else list(pos),
        screen=protocol.screens.console,
        fullscr=False,
        units="pix",
        color=CONSOLE_BACKGROUND,
        colorSpace="rgb",
        allowGUI=True,
        checkTiming=False,
        winType="pyglet",
        title="lensopt: clinician",
    )


class ClinicianConsole:
    """Draws :class:`ConsoleState` in ``win`` (a PsychoPy window, ``units="pix"``).

    :meth:`update` changes some fields and redraws; :meth:`save_frame` saves what is shown. Text is
    laid out top down: trial and eye, what to do, the lens (large; the lenses of a duel or a ranking
    one per line, numbered; smaller only if a line would not fit), the keys, the last answers and
    the confidence, one more line (the key that closes the closing screen).

    The block is measured as laid out and fitted to the window's height, so that its last line is
    always on screen: when it is too tall the last answers are left out (the closing screen of both
    eyes, whose lines fill the console), then all of it is set smaller, its spacing with it, down
    to :data:`MIN_TEXT_SCALE`.
    """

    def __init__(self, win):
        from psychopy import visual

        self.win = win
        width_px, height_px = win.size
        wrap_px = 0.92 * width_px
        top_px = height_px / 2

        def text(height_px, y_px, color=CONSOLE_TEXT_COLOR, bold=False):
            return visual.TextStim(
                win,
                units="pix",
                height=height_px,
                color=color,
                colorSpace="rgb",
                wrapWidth=wrap_px,
                pos=(0, y_px),
                anchorVert="top",
                bold=bold,
                autoLog=False,
            )

        self.top_px, self.wrap_px = top_px, wrap_px
        #: Room for the text block (px): the window's height less half a line above and below it.
        self.room_px = height_px - CONSOLE_TEXT_HEIGHT_PX
        self.title = text(CONSOLE_TEXT_HEIGHT_PX, 0)
        self.heading = text(CONSOLE_TEXT_HEIGHT_PX, 0)
        self.lens = text(CONSOLE_LENS_HEIGHT_PX, 0, CONSOLE_LENS_COLOR, bold=True)
        self.keys = text(CONSOLE_TEXT_HEIGHT_PX * 0.8, 0)
        self.history = text(CONSOLE_TEXT_HEIGHT_PX * 0.8, 0)
        self.message = text(CONSOLE_TEXT_HEIGHT_PX * 0.8, 0, (1.0, 0.5, 0.3))
        self.stims = (self.title, self.heading, self.lens, self.keys, self.history, self.message)
        self.heights_px = {id(stim): float(stim.height) for stim in self.stims}  # each part's, unscaled
        self.set_texts: dict[int, str] = {}  # each part's text as given (the keys' may be set a key a line)
        self.state = ConsoleState()
        self.drawn: list[str] = []
        #: The scale the text was last drawn at (1.0: as designed; smaller: fitted to the window).
        self.scale = 1.0

    def update(self, **changes) -> None:
        """Change fields of the state (:class:`ConsoleState`) and show it."""
        self.state = replace(self.state, **changes)
        self.show()

    def texts(self) -> list[str]:
        """The console's lines as drawn (tests read them)."""
        s = self.state
        title = f"Trial {s.trial_index} of {s.n_trials}" if s.trial_index else "lensopt"
        if s.eye:
            title += f"   ·   eye {s.eye}"
        shown = [answer.replace(" ", NO_BREAK) for answer in s.answers[-LAST_ANSWERS_SHOWN:]]
        answers = "Last answers:  " + ("   ".join(shown) if shown else "none yet")
        if s.confidence is not None:
            answers += f"\nConfidence so far: {confidence_text(s.confidence, s.confidence_target)}"
            if s.confidence_target is not None:  # how near the stop is
                answers += f" (stops at {threshold_text(s.confidence_target)})"
        return [title, s.heading, s.lens_text, s.keys_text, answers, s.message]

    def _fit_lens(self, text: str, scale: float = 1.0) -> None:
        """Set the lens text at :data:`CONSOLE_LENS_HEIGHT_PX` (times ``scale``), smaller if its widest
        line would not fit the console's width: a lens is never wrapped (``S -0.25 D  C +1.50`` over a
        lone ``D``)."""
        stim, height_px = self.lens, CONSOLE_LENS_HEIGHT_PX * scale
        stim.height, stim.wrapWidth = height_px, LENS_MEASURE_WIDTH_PX
        stim.text = ""  # the layout is redone only when the text changes
        stim.text = text
        width_px = float(stim.boundingBox[0])
        fit = LENS_FIT_MARGIN * self.wrap_px
        stim.height = height_px * (min(1.0, fit / width_px) if width_px > 0 else 1.0)
        stim.wrapWidth = self.wrap_px
        stim.text = ""
        stim.text = text

    def _set(self, stim, text: str, scale: float) -> float:
        """Set ``stim`` to ``text`` at its height times ``scale``; its height as laid out (px). A list
        of keys too long for one line is set one key a line (wrapped by the window, a line ended on
        its separator: "ESCAPE: pause / stop   ·")."""
        if stim is self.lens:
            self._fit_lens(text, scale)
        else:
            height_px = self.heights_px[id(stim)] * scale
            if stim.height != height_px or self.set_texts.get(id(stim)) != text:
                stim.height = height_px
                stim.text = ""  # the layout is redone only when the text changes
                stim.text = text
                if stim is self.keys and KEY_SEPARATOR in text and float(stim.boundingBox[1]) > 1.6 * height_px:
                    stim.text = text.replace(KEY_SEPARATOR, "\n")
                self.set_texts[id(stim)] = text
        return float(stim.boundingBox[1])

    def _block_px(self, parts, scale: float) -> float:
        """The height (px) of the text block ``parts`` (``(stim, text)``, top down) at ``scale``."""
        heights = [self._set(stim, text, scale) for stim, text in parts]
        return sum(heights) + CONSOLE_TEXT_HEIGHT_PX * scale * (len(parts) - 1)

    def _fitted(self, drawn: list[str]) -> tuple[list, float]:
        """The parts to draw (``(stim, text)``, the empty ones left out) and their scale: the last
        answers left out, then all set smaller, until the block fits :attr:`room_px`."""
        parts = [(stim, text) for stim, text in zip(self.stims, drawn) if text]
        scale = 1.0
        height_px = self._block_px(parts, scale)
        if height_px > self.room_px and any(stim is self.history for stim, _ in parts):
            parts = [(stim, text) for stim, text in parts if stim is not self.history]
            height_px = self._block_px(parts, scale)
        too_big = None  # the smallest scale found too big
        while height_px > self.room_px and scale > MIN_TEXT_SCALE:
            # heights and gaps scale together: the block nearly in proportion (a line wraps less)
            too_big, scale = scale, max(MIN_TEXT_SCALE, min(scale - 0.02, scale * self.room_px / height_px))
            height_px = self._block_px(parts, scale)
        if too_big is not None and height_px <= self.room_px:
            for _ in range(4):  # a line that wraps less left room: the largest scale that fits, within 1/16 of the step
                middle = 0.5 * (scale + too_big)
                if self._block_px(parts, middle) <= self.room_px:
                    scale = middle
                else:
                    too_big = middle
            self._block_px(parts, scale)  # laid out at the scale drawn
        return parts, scale

    def draw(self) -> None:
        """Draw the state into the back buffer (no flip), top down, each part below the one above,
        the block fitted to the window's height (:meth:`_fitted`); :attr:`drawn` holds what is
        drawn ("" for a part left out)."""
        parts, self.scale = self._fitted(self.texts())
        shown = {id(stim) for stim, _ in parts}
        self.drawn = [text if id(stim) in shown else "" for stim, text in zip(self.stims, self.texts())]
        y_px = self.top_px - 0.5 * CONSOLE_TEXT_HEIGHT_PX
        for stim, _ in parts:
            stim.pos = (0, y_px)
            stim.draw()
            y_px -= float(stim.boundingBox[1]) + CONSOLE_TEXT_HEIGHT_PX * self.scale

    def show(self) -> None:
        self.draw()
        self.win.flip()

    def save_frame(self, path: str | Path) -> None:
        """Draw the state and save it as ``path`` (PNG), then show it — shown even if it cannot be
        saved (the OSError is raised after the flip)."""
        self.draw()
        frame = self.win.getMovieFrame(buffer="back")
        self.win.movieFrames.clear()
        try:
            frame.save(Path(path))
        finally:
            self.win.flip()
