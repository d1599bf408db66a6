"""Feedback modes: what differs between a letter, a duel and a ranking session.

A mode (``[protocol] feedback``) knows the session kind it stores, how to build its optimizer (new,
or rebuilt from the stored trials for ``--resume``), how to read and append its trials, which
letter sizes fit the window, how a simulated patient answers, and which trial loop runs it. The
session (:mod:`lensopt.experiment.session`) is the same for every mode, and so is most of a mode:
:class:`Mode` builds and rebuilds the optimizer and sizes the letters; a mode says only what is its
own (optimizer class and options, stored records to history, store table, answer source, loop).

Every optimizer satisfies :class:`lensopt.asktell.AskTellOptimizer` (``ask()``, ``tell(trial,
answer)``, ``best()``, ``n_trials``, ``last_decision_ms``...), has ``settings_dict()`` and a
``from_settings(settings, history)`` rebuild, and takes the box, the letter
bounds, ``n_initial`` and ``lens_step_d``: :class:`lensopt.refraction.RefractionOptimizer` (answer:
correct or not), :class:`lensopt.duel_refraction.DuelRefractionOptimizer` (``"first"``,
``"second"``, ``"same"``), :class:`lensopt.ranking_refraction.RankingRefractionOptimizer` (the lens
indices, clearest first). A mode's :attr:`Mode.optimizer_class` is the one place to put another
model behind it.
"""

from __future__ import annotations

from lensopt.errors import StoreError
from lensopt.experiment.calibration import Calibration
from lensopt.experiment.optotypes import line_width_letters
from lensopt.experiment.protocol import Protocol
from lensopt.store.records import DUEL_KIND, LETTERS_KIND, RANKING_KIND
from lensopt.trial import Trial


def check_consecutive(records) -> None:
    """Refuse gaps in the stored trial numbers (a session resumes after trial k only if 1..k are there)."""
    for expected, record in enumerate(records, start=1):
        if record.index != expected:
            raise StoreError(f"stored trials jump from {expected - 1} to {record.index}; the session cannot be resumed")


def _simulated_options(protocol: Protocol, keyboard) -> dict:
    return dict(
        response_delay_s=protocol.timing.simulated_response_s,
        keyboard=keyboard,
        pause_key=protocol.keys.pause,
        confirm_key=protocol.keys.confirm,
    )


class Mode:
    """The parts every feedback mode shares; subclasses fill in the rest.

    ``line_section`` names the protocol table whose ``letters_per_line`` sets the line of letters a
    trial shows (``"duel"``, ``"ranking"``), or is None for a single letter.
    """

    kind: str
    line_section: str | None = None

    @property
    def optimizer_class(self):
        raise NotImplementedError

    def optimizer_options(self, protocol: Protocol) -> dict:
        """Keyword arguments of the optimizer that only this mode has."""
        return {}

    def history(self, records) -> list:
        """``(trial, answer)`` pairs of the stored ``records``, as the optimizer is told them."""
        raise NotImplementedError

    def new_optimizer(self, protocol: Protocol, seed: int, letter_bounds_logmar):
        o = protocol.optimizer
        return self.optimizer_class(
            rule=o.rule,
            seed=seed,
            sphere_bounds_d=o.sphere_bounds_d,
            cylinder_bounds_d=o.cylinder_bounds_d,
            letter_bounds_logmar=tuple(letter_bounds_logmar),
            n_initial=o.n_initial,
            lens_step_d=protocol.lens_step_d,
            **self.optimizer_options(protocol),
        )

    def rebuild_optimizer(self, settings: dict, records):
        """The optimizer of a stored session, told every stored answer in order."""
        check_consecutive(records)
        return self.optimizer_class.from_settings(settings, self.history(records))

    def stored_trials(self, store, session_id: int) -> list:
        raise NotImplementedError

    def append(self, store, session_id: int, record) -> None:
        raise NotImplementedError

    def letters_per_line(self, protocol: Protocol) -> int:
        return 1 if self.line_section is None else getattr(protocol, self.line_section).letters_per_line

    def renderable_logmar(self, protocol: Protocol, calibration: Calibration, window_size_px) -> tuple[float, float]:
        """A single letter must fit the window's height; a line of letters its width as well."""
        if self.line_section is None:
            return calibration.renderable_logmar(int(window_size_px[1]))
        return calibration.renderable_logmar(
            int(window_size_px[1]),
            window_width_px=int(window_size_px[0]),
            line_width_letters=line_width_letters(self.letters_per_line(protocol)),
        )

    def simulated_source(self, protocol: Protocol, seed: int, keyboard):
        raise NotImplementedError

    def loop(self, win, protocol, calibration, optimizer, responses, record, records, **options):
        raise NotImplementedError


