"""The ideal observer: grid Bayes over the true correction, with the true patient model.

A baseline for the letter optimizers (issue 14): it KNOWS the patient model of METHOD.md §1 —
slope ``a``, guess rate ``γ = 1/n_alternatives``, lapse ``λ``, best acuity ``VA_best`` — and does
not know the true correction ``h = (S*, C*)``. Its belief is a posterior over a grid of
hypotheses ``h`` (uniform prior over the lens box). An answer ``c`` to a letter of size ``s``
through the lens ``x = (S, C)`` has, under hypothesis ``h``, the likelihood

    P(c = 1 | s, x, h) = γ + (1 − γ − λ) Φ(a (s − VA(x; h))),
    VA(x; h) = VA_best + log10(1 + b²),   b² = ½ (r_S² + (r_S + r_C)²),   r = x − h

(Raasch blur, Blendowske acuity law: :mod:`lensopt.observer.optics`). The posterior after
answers ``c_1..c_t`` is ``w(h) ∝ Π_i P(c_i | s_i, x_i, h)``, kept as log-probabilities on the
whole grid.

**Choice of trial.** The next ``(x, s)`` maximizes the mutual information between the answer and
the hypothesis (bits), ``I(x, s) = H₂(E_w[P]) − E_w[H₂(P)]``, over a candidate set: lenses from a
coarse grid of the box, the most probable hypotheses, and a local grid around the current
estimate (rounded to ``lens_step_d`` if given) × letter sizes on a grid over the letter range.
Because ``P`` depends on the hypothesis only through ``VA(x; h)``, the posterior is first pushed
forward to a histogram of ``VA`` per candidate lens (linear binning on a fine fixed ``VA`` grid),
and both expectations become one matrix product each with the precomputed tables ``P(s_j, v_k)``
and ``H₂(P(s_j, v_k))``. For scoring only, hypotheses holding less than ``PRUNE_MASS`` of the
posterior are dropped and, while the posterior is broad, neighbouring grid cells are merged into
blocks (mass-weighted centres) so that at most ``MAX_SCORING_HYPOTHESES`` remain; the posterior
update always uses the full grid.

**Reported lens.** The minimizer of the posterior expected acuity loss,
``x̂ = argmin_x E_w[VA(x; h) − VA_best] = argmin_x Σ_h w(h) log10(1 + b²(x − h))``: the figure a
benchmark scores is exactly this loss at the true ``h``, so this is the Bayes choice for it. With
a concentrated posterior the loss is nearly the quadratic form ``b²/ln 10`` and ``x̂`` is close
to the posterior mean; with two separated modes (the blur is symmetric in ``±r``, so single-lens
data leave mirror-image hypotheses) the concave tail of ``log10(1 + b²)`` makes ``x̂`` pick one
mode, where the mean would lie between the modes and be bad under both.

**Grid spacing.** A true correction between grid points is at most ``δ/2`` from one in each
coordinate, so the best hypothesis is off by ``b² ≤ ½((δ/2)² + δ²) = 0.625 δ²``:
``≤ 0.0007`` logMAR for the default ``δ = 0.05`` D (``≤ 0.0027`` at 0.1 D), well below the
0.025 logMAR criterion; the finer default also keeps a 100-trial posterior (a few tenths of a
diopter wide) spread over many grid cells, so :meth:`IdealObserver.confidence` is a fair sum.

**Confidence.** ``P_w(VA(x̂; h) − VA_best ≤ 0.025)``: the posterior mass of the hypotheses under
which the reported lens is within the criterion of the best one.
"""

from __future__ import annotations

import math
import numbers
from dataclasses import dataclass

import numpy as np
from scipy.special import log_ndtr, ndtr

from lensopt.gp.uncertainty import binary_entropy_bits
from lensopt.observer.optics import acuity_logmar, blur_strength_d
from lensopt.observer.patient import check_answer_rates
from lensopt.refraction.certainty import LensCertainty
from lensopt.refraction.grid_posterior import (
    LensGridSearch,
    check_bounds,
    grid_axis,
    marginal_interval,
    rounded_lenses,
)
from lensopt.refraction.phoropter import check_lens_step
from lensopt.refraction.trial import Trial
from lensopt.stopping import ACUITY_TOLERANCE_LOGMAR, StopRule
from lensopt.trial_cache import TrialCache

