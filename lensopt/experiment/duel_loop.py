"""The duel loop: "one or two — or the same?" with a line of letters seen through two lenses.

One duel (an optimizer with ``ask() -> DuelTrial`` and ``tell(trial, answer)``, answers
``"first"``, ``"second"`` or ``"same"``; :class:`lensopt.refraction.duels.DuelRefractionOptimizer`
or any optimizer with that interface):

1. ``optimizer.ask()`` — two lenses and the letter size (logMAR), shown in an order drawn from
   ``(seed, trial)`` (:func:`~lensopt.modes.presentation.presented`: the
   rule's champion is lens 1 half the time), and told to the optimizer as shown;
2. with a clinician prompt (``[lens] prompt``), "Lens 1: S … C … / Lens 2: S … C …, press space";
3. optional fixation cross, then a line of ``[duel] letters_per_line`` letters drawn from
   ``(seed, trial)``, one letter width apart, ``calibration.letter_height_px(trial.letter_logmar)``
   tall; the clinician shows them through lens 1 and lens 2;
4. the answer keys (``[keys] first``, ``second``, ``same``); Escape opens the pause screen and the
   same line is shown again after resuming;
5. the answer goes to ``record`` (durable when it returns) **before** ``optimizer.tell`` and
   before anything new is drawn; then a break every N duels and the inter-trial interval.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable

from lensopt.experiment.line_loop import LetterLineLoop, format_lens
from lensopt.experiment.protocol import DUEL_ANSWER_KEYS
from lensopt.modes.presentation import presented
from lensopt.refraction.acuity_text import logmar_text
from lensopt.refraction.prescription_duels import PrescriptionDuelTrial
from lensopt.store import DuelTrialRecord

__all__ = ["DuelLoop", "format_lens"]

#: How the console lists a duel's answer: the lens judged clearer, or S (the same).
CONSOLE_ANSWER = {"first": "1", "second": "2", "same": "S"}


class DuelLoop(LetterLineLoop):
    """Duels ``first_index..n_trials``; see the module docstring. ``record`` receives
    :class:`~lensopt.store.DuelTrialRecord` objects."""

    unit = "comparisons"
    section = "duel"

    def __init__(self, win, protocol, calibration, optimizer, responses, record: Callable, **options):
        super().__init__(win, protocol, calibration, optimizer, responses, record, **options)
        keys = protocol.keys
        self.answer_for_key = {getattr(keys, answer): answer for answer in DUEL_ANSWER_KEYS}
        self.response_keys = [*self.answer_for_key, keys.pause]

    def _patient_instructions(self) -> str:
        keys = self.protocol.keys
        return (
            "A line of letters will appear. Look at it through lens one, then through lens two.\n"
            "Which makes the letters clearer?\n\n"
            f"{keys.first.upper()}: lens one     {keys.second.upper()}: lens two     "
            f"{keys.same.upper()}: the same\n{keys.pause.upper()} pauses.\n\n"
        )

    def _console_instructions(self) -> str:
        return (
            "The patient looks at a line of letters through lens 1, then lens 2, and says which makes "
            "the letters clearer, or that they are the same; press the key of the answer.\n"
        )

    def _answer_keys_text(self) -> str:
        keys = self.protocol.keys
        return (
            f"Keys: {keys.first.upper()}: lens 1 clearer   ·   {keys.second.upper()}: lens 2 clearer   ·   "
            f"{keys.same.upper()}: the same   ·   {keys.pause.upper()}: pause / stop"
        )

    def _question(self) -> str:
        return "1 or 2 — or the same?"

    def _answer_text(self, record) -> str:
        """``1``, ``2`` or ``S``: the lens the patient found clearer, or the same."""
        return CONSOLE_ANSWER[record.answer]

    def _trial(self, index: int, n_trials: int) -> bool:
        trial = presented(self._ask(), self.seed, index, self.protocol.duel.order)  # told as shown
        decision_ms = self.optimizer.last_decision_ms
        full = isinstance(trial, PrescriptionDuelTrial)  # the full prescription: lenses with their axes
        lenses = (trial.first_lens, trial.second_lens) if full else (trial.first_lens_d, trial.second_lens_d)
        prepared = self._present(index, lenses, trial.letter_logmar)
        if prepared is None:
            return False
        letters, height_px = prepared
        shown = self._show_and_answer(
            index,
            self.line.draw,
            lambda timeout_s: self.responses.duel_response(trial, letters, self.response_keys, timeout_s, index=index),
        )
        if shown is None:
            return False
        press, presented_at = shown.press, shown.presented_at
        answered_at = time.time()
        if press is None:  # the protocol refuses a response timeout for duels
            raise RuntimeError("a duel was not answered; duel protocols wait for the answer")
        answer = self.answer_for_key[press.key]
        extra = {"letter_height_px": float(height_px)}
        extra.update(shown.pause_extra())
        if math.isfinite(decision_ms):
            extra["decision_ms"] = float(decision_ms)
        if full:
            (first_s, first_c), (second_s, second_c) = ((lens.sphere_d, lens.cylinder_d) for lens in lenses)
            axes = dict(first_axis_deg=trial.first_lens.axis_deg, second_axis_deg=trial.second_lens.axis_deg)
        else:
            (first_s, first_c), (second_s, second_c), axes = lenses[0], lenses[1], {}
        record = DuelTrialRecord(
            index=index,
            first_sphere_d=first_s,
            first_cylinder_d=first_c,
            second_sphere_d=second_s,
            second_cylinder_d=second_c,
            letter_logmar=trial.letter_logmar,
            letters=letters,
            answer=answer,
            rt_s=press.rt_s,
            presented_at=presented_at,
            answered_at=max(answered_at, presented_at),
            extra=extra,
            **axes,
        )
        self.record(record)
        self.records.append(record)
        self.optimizer.tell(trial, answer)
        self._note_answer(index, record)
        self.log(
            f"{self._trial_label(index, n_trials)}  {letters} at {logmar_text(trial.letter_logmar)} "
            f"({height_px:.1f} px) -> {answer}"
        )
        return True
