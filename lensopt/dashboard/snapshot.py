"""The frozen data the dashboard draws: one :class:`DashboardSnapshot` per model update.

Built by :mod:`lensopt.dashboard.model` from stored trials; drawn by :mod:`lensopt.dashboard.panels`
(window and report alike). Arrays are read-only numpy arrays. The session's header and trial arrays
are :mod:`lensopt.dashboard.series`.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

import numpy as np

from lensopt.dashboard.series import SessionHeader, TrialSeries, count_text, elapsed_s
from lensopt.dashboard.verdict import EyeEstimate, LensConfidence
from lensopt.refraction.acuity_text import signed_logmar
from lensopt.refraction.lens import diopter_text, two_parameter_lens_text
from lensopt.refraction.phoropter import round_to_step
from lensopt.refraction.shown import ReadThrough
from lensopt.stopping import confidence_text
from lensopt.store.records import EYE_NAMES
from lensopt.store.tidy import phoropter_axis_deg

#: Trials whose lens lies within this Euclidean distance (D) of the best lens are "near" it.
NEAR_LENS_RADIUS_D = 0.5
#: Message shown while a session has no trial yet.
WAITING_MESSAGE = "waiting for the first trial…"


def freeze_bounds(snap) -> None:
    """Check and store a snapshot's ``sphere_bounds_d``, ``cylinder_bounds_d`` and
    ``letter_bounds_logmar`` as ``(low, high)`` float pairs."""
    for name in ("sphere_bounds_d", "cylinder_bounds_d", "letter_bounds_logmar"):
        low, high = getattr(snap, name)
        if not low < high:
            raise ValueError(f"{type(snap).__name__}.{name} must be (low, high) with low < high")
        object.__setattr__(snap, name, (float(low), float(high)))


@dataclass(frozen=True)
class LensMap:
    """Predicted acuity (logMAR) on a grid: arrays ``(n_cylinder, n_sphere)``."""

    sphere_d: np.ndarray
    cylinder_d: np.ndarray
    acuity_mean_logmar: np.ndarray
    acuity_sd_logmar: np.ndarray

    def __post_init__(self):
        shape = (len(self.cylinder_d), len(self.sphere_d))
        for name in ("acuity_mean_logmar", "acuity_sd_logmar"):
            if np.shape(getattr(self, name)) != shape:
                raise ValueError(f"LensMap.{name} must have shape (n_cylinder, n_sphere) = {shape}")


@dataclass(frozen=True)
class PrescriptionView:
    """The full prescription's model, of one eye (``eye``: ``"OD"``, ``"OS"`` or ``""``), as two
    slices through its reported lens ``best_d`` ``(M, J0, J45)``: the predicted acuity (logMAR) over
    the astigmatism plane ``(J0, J45)`` at the reported ``M`` (``plane_acuity_logmar`` ``(n_j45,
    n_j0)``), and along ``M`` at the reported ``(J0, J45)``, the defocus curve, with its posterior SD
    (``curve_acuity_logmar``, ``curve_sd_logmar``). ``tested_d`` ``(n, 3)``: the eye's lenses tried,
    as power vectors, with their letters and answers; ``start_d``: the starting refraction's.
    ``box_j0_d``, ``box_j45_d``: the search box's ``(low, high)`` in the plane, which the plane's
    grid reaches beyond so that the panel can be filled (None: the grid's own range). The acuity of a
    comparison search is its link model's (:meth:`lensopt.refraction.prescription_link.AcuityLinkSearch.acuity_logmar`)."""

    eye: str
    best_d: tuple[float, float, float]
    j0_d: np.ndarray
    j45_d: np.ndarray
    plane_acuity_logmar: np.ndarray
    m_d: np.ndarray
    curve_acuity_logmar: np.ndarray
    curve_sd_logmar: np.ndarray
    tested_d: np.ndarray
    tested_letter_logmar: np.ndarray
    tested_correct: np.ndarray
    start_d: tuple[float, float, float] | None = None
    box_j0_d: tuple[float, float] | None = None
    box_j45_d: tuple[float, float] | None = None
    #: Whether the eye was refracted by comparisons (duels, rankings): ``tested_d`` then holds every
    #: lens compared, at its comparison's letter size, ``tested_correct`` whether it was judged the clearest.
    compared: bool = False

    def __post_init__(self):
        if np.shape(self.plane_acuity_logmar) != (len(self.j45_d), len(self.j0_d)):
            raise ValueError("PrescriptionView.plane_acuity_logmar must have shape (n_j45, n_j0)")
        for name in ("curve_acuity_logmar", "curve_sd_logmar"):
            if len(getattr(self, name)) != len(self.m_d):
                raise ValueError(f"PrescriptionView.{name} must have one value per m_d")
        n = len(self.tested_d)
        if np.shape(self.tested_d) != (n, 3) or len(self.tested_letter_logmar) != n or len(self.tested_correct) != n:
            raise ValueError("PrescriptionView.tested_d must be (n, 3), with n letters and n answers")


@dataclass(frozen=True)
class LensOptimum:
    """The best lens (argmax of the posterior mean) and the posterior spread of its location
    (Thompson samples of the argmax, see :mod:`lensopt.dashboard.model`)."""

    sphere_d: float
    cylinder_d: float
    sphere_sd_d: float
    cylinder_sd_d: float
    samples_d: np.ndarray  # (n_samples, 2) sampled optimum locations (S, C)
    region_d: np.ndarray  # (n_points, 2) closed boundary of the credible region

    def __post_init__(self):
        for name in ("sphere_sd_d", "cylinder_sd_d"):
            if getattr(self, name) < 0.0:
                raise ValueError(f"{type(self).__name__}.{name} must be >= 0, got {getattr(self, name)!r}")


@dataclass(frozen=True)
class BestLens(LensOptimum):
    """The optimum of a letter session, with the acuity predicted through it."""

    acuity_mean_logmar: float = float("nan")
    acuity_sd_logmar: float = float("nan")

    def __post_init__(self):
        super().__post_init__()
        if self.acuity_sd_logmar < 0.0:  # NaN allowed: acuity not estimable yet (no slope)
            raise ValueError(f"BestLens.acuity_sd_logmar must be >= 0, got {self.acuity_sd_logmar!r}")


@dataclass(frozen=True)
class PsychometricCurve:
    """P(correct) against letter size at the best lens as the session's model has it: ``P(μ)`` and
    the band ``P(μ ± z·σ)``, with ``P(f) = γ + (1 − γ − λ) Φ(f)`` (``floored``: the guess floor
    ``γ = guess_rate`` and the lapse ``λ = lapse_rate``) or the plain probit ``P(f) = Φ(f)`` of
    sessions stored before the floor."""

    letter_logmar: np.ndarray
    p_mean: np.ndarray
    p_low: np.ndarray
    p_high: np.ndarray
    guess_rate: float
    threshold_logmar: float
    near_letter_logmar: np.ndarray
    near_correct: np.ndarray
    near_radius_d: float = NEAR_LENS_RADIUS_D
    floored: bool = False
    lapse_rate: float = 0.0

    @property
    def formula(self) -> str:
        """The model's ``P(correct)`` as the legend writes it."""
        return "γ + (1−γ−λ)·Φ(f)" if self.floored else "Φ(f)"

    def __post_init__(self):
        n = len(self.letter_logmar)
        for name in ("p_mean", "p_low", "p_high"):
            if len(getattr(self, name)) != n:
                raise ValueError(f"PsychometricCurve.{name} must have {n} entries like letter_logmar")


def model_eye_name(header: SessionHeader, trials: TrialSeries) -> str | None:
    """The eye whose model the live panels show, as the dashboard names it (``OS (left eye)``), when
    the session tests both eyes (the model is the last trial's eye); None otherwise."""
    if trials.n == 0:
        return None
    assert trials.eye is not None  # filled in by TrialSeries.__post_init__
    named = set(trials.eye.tolist()) - {""}
    if header.eye != "OU" and len(named) < 2:
        return None
    return EYE_NAMES.get(str(trials.eye[-1]))


@dataclass(frozen=True)
class AcuityHistory:
    """Estimated best acuity (at the best lens of the model refit on the first ``n`` trials)."""

    n_trials: np.ndarray
    acuity_mean_logmar: np.ndarray
    acuity_sd_logmar: np.ndarray


def lens_notation_from_protocol(protocol: dict | None) -> tuple[float, str]:
    """``([lens] axis_deg, [lens] cylinder)`` of a protocol snapshot: how a two-parameter search's
    lens is written (0 and ``"minus"`` for a snapshot stored before them, or without them)."""
    lens = (protocol or {}).get("lens")
    convention = lens.get("cylinder") if isinstance(lens, dict) else None
    return phoropter_axis_deg(protocol) or 0.0, (convention if convention in ("minus", "plus") else "minus")


def lens_step_from_protocol(protocol: dict | None) -> float | None:
    """``[lens] step_d`` of a protocol snapshot: the phoropter's step (D), None for continuous powers."""
    lens = (protocol or {}).get("lens")
    step = lens.get("step_d") if isinstance(lens, dict) else None
    if isinstance(step, bool) or not isinstance(step, (int, float)) or not step > 0:
        return None
    return float(step)


def phoropter_lens_text(best, step_d: float | None, bounds, axis_deg: float, convention: str) -> str | None:
    """A two-parameter session's best lens rounded to the phoropter's steps, as the closing console and
    the log write it (``-0.50 / -3.00 x 180`` at the protocol's axis, else ``S -0.50 D  C -3.00 D``);
    None without a best lens or steps."""
    if best is None or step_d is None:
        return None
    sphere_d = round_to_step(best.sphere_d, step_d, bounds[0])
    cylinder_d = round_to_step(best.cylinder_d, step_d, bounds[1])
    return two_parameter_lens_text(sphere_d, cylinder_d, axis_deg, convention)


def best_lens_notation(best, axis_deg: float, convention: str) -> str | None:
    """A two-parameter session's best lens (its ``sphere_d``, ``cylinder_d``) in clinical notation at
    the protocol's axis (``+0.50 / -1.00 x 180``); None without a best lens or without an axis."""
    if best is None or not axis_deg:
        return None
    return two_parameter_lens_text(best.sphere_d, best.cylinder_d, axis_deg, convention)


@dataclass(frozen=True)
class DashboardSnapshot:
    """Everything the panels draw, for the first ``trials.n`` trials of a session.

    ``lens_map``, ``best`` and ``psychometric`` are None while there is no trial; ``message`` then
    says why (``WAITING_MESSAGE``). ``live`` is False for a replay of an earlier trial.
    ``certainty``: the confidence and 95 % intervals of the best lens (None without a model).
    ``eyes``: each eye's result so far (:class:`EyeEstimate`, OD before OS): of a full-prescription
    session, whose model the (S, C) panels do not draw, every eye; of a two-parameter session of
    both eyes, the eyes other than the one the panels show. ``lens_axis_deg`` and
    ``cylinder_convention``: the protocol's ``[lens] axis_deg`` and ``cylinder``, with which a
    two-parameter session's best lens is also written in clinical notation (0: no axis given).
    ``prescription_view``: of a full-prescription session, its live eye's model
    (:class:`PrescriptionView`), which the lens map and curve panels draw in its place.
    """

    #: The session kind drawn (``lensopt.store.records.LETTERS_KIND``).
    kind: ClassVar[str] = "letters"
    #: What one trial is called (the slider and the history count them).
    noun: ClassVar[str] = "trial"

    header: SessionHeader
    trials: TrialSeries
    history: AcuityHistory
    sphere_bounds_d: tuple
    cylinder_bounds_d: tuple
    letter_bounds_logmar: tuple
    lens_map: LensMap | None = None
    best: BestLens | None = None
    psychometric: PsychometricCurve | None = None
    live: bool = True
    message: str | None = None
    certainty: LensConfidence | None = None
    eyes: tuple[EyeEstimate, ...] = ()
    lens_axis_deg: float = 0.0
    cylinder_convention: str = "minus"
    #: Of a full-prescription session: the live eye's model (None before its first answer).
    prescription_view: PrescriptionView | None = None
    #: Of a two-parameter letter session with a confidence: its live eye's result as the closing
    #: console says it — the lens, "not enough answers to prescribe", or a fixed design's estimate.
    verdict: EyeEstimate | None = None
    #: Of a two-parameter letter session: how far (D) the lens it would report, on the phoropter's
    #: steps, is from every lens tried, when beyond a step (:attr:`EyeEstimate.untried_d`); else None.
    untried_d: float | None = None
    #: Of a two-parameter letter session: what the patient read through that lens, when they did
    #: (:class:`lensopt.refraction.shown.ReadThrough`, its acuity measured); else None.
    read_through: ReadThrough | None = None

    def __post_init__(self):
        freeze_bounds(self)

    @property
    def best_lens_notation(self) -> str | None:
        """The best lens in clinical notation at the protocol's axis (``+0.50 / -1.00 x 180``), None
        without a best lens or without an axis."""
        return best_lens_notation(self.best, self.lens_axis_deg, self.cylinder_convention)

    @property
    def has_model(self) -> bool:
        """Whether the panels draw a model: the best lens over ``(S, C)``, or a full prescription's view."""
        return self.best is not None or self.prescription_view is not None

    @property
    def prescription(self) -> str | None:
        """A full-prescription session's result so far, one line per eye (:meth:`EyeEstimate.line`,
        joined by `` · ``): the lens, or "not enough answers to prescribe"; None for other sessions."""
        if self.best is not None or not self.eyes:
            return None
        return " · ".join(e.line() for e in self.eyes)

    @property
    def model_eye(self) -> str | None:
        """The eye the live model panels show (``OS (left eye)``) in a session of both eyes, else None."""
        return model_eye_name(self.header, self.trials)

    @property
    def n_trials(self) -> int:
        """The trials shown, those undone too: the replay slider's position (not a count to show:
        :attr:`n_answers`, :attr:`n_undone`)."""
        return self.trials.n

    @property
    def n_answers(self) -> int:
        """The answers shown that were kept: the trials a person is told of."""
        return self.trials.n_answers

    @property
    def n_undone(self) -> int:
        """The answers shown that the clinician undid (said apart: ``7 trials (+1 undone)``)."""
        return self.trials.n_undone

    @property
    def void(self) -> np.ndarray:
        """Of each trial shown, whether its answer was undone (the replay slider counts the others)."""
        assert self.trials.void is not None  # filled in by TrialSeries.__post_init__
        return self.trials.void

    @property
    def model_trials(self) -> TrialSeries:
        """The answered trials of the eye the live model panels show (not those undone: the model
        was not told them): its lens map's markers, its counts and its stopping rule's trials (the
        session's, but in a session of both eyes)."""
        trials = self.trials if self.model_eye is None else self.trials.of_eye(self.trials.last_eye)
        return trials.answered()

    @property
    def elapsed_s(self) -> float:
        """Seconds from the first letter shown to the last answer (0 without trials)."""
        return elapsed_s(self.trials)

    def summary_line(self) -> str:
        """One line for the status bar and the tests: trials, best lens ± sd, predicted acuity."""
        h = self.header
        head = f"Session {h.session_id} ({h.who}, {h.status}){h.simulated_suffix}"
        count = count_text(self.n_answers, self.noun, self.n_undone)
        if self.best is None:
            said = self.prescription if self.n_trials else None
            return f"{head} · {count} · {said or self.message or WAITING_MESSAGE}"
        b = self.best
        if not np.isfinite(b.acuity_mean_logmar):
            acuity = "not estimable yet"
        else:
            acuity = f"{signed_logmar(b.acuity_mean_logmar)} ± {b.acuity_sd_logmar:.2f} logMAR"
        confidence = (
            ""
            if self.certainty is None
            else f" · confidence {confidence_text(self.certainty.confidence, self.certainty.stop_confidence)}"
        )
        eye = self.model_eye
        # a lens not to prescribe says so first, as the closing console does, and is called an estimate
        short = self.verdict.shortfall() if self.verdict is not None else ""
        lens = (
            f"{f'{eye}: ' if eye else ''}{short} · estimated lens" if short else f"best lens{f' {eye}' if eye else ''}"
        )
        others = "".join(f" · {e.line()}" for e in self.eyes)
        notation = self.best_lens_notation
        return (
            f"{head} · {count} · "
            f"{lens}{f' {notation}:' if notation else ''} "
            f"S {diopter_text(b.sphere_d)} ± {diopter_text(b.sphere_sd_d, signed=False)} D, "
            f"C {diopter_text(b.cylinder_d)} ± {diopter_text(b.cylinder_sd_d, signed=False)} D · predicted acuity {acuity}{confidence}{others}"
        )
