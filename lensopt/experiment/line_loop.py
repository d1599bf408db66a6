"""Trials that compare lenses on a line of letters: what duels and rankings share.

The clinician is told the lenses to present (labelled 1, 2, ... as the patient hears them; ``[lens]
prompt``), then a line of ``letters_per_line`` letters (``[duel]`` or ``[ranking]``,
:attr:`LetterLineLoop.section`) drawn from ``(seed, trial)`` appears, one letter width apart,
``calibration.letter_height_px(letter_logmar)`` tall; the patient looks at it through each lens.
:class:`lensopt.experiment.duel_loop.DuelLoop` and :class:`lensopt.experiment.ranking_loop.RankingLoop`
say how the answer is given and recorded.

On the clinician's console, as in a letter session: trial k of n and the eye, what to do now, the
lenses large in clinical notation, each with its number (``1:  -1.25 / -0.75 x 170``), the keys
that work now and the last answers; the lens prompt is saved as ``trial-NNN-lens.png`` and the
console while the line is up as ``trial-NNN-console.png`` (``--save-frames``).
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from lensopt.experiment.loop import LoopScreens
from lensopt.experiment.loop_screens import eye_line
from lensopt.experiment.optotypes import LetterLineStim
from lensopt.experiment.protocol_sections import LensSection, show_lens, show_two_parameter_lens
from lensopt.refraction.acuity_text import logmar_text
from lensopt.refraction.lens import Lens

LENS_COUNT_WORDS = {2: "two", 3: "three", 4: "four"}
"""How the clinician prompt counts the lenses to present."""


def numbered(n: int, first: int = 1) -> str:
    """``"1 and 2"``, ``"1, 2 and 3"`` (``"2 and 3"`` from ``first`` 2): the lens numbers as the
    console names them."""
    numbers = [str(k) for k in range(first, n + 1)]
    return ", ".join(numbers[:-1]) + f" and {numbers[-1]}" if len(numbers) > 1 else numbers[0]


def format_lens(lens_d, lens: LensSection) -> str:
    """A :class:`~lensopt.refraction.lens.Lens` of the full prescription in clinical notation in the
    protocol's cylinder convention (``"-1.25 / -0.75 x 170"``); a ``(sphere_d, cylinder_d)`` pair of
    a two-parameter search, whose cylinder lies along the patient's axis, as
    :func:`~lensopt.experiment.search_sections.show_two_parameter_lens` shows it (``"S +1.25 D  C
    -0.50 D"``, or in clinical notation at the protocol's ``[lens] axis_deg``)."""
    if isinstance(lens_d, Lens):
        return show_lens(lens_d, lens.cylinder)
    return show_two_parameter_lens(lens_d[0], lens_d[1], lens)


class LetterLineLoop(LoopScreens):
    """A :class:`LoopScreens` whose trials show a line of letters through lenses the clinician presents."""

    #: The protocol table holding ``letters_per_line`` (``"duel"``, ``"ranking"``).
    section: str

    def __init__(self, win, protocol, calibration, optimizer, responses, record: Callable, *, glyphs=None, **options):
        super().__init__(win, protocol, calibration, optimizer, responses, record, **options)
        self.line = LetterLineStim(win, glyphs, color="black")
        self.letters_per_line = getattr(protocol, self.section).letters_per_line
        # the trial on the patient's screen, for the console: its lenses (numbered), letters and size
        self.shown_lenses_text, self.shown_letters, self.shown_logmar = "", "", 0.0

    # ------------------------------------------------------------------ what each kind of trial says
    def _patient_instructions(self) -> str:
        """The instructions without a console (on the patient's window), before "Press SPACE to start"."""
        raise NotImplementedError

    def _console_instructions(self) -> str:
        """The instructions on the clinician's console, before "Press SPACE to start"."""
        raise NotImplementedError

    def _answer_keys_text(self) -> str:
        """The keys while the line is shown, as the console lists them."""
        raise NotImplementedError

    def _question(self) -> str:
        """What the patient is asked while the line is shown, as the console says it."""
        raise NotImplementedError

    # ------------------------------------------------------------------ screens
    def _instructions(self, n_trials: int) -> bool:
        start = f"Press {self.protocol.keys.confirm.upper()} to start."
        if self.console is None:
            return self._wait_or_pause(
                f"{self._resume_note(n_trials)}{eye_line(self.eye)}{self._patient_instructions()}{start}"
            )
        return self._wait_or_pause(
            f"{self._resume_note(n_trials)}{eye_line(self.eye)}{self._console_instructions()}{start}",
            console={"n_trials": n_trials, "keys_text": self._answer_keys_text()},
        )

    def letters_for(self, index: int) -> str:
        """Trial ``index``'s line, drawn from ``(seed, index)``: distinct letters while the
        alphabet has enough of them."""
        alphabet = list(self.protocol.letters.alphabet)
        n = self.letters_per_line
        rng = np.random.default_rng(np.random.SeedSequence([self.seed, index, 4]))
        return "".join(rng.choice(alphabet, size=n, replace=n > len(alphabet)))

    def _lenses_prompt(self, index: int, lenses_d) -> bool:
        """The clinician's prompt to set trial ``index``'s lenses (saved as ``trial-NNN-lens.png``):
        on the console, large and numbered as the patient hears them. False if the person quit."""
        lens, keys = self.protocol.lens, self.protocol.keys
        confirm = keys.confirm.upper()
        count = LENS_COUNT_WORDS.get(len(lenses_d), str(len(lenses_d)))
        frame_name = f"trial-{index:03d}-lens.png"
        if self.console is None:
            listed = "\n".join(f"Lens {k}:  {format_lens(lens_d, lens)}" for k, lens_d in enumerate(lenses_d, start=1))
            return self._wait_or_pause(
                f"Clinician: present the {count} lenses\n\n{listed}\n\nthen press {confirm}", frame_name=frame_name
            )
        return self._wait_or_pause(
            # a phoropter (a trial frame) holds one lens at a time: the first is set, the others shown in turn
            f"Set lens 1 {lens.instrument}, lens{'es' if len(lenses_d) > 2 else ''} "
            f"{numbered(len(lenses_d), first=2)} ready to show in turn, then press {confirm}",
            frame_name=frame_name,
            console={
                "trial_index": self._number(index),
                "lens_text": self.shown_lenses_text,
                "keys_text": f"{confirm}: lens 1 is set   ·   {keys.pause.upper()}: pause / stop",
            },
        )

    def _console_while_shown(self, index: int) -> dict:
        """The trial, the line and its size, the question, the lenses (numbered) and the answer keys."""
        return {
            "trial_index": self._number(index),
            "heading": f"Letters {self.shown_letters} shown at {logmar_text(self.shown_logmar)}: {self._question()}",
            "lens_text": self.shown_lenses_text,
            "keys_text": self._answer_keys_text(),
            "message": "",
        }

    def _present(self, index: int, lenses_d, letter_logmar: float) -> tuple[str, float] | None:
        """Log and prompt the lenses, then prepare trial ``index``'s line: ``(letters, height_px)``,
        or None if the person quit at the prompt."""
        lens = self.protocol.lens
        self.log(
            "clinician: "
            + " / ".join(f"lens {k} {format_lens(lens_d, lens)}" for k, lens_d in enumerate(lenses_d, start=1))
        )
        self.shown_lenses_text = "\n".join(
            f"{k}:  {format_lens(lens_d, lens)}" for k, lens_d in enumerate(lenses_d, start=1)
        )
        if self.protocol.lens.prompt and not self._lenses_prompt(index, lenses_d):
            return None
        letters = self.letters_for(index)
        height_px = self.calibration.letter_height_px(letter_logmar)
        self.line.set_letters(letters, height_px)
        self.shown_letters, self.shown_logmar = letters, float(letter_logmar)
        return letters, height_px