#: Default spacing (D) of the hypothesis grid; see the module docstring for the grid error.
GRID_STEP_D = 0.05

#: Default spacing (logMAR) of the candidate letter sizes.
LETTER_STEP_LOGMAR = 0.01

#: Spacing (logMAR) of the acuity grid on which the posterior is binned to score candidates.
VA_STEP_LOGMAR = 0.0025

#: Posterior mass left out of candidate scoring (the least probable hypotheses).
PRUNE_MASS = 1e-5

#: At most this many (possibly merged) hypotheses are used to score candidates.
MAX_SCORING_HYPOTHESES = 2500

#: Acuity criterion (logMAR) of :meth:`IdealObserver.confidence`.
CRITERION_LOGMAR = ACUITY_TOLERANCE_LOGMAR

#: Spacing (D) of the coarse lens grid among the candidates, and the offsets (D) of the local
#: grid of candidate lenses around the current estimate.
COARSE_LENS_STEP_D = 1.0
LOCAL_OFFSETS_D = (-1.0, -0.5, -0.25, 0.0, 0.25, 0.5, 1.0)

#: Most probable hypotheses added as candidate lenses, and candidate starts of the reported-lens
#: search.
N_HYPOTHESIS_CANDIDATES = 25
N_LENS_STARTS = 64


@dataclass(frozen=True)
class IdealObserverSettings:
    """What the ideal observer knows and how it searches (``settings`` of the duck-typed API)."""

    rule: str
    seed: int
    slope: float
    n_alternatives: int
    lapse: float
    va_best_logmar: float
    sphere_bounds_d: tuple[float, float]
    cylinder_bounds_d: tuple[float, float]
    letter_bounds_logmar: tuple[float, float]
    lens_step_d: float | None
    grid_step_d: float
    letter_step_logmar: float


def _check_positive(name, value):
    if (
        isinstance(value, bool)
        or not isinstance(value, numbers.Real)
        or not (math.isfinite(value) and float(value) > 0)
    ):
        raise ValueError(f"{name} must be a positive number, got {value!r}")
    return float(value)


