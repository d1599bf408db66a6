"""Feedback modes: what differs between a letter session and a duel session.

A mode (``[protocol] feedback``) knows the session kind it stores, how to build its optimizer (new,
or rebuilt from the stored trials for ``--resume``), how to read and append its trials, which
letter sizes fit the window, how a simulated patient answers, and which trial loop runs it. The
session (:mod:`lensopt.experiment.session`) is the same for every mode.

The duel mode needs an optimizer with ``ask() -> DuelTrial``, ``tell(trial, answer)`` (answers
``"first"``, ``"second"``, ``"same"``), ``best_lens()``, ``settings_dict()``, ``n_trials`` and a
``from_settings(settings, history)`` rebuild: :class:`lensopt.duel_refraction.DuelRefractionOptimizer`
today; :attr:`DuelMode.optimizer_class` is the one place to put another model behind it.
"""

from __future__ import annotations

from lensopt.errors import StoreError
from lensopt.experiment.calibration import Calibration
from lensopt.experiment.optotypes import line_width_letters
from lensopt.experiment.protocol import Protocol
from lensopt.store.records import DUEL_KIND, LETTERS_KIND
from lensopt.trial import Trial


def check_consecutive(records) -> None:
    """Refuse gaps in the stored trial numbers (a session resumes after trial k only if 1..k are there)."""
    for expected, record in enumerate(records, start=1):
        if record.index != expected:
            raise StoreError(f"stored trials jump from {expected - 1} to {record.index}; the session cannot be resumed")


def _simulated_options(protocol: Protocol, keyboard) -> dict:
    return dict(response_delay_s=protocol.timing.simulated_response_s, keyboard=keyboard,
                pause_key=protocol.keys.pause, confirm_key=protocol.keys.confirm)


class LettersMode:
    """One letter per trial, named with the letter keys (``RefractionOptimizer``)."""

    kind = LETTERS_KIND

    def new_optimizer(self, protocol: Protocol, seed: int, letter_bounds_logmar):
        from lensopt.optimizer import RefractionOptimizer

        o = protocol.optimizer
        return RefractionOptimizer(
            rule=o.rule, seed=seed, sphere_bounds_d=o.sphere_bounds_d, cylinder_bounds_d=o.cylinder_bounds_d,
            letter_bounds_logmar=tuple(letter_bounds_logmar), n_initial=o.n_initial,
            lens_step_d=protocol.lens_step_d, inference=o.inference, n_alternatives=len(protocol.letters.alphabet),
        )

    def rebuild_optimizer(self, settings: dict, records):
        """The optimizer of a stored session, replayed from its trials."""
        from lensopt.optimizer import RefractionOptimizer

        check_consecutive(records)
        history = [(Trial(sphere_d=r.sphere_d, cylinder_d=r.cylinder_d, letter_logmar=r.letter_logmar), r.correct)
                   for r in records]
        return RefractionOptimizer.from_settings(settings, history)

    def stored_trials(self, store, session_id: int) -> list:
        return store.trials(session_id)

    def append(self, store, session_id: int, record) -> None:
        store.append_trial(session_id, record)

    def renderable_logmar(self, protocol: Protocol, calibration: Calibration, window_size_px) -> tuple[float, float]:
        return calibration.renderable_logmar(int(window_size_px[1]))

    def simulated_source(self, protocol: Protocol, seed: int, keyboard):
        from lensopt.experiment.keyboard import SimulatedSource

        return SimulatedSource(protocol.simulated.patient_settings(), protocol.letters.alphabet, seed,
                               **_simulated_options(protocol, keyboard))

    def loop(self, win, protocol, calibration, optimizer, responses, record, records, **options):
        from lensopt.experiment.loop import TrialLoop

        return TrialLoop(win, protocol, calibration, optimizer, responses, record,
                         previous_letter=records[-1].letter if records else None, **options)


class DuelMode:
    """Two lenses, a line of letters, "one or two — or the same?" (``DuelRefractionOptimizer``)."""

    kind = DUEL_KIND

    @property
    def optimizer_class(self):
        from lensopt.duel_refraction import DuelRefractionOptimizer

        return DuelRefractionOptimizer

    def new_optimizer(self, protocol: Protocol, seed: int, letter_bounds_logmar):
        o = protocol.optimizer
        return self.optimizer_class(
            rule=o.rule, seed=seed, sphere_bounds_d=o.sphere_bounds_d, cylinder_bounds_d=o.cylinder_bounds_d,
            letter_bounds_logmar=tuple(letter_bounds_logmar), n_initial=o.n_initial,
            lens_step_d=protocol.lens_step_d, inference=o.inference, model=protocol.duel.model,
        )

    def rebuild_optimizer(self, settings: dict, records):
        """The optimizer of a stored duel session, told every stored answer (ties included)."""
        from lensopt.duel_refraction import DuelTrial

        check_consecutive(records)
        history = [(DuelTrial(r.first_lens_d, r.second_lens_d, r.letter_logmar), r.answer) for r in records]
        return self.optimizer_class.from_settings(settings, history)

    def stored_trials(self, store, session_id: int) -> list:
        return store.duel_trials(session_id)

    def append(self, store, session_id: int, record) -> None:
        store.append_duel_trial(session_id, record)

    def renderable_logmar(self, protocol: Protocol, calibration: Calibration, window_size_px) -> tuple[float, float]:
        """The line of letters must fit the window's width as well as its height."""
        return calibration.renderable_logmar(
            int(window_size_px[1]), window_width_px=int(window_size_px[0]),
            line_width_letters=line_width_letters(protocol.duel.letters_per_line))

    def simulated_source(self, protocol: Protocol, seed: int, keyboard):
        from lensopt.experiment.keyboard import SimulatedDuelSource
        from lensopt.experiment.protocol import DUEL_ANSWER_KEYS

        answer_keys = {answer: getattr(protocol.keys, answer) for answer in DUEL_ANSWER_KEYS}
        return SimulatedDuelSource(protocol.simulated.patient_settings(), protocol.letters.alphabet, seed,
                                   answer_keys, tie_threshold=protocol.simulated.tie_threshold,
                                   **_simulated_options(protocol, keyboard))

    def loop(self, win, protocol, calibration, optimizer, responses, record, records, **options):
        from lensopt.experiment.duel_loop import DuelLoop

        return DuelLoop(win, protocol, calibration, optimizer, responses, record, **options)


MODES = {"letters": LettersMode(), "duel": DuelMode()}
"""``[protocol] feedback`` -> its mode."""


def mode_for(protocol: Protocol):
    """The feedback mode of ``protocol``."""
    return MODES[protocol.feedback_mode]
