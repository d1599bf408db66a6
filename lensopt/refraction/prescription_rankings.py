"""PrescriptionRankingOptimizer: the full prescription (sphere, cylinder, axis) from rankings (issue 16).

"Put these three lenses in order, clearest first": the ranking model of
:class:`lensopt.refraction.rankings.RankingRefractionOptimizer` (:class:`lensopt.ranking.RankingOptimizer`,
Nguyen et al. 2021: top-k Plackett–Luce rankings under Gumbel noise on a GP of the utility, a
variational posterior, MPES for the lenses, then the letter size by mutual information) over the
Thibos power vector ``x = (M, J0, J45)`` of the lens: model columns ``[letter_logmar, m_d, j0_d,
j45_d]``, the box a :class:`~lensopt.refraction.prescription.SearchBox` around the starting
refraction (the full box without one), as the duels of the full prescription
(:mod:`lensopt.refraction.prescription_duels`), with which it shares the phoropter lenses, the
most-plus champion and report and the intervals (:mod:`lensopt.refraction.prescription_comparisons`).

- **kernel**: the duels' isotropic kernel (:func:`~lensopt.refraction.prescription_comparisons.power_vector_kernel`,
  lengthscale 1.5 D) on the ranking model's logit scale: variance ``UTILITY_VARIANCE ·
  MODEL_LOGIT_SCALE²``, as :mod:`lensopt.refraction.rankings` puts the duel kernel on it.
- **close lenses**: MPES chooses the set on a *local box* of half-width ``ranking_radius_d``
  (:data:`RANKING_RADIUS_D`) around the champion (the most-plus optimum of the trust region, offered
  to MPES as a member), cut to the search box; each lens is then pulled onto the ball of that
  radius around the champion, so that no lens of the set is more than ``2 × ranking_radius_d`` of
  blur from another before rounding (a phoropter flips between neighbours). The random first
  rankings are drawn the same way around the start. The letter size is then chosen by mutual
  information for the lenses actually shown (after pulling and rounding).
- **phoropter lenses**: every lens in minus cylinder, rounded to 0.25 D and 1°; a lens that rounds
  onto an earlier one of the set moves to its nearest free phoropter neighbour. The model is told
  the rounded lenses' power vectors.
- **most plus**: the champion and the report maximize ``μ_f(s₀, x) + κ M`` with ``κ`` the duels'
  :data:`~lensopt.refraction.prescription_duels.PLUS_PREFERENCE` in logit units
  (:data:`PLUS_PREFERENCE`), in a trust region around the lens shown with the highest posterior
  mean, the report moved back by ``κ / (2c)``, at most :data:`RANKING_MAX_PLUS_OFFSET_D`.

**Through the acuity link** (``clarity_link="acuity"``, the default of ``mpes-ald`` and ``random``
since 29 Nov 2026; :mod:`lensopt.refraction.prescription_link`): the model of the full prescription's
duels (the letter latent ``f(s, x) ≈ a (s − VA(x))``, the acuity law about the start as its prior
mean, the clarity ``h(f) = Φ⁻¹(γ + (1 − γ − λ) Φ(f))`` compared), with the Plackett–Luce
likelihood of the utilities ``1.702 h(f)`` (:class:`lensopt.preference.link.AcuityLinkRankingGP`).
The probit utility below lets lenses differ as much at every letter size; a patient's clarity
saturates (both lenses read at large letters, both guessed at small ones), and with lapses of 1–2 %
every held-out ranking session got lost (docs/prescription.md). The ranking's lenses are the
champion (the tilted optimum, as below) and the challengers of largest information, chosen greedily
(the duel of largest information with the champion fixes the letter size, each next challenger the
one whose duels with the lenses chosen carry most); the letter size is chosen again for the lenses
shown; the tilt, the report's share of it and its offset cap are the duels' through the link. No
random first rankings: the prior about the start makes the first one informative. Sessions saved
before rebuild with the probit utility (``clarity_link="linear"``), as do the settings that ask for it.

No stopping rule, no predicted acuity and no confidence: the ranking utility has no acuity scale.
"""

from __future__ import annotations

import copy
import math
import time
from dataclasses import dataclass, replace