class IdealObserver(LensGridSearch):
    """Grid-Bayes ideal observer with ask/tell, duck-typed like ``RefractionOptimizer``.

    ``ask() -> Trial``, ``tell(trial, correct)``, ``best() -> (sphere_d, cylinder_d)``,
    ``confidence()``, ``certainty()``, ``should_stop()`` (by ``stop``, a :class:`lensopt.stopping.StopRule`; never
    when ``stop`` is None), ``n_trials``, ``last_decision_ms`` (duration of the last ``ask``),
    ``rule == "ideal"``, ``seed``. The only randomness breaks exact ties between candidate
    trials, from ``np.random.default_rng([seed, n_trials])``.
    """

    rule = "ideal"
    n_lens_starts = N_LENS_STARTS

    def __init__(
        self,
        slope=5.0,
        n_alternatives=26,
        lapse=0.0,
        va_best_logmar=0.0,
        seed=0,
        *,
        sphere_bounds_d=(-4.0, 4.0),
        cylinder_bounds_d=(-4.0, 4.0),
        letter_bounds_logmar=(-1.0, 2.0),
        lens_step_d=None,
        stop=None,
        grid_step_d=GRID_STEP_D,
        letter_step_logmar=LETTER_STEP_LOGMAR,
    ):
        slope = _check_positive("slope", slope)
        n_alternatives, lapse = check_answer_rates("", n_alternatives, lapse)
        if (
            isinstance(va_best_logmar, bool)
            or not isinstance(va_best_logmar, numbers.Real)
            or not math.isfinite(va_best_logmar)
        ):
            raise ValueError(f"va_best_logmar must be a finite number, got {va_best_logmar!r}")
        if isinstance(seed, bool) or not isinstance(seed, numbers.Integral) or seed < 0:
            raise ValueError(f"seed must be an integer >= 0, got {seed!r}")
        if stop is not None and not isinstance(stop, StopRule):
            stop = StopRule.from_dict(stop)
        self.settings = IdealObserverSettings(
            rule=self.rule,
            seed=int(seed),
            slope=slope,
            n_alternatives=n_alternatives,
            lapse=float(lapse),
            va_best_logmar=float(va_best_logmar),
            sphere_bounds_d=check_bounds("sphere_bounds_d", sphere_bounds_d),
            cylinder_bounds_d=check_bounds("cylinder_bounds_d", cylinder_bounds_d),
            letter_bounds_logmar=check_bounds("letter_bounds_logmar", letter_bounds_logmar),
            lens_step_d=check_lens_step(lens_step_d),
            grid_step_d=_check_positive("grid_step_d", grid_step_d),
            letter_step_logmar=_check_positive("letter_step_logmar", letter_step_logmar),
        )
        self.stop = stop
        s = self.settings
        self._guess = 1.0 / n_alternatives
        self._kappa = 1.0 - self._guess - s.lapse
        # Hypothesis grid (S*, C*), flattened in C order of (sphere, cylinder).
        self.sphere_grid_d = grid_axis(s.sphere_bounds_d, s.grid_step_d)
        self.cylinder_grid_d = grid_axis(s.cylinder_bounds_d, s.grid_step_d)
        grid_s, grid_c = np.meshgrid(self.sphere_grid_d, self.cylinder_grid_d, indexing="ij")
        self._hyp = np.column_stack([grid_s.ravel(), grid_c.ravel()])
        self._log_post = np.zeros(len(self._hyp))
        # Candidate letter sizes and the tables P(s_j, v_k), H₂(P(s_j, v_k)) on a fixed VA grid
        # that covers every acuity a lens in the box can give under a hypothesis in the box.
        self.letter_grid_logmar = grid_axis(s.letter_bounds_logmar, s.letter_step_logmar)
        s_span = max(abs(s.sphere_bounds_d[1] - s.sphere_bounds_d[0]), 1e-9)
        c_span = abs(s.cylinder_bounds_d[1] - s.cylinder_bounds_d[0])
        va_max = float(acuity_logmar(blur_strength_d(s_span, s_span + c_span), s.va_best_logmar))
        self._va_grid = s.va_best_logmar + VA_STEP_LOGMAR * np.arange(
            math.ceil((va_max - s.va_best_logmar) / VA_STEP_LOGMAR) + 2
        )
        z = slope * (self.letter_grid_logmar[None, :] - self._va_grid[:, None])
        self._p_table = self._guess + self._kappa * ndtr(z)
        self._h_table = binary_entropy_bits(self._p_table, s.lapse + self._kappa * ndtr(-z))
        # Coarse lens grid and the local offsets, as candidate lenses.
        coarse_s = grid_axis(s.sphere_bounds_d, COARSE_LENS_STEP_D)
        coarse_c = grid_axis(s.cylinder_bounds_d, COARSE_LENS_STEP_D)
        cs, cc = np.meshgrid(coarse_s, coarse_c, indexing="ij")
        self._coarse_lenses = np.column_stack([cs.ravel(), cc.ravel()])
        os_, oc = np.meshgrid(LOCAL_OFFSETS_D, LOCAL_OFFSETS_D, indexing="ij")
        self._local_offsets = np.column_stack([os_.ravel(), oc.ravel()])
        self._history: list[tuple[Trial, bool]] = []
        self._cache = TrialCache()
        self.last_decision_ms = float("nan")

    # ---------------------------------------------------------------- properties
    def posterior_grid(self) -> np.ndarray:
        """The posterior as ``(len(sphere_grid_d), len(cylinder_grid_d))``."""
        return self.posterior().reshape(len(self.sphere_grid_d), len(self.cylinder_grid_d))

    # ---------------------------------------------------------------- model
    def p_correct(self, letter_logmar, sphere_d, cylinder_d, hypotheses_d=None) -> np.ndarray:
        """``P(c = 1 | s, x, h)`` for every hypothesis (default: the grid), shape ``(n,)``."""
        h = self._hyp if hypotheses_d is None else np.asarray(hypotheses_d, dtype=float).reshape(-1, 2)
        va = self._acuity(np.array([[sphere_d, cylinder_d]], dtype=float), h)[0]
        return self._guess + self._kappa * ndtr(self.settings.slope * (letter_logmar - va))

    def _acuity(self, lenses, hypotheses) -> np.ndarray:
        """``VA(x; h)`` of each lens (rows) under each hypothesis (columns)."""
        residual_s = lenses[:, None, 0] - hypotheses[None, :, 0]
        residual_c = lenses[:, None, 1] - hypotheses[None, :, 1]
        return acuity_logmar(blur_strength_d(residual_s, residual_c), self.settings.va_best_logmar)

    def _trial_log_likelihood(self, trial: Trial, correct: bool) -> np.ndarray:
        va = self._acuity(np.array([[trial.sphere_d, trial.cylinder_d]]), self._hyp)[0]
        z = self.settings.slope * (trial.letter_logmar - va)
        log_kappa = math.log(self._kappa)
        if correct:  # γ + κ Φ(z)
            return np.logaddexp(math.log(self._guess), log_kappa + log_ndtr(z))
        if self.settings.lapse > 0:  # λ + κ Φ(−z)
            return np.logaddexp(math.log(self.settings.lapse), log_kappa + log_ndtr(-z))
        return log_kappa + log_ndtr(-z)

    # ---------------------------------------------------------------- scoring
    def _scoring_hypotheses(self) -> tuple[np.ndarray, np.ndarray]:
        """Hypotheses (possibly merged blocks) and their renormalized weights for scoring.

        Drops the least probable hypotheses holding ``PRUNE_MASS`` of the posterior; while more
        than ``MAX_SCORING_HYPOTHESES`` remain, merges blocks of 2×2, 4×4, ... grid cells into
        one hypothesis at the block's mass-weighted centre.
        """

        def kept(weights, points):
            order = np.argsort(-weights, kind="stable")
            cumulative = np.cumsum(weights[order])
            n = int(np.searchsorted(cumulative, (1.0 - PRUNE_MASS) * cumulative[-1])) + 1
            keep = order[:n]
            return points[keep], weights[keep] / weights[keep].sum()

        return self._cached("scoring", lambda: self._merge_until_small(kept))

    def _merge_until_small(self, kept):
        w = self.posterior()
        points, weights = kept(w, self._hyp)
        factor = 1
        n_s, n_c = len(self.sphere_grid_d), len(self.cylinder_grid_d)
        while len(weights) > MAX_SCORING_HYPOTHESES and factor < max(n_s, n_c):
            factor *= 2
            pad_s, pad_c = -n_s % factor, -n_c % factor
            grid_w = np.pad(w.reshape(n_s, n_c), ((0, pad_s), (0, pad_c)))
            grid_hs = np.pad(self._hyp[:, 0].reshape(n_s, n_c), ((0, pad_s), (0, pad_c)))
            grid_hc = np.pad(self._hyp[:, 1].reshape(n_s, n_c), ((0, pad_s), (0, pad_c)))
            shape = (grid_w.shape[0] // factor, factor, grid_w.shape[1] // factor, factor)
            mass = grid_w.reshape(shape).sum(axis=(1, 3))
            with np.errstate(invalid="ignore", divide="ignore"):
                centre_s = (grid_w * grid_hs).reshape(shape).sum(axis=(1, 3)) / mass
                centre_c = (grid_w * grid_hc).reshape(shape).sum(axis=(1, 3)) / mass
            ok = mass.ravel() > 0
            block_points = np.column_stack([centre_s.ravel(), centre_c.ravel()])[ok]
            points, weights = kept(mass.ravel()[ok], block_points)
        return points, weights

    def information_table(self, lenses_d) -> np.ndarray:
        """Expected information (bits) ``I(x, s_j)`` of each lens (rows) at each candidate letter
        size :attr:`letter_grid_logmar` (columns), from the binned posterior of ``VA``."""
        lenses = np.asarray(lenses_d, dtype=float).reshape(-1, 2)
        points, weights = self._scoring_hypotheses()
        va = self._acuity(lenses, points)  # (n_lens, n_hyp)
        position = (va - self._va_grid[0]) / VA_STEP_LOGMAR
        position = np.clip(position, 0.0, len(self._va_grid) - 1.000001)
        low = position.astype(np.int64)
        upper_share = position - low
        n_va = len(self._va_grid)
        rows = np.arange(len(lenses))[:, None] * n_va
        hist = np.bincount(
            (rows + low).ravel(), weights=(weights[None, :] * (1.0 - upper_share)).ravel(), minlength=len(lenses) * n_va
        )
        hist += np.bincount(
            (rows + low + 1).ravel(), weights=(weights[None, :] * upper_share).ravel(), minlength=len(lenses) * n_va
        )
        hist = hist.reshape(len(lenses), n_va)
        mean_p = np.clip(hist @ self._p_table, 0.0, 1.0)
        mean_h = hist @ self._h_table
        return np.maximum(binary_entropy_bits(mean_p) - mean_h, 0.0)

    def expected_information(self, sphere_d, cylinder_d, letter_logmar) -> float:
        """Exact mutual information (bits) between the answer to one trial and the hypothesis,
        ``H₂(E_w[P]) − E_w[H₂(P)]`` over the whole grid (no pruning, no binning)."""
        w = self.posterior()
        va = self._acuity(np.array([[sphere_d, cylinder_d]], dtype=float), self._hyp)[0]
        z = self.settings.slope * (float(letter_logmar) - va)
        p = self._guess + self._kappa * ndtr(z)
        q = self.settings.lapse + self._kappa * ndtr(-z)
        return float(binary_entropy_bits(w @ p, w @ q) - w @ binary_entropy_bits(p, q))

    def candidate_lenses(self) -> np.ndarray:
        """Candidate lenses of the next trial: the coarse grid, the most probable hypotheses and a
        local grid around the current estimate, inside the box and rounded to ``lens_step_d``."""

        def compute():
            w = self.posterior()
            top = np.argsort(-w, kind="stable")[:N_HYPOTHESIS_CANDIDATES]
            estimate = np.asarray(self.best())
            lenses = np.vstack([self._coarse_lenses, self._hyp[top], estimate + self._local_offsets])
            s = self.settings
            return rounded_lenses(lenses, s.lens_step_d, s.sphere_bounds_d, s.cylinder_bounds_d)

        return self._cached("candidates", compute)

    # ---------------------------------------------------------------- ask/tell
    # ---------------------------------------------------------------- answers
    def expected_loss_logmar(self, lenses_d) -> np.ndarray:
        """Posterior expected acuity loss ``E_w[VA(x; h)] − VA_best`` of each lens (logMAR)."""
        lenses = np.asarray(lenses_d, dtype=float).reshape(-1, 2)
        points, weights = self._scoring_hypotheses()
        return (self._acuity(lenses, points) - self.settings.va_best_logmar) @ weights

    def _lens_posterior(self):
        return self._scoring_hypotheses()

    def confidence(self) -> float:
        """Posterior probability that :meth:`best` is within ``CRITERION_LOGMAR`` of the
        best acuity: ``Σ_h w(h) 1[VA(x̂; h) − VA_best ≤ 0.025]`` over the whole grid."""

        def compute():
            loss = self._acuity(np.array([self.best()]), self._hyp)[0] - self.settings.va_best_logmar
            return float(min(1.0, max(0.0, self.posterior() @ (loss <= CRITERION_LOGMAR))))

        return self._cached("confidence", compute)

    def certainty(self):
        """:class:`lensopt.refraction.certainty.LensCertainty`: :meth:`confidence` and the 95 % intervals
        (D) of the best lens's sphere and cylinder — the 2.5 % and 97.5 % quantiles of the
        posterior marginals of the true correction on the grid."""
        w = self.posterior_grid()
        return LensCertainty(
            self.confidence(),
            marginal_interval(self.sphere_grid_d, w.sum(axis=1)),
            marginal_interval(self.cylinder_grid_d, w.sum(axis=0)),
        )

    def should_stop(self) -> bool:
        """Whether the session may stop by its :class:`lensopt.stopping.StopRule` (never without one);
        the confidence is computed only once ``min_trials`` answers are in."""
        return self.stop is not None and self.stop.should_stop(self.n_trials, self.confidence)
