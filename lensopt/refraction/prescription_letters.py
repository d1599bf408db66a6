"""PrescriptionOptimizer: the full prescription (sphere, cylinder, axis) from letters (issue 16).

The search runs in the Thibos power vector ``x = (M, J0, J45)`` of the lens (D) with the letter
size ``s`` (logMAR) as the context: model columns ``[letter_logmar, m_d, j0_d, j45_d]``. It is the
letter optimizer of issue 14 (:class:`lensopt.refraction.RefractionOptimizer`: the floored answer
model, EP, BALD for the letter size, the information floor, the stopping rule) on these columns:

- **kernel**: the psychophysics kernel ``θ s s' + k_SE(x, x')`` with one lengthscale for the three
  coordinates — blur is the residual's power-vector length, so an isotropic kernel here is the
  principal-meridian kernel of the two-parameter search for any axis. The shipped hyperparameters
  (``data/prescription-hyperparameters.json``) are the two-parameter fit mapped exactly: in
  meridian powers ``|ΔP|² = 2 |Δx|²``, so the lengthscale is divided by √2.
- **the box** (:class:`lensopt.refraction.prescription.SearchBox`): centred on the starting
  refraction, ±2 D in M and ±1 D in J0 and J45 by default; the full box without a start.
- **the prior favours the start**: with a start the prior mean is the acuity law around it,
  ``m(x) = m₀ − a₀ log10(1 + |x − x_start|²)`` (:class:`lensopt.gp.mean.BowlMean`, ``a₀`` a
  typical psychometric slope): the GP learns how the patient differs from the start.
- **phoropter lenses**: every proposed lens is converted to minus cylinder and rounded to the
  phoropter (``lens_step_d``, 0.25 D, and ``axis_step_deg``, 1°); the model is told the rounded
  lens's power vector, i.e. the lens actually shown.
- **the answer** (:class:`lensopt.refraction.prescription_report.PrescriptionReport`, the base
  class): the reported lens — the most-plus end point of equal predicted acuity — the predicted
  acuity, the prescription with its intervals and confidence, and the stopping rule.

This module holds the search: the settings and their checks, the bracketing rule, ask/tell and the
saved state.
"""

from __future__ import annotations

import math
import time

import numpy as np

from lensopt.binary.optimizer import RECENT_INPUTS, ContextualOptimizer, Query
from lensopt.binary.settings import ALL_RULES, FixedSettings, KernelSpec, OptimizerSettings
from lensopt.gp.likelihood import checked_answer_model
from lensopt.optimize import TiltedMean, maximize_posterior_mean
from lensopt.reference_data import PRESCRIPTION_HYPERPARAMETERS, load_json
from lensopt.refraction.bracket import BRACKET_RULE, most_informative
from lensopt.refraction.lens import Lens
from lensopt.refraction.lens_check import ReportedLensCheck
from lensopt.refraction.letters import (
    DEFAULT_MODEL_LAPSE,
    LETTER_BOUNDS_LOGMAR,
    MIN_INFORMATION_BITS,
    SEARCH_SETTING_NAMES,
)
from lensopt.refraction.prescription import (
    PHOROPTER_MAX_POWER_D,
    POWER_VECTOR_NAMES,
    PRESCRIPTION_SEARCH,
    SearchBox,
    checked_lens_steps,
)
from lensopt.refraction.prescription_report import MOST_PLUS_TOLERANCE_LOGMAR, PrescriptionReport
from lensopt.refraction.steps import DEFAULT_AXIS_STEP_DEG, DEFAULT_LENS_STEP_D
from lensopt.refraction.trial import LETTER_COLUMNS, Trial, check_trial_bounds
from lensopt.stopping import StopRule
from lensopt.threads import single_threaded

#: Depth ``a₀`` (latent units per log10(1 + D²)) of the prior bowl around a starting refraction: a
#: typical psychometric slope (logMAR⁻¹) of the simulated patients. ``PRIOR_START_OFFSET`` is the
#: prior latent at the start itself (at letter size 0 logMAR). Chosen on tuning patients.
PRIOR_START_DEPTH = 0.0
PRIOR_START_OFFSET = 0.0

