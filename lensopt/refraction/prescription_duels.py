"""PrescriptionDuelOptimizer: the full prescription (sphere, cylinder, axis) from duels (issue 16).

"One or two, or the same?" between two phoropter lenses, the letter size as the context: the
contextual preference model of :class:`lensopt.refraction.duels.DuelRefractionOptimizer` (the probit
duel likelihood ``Φ(f(s, x₁) − f(s, x₂))``, METHOD.md §5, Laplace; "the same": below) over the
Thibos power vector ``x = (M, J0, J45)`` of the lens: model columns ``[letter_logmar, m_d, j0_d, j45_d]``, the box a :class:`~lensopt.refraction.prescription.SearchBox`
around the starting refraction (the full box without one), as the letter search
(:mod:`lensopt.refraction.prescription_letters`).

- **the acuity link** (``clarity_link="acuity"``, the default of ``muc-ald`` and ``random`` since 28 Nov
  2026): the duels are modelled as the letter task's latent seen through the clarity it gives, which
  saturates for letters far above or below threshold (:mod:`lensopt.refraction.prescription_link`);
  the probit utility below got lost with patients whose clarity saturates. What follows describes the
  probit utility (``clarity_link="linear"``; the other rules and sessions saved before), and the
  answer-independent parts both share (close lenses, phoropter lenses, most plus, "the same").
- **kernel**: ``σ² k_SE(s, s') k_SE(x, x')`` with one lengthscale for the three coordinates — blur
  is the residual's power-vector length, so an isotropic kernel sees blur as the patient does. The
  two-parameter duel kernel mapped as the letter search maps its own: the duel kernel has
  lengthscales ``(2.5, 3.5)`` D over ``(S, C)``; the isotropic kernel with the same area of its
  correlation ellipse has ``√(2.5 × 3.5) = 2.96`` D (the map ``(S, C) → (S, S + C)`` to meridian
  powers has determinant 1, so this is the meridian lengthscale too), and in meridian powers
  ``|ΔP|² = 2 |Δx|²``: :data:`MAPPED_LENS_LENGTHSCALE_D` ``= 2.96 / √2 = 2.09`` D. That kernel
  was chosen for the papers' slope 5; at a human slope (14) the utility falls ~3 times as fast
  with blur, and on tuning patients the mapped 2.09 D left the reported M 0.35 D too plus
  after 100 duels: the default :data:`LENS_LENGTHSCALE_D` is 1.5 D. Letter lengthscale and
  variance are the duel kernel's.
- **close lenses**: a phoropter flips between neighbours, and a patient cannot judge "one or two"
  between lenses a diopter apart any better than between neighbours (both look bad). The rule
  (``muc-ald`` by default, ``kss-ald`` and the controls of
  :data:`lensopt.preference.settings.CONTEXTUAL_RULES`) runs unchanged, but on a *local box*: the
  box of half-width :data:`DUEL_SEPARATION_D` around the champion (the most-plus optimum below),
  cut to the search box. MUC's champion is then the first lens and its maximally uncertain
  challenger is sought near it; KSS's two Thompson lenses both lie near the champion. The second
  lens is then pulled onto the ball of radius :data:`DUEL_SEPARATION_D` around the first (a corner
  of the local box is √3 times as far), so that the two lenses differ by at most 0.75 D of blur
  before rounding (at most ~1 D after). The random first duels are drawn the same way around the
  start. With the ALD rules the letter size is then chosen by BALD for the two lenses actually
  shown (after pulling and rounding), as the rule does for its own pair.
- **phoropter lenses**: both lenses are written in minus cylinder and rounded (``lens_step_d``,
  0.25 D; ``axis_step_deg``, 1°); a second lens that rounds onto the first moves to its nearest
  distinct phoropter neighbour. The model is told the rounded lenses' power vectors.
- **most plus**: as the letter search (``objective_tilt``, :class:`lensopt.binary.rules.TiltedObjective`),
  the duels' champion and the reported lens maximize ``μ_f(s₀, x) + κ M`` (:data:`PLUS_PREFERENCE`):
  an accommodating eye sees every lens up to its amplitude too minus as clearly, the duels between
  them are coin flips, and without the tilt the best lens wanders anywhere on that plateau. The
  preference rules themselves have no tilt, so it is applied here, to the champion (MUC's first
  lens, and the centre of the local box). The tilt moves the optimum ``κ / (2c)`` plus of the
  utility's peak where the utility falls as ``−c (M − M*)²``; the letter search subtracts this with
  the psychometric slope its latent carries, the duel search with ``c`` read off the posterior mean
  on the plus side of the optimum (the probit duel likelihood fixes the utility's scale, though not
  its offset): :meth:`PrescriptionDuelOptimizer.plus_offset_d`, at most :data:`DUEL_MAX_PLUS_OFFSET_D`. The champion is sought in a trust
  region around the lens shown with the highest posterior mean
  (:meth:`PrescriptionDuelOptimizer.search_optimum`): far from the lenses shown the posterior mean is
  its prior, and the tilt alone would send it to the plus edge of the box. The lens is reported
  with half the champion's tilt (:data:`REPORT_TILT_SHARE`).
- **the same**: near the best lens two neighbours often look alike, and a patient says so. With
  ``same_answers="both-ways"`` (the default, :data:`SAME_ANSWERS`) such an answer is told to the
  probit model as the duel answered once each way (:meth:`lensopt.preference.PreferenceOptimizer.tell_same`:
  likelihood ``Φ(g) Φ(−g)``, peaked at equal utilities); ``"dropped"`` keeps it in the history only,
  as sessions saved before it did (they are rebuilt so). Chosen on tuning patients (clinic patients of
  seeds 5000–5039, slope 14, an autorefraction start, with and without accommodation, patients who
  say "the same" when their Gumbel-noisy utilities differ by less than 0.5, 1 or 2 logit units — 10,
  21 and 38 of 60 answers): both ways, the median blur error after 20 duels was 0.21–0.24 D
  against 0.28–0.31 D dropped, after 60 duels 0.14–0.16 against 0.16–0.19 D; a patient who never
  says "the same" is not affected.
"""

