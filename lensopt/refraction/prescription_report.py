"""What the full-prescription letter search reports: its lens, prescription and confidence (issue 16).

:class:`PrescriptionReport` is the part of
:class:`lensopt.refraction.prescription_letters.PrescriptionOptimizer` that turns its fitted model
into an answer. The model is the letter optimizer's GP classifier on ``[letter_logmar, m_d, j0_d,
j45_d]``, whose latent is read as ``f(s, x) = w s + g(x)``: a psychometric slope ``w`` and an
intercept ``g(x)`` per lens (as :mod:`lensopt.refraction.certainty` reads the two-parameter model).

- **the reported lens** (:meth:`PrescriptionReport.best`): the optimum of the plus-preferring
  objective ``f(s₀, x) + κ M`` (``κ`` the ``plus_preference``; the core optimizer's ``best()``),
  moved back along ``M`` by the ``κ ln10 / (2w)`` D the tilt puts it plus of the acuity optimum
  (near its optimum the latent is ``−w b²/ln10``), and then to the most-plus end point;
- **most-plus endpoint**: the reported lens is the most-plus lens along ``M`` (astigmatism held at
  the optimum's) whose predicted acuity is within :data:`MOST_PLUS_TOLERANCE_LOGMAR` of the best
  predicted acuity. A young eye accommodates, so every lens up to its amplitude too minus reads as
  well as the correction; the clinical end point is the most plus of them;
- **the predicted acuity** through a lens (:meth:`PrescriptionReport.predicted_acuity_logmar`):
  where the posterior mean reaches the threshold latent, ``(z − g(x)) / w``;
- **the prescription** (:meth:`PrescriptionReport.prescription`): the phoropter lens nearest the
  reported lens (:meth:`~lensopt.refraction.lens.Lens.nearest_phoropter_lens`), with 95 % intervals
  and — of that printed lens, the one the patient will wear — the predicted acuity and the
  confidence, from joint posterior draws of ``w`` and the intercepts of candidate lenses
  (:meth:`PrescriptionReport._candidates`: the printed lens, a fine grid around the reported lens,
  the tested lenses and a coarse grid of the box near them), pruned as
  :mod:`lensopt.refraction.certainty` prunes them; :meth:`PrescriptionReport.confidence` and
  ``should_stop`` for the stopping rule (:class:`lensopt.refraction.lens_check.ReportedLensCheck`).

A subclass sets the core optimizer ``_core`` (a :class:`lensopt.binary.optimizer.ContextualOptimizer`:
``settings``, ``model``, ``best()``, ``inputs``, ``target_latent``, ``_cached``), the search ``box``,
the phoropter steps ``lens_step_d`` and ``axis_step_deg``, ``plus_preference``,
``most_plus_tolerance_logmar``, ``stop`` and ``_history``.
"""

from __future__ import annotations

import math

import numpy as np

from lensopt.refraction.certainty import (
    CERTAINTY_STREAM,
    N_DRAWS,
    PRUNE_SDS,
    acuity_loss,
    draws_from_factor,
    joint_factor,
    refine_draws,
)
from lensopt.refraction.lens import PowerVector
from lensopt.refraction.prescription import (
    Prescription,
    PrescriptionSearch,
    distinct_inside,
    fine_grid_d,
    lens_intervals,
    within_cells,
)
from lensopt.stopping import ACUITY_TOLERANCE_LOGMAR, StopRule, stop_threshold
from lensopt.threads import single_threaded

#: The most-plus end point: the reported lens is the most plus (in M) whose predicted acuity is
#: within this many logMAR of the best predicted acuity. Chosen on tuning patients (seeds < 100,000).
MOST_PLUS_TOLERANCE_LOGMAR = 0.0

#: Step (D) of the scan along M for the most-plus end point.
MOST_PLUS_SCAN_STEP_D = 0.01

#: Candidate lenses of the certainty, besides the fine grid around the reported lens
#: (:func:`~lensopt.refraction.prescription.fine_grid_d`): the spacing of the coarse box grid and
#: the distance from a tested lens within which the coarse grid counts as searched.
COARSE_STEP_D = 0.5
COVERED_RADIUS_D = 0.75


def _prescription_losses(draws):
    """Acuity loss (logMAR) of the reported lens in each draw of ``[g(x̂), g(lens₁)..., w + g(x̂)]``
    (:func:`~lensopt.refraction.certainty.acuity_loss`)."""
    g = draws[:, :-1]
    return acuity_loss(g.max(axis=1) - g[:, 0], draws[:, -1] - draws[:, 0])


