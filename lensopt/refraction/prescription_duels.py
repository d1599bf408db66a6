"""PrescriptionDuelOptimizer: the full prescription (sphere, cylinder, axis) from duels (issue 16).

"One or two, or the same?" between two phoropter lenses, the letter size as the context: the
contextual preference model of :class:`lensopt.refraction.duels.DuelRefractionOptimizer` (the probit
duel likelihood ``Φ(f(s, x₁) − f(s, x₂))``, METHOD.md §5, Laplace; "the same" is kept in the
history but not modelled) over the Thibos power vector ``x = (M, J0, J45)`` of the lens: model
columns ``[letter_logmar, m_d, j0_d, j45_d]``, the box a :class:`~lensopt.refraction.prescription.SearchBox`
around the starting refraction (the full box without one), as the letter search
(:mod:`lensopt.refraction.prescription_letters`).

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
  its offset): :meth:`PrescriptionDuelOptimizer.plus_offset_d`. The champion is sought in a trust
  region around the lenses shown (:meth:`PrescriptionDuelOptimizer.search_optimum`): far from
  them the posterior mean is its prior, and the tilt alone would send it to the plus edge of the box.
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass, replace

import numpy as np

from lensopt.gp.kernels import Product, SquaredExponential
from lensopt.optimize import maximize_on_line, maximize_posterior_mean, uniform
from lensopt.preference import DuelQuery, PreferenceOptimizer
from lensopt.preference import acquisition as preference_acquisition
from lensopt.preference import rules as preference_rules
from lensopt.preference.settings import CONTEXTUAL_RULES
from lensopt.refraction.certainty import _joint_draws
from lensopt.refraction.duels import (
    LENS_LENGTHSCALES_D,
    LETTER_LENGTHSCALE_LOGMAR,
    UTILITY_VARIANCE,
    normalize_duel_answer,
)
from lensopt.refraction.lens import Lens, PowerVector
from lensopt.refraction.letters import LETTER_BOUNDS_LOGMAR
from lensopt.refraction.prescription import PRESCRIPTION_SEARCH, Prescription, SearchBox, lens_intervals
from lensopt.refraction.trial import TrialHistory
from lensopt.threads import single_threaded

#: The two-parameter duel kernel's lengthscales ``(2.5, 3.5)`` D over ``(S, C)`` mapped to one
#: isotropic lengthscale over power vectors as in the module docstring: ``√(2.5 · 3.5) / √2`` = 2.09 D.
MAPPED_LENS_LENGTHSCALE_D = math.sqrt(LENS_LENGTHSCALES_D[0] * LENS_LENGTHSCALES_D[1]) / math.sqrt(2.0)
#: The isotropic lengthscale (D) of the utility over power vectors. Chosen on tuning patients (clinic
#: patients of seeds 5000–5011, slope 14, with and without accommodation, 100 duels, an
#: autorefraction start) among 0.7, 1.0, 1.5 and the mapped 2.09 D with plus preferences 1–5: mean
#: blur error after 40 / 60 / 100 duels 0.34 / 0.20 / 0.14 D (start 0.47 D) without accommodation
#: and 0.36 / 0.20 / 0.14 D with it, mean M error +0.03 D (SD 0.06 D); the mapped 2.09 D with the
#: same tilt: 0.79 / 0.56 / 0.39 D, M +0.35 D.
LENS_LENGTHSCALE_D = 1.5

#: Largest power-vector distance (D) between the two lenses of a duel, before rounding: a phoropter
#: flips between neighbouring lenses (the clinician's ±0.25–0.50 D steps, the cross-cylinder's
#: ±0.25–0.50 D), and the challenger is sought within this of the champion.
DUEL_SEPARATION_D = 0.75

#: The most-plus preference ``κ`` (utility units per D of M): the duels' champion and the reported
#: lens maximize ``μ_f(s₀, x) + κ M`` rather than ``μ_f``, so that among lenses that look equally
#: clear (an accommodating eye's plateau) the most plus wins; the report then moves back by the
#: offset ``κ / (2c)`` that the tilt causes where the utility falls as ``−c (M − M*)²``
#: (:meth:`PrescriptionDuelOptimizer.plus_offset_d`). Chosen on tuning patients with
#: :data:`LENS_LENGTHSCALE_D`: 1 gave 0.22 / 0.24 / 0.17 D after 40 / 60 / 100 duels without
#: accommodation (M SD 0.16 D with it), 2 gave 0.34 / 0.20 / 0.14 D (M SD 0.06 D); 5 drifts plus.
PLUS_PREFERENCE = 2.0
#: Step (D of M) over which the curvature ``c`` is measured, plus of the tilted optimum, and the
#: largest offset subtracted (a nearly flat posterior would give an unbounded one).
CURVATURE_STEP_D = 0.25
MAX_PLUS_OFFSET_D = 0.5

#: Phoropter steps of the proposed lenses: quarter diopters, axis in whole degrees.
DEFAULT_LENS_STEP_D = 0.25
DEFAULT_AXIS_STEP_DEG = 1.0

#: How far (D, per power-vector coordinate) a rounded phoropter lens may lie outside the search box:
#: rounding sphere and cylinder to 0.25 D moves ``M`` by at most 0.1875 D. The model's box is the
#: search box widened by this, so that it accepts every lens shown; a lens further out is refused.
ROUNDING_SLACK_D = 0.25

#: Rules: the contextual preference rules (``muc-ald`` the default).
PRESCRIPTION_DUEL_RULES = CONTEXTUAL_RULES
DEFAULT_RULE = "muc-ald"
#: Rules whose letter size is chosen by BALD (recomputed for the lenses shown).
BALD_CONTEXT_RULES = ("muc-ald", "kss-ald")

#: The prescription's intervals: offsets (D) of the grid of candidate lenses around the reported one
#: in each coordinate, the posterior draws of the utility over them, candidates pruned when their
#: upper bound (mean + PRUNE_SDS sd) is below the best lower bound, and the draws' seed stream.
FINE_OFFSETS_D = (-0.5, -0.25, 0.0, 0.25, 0.5)
N_DRAWS = 512
PRUNE_SDS = 3.0
INTERVAL_STREAM = 0x1D7
#: Seed stream of the randomness of ``ask``.
ASK_STREAM = 0xD0E1

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
    letters = SquaredExponential(LETTER_LENGTHSCALE_LOGMAR, variance=UTILITY_VARIANCE, active_dims=(0,))
    lenses = SquaredExponential(float(lens_lengthscale_d), variance=1.0, active_dims=(1, 2, 3), fixed=("variance",))
    return Product(letters, lenses)


def _as_lens(start) -> Lens | None:
    if start is None or isinstance(start, Lens):
        return start
    if isinstance(start, str):
        return Lens.parse(start)
    raise ValueError(f"start must be a lens ('-1.00 / -0.50 x 180') or None, got {start!r}")


class _TiltedUtilityMean:
    """``μ_f(s, x) + κ M`` on utility inputs ``[s, M, J0, J45]``, with its gradient, for
    :func:`lensopt.optimize.maximize_posterior_mean` (which pins the letter size)."""

    def __init__(self, model, plus_preference: float):
        self.model = model
        self.plus_preference = plus_preference

    def __call__(self, X):
        return self.model.predict_utility(X)[0] + self.plus_preference * np.asarray(X, dtype=float)[:, 1]

    def value_and_gradient(self, X):
        mean, _, dmean, _ = self.model.predict_utility_with_gradient(X)
        dmean = np.array(dmean, dtype=float)
        dmean[:, 1] += self.plus_preference
        return mean + self.plus_preference * np.asarray(X, dtype=float)[:, 1], dmean


def _positive(name, value, upper=math.inf) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not (0 < value <= upper):
        raise ValueError(f"{name} must be a number in (0, {upper:g}], got {value!r}")
    return float(value)


def pull_within(first_d, second_d, radius_d: float) -> np.ndarray:
    """``second_d`` moved along the line to ``first_d`` onto the ball of ``radius_d`` around it
    (unchanged when already within it)."""
    first, second = np.asarray(first_d, dtype=float), np.asarray(second_d, dtype=float)
    distance = float(np.linalg.norm(second - first))
    return second if distance <= radius_d else first + (second - first) * (radius_d / distance)


class PrescriptionDuelOptimizer(TrialHistory):
    """ask/tell duels for the full prescription: ``ask() -> PrescriptionDuelTrial``, ``tell(trial,
    answer)`` (``"first"``, ``"second"``, ``"same"`` or a bool, True = first), ``best()`` the power
    vector, :meth:`prescription` the result (:class:`lensopt.asktell.AskTellOptimizer`).

    ``start``: the starting refraction (a :class:`Lens`, its text, or ``None`` for the full box);
    ``m_half_width_d``/``j_half_width_d``: the box around it (:class:`SearchBox`). ``rule``: of
    :data:`PRESCRIPTION_DUEL_RULES`; ``duel_separation_d``: the largest distance between the two
    lenses (:data:`DUEL_SEPARATION_D`); ``lens_lengthscale_d``: the kernel's (:data:`LENS_LENGTHSCALE_D`).
    No stopping rule: the preference model has no acuity scale for a confidence.
    """

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
    ):
        rule = DEFAULT_RULE if rule is None else rule
        if rule not in PRESCRIPTION_DUEL_RULES:
            raise ValueError(f"unknown duel rule {rule!r}; choose one of: {', '.join(PRESCRIPTION_DUEL_RULES)}")
        box_options = {
            k: v for k, v in (("m_half_width_d", m_half_width_d), ("j_half_width_d", j_half_width_d)) if v is not None
        }
        self.box = SearchBox(_as_lens(start), **box_options)
        self.rule = rule
        self.lens_step_d = None if lens_step_d is None else _positive("lens_step_d", lens_step_d, 1.0)
        self.axis_step_deg = _positive("axis_step_deg", axis_step_deg, 90.0)
        if abs(180.0 / self.axis_step_deg - round(180.0 / self.axis_step_deg)) > 1e-9:
            raise ValueError(f"axis_step_deg must divide 180 degrees (e.g. 1 or 5), got {axis_step_deg!r}")
        self.duel_separation_d = _positive("duel_separation_d", duel_separation_d, 4.0)
        self.lens_lengthscale_d = _positive("lens_lengthscale_d", lens_lengthscale_d)
        kappa = PLUS_PREFERENCE if plus_preference is None else plus_preference
        if isinstance(kappa, bool) or not isinstance(kappa, (int, float)) or not (math.isfinite(kappa) and kappa >= 0):
            raise ValueError(f"plus_preference must be a number >= 0 (utility units per D), got {plus_preference!r}")
        self.plus_preference = float(kappa)
        widened = tuple((lo - ROUNDING_SLACK_D, hi + ROUNDING_SLACK_D) for lo, hi in self.box.bounds_d)
        self._core = PreferenceOptimizer(
            widened,
            (tuple(letter_bounds_logmar),),
            rule=rule,
            seed=seed,
            kernel=prescription_duel_kernel(self.lens_lengthscale_d),
            n_initial=n_initial,
            inference=inference,
        )
        self._history: list[tuple[PrescriptionDuelTrial, str]] = []
        self._cache: dict = {}
        self.last_decision_ms = math.nan

    # ---------------------------------------------------------------- settings and state
    @property
    def settings(self):
        """The preference optimizer's settings (its box is the search box widened by the rounding slack)."""
        return self._core.settings

    @property
    def start(self) -> Lens | None:
        return self.box.start

    def settings_dict(self) -> dict:
        s = self._core.settings
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
            "duel_separation_d": self.duel_separation_d,
            "lens_lengthscale_d": self.lens_lengthscale_d,
            "plus_preference": self.plus_preference,
        }

    @classmethod
    def _saved_settings(cls, settings: dict) -> dict:
        """Settings as ``settings_dict()`` wrote them, without the :data:`PRESCRIPTION_SEARCH`
        marker (states written before it had none)."""
        settings.pop("search", None)
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
    def from_state(cls, state: dict) -> PrescriptionDuelOptimizer:
        if not isinstance(state, dict) or state.get("format") != STATE_FORMAT:
            got = state.get("format") if isinstance(state, dict) else type(state).__name__
            raise ValueError(f"not a lensopt prescription duel state (format {got!r}; expected {STATE_FORMAT!r})")
        history = [
            (PrescriptionDuelTrial(Lens(S1, C1, A1), Lens(S2, C2, A2), s), answer)
            for s, S1, C1, A1, S2, C2, A2, answer in state["history"]
        ]
        return cls.from_settings(state["settings"], history)

    @property
    def model(self):
        """The preference GP (None before the first modelled answer)."""
        return self._core.model

    @property
    def reference_letter_logmar(self) -> float:
        """The letter size at which the best lens is chosen and reported (the upper letter bound)."""
        return float(self._core.reference_context()[0])

    def _cached(self, name, compute):
        key = (name, self.n_trials)
        if key not in self._cache:
            self._cache = {k: v for k, v in self._cache.items() if k[1] == self.n_trials}
            self._cache[key] = compute()
        return self._cache[key]

    # ---------------------------------------------------------------- lenses
    def phoropter_lens(self, power_vector_d) -> Lens:
        """The minus-cylinder lens of a power vector ``(M, J0, J45)``, rounded to the phoropter."""
        lens = Lens.from_power_vector(PowerVector(*(float(v) for v in power_vector_d)))
        return lens if self.lens_step_d is None else lens.rounded(self.lens_step_d, self.axis_step_deg)

    def _in_box(self, lens: Lens) -> bool:
        return self.box.contains(lens.power_vector(), slack_d=ROUNDING_SLACK_D)

    def _distinct_second(self, first: Lens, proposal_d: np.ndarray) -> Lens:
        """The rounded second lens; if it rounds onto ``first``, the phoropter neighbour of ``first``
        (one step of sphere or cylinder, or the axis turned) nearest to the proposal, in the box."""
        second = self.phoropter_lens(proposal_d)
        if second != first:
            return second
        step = self.lens_step_d or DEFAULT_LENS_STEP_D
        turn = max(self.axis_step_deg, 5.0)
        neighbours = [
            Lens(first.sphere_d + ds, first.cylinder_d + dc, first.axis_deg)
            for ds, dc in ((step, 0.0), (-step, 0.0), (0.0, -step), (0.0, step))
            if first.cylinder_d + dc <= 0.0
        ]
        if first.cylinder_d < 0.0:
            for da in (turn, -turn):
                axis = (first.axis_deg + da - 1.0) % 180.0 + 1.0
                neighbours.append(Lens(first.sphere_d, first.cylinder_d, axis))
        neighbours = [n for n in neighbours if n != first and self._in_box(n)]
        distance = [float(np.linalg.norm(n.power_vector().to_array() - proposal_d)) for n in neighbours]
        return neighbours[int(np.argmin(distance))]

    def _local_settings(self, centre_d: np.ndarray):
        """The preference settings with the box of half-width ``duel_separation_d`` around ``centre_d``,
        cut to the search box."""
        r = self.duel_separation_d
        bounds = tuple(
            (max(lo, c - r), min(hi, c + r)) for c, (lo, hi) in zip(centre_d, self.box.bounds_d, strict=True)
        )
        return replace(self._core.settings, system_bounds=bounds)

    # ---------------------------------------------------------------- ask/tell
    @single_threaded
    def ask(self) -> PrescriptionDuelTrial:
        """The next duel: two close phoropter lenses and a letter size (see the module docstring)."""
        t0 = time.perf_counter()
        rng = np.random.default_rng([self._core.settings.seed, self.n_trials, ASK_STREAM])
        champion = self.search_optimum()
        local = self._local_settings(champion)
        model = self.model
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
        second = self._distinct_second(first, second_d)
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

    @single_threaded
    def tell(self, trial: PrescriptionDuelTrial, answer) -> None:
        """Record the answer to ``trial``: ``"first"`` (lens 1 clearer; or True/1), ``"second"``
        (False/0) or ``"same"`` (kept in the history, not modelled: the probit model has no tie)."""
        if not isinstance(trial, PrescriptionDuelTrial):
            raise ValueError(f"trial must be a PrescriptionDuelTrial; got {type(trial).__name__}")
        for name, lens in (("first", trial.first_lens), ("second", trial.second_lens)):
            if not self._in_box(lens):
                (m_lo, m_hi), (j0_lo, j0_hi), (j45_lo, j45_hi) = self.box.bounds_d
                raise ValueError(
                    f"the {name} lens {lens.format()} is outside the search box (M {m_lo:+.2f} to {m_hi:+.2f} D, "
                    f"J0 {j0_lo:+.2f} to {j0_hi:+.2f} D, J45 {j45_lo:+.2f} to {j45_hi:+.2f} D)"
                )
        answer = normalize_duel_answer(answer)
        if answer == "same":
            self._core.note_unmodelled_answer()
        else:
            members = [trial.first_lens.power_vector().to_array(), trial.second_lens.power_vector().to_array()]
            self._core.tell(DuelQuery(context=[trial.letter_logmar], members=members), answer == "first")
        self._history.append((trial, answer))

    # ---------------------------------------------------------------- answers
    def search_optimum(self) -> np.ndarray:
        """``argmax_x μ_f(s₀, x) + κ M`` ``(3,)`` (``κ`` the plus preference) over the *trust region*:
        the box of half-width ``duel_separation_d`` around the lens shown so far with the highest
        tilted posterior mean, cut to the search box (the box centre before any modelled answer).
        The champion of the next duel.

        Not over the whole box: far from every lens shown the posterior mean returns to its prior
        (0), and the tilt ``κ M`` alone would then make the plus edge of the box look best — after
        the first few duels every session ran 1–2 D plus before coming back. The champion thus
        moves at most ``duel_separation_d`` per coordinate beyond the lenses the patient has
        compared, as a clinician's does."""

        def compute():
            model = self.model
            if model is None:
                return self.box.centre.to_array()
            rng = np.random.default_rng([self._core.settings.seed, self.n_trials, 1])
            objective = _TiltedUtilityMean(model, self.plus_preference)
            s0 = self._core.reference_context()
            shown = preference_rules.training_members(model)
            tilted = objective(np.column_stack([np.full(len(shown), float(s0[0])), shown]))
            bounds = np.array(self.box.bounds_d)
            anchor = np.clip(shown[int(np.argmax(tilted))], bounds[:, 0], bounds[:, 1])
            region = self._local_settings(anchor).system_bounds
            return maximize_posterior_mean(objective, s0, region, rng, anchor[None, :])

        return self._cached("search_optimum", compute).copy()

    def plus_offset_d(self, optimum_d) -> float:
        """How far (D of M) the tilted optimum ``optimum_d`` lies plus of the untilted one: ``κ / (2c)``
        for a posterior mean ``μ₀ − c (M − M*)²`` along M, ``c`` from the change of its M-slope over
        :data:`CURVATURE_STEP_D` plus of ``optimum_d`` (the plus side: an accommodating eye's minus
        side is flat); at most :data:`MAX_PLUS_OFFSET_D`, 0 without a curvature."""
        if self.plus_preference == 0 or self.model is None:
            return 0.0
        s0 = self.reference_letter_logmar
        X = np.array([[s0, *optimum_d], [s0, optimum_d[0] + CURVATURE_STEP_D, *optimum_d[1:]]])
        _, _, dmean, _ = self.model.predict_utility_with_gradient(X)
        curvature = (dmean[0, 1] - dmean[1, 1]) / (2.0 * CURVATURE_STEP_D)
        if not curvature > 0:
            return 0.0
        return float(min(self.plus_preference / (2.0 * curvature), MAX_PLUS_OFFSET_D))

    @single_threaded
    def best(self) -> PowerVector:
        """The reported power vector: the most-plus optimum :meth:`search_optimum` moved back by
        :meth:`plus_offset_d` (within the box); the box centre before any modelled answer."""

        def compute():
            optimum = self.search_optimum()
            m_low = self.box.bounds_d[0][0]
            optimum[0] = max(optimum[0] - self.plus_offset_d(optimum), m_low)
            return PowerVector(*(float(v) for v in optimum))

        return self._cached("best", compute)

    def _utility(self, lenses_d, full_cov=False):
        X = np.column_stack([np.full(len(lenses_d), self.reference_letter_logmar), lenses_d])
        return self.model.predict_utility(X, full_cov=full_cov)

    def _candidates(self, best_d: np.ndarray) -> np.ndarray:
        """The reported lens, a grid around it and the lenses shown so far, inside the search box."""
        offsets = np.array(FINE_OFFSETS_D)
        grid = np.array(np.meshgrid(*(best_d[k] + offsets for k in range(3)), indexing="ij")).reshape(3, -1).T
        shown = self._core.duels[:, 1:].reshape(-1, 3)
        lenses = np.vstack([best_d[None, :], grid, shown])
        bounds = np.array(self.box.bounds_d)
        inside = np.all((lenses >= bounds[:, 0] - 1e-9) & (lenses <= bounds[:, 1] + 1e-9), axis=1)
        inside[0] = True
        lenses = lenses[inside]
        _, first = np.unique(np.round(lenses, 9), axis=0, return_index=True)
        return lenses[np.sort(first)]

    @single_threaded
    def prescription(self) -> Prescription:
        """The reported lens (rounded) and its estimate, with 95 % intervals of ``M, J0, J45`` and of
        sphere, cylinder and axis.

        The intervals are those of the best lens among a set of candidates — the reported lens, a
        grid of ±0.25 and ±0.5 D around it, and every lens shown — over :data:`N_DRAWS` joint
        posterior draws of the utility there (at the reference letter size; the preference GP's
        Laplace posterior), seeded by ``(seed, n_trials)``: the argmax of each draw is one draw of
        the best lens. They are as fine as that grid (0.25 D) and cover only the candidates, so
        they understate the uncertainty where the best lens may lie far from every candidate.
        ``predicted_acuity_logmar`` and ``confidence`` are None: the duel utility has no acuity
        scale, so neither the acuity with the lens nor "within 0.025 logMAR of the best" is defined.
        """

        def compute():
            best = self.best()
            best_d = best.to_array()
            lens = self.phoropter_lens(best_d) if self.lens_step_d is not None else best.to_lens().rounded()
            if self.model is None:
                return Prescription(lens, best, {}, None, None, self.n_trials)
            lenses = self._candidates(best_d)
            mean, var = self._utility(lenses)
            sd = np.sqrt(np.maximum(var, 0.0))
            keep = mean + PRUNE_SDS * sd >= np.max(mean - PRUNE_SDS * sd)
            keep[0] = True
            lenses = lenses[keep]
            mean, cov = self._utility(lenses, full_cov=True)
            rng = np.random.default_rng([self._core.settings.seed, self.n_trials, INTERVAL_STREAM])
            draws = _joint_draws(mean, cov, N_DRAWS, rng)
            best_draws = lenses[np.argmax(draws, axis=1)]
            return Prescription(lens, best, lens_intervals(best_draws, lens), None, None, self.n_trials)

        return self._cached("prescription", compute)


__all__ = [
    "DUEL_SEPARATION_D",
    "LENS_LENGTHSCALE_D",
    "MAPPED_LENS_LENGTHSCALE_D",
    "PRESCRIPTION_DUEL_RULES",
    "PrescriptionDuelOptimizer",
    "PrescriptionDuelTrial",
    "prescription_duel_kernel",
    "pull_within",
]