import numpy as np

from lensopt.asktell import SETTINGS_AND_HISTORY, check_state_format
from lensopt.preference.link import AcuityLinkRankingGP
from lensopt.ranking import RankingOptimizer, RankingQuery
from lensopt.ranking import search as ranking_search
from lensopt.refraction.duels import MODEL_LOGIT_SCALE, UTILITY_VARIANCE
from lensopt.refraction.lens import Lens
from lensopt.refraction.letters import DEFAULT_MODEL_LAPSE, LETTER_BOUNDS_LOGMAR
from lensopt.refraction.prescription import PRESCRIPTION_SEARCH
from lensopt.refraction.prescription_comparisons import (
    DUEL_SEPARATION_D,
    LENS_LENGTHSCALE_D,
    positive,
    power_vector_kernel,
    pull_within,
)
from lensopt.refraction.prescription_duels import (
    DEFAULT_N_ALTERNATIVES,
    DUEL_MAX_PLUS_OFFSET_D,
    REPORT_TILT_SHARE,
)
from lensopt.refraction.prescription_duels import PLUS_PREFERENCE as DUEL_PLUS_PREFERENCE
from lensopt.refraction.prescription_link import (
    LINK_PLUS_PREFERENCE,
    AcuityLinkSearch,
    fit_link_rankings,
    link_model,
)
from lensopt.refraction.rankings import RANKING_RULES, RankingAnswers
from lensopt.refraction.steps import DEFAULT_AXIS_STEP_DEG, DEFAULT_LENS_STEP_D
from lensopt.threads import single_threaded

#: Radius (D) of the trust region around the champion in which a ranking's lenses are chosen: the
#: duels' :data:`~lensopt.refraction.prescription_comparisons.DUEL_SEPARATION_D`.
RANKING_RADIUS_D = DUEL_SEPARATION_D

#: The most-plus preference ``κ`` in the ranking model's utility units (logit, per D of M): the
#: duels' ``κ = 2`` probit units times :data:`~lensopt.refraction.duels.MODEL_LOGIT_SCALE`, the same
#: tilt on the same patient's utility.
PLUS_PREFERENCE = DUEL_PLUS_PREFERENCE * MODEL_LOGIT_SCALE
#: The largest most-plus offset (D of M) the report subtracts from the tilted optimum. The ranking
#: model's posterior mean is flatter along M than the duels' (``c`` small), so ``κ / (2c)`` mostly
#: reached the duels' cap of 0.5 D and left the reported M too minus. Chosen on tuning patients
#: (clinic patients of seeds 5000–5011, slope 14, an autorefraction start, 60 rankings, with and
#: without accommodation) among the caps 0.25, 0.375 and 0.5 D and the tilts κ = 2, 2.6, 3.4 and
#: 5.1: mean M error after 60 rankings −0.11 / −0.17 D (without / with accommodation) with 0.5 D,
#: +0.12 / +0.07 D with 0.25 D, −0.00 / −0.06 D with 0.375 D (mean blur error 0.10 / 0.17 D; the
#: start's 0.47 D); κ = 2 left accommodating eyes 0.29 D too minus, κ = 5.1 ran 1.5 D plus early on.
RANKING_MAX_PLUS_OFFSET_D = 0.375
#: Rankings over which the tilt grows from 0 to :data:`PLUS_PREFERENCE` (``κ · min(1, n / R)``; 0:
#: the full tilt from the first ranking). A ramp over 10 rankings was the default while the trust
#: region was centred by the *tilted* posterior mean: with the full tilt from the first ranking, while
#: the model knew little, ``κ M`` alone moved the champion and its lenses up to 0.75 D plus per
#: ranking (on tuning patients, seeds 5000–5011, the reported M +1.1–1.2 D too plus after 10
#: rankings; with the ramp +0.0–0.2 D). Centred by the posterior mean
#: (:meth:`~lensopt.refraction.prescription_comparisons.PrescriptionComparisons.search_optimum`), the
#: ramp is no longer needed and costs accommodating eyes: on tuning patients (seeds 5000–5029, 60
#: rankings, an autorefraction start) the mean M error with accommodation after 40 / 60 rankings was
#: −0.03 / −0.06 D without a ramp and −0.17 / −0.13 D with one over 10 (median blur error 0.16 /
#: 0.11 D against 0.17 / 0.13 D); without accommodation the two were alike. Sessions saved with a ramp
#: keep theirs (``plus_ramp_rankings`` in their settings).
PLUS_RAMP_RANKINGS = 0

