"""The ranking loop: "put these lenses in order, clearest first" with a line of letters.

One ranking (an optimizer with ``ask() -> RankingTrial`` and ``tell(trial, order)``, ``order`` the
lens indices clearest first; :class:`lensopt.refraction.rankings.RankingRefractionOptimizer` or any
optimizer with that interface; or ``ask() -> PrescriptionRankingTrial``, the full prescription's
:class:`lensopt.refraction.prescription_rankings.PrescriptionRankingOptimizer`, whose lenses carry
their axes: the clinician is shown each in clinical notation and the axes are stored with the order):

1. ``optimizer.ask()`` — the lenses (``[ranking] lenses``, 3 or 4) and the letter size, shown in an
   order drawn from ``(seed, trial)`` (:func:`~lensopt.modes.presentation.presented`) and told as shown;
2. with a clinician prompt (``[lens] prompt``), "Lens 1: S … C … / Lens 2: … / Lens 3: …, press space";
3. optional fixation cross, then a line of ``[ranking] letters_per_line`` letters (as for duels,
   :mod:`lensopt.experiment.line_loop`); the clinician shows it through each lens;
4. the patient presses the lens keys (``[keys] lenses``) one after another, clearest first; the
   order given so far is shown under the line; a lens already ranked is ignored if pressed again,
   and the last lens is implied once the others are ranked. Escape opens the pause screen; after
   resuming the same line is shown again and the order of this trial starts afresh;
5. the complete order goes to ``record`` (durable when it returns) **before** ``optimizer.tell``
   and before anything new is drawn; then a break every N rankings and the inter-trial interval.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable

from lensopt.experiment.keyboard import KeyPress
from lensopt.experiment.line_loop import LetterLineLoop, format_lens
from lensopt.experiment.loop_screens import TEXT_HEIGHT_PX, is_mirrored
from lensopt.modes.presentation import presented
from lensopt.refraction.acuity_text import logmar_text
from lensopt.refraction.prescription_rankings import PrescriptionRankingTrial
from lensopt.store import RankingTrialRecord

PROGRESS_MARGIN_PX = 2 * TEXT_HEIGHT_PX
"""Distance from the bottom of the window to the line showing the order given so far (px)."""


class _OrderInProgress:
    """The order being given for one ranking, one lens key at a time (see the module docstring)."""

    def __init__(self, loop: RankingLoop, trial, letters: str, index: int, n_lenses: int):
        self.loop, self.trial, self.letters, self.index, self.n_lenses = loop, trial, letters, index, n_lenses
        self.given: list[int] = []
        self.key_rt_s: list[float | None] = []
        self.hidden = False  # the line was hidden after [timing] letter_s

    @property
    def complete(self) -> bool:
        return len(self.given) >= self.n_lenses - 1

    @property
    def order(self) -> tuple[int, ...]:
        """The lens indices given, then those left (the last one implied), clearest first."""
        return tuple(self.given) + tuple(i for i in range(self.n_lenses) if i not in self.given)

    def draw(self) -> None:
        if not self.hidden:
            self.loop.line.draw()
        if self.given:
            self.loop.progress.text = "Clearest first:  " + "  >  ".join(f"lens {i + 1}" for i in self.given)
            self.loop.progress.draw()

    def respond(self, timeout_s: float | None) -> KeyPress | None:
        """Lens keys until the order is complete: the last key; the pause key (the order starts
        afresh when the line is shown again); or None if ``timeout_s`` passed (the line is hidden)."""
        loop = self.loop
        deadline = None if timeout_s is None else time.monotonic() + timeout_s
        while True:
            remaining = None if deadline is None else max(deadline - time.monotonic(), 0.0)
            press = loop.responses.ranking_response(
                self.trial, self.letters, loop.response_keys, remaining, index=self.index, given=tuple(self.given)
            )
            if press is None:
                self.hidden = True
                return None
            if press.key == loop.protocol.keys.pause:
                self.given.clear()
                self.key_rt_s.clear()
                self.hidden = False
                return press
            lens = loop.lens_for_key[press.key]
            if lens in self.given:
                loop.log(f"key {press.key} again: lens {lens + 1} is already ranked; ignored")
                continue
            self.given.append(lens)
            self.key_rt_s.append(press.rt_s)
            if self.complete:
                return press
            self.draw()  # show the order so far; the reaction-time clock keeps running
            loop.win.flip()
            if loop.console is not None:
                loop.console.update(
                    message="Order so far, clearest first: " + " > ".join(str(i + 1) for i in self.given)
                )


class RankingLoop(LetterLineLoop):
    """Rankings ``first_index..n_trials``; see the module docstring. ``record`` receives
    :class:`~lensopt.store.RankingTrialRecord` objects."""

    unit = "rankings"
    section = "ranking"

    def __init__(self, win, protocol, calibration, optimizer, responses, record: Callable, **options):
        from psychopy import visual

        super().__init__(win, protocol, calibration, optimizer, responses, record, **options)
        keys = protocol.keys
        self.n_lenses = protocol.ranking.lenses
        self.lens_keys = keys.lenses[: self.n_lenses]
        self.lens_for_key = {key: i for i, key in enumerate(self.lens_keys)}
        self.response_keys = [*self.lens_keys, keys.pause]
        self.progress = visual.TextStim(
            win,
            units="pix",
            height=TEXT_HEIGHT_PX,
            color="black",
            autoLog=False,
            flipHoriz=is_mirrored(win),
            pos=(0, -win.size[1] / 2 + PROGRESS_MARGIN_PX),
        )

    def _patient_instructions(self) -> str:
        keys = self.protocol.keys
        listed = "     ".join(f"{key.upper()}: lens {k}" for k, key in enumerate(self.lens_keys, start=1))
        return (
            f"A line of letters will appear. Look at it through each of the {self.n_lenses} lenses.\n"
            "Put the lenses in order, clearest first: press the key of the clearest lens, then of the "
            f"next one.\n\n{listed}\n{keys.pause.upper()} pauses.\n\n"
        )

    def _console_instructions(self) -> str:
        return (
            f"The patient looks at a line of letters through each of the {self.n_lenses} lenses and puts "
            "them in order, clearest first; press the lens keys in that order (the last is implied).\n"
        )

    def _answer_keys_text(self) -> str:
        keys = self.protocol.keys
        lens_keys = ", ".join(key.upper() for key in self.lens_keys)
        return (
            f"Keys: {lens_keys}: the lenses, clearest first (the last is implied)   ·   "
            f"{keys.pause.upper()}: pause / stop"
        )

    def _question(self) -> str:
        return "clearest lens first"

    def _answer_text(self, record) -> str:
        """``2>1>3``: the lenses in the order given, clearest first."""
        return ">".join(str(i + 1) for i in record.order)

    def _trial(self, index: int, n_trials: int) -> bool:
        trial = presented(self._ask(), self.seed, index, self.protocol.ranking.order)  # told as shown
        decision_ms = self.optimizer.last_decision_ms
        full = isinstance(trial, PrescriptionRankingTrial)  # the full prescription: lenses with their axes
        lenses = trial.lenses if full else trial.lenses_d
        if len(lenses) != self.n_lenses:
            raise RuntimeError(
                f"the optimizer asked for {len(lenses)} lenses; the protocol ranks {self.n_lenses} (ranking.lenses)"
            )
        prepared = self._present(index, lenses, trial.letter_logmar)
        if prepared is None:
            return False
        letters, height_px = prepared
        ordering = _OrderInProgress(self, trial, letters, index, self.n_lenses)
        shown = self._show_and_answer(index, ordering.draw, ordering.respond)
        if shown is None:
            return False
        press, presented_at = shown.press, shown.presented_at
        answered_at = time.time()
        if press is None:  # the protocol refuses a response timeout for rankings
            raise RuntimeError("a ranking was not answered; ranking protocols wait for the order")
        order = ordering.order
        extra = {"letter_height_px": float(height_px), "key_rt_s": ordering.key_rt_s}
        extra.update(shown.pause_extra())
        if math.isfinite(decision_ms):
            extra["decision_ms"] = float(decision_ms)
        record = RankingTrialRecord(
            index=index,
            lenses_d=tuple((lens.sphere_d, lens.cylinder_d) for lens in lenses) if full else lenses,
            letter_logmar=trial.letter_logmar,
            letters=letters,
            order=order,
            rt_s=press.rt_s,
            presented_at=presented_at,
            answered_at=max(answered_at, presented_at),
            extra=extra,
            axes_deg=tuple(lens.axis_deg for lens in lenses) if full else None,
        )
        self.record(record)
        self.records.append(record)
        self.optimizer.tell(trial, order)
        self._note_answer(index, record)
        ranked = ", ".join(f"{i + 1} ({format_lens(lenses[i], self.protocol.lens)})" for i in order)
        self.log(
            f"{self._trial_label(index, n_trials)}  {letters} at {logmar_text(trial.letter_logmar)} "
            f"({height_px:.1f} px) -> clearest first: {ranked}"
        )
        return True