class LettersMode(Mode):
    """One letter per trial, named with the letter keys (``RefractionOptimizer``)."""

    kind = LETTERS_KIND

    @property
    def optimizer_class(self):
        from lensopt.refraction import RefractionOptimizer

        return RefractionOptimizer

    def optimizer_options(self, protocol: Protocol) -> dict:
        """The answer model (guess rate 1/letters, the protocol's lapse rate), the inference and the
        stopping rule of ``[stop]`` (None without it)."""
        o = protocol.optimizer
        return dict(
            inference=o.inference, n_alternatives=len(protocol.letters.alphabet), lapse=o.lapse, stop=protocol.stop_rule
        )

    def history(self, records) -> list:
        return [
            (Trial(sphere_d=r.sphere_d, cylinder_d=r.cylinder_d, letter_logmar=r.letter_logmar), r.correct)
            for r in records
        ]

    def stored_trials(self, store, session_id: int) -> list:
        return store.trials(session_id)

    def append(self, store, session_id: int, record) -> None:
        store.append_trial(session_id, record)

    def simulated_source(self, protocol: Protocol, seed: int, keyboard):
        from lensopt.experiment.keyboard import SimulatedSource

        return SimulatedSource(
            protocol.simulated.patient_settings(),
            protocol.letters.alphabet,
            seed,
            **_simulated_options(protocol, keyboard),
        )

    def loop(self, win, protocol, calibration, optimizer, responses, record, records, **options):
        from lensopt.experiment.loop import TrialLoop

        return TrialLoop(
            win,
            protocol,
            calibration,
            optimizer,
            responses,
            record,
            previous_letter=records[-1].letter if records else None,
            **options,
        )


class DuelMode(Mode):
    """Two lenses, a line of letters, "one or two — or the same?" (``DuelRefractionOptimizer``)."""

    kind = DUEL_KIND
    line_section = "duel"

    @property
    def optimizer_class(self):
        from lensopt.duel_refraction import DuelRefractionOptimizer

        return DuelRefractionOptimizer

    def optimizer_options(self, protocol: Protocol) -> dict:
        return dict(inference=protocol.optimizer.inference, model=protocol.duel.model)

    def history(self, records) -> list:
        """Every stored answer, ties included."""
        from lensopt.duel_refraction import DuelTrial

        return [(DuelTrial(r.first_lens_d, r.second_lens_d, r.letter_logmar), r.answer) for r in records]

    def stored_trials(self, store, session_id: int) -> list:
        return store.duel_trials(session_id)

    def append(self, store, session_id: int, record) -> None:
        store.append_duel_trial(session_id, record)

    def simulated_source(self, protocol: Protocol, seed: int, keyboard):
        from lensopt.experiment.keyboard import SimulatedDuelSource
        from lensopt.experiment.protocol import DUEL_ANSWER_KEYS

        answer_keys = {answer: getattr(protocol.keys, answer) for answer in DUEL_ANSWER_KEYS}
        return SimulatedDuelSource(
            protocol.simulated.patient_settings(),
            protocol.letters.alphabet,
            seed,
            answer_keys,
            tie_threshold=protocol.simulated.tie_threshold,
            **_simulated_options(protocol, keyboard),
        )

    def loop(self, win, protocol, calibration, optimizer, responses, record, records, **options):
        from lensopt.experiment.duel_loop import DuelLoop

        return DuelLoop(win, protocol, calibration, optimizer, responses, record, **options)


class RankingMode(Mode):
    """Three (or four) lenses, a line of letters, "put them in order, clearest first"
    (``RankingRefractionOptimizer``)."""

    kind = RANKING_KIND
    line_section = "ranking"

    @property
    def optimizer_class(self):
        from lensopt.ranking_refraction import RankingRefractionOptimizer

        return RankingRefractionOptimizer

    def optimizer_options(self, protocol: Protocol) -> dict:
        return dict(n_lenses=protocol.ranking.lenses)

    def history(self, records) -> list:
        from lensopt.ranking_refraction import RankingTrial

        return [(RankingTrial(r.lenses_d, r.letter_logmar), r.order) for r in records]

    def stored_trials(self, store, session_id: int) -> list:
        return store.ranking_trials(session_id)

    def append(self, store, session_id: int, record) -> None:
        store.append_ranking_trial(session_id, record)

    def simulated_source(self, protocol: Protocol, seed: int, keyboard):
        from lensopt.experiment.keyboard import SimulatedRankingSource

        return SimulatedRankingSource(
            protocol.simulated.patient_settings(),
            protocol.letters.alphabet,
            seed,
            protocol.keys.lenses[: protocol.ranking.lenses],
            **_simulated_options(protocol, keyboard),
        )

    def loop(self, win, protocol, calibration, optimizer, responses, record, records, **options):
        from lensopt.experiment.ranking_loop import RankingLoop

        return RankingLoop(win, protocol, calibration, optimizer, responses, record, **options)


MODES = {"letters": LettersMode(), "duel": DuelMode(), "ranking": RankingMode()}
"""``[protocol] feedback`` -> its mode."""


def mode_for(protocol: Protocol):
    """The feedback mode of ``protocol``."""
    return MODES[protocol.feedback_mode]
