"""Trials that compare lenses on a line of letters: what duels and rankings share.

The clinician is told the lenses to present (labelled 1, 2, ...; ``[lens] prompt``), then a line of
``letters_per_line`` letters (``[duel]`` or ``[ranking]``, :attr:`LetterLineLoop.section`) drawn from
``(seed, trial)`` appears, one letter width apart, ``calibration.letter_height_px(letter_logmar)``
tall; the patient looks at it through each lens. :class:`lensopt.experiment.duel_loop.DuelLoop` and
:class:`lensopt.experiment.ranking_loop.RankingLoop` say how the answer is given and recorded.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from lensopt.experiment.loop import LoopScreens
from lensopt.experiment.optotypes import LetterLineStim
from lensopt.experiment.protocol_sections import show_lens
from lensopt.refraction.lens import Lens

LENS_COUNT_WORDS = {2: "two", 3: "three", 4: "four"}
"""How the clinician prompt counts the lenses to present."""


def format_lens(lens_d, convention: str = "minus") -> str:
    """``"S +1.25 D  C -0.50 D"`` for a ``(sphere_d, cylinder_d)`` pair (the axis is the patient's);
    a :class:`~lensopt.refraction.lens.Lens` of the full prescription in clinical notation in the
    cylinder ``convention`` (``"-1.25 / -0.75 x 170"``)."""
    if isinstance(lens_d, Lens):
        return show_lens(lens_d, convention)
    return f"S {lens_d[0]:+.2f} D  C {lens_d[1]:+.2f} D"


class LetterLineLoop(LoopScreens):
    """A :class:`LoopScreens` whose trials show a line of letters through lenses the clinician presents."""

    #: The protocol table holding ``letters_per_line`` (``"duel"``, ``"ranking"``).
    section: str

    def __init__(self, win, protocol, calibration, optimizer, responses, record: Callable, *, glyphs=None, **options):
        super().__init__(win, protocol, calibration, optimizer, responses, record, **options)
        self.line = LetterLineStim(win, glyphs, color="black")
        self.letters_per_line = getattr(protocol, self.section).letters_per_line

    def letters_for(self, index: int) -> str:
        """Trial ``index``'s line, drawn from ``(seed, index)``: distinct letters while the
        alphabet has enough of them."""
        alphabet = list(self.protocol.letters.alphabet)
        n = self.letters_per_line
        rng = np.random.default_rng(np.random.SeedSequence([self.seed, index, 4]))
        return "".join(rng.choice(alphabet, size=n, replace=n > len(alphabet)))

    def _lenses_prompt(self, lenses_d) -> bool:
        convention = self.protocol.lens.cylinder
        listed = "\n".join(f"Lens {k}:  {format_lens(lens, convention)}" for k, lens in enumerate(lenses_d, start=1))
        count = LENS_COUNT_WORDS.get(len(lenses_d), str(len(lenses_d)))
        return self._wait_or_pause(
            f"Clinician: present the {count} lenses\n\n{listed}\n\nthen press {self.protocol.keys.confirm.upper()}"
        )

    def _note_answer(self, index: int, answer: str) -> None:
        """Add ``answer`` (``1``, ``2``, ``S``; ``2>1>3``) of trial ``index`` to the console's last
        answers, after the answer is stored and told (no console: nothing to do)."""
        if self.console is not None:
            self.console.update(answers=(*self.console.state.answers, f"{self._number(index)}: {answer}"), message="")

    def _present(self, index: int, lenses_d, letter_logmar: float) -> tuple[str, float] | None:
        """Log and prompt the lenses, then prepare trial ``index``'s line: ``(letters, height_px)``,
        or None if the person quit at the prompt."""
        self.log(
            "clinician: "
            + " / ".join(
                f"lens {k} {format_lens(lens, self.protocol.lens.cylinder)}" for k, lens in enumerate(lenses_d, start=1)
            )
        )
        if self.protocol.lens.prompt and not self._lenses_prompt(lenses_d):
            return None
        letters = self.letters_for(index)
        height_px = self.calibration.letter_height_px(letter_logmar)
        self.line.set_letters(letters, height_px)
        return letters, height_px
