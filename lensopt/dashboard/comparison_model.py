"""What the dashboard shows of a duel or ranking session, from its stored answers (no Qt, no pyplot).

Both kinds compare lenses on one trial (two in a duel, three or four in a ranking) and learn the
same thing, a latent utility ``f(s, S, C)`` of a lens at a letter size; only how a stored answer
is told to the optimizer differs. As for letter sessions (:mod:`lensopt.dashboard.model`), the
dashboard rebuilds the session's optimizer from its stored answers (``DuelRefractionOptimizer`` or
``RankingRefractionOptimizer.from_settings(session.optimizer_settings, history)``; a duel's "the
same" included: the tie model uses it, the probit model keeps it in the history only) and derives
every number the panels draw into one frozen :class:`ComparisonSnapshot`, with the optimizer's
``predict_utility``, ``reference_letter_logmar``, ``best()`` and ``optimum_draws_d`` only.

- **Lens map**: the posterior mean utility ``f(s₀, S, C)`` on a grid, at the reference letter
  size ``s₀`` where the optimizer reports its best lens (``predict_utility``).
- **Best lens**: ``best()`` (argmax of the posterior mean) with the ± of its location from
  Thompson samples of the argmax, exactly as for letter sessions
  (the optimizer's ``optimum_draws_d``, :func:`lensopt.dashboard.posterior.spread_of_samples`).
- **Utility profile** (the letter mode's psychometric panel has no meaning here): the posterior
  of ``f(lens) − f(best)`` along the sphere line and the cylinder line through the best lens. We
  chose this over "probability that the best lens is preferred to each recent lens" because it is
  the model's own quantity for every answer model (probit duels, duels with ties, Plackett–Luce
  rankings), while a preference probability would need one formula per model. The difference's sd
  includes the covariance with the best lens, so a band below zero means "the best lens is surely
  better".
"""

from __future__ import annotations

import numpy as np

from lensopt.dashboard.comparison_snapshot import (
    ComparedSets,
    ComparisonSnapshot,
    UtilityMap,
    UtilityProfile,
    waiting_message,
)
from lensopt.dashboard.model_parts import compute_prescription_view
from lensopt.dashboard.posterior import (
    LENS_MAP_POINTS,
    optimizer_bounds,
    settings_bounds,
    spread_of_samples,
)
from lensopt.dashboard.replay import FollowedSession
from lensopt.dashboard.series import frozen_array
from lensopt.dashboard.snapshot import LensOptimum, lens_notation_from_protocol, lens_step_from_protocol
from lensopt.modes.letters import is_prescription
from lensopt.modes.registry import get_mode
from lensopt.refraction.optimum_draws import lens_grid
from lensopt.refraction.prescription_duels import PrescriptionDuelOptimizer
from lensopt.refraction.prescription_rankings import PrescriptionRankingOptimizer
from lensopt.refraction.trial import TrialHistory
from lensopt.store.verdict import trial_noun

#: Points on each line of the utility profile.
PROFILE_POINTS = 81
#: Draws of the best lens (the optimizer's ``optimum_draws_d``) behind its ± and credible region.
ARGMAX_SAMPLES = 256

#: The answer model of a ranking session (Gumbel noise on the utility, :mod:`lensopt.ranking`).
RANKING_MODEL_NAME = "Plackett–Luce"


