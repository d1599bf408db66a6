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
- **most-plus endpoint**: the reported lens is the most-plus lens along ``M`` (astigmatism held at
  the optimum's) whose predicted acuity is within :data:`MOST_PLUS_TOLERANCE_LOGMAR` of the best
  predicted acuity. A young eye accommodates, so every lens up to its amplitude too minus reads as
  well as the correction; the clinical end point is the most plus of them.
"""

from __future__ import annotations

import math
import time

import numpy as np

from lensopt.binary.optimizer import RECENT_INPUTS, ContextualOptimizer, Query
from lensopt.binary.settings import ALL_RULES, KernelSpec
from lensopt.optimize import maximize_posterior_mean
from lensopt.reference_data import PRESCRIPTION_HYPERPARAMETERS, load_json
from lensopt.refraction.bracket import BRACKET_RULE, most_informative
from lensopt.refraction.certainty import CERTAINTY_STREAM, N_DRAWS, PRUNE_SDS, _joint_draws
from lensopt.refraction.lens import Lens, PowerVector
from lensopt.refraction.letters import (
    DEFAULT_MODEL_LAPSE,
    LETTER_BETA,
    LETTER_BOUNDS_LOGMAR,
    MIN_INFORMATION_BITS,
    SEARCH_SETTING_NAMES,
    SEARCH_TOLERANCE,
)
from lensopt.refraction.prescription import (
    POWER_VECTOR_NAMES,
    PRESCRIPTION_SEARCH,
    Prescription,
    SearchBox,
    distinct_inside,
    fine_grid_d,
    lens_intervals,
)
from lensopt.refraction.trial import Trial, TrialHistory
from lensopt.stopping import ACUITY_TOLERANCE_LOGMAR, StopRule
from lensopt.threads import single_threaded

#: Phoropter steps of the proposed lenses: quarter diopters, axis in whole degrees.
DEFAULT_LENS_STEP_D = 0.25
DEFAULT_AXIS_STEP_DEG = 1.0

#: The most-plus end point: the reported lens is the most plus (in M) whose predicted acuity is
#: within this many logMAR of the best predicted acuity. Chosen on tuning patients (seeds < 100,000).
MOST_PLUS_TOLERANCE_LOGMAR = 0.0

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

#: Step (D) of the scan along M for the most-plus end point.
MOST_PLUS_SCAN_STEP_D = 0.01

#: Candidate lenses of the certainty, besides the fine grid around the reported lens
#: (:func:`~lensopt.refraction.prescription.fine_grid_d`): the spacing of the coarse box grid and
#: the distance from a tested lens within which the coarse grid counts as searched.
COARSE_STEP_D = 0.5
COVERED_RADIUS_D = 0.75

STATE_FORMAT = "lensopt.prescription-state/1"


class _TiltedMean:
    """The plus-preferring objective ``μ(z) + t · z`` of a fitted model (``t`` zero on the letter
    size) as :func:`lensopt.optimize.maximize_posterior_mean` maximizes it: the numbers of the
    optimizer's own posterior-mean search over :class:`lensopt.binary.rules.TiltedObjective`, bit
    for bit, without computing the latent's variance, which the mean's maximum does not need."""

    def __init__(self, model, tilt: np.ndarray):
        self.model = model
        self.tilt = np.asarray(tilt, dtype=float)

    def __call__(self, X):
        return self.model.predict_latent_mean(X) + np.asarray(X, dtype=float) @ self.tilt

    def value_and_gradient(self, X):
        mean, dmean = self.model.predict_latent_mean_with_gradient(X)
        return mean + np.asarray(X, dtype=float) @ self.tilt, dmean + self.tilt


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


class PrescriptionOptimizer(TrialHistory):
    """ask/tell for the full prescription: ``ask() -> Trial`` (with ``axis_deg``), ``tell(trial,
    correct)``, :meth:`prescription` the result; :meth:`confidence` and :meth:`should_stop` for the
    stopping rule (:class:`lensopt.asktell.StoppableOptimizer`).

    ``start``: the starting refraction (a :class:`Lens` or its text; ``None``: the full box);
    ``m_half_width_d``/``j_half_width_d``: the box around it. The answer model is issue 14's:
    ``P(correct) = γ + (1 − γ − λ) Φ(f)``, ``γ = 1/n_alternatives``, ``λ = lapse``.
    """

    #: The answers a trial can get: a PsychoPy handler decides ahead for each while the patient
    #: looks at the letter (:mod:`lensopt.psychopy.lookahead`).
    SPECULATIVE_ANSWERS = (True, False)

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
        if isinstance(n_alternatives, bool) or not isinstance(n_alternatives, int) or n_alternatives < 2:
            raise ValueError(f"n_alternatives must be an integer >= 2, got {n_alternatives!r}")
        if (
            isinstance(lapse, bool)
            or not isinstance(lapse, (int, float))
            or not (math.isfinite(lapse) and 0.0 <= lapse < 0.5)
        ):
            raise ValueError(f"lapse must be a rate in [0, 0.5) (e.g. 0.02), got {lapse!r}")
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
        self.lens_step_d = None if lens_step_d is None else float(lens_step_d)
        if self.lens_step_d is not None and not (math.isfinite(self.lens_step_d) and 0 < self.lens_step_d <= 1):
            raise ValueError(f"lens_step_d must be a step in (0, 1] D (e.g. 0.25) or None, got {lens_step_d!r}")
        self.axis_step_deg = float(axis_step_deg)
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
        options.setdefault("search_tolerance", SEARCH_TOLERANCE)
        options.setdefault("beta", LETTER_BETA)
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
    def settings(self):
        return self._core.settings

    @property
    def start(self) -> Lens | None:
        return self.box.start

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
            **{k: core[k] for k in SEARCH_SETTING_NAMES},
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
    def from_state(cls, state: dict) -> PrescriptionOptimizer:
        if state.get("format") != STATE_FORMAT:
            raise ValueError(f"not a lensopt prescription state (format {state.get('format')!r})")
        history = [(Trial(S, C, s, axis), bool(c)) for s, S, C, axis, c in state["history"]]
        return cls.from_settings(state["settings"], history)

    @property
    def model(self):
        return self._core.model

    @property
    def last_decision_ms(self) -> float:
        return self._core.last_decision_ms

    # ---------------------------------------------------------------- ask/tell
    def phoropter_lens(self, power_vector_d) -> Lens:
        """The minus-cylinder lens of a power vector ``(M, J0, J45)``, rounded to the phoropter."""
        lens = Lens.from_power_vector(PowerVector(*(float(v) for v in power_vector_d)))
        if self.lens_step_d is None:
            return lens
        return lens.rounded(self.lens_step_d, self.axis_step_deg)

    def _last_lens_d(self) -> np.ndarray | None:
        """The power vector of the lens set now: the last trial's, else the start's (None: neither)."""
        if self._history:
            trial = self._history[-1][0]
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
        for shrink in np.linspace(1.0, 0.0, 9):
            lens = self.phoropter_lens(last + shrink * (target - last))
            if np.all(np.abs(lens.power_vector().to_array() - last) <= self.max_step_d + 1e-9):
                return lens
        return self.phoropter_lens(last)

    @single_threaded
    def ask(self) -> Trial:
        reach = self.reach_d()
        if self.rule == BRACKET_RULE and self.model is not None and self.n_trials >= self.settings.n_initial:
            return self._bracket(reach)
        query = self._core.ask(system_bounds=None if reach is None else reach.tolist())
        lens = self._reachable_lens(query.system, reach)
        return Trial(lens.sphere_d, lens.cylinder_d, float(query.context[0]), lens.axis_deg)

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
        (:class:`_TiltedMean`)."""
        core, s = self._core, self.settings
        context = core._upper_context()
        key = ("argmax", tuple(context), True, s.search_tolerance, 1)

        def compute():
            tilt = np.zeros(s.n_context + s.n_system)
            if s.objective_tilt is not None:
                tilt[s.n_context :] = s.objective_tilt
            recent = core.inputs[-RECENT_INPUTS:, s.n_context :]
            objective = _TiltedMean(self.model, tilt)
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
        if correct not in (0, 1, True, False):
            raise ValueError(f"correct must be a bool, got {correct!r}")
        if trial.axis_deg is None:
            raise ValueError("a full-prescription trial needs the lens's axis_deg (Trial(..., axis_deg=...))")
        pv = Lens(trial.sphere_d, trial.cylinder_d, trial.axis_deg).power_vector().to_array()
        self._core.tell(Query(np.array([trial.letter_logmar]), pv), int(correct), system_in_bounds=False)
        self._history.append((trial, bool(correct)))
        if self.n_trials in self.recentre_at:
            self._core.centre_kernel(self.best().to_array())

    # ------------------------------------------------------------------ answers
    def _intercepts_and_slope(self, lenses, full_cov=False):
        """Posterior of ``g(x) = f(0, x)`` at ``lenses`` ``(n, 3)`` and of ``w = f(1, x₀) − f(0, x₀)``."""
        lenses = np.atleast_2d(np.asarray(lenses, dtype=float))
        n = len(lenses)
        X = np.vstack([np.column_stack([np.zeros(n), lenses]), [[1.0, *lenses[0]]]])
        return self.model.predict_latent(X, full_cov=full_cov)

    def _most_plus(self, optimum_d: np.ndarray) -> np.ndarray:
        """The most-plus point along ``M`` from ``optimum_d`` whose predicted acuity is within the
        tolerance of the optimum's (``g ≥ g(x̂) − tol · w`` with the posterior means)."""
        m_high = self.settings.system_bounds[0][1]
        steps = np.arange(optimum_d[0], m_high + 1e-12, MOST_PLUS_SCAN_STEP_D)
        if len(steps) < 2 or self.most_plus_tolerance_logmar == 0.0:
            return optimum_d
        lenses = np.column_stack([steps, np.full(len(steps), optimum_d[1]), np.full(len(steps), optimum_d[2])])
        mean, _ = self._intercepts_and_slope(lenses)
        g, slope = mean[:-1], mean[-1] - mean[0]
        if not slope > 0:
            return optimum_d
        below = g < g[0] - self.most_plus_tolerance_logmar * slope
        last = int(np.argmax(below)) - 1 if below.any() else len(steps) - 1
        return lenses[max(last, 0)]

    @single_threaded
    def best(self) -> PowerVector:
        """The reported power vector (unrounded): the posterior mean's optimum, moved to the most-plus
        lens of equal predicted acuity (see the module docstring)."""

        def compute():
            if self.model is None:
                return self.box.centre
            optimum = np.asarray(self._core.best(), dtype=float)
            if self.plus_preference > 0:
                # the tilted optimum lies κ ln10 / (2 w) D plus of the acuity optimum (module docstring)
                mean, _ = self._intercepts_and_slope(optimum[None, :])
                slope = mean[-1] - mean[0]
                if slope > 1e-9:
                    optimum[0] -= self.plus_preference * math.log(10.0) / (2.0 * slope)
            return PowerVector(*(float(v) for v in self._most_plus(optimum)))

        return self._core._cached("best_power_vector", compute)

    def predicted_acuity_logmar(self, power_vector_d) -> float:
        """The model's acuity threshold (logMAR) through a lens, from the posterior means."""
        if self.model is None:
            return math.nan
        mean, _ = self._intercepts_and_slope(np.asarray(power_vector_d, dtype=float)[None, :])
        slope = mean[-1] - mean[0]
        return float((self._core.target_latent - mean[0]) / slope) if slope > 1e-9 else math.nan

    def _candidates(self, best_d: np.ndarray) -> np.ndarray:
        """Lenses against which the reported one is measured: a fine grid around it, the tested
        lenses and a coarse grid of the box near them (as :mod:`lensopt.refraction.certainty`)."""
        bounds = np.array(self.settings.system_bounds)
        axes = [np.arange(lo, hi + 1e-9, COARSE_STEP_D) for lo, hi in bounds]
        coarse = np.array(np.meshgrid(*axes, indexing="ij")).reshape(3, -1).T
        tested = np.unique(self._core.inputs[:, 1:], axis=0)
        near = np.sqrt(((coarse[:, None, :] - tested[None, :, :]) ** 2).sum(-1)).min(axis=1) <= COVERED_RADIUS_D
        return distinct_inside(np.vstack([best_d[None, :], fine_grid_d(best_d), coarse[near], tested]), bounds)

    @single_threaded
    def prescription(self) -> Prescription:
        """The prescription with its 95 % intervals, predicted acuity and confidence (from ``n_draws``
        joint posterior draws of the slope and the lens intercepts, seeded by ``(seed, n_trials)``)."""

        def compute():
            best = self.best()
            best_d = best.to_array()
            lens = self.phoropter_lens(best_d) if self.lens_step_d is not None else best.to_lens().rounded()
            if self.model is None:
                return Prescription(lens, best, {}, None, 0.0, 0)
            lenses = self._candidates(best_d)
            mu, var = self._intercepts_and_slope(lenses)
            g_mu, g_sd = mu[:-1], np.sqrt(np.maximum(var[:-1], 0.0))
            keep = g_mu + PRUNE_SDS * g_sd >= np.max(g_mu - PRUNE_SDS * g_sd)
            keep[0] = True
            lenses = lenses[keep]
            mean, cov = self._intercepts_and_slope(lenses, full_cov=True)
            rng = np.random.default_rng([self.settings.seed, self.n_trials, CERTAINTY_STREAM])
            draws = _joint_draws(mean, cov, N_DRAWS, rng)
            g, slope = draws[:, :-1], draws[:, -1] - draws[:, 0]
            gap = g.max(axis=1) - g[:, 0]
            with np.errstate(divide="ignore", invalid="ignore"):
                loss = np.where(slope > 0, gap / slope, np.inf)
            # each draw's own most-plus best lens: the most plus M among lenses within the tolerance
            within = g >= (g.max(axis=1) - self.most_plus_tolerance_logmar * np.maximum(slope, 0.0))[:, None]
            best_draws = lenses[np.argmax(np.where(within, lenses[None, :, 0], -np.inf), axis=1)]
            return Prescription(
                lens=lens,
                power_vector_d=best,
                intervals=lens_intervals(best_draws, lens),
                predicted_acuity_logmar=self.predicted_acuity_logmar(best_d),
                confidence=float(np.mean(loss <= ACUITY_TOLERANCE_LOGMAR)),
                trials=self.n_trials,
            )

        return self._core._cached("prescription", compute)

    def confidence(self) -> float:
        """Posterior probability that the reported lens is within 0.025 logMAR of the best lens."""
        return float(self.prescription().confidence or 0.0)

    def should_stop(self) -> bool:
        """Whether the session may stop by its :class:`lensopt.stopping.StopRule` (never without one)."""
        return self.stop is not None and self.stop.should_stop(self.n_trials, self.confidence)


__all__ = ["POWER_VECTOR_NAMES", "PRESCRIPTION_SEARCH", "PrescriptionOptimizer", "prescription_kernel"]
