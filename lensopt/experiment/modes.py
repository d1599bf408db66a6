"""The experiment's side of the feedback modes: what a letter, a duel and a ranking session show.

The domain parts of a mode come from :mod:`lensopt.modes.registry` (``[protocol] feedback`` is the
session kind): the optimizer class and the options only it takes, the history of stored records,
the store table (by kind). This module adds what only the PsychoPy experiment has: which protocol
options feed the optimizer (:func:`protocol_options`), the line of letters a trial shows and the
letter sizes that fit the window, the simulated keyboard source and the trial loop. :class:`Mode`
holds the shared parts; a subclass per kind names its feedback mode and its UI parts, and
:data:`MODES` maps every kind of the registry to it (a test holds the two equal).

Every optimizer satisfies :class:`lensopt.asktell.AskTellOptimizer` (``ask()``, ``tell(trial,
answer)``, ``best()``, ``n_trials``, ``last_decision_ms``...), has ``settings_dict()`` and a
``from_settings(settings, history)`` rebuild, and takes the box, the letter bounds, ``n_initial``
and ``lens_step_d`` (:class:`lensopt.modes.base.FeedbackMode`).
"""

from __future__ import annotations

from lensopt.errors import StoreError
from lensopt.experiment.calibration import Calibration
from lensopt.experiment.duel_loop import DuelLoop
from lensopt.experiment.keyboard import SimulatedDuelSource, SimulatedRankingSource, SimulatedSource
from lensopt.experiment.loop import TrialLoop
from lensopt.experiment.optotypes import line_width_letters
from lensopt.experiment.protocol import DUEL_ANSWER_KEYS, Protocol
from lensopt.experiment.ranking_loop import RankingLoop
from lensopt.modes.base import EYE_STARTS, FeedbackMode, answered, answers_bar, eye_records, eye_settings
from lensopt.modes.registry import get_mode
from lensopt.refraction.prescription_duels import PrescriptionDuelOptimizer
from lensopt.refraction.prescription_letters import PrescriptionOptimizer
from lensopt.refraction.prescription_rankings import PrescriptionRankingOptimizer
from lensopt.store import DuelTrialRecord, RankingTrialRecord, TrialRecord


def check_consecutive(records) -> None:
    """Refuse gaps in the stored trial numbers (a session resumes after trial k only if 1..k are there)."""
    for expected, record in enumerate(records, start=1):
        if record.index != expected:
            raise StoreError(f"stored trials jump from {expected - 1} to {record.index}; the session cannot be resumed")


def protocol_options(protocol: Protocol) -> dict:
    """Every optimizer option a protocol sets; each mode's optimizer takes those it knows
    (:meth:`lensopt.modes.base.FeedbackMode.optimizer_options`): the letters' answer model (guess
    rate 1/letters, the protocol's lapse rate), inference and stopping rule of ``[stop]`` (None
    without it), the duel model, the lenses of a ranking."""
    o = protocol.optimizer
    return dict(
        inference=o.inference,
        n_alternatives=len(protocol.letters.alphabet),
        lapse=o.lapse,
        accommodation_d=o.accommodation_d,
        stop=protocol.stop_rule,
        model=protocol.duel.model,
        n_lenses=protocol.ranking.lenses,
    )


def _simulated_options(protocol: Protocol, keyboard) -> dict:
    return dict(
        response_delay_s=protocol.timing.simulated_response_s,
        keyboard=keyboard,
        pause_key=protocol.keys.pause,
        confirm_key=protocol.keys.confirm,
    )


def start_options(protocol: Protocol, seed: int, letter_bounds_logmar) -> dict:
    """What every optimizer of the full prescription takes from a protocol with a starting
    refraction (``[start]``, ``--start``): the rule, the seed, the start and its box, the letter
    bounds, the initial trials and the axis step (``[lens] axis_step_deg``)."""
    start, o = protocol.start, protocol.optimizer
    if start is None:
        raise ValueError(f"{protocol.source}: a full-prescription session needs a [start] refraction (or --start)")
    start = start.for_eye(protocol.session.eyes[0])  # the first eye's (each eye's: session_settings)
    return dict(
        rule=o.rule,
        seed=seed,
        start=start.lens,
        m_half_width_d=start.m_half_width_d,
        j_half_width_d=start.j_half_width_d,
        letter_bounds_logmar=tuple(letter_bounds_logmar),
        n_initial=o.n_initial,
        axis_step_deg=protocol.lens.axis_step_deg,
    )


