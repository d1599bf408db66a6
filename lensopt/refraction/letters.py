"""RefractionOptimizer: contextual BO speaking lenses (D) and letter sizes (logMAR)."""

from __future__ import annotations

import math
import time

import numpy as np
from scipy.stats import norm

from lensopt.binary.optimizer import ContextualOptimizer, Query
from lensopt.binary.settings import FixedSettings, KernelSpec, OptimizerSettings
from lensopt.boxes import bounds_pair
from lensopt.gp.likelihood import checked_answer_model
from lensopt.gp.uncertainty import floored_mean
from lensopt.reference_data import LETTER_MODEL_HYPERPARAMETERS, REFRACTION_HYPERPARAMETERS, load_json
from lensopt.refraction.acuity_law_settings import ACUITY_LAW_RULE
from lensopt.refraction.bracket import most_informative
from lensopt.refraction.certainty import CERTAINTY_STREAM, LensCertainty, confidence_reaches, lens_certainty
from lensopt.refraction.lens_arrays import lens_columns
from lensopt.refraction.lens_check import ReportedLensCheck
from lensopt.refraction.optimum_draws import sample_optimum_d
from lensopt.refraction.phoropter import check_lens_step, check_room_for_lenses, round_to_step
from lensopt.refraction.trial import Trial, TrialHistory, check_no_axis, check_trial_bounds
from lensopt.stopping import StopRule, stop_threshold
from lensopt.threads import single_threaded

#: Default letter sizes and lens ranges of the paper's experiment (METHOD.md §1).
LETTER_BOUNDS_LOGMAR = (-1.0, 2.0)
SPHERE_BOUNDS_D = (-4.0, 4.0)
CYLINDER_BOUNDS_D = (-4.0, 4.0)

#: ``(S, C) -> (S, S + C)``: the powers of a lens's two principal meridians. The blur of a residual
#: lens, ``rs² + (rs + rc)²`` (METHOD.md §1), is a round function of these, so a stationary kernel
#: on them sees the valley of equal blur the way the patient does (an ellipse tilted in (S, C)).
MERIDIAN_MAP = ((1.0, 0.0), (1.0, 1.0))

#: β of UCB_Φ for lenses: Φ⁻¹(0.99), the companion paper's value, rather than the contextual
#: paper's Φ⁻¹(0.95). With the smaller β a session whose first lucky answers point to the edge
#: of the lens box stays there (the Φ-scale bonus of a lens believed worse is squashed); on the
#: Table 3 patients Φ⁻¹(0.99) removed those stalls (docs/results/table3 and table3-paper-beta).
REFRACTION_BETA = float(norm.ppf(0.99))

#: Likelihoods of the letter model: ``"floored"``, ``P = γ + (1 − γ − λ) Φ(f)`` with ``γ =
#: 1/n_alternatives`` (METHOD.md §2b, the default), or ``"probit"``, the paper's ``Φ(f)`` (sessions
#: saved before the floor existed resume with it, unchanged).
LIKELIHOODS = ("floored", "probit")

#: Lapse rate ``λ`` the letter model assumes by default: a patient may miss even a huge letter
#: (a blink, a wrong key). Small, so that one such miss cannot drag the estimate far either.
DEFAULT_MODEL_LAPSE = 0.02
#: Random first trials of the GP letter rules, unless told otherwise (a protocol's default too).
DEFAULT_N_INITIAL = 5

#: The seed paper's letter model (§5.3; Table 3): the plain probit ``Φ(f)`` fitted by Laplace, a
#: zero-mean prior, no information floor. ``RefractionOptimizer(**PAPER_LETTER_MODEL)`` reproduces
#: the paper's runs (``lensopt bench refraction``); the defaults are issue 14's model.
PAPER_LETTER_MODEL = {
    "likelihood": "probit",
    "lapse": 0.0,
    "inference": "laplace",
    "prior_mean": 0.0,
    "min_information_bits": 0.0,
    "beta": REFRACTION_BETA,
}

