"""What the full prescription's comparison searches share: duels and rankings of phoropter lenses
in power vectors (issue 16).

:class:`lensopt.refraction.prescription_duels.PrescriptionDuelOptimizer` ("one or two?") and
:class:`lensopt.refraction.prescription_rankings.PrescriptionRankingOptimizer` ("put these lenses in
order, clearest first") both learn a latent utility ``f(s, x)`` of the lens's Thibos power vector
``x = (M, J0, J45)`` at the letter size ``s`` (model columns ``[letter_logmar, m_d, j0_d, j45_d]``)
from comparisons of lenses, never from acuity. :class:`PrescriptionComparisons` holds what does not
depend on the answer model:

- **the box** (:class:`~lensopt.refraction.prescription.SearchBox`) around the start, widened by
  :data:`ROUNDING_SLACK_D` for the model so that every rounded lens shown is accepted;
- **phoropter lenses**: every lens written in minus cylinder and rounded (``lens_step_d``, 0.25 D;
  ``axis_step_deg``, 1°); a lens that rounds onto one already in the comparison moves to its
  nearest distinct phoropter neighbour (:meth:`PrescriptionComparisons.distinct_lens`);
- **close lenses**: the comparison is chosen on a *local box* of half-width ``_radius_d`` around the
  champion (:meth:`PrescriptionComparisons.local_bounds`), as a phoropter flips between neighbours;
- **most plus**: the champion maximizes ``μ_f(s₀, x) + κ M`` (``κ`` the ``plus_preference``) in a
  trust region around the lens shown with the highest posterior mean
  (:meth:`PrescriptionComparisons.search_optimum`); the reported lens does the same with the
  report's share of ``κ`` (:attr:`PrescriptionComparisons.report_tilt_share`) and moves back by the
  offset ``κ / (2c)`` that tilt causes where the utility falls as ``−c (M − M*)²``, ``c`` read off
  the posterior mean on the plus side (:meth:`PrescriptionComparisons.plus_offset_d`). An
  accommodating eye sees every lens up to its amplitude too minus as clearly; without the tilt the
  best lens wanders anywhere on that plateau;
- **a prior about the start** (``start_prior_depth``, :meth:`PrescriptionComparisons.start_prior`):
  the utility's prior mean may be a bowl about the starting refraction, so that the first random
  comparisons do not carry the reported lens away from it (the duels' default; an option for
  rankings);
- **the prescription**: the rounded lens with 95 % intervals from posterior draws of the utility on
  a grid of candidates around it, each draw's lens chosen as the report is, most plus
  (:meth:`PrescriptionComparisons.prescription`).

A subclass sets the attributes of :meth:`PrescriptionComparisons._set_lens_options`, its answer
model's optimizer ``_core`` and the model hooks (``_radius_d``, ``_predict``, ``_mean_and_gradient``,
``_shown_lenses``, ``_told_lenses``).
"""

from __future__ import annotations

import math

import numpy as np

from lensopt.binary.settings import FixedSettings
from lensopt.gp.kernels import Product, SquaredExponential
from lensopt.gp.mean import BowlMean
from lensopt.optimize import TiltedMean, maximize_posterior_mean
from lensopt.refraction.certainty import _joint_draws
from lensopt.refraction.duels import LENS_LENGTHSCALES_D, LETTER_LENGTHSCALE_LOGMAR, UTILITY_VARIANCE
from lensopt.refraction.lens import Lens, PowerVector, diopter_text
from lensopt.refraction.prescription import (
    Prescription,
    PrescriptionSearch,
    SearchBox,
    checked_lens_steps,
    distinct_inside,
    fine_grid_d,
    lens_intervals,
    within_cells,
)
from lensopt.refraction.steps import DEFAULT_LENS_STEP_D
from lensopt.refraction.trust_centre_history import TrustCentreHistory
from lensopt.threads import single_threaded
from lensopt.trial_cache import TrialCache