from __future__ import annotations

import copy
import math
import time
from dataclasses import dataclass, replace

import numpy as np

from lensopt.optimize import maximize_on_line, uniform
from lensopt.preference import DuelQuery, PreferenceOptimizer
from lensopt.preference import acquisition as preference_acquisition
from lensopt.preference import rules as preference_rules
from lensopt.preference.link import AcuityLinkDuelGP
from lensopt.preference.settings import CONTEXTUAL_RULES
from lensopt.refraction.duels import UTILITY_VARIANCE, normalize_duel_answer, saved_duel_answer
from lensopt.refraction.lens import Lens
from lensopt.refraction.letters import DEFAULT_MODEL_LAPSE, LETTER_BOUNDS_LOGMAR
from lensopt.refraction.prescription import PRESCRIPTION_SEARCH
from lensopt.refraction.prescription_comparisons import (
    DUEL_SEPARATION_D,
    LENS_LENGTHSCALE_D,
    MAPPED_LENS_LENGTHSCALE_D,
    MAX_PLUS_OFFSET_D,
    positive,
    power_vector_kernel,
    pull_within,
)
from lensopt.refraction.prescription_link import (
    LINK_PLUS_PREFERENCE,
    AcuityLinkSearch,
    fit_link,
    link_model,
)
from lensopt.refraction.steps import DEFAULT_AXIS_STEP_DEG, DEFAULT_LENS_STEP_D
from lensopt.refraction.trial import DUEL_ANSWERS, SAME_ANSWERS
from lensopt.threads import single_threaded