def utility_profile(
    opt, letter_logmar: float, best_d, sphere_bounds_d, cylinder_bounds_d, n_points: int = PROFILE_POINTS
) -> UtilityProfile:
    """Posterior of ``f(lens) − f(best_d)`` along the sphere and the cylinder lines through ``best_d``.

    With the joint posterior of ``f`` at the best lens and on both lines, the difference has mean
    ``μ(x) − μ(x*)`` and variance ``σ²(x) + σ²(x*) − 2 cov(x, x*)``.
    """
    best_s, best_c = best_d
    spheres = np.linspace(sphere_bounds_d[0], sphere_bounds_d[1], n_points)
    cylinders = np.linspace(cylinder_bounds_d[0], cylinder_bounds_d[1], n_points)
    lenses = np.vstack(
        [
            [best_s, best_c],
            np.column_stack([spheres, np.full(n_points, best_c)]),
            np.column_stack([np.full(n_points, best_s), cylinders]),
        ]
    )
    mean, cov = opt.predict_utility(letter_logmar, lenses, full_cov=True)
    diff_mean = mean[1:] - mean[0]
    diff_sd = np.sqrt(np.clip(np.diag(cov)[1:] + cov[0, 0] - 2.0 * cov[0, 1:], 0.0, None))
    along_s, along_c = slice(0, n_points), slice(n_points, 2 * n_points)
    return UtilityProfile(
        sphere_d=frozen_array(spheres),
        sphere_mean=frozen_array(diff_mean[along_s]),
        sphere_sd=frozen_array(diff_sd[along_s]),
        cylinder_d=frozen_array(cylinders),
        cylinder_mean=frozen_array(diff_mean[along_c]),
        cylinder_sd=frozen_array(diff_sd[along_c]),
        letter_logmar=float(letter_logmar),
    )


def compute_comparison_parts(opt, rng):
    """Utility map, best lens (with the spread of its location) and utility profile of ``opt``."""
    sphere_b, cylinder_b = optimizer_bounds(opt, "sphere_bounds_d"), optimizer_bounds(opt, "cylinder_bounds_d")
    reference = opt.reference_letter_logmar
    best_d = opt.best()

    lenses, _, _ = lens_grid(sphere_b, cylinder_b, LENS_MAP_POINTS)
    mean, var = opt.predict_utility(reference, lenses)
    shape = (LENS_MAP_POINTS, LENS_MAP_POINTS)
    utility_map = UtilityMap(
        sphere_d=frozen_array(np.linspace(*sphere_b, LENS_MAP_POINTS)),
        cylinder_d=frozen_array(np.linspace(*cylinder_b, LENS_MAP_POINTS)),
        mean=frozen_array(np.reshape(mean, shape)),
        sd=frozen_array(np.reshape(np.sqrt(np.clip(var, 0.0, None)), shape)),
        letter_logmar=reference,
    )
    best = LensOptimum(
        sphere_d=best_d[0],
        cylinder_d=best_d[1],
        **spread_of_samples(*opt.optimum_draws_d(ARGMAX_SAMPLES, rng)),
    )
    return utility_map, best, utility_profile(opt, reference, best_d, sphere_b, cylinder_b)


class ComparisonSessionModel(FollowedSession):
    """Follows one session of compared lenses: tells new answers to a cached optimizer and builds
    snapshots (``update``, ``snapshot(n)`` for the replay slider: see :class:`FollowedSession`).

    A subclass names its ``feedback`` mode and ``kind`` (which read its records and turn one into
    the optimizer's ``(trial, answer)``, see :class:`FollowedSession`), turns a record into the set
    drawn (``compared_set``), and names its answer model (``model_name``).
    """

    #: The session kind followed (its feedback mode's: ``"duel"`` or ``"ranking"``).
    kind: str = ""

    def compared_set(self, record) -> tuple:
        """``(lenses_d ((S, C), ...) as presented, order (indices, clearest first), tied)`` of a record."""
        raise NotImplementedError

    def model_name(self) -> str:
        """The answer model, as the summary and the utility profile name it."""
        raise NotImplementedError

    def _fixed(self, n: int, live: bool) -> dict:
        """The snapshot's fields that need no model: the session, the first ``n`` sets, the bounds."""
        records = self._records[:n]
        sphere_b, cylinder_b, letter_b = settings_bounds(self._settings)
        axis_deg, convention = lens_notation_from_protocol(self._info.protocol)
        return dict(
            kind=self.kind,
            header=self._header(),
            sets=ComparedSets.from_records(records, (self.compared_set(r) for r in records)),
            sphere_bounds_d=sphere_b,
            cylinder_bounds_d=cylinder_b,
            letter_bounds_logmar=letter_b,
            model=self.model_name(),
            live=live,
            lens_axis_deg=axis_deg,
            cylinder_convention=convention,
            lens_step_d=lens_step_from_protocol(self._info.protocol),
        )

    def _build(self, n: int, live: bool) -> ComparisonSnapshot:
        fixed = self._fixed(n, live)
        if n == 0:
            return ComparisonSnapshot(**fixed, message=waiting_message(self.kind))
        rng = np.random.default_rng([abs(fixed["header"].seed), n])
        utility_map, best, profile = compute_comparison_parts(self._optimizer_after(n), rng)
        return ComparisonSnapshot(**fixed, utility_map=utility_map, best=best, profile=profile)