class PrescriptionReport(PrescriptionSearch):
    """The reported lens, prescription and confidence of the full-prescription letter search (see
    the module docstring)."""

    most_plus_tolerance_logmar: float
    stop: StopRule | None

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
                # within the box: a nearly flat slope (two answers, both wrong) gave an offset of 60 D
                # and reported -51.25 / -2.75 x 158 in a box of M +6 to +10 D
                low, high = self.box.bounds_d[0]
                optimum[0] = min(max(optimum[0], low), high)
            return PowerVector(*(float(v) for v in self._most_plus(optimum)))

        return self._core._cached("best_power_vector", compute)

    def predicted_acuity_logmar(self, power_vector_d) -> float:
        """The model's acuity threshold (logMAR) through a lens, from the posterior means."""
        mean, _ = self.acuity_logmar(np.asarray(power_vector_d, dtype=float)[None, :])
        return float(mean[0])

    @single_threaded
    def acuity_logmar(self, power_vectors_d) -> tuple[np.ndarray, np.ndarray]:
        """The model's acuity threshold (logMAR) through each lens of ``power_vectors_d`` ``(n, 3)``,
        ``(z − g(x)) / w``, and its posterior SD ``sd(g(x)) / w``, both at the posterior mean slope
        ``w`` (the slope's own uncertainty, which scales every lens alike, left out); NaN without a
        model or a rising mean slope. The dashboard draws them (:mod:`lensopt.dashboard.model`)."""
        lenses = np.atleast_2d(np.asarray(power_vectors_d, dtype=float))
        nan = np.full(len(lenses), math.nan)
        if self.model is None or not len(lenses):
            return nan, nan.copy()
        mean, var = self._intercepts_and_slope(lenses)
        slope = mean[-1] - mean[0]
        if not slope > 1e-9:
            return nan, nan.copy()
        return (self._core.target_latent - mean[:-1]) / slope, np.sqrt(np.maximum(var[:-1], 0.0)) / slope

    def _candidates(self, lens_d: np.ndarray, best_d: np.ndarray) -> np.ndarray:
        """The prescribed lens ``lens_d`` (first, kept wherever it is) and the lenses against which it
        is measured: the estimate ``best_d``, a fine grid around it, the tested lenses and a coarse
        grid of the box near them (as :mod:`lensopt.refraction.certainty`)."""
        bounds = np.array(self.settings.system_bounds)
        axes = [np.arange(lo, hi + 1e-9, COARSE_STEP_D) for lo, hi in bounds]
        coarse = np.array(np.meshgrid(*axes, indexing="ij")).reshape(3, -1).T
        tested = np.unique(self._core.inputs[:, 1:], axis=0)
        near = np.sqrt(((coarse[:, None, :] - tested[None, :, :]) ** 2).sum(-1)).min(axis=1) <= COVERED_RADIUS_D
        return distinct_inside(
            np.vstack([lens_d[None, :], best_d[None, :], fine_grid_d(best_d), coarse[near], tested]), bounds
        )

    @single_threaded
    def prescription(self) -> Prescription:
        """The prescription with its 95 % intervals, predicted acuity and confidence (from 512 joint
        posterior draws of the slope and the lens intercepts, 4096 where the confidence narrowly
        reaches the stopping rule's threshold (:func:`lensopt.refraction.certainty.refine_draws`), seeded by
        ``(seed, n_trials)``)."""

        def compute():
            best = self.best()
            best_d = best.to_array()
            lens = self.prescribed_lens(best)
            if self.model is None:
                return Prescription(lens, best, {}, None, 0.0, 0)
            # the confidence and the predicted acuity are the printed lens's, not the unrounded
            # estimate's: a clinician review found 0.95 at the estimate and 0.85 at the lens printed
            lens_d = lens.power_vector().to_array()
            lenses = self._candidates(lens_d, best_d)
            mu, var = self._intercepts_and_slope(lenses)
            g_mu, g_sd = mu[:-1], np.sqrt(np.maximum(var[:-1], 0.0))
            keep = g_mu + PRUNE_SDS * g_sd >= np.max(g_mu - PRUNE_SDS * g_sd)
            keep[0] = True
            lenses = lenses[keep]
            mean, cov = self._intercepts_and_slope(lenses, full_cov=True)
            rng = np.random.default_rng([self.settings.seed, self.n_trials, CERTAINTY_STREAM])
            chol = joint_factor(cov)  # once: the first draws and any refining draw from it
            draws = refine_draws(
                draws_from_factor(mean, chol, N_DRAWS, rng),
                lambda n: draws_from_factor(mean, chol, n, rng),
                lambda d: float(np.mean(_prescription_losses(d) <= ACUITY_TOLERANCE_LOGMAR)),
                stop_threshold(self.stop),
            )
            g, slope = draws[:, :-1], draws[:, -1] - draws[:, 0]
            loss = _prescription_losses(draws)
            # each draw's own most-plus best lens: the most plus M among lenses within the tolerance
            within = g >= (g.max(axis=1) - self.most_plus_tolerance_logmar * np.maximum(slope, 0.0))[:, None]
            best_draws = lenses[np.argmax(np.where(within, lenses[None, :, 0], -np.inf), axis=1)]
            return Prescription(
                lens=lens,
                power_vector_d=best,
                intervals=lens_intervals(within_cells(best_draws, rng, self.box.bounds_d), lens),
                predicted_acuity_logmar=self.predicted_acuity_logmar(lens_d),
                confidence=float(np.mean(loss <= ACUITY_TOLERANCE_LOGMAR)),
                trials=self.n_trials,
            )

        return self._core._cached("prescription", compute)

    def confidence(self) -> float:
        """Posterior probability that the reported lens is within 0.025 logMAR of the best lens."""
        return float(self.prescription().confidence or 0.0)

    def _reported_lens(self) -> tuple[float, float, float | None]:
        """The prescribed lens (:meth:`prescription`'s, on the phoropter), which the stopping rule's
        check has the patient read through (:mod:`lensopt.refraction.lens_check`)."""
        lens = self.prescription().lens
        return lens.sphere_d, lens.cylinder_d, lens.axis_deg

    def _reported_acuity_logmar(self) -> float:
        """The acuity predicted through the prescribed lens (nan: not known yet), whose check letters
        count up to three lines above it (:mod:`lensopt.refraction.lens_check`)."""
        predicted_logmar = self.prescription().predicted_acuity_logmar
        return math.nan if predicted_logmar is None else float(predicted_logmar)

    def _confidence_test(self) -> dict:
        return {"confidence": self.confidence}