#: Trials after which the acuity-bowl kernel (a search with a start) is centred on the reported lens.
#: The kernel carries the correction's shift from its centre only to first order (``ψ``'s weights,
#: :mod:`lensopt.gp.kernels.bowl`), so around the start a shift of half a diopter or more is learnt
#: short: the reported M kept a fixed share of the start's error after 100 letters. After 30
#: letters the reported lens is far closer to the correction than the start was, and the
#: expansion around it is accurate where it matters. Chosen on tuning patients (seeds 5000–5069,
#: bracket-ald, with and without accommodation): the M limits of agreement after 100 letters
#: narrowed by about 40 %; at 20 trials the lens moved to was still too far off (wider limits at
#: 40), at 25 or 40 it gained less, and moving again at 60 narrowed the limits at 100 a little more.
RECENTRE_AT_TRIALS = (30, 60)

#: Prior mean of the latent without a start (the full box): pessimistic, so that with the plus
#: preference an untested lens at the plus edge of the box does not look best (with issue 14's −3
#: it did: every session drifted to M = +4 D). Chosen on tuning patients (seeds 5000–5059).
NO_START_PRIOR_MEAN = -10.0

#: Relative tolerance of the full prescription's L-BFGS-B searches (sphere, cylinder, axis): the
#: two-parameter letter search's first value (1e-4), with which the prescription campaigns were
#: tuned and run; the letter search's later 1e-3 and single start were tried on two parameters only.
PRESCRIPTION_SEARCH_TOLERANCE = 1e-4

#: β of UCB_Φ in the full prescription's letter search: 3.5, the two-parameter letter model's β when
#: the prescription's campaigns were run (docs/prescription.md); the two-parameter search has since
#: moved to :data:`lensopt.refraction.letters.LETTER_BETA` with its own prior mean and EP's
#: mean-matched clipping, which the prescription has not been measured with.
PRESCRIPTION_BETA = 3.5

#: The most-plus preference ``κ`` (latent units per D of M): the lens search and the reported lens
#: maximize ``f(s₀, x) + κ M`` rather than ``f``. Among lenses of equal acuity (an accommodating
#: eye's plateau) the most plus wins; where acuity falls, the tilted optimum sits ``κ ln10 / (2w)`` D
#: plus of the best lens (``w`` the slope: near its optimum the latent is ``−w b²/ln10``), which the
#: report subtracts. Chosen on tuning patients (seeds < 100,000).
PLUS_PREFERENCE = 1.0

#: The bracketing rule (``rule="bracket-ald"``, the default with a start; :mod:`lensopt.refraction.bracket`):
#: after the initial trials, the lens is the most informative (BALD, at its most informative letter
#: size) of the lenses bracketing the current optimum — ``BRACKET_STEPS_D`` more plus in M, and on
#: both sides in J0 and J45 — and the optimum is the one of the plus-preferring objective. Minus is
#: not bracketed: an accommodating eye reads every too-minus lens as well. Chosen on tuning patients
#: (seeds 5000–5059, slope 14): median blur error after 100 trials 0.11 D against UCB-ALD's
#: 0.13–0.17, J0/J45 limits of agreement ±0.10 against ±0.15.
BRACKET_STEPS_D = (0.35, 0.7)
BRACKET_DIRECTIONS = ((1.0, 0.0, 0.0), (0.0, 1.0, 0.0), (0.0, -1.0, 0.0), (0.0, 0.0, 1.0), (0.0, 0.0, -1.0))
#: Kernel structures whose latent is affine in the letter size (``f(s, x) = w s + g(x)``), so that
#: the bracketing rule predicts each lens at the two ends of the letter range only
#: (:func:`lensopt.refraction.bracket.most_informative`'s ``affine``).
AFFINE_LETTER_STRUCTURES = ("psychophysics", "acuity-bowl")
#: Rules of the full prescription: the bracketing rule and every rule of the contextual optimizer.
PRESCRIPTION_RULES = (BRACKET_RULE, *ALL_RULES)

#: The smallest travel limit (``max_step_d``, D): one phoropter step. A manual phoropter's lens
#: changes by whole steps, so a smaller limit would pin the lens where it is.
MIN_MAX_STEP_D = 0.25

STATE_FORMAT = "lensopt.prescription-state/1"


def prescription_kernel(started: bool = True) -> KernelSpec:
    """The shipped hyperparameters of the power-vector search (``data/prescription-hyperparameters.json``):
    the acuity-bowl kernel around a starting refraction (``started``), else the psychophysics kernel."""
    return KernelSpec.from_dict(load_json(PRESCRIPTION_HYPERPARAMETERS)["start_kernel" if started else "kernel"])