#: What the lens map, the profile and the summary say of a comparison session (duels, rankings) of
#: the full prescription.
PRESCRIPTION_COMPARISON_MESSAGE = (
    "Full prescription (sphere, cylinder and axis) by {nouns}: the lens map and the profile show "
    "two-parameter sessions only. After {n} {nouns}: {text}."
)
#: The same, of comparisons through the acuity link, whose predicted acuity the lens map's and the
#: profile's slots draw (:func:`lensopt.dashboard.model_parts.compute_prescription_view`).
PRESCRIPTION_LINK_MESSAGE = (
    "Full prescription (sphere, cylinder and axis) by {nouns}: the panels show the acuity they predict "
    "around the lens. After {n} {nouns}: {text}."
)


class _PrescriptionComparisons(ComparisonSessionModel):
    """A comparison session that may be of the full prescription (its settings say ``"search":
    "prescription"``): then it is rebuilt as the ``prescription_optimizer`` it was, and shows its
    prescription in words."""

    prescription_optimizer: type[TrialHistory]

    def __init__(self, info, optimizer_factory=None):
        settings = info.optimizer_settings
        self._prescription = is_prescription(settings)
        factory = self.prescription_optimizer.from_settings if self._prescription else None
        super().__init__(info, optimizer_factory or factory)

    def _build(self, n: int, live: bool) -> ComparisonSnapshot:
        if not self._prescription or n == 0:
            return super()._build(n, live)
        opt = self._optimizer_after(n)
        rx, fixed = opt.prescription(), self._fixed(n, live)
        # through the acuity link the comparisons predict acuity: the panels of a letter search's eye
        view = compute_prescription_view(opt, fixed["header"].eye) if opt.clarity_link == "acuity" else None
        words = PRESCRIPTION_COMPARISON_MESSAGE if view is None else PRESCRIPTION_LINK_MESSAGE
        message = words.format(nouns=trial_noun(self.kind), n=n, text=rx.text)
        intervals = tuple((key, float(low), float(high)) for key, (low, high) in rx.intervals.items())
        return ComparisonSnapshot(
            **fixed, message=message, prescription=rx.text, prescription_view=view, prescription_intervals=intervals
        )


class DuelSessionModel(_PrescriptionComparisons):
    """A duel session: two lenses per trial, answered "first", "second" or "same"; of the full
    prescription, the ``PrescriptionDuelOptimizer`` it was."""

    feedback = get_mode("duel")
    kind = feedback.kind
    prescription_optimizer = PrescriptionDuelOptimizer

    def compared_set(self, record) -> tuple:
        lenses = (record.first_lens_d, record.second_lens_d)
        return lenses, ((1, 0) if record.answer == "second" else (0, 1)), record.answer == "same"

    def model_name(self) -> str:
        if self._settings.get("clarity_link") == "acuity":  # the full prescription's duels, by default
            return "probit through the acuity link"
        return str(self._settings.get("model", "probit"))


class RankingSessionModel(_PrescriptionComparisons):
    """A ranking session: three or four lenses per trial, put in order, clearest first; of the full
    prescription, the ``PrescriptionRankingOptimizer`` it was."""

    feedback = get_mode("ranking")
    kind = feedback.kind
    prescription_optimizer = PrescriptionRankingOptimizer

    def compared_set(self, record) -> tuple:
        return record.lenses_d, record.order, False

    def model_name(self) -> str:
        if self._settings.get("clarity_link") == "acuity":  # the full prescription's rankings, by default
            return "Plackett–Luce through the acuity link"
        return RANKING_MODEL_NAME