def session_settings_of(optimizer, protocol: Protocol) -> dict:
    """The optimizer settings a new session stores: ``optimizer``'s (its first eye's), and in a session
    of both eyes started from each eye's own refraction, every eye's start (:data:`EYE_STARTS`), from
    which each eye's search is rebuilt (:func:`lensopt.modes.base.eye_settings`)."""
    settings = optimizer.settings_dict()
    start = protocol.start
    if start is None or len(start.eyes) < 2 or len(protocol.session.eyes) < 2:
        return settings
    return {**settings, EYE_STARTS: {eye: start.for_eye(eye).lens.format() for eye in protocol.session.eyes}}


class Mode:
    """The parts every feedback mode shares; a subclass names its :attr:`feedback` mode of the
    registry and fills in its user interface (simulated source, loop).

    ``line_section`` names the protocol table whose ``letters_per_line`` sets the line of letters a
    trial shows (``"duel"``, ``"ranking"``), or is None for a single letter.
    """

    feedback: FeedbackMode
    #: The store's record of one answered trial of this mode (a rescue file's lines are read as it).
    record_type: type
    line_section: str | None = None

    @property
    def kind(self) -> str:
        """The session kind stored (the feedback mode's)."""
        return self.feedback.kind

    @property
    def optimizer_class(self):
        return self.feedback.optimizer_class

    def optimizer_options(self, protocol: Protocol) -> dict:
        """Keyword arguments of the optimizer that only this mode has."""
        return self.feedback.optimizer_options(protocol_options(protocol))

    def history(self, records) -> list:
        """``(trial, answer)`` pairs of the stored ``records``, as the optimizer is told them."""
        return self.feedback.history(records)

    def new_optimizer(self, protocol: Protocol, seed: int, letter_bounds_logmar):
        o = protocol.optimizer
        return self.feedback.new_optimizer(
            protocol_options(protocol),
            rule=o.rule,
            seed=seed,
            sphere_bounds_d=o.sphere_bounds_d,
            cylinder_bounds_d=o.cylinder_bounds_d,
            letter_bounds_logmar=tuple(letter_bounds_logmar),
            n_initial=o.n_initial,
            lens_step_d=protocol.lens_step_d,
        )

    def rebuild_optimizer(self, settings: dict, records, eye: str | None = None, progress: bool = False):
        """The optimizer of a stored session (of eye ``eye`` in a session of both eyes), told every
        stored answer for that eye in order but those undone (``void``: kept in the store, never told);
        with ``progress``, a bar on a terminal while a long history is told (it takes seconds)."""
        check_consecutive(records)
        told = answered(eye_records(records, eye))
        what = f"rebuilding {eye}'s search" if eye else "rebuilding the search"
        shown = answers_bar(len(told), what) if progress else None
        return self.feedback.rebuild_optimizer(eye_settings(settings, eye), told, shown)

    def stored_trials(self, store, session_id: int) -> list:
        return store.kind_trials(self.kind, session_id)

    def append(self, store, session_id: int, record) -> None:
        store.append_kind_trial(self.kind, session_id, record)

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
    """One letter per trial, named with the letter keys: ``RefractionOptimizer`` (sphere and
    cylinder), or with a starting refraction (``[start]``, ``--start``) ``PrescriptionOptimizer``
    (sphere, cylinder and axis in a box around it)."""

    feedback = get_mode("letters")
    record_type = TrialRecord

    def new_optimizer(self, protocol: Protocol, seed: int, letter_bounds_logmar):
        if protocol.start is None:
            return super().new_optimizer(protocol, seed, letter_bounds_logmar)
        return PrescriptionOptimizer(
            **start_options(protocol, seed, letter_bounds_logmar),
            lens_step_d=protocol.lens_step_d,
            max_step_d=protocol.lens.max_step_d or None,
            **self.optimizer_options(protocol),
        )

    def simulated_source(self, protocol: Protocol, seed: int, keyboard):
        return SimulatedSource(
            protocol.simulated.patient_settings(),
            protocol.letters.alphabet,
            seed,
            **_simulated_options(protocol, keyboard),
        )

    def loop(self, win, protocol, calibration, optimizer, responses, record, records, **options):
        return TrialLoop(
            win,
            protocol,
            calibration,
            optimizer,
            responses,
            record,
            previous_letter=records[-1].letter if records else None,
            records=records,
            **options,
        )