#: The two-parameter duel kernel's lengthscales ``(2.5, 3.5)`` D over ``(S, C)`` mapped to one
#: isotropic lengthscale over power vectors (:mod:`lensopt.refraction.prescription_duels`):
#: ``√(2.5 · 3.5) / √2`` = 2.09 D.
MAPPED_LENS_LENGTHSCALE_D = math.sqrt(LENS_LENGTHSCALES_D[0] * LENS_LENGTHSCALES_D[1]) / math.sqrt(2.0)
#: The isotropic lengthscale (D) of the utility over power vectors. Chosen for duels on tuning
#: patients (clinic patients of seeds 5000–5011, slope 14, with and without accommodation, 100 duels,
#: an autorefraction start) among 0.7, 1.0, 1.5 and the mapped 2.09 D with plus preferences 1–5: mean
#: blur error after 40 / 60 / 100 duels 0.34 / 0.20 / 0.14 D (start 0.47 D) without accommodation
#: and 0.36 / 0.20 / 0.14 D with it, mean M error +0.03 D (SD 0.06 D); the mapped 2.09 D with the
#: same tilt: 0.79 / 0.56 / 0.39 D, M +0.35 D.
LENS_LENGTHSCALE_D = 1.5

#: Largest power-vector distance (D) between the lenses of a comparison, before rounding: a
#: phoropter flips between neighbouring lenses (the clinician's ±0.25–0.50 D steps, the
#: cross-cylinder's ±0.25–0.50 D), and the comparison is sought within this of the champion.
DUEL_SEPARATION_D = 0.75

#: Step (D of M) over which the curvature ``c`` is measured, plus of the tilted optimum, and the
#: largest offset subtracted (a nearly flat posterior would give an unbounded one).
CURVATURE_STEP_D = 0.25
MAX_PLUS_OFFSET_D = 0.5

#: What may centre the trust region (:attr:`PrescriptionComparisons.trust_centre`).
TRUST_CENTRES = ("mean", "tilted")
#: How far (D, per power-vector coordinate) a rounded phoropter lens may lie outside the search box:
#: rounding sphere and cylinder to 0.25 D moves ``M`` by at most 0.1875 D. The model's box is the
#: search box widened by this, so that it accepts every lens shown; a lens further out is refused.
ROUNDING_SLACK_D = 0.25

#: The prescription's intervals: the posterior draws of the utility over the candidate lenses
#: (:func:`~lensopt.refraction.prescription.fine_grid_d` around the reported one and the lenses
#: shown), candidates pruned when their upper bound (mean + PRUNE_SDS sd) is below the best lower
#: bound, and the draws' seed stream.
N_DRAWS = 512
PRUNE_SDS = 3.0
INTERVAL_STREAM = 0x1D7


def power_vector_kernel(lens_lengthscale_d=LENS_LENGTHSCALE_D, variance=UTILITY_VARIANCE):
    """``σ² k_SE(s, s') k_SE(x, x')`` over ``[letter_logmar, m_d, j0_d, j45_d]``, isotropic in ``x``
    (the letter lengthscale is the duel kernel's)."""
    letters = SquaredExponential(LETTER_LENGTHSCALE_LOGMAR, variance=float(variance), active_dims=(0,))
    lenses = SquaredExponential(float(lens_lengthscale_d), variance=1.0, active_dims=(1, 2, 3), fixed=("variance",))
    return Product(letters, lenses)


def as_start(start) -> Lens | None:
    """A starting refraction: a :class:`Lens`, its text (``"-1.00 / -0.50 x 180"``) or None."""
    if start is None or isinstance(start, Lens):
        return start
    if isinstance(start, str):
        return Lens.parse(start)
    raise ValueError(f"start must be a lens ('-1.00 / -0.50 x 180') or None, got {start!r}")


def positive(name, value, upper=math.inf) -> float:
    """``value`` as a float in ``(0, upper]``; a one-line ValueError naming ``name`` otherwise."""
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not (0 < value <= upper):
        raise ValueError(f"{name} must be a number in (0, {upper:g}], got {value!r}")
    return float(value)