#: β of UCB_Φ with issue 14's letter model. Its sessions that still failed (> 0.1 logMAR after 100
#: trials) had searched one edge of the lens box and never looked inward; on tuning patients
#: (seeds 2000–2059, slope 5) β = 3.5 instead of Φ⁻¹(0.99) lowered the median error after 100
#: trials from 0.016 to 0.010 logMAR (failures 1 of 30 either way). 4.5 together with the prior mean
#: −5 (:data:`DEFAULT_PRIOR_MEAN`) once EP's clipped sites matched their tilted mean
#: (``ep_match_clipped_mean``): a more pessimistic prior for untested lenses needs a larger bonus to
#: explore them (tuning seeds 7000–7599; docs/never-lost.md, "EP's clipped sites").
LETTER_BETA = 4.5

#: Constant prior mean of the latent ``f(s, x) = w s + g(x)`` for lenses (floored model). With the
#: papers' zero mean an untested lens is predicted to have acuity 0 logMAR — as good as a normal
#: eye's best — so the posterior mean's maximum drifts to untested corners of the lens box. A
#: negative mean makes an untested lens a poor one until answers say otherwise (UCB still explores
#: it: its variance is the prior's). Chosen on tuning patients (seeds < 100,000): −3 first, −5 with
#: β = 4.5 (:data:`LETTER_BETA`) once EP's clipped sites matched their tilted mean; before that fix
#: a more negative mean set off EP's clipping cascade (docs/never-lost.md, "EP's clipped sites").
DEFAULT_PRIOR_MEAN = -5.0

#: A letter trial whose answer carries less than this information (bits) is not asked; the rule
#: takes the most informative trial anywhere instead (:mod:`lensopt.binary.rules`, "No stalls").
MIN_INFORMATION_BITS = 0.02

#: Relative tolerance of the L-BFGS-B refinement of the letter rules' searches (issue 14, decision
#: time): the acquisitions are probabilities (UCB_Φ) and bits (BALD), the model's own uncertainty
#: about them is orders of magnitude larger, and the lens is rounded to the phoropter's step
#: afterwards, so the search stops once an iteration improves the value by less than 1e-3 (scipy's
#: default, 2.2e-9, spends twice the iterations on digits no decision uses). 1e-4 was chosen first
#: (tuning seeds 7000-7039); 1e-3 with one start (:data:`SEARCH_STARTS`) on tuning seeds
#: 7000-7299 at slope 5: errors and failures within the spread of the two-start search at 1e-4, a
#: third less decision time at the 95th percentile (held-out figures: docs/never-lost.md). Sessions
#: saved with another value keep theirs.
SEARCH_TOLERANCE = 1e-3

#: EP's convergence tolerance in the letter model (the largest relative change of a site parameter
#: between iterations; the library's default is 1e-10). The posterior mean and sd it leaves differ
#: from a tight EP's (1e-12) by less than 1e-7 latent units at a session's end
#: (tests/binary/test_optimizer.py), where the searches stop at a relative 1e-3
#: (:data:`SEARCH_TOLERANCE`); it saves about 1.5 of ~11 warm-started iterations per trial at 100
#: trials (issue 14, decision time); in the robustness campaign 596 of the 600 held-out UCB-ALD
#: sessions kept their error within 4e-6 logMAR of the run at 1e-10 at every trial. Not looser: at
#: 1e-6 (two iterations fewer again) a session rebuilt from its saved state, fitted cold, proposed
#: its next trial ~5e-7 away from the uninterrupted session's; at 1e-8 they agree within 1e-7.
#: Sessions saved before keep the default.
EP_TOLERANCE = 1e-8

#: L-BFGS-B starts of the letter rules' lens search: the best of the 128 scrambled Halton
#: candidates (and the last trials' lenses) alone. The acquisitions over two lens powers are smooth
#: and seldom have two peaks the candidates do not already tell apart; a second start drawn among
#: the candidates cost a third of the search (the joint problem runs as long as its slowest start)
#: and changed no error on the tuning patients (above). Sessions saved with two keep two.
SEARCH_STARTS = 1