#: The most-plus preference ``κ`` (utility units per D of M): the duels' champion and the reported
#: lens maximize ``μ_f(s₀, x) + κ M`` rather than ``μ_f``, so that among lenses that look equally
#: clear (an accommodating eye's plateau) the most plus wins; the report then moves back by the
#: offset ``κ / (2c)`` that the tilt causes where the utility falls as ``−c (M − M*)²``
#: (:meth:`PrescriptionDuelOptimizer.plus_offset_d`). Chosen on tuning patients with
#: :data:`LENS_LENGTHSCALE_D`: 1 gave 0.22 / 0.24 / 0.17 D after 40 / 60 / 100 duels without
#: accommodation (M SD 0.16 D with it), 2 gave 0.34 / 0.20 / 0.14 D (M SD 0.06 D); 5 drifts plus.
PLUS_PREFERENCE = 2.0

#: The share of :data:`PLUS_PREFERENCE` with which the lens is reported: the champion leans plus
#: with the whole ``κ`` (the duels then explore the plus side of an accommodating eye's plateau),
#: the report with half of it. With the whole ``κ`` the offset ``κ / (2c)`` subtracted was mostly
#: the cap of 0.5 D and the reported M stayed too plus. On tuning patients (clinic patients of seeds
#: 5000–5029, slope 14, an autorefraction start, with and without accommodation; the trust region
#: centred by the posterior mean), mean M error after 40 / 60 duels: +0.19 / +0.09 D with the whole
#: ``κ`` (median blur error 0.33 D after 40), −0.02 / −0.03 D with half (0.28 D); the whole ``κ``
#: with a cap of 0.75 or 1 D instead: −0.05 / −0.12 and −0.21 / −0.19 D; the untilted optimum
#: reported: about as with half.
REPORT_TILT_SHARE = 0.5

#: The largest most-plus offset (D of M) the report subtracts from its tilted optimum (the class
#: default :data:`~lensopt.refraction.prescription_comparisons.MAX_PLUS_OFFSET_D`, 0.5 D, before).
#: With "the same" told both ways the posterior mean is flatter along M, ``c`` smaller and the offset
#: ``κ / (2c)`` larger: the report leaned minus. Chosen on tuning patients (clinic patients of seeds
#: 5000–5039, slope 14, an autorefraction start, with and without accommodation, 60 duels; patients
#: who never say "the same" and who say it below 1 or 2 logit units) among the caps 0.5, 0.375 and
#: 0.25 D and the report tilt shares 0.5, 0.35 and 0.25: with 0.25 and the share 0.5 the mean M
#: error stayed within −0.04 to +0.03 D in every condition after 20, 40 and 60 duels (−0.08 to
#: −0.01 D with 0.5; the smaller shares, any cap: −0.06 to +0.01 D), the median blur error at most
#: 0.001 D above the 0.5 D cap's and mostly below it, the M limits about as narrow as any variant's.
DUEL_MAX_PLUS_OFFSET_D = 0.25

#: Depth ``a₀`` of the utility's prior mean about the start, ``m(x) = −a₀ log10(1 + |x − x_start|²)``
#: (utility units; :class:`lensopt.gp.mean.BowlMean` over the power vector): the autorefraction is
#: near the answer, so a lens far from it is a priori less clear, in the shape of the acuity law
#: (METHOD.md §1; the patient's utility is about ``a (s − VA)``, ``a`` the psychometric slope).
#: Without it the first random duels put the reported lens ~1.3 D of blur from the truth, worse than
#: the start. Chosen on tuning patients (clinic patients of seeds 5000–5029, slope 14, an
#: autorefraction start, with and without accommodation, 60 duels) among 3, 4, 5, 6, 7, 10 and 14,
#: then checked on seeds 5030–5059: median blur error after 10 / 20 / 40 duels 0.35 / 0.26 / 0.16 D
#: with 5 against 0.83 / 0.50 / 0.29 D without (the second sample 0.39 / 0.28 / 0.20 against
#: 0.72 / 0.51 / 0.30), J0 and J45 limits after 40 about ±0.2 D (±0.4); 10 and 14 spread M wider.
#: 0: the flat prior of the papers, as sessions saved before it had.
START_PRIOR_DEPTH = 5.0

