"""A simulated refraction session: a SimulatedPatient answers a refraction optimizer.

Pure core (no UI): the ``lensopt simulate`` command, the benchmarks and the tests run sessions
through :func:`simulate`, which takes a feedback mode of :mod:`lensopt.modes.registry` (its
simulated answer) and runs :func:`lensopt.asktell.run_session`; :func:`simulate_session`
(letters), :func:`simulate_duel_session` and :func:`simulate_ranking_session` are it with one mode.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field

import numpy as np

from lensopt.asktell import run_session
from lensopt.modes.base import FeedbackMode
from lensopt.modes.registry import get_mode
from lensopt.observer import SimulatedPatient, draw_patients
from lensopt.refraction.duels import DuelRefractionOptimizer
from lensopt.refraction.lens import Lens, PowerVector
from lensopt.refraction.letters import RefractionOptimizer
from lensopt.refraction.rankings import RankingRefractionOptimizer
from lensopt.stopping import StopRule

#: Trial counts at which the reported lens is scored along the way (when the session gets there).
DEFAULT_CHECKPOINTS = (30, 60, 100, 260)


@dataclass(frozen=True)
class LensScore:
    """How good a reported lens is for a patient."""

    trials: int
    best_lens_d: tuple[float, float]
    va_error_logmar: float  # acuity with the lens minus the patient's best acuity
    sphere_error_d: float
    cylinder_error_d: float


@dataclass(frozen=True)
class SimulationResult:
    rule: str
    seed: int
    trials: int
    slope: float
    true_correction_d: tuple[float, float]
    final: LensScore
    checkpoints: tuple[LensScore, ...]
    latency_ms: dict = field(default_factory=dict)
    #: The trial after which the stopping rule ended the session (``use_stop``), else None.
    stopped_at: int | None = None
    #: :meth:`lensopt.refraction.certainty.LensCertainty.to_dict` of the final lens (letter sessions), else None.
    certainty: dict | None = None
    #: The :class:`lensopt.stopping.StopRule` dict the session ran with (``use_stop``), else None.
    stop: dict | None = None
    #: Letter sessions: how many letters the patient read through the reported lens (within a
    #: phoropter step, :func:`lensopt.refraction.shown.letters_through`); else None.
    letters_through_lens: int | None = None

    def to_dict(self) -> dict:
        final = asdict(self.final)
        certainty = self.certainty
        return {
            "rule": self.rule,
            "seed": self.seed,
            "trials": self.trials,
            "slope": self.slope,
            "true_correction_d": list(self.true_correction_d),
            "best_lens_d": list(self.final.best_lens_d),
            "va_error_logmar": final["va_error_logmar"],
            "sphere_error_d": final["sphere_error_d"],
            "cylinder_error_d": final["cylinder_error_d"],
            "latency_ms": self.latency_ms,
            "checkpoints": [asdict(c) | {"best_lens_d": list(c.best_lens_d)} for c in self.checkpoints],
            "stopped_at": self.stopped_at,
            "stop": self.stop,
            "stop_reason": stop_reason(
                self.stop,
                self.stopped_at,
                None if certainty is None else certainty["confidence"],
                self.letters_through_lens,
            ),
            "confidence": None if certainty is None else certainty["confidence"],
            "lens_interval_d": None
            if certainty is None
            else {"sphere": list(certainty["sphere_interval_d"]), "cylinder": list(certainty["cylinder_interval_d"])},
            "letters_through_lens": self.letters_through_lens,
        }


def stop_reason(
    stop: dict | None, stopped_at: int | None, confidence: float | None, letters_through: int | None = None
) -> str | None:
    """Why a simulated session with stopping rule ``stop`` (its ``to_dict()``) ended at
    ``stopped_at`` with ``letters_through`` letters read through its lens: ``"confidence"`` or
    ``"max_trials"`` (:meth:`StopRule.reason`); None when it did not stop (no rule)."""
    rule = StopRule.from_dict(stop)
    if rule is None or stopped_at is None:
        return None
    return rule.reason(stopped_at, confidence, letters_through)


def score_lens(patient: SimulatedPatient, lens, trials: int) -> LensScore:
    sphere, cylinder = lens
    true_sphere, true_cylinder = patient.true_correction_d
    va = float(patient.visual_acuity(sphere, cylinder))
    return LensScore(
        trials=trials,
        best_lens_d=(float(sphere), float(cylinder)),
        va_error_logmar=va - patient.best_acuity_logmar,
        sphere_error_d=abs(sphere - true_sphere),
        cylinder_error_d=abs(cylinder - true_cylinder),
    )


def make_patient(seed: int, slope: float = 5.0, true_correction_d=None, **patient_kwargs) -> SimulatedPatient:
    """The patient of a seeded simulation: its correction drawn uniformly in [−3, 3]² D unless given."""
    if true_correction_d is None:
        return draw_patients(1, seed, slope=slope, **patient_kwargs)[0]
    patient_seed = int(np.random.SeedSequence([seed, 1]).generate_state(1)[0])
    return SimulatedPatient(*true_correction_d, **{"slope": slope, "seed": patient_seed, **patient_kwargs})


def latency_summary(latencies_ms) -> dict:
    values = np.asarray(latencies_ms, float)
    if values.size == 0:
        return {"median": None, "p95": None, "max": None}
    return {"median": float(np.median(values)), "p95": float(np.percentile(values, 95)), "max": float(values.max())}


def simulate(
    mode: FeedbackMode | str,
    patient: SimulatedPatient,
    optimizer,
    n_trials: int,
    checkpoints=DEFAULT_CHECKPOINTS,
    progress=None,
    use_stop: bool = False,
    **answer_options,
) -> SimulationResult:
    """Run ``n_trials`` trials of feedback ``mode`` (a :class:`lensopt.modes.base.FeedbackMode` or
    its kind): ``patient`` answers ``optimizer`` as the mode says
    (:meth:`~lensopt.modes.base.FeedbackMode.responder`, with ``answer_options`` such as a duel's
    ``tie_threshold``); ``progress`` (optional) is called with the trial number. The reported lens
    is scored at the checkpoints the session passes and at the end.

    ``use_stop`` (modes with a stopping rule: letters): end the session after the first trial at
    which ``optimizer.should_stop()`` is True (its :class:`lensopt.stopping.StopRule`; ``n_trials``
    still caps it). With such a mode the result's ``certainty`` (confidence and 95 % intervals of
    the final lens) is computed once, at the end, with or without the stopping rule."""
    mode = get_mode(mode) if isinstance(mode, str) else mode
    if use_stop and (not mode.certainty or optimizer.stop is None):
        raise ValueError("use_stop needs an optimizer with a stopping rule (RefractionOptimizer(stop=StopRule(...)))")
    return _simulate(
        patient,
        optimizer,
        n_trials,
        checkpoints,
        progress,
        mode.responder(patient, **answer_options),
        stop=optimizer.should_stop if use_stop else None,
        certainty=mode.certainty,
    )


def simulate_session(
    patient: SimulatedPatient,
    optimizer: RefractionOptimizer,
    n_trials: int,
    checkpoints=DEFAULT_CHECKPOINTS,
    progress=None,
    use_stop: bool = False,
) -> SimulationResult:
    """A letter refraction: :func:`simulate` with the letters mode (the patient names a letter)."""
    return simulate("letters", patient, optimizer, n_trials, checkpoints, progress, use_stop=use_stop)


def simulate_duel_session(
    patient: SimulatedPatient,
    optimizer: DuelRefractionOptimizer,
    n_trials: int,
    checkpoints=DEFAULT_CHECKPOINTS,
    progress=None,
    tie_threshold=0.0,
) -> SimulationResult:
    """A duel refraction: :func:`simulate` with the duel mode. On each trial the patient says which
    of two lenses makes letters of the asked size clearer, or that they look the same
    (:meth:`SimulatedPatient.duel_answer`, Gumbel noise, threshold ``tie_threshold``)."""
    return simulate("duel", patient, optimizer, n_trials, checkpoints, progress, tie_threshold=tie_threshold)


def simulate_ranking_session(
    patient: SimulatedPatient,
    optimizer: RankingRefractionOptimizer,
    n_trials: int,
    checkpoints=DEFAULT_CHECKPOINTS,
    progress=None,
) -> SimulationResult:
    """A ranking refraction: :func:`simulate` with the ranking mode. On each trial the patient
    orders the lenses, clearest first (:meth:`SimulatedPatient.rank_lenses`)."""
    return simulate("ranking", patient, optimizer, n_trials, checkpoints, progress)


def _simulate(patient, optimizer, n_trials, checkpoints, progress, respond, stop, certainty) -> SimulationResult:
    """:func:`lensopt.asktell.run_session` with the patient's answers, scoring ``optimizer.best()``
    at the checkpoints it passes (before the last trial) and at the end."""
    if isinstance(n_trials, bool) or not isinstance(n_trials, int) or n_trials < 1:
        raise ValueError(f"the number of trials must be a positive integer, got {n_trials!r}")
    wanted = {c for c in checkpoints if c < n_trials}
    scores = []

    def on_trial(t, trial, answer):
        if t in wanted:
            scores.append(score_lens(patient, optimizer.best(), t))
        if progress is not None:
            progress(t)

    run = run_session(optimizer, respond, n_trials, on_trial=on_trial, stop=stop)
    final = score_lens(patient, optimizer.best(), run.n_trials)
    settings = optimizer.settings_dict()
    return SimulationResult(
        rule=settings["rule"],
        seed=settings["seed"],
        trials=run.n_trials,
        slope=patient.slope,
        true_correction_d=patient.true_correction_d,
        final=final,
        checkpoints=tuple(s for s in scores if s.trials < run.n_trials) + (final,),
        latency_ms=latency_summary(run.decision_ms),
        stopped_at=run.n_trials if run.stopped else None,
        certainty=optimizer.certainty().to_dict() if certainty else None,
        stop=optimizer.stop.to_dict() if stop is not None else None,
        letters_through_lens=(
            optimizer.letters_through_reported()
            if certainty and hasattr(optimizer, "letters_through_reported")
            else None
        ),
    )


# ---------------------------------------------------------------------------------------------
# The full prescription (issue 16): sphere, cylinder and axis, scored as power vectors
# ---------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class PrescriptionScore:
    """How far a reported prescription is from the patient's correction, as power vectors (D):
    ``power_vector_error_d`` = reported − truth per coordinate (signed: a negative ``M`` is too
    minus), ``blur_error_d`` its length, of the unrounded estimate; ``lens_error_d`` and
    ``lens_blur_error_d`` the same of the prescription as written (rounded to the phoropter's 0.25 D
    and 1°: what the patient would wear); ``va_error_logmar`` the acuity lost with that lens (the
    patient's own acuity law, accommodation included)."""

    trials: int
    prescription: str
    power_vector_d: tuple[float, float, float]
    power_vector_error_d: tuple[float, float, float]
    blur_error_d: float
    va_error_logmar: float
    lens_error_d: tuple[float, float, float]
    lens_blur_error_d: float

    def to_dict(self) -> dict:
        return {
            "trials": self.trials,
            "prescription": self.prescription,
            "power_vector_d": dict(zip(("M", "J0", "J45"), self.power_vector_d)),
            "power_vector_error_d": dict(zip(("M", "J0", "J45"), self.power_vector_error_d)),
            "blur_error_d": self.blur_error_d,
            "lens_error_d": dict(zip(("M", "J0", "J45"), self.lens_error_d)),
            "lens_blur_error_d": self.lens_blur_error_d,
            "va_error_logmar": self.va_error_logmar,
        }


def score_prescription(patient: SimulatedPatient, power_vector: PowerVector, trials: int) -> PrescriptionScore:
    """Score the unrounded estimate ``power_vector`` (what a bench compares with the truth) and, for
    the acuity, its phoropter lens (0.25 D, axis 1°: what the patient would wear)."""
    truth = patient.correction.power_vector()
    error = power_vector - truth
    lens = power_vector.to_lens().nearest_phoropter_lens()
    lens_error = lens.power_vector() - truth
    va = float(patient.visual_acuity(lens.sphere_d, lens.cylinder_d, lens.axis_deg))
    return PrescriptionScore(
        trials=trials,
        prescription=lens.format(),
        power_vector_d=(power_vector.m_d, power_vector.j0_d, power_vector.j45_d),
        power_vector_error_d=(error.m_d, error.j0_d, error.j45_d),
        blur_error_d=error.length_d,
        va_error_logmar=va - patient.best_acuity_logmar,
        lens_error_d=(lens_error.m_d, lens_error.j0_d, lens_error.j45_d),
        lens_blur_error_d=lens_error.length_d,
    )


@dataclass(frozen=True)
class PrescriptionResult:
    """A simulated full refraction: the truth, the start, the final prescription (its dict:
    :meth:`lensopt.refraction.prescription.Prescription.to_dict`) and the scores along the way."""

    rule: str
    seed: int
    trials: int
    slope: float
    accommodation_d: float
    truth: str
    start: str | None
    prescription: dict
    final: PrescriptionScore
    checkpoints: tuple[PrescriptionScore, ...]
    latency_ms: dict = field(default_factory=dict)
    stopped_at: int | None = None
    stop: dict | None = None
    #: Letters: how many letters the patient read through the prescribed lens (within a phoropter
    #: step, :func:`lensopt.refraction.shown.letters_through`); None for duels and rankings.
    letters_through_lens: int | None = None

    def to_dict(self) -> dict:
        final = self.final.to_dict()
        return {
            "rule": self.rule,
            "seed": self.seed,
            "trials": self.trials,
            "slope": self.slope,
            "accommodation_d": self.accommodation_d,
            "true_prescription": self.truth,
            "start": self.start,
            "prescription": self.prescription["prescription"],
            "power_vector_error_d": final["power_vector_error_d"],
            "blur_error_d": final["blur_error_d"],
            "lens_error_d": final["lens_error_d"],
            "lens_blur_error_d": final["lens_blur_error_d"],
            "va_error_logmar": final["va_error_logmar"],
            "estimate": self.prescription,
            "confidence": self.prescription.get("confidence"),
            "checkpoints": [c.to_dict() for c in self.checkpoints],
            "latency_ms": self.latency_ms,
            "stopped_at": self.stopped_at,
            "stop": self.stop,
            "stop_reason": stop_reason(
                self.stop, self.stopped_at, self.prescription.get("confidence"), self.letters_through_lens
            ),
            "letters_through_lens": self.letters_through_lens,
        }


#: Feedback of a simulated full refraction: letters named or not, duels "one or two, or the same?",
#: or rankings "put them in order, clearest first".
PRESCRIPTION_FEEDBACK = ("letters", "duel", "ranking")


def simulate_prescription(
    patient: SimulatedPatient,
    optimizer,
    n_trials: int,
    checkpoints=DEFAULT_CHECKPOINTS,
    progress=None,
    use_stop: bool = False,
    feedback: str = "letters",
    **answer_options,
) -> PrescriptionResult:
    """A full refraction: ``patient`` answers the lenses (with their axes) that ``optimizer`` asks
    for. ``feedback="letters"``: the patient names letters through them — ``optimizer`` a
    :class:`lensopt.refraction.PrescriptionOptimizer` or anything with its API (``best() ->
    PowerVector``, ``prescription()``, ``start``/``box``; the ideal observer of
    :mod:`lensopt.bench.ideal_prescription`); ``feedback="duel"``: the patient says which of two
    lenses is clearer, or "the same" (the duel mode's answer; ``answer_options``: its
    ``tie_threshold``) — ``optimizer`` a :class:`lensopt.refraction.prescription_duels.PrescriptionDuelOptimizer`;
    ``feedback="ranking"``: the patient orders three lenses, clearest first — ``optimizer`` a
    :class:`lensopt.refraction.prescription_rankings.PrescriptionRankingOptimizer`.
    Scored with :func:`score_prescription` at the checkpoints it passes and at the end; ``use_stop``
    ends it by the optimizer's stopping rule as in :func:`simulate` (letters only)."""
    if feedback not in PRESCRIPTION_FEEDBACK:
        raise ValueError(f"unknown feedback {feedback!r}; choose from: {', '.join(PRESCRIPTION_FEEDBACK)}")
    if isinstance(n_trials, bool) or not isinstance(n_trials, int) or n_trials < 1:
        raise ValueError(f"the number of trials must be a positive integer, got {n_trials!r}")
    if use_stop and getattr(optimizer, "stop", None) is None:
        raise ValueError("use_stop needs an optimizer with a stopping rule (stop=StopRule(...))")
    wanted = {c for c in checkpoints if c < n_trials}
    scores: list[PrescriptionScore] = []

    def on_trial(t, trial, answer):
        if t in wanted:
            scores.append(score_prescription(patient, optimizer.best(), t))
        if progress is not None:
            progress(t)

    respond = get_mode(feedback).responder(patient, **answer_options)
    run = run_session(optimizer, respond, n_trials, on_trial=on_trial, stop=optimizer.should_stop if use_stop else None)
    final = score_prescription(patient, optimizer.best(), run.n_trials)
    start = getattr(optimizer.box, "start", None)
    return PrescriptionResult(
        rule=getattr(optimizer, "rule", optimizer.settings.rule),
        seed=optimizer.settings.seed,
        trials=run.n_trials,
        slope=patient.slope,
        accommodation_d=patient.accommodation_d,
        truth=patient.correction.format(),
        start=None if start is None else Lens.format(start),
        prescription=optimizer.prescription().to_dict(),
        final=final,
        checkpoints=tuple(s for s in scores if s.trials < run.n_trials) + (final,),
        latency_ms=latency_summary(run.decision_ms),
        stopped_at=run.n_trials if run.stopped else None,
        stop=optimizer.stop.to_dict() if use_stop else None,
        letters_through_lens=(
            optimizer.letters_through_reported()
            if feedback == "letters" and hasattr(optimizer, "letters_through_reported")
            else None
        ),
    )