def _recentre_trials(trials, centred: bool) -> tuple[int, ...]:
    """``recentre_at`` checked: distinct positive trial counts, in order; only with a kernel that has
    a centre (the acuity-bowl kernel around a start)."""
    if isinstance(trials, (str, bytes)) or not hasattr(trials, "__iter__"):
        raise ValueError(f"recentre_at must be a list of trial counts (e.g. [30]) or empty, got {trials!r}")
    values = tuple(trials)
    if not all(isinstance(t, int) and not isinstance(t, bool) and t >= 1 for t in values) or len(set(values)) != len(
        values
    ):
        raise ValueError(f"recentre_at must hold distinct positive trial counts (e.g. [30]), got {list(values)!r}")
    if values and not centred:
        raise ValueError(
            "recentre_at needs a starting refraction and the acuity-bowl kernel (the kernel centred on it); "
            "give a start, or recentre_at=[]"
        )
    return tuple(sorted(values))


def _as_lens(start) -> Lens | None:
    if start is None or isinstance(start, Lens):
        return start
    if isinstance(start, str):
        return Lens.parse(start)
    raise ValueError(f"start must be a lens ('-1.00 / -0.50 x 180') or None, got {start!r}")


class PrescriptionOptimizer(PrescriptionReport, ReportedLensCheck, FixedSettings):
    """ask/tell for the full prescription: ``ask() -> Trial`` (with ``axis_deg``), ``tell(trial,
    correct)``, :meth:`prescription` the result; :meth:`confidence` and :meth:`should_stop` for the
    stopping rule (:class:`lensopt.asktell.StoppableOptimizer`).

    ``start``: the starting refraction (a :class:`Lens` or its text; ``None``: the full box);
    ``m_half_width_d``/``j_half_width_d``: the box around it. The answer model is issue 14's:
    ``P(correct) = γ + (1 − γ − λ) Φ(f)``, ``γ = 1/n_alternatives``, ``λ = lapse``. The settings
    are fixed when the optimizer is made (:class:`lensopt.binary.settings.FixedSettings`; the
    ``box`` too, made of ``start`` and the half-widths).
    """

    #: The answers a trial can get: a PsychoPy handler decides ahead for each while the patient
    #: looks at the letter (:mod:`lensopt.psychopy.lookahead`).
    SPECULATIVE_ANSWERS = (True, False)
    #: The settings ``**options`` passes on to the contextual optimizer (those it sets itself aside),
    #: and the marker ``search`` that :meth:`settings_dict` writes.
    _option_setting_names = frozenset(OptimizerSettings.__dataclass_fields__) - {
        "system_bounds",
        "context_bounds",
        "kernel",
        "reference_context",
        "guess_rate",
        "lapse_rate",
    } | {"search"}
    #: The search box holds the settings ``start``, ``m_half_width_d`` and ``j_half_width_d``.
    _settings_attributes = frozenset({"box"})

    def __init__(
        self,
        rule=None,
        seed=0,
        *,
        start=None,
        m_half_width_d=None,
        j_half_width_d=None,
        letter_bounds_logmar=LETTER_BOUNDS_LOGMAR,
        n_initial=5,
        lens_step_d=DEFAULT_LENS_STEP_D,
        axis_step_deg=DEFAULT_AXIS_STEP_DEG,
        inference="ep",
        hyperparameters=None,
        n_alternatives=26,
        lapse=DEFAULT_MODEL_LAPSE,
        prior_mean=None,
        prior_depth=None,
        most_plus_tolerance_logmar=MOST_PLUS_TOLERANCE_LOGMAR,
        max_step_d=None,
        stop=None,
        plus_preference=None,
        recentre_at=None,
        **options,
    ):
        kappa = PLUS_PREFERENCE if plus_preference is None else plus_preference
        if isinstance(kappa, bool) or not isinstance(kappa, (int, float)) or not (math.isfinite(kappa) and kappa >= 0):
            raise ValueError(f"plus_preference must be a number >= 0 (latent units per D), got {plus_preference!r}")
        self.plus_preference = float(kappa)
        n_alternatives, lapse = checked_answer_model(n_alternatives, lapse)
        tol = most_plus_tolerance_logmar
        if isinstance(tol, bool) or not isinstance(tol, (int, float)) or not (math.isfinite(tol) and 0 <= tol < 1):
            raise ValueError(f"most_plus_tolerance_logmar must be a number in [0, 1) logMAR, got {tol!r}")
        box_options = {
            k: v for k, v in (("m_half_width_d", m_half_width_d), ("j_half_width_d", j_half_width_d)) if v is not None
        }
        self.box = SearchBox(_as_lens(start), **box_options)
        if rule is None:
            rule = BRACKET_RULE if self.box.start is not None else "ucb-ald"
        if rule not in PRESCRIPTION_RULES:
            raise ValueError(f"unknown rule {rule!r}; choose one of: {', '.join(PRESCRIPTION_RULES)}")
        self.rule = rule
        self.lens_step_d, self.axis_step_deg = checked_lens_steps(lens_step_d, axis_step_deg)
        self.n_alternatives = n_alternatives
        self.lapse = float(lapse)
        self.most_plus_tolerance_logmar = float(tol)
        if max_step_d is not None and (
            isinstance(max_step_d, bool)
            or not isinstance(max_step_d, (int, float))
            or not (math.isfinite(max_step_d) and MIN_MAX_STEP_D <= max_step_d <= 4.0)
        ):
            raise ValueError(
                f"max_step_d must be a step in [{MIN_MAX_STEP_D}, 4] D (e.g. 0.5) or None (no limit), got {max_step_d!r}"
            )
        self.max_step_d = None if max_step_d is None else float(max_step_d)
        self.stop = stop if stop is None or isinstance(stop, StopRule) else StopRule.from_dict(stop)
        started = self.box.start is not None
        kernel = prescription_kernel(started) if hyperparameters is None else hyperparameters
        if isinstance(kernel, dict):
            kernel = KernelSpec.from_dict(kernel)
        self.recentre_at = _recentre_trials(
            (RECENTRE_AT_TRIALS if started else ()) if recentre_at is None else recentre_at,
            centred=started and isinstance(kernel, KernelSpec) and kernel.structure == "acuity-bowl",
        )
        options.setdefault("min_information_bits", MIN_INFORMATION_BITS)
        options.setdefault("search_tolerance", PRESCRIPTION_SEARCH_TOLERANCE)
        options.setdefault("beta", PRESCRIPTION_BETA)
        default_mean = PRIOR_START_OFFSET if started else NO_START_PRIOR_MEAN
        options["prior_mean"] = default_mean if prior_mean is None else prior_mean
        if started:
            options["prior_centre"] = tuple(self.box.centre.to_array())
            options["prior_depth"] = PRIOR_START_DEPTH if prior_depth is None else prior_depth
        if self.plus_preference > 0:
            options["objective_tilt"] = (self.plus_preference, 0.0, 0.0)
        self._core = ContextualOptimizer(
            system_bounds=self.box.bounds_d,
            context_bounds=(letter_bounds_logmar,),
            rule="ucb-ald" if rule == BRACKET_RULE else rule,
            seed=seed,
            kernel=kernel,
            reference_context="adaptive",
            n_initial=n_initial,
            inference=inference,
            guess_rate=1.0 / n_alternatives,
            lapse_rate=self.lapse,
            **options,
        )
        self._core.target_latent = 0.0
        self._history: list[tuple[Trial, bool]] = []

    # ---------------------------------------------------------------- settings
    @property
    def start(self) -> Lens | None:
        return self.box.start

    @property
    def seed(self) -> int:
        return self.settings.seed

    def settings_dict(self) -> dict:
        s = self.settings
        core = s.to_dict()
        return {
            "search": PRESCRIPTION_SEARCH,
            "rule": self.rule,
            "seed": s.seed,
            "start": None if self.box.start is None else self.box.start.format(),
            "m_half_width_d": self.box.m_half_width_d,
            "j_half_width_d": self.box.j_half_width_d,
            "letter_bounds_logmar": list(s.context_bounds[0]),
            "n_initial": s.n_initial,
            "lens_step_d": self.lens_step_d,
            "axis_step_deg": self.axis_step_deg,
            "inference": s.inference,
            "hyperparameters": core["kernel"],
            "n_alternatives": self.n_alternatives,
            "lapse": self.lapse,
            "prior_mean": s.prior_mean,
            "prior_depth": s.prior_depth if s.prior_centre is not None else None,
            "most_plus_tolerance_logmar": self.most_plus_tolerance_logmar,
            "plus_preference": self.plus_preference,
            "max_step_d": self.max_step_d,
            "recentre_at": list(self.recentre_at),
            "stop": None if self.stop is None else self.stop.to_dict(),
            **{k: getattr(s, k) for k in SEARCH_SETTING_NAMES},
        }

    @classmethod
    def _saved_settings(cls, settings: dict) -> dict:
        """Settings as ``settings_dict()`` wrote them, without the :data:`PRESCRIPTION_SEARCH` marker."""
        settings.pop("search", None)
        settings.setdefault("recentre_at", ())  # saved before the kernel moved: it never did
        return settings

    def to_state(self) -> dict:
        return {
            "format": STATE_FORMAT,
            "settings": self.settings_dict(),
            "history": [[t.letter_logmar, t.sphere_d, t.cylinder_d, t.axis_deg, int(c)] for t, c in self._history],
        }

    @classmethod
    @single_threaded
    def from_state(cls, state: dict) -> PrescriptionOptimizer:
        return cls.from_letter_state(state, STATE_FORMAT, "prescription", (*LETTER_COLUMNS, "axis_deg"))

    @property
    def last_decision_ms(self) -> float:
        return self._core.last_decision_ms

    # ---------------------------------------------------------------- ask/tell
    def _last_lens_d(self) -> np.ndarray | None:
        """The power vector of the lens set now: the last trial's, else the start's (None: neither)."""
        if self._history:
            trial = self._history[-1][0]
            assert trial.axis_deg is not None  # tell() refuses a trial without an axis
            return Lens(trial.sphere_d, trial.cylinder_d, trial.axis_deg).power_vector().to_array()
        return None if self.box.start is None else self.box.start.power_vector().to_array()

    def reach_d(self) -> np.ndarray | None:
        """The box ``(3, 2)`` of power vectors the next lens may take under the travel limit
        (:attr:`max_step_d` in each of M, J0, J45 from the lens set now, within the search box);
        None without a limit or without a lens set yet."""
        last = self._last_lens_d()
        if self.max_step_d is None or last is None:
            return None
        box = np.asarray(self.box.bounds_d, dtype=float)
        centre = np.clip(last, box[:, 0], box[:, 1])
        return np.column_stack(
            [np.maximum(centre - self.max_step_d, box[:, 0]), np.minimum(centre + self.max_step_d, box[:, 1])]
        )

    def _reachable_lens(self, power_vector_d, reach: np.ndarray | None) -> Lens:
        """The phoropter lens of ``power_vector_d`` moved into ``reach``: clipped to it, then, if the
        phoropter's rounding carries a coordinate beyond the limit, pulled towards the lens set now
        until it no longer does (the rounded lens set now itself in the end)."""
        target = np.asarray(power_vector_d, dtype=float)
        if reach is None:
            return self.phoropter_lens(target)
        target = np.clip(target, reach[:, 0], reach[:, 1])
        last = self._last_lens_d()
        assert last is not None and self.max_step_d is not None  # as for reach (reach_d)
        for shrink in np.linspace(1.0, 0.0, 9):
            lens = self.phoropter_lens(last + shrink * (target - last))
            if np.all(np.abs(lens.power_vector().to_array() - last) <= self.max_step_d + 1e-9):
                return lens
        return self.phoropter_lens(last)

    @single_threaded
    def ask(self) -> Trial:
        reach = self.reach_d()
        if self.check_due():
            return self._check_trial(reach)
        if self.rule == BRACKET_RULE and self.model is not None and self.n_trials >= self.settings.n_initial:
            return self._bracket(reach)
        query = self._core.ask(system_bounds=None if reach is None else reach.tolist())
        lens = self._reachable_lens(query.system, reach)
        return Trial(lens.sphere_d, lens.cylinder_d, float(query.context[0]), lens.axis_deg)

    def _check_trial(self, reach: np.ndarray | None) -> Trial:
        """The stopping rule's check (:mod:`lensopt.refraction.lens_check`): the prescribed lens
        (within reach of the lens set now), at the letter size most informative through it."""
        start = time.perf_counter()
        lens = self.prescription().lens
        lens = self._reachable_lens(lens.power_vector().to_array(), reach)
        affine = self.settings.kernel.structure in AFFINE_LETTER_STRUCTURES
        vector = lens.power_vector().to_array()[None, :]
        _, letter_logmar, _ = most_informative(self.model, vector, self.settings.context_bounds[0], affine=affine)
        self._core.last_decision_ms = 1e3 * (time.perf_counter() - start)
        return Trial(lens.sphere_d, lens.cylinder_d, letter_logmar, lens.axis_deg)

    def _bracket(self, reach: np.ndarray | None = None) -> Trial:
        """The bracketing rule (:data:`BRACKET_RULE`): the most informative lens and letter size
        around the plus-preferring optimum (:func:`lensopt.refraction.bracket.most_informative`).
        Under a travel limit (``reach``) each bracketing lens is first moved within reach of the
        lens set now, so a far optimum is approached step by step."""
        start = time.perf_counter()
        centre = self._search_optimum()  # the tilted optimum
        lenses = [
            self._reachable_lens(centre + step * np.asarray(direction), reach)
            for step in BRACKET_STEPS_D
            for direction in BRACKET_DIRECTIONS
        ]
        vectors = np.array([lens.power_vector().to_array() for lens in lenses])
        affine = self.settings.kernel.structure in AFFINE_LETTER_STRUCTURES
        chosen, letter_logmar, _ = most_informative(self.model, vectors, self.settings.context_bounds[0], affine=affine)
        lens = lenses[chosen]
        self._core.last_decision_ms = 1e3 * (time.perf_counter() - start)
        return Trial(lens.sphere_d, lens.cylinder_d, letter_logmar, lens.axis_deg)

    def _search_optimum(self) -> np.ndarray:
        """The plus-preferring optimum the bracketing rule centres on: what
        :meth:`ContextualOptimizer.search_optimum` returns (its candidates, random stream, tolerance
        and single refinement; cached with it), searched on the posterior mean alone
        (:class:`lensopt.optimize.TiltedMean`: the numbers of the optimizer's own search over
        :class:`lensopt.binary.rules.TiltedObjective`, bit for bit, without the latent's variance,
        which the mean's maximum does not need)."""
        core, s = self._core, self.settings
        context = core._upper_context()
        key = ("argmax", tuple(context), True, s.search_tolerance, 1)

        def compute():
            tilt = np.zeros(s.n_context + s.n_system)
            if s.objective_tilt is not None:
                tilt[s.n_context :] = s.objective_tilt
            recent = core.inputs[-RECENT_INPUTS:, s.n_context :]
            objective = TiltedMean(self.model.predict_latent_mean, self.model.predict_latent_mean_with_gradient, tilt)
            return maximize_posterior_mean(
                objective,
                context,
                s.system_bounds,
                core._rng(1),
                recent,
                True,
                tolerance=s.search_tolerance,
                n_starts=1,
            )

        return core._cached(key, compute).copy()

    @single_threaded
    def tell(self, trial: Trial, correct) -> None:
        """Record whether the letter of ``trial`` was named right. A letter size outside the letter
        bounds is refused, as by every letter optimizer (:func:`lensopt.refraction.trial.check_trial_bounds`);
        a lens outside the search box is not: the lens actually set, which a clinician may type
        (``L`` at the console), even far from the box, is what the model is told — unless a power is
        beyond a phoropter's ±20 D, which the console refuses too (a stored ``1e308`` ended, on
        rebuilding, in "SVD did not converge")."""
        if not isinstance(trial, Trial):
            raise ValueError(f"trial must be a Trial (what ask() returns); got {type(trial).__name__}")
        if correct not in (0, 1, True, False):
            raise ValueError(f"correct must be True or False (or 1 or 0), got {correct!r}")
        if trial.axis_deg is None:
            raise ValueError("a full-prescription trial needs the lens's axis_deg (Trial(..., axis_deg=...))")
        check_trial_bounds(trial, letter_bounds_logmar=self.settings.context_bounds[0])
        lens = Lens(trial.sphere_d, trial.cylinder_d, trial.axis_deg).minus_cylinder()
        if max(abs(lens.sphere_d), abs(lens.cylinder_d)) > PHOROPTER_MAX_POWER_D:  # as the console's L takes it
            raise ValueError(
                f"the lens S {lens.sphere_d:+g} C {lens.cylinder_d:+g} x {lens.axis_deg:g} has powers beyond a phoropter's ±{PHOROPTER_MAX_POWER_D:g} D; tell "
                "the lens actually set"
            )
        pv = lens.power_vector().to_array()
        self._core.tell(Query(np.array([trial.letter_logmar]), pv), int(correct), system_in_bounds=False)
        self._history.append((trial, bool(correct)))
        if self.n_trials in self.recentre_at:
            self._core.centre_kernel(self.best().to_array())


__all__ = ["POWER_VECTOR_NAMES", "PRESCRIPTION_SEARCH", "PrescriptionOptimizer", "prescription_kernel"]