#: The noise of the letter model's virtual sign observations at the lens box's edges
#: (:attr:`lensopt.binary.settings.OptimizerSettings.edge_sign_noise`, latent units per D): the
#: acuity surface worsens outward across each edge for every patient whose correction lies inside
#: the box. Chosen on tuning patients (docs/never-lost.md). Sessions saved before have none.
EDGE_SIGN_NOISE = 0.3


#: TS-ALD's draws with issue 14's letter model: the x-step maximizes ``μ + c (f̃ − μ)``, the
#: posterior draw's deviation from the posterior mean scaled by ``c``
#: (:attr:`lensopt.binary.settings.OptimizerSettings.thompson_scale`). Chosen on tuning patients
#: (seeds 7000–7199 at slope 5, 7000–7099 at slopes 2 and 8, with lapses of 0.05 and with Sloan
#: letters; c = 1, 1.5 and 2 in every condition, 0.5 and 2.5 at slope 5, 0.5 at slope 2): with the
#: draws themselves (c = 1) sessions settled on a wrong lens, their posterior narrow there; c = 2
#: lost as many sessions or fewer in every condition (far fewer at slope 2) and settled sooner in all
#: but the Sloan letters; c = 0.5 lost many more (docs/never-lost.md, "TS-ALD's scaled draws").
#: Sessions saved before keep the draws themselves.
THOMPSON_SCALE = 2.0


#: The contextual optimizer's search settings a letter optimizer's ``settings_dict`` passes through
#: unchanged (the two-parameter and the full-prescription searches alike), read from the settings
#: themselves: :meth:`OptimizerSettings.to_dict` leaves some out at their old defaults.
SEARCH_SETTING_NAMES = (
    "beta",
    "n_candidates",
    "n_starts",
    "n_thompson_features",
    "refit_every",
    "refit_after",
    "min_information_bits",
    "search_tolerance",
    "ep_tolerance",
    "ep_match_clipped_mean",
    "draws_at_last_threshold",
    "thompson_scale",
)


def reference_kernel(likelihood: str = "probit") -> KernelSpec:
    """The shipped psychophysics-kernel hyperparameters, fitted on simulated sessions with the
    answer model ``likelihood``: ``"floored"`` (issue 14's letter model, EP,
    ``data/letter-model-hyperparameters.json``) or ``"probit"`` (the paper's, Laplace,
    ``data/refraction-hyperparameters.json``)."""
    name = LETTER_MODEL_HYPERPARAMETERS if likelihood == "floored" else REFRACTION_HYPERPARAMETERS
    return KernelSpec.from_dict(load_json(name)["kernel"])