#: Depth ``a₀`` of the utility's prior mean about the start (``PrescriptionComparisons.start_prior``;
#: the duels' :data:`lensopt.refraction.prescription_duels.START_PRIOR_DEPTH`), on the ranking
#: model's Gumbel scale; 0, the flat prior. Tried on tuning patients (clinic patients of seeds
#: 5000–5059, slope 14, an autorefraction start, 60 rankings) at depths 3–8 with tilts 1–1.5 times
#: :data:`PLUS_PREFERENCE`: with the same tilt accommodating eyes ended too minus, and depth 4 with
#: 1.2 times the tilt looked better than the flat prior throughout. On the held-out patients it was
#: better only in the first 10 rankings and a little worse from 20 to 40 (docs/prescription.md,
#: "Rankings"), so the default stays flat.
START_PRIOR_DEPTH_RANKINGS = 0.0

#: Rules: MPES then the letter size by mutual information (the default), or random sets and sizes.
PRESCRIPTION_RANKING_RULES = tuple(RANKING_RULES)

#: Rules of the acuity link: the ranking of largest information or random ones.
LINK_RULES = PRESCRIPTION_RANKING_RULES

#: Lenses per ranking, and the most the ranking model takes (the ELBO's quadrature, 4).
DEFAULT_N_LENSES = 3
DEFAULT_RULE = "mpes-ald"

#: Seed stream of the randomness of ``ask``.
ASK_STREAM = 0x7A4C

STATE_FORMAT = "lensopt.prescription-ranking-state/1"


@dataclass(frozen=True)
class PrescriptionRankingTrial:
    """One ranking of the full prescription: letters of ``letter_logmar`` through each of ``lenses``
    (phoropter lenses with their axes), "put them in order, clearest first"."""

    lenses: tuple[Lens, ...]
    letter_logmar: float

    def __post_init__(self):
        lenses = tuple(self.lenses) if isinstance(self.lenses, (tuple, list)) else None
        if lenses is None or len(lenses) < 2 or not all(isinstance(lens, Lens) for lens in lenses):
            raise ValueError(f"PrescriptionRankingTrial.lenses must be two or more Lens, got {self.lenses!r}")
        if len(set(lenses)) != len(lenses):
            raise ValueError(f"PrescriptionRankingTrial.lenses must be distinct, got {[x.format() for x in lenses]}")
        object.__setattr__(self, "lenses", lenses)
        s = self.letter_logmar
        if isinstance(s, bool) or not isinstance(s, (int, float)) or not math.isfinite(s):
            raise ValueError(f"PrescriptionRankingTrial.letter_logmar must be a finite number, got {s!r}")
        object.__setattr__(self, "letter_logmar", float(s))

    @property
    def lens_triples(self) -> tuple[tuple[float, float, float], ...]:
        """``((sphere_d, cylinder_d, axis_deg), ...)`` of the lenses, in order."""
        return tuple((x.sphere_d, x.cylinder_d, x.axis_deg) for x in self.lenses)


def prescription_ranking_kernel(lens_lengthscale_d=LENS_LENGTHSCALE_D):
    """The isotropic power-vector kernel on the ranking model's logit scale."""
    return power_vector_kernel(lens_lengthscale_d, UTILITY_VARIANCE * MODEL_LOGIT_SCALE**2)