class DuelMode(Mode):
    """Two lenses, a line of letters, "one or two — or the same?" (``DuelRefractionOptimizer``)."""

    feedback = get_mode("duel")
    record_type = DuelTrialRecord
    line_section = "duel"

    def new_optimizer(self, protocol: Protocol, seed: int, letter_bounds_logmar):
        """``DuelRefractionOptimizer`` (sphere and cylinder), or with a starting refraction
        (``[start]``, ``--start``) ``PrescriptionDuelOptimizer``: sphere, cylinder and axis around it."""
        if protocol.start is None:
            return super().new_optimizer(protocol, seed, letter_bounds_logmar)
        return PrescriptionDuelOptimizer(
            **start_options(protocol, seed, letter_bounds_logmar),
            lens_step_d=protocol.lens_step_d or None,
            inference=protocol.optimizer.inference,
            # the acuity link's guess rate is the letters shown (1/10 for Sloan letters), its lapse the protocol's
            n_alternatives=len(protocol.letters.alphabet),
            model_lapse=protocol.optimizer.lapse,
        )

    def simulated_source(self, protocol: Protocol, seed: int, keyboard):
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
        return DuelLoop(win, protocol, calibration, optimizer, responses, record, records=records, **options)


class RankingMode(Mode):
    """Three (or four) lenses, a line of letters, "put them in order, clearest first"
    (``RankingRefractionOptimizer``)."""

    feedback = get_mode("ranking")
    record_type = RankingTrialRecord
    line_section = "ranking"

    def new_optimizer(self, protocol: Protocol, seed: int, letter_bounds_logmar):
        """``RankingRefractionOptimizer`` (sphere and cylinder), or with a starting refraction
        (``[start]``, ``--start``) ``PrescriptionRankingOptimizer``: sphere, cylinder and axis around it."""
        if protocol.start is None:
            return super().new_optimizer(protocol, seed, letter_bounds_logmar)
        return PrescriptionRankingOptimizer(
            **start_options(protocol, seed, letter_bounds_logmar),
            n_lenses=protocol.ranking.lenses,
            lens_step_d=protocol.lens_step_d or None,
            # the acuity link's guess rate is the letters shown, its lapse the protocol's
            n_alternatives=len(protocol.letters.alphabet),
            model_lapse=protocol.optimizer.lapse,
        )

    def simulated_source(self, protocol: Protocol, seed: int, keyboard):
        return SimulatedRankingSource(
            protocol.simulated.patient_settings(),
            protocol.letters.alphabet,
            seed,
            protocol.keys.lenses[: protocol.ranking.lenses],
            **_simulated_options(protocol, keyboard),
        )

    def loop(self, win, protocol, calibration, optimizer, responses, record, records, **options):
        return RankingLoop(win, protocol, calibration, optimizer, responses, record, records=records, **options)


MODES = {mode.kind: mode for mode in (LettersMode(), DuelMode(), RankingMode())}
"""``[protocol] feedback`` (a kind of :data:`lensopt.modes.registry.registry`) -> its experiment mode."""


def mode_for(protocol: Protocol):
    """The feedback mode of ``protocol``."""
    return MODES[protocol.feedback_mode]