#: Rules: the contextual preference rules (``muc-ald`` the default).
PRESCRIPTION_DUEL_RULES = CONTEXTUAL_RULES
DEFAULT_RULE = "muc-ald"
#: Rules whose letter size is chosen by BALD (recomputed for the lenses shown).
BALD_CONTEXT_RULES = ("muc-ald", "kss-ald")

#: Rules of the acuity link: the duel of largest information (``muc-ald``: the champion against the
#: challenger and letter size of largest BALD) or random ones.
LINK_RULES = ("muc-ald", "random")


#: Letters to choose from, for the guess floor of the acuity link (26 as the letter task's default).
DEFAULT_N_ALTERNATIVES = 26

#: Seed stream of the randomness of ``ask``.
ASK_STREAM = 0xD0E1

#: The columns of each lens of a duel in a saved state's history row.
LENS_COLUMNS = ("sphere_d", "cylinder_d", "axis_deg")

STATE_FORMAT = "lensopt.prescription-duel-state/1"


@dataclass(frozen=True)
class PrescriptionDuelTrial:
    """One duel of the full prescription: letters of ``letter_logmar`` through ``first_lens`` then
    ``second_lens`` (phoropter lenses with their axes), "which is clearer, one or two?"."""

    first_lens: Lens
    second_lens: Lens
    letter_logmar: float

    def __post_init__(self):
        for name in ("first_lens", "second_lens"):
            if not isinstance(getattr(self, name), Lens):
                raise ValueError(f"PrescriptionDuelTrial.{name} must be a Lens, got {getattr(self, name)!r}")
        s = self.letter_logmar
        if isinstance(s, bool) or not isinstance(s, (int, float)) or not math.isfinite(s):
            raise ValueError(f"PrescriptionDuelTrial.letter_logmar must be a finite number, got {s!r}")
        object.__setattr__(self, "letter_logmar", float(s))


def prescription_duel_kernel(lens_lengthscale_d=LENS_LENGTHSCALE_D):
    """``σ² k_SE(s, s') k_SE(x, x')`` over ``[letter_logmar, m_d, j0_d, j45_d]``, isotropic in ``x``."""
    return power_vector_kernel(lens_lengthscale_d, UTILITY_VARIANCE)