class RefractionOptimizer(TrialHistory, ReportedLensCheck, FixedSettings):
    """ask/tell refraction: ``ask() -> Trial``, ``tell(trial, correct)``, ``best()`` the lens
    (:class:`lensopt.asktell.StoppableOptimizer`: ``confidence()`` and ``should_stop()`` too).

    Input columns of the model: ``[letter_logmar, sphere_d, cylinder_d]`` with the psychophysics
    kernel ``θ s s' + k_SE(x, x')`` (seed eq. 15); the shipped hyperparameters compare lenses by
    their principal-meridian powers ``(S, S + C)`` (:data:`MERIDIAN_MAP`), in which blur is round. ``lens_step_d`` rounds proposed
    lenses to a phoropter step (e.g. 0.25 D).

    The answers are modelled as the patient gives them (``likelihood="floored"``): ``P(correct) =
    γ + (1 − γ − λ) Φ(f)`` with the guess rate ``γ = 1/n_alternatives`` and the lapse rate
    ``λ = lapse``; the acuity threshold is then where ``Φ(f) = ½``. With ``likelihood="probit"``
    (the paper's model, and every session saved before the floor) ``P = Φ(f)`` absorbs the guesses
    and the threshold is where ``Φ(f) = (1 + γ)/2``. ``stop``: a :class:`lensopt.stopping.StopRule`
    (or its dict) for :meth:`should_stop`.

    The settings are fixed when the optimizer is made (:class:`lensopt.binary.settings.FixedSettings`):
    for others, ``RefractionOptimizer.from_settings({**o.settings_dict(), "lapse": 0.05}, o.history)``.
    """

    #: The answers a trial can get: a PsychoPy handler decides ahead for each while the patient
    #: looks at the letter (:mod:`lensopt.psychopy.lookahead`).
    SPECULATIVE_ANSWERS = (True, False)
    #: The settings ``**options`` passes on to the contextual optimizer (those it sets itself aside).
    _option_setting_names = frozenset(OptimizerSettings.__dataclass_fields__) - {
        "system_bounds",
        "context_bounds",
        "kernel",
    }

    def __init__(
        self,
        rule="ucb-ald",
        seed=0,
        *,
        sphere_bounds_d=SPHERE_BOUNDS_D,
        cylinder_bounds_d=CYLINDER_BOUNDS_D,
        letter_bounds_logmar=LETTER_BOUNDS_LOGMAR,
        n_initial=DEFAULT_N_INITIAL,
        lens_step_d=None,
        inference="ep",
        hyperparameters=None,
        n_alternatives=26,
        reference_context="adaptive",
        likelihood="floored",
        lapse=DEFAULT_MODEL_LAPSE,
        prior_mean=None,
        stop=None,
        **options,
    ):
        if rule == ACUITY_LAW_RULE:
            raise ValueError(
                f"rule {ACUITY_LAW_RULE!r} is not a GP rule: use lensopt.refraction.AcuityLawOptimizer "
                "(grid Bayes under the blur-acuity law)"
            )
        n_alternatives, self.lapse = checked_answer_model(n_alternatives, lapse)
        if likelihood not in LIKELIHOODS:
            raise ValueError(f"likelihood must be one of {', '.join(LIKELIHOODS)}, got {likelihood!r}")
        self.likelihood = likelihood
        self.stop = stop if stop is None or isinstance(stop, StopRule) else StopRule.from_dict(stop)
        if likelihood == "floored":
            options["guess_rate"], options["lapse_rate"] = 1.0 / n_alternatives, self.lapse
        options.setdefault("min_information_bits", MIN_INFORMATION_BITS if likelihood == "floored" else 0.0)
        options.setdefault("search_tolerance", SEARCH_TOLERANCE if likelihood == "floored" else None)
        options.setdefault("ep_tolerance", EP_TOLERANCE if likelihood == "floored" else None)
        options.setdefault("ep_match_clipped_mean", likelihood == "floored")
        options.setdefault("draws_at_last_threshold", likelihood == "floored")
        options.setdefault("edge_sign_noise", EDGE_SIGN_NOISE if likelihood == "floored" else None)
        options.setdefault("thompson_scale", THOMPSON_SCALE if likelihood == "floored" else 1.0)
        if likelihood == "floored":
            options.setdefault("n_starts", SEARCH_STARTS)
        options["prior_mean"] = (
            (DEFAULT_PRIOR_MEAN if likelihood == "floored" else 0.0) if prior_mean is None else prior_mean
        )
        kernel = reference_kernel(likelihood) if hyperparameters is None else hyperparameters
        if isinstance(kernel, dict):
            kernel = KernelSpec.from_dict(kernel)
        if isinstance(reference_context, (int, float)):
            reference_context = (float(reference_context),)
        self.lens_step_d = check_lens_step(lens_step_d)
        self.n_alternatives = n_alternatives
        options.setdefault("beta", LETTER_BETA if likelihood == "floored" else REFRACTION_BETA)
        given = (sphere_bounds_d, cylinder_bounds_d, letter_bounds_logmar)
        for name, pair in zip(("sphere_bounds_d", "cylinder_bounds_d", "letter_bounds_logmar"), given, strict=True):
            bounds_pair(name, pair)  # named as given (the core names its columns: system_bounds[0])
        check_room_for_lenses(1, self.lens_step_d, (sphere_bounds_d, cylinder_bounds_d), "a letter trial")
        self._core = ContextualOptimizer(
            system_bounds=(sphere_bounds_d, cylinder_bounds_d),
            context_bounds=(letter_bounds_logmar,),
            rule=rule,
            seed=seed,
            kernel=kernel,
            reference_context=reference_context,
            n_initial=n_initial,
            inference=inference,
            **options,
        )
        self._core.target_latent = (
            0.0 if likelihood == "floored" else float(norm.ppf((1.0 + 1.0 / n_alternatives) / 2.0))
        )
        self._history: list[tuple[Trial, bool]] = []

    # ---------------------------------------------------------------- settings
    @property
    def settings(self):
        return self._core.settings

    @property
    def rule(self) -> str:
        return self.settings.rule

    @property
    def seed(self) -> int:
        return self.settings.seed

    def settings_dict(self) -> dict:
        s = self.settings
        core = s.to_dict()
        return {
            "rule": s.rule,
            "seed": s.seed,
            "sphere_bounds_d": list(s.system_bounds[0]),
            "cylinder_bounds_d": list(s.system_bounds[1]),
            "letter_bounds_logmar": list(s.context_bounds[0]),
            "n_initial": s.n_initial,
            "lens_step_d": self.lens_step_d,
            "inference": s.inference,
            "hyperparameters": core["kernel"],
            "n_alternatives": self.n_alternatives,
            "likelihood": self.likelihood,
            "lapse": self.lapse,
            "prior_mean": s.prior_mean,
            "stop": None if self.stop is None else self.stop.to_dict(),
            "reference_context": core["reference_context"],
            **{k: getattr(s, k) for k in SEARCH_SETTING_NAMES},
            "edge_sign_noise": s.edge_sign_noise,
            "edge_sign_points": s.edge_sign_points,
        }

    @classmethod
    def _saved_settings(cls, settings: dict) -> dict:
        """Settings saved before the floored likelihood existed (no ``likelihood`` key) rebuild the
        plain-probit model they were run with; before ``search_tolerance``, scipy's default; before
        ``ep_tolerance``, EP's default; before ``draws_at_last_threshold``, the draw rules' ``s₀``;
        before ``edge_sign_noise``, no virtual observations at the lens box's edges; before
        ``ep_match_clipped_mean``, EP's clipped sites as they were; before ``thompson_scale``, the
        posterior draws themselves."""
        if "likelihood" not in settings:
            settings.update(likelihood="probit", lapse=0.0, prior_mean=0.0, min_information_bits=0.0)
        settings.setdefault("search_tolerance", None)
        settings.setdefault("ep_tolerance", None)
        settings.setdefault("draws_at_last_threshold", False)
        settings.setdefault("edge_sign_noise", None)
        settings.setdefault("ep_match_clipped_mean", False)
        settings.setdefault("thompson_scale", 1.0)
        return settings

    def to_state(self) -> dict:
        return {
            "format": "lensopt.refraction-state/1",
            "settings": self.settings_dict(),
            "history": [[t.letter_logmar, t.sphere_d, t.cylinder_d, int(c)] for t, c in self._history],
        }

    @classmethod
    @single_threaded
    def from_state(cls, state: dict) -> RefractionOptimizer:
        return cls.from_letter_state(state, "lensopt.refraction-state/1", "refraction")

    # ----------------------------------------------------------------- history
    @property
    def model(self):
        return self._core.model

    @property
    def last_decision_ms(self) -> float:
        return self._core.last_decision_ms

    # ---------------------------------------------------------------- ask/tell
    @single_threaded
    def ask(self) -> Trial:
        """The rule's trial; while the stopping rule's check is due
        (:mod:`lensopt.refraction.lens_check`), the reported lens at the letter size most
        informative through it (BALD)."""
        start = time.perf_counter()
        if self.check_due():
            lens, letter_logmar = np.asarray(self.best()), None
        else:
            query = self._core.ask()
            lens, (letter_logmar,) = query.system, query.context
        lens = np.array(self._phoropter_lens(lens))
        if letter_logmar is None:
            _, letter_logmar, _ = most_informative(self.model, lens[None, :], self.settings.context_bounds[0])
            self._core.last_decision_ms = 1e3 * (time.perf_counter() - start)
        return Trial(sphere_d=float(lens[0]), cylinder_d=float(lens[1]), letter_logmar=float(letter_logmar))

    @single_threaded
    def tell(self, trial: Trial, correct) -> None:
        """Record whether the letter of ``trial`` was named right; a trial outside the lens box or the
        letter bounds is refused (:func:`lensopt.refraction.trial.check_trial_bounds`)."""
        if not isinstance(trial, Trial):
            raise ValueError(f"trial must be a Trial (what ask() returns); got {type(trial).__name__}")
        check_no_axis(trial)
        if correct not in (0, 1, True, False):
            raise ValueError(f"correct must be True or False (or 1 or 0), got {correct!r}")
        (sphere_bounds_d, cylinder_bounds_d), (letter_bounds_logmar,) = (
            self.settings.system_bounds,
            self.settings.context_bounds,
        )
        check_trial_bounds(
            trial,
            letter_bounds_logmar=letter_bounds_logmar,
            sphere_bounds_d=sphere_bounds_d,
            cylinder_bounds_d=cylinder_bounds_d,
        )
        self._core.tell(
            Query(np.array([trial.letter_logmar]), np.array([trial.sphere_d, trial.cylinder_d])), int(correct)
        )
        self._history.append((trial, bool(correct)))

    # ------------------------------------------------------------------ answers
    @single_threaded
    def best(self) -> tuple[float, float]:
        """The lens (sphere_d, cylinder_d) maximizing the posterior mean."""
        sphere, cylinder = self._core.best()
        return float(sphere), float(cylinder)

    @single_threaded
    def certainty(self):
        """:class:`lensopt.refraction.certainty.LensCertainty` of :meth:`best`: the posterior probability
        that it is within 0.025 logMAR of the best lens, and the best lens's 95 % intervals (D).

        From posterior draws of the slope and the lens intercepts (:mod:`lensopt.refraction.certainty`); the
        draws come from ``(seed, n_trials)``, so the same history gives the same answer; more of them
        where it narrowly reaches the stopping rule's threshold (:func:`lensopt.refraction.certainty.refine_draws`)."""

        def compute():
            s = self.settings
            if self.model is None:
                return LensCertainty(0.0, s.system_bounds[0], s.system_bounds[1])
            rng = np.random.default_rng([s.seed, self.n_trials, CERTAINTY_STREAM])
            return lens_certainty(
                self.model,
                self.best(),
                s.system_bounds[0],
                s.system_bounds[1],
                rng,
                threshold=stop_threshold(self.stop),
            )

        return self._core._cached("certainty", compute)

    def confidence(self) -> float:
        """Posterior probability that :meth:`best` is within 0.025 logMAR of the best lens."""
        return self.certainty().confidence

    @single_threaded
    def confidence_reaches(self, threshold: float) -> bool:
        """``confidence() >= threshold``, the same answer from the same draws; at the stopping rule's
        threshold usually settled by the few lenses most likely to beat :meth:`best`
        (:func:`lensopt.refraction.certainty.confidence_reaches`)."""
        cached = self._core._cache.peek(self.n_trials, "certainty")
        if cached is not None or self.model is None or threshold != stop_threshold(self.stop):
            return self.confidence() >= threshold
        s = self.settings
        rng = np.random.default_rng([s.seed, self.n_trials, CERTAINTY_STREAM])
        return confidence_reaches(self.model, self.best(), s.system_bounds[0], s.system_bounds[1], rng, threshold)

    def _reported_lens(self) -> tuple[float, float, None]:
        """:meth:`best` on the phoropter's steps, as :meth:`ask` sets it for a check and a session
        stores it: the lens whose letters the stopping rule's check counts."""
        sphere_d, cylinder_d = self._phoropter_lens(self.best())
        return sphere_d, cylinder_d, None

    def _phoropter_lens(self, lens) -> tuple[float, float]:
        """``(sphere_d, cylinder_d)`` rounded to ``lens_step_d`` within the box (unchanged without a step)."""
        s_bounds = self.settings.system_bounds
        sphere_d, cylinder_d = (round_to_step(v, self.lens_step_d, bounds) for v, bounds in zip(lens, s_bounds))
        return float(sphere_d), float(cylinder_d)

    def _confidence_test(self) -> dict:
        """The stopping rule's test: the confidence computed only once ``min_trials`` answers are in,
        and only as far as the rule's threshold needs (:meth:`confidence_reaches`)."""
        return {"reaches": self.confidence_reaches}

    @single_threaded
    def optimum_draws_d(self, n_samples: int, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
        """``(n_samples, 2)`` draws of the best lens and the variances (D²) of the grid they lie on:
        Thompson samples of the argmax of the fitted model's latent
        (:mod:`lensopt.refraction.optimum_draws`, at the largest letter size)."""
        s = self.settings
        sphere_bounds_d, cylinder_bounds_d = s.system_bounds
        return sample_optimum_d(self.model, sphere_bounds_d, cylinder_bounds_d, s.context_bounds[0][1], rng, n_samples)

    @single_threaded
    def psychometric_band(self, letters_logmar, sphere_d, cylinder_d, mass=0.95):
        """``P(correct)`` at each letter size through one lens — the answer model's link
        (``γ + (1 − γ − λ) Φ(f)``, or ``Φ(f)``) at the latent's posterior mean, and at the bounds of its
        central ``mass`` (mean ± z·sd: the link is monotone)."""
        letters = np.asarray(letters_logmar, float).ravel()
        X = np.column_stack([letters, np.full_like(letters, sphere_d), np.full_like(letters, cylinder_d)])
        model = self.model
        mean, var = model.predict_latent(X)
        half_width = norm.ppf(0.5 + mass / 2.0) * np.sqrt(np.clip(var, 0.0, None))
        return tuple(
            floored_mean(f, np.zeros_like(f), model.guess_rate, model.lapse_rate)
            for f in (mean, mean - half_width, mean + half_width)
        )

    @single_threaded
    def predicted_acuity_logmar(self, sphere_d, cylinder_d):
        """The model's acuity threshold (logMAR) with a lens, as ``(mean, sd)``.

        The threshold is the letter size where the model's ``P(correct) = (1 + γ)/2``. With the
        psychophysics kernel the latent mean is linear in the letter size,
        ``μ(s, x) = a s + b(x)``, so the threshold is ``(z − b(x)) / a``; ``sd`` is the delta-method
        ``σ_b(x) / a`` (the slope's own uncertainty is neglected).
        """
        model = self.model
        lens, shape = lens_columns(sphere_d, cylinder_d)
        if model is None:
            nan = np.full(shape, math.nan)
            return nan[()], nan[()]
        n = lens.shape[0]
        X = np.vstack([np.column_stack([np.zeros(n), lens]), np.column_stack([np.ones(n), lens])])
        mean, var = model.predict_latent(X)
        intercept, slope = mean[:n], mean[n:] - mean[:n]
        slope = np.where(slope > 1e-9, slope, np.nan)
        threshold = (self._core.target_latent - intercept) / slope
        sd = np.sqrt(np.maximum(var[:n], 0.0)) / slope
        return threshold.reshape(shape)[()], sd.reshape(shape)[()]  # [()]: numbers for a lens given as numbers