def pull_within(first_d, second_d, radius_d: float) -> np.ndarray:
    """``second_d`` moved along the line to ``first_d`` onto the ball of ``radius_d`` around it
    (unchanged when already within it)."""
    first, second = np.asarray(first_d, dtype=float), np.asarray(second_d, dtype=float)
    distance = float(np.linalg.norm(second - first))
    return second if distance <= radius_d else first + (second - first) * (radius_d / distance)


class PrescriptionComparisons(TrustCentreHistory, PrescriptionSearch, FixedSettings):
    """The part of a comparison search of the full prescription that does not depend on its answer
    model (see the module docstring). The settings are fixed when the optimizer is made
    (:class:`lensopt.binary.settings.FixedSettings`)."""

    #: The marker ``settings_dict()`` writes (:data:`~lensopt.refraction.prescription.PRESCRIPTION_SEARCH`).
    _option_setting_names = frozenset({"search"})
    #: Settings held under another name than the constructor's: the box (``start`` and the
    #: half-widths), and those a subclass derives (the ranking's ramp, its report through the link).
    _settings_attributes = frozenset(
        {"box", "max_plus_offset_d", "report_tilt_share", "trust_centre", "plus_ramp_trials"}
    )

    #: The largest most-plus offset subtracted from the tilted optimum (D of M).
    max_plus_offset_d: float = MAX_PLUS_OFFSET_D
    #: The share of the champion's tilt ``κ`` with which the lens is reported (1: the same tilt).
    report_tilt_share: float = 1.0
    #: What centres the trust region (:meth:`_tilted_optimum`): the lens shown with the highest
    #: posterior mean (``"mean"``), or with the highest *tilted* mean (``"tilted"``: sessions created
    #: before :data:`lensopt.refraction.trust_centre_history.MEAN_TRUST_CENTRE_SINCE_S`, which resume
    #: so: :meth:`settings_as_ran`).
    trust_centre: str = "mean"

    #: The answer model's optimizer's settings (its box is the search box widened by the rounding
    #: slack) and GP of the utility come through :class:`PrescriptionSearch`; a subclass sets ``_core``
    #: (also ``reference_context()``).
    lens_lengthscale_d: float
    _cache: TrialCache

    # ---------------------------------------------------------------- the model (``self._core``)
    @property
    def reference_letter_logmar(self) -> float:
        """The letter size at which the best lens is chosen and reported (the upper letter bound)."""
        return float(self._core.reference_context()[0])

    @property
    def _seed(self) -> int:
        return self._core.settings.seed

    @property
    def seed(self) -> int:
        return self._seed

    # ---------------------------------------------------------------- model hooks (subclasses)
    @property
    def _radius_d(self) -> float:  # pragma: no cover
        raise NotImplementedError

    def _predict(self, X, full_cov=False):  # pragma: no cover
        """Posterior mean and variance (covariance) of the utility at inputs ``X`` ``(n, 4)``."""
        raise NotImplementedError

    def _mean_and_gradient(self, X):  # pragma: no cover
        """Posterior mean ``(n,)`` of the utility at ``X`` and its gradient ``(n, 4)``."""
        raise NotImplementedError

    def _shown_lenses(self) -> np.ndarray:  # pragma: no cover
        """The distinct power vectors ``(p, 3)`` of the lenses the model was told, in order."""
        raise NotImplementedError

    def _told_lenses(self) -> np.ndarray:  # pragma: no cover
        """Every power vector ``(n, 3)`` of the lenses the model was told, repeats included."""
        raise NotImplementedError

    # ---------------------------------------------------------------- options
    def _set_lens_options(
        self, start, m_half_width_d, j_half_width_d, lens_step_d, axis_step_deg, lens_lengthscale_d, plus_preference
    ) -> None:
        """Validate and set the box, the phoropter steps, the kernel's lengthscale and ``κ``."""
        box_options = {
            k: v for k, v in (("m_half_width_d", m_half_width_d), ("j_half_width_d", j_half_width_d)) if v is not None
        }
        self.box = SearchBox(as_start(start), **box_options)
        self.lens_step_d, self.axis_step_deg = checked_lens_steps(lens_step_d, axis_step_deg)
        self.lens_lengthscale_d = positive("lens_lengthscale_d", lens_lengthscale_d)
        kappa = plus_preference
        if isinstance(kappa, bool) or not isinstance(kappa, (int, float)) or not (math.isfinite(kappa) and kappa >= 0):
            raise ValueError(f"plus_preference must be a number >= 0 (utility units per D), got {plus_preference!r}")
        self.plus_preference = float(kappa)
        self._cache = TrialCache()

    def _set_trust_centre(self, trust_centre) -> None:
        """Validate and set :attr:`trust_centre`."""
        if trust_centre not in TRUST_CENTRES:
            raise ValueError(f"unknown trust_centre {trust_centre!r}; choose one of: {', '.join(TRUST_CENTRES)}")
        self.trust_centre = trust_centre

    def _set_start_prior_depth(self, depth) -> None:
        """Validate and set ``start_prior_depth`` (the depth ``a₀`` of :meth:`start_prior`)."""
        if isinstance(depth, bool) or not isinstance(depth, (int, float)) or not (math.isfinite(depth) and depth >= 0):
            raise ValueError(f"start_prior_depth must be a number >= 0 (utility units; 0: none), got {depth!r}")
        self.start_prior_depth = float(depth)

    def start_prior(self) -> BowlMean | None:
        """The utility's prior mean about the start, ``m(x) = −a₀ log10(1 + |x − x_start|²)`` on the
        model's columns ``[letter_logmar, m_d, j0_d, j45_d]`` (``a₀`` = ``start_prior_depth``);
        None without a start or a depth (the flat prior of the papers)."""
        if self.box.start is None or self.start_prior_depth == 0.0:
            return None
        c = self.box.centre
        return BowlMean(0.0, self.start_prior_depth, (c.m_d, c.j0_d, c.j45_d), (1, 2, 3))

    #: Answers over which the tilt grows from 0 to ``plus_preference`` (0: the full tilt from the first).
    plus_ramp_trials: int = 0

    @property
    def tilt(self) -> float:
        """The most-plus tilt ``κ`` now: ``plus_preference``, times ``n_trials / plus_ramp_trials``
        while fewer answers than the ramp are in."""
        if self.plus_ramp_trials <= 0:
            return self.plus_preference
        return self.plus_preference * min(1.0, self.n_trials / self.plus_ramp_trials)

    @property
    def widened_bounds_d(self) -> tuple[tuple[float, float], ...]:
        """The model's box: the search box widened by :data:`ROUNDING_SLACK_D`."""
        return tuple((lo - ROUNDING_SLACK_D, hi + ROUNDING_SLACK_D) for lo, hi in self.box.bounds_d)

    @property
    def start(self) -> Lens | None:
        return self.box.start

    def _lens_settings(self) -> dict:
        """The settings of the box and the lenses, as ``settings_dict()`` stores them."""
        return {
            "start": None if self.box.start is None else self.box.start.format(),
            "m_half_width_d": self.box.m_half_width_d,
            "j_half_width_d": self.box.j_half_width_d,
        }

    @classmethod
    def _saved_settings(cls, settings: dict) -> dict:
        """Settings as ``settings_dict()`` wrote them, without the ``"search"`` marker (states
        written before it had none); those written before the prior about the start had none
        (``start_prior_depth`` 0). Settings that store no trust centre and come without their
        session's creation time (:meth:`settings_as_ran`), a bare state, are taken to have centred
        the trust region by the tilted mean when they have no prior about the start either, as
        those saved before 27 Nov 2026 13:11 UTC did; but those saved between that time and the
        prior (duels until 15:48, rankings until 16:38 UTC that day) ran with the centre by the
        mean, which only the creation time tells."""
        settings.pop("search", None)
        if "start_prior_depth" not in settings:
            settings.setdefault("trust_centre", "tilted")
        settings.setdefault("trust_centre", "mean")
        settings.setdefault("start_prior_depth", 0.0)
        return settings

    def _cached(self, name, compute):
        return self._cache.get(self.n_trials, name, compute)

    # ---------------------------------------------------------------- lenses
    def _in_box(self, lens: Lens) -> bool:
        return self.box.contains(lens.power_vector(), slack_d=ROUNDING_SLACK_D)

    def check_in_box(self, name: str, lens: Lens) -> None:
        """A one-line ValueError when ``lens`` (called ``name``, e.g. "first lens") lies outside the search box."""
        if not self._in_box(lens):
            (m_lo, m_hi), (j0_lo, j0_hi), (j45_lo, j45_hi) = self.box.bounds_d
            raise ValueError(
                f"the {name} {lens.format()} is outside the search box (M {diopter_text(m_lo)} to {diopter_text(m_hi)} D, "
                f"J0 {diopter_text(j0_lo)} to {diopter_text(j0_hi)} D, J45 {diopter_text(j45_lo)} to {diopter_text(j45_hi)} D)"
            )

    def distinct_lens(self, taken, proposal_d, same=None) -> Lens:
        """The phoropter lens of ``proposal_d``; if it is one of ``taken`` (or ``same(lens, other)``
        for one of them), the phoropter neighbour of it (one step of sphere or cylinder, or the axis
        turned by ``max(axis_step_deg, 5°)``) nearest to the proposal that is free, in the box.

        A proposal outside the search box (a ranking's candidate members include lenses shown
        before, which may lie up to :data:`ROUNDING_SLACK_D` outside it) whose rounding lands beyond
        the box's slack is rounded from the nearest point of the box instead: :meth:`check_in_box`
        refuses at ``tell`` what this returns at ``ask`` otherwise (a session stopped after the
        patient had answered)."""
        same = same or (lambda a, b: a == b)
        lens = self.phoropter_lens(proposal_d)
        if not self._in_box(lens):
            bounds = np.asarray(self.box.bounds_d, dtype=float)
            lens = self.phoropter_lens(np.clip(np.asarray(proposal_d, dtype=float), bounds[:, 0], bounds[:, 1]))
        if not any(same(lens, other) for other in taken):
            return lens
        step = self.lens_step_d or DEFAULT_LENS_STEP_D
        turn = max(self.axis_step_deg, 5.0)
        neighbours = [
            Lens(lens.sphere_d + ds, lens.cylinder_d + dc, lens.axis_deg)
            for ds, dc in ((step, 0.0), (-step, 0.0), (0.0, -step), (0.0, step))
            if lens.cylinder_d + dc <= 0.0
        ]
        if lens.cylinder_d < 0.0:
            for da in (turn, -turn):
                axis = (lens.axis_deg + da - 1.0) % 180.0 + 1.0
                neighbours.append(Lens(lens.sphere_d, lens.cylinder_d, axis))
        neighbours = [n for n in neighbours if n != lens and self._in_box(n) and not any(same(n, o) for o in taken)]
        if not neighbours:
            raise ValueError(f"no phoropter lens near {lens.format()} is free in the search box")
        distance = [float(np.linalg.norm(n.power_vector().to_array() - proposal_d)) for n in neighbours]
        return neighbours[int(np.argmin(distance))]

    def local_bounds(self, centre_d) -> tuple[tuple[float, float], ...]:
        """The box of half-width ``_radius_d`` around ``centre_d``, cut to the search box."""
        r = self._radius_d
        return tuple((max(lo, c - r), min(hi, c + r)) for c, (lo, hi) in zip(centre_d, self.box.bounds_d, strict=True))

    # ---------------------------------------------------------------- answers
    @single_threaded
    def search_optimum(self) -> np.ndarray:
        """The champion of the next comparison: :meth:`_tilted_optimum` with the tilt ``κ`` now."""
        return self._tilted_optimum(self.tilt)

    def _tilted_optimum(self, kappa: float) -> np.ndarray:
        """``argmax_x μ_f(s₀, x) + κ M`` ``(3,)`` over the *trust region*: the box of half-width
        ``_radius_d`` around the lens shown so far with the highest posterior mean, cut to the
        search box (the box centre before any modelled answer).

        Not over the whole box: far from every lens shown the posterior mean returns to its prior
        (0), and the tilt ``κ M`` alone would then make the plus edge of the box look best — after
        the first few duels every session ran 1–2 D plus before coming back. The champion thus
        moves at most ``_radius_d`` per coordinate beyond the lenses the patient has compared, as
        a clinician's does. The trust region's centre is chosen by the posterior mean alone, not
        tilted: by the tilted mean, each champion, once shown, became the centre of the next trust
        region ``_radius_d`` further plus while the answers said little (two lenses far too plus
        look equally bad), a ratchet that took the duels 1.9 D plus of the truth on average after
        10 duels on tuning patients (clinic patients of seeds 5000–5029, slope 14, an
        autorefraction start, with and without accommodation); centred by the posterior mean,
        +0.6 D, and 0.6 against 0.8 D of blur after 20."""

        def compute():
            if self.model is None:
                return self.box.centre.to_array()
            rng = np.random.default_rng([self._seed, self.n_trials, 1])
            # μ_f(s, x) + κ M on utility inputs [s, M, J0, J45]
            objective = TiltedMean(lambda X: self._predict(X)[0], self._mean_and_gradient, [0.0, kappa, 0.0, 0.0])
            s0 = np.array([self.reference_letter_logmar])
            shown = self._shown_lenses()
            mean = self._predict(np.column_stack([np.full(len(shown), float(s0[0])), shown]))[0]
            if self.trust_centre == "tilted":  # sessions saved before 27 Nov 2026 13:11 UTC (see trust_centre)
                mean = mean + kappa * shown[:, 0]
            bounds = np.array(self.box.bounds_d)
            anchor = np.clip(shown[int(np.argmax(mean))], bounds[:, 0], bounds[:, 1])
            return maximize_posterior_mean(objective, s0, self.local_bounds(anchor), rng, anchor[None, :])

        return self._cached(("tilted_optimum", kappa), compute).copy()

    @property
    def report_tilt(self) -> float:
        """The tilt of the reported lens: :attr:`tilt` times :attr:`report_tilt_share`."""
        return self.tilt * self.report_tilt_share

    @single_threaded
    def plus_offset_d(self, optimum_d, kappa=None) -> float:
        """How far (D of M) the optimum ``optimum_d``, tilted by ``kappa`` (the :attr:`report_tilt`
        by default), lies plus of the untilted one: ``κ / (2c)``
        for a posterior mean ``μ₀ − c (M − M*)²`` along M, ``c`` from the change of its M-slope over
        :data:`CURVATURE_STEP_D` plus of ``optimum_d`` (the plus side: an accommodating eye's minus
        side is flat); at most :attr:`max_plus_offset_d`, 0 without a curvature."""
        kappa = self.report_tilt if kappa is None else kappa
        if kappa == 0 or self.model is None:
            return 0.0
        s0 = self.reference_letter_logmar
        X = np.array([[s0, *optimum_d], [s0, optimum_d[0] + CURVATURE_STEP_D, *optimum_d[1:]]])
        _, dmean = self._mean_and_gradient(X)
        curvature = (dmean[0, 1] - dmean[1, 1]) / (2.0 * CURVATURE_STEP_D)
        if not curvature > 0:
            return 0.0
        return float(min(kappa / (2.0 * curvature), self.max_plus_offset_d))

    @single_threaded
    def best(self) -> PowerVector:
        """The reported power vector: :meth:`_tilted_optimum` with the :attr:`report_tilt`, moved
        back by :meth:`plus_offset_d` (within the box); the box centre before any modelled answer."""

        def compute():
            optimum = self._tilted_optimum(self.report_tilt)
            optimum[0] = self._moved_back_m_d(optimum[0])
            return PowerVector(*(float(v) for v in optimum))

        return self._cached("best", compute)

    def _moved_back_m_d(self, tilted_m_d):
        """M (D; a number or an array) of lenses chosen with the :attr:`report_tilt`, moved back by the
        report's :meth:`plus_offset_d` (that of the tilted optimum, once per trial count), not below
        the box: the one step :meth:`best` and :meth:`_reported_draws` share."""
        kappa = self.report_tilt
        offset_d = self._cached("report_offset", lambda: self.plus_offset_d(self._tilted_optimum(kappa), kappa))
        return np.maximum(tilted_m_d - offset_d, self.box.bounds_d[0][0])

    def _utility(self, lenses_d, full_cov=False):
        X = np.column_stack([np.full(len(lenses_d), self.reference_letter_logmar), lenses_d])
        return self._predict(X, full_cov=full_cov)

    def _candidates(self, best_d: np.ndarray) -> np.ndarray:
        """The reported lens, a grid around it and the lenses shown so far, inside the search box."""
        return distinct_inside(
            np.vstack([best_d[None, :], fine_grid_d(best_d), self._told_lenses()]), self.box.bounds_d
        )

    def _reported_draws(self, best_d: np.ndarray, rng: np.random.Generator) -> np.ndarray:
        """:data:`N_DRAWS` draws ``(n, 3)`` of the reported lens: for each joint posterior draw ``g``
        of the utility over the candidates, the argmax of ``g + κ M`` with ``M`` moved back by the
        report's :meth:`plus_offset_d` (not below the box). Candidates whose upper bound (mean +
        :data:`PRUNE_SDS` sd) falls below the best lower bound, plain and tilted alike, are dropped.

        Not the argmax of ``g`` alone: on an accommodating eye's flat minus plateau those wander
        minus, while the report is the most-plus lens; intervals of them held the true M in 74 % of
        ranking sessions (held-out seeds 100,000–100,099, start-accommodation, slope 14, 40
        rankings; 24 of the 26 misses had the truth plus of the interval). Drawn as the report is
        made, on tuning seeds 5000–5059: rankings 80 → 98 % (median M width 0.70 → 0.63 D), duels
        87 → 100 % (0.86 → 1.21 D)."""
        kappa = self.report_tilt
        lenses = self._candidates(best_d)
        mean, var = self._utility(lenses)
        bound = PRUNE_SDS * np.sqrt(np.maximum(var, 0.0))
        tilted = mean + kappa * lenses[:, 0]
        keep = (mean + bound >= np.max(mean - bound)) | (tilted + bound >= np.max(tilted - bound))
        keep[0] = True
        lenses = lenses[keep]
        mean, cov = self._utility(lenses, full_cov=True)
        draws = _joint_draws(mean, cov, N_DRAWS, rng) + kappa * lenses[:, 0]
        best_draws = lenses[np.argmax(draws, axis=1)].copy()
        best_draws[:, 0] = self._moved_back_m_d(best_draws[:, 0])
        return best_draws

    @single_threaded
    def prescription(self) -> Prescription:
        """The reported lens (rounded) and its estimate, with 95 % intervals of ``M, J0, J45`` and of
        sphere, cylinder and axis.

        The intervals are those of the *reported* best lens among a set of candidates — the
        reported lens, a grid of ±0.25 and ±0.5 D around it, and every lens shown — over
        :data:`N_DRAWS` joint posterior draws of the utility there (at the reference letter size),
        seeded by ``(seed, n_trials)``: each draw ``g`` gives the lens the report would give were
        ``g`` the utility — the argmax of ``g + κ M`` (``κ`` the :attr:`report_tilt`), moved back
        by the :meth:`plus_offset_d` of the report — as :meth:`best` does with the posterior mean
        (:meth:`_reported_draws`). They are as fine as that grid (0.25 D) and cover only the
        candidates, so they understate the uncertainty where the best lens may lie far from every
        candidate. ``predicted_acuity_logmar`` and ``confidence`` are None: a comparison utility has
        no acuity scale, so neither the acuity with the lens nor "within 0.025 logMAR of the best"
        is defined.
        """

        def compute():
            best = self.best()
            best_d = best.to_array()
            lens = self.prescribed_lens(best)
            if self.model is None:
                return Prescription(lens, best, {}, None, None, self.n_trials)
            rng = np.random.default_rng([self._seed, self.n_trials, INTERVAL_STREAM])
            draws_d = within_cells(self._reported_draws(best_d, rng), rng, self.box.bounds_d)
            return Prescription(lens, best, lens_intervals(draws_d, lens), None, None, self.n_trials)

        return self._cached("prescription", compute)