class PrescriptionDuelOptimizer(AcuityLinkSearch):
    """ask/tell duels for the full prescription: ``ask() -> PrescriptionDuelTrial``, ``tell(trial,
    answer)`` (``"first"``, ``"second"``, ``"same"`` or a bool, True = first), ``best()`` the power
    vector, :meth:`prescription` the result (:class:`lensopt.asktell.AskTellOptimizer`).

    ``start``: the starting refraction (a :class:`Lens`, its text, or ``None`` for the full box);
    ``m_half_width_d``/``j_half_width_d``: the box around it (:class:`SearchBox`). ``rule``: of
    :data:`PRESCRIPTION_DUEL_RULES`; ``duel_separation_d``: the largest distance between the two
    lenses (:data:`DUEL_SEPARATION_D`); ``lens_lengthscale_d``: the kernel's (:data:`LENS_LENGTHSCALE_D`).
    No stopping rule: the preference model has no acuity scale for a confidence.
    ``report_tilt_share`` (:data:`REPORT_TILT_SHARE`) and ``trust_centre`` (``"mean"``) are stored so
    that sessions saved before them resume as they ran (1 and ``"tilted"``).
    """

    link_rules = LINK_RULES
    #: The answers a duel can get: a PsychoPy handler decides ahead for each while the patient
    #: compares (:mod:`lensopt.psychopy.lookahead`); ``canonical_answer`` spells a given one so.
    SPECULATIVE_ANSWERS = DUEL_ANSWERS
    canonical_answer = staticmethod(normalize_duel_answer)

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
        inference="laplace",
        duel_separation_d=DUEL_SEPARATION_D,
        lens_lengthscale_d=LENS_LENGTHSCALE_D,
        plus_preference=None,
        start_prior_depth=START_PRIOR_DEPTH,
        same_answers=SAME_ANSWERS[0],
        max_plus_offset_d=DUEL_MAX_PLUS_OFFSET_D,
        clarity_link=None,
        n_alternatives=DEFAULT_N_ALTERNATIVES,
        model_lapse=DEFAULT_MODEL_LAPSE,
        report_tilt_share=REPORT_TILT_SHARE,
        trust_centre="mean",
    ):
        rule = DEFAULT_RULE if rule is None else rule
        self._set_clarity_link(clarity_link, n_alternatives, model_lapse, rule)
        clarity_link = self.clarity_link
        self._set_trust_centre(trust_centre)
        self.report_tilt_share = positive("report_tilt_share", report_tilt_share, 1.0)
        if same_answers not in SAME_ANSWERS:
            raise ValueError(f"unknown same_answers {same_answers!r}; choose one of: {', '.join(SAME_ANSWERS)}")
        self.same_answers = same_answers
        self.max_plus_offset_d = positive("max_plus_offset_d", max_plus_offset_d, 2.0)
        if rule not in PRESCRIPTION_DUEL_RULES:
            raise ValueError(f"unknown duel rule {rule!r}; choose one of: {', '.join(PRESCRIPTION_DUEL_RULES)}")
        default_kappa = LINK_PLUS_PREFERENCE if clarity_link == "acuity" else PLUS_PREFERENCE
        kappa = default_kappa if plus_preference is None else plus_preference
        self._set_lens_options(
            start, m_half_width_d, j_half_width_d, lens_step_d, axis_step_deg, lens_lengthscale_d, kappa
        )
        self.rule = rule
        self.duel_separation_d = positive("duel_separation_d", duel_separation_d, 4.0)
        self._set_start_prior_depth(start_prior_depth)
        self._core = PreferenceOptimizer(
            self.widened_bounds_d,
            (tuple(letter_bounds_logmar),),
            rule=rule,
            seed=seed,
            kernel=prescription_duel_kernel(self.lens_lengthscale_d),
            n_initial=n_initial,
            inference=inference,
            utility_mean=self.start_prior(),
            refit_from_prior=True,  # a resumed session decides bit for bit as the uninterrupted one
        )
        self._history: list[tuple[PrescriptionDuelTrial, str]] = []
        self.last_decision_ms = math.nan
        if self.clarity_link == "acuity":
            with_bowl = self.box.start is not None and self.start_prior_depth > 0
            self._link_prior = link_model(self.box.centre.to_array(), with_bowl, self.n_alternatives, self.model_lapse)

    # ---------------------------------------------------------------- settings and state

    def settings_dict(self) -> dict:
        s = self._core.settings
        return {
            "search": PRESCRIPTION_SEARCH,
            "rule": self.rule,
            "seed": s.seed,
            **self._lens_settings(),
            "letter_bounds_logmar": list(s.context_bounds[0]),
            "n_initial": s.n_initial,
            "lens_step_d": self.lens_step_d,
            "axis_step_deg": self.axis_step_deg,
            "inference": s.inference,
            "duel_separation_d": self.duel_separation_d,
            "lens_lengthscale_d": self.lens_lengthscale_d,
            "plus_preference": self.plus_preference,
            "start_prior_depth": self.start_prior_depth,
            "trust_centre": self.trust_centre,
            "same_answers": self.same_answers,
            "max_plus_offset_d": self.max_plus_offset_d,
            "clarity_link": self.clarity_link,
            "n_alternatives": self.n_alternatives,
            "model_lapse": self.model_lapse,
            "report_tilt_share": self.report_tilt_share,
        }

    #: Commit 6768778, 27 Nov 2026 15:48:39 UTC.
    START_PRIOR_SINCE_S = 1795794519

    @classmethod
    def _settings_centred(cls, settings: dict, created_at_s: float, mean: bool) -> dict:
        """As :meth:`PrescriptionComparisons._settings_centred`, and the report's share of the tilt
        that came with the centre by the mean (commit 45b3122): :data:`REPORT_TILT_SHARE` with it,
        the whole of it before."""
        share = REPORT_TILT_SHARE if mean else 1.0
        return {"report_tilt_share": share, **super()._settings_centred(settings, created_at_s, mean)}

    @classmethod
    def _saved_settings(cls, settings: dict) -> dict:
        """Settings as ``settings_dict()`` wrote them; those written before "the same" was modelled
        dropped it and capped the most-plus offset at 0.5 D, those written before the prior about
        the start reported with the whole tilt (and are rebuilt so)."""
        if "start_prior_depth" not in settings:  # see PrescriptionComparisons._saved_settings
            settings.setdefault("report_tilt_share", 1.0)
        settings.setdefault("report_tilt_share", REPORT_TILT_SHARE)
        settings = super()._saved_settings(settings)
        settings.setdefault("same_answers", "dropped")
        settings.setdefault("max_plus_offset_d", MAX_PLUS_OFFSET_D)
        settings.setdefault("clarity_link", "linear")
        return settings

    def to_state(self) -> dict:
        def lens(x: Lens):
            return [x.sphere_d, x.cylinder_d, x.axis_deg]

        return {
            "format": STATE_FORMAT,
            "settings": self.settings_dict(),
            "history": [[t.letter_logmar, *lens(t.first_lens), *lens(t.second_lens), a] for t, a in self._history],
        }

    @classmethod
    @single_threaded
    def from_state(cls, state: dict) -> PrescriptionDuelOptimizer:
        """The optimizer of a saved state, every part checked first (:meth:`TrialHistory.from_row_state`)."""

        def trial_of(values):
            s, S1, C1, A1, S2, C2, A2 = values
            return PrescriptionDuelTrial(Lens(S1, C1, A1), Lens(S2, C2, A2), s)

        columns = ("letter_logmar", *(f"{lens}_{name}" for lens in ("first", "second") for name in LENS_COLUMNS))
        return cls.from_row_state(
            state, STATE_FORMAT, "prescription duel", columns, "answer", trial_of, saved_duel_answer
        )

    # ---------------------------------------------------------------- the model (PrescriptionComparisons)
    @property
    def _radius_d(self) -> float:
        return self.duel_separation_d

    @property
    def model(self):
        """The GP of the answers (None before the first modelled answer): the acuity-link model
        (:class:`lensopt.preference.link.AcuityLinkDuelGP`) or the core's probit preference GP."""
        return self._core.model if self.clarity_link == "linear" else self._fitted_link()

    def _predict(self, X, full_cov=False):
        if self.clarity_link == "acuity":
            return self._link_predict(X, full_cov=full_cov)
        return self.model.predict_utility(X, full_cov=full_cov)

    def _mean_and_gradient(self, X):
        if self.clarity_link == "acuity":
            return self._link_mean_and_gradient(X)
        mean, _, dmean, _ = self.model.predict_utility_with_gradient(X)
        return mean, dmean

    def _shown_lenses(self) -> np.ndarray:
        if self.clarity_link == "acuity":
            return self._link_shown_lenses()
        return preference_rules.training_members(self.model)

    def _told_lenses(self) -> np.ndarray:
        return self._core.duels[:, 1:].reshape(-1, 3)

    def _local_settings(self, centre_d: np.ndarray):
        """The preference settings with the box of half-width ``duel_separation_d`` around ``centre_d``,
        cut to the search box."""
        return replace(self._core.settings, system_bounds=self.local_bounds(centre_d))

    # ---------------------------------------------------------------- ask/tell
    @single_threaded
    def ask(self) -> PrescriptionDuelTrial:
        """The next duel: two close phoropter lenses and a letter size (see the module docstring)."""
        t0 = time.perf_counter()
        rng = np.random.default_rng([self._core.settings.seed, self.n_trials, ASK_STREAM])
        champion = self.search_optimum()
        local = self._local_settings(champion)
        model = self.model
        if self.clarity_link == "acuity":
            return self._ask_through_link(t0, rng, champion, local)
        if model is None or self._core.n_trials < max(local.n_initial, 1) or self.rule == "random":
            members = uniform(local.system_bounds, 2, rng)
            context = preference_rules.random_context(local, rng)
        else:
            decision = preference_rules.DuelDecision(
                model, local, rng, self._core.reference_context(), lambda: champion.copy()
            )
            context, members = preference_rules.choose(decision)
        second_d = pull_within(members[0], members[1], self.duel_separation_d)
        first = self.phoropter_lens(members[0])
        second = self.distinct_lens([first], second_d)
        if model is not None and self.rule in BALD_CONTEXT_RULES:
            shown = np.array([first.power_vector().to_array(), second.power_vector().to_array()])
            context, _ = maximize_on_line(
                preference_acquisition.ContextBALD(model, shown),
                local.context_bounds,
                0,
                {},
                n_points=preference_rules.CONTEXT_STEP_GRID,
            )
        self.last_decision_ms = 1e3 * (time.perf_counter() - t0)
        return PrescriptionDuelTrial(first, second, float(np.asarray(context, dtype=float)[0]))

    def _ask_through_link(self, t0, rng, champion, local) -> PrescriptionDuelTrial:
        """The duel of the acuity link (:meth:`AcuityLinkSearch._link_comparison`): the champion
        against the challenger and letter size of largest information (random ones for the rule
        "random")."""

        def random_duel(local, rng):
            second_d = uniform(local.system_bounds, 2, rng)[1]
            return preference_rules.random_context(local, rng), second_d[None, :]

        (first, second), context = self._link_comparison(rng, champion, local, 1, random_duel)
        self.last_decision_ms = 1e3 * (time.perf_counter() - t0)
        return PrescriptionDuelTrial(first, second, context)

    def _fit_link_on_history(self) -> AcuityLinkDuelGP | None:
        duels = [
            (t.letter_logmar, t.first_lens.power_vector().to_array(), t.second_lens.power_vector().to_array(), a)
            for t, a in self._history
        ]
        return fit_link(copy.copy(self._link_prior), duels, self.same_answers)  # the prior stays unfitted

    @single_threaded
    def tell(self, trial: PrescriptionDuelTrial, answer) -> None:
        """Record the answer to ``trial``: ``"first"`` (lens 1 clearer; or True/1), ``"second"``
        (False/0) or ``"same"`` (told both ways, or kept in the history only: :attr:`same_answers`)."""
        if not isinstance(trial, PrescriptionDuelTrial):
            raise ValueError(f"trial must be a PrescriptionDuelTrial; got {type(trial).__name__}")
        for name, lens in (("first lens", trial.first_lens), ("second lens", trial.second_lens)):
            self.check_in_box(name, lens)
        answer = normalize_duel_answer(answer)
        members = np.array([trial.first_lens.power_vector().to_array(), trial.second_lens.power_vector().to_array()])
        if np.allclose(members[0], members[1], rtol=0.0, atol=1e-9):  # told, every later ask and best() failed
            raise ValueError(
                f"a duel's two lenses must differ; both are {trial.first_lens.format()}: the same lens twice "
                "says nothing of which is clearer"
            )
        query = DuelQuery(context=np.array([trial.letter_logmar]), members=members)
        if answer != "same":
            self._core.tell(query, answer == "first")
        elif self.same_answers == "both-ways":
            self._core.tell_same(query)
        else:
            self._core.note_unmodelled_answer()
        self._history.append((trial, answer))


__all__ = [
    "DUEL_MAX_PLUS_OFFSET_D",
    "DUEL_SEPARATION_D",
    "LENS_LENGTHSCALE_D",
    "MAPPED_LENS_LENGTHSCALE_D",
    "PRESCRIPTION_DUEL_RULES",
    "REPORT_TILT_SHARE",
    "SAME_ANSWERS",
    "START_PRIOR_DEPTH",
    "PrescriptionDuelOptimizer",
    "PrescriptionDuelTrial",
    "prescription_duel_kernel",
    "pull_within",
]