class PrescriptionRankingOptimizer(RankingAnswers, AcuityLinkSearch):
    """ask/tell rankings for the full prescription: ``ask() -> PrescriptionRankingTrial`` of
    ``n_lenses`` lenses, ``tell(trial, order)`` with ``order`` the lens indices clearest first (all of
    them, or the first ``n_lenses − 1``), ``best()`` the power vector, :meth:`prescription` the
    result (:class:`lensopt.asktell.AskTellOptimizer`).

    ``start``: the starting refraction (a :class:`Lens`, its text, or ``None`` for the full box);
    ``m_half_width_d``/``j_half_width_d``: the box around it. ``rule``: ``mpes-ald`` or ``random``;
    ``ranking_radius_d``: the trust region's radius (:data:`RANKING_RADIUS_D`);
    ``lens_lengthscale_d``: the kernel's; ``plus_preference``: ``κ`` (:data:`PLUS_PREFERENCE`, or the
    acuity link's :data:`~lensopt.refraction.prescription_link.LINK_PLUS_PREFERENCE`), reached after
    ``plus_ramp_rankings`` rankings (:data:`PLUS_RAMP_RANKINGS`, 0: from the first).
    ``clarity_link``: ``"acuity"`` or ``"linear"`` (None: :meth:`default_clarity_link` of the rule);
    ``n_alternatives`` and ``model_lapse``: the link's guess rate (``1/n``) and lapse.
    """

    #: When the full prescription's rankings got their prior about the start (commit 564f02b, 27 Nov
    #: 2026 16:38:56 UTC): :meth:`PrescriptionComparisons.centred_by_mean`.
    START_PRIOR_SINCE_S = 1795797536

    max_plus_offset_d = RANKING_MAX_PLUS_OFFSET_D
    link_rules = LINK_RULES

    def __init__(
        self,
        rule=None,
        seed=0,
        *,
        start=None,
        m_half_width_d=None,
        j_half_width_d=None,
        n_lenses=DEFAULT_N_LENSES,
        letter_bounds_logmar=LETTER_BOUNDS_LOGMAR,
        n_initial=5,
        lens_step_d=DEFAULT_LENS_STEP_D,
        axis_step_deg=DEFAULT_AXIS_STEP_DEG,
        ranking_radius_d=RANKING_RADIUS_D,
        lens_lengthscale_d=LENS_LENGTHSCALE_D,
        plus_preference=None,
        plus_ramp_rankings=PLUS_RAMP_RANKINGS,
        start_prior_depth=START_PRIOR_DEPTH_RANKINGS,
        clarity_link=None,
        n_alternatives=DEFAULT_N_ALTERNATIVES,
        model_lapse=DEFAULT_MODEL_LAPSE,
        trust_centre="mean",
    ):
        rule = DEFAULT_RULE if rule is None else rule
        if rule not in RANKING_RULES:
            raise ValueError(f"unknown ranking rule {rule!r}; choose one of: {', '.join(RANKING_RULES)}")
        self._set_trust_centre(trust_centre)
        self._set_clarity_link(clarity_link, n_alternatives, model_lapse, rule)
        clarity_link = self.clarity_link
        if clarity_link == "acuity":  # the duels' report through the link: half the tilt, a 0.25 D cap
            self.report_tilt_share, self.max_plus_offset_d = REPORT_TILT_SHARE, DUEL_MAX_PLUS_OFFSET_D
        if isinstance(n_lenses, bool) or not isinstance(n_lenses, int) or not 2 <= n_lenses <= 4:
            raise ValueError(f"n_lenses must be an integer from 2 to 4, got {n_lenses!r}")
        self._set_start_prior_depth(start_prior_depth)
        default_kappa = LINK_PLUS_PREFERENCE if clarity_link == "acuity" else PLUS_PREFERENCE
        kappa = default_kappa if plus_preference is None else plus_preference
        self._set_lens_options(
            start, m_half_width_d, j_half_width_d, lens_step_d, axis_step_deg, lens_lengthscale_d, kappa
        )
        self.rule, self.n_lenses = rule, n_lenses
        self.ranking_radius_d = positive("ranking_radius_d", ranking_radius_d, 4.0)
        ramp = plus_ramp_rankings
        if isinstance(ramp, bool) or not isinstance(ramp, int) or ramp < 0:
            raise ValueError(f"plus_ramp_rankings must be an integer >= 0 (0: no ramp), got {plus_ramp_rankings!r}")
        self.plus_ramp_trials = ramp
        self._core = RankingOptimizer(
            self.widened_bounds_d,
            (tuple(letter_bounds_logmar),),
            set_size=n_lenses,
            allow_ties=False,
            top_k=n_lenses - 1,
            seed=seed,
            n_initial=n_initial,
            rule=RANKING_RULES[rule],
            kernel=prescription_ranking_kernel(self.lens_lengthscale_d),
            utility_mean=self.start_prior(),
        )
        self._history: list[tuple[PrescriptionRankingTrial, tuple[int, ...]]] = []
        self.last_decision_ms = math.nan
        if clarity_link == "acuity":
            centre = self.box.centre.to_array()
            self._link_prior = link_model(
                centre, self.box.start is not None, self.n_alternatives, self.model_lapse, True
            )

    # ---------------------------------------------------------------- settings and state
    def settings_dict(self) -> dict:
        s = self._core.settings
        return {
            "search": PRESCRIPTION_SEARCH,
            "rule": self.rule,
            "seed": s.seed,
            **self._lens_settings(),
            "n_lenses": self.n_lenses,
            "letter_bounds_logmar": list(s.context_bounds[0]),
            "n_initial": s.n_initial,
            "lens_step_d": self.lens_step_d,
            "axis_step_deg": self.axis_step_deg,
            "ranking_radius_d": self.ranking_radius_d,
            "lens_lengthscale_d": self.lens_lengthscale_d,
            "plus_preference": self.plus_preference,
            "plus_ramp_rankings": self.plus_ramp_trials,
            "start_prior_depth": self.start_prior_depth,
            "trust_centre": self.trust_centre,
            "clarity_link": self.clarity_link,
            "n_alternatives": self.n_alternatives,
            "model_lapse": self.model_lapse,
        }

    @classmethod
    def _saved_settings(cls, settings: dict) -> dict:
        """Settings as ``settings_dict()`` wrote them; those written before the ramp had none (0), those
        written before the acuity link ranked with the probit utility (and are rebuilt so)."""
        settings = super()._saved_settings(settings)
        settings.setdefault("plus_ramp_rankings", 0)
        settings.setdefault("clarity_link", "linear")
        return settings

    def to_state(self) -> dict:
        """A JSON-able state from which :meth:`from_state` rebuilds an identical optimizer."""
        return {
            "format": STATE_FORMAT,
            "settings": self.settings_dict(),
            "history": [
                {"letter_logmar": t.letter_logmar, "lenses": [list(x) for x in t.lens_triples], "order": list(order)}
                for t, order in self._history
            ],
        }

    @classmethod
    @single_threaded
    def from_state(cls, state: dict) -> PrescriptionRankingOptimizer:
        check_state_format(state, STATE_FORMAT, "prescription ranking", SETTINGS_AND_HISTORY)
        try:
            history = [
                (
                    PrescriptionRankingTrial(tuple(Lens(*x) for x in row["lenses"]), row["letter_logmar"]),
                    tuple(row["order"]),
                )
                for row in state["history"]
            ]
        except (TypeError, KeyError) as error:
            raise ValueError(
                f"a prescription ranking history row needs letter_logmar, lenses and order ({error})"
            ) from None
        return cls.from_settings(state["settings"], history)

    # ---------------------------------------------------------------- the model (PrescriptionComparisons)
    @property
    def _radius_d(self) -> float:
        return self.ranking_radius_d

    @property
    def model(self):
        """The GP of the answers (None before the first ranking): the acuity-link model
        (:class:`lensopt.preference.link.AcuityLinkRankingGP`) or the core's ranking GP."""
        return self._core.model if self.clarity_link == "linear" else self._fitted_link()

    def _fit_link_on_history(self):
        rankings = [
            (t.letter_logmar, [lens.power_vector().to_array() for lens in t.lenses], self.canonical_answer(order))
            for t, order in self._history
        ]
        prior = self._link_prior
        assert isinstance(prior, AcuityLinkRankingGP)  # link_model(..., rankings=True)
        return fit_link_rankings(copy.copy(prior), rankings)  # the prior stays unfitted

    def _predict(self, X, full_cov=False):
        if self.clarity_link == "acuity":
            return self._link_predict(X, full_cov=full_cov)
        return self.model.predict(X, full_cov=full_cov)

    def _mean_and_gradient(self, X):
        if self.clarity_link == "acuity":
            return self._link_mean_and_gradient(X)
        return self.model.predict_mean_with_gradient(X)

    def _told_lenses(self) -> np.ndarray:
        return np.vstack([obs.inputs[:, 1:] for obs in self._core.observations])

    def _shown_lenses(self) -> np.ndarray:
        if self.clarity_link == "acuity":
            return self._link_shown_lenses()
        told = self._told_lenses()
        _, first = np.unique(told, axis=0, return_index=True)
        return told[np.sort(first)]

    def _same(self, a: Lens, b: Lens) -> bool:
        """Whether the ranking model would take ``a`` and ``b`` for one point (equal, or closer than
        its duplicate tolerance)."""
        pair = np.array([[a.power_vector().to_array(), b.power_vector().to_array()]])
        return a == b or not bool(ranking_search.distinct(pair, self._core.settings)[0])

    # ---------------------------------------------------------------- ask/tell
    @single_threaded
    def ask(self) -> PrescriptionRankingTrial:
        """The next ranking: ``n_lenses`` close phoropter lenses and a letter size (module docstring)."""
        t0 = time.perf_counter()
        rng = np.random.default_rng([self._seed, self.n_trials, ASK_STREAM])
        champion = self.search_optimum()
        local = replace(self._core.settings, system_bounds=self.local_bounds(champion))
        if self.clarity_link == "acuity":
            return self._ask_through_link(t0, rng, champion, local)
        model = self.model
        if model is None or self.n_trials < max(local.n_initial, 1) or self.rule == "random":
            context, members = ranking_search.random_query(local, rng)
        else:
            reference = self._core.reference_context()
            members, _ = ranking_search.choose_members(model, local, rng, reference, champion)
        lenses: list[Lens] = []
        for member in members:
            lenses.append(self.distinct_lens(lenses, pull_within(champion, member, self.ranking_radius_d), self._same))
        if model is not None and self.rule != "random":
            shown = np.array([lens.power_vector().to_array() for lens in lenses])
            context = ranking_search.choose_context(model, local, shown, rng)
        self.last_decision_ms = 1e3 * (time.perf_counter() - t0)
        return PrescriptionRankingTrial(tuple(lenses), float(np.asarray(context, dtype=float)[0]))

    def _ask_through_link(self, t0, rng, champion, local) -> PrescriptionRankingTrial:
        """The ranking of the acuity link (:meth:`AcuityLinkSearch._link_comparison`): the champion
        and the challengers of largest information (random ones for the rule "random")."""

        def random_ranking(local, rng):
            context, members = ranking_search.random_query(local, rng)
            return context, members[1:]

        lenses, context = self._link_comparison(rng, champion, local, self.n_lenses - 1, random_ranking, self._same)
        self.last_decision_ms = 1e3 * (time.perf_counter() - t0)
        return PrescriptionRankingTrial(tuple(lenses), context)

    @single_threaded
    def tell(self, trial: PrescriptionRankingTrial, order) -> None:
        """Record the answer to ``trial``: ``order``, the lens indices clearest first (all of them or
        all but the last)."""
        if not isinstance(trial, PrescriptionRankingTrial):
            raise ValueError(f"trial must be a PrescriptionRankingTrial; got {type(trial).__name__}")
        order = self.checked_order(len(trial.lenses), order)
        for k, lens in enumerate(trial.lenses, start=1):
            self.check_in_box(f"lens {k}", lens)
        members = np.array([lens.power_vector().to_array() for lens in trial.lenses])
        self._core.tell(
            RankingQuery(context=np.array([trial.letter_logmar]), members=members), self.canonical_answer(order)
        )
        self._history.append((trial, order))


__all__ = [
    "LINK_RULES",
    "PLUS_PREFERENCE",
    "PLUS_RAMP_RANKINGS",
    "PRESCRIPTION_RANKING_RULES",
    "RANKING_MAX_PLUS_OFFSET_D",
    "RANKING_RADIUS_D",
    "START_PRIOR_DEPTH_RANKINGS",
    "PrescriptionRankingOptimizer",
    "PrescriptionRankingTrial",
    "prescription_ranking_kernel",
]
