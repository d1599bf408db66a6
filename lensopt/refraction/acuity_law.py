"""The acuity-law letter optimizer: grid Bayes over the correction *and* the patient's best acuity.

Issue 14's last gap. The GP letter optimizers (UCB-ALD, TS-ALD) learn the acuity surface over the
lens box without knowing its shape; on held-out patients they need about twice the ideal observer's
trials and still lose an edge patient now and then (docs/never-lost.md). The ideal observer knows
the shape *and* the patient. This optimizer knows the shape — the optics every eye obeys — and not
the patient; it is QUEST+ (Watson 2017, J. Vision 17(3):10) for the refraction task.

**Model.** A hypothesis is ``h = (S*, C*, VA₀, a)``: the true correction, the patient's best
acuity (logMAR) and psychometric slope (per logMAR). A letter of size ``s`` named through lens
``x = (S, C)`` is read right with

    P(c = 1 | s, x, h) = γ + (1 − γ − λ) Φ(a (s − VA(x; h))),
    VA(x; h) = VA₀ + log10(1 + b²),   b² = ½ (r_S² + (r_S + r_C)²),   r = x − (S*, C*)

(METHOD.md §1: Raasch's blur strength of the residual, Blendowske's acuity law), ``γ = 1/n_alternatives``,
``λ`` the model's lapse rate (0.02 by default, as the GP's). The prior is uniform over the lens box
(a :data:`GRID_STEP_D` grid), over :data:`VA_BEST_RANGE_LOGMAR` and over :data:`SLOPES_PER_LOGMAR`.
A wrong best acuity costs much (every threshold shifts), a wrong slope less (it widens or sharpens
each answer's likelihood) — but a steep slope assumed for a shallow patient loses sessions and a
shallow one doubles the trials at slope 8 (tuning patients), so both are learnt.

**Accommodation** (``accommodation_d``, off by default). An eye with ``A`` D of accommodation
focuses away a residual too minus: ``b² = r_M'² + r_J²`` with ``r_M = r_S + r_C/2``, ``r_J = r_C/2``
and ``r_M' = max(r_M, min(r_M + A, 0))`` (:func:`lensopt.refraction.blur_law.accommodated_acuity_loss_logmar`),
a plateau of acuity on the minus side whose most-plus end is the correction. With several
amplitudes in ``accommodation_d`` the hypothesis holds ``A`` too (``h = (S*, C*, VA₀, a, A)``, a
uniform prior; the posterior's last axis the ``(A, a)`` pairs), answers are weighed under each
``A``, and the reported lens and the confidence are of the correction — the relaxed eye's loss
``log10(1 + b²)``, ``A = 0`` — so that the session ends at the most-plus lens of best acuity.

**Trials.** The ``(x, s)`` of maximal mutual information between the answer and ``h``,
``H₂(E_w[P]) − E_w[H₂(P)]``, over candidate lenses (a coarse grid of the box, the most probable
corrections, a local grid around the estimate) × letter sizes. The expectation runs over
:data:`N_SCORING` hypotheses drawn from the posterior by systematic resampling (seeded by
``(seed, n_trials)``), pushed forward to a histogram of ``VA`` per lens, as in
:mod:`lensopt.bench.ideal_observer`.

**Reported lens.** The minimizer of the posterior expected acuity loss ``E_w[log10(1 + b²)]``
(independent of ``VA₀``), over the marginal posterior of the correction.

**Confidence.** The posterior mass of the corrections under which the reported lens is within
0.025 logMAR of the best one — what the stopping rule asks (:class:`lensopt.stopping.StopRule`).

What it cannot do: learn an acuity surface of another shape. It is as right as the law is for the
eye in front of it; the GP optimizers make no such assumption (docs/never-lost.md, "When the law is
wrong", measures both on patients whose blur–acuity gain differs from the law's).
"""

from __future__ import annotations

import functools
import math
import time

import numpy as np
from scipy.special import log_ndtr, ndtr

from lensopt.allocator import keep_large_blocks
from lensopt.binary.settings import FixedSettings
from lensopt.gp.uncertainty import binary_entropy_bits
from lensopt.refraction.acuity_law_settings import ACUITY_LAW_RULE, AcuityLawSettings
from lensopt.refraction.blur_law import accommodate_columns, acuity_loss_table, blur_acuity_loss_logmar, lens_grid
from lensopt.refraction.certainty import LensCertainty
from lensopt.refraction.grid_posterior import (
    GridPosterior,
    LensGridSearch,
    grid_axis,
    marginal_interval,
    most_informative_trial,
    rounded_lenses,
)
from lensopt.refraction.lens_arrays import lens_columns
from lensopt.refraction.lens_check import ReportedLensCheck
from lensopt.refraction.trial import Trial, check_trial_bounds
from lensopt.stopping import ACUITY_TOLERANCE_LOGMAR, StopRule
from lensopt.threads import single_threaded
from lensopt.trial_cache import TrialCache

#: Grid step (logMAR) of the patient's best acuity ``VA₀`` over the prior's range
#: (:data:`~lensopt.refraction.acuity_law_settings.VA_BEST_RANGE_LOGMAR`).
VA_BEST_STEP_LOGMAR = 0.05
#: Spacing (D) of the correction grid: a true correction between grid points is at most 0.05 D
#: from one in sphere and cylinder, ``b² ≤ 0.625 δ²``, an acuity loss ≤ 0.003 logMAR.
GRID_STEP_D = 0.1
#: Spacing (logMAR) of the candidate letter sizes and of the acuity histogram.
LETTER_STEP_LOGMAR = 0.02
VA_STEP_LOGMAR = 0.01
#: Spacing (logMAR) of the acuity grid on which an answer's log-likelihood is tabulated (then
#: interpolated to every hypothesis).
TELL_VA_STEP_LOGMAR = 0.001
#: Hypotheses drawn from the posterior to score candidate trials.
N_SCORING = 1000
#: Candidate lenses: a coarse grid of the box, the most probable corrections and a local grid.
COARSE_LENS_STEP_D = 1.0
LOCAL_OFFSETS_D = (-1.0, -0.5, -0.25, 0.0, 0.25, 0.5, 1.0)
N_HYPOTHESIS_CANDIDATES = 25
#: Posterior mass of the correction left out of the reported lens's search, and its starts.
PRUNE_MASS = 1e-5
N_LENS_STARTS = 16
#: Spawn key of the scoring draws' random stream.
SCORING_STREAM = 0xAC71

STATE_FORMAT = "lensopt.acuity-law-state/1"


@functools.lru_cache(maxsize=4)
def _coarse_loss_table(sphere_bounds_d, cylinder_bounds_d) -> np.ndarray:
    """The coarse candidate lenses' loss under every correction of the grid (~4 MB, read-only):
    every trial scores those lenses first, so it is computed once per box and process and shared
    by every optimizer of that box (a copied optimizer does not copy it)."""
    table = acuity_loss_table(
        lens_grid(sphere_bounds_d, cylinder_bounds_d, COARSE_LENS_STEP_D),
        lens_grid(sphere_bounds_d, cylinder_bounds_d, GRID_STEP_D),
    )
    table.setflags(write=False)
    return table


class AcuityLawOptimizer(LensGridSearch, ReportedLensCheck, FixedSettings):
    """The acuity-law letter optimizer (module docstring), with the ask/tell contract of
    :class:`lensopt.refraction.RefractionOptimizer`: ``ask() -> Trial``, ``tell(trial, correct)``,
    ``best() -> (sphere_d, cylinder_d)``, ``confidence()``, ``certainty()``, ``should_stop()``,
    ``to_state()``/``from_state()``. Its settings are fixed when it is made
    (:class:`lensopt.binary.settings.FixedSettings`)."""

    #: The answers a trial can get (a PsychoPy handler decides ahead for each).
    SPECULATIVE_ANSWERS = (True, False)
    n_lens_starts = N_LENS_STARTS
    #: The settings ``**settings`` passes on (:class:`AcuityLawSettings`).
    _option_setting_names = frozenset(AcuityLawSettings.__dataclass_fields__)

    def __init__(self, rule=ACUITY_LAW_RULE, seed=0, *, stop=None, **settings):
        self.settings = AcuityLawSettings(rule=rule, seed=seed, **settings)
        keep_large_blocks()  # its ~2 MB temporaries on warm pages: half the decision time (lensopt.allocator)
        self.stop = stop if stop is None or isinstance(stop, StopRule) else StopRule.from_dict(stop)
        s = self.settings
        self._guess = 1.0 / s.n_alternatives
        self._kappa = 1.0 - self._guess - s.lapse
        if self._kappa <= 0:
            raise ValueError(f"lapse {s.lapse} leaves no room above the guess rate 1/{s.n_alternatives}; lower it")
        self.sphere_grid_d = grid_axis(s.sphere_bounds_d, GRID_STEP_D)
        self.cylinder_grid_d = grid_axis(s.cylinder_bounds_d, GRID_STEP_D)
        self.va_best_grid_logmar = grid_axis(s.va_best_bounds_logmar, VA_BEST_STEP_LOGMAR)
        self._corrections = lens_grid(s.sphere_bounds_d, s.cylinder_bounds_d, GRID_STEP_D)
        self._hyp = self._corrections  # GridPosterior.hypotheses_d: the corrections (rows of the posterior)
        # the posterior's last axis: (amplitude of accommodation, slope) pairs, accommodation-major —
        # the slopes themselves when the prior holds one amplitude (0, the law alone: the default)
        self._accommodation_d = np.array(s.amplitudes_d)
        self._n_base_slopes = len(s.slopes_per_logmar)
        self._slopes = np.tile(np.array(s.slopes_per_logmar), len(self._accommodation_d))
        self._shape_accommodation_d = np.repeat(self._accommodation_d, self._n_base_slopes)
        # log-posterior over (correction, VA₀, shape): axis 0 the corrections, 1 VA₀, 2 the slopes (of
        # each amplitude of accommodation)
        # float32: ~450,000 hypotheses updated every trial; the log-posterior is re-centred on its
        # maximum after each answer, so the probable hypotheses keep ~7 significant digits
        self._log_post = np.zeros(
            (len(self._corrections), len(self.va_best_grid_logmar), len(self._slopes)), np.float32
        )
        self.letter_grid_logmar = grid_axis(s.letter_bounds_logmar, LETTER_STEP_LOGMAR)
        span_s = s.sphere_bounds_d[1] - s.sphere_bounds_d[0]
        span_c = s.cylinder_bounds_d[1] - s.cylinder_bounds_d[0]
        va_low = s.va_best_bounds_logmar[0]
        va_high = s.va_best_bounds_logmar[1] + float(blur_acuity_loss_logmar(span_s, span_c))
        self._va_grid = va_low + VA_STEP_LOGMAR * np.arange(math.ceil((va_high - va_low) / VA_STEP_LOGMAR) + 2)
        self._va_best_stride = round(VA_BEST_STEP_LOGMAR / TELL_VA_STEP_LOGMAR)
        self._tell_va_grid = va_low + TELL_VA_STEP_LOGMAR * np.arange(
            math.ceil((va_high - va_low) / TELL_VA_STEP_LOGMAR) + 2
        )
        # P(s_j | VA_k, slope_m) and its entropy, stacked slope-major: rows m * n_va + k
        z = self._slopes[:, None, None] * (self.letter_grid_logmar[None, None, :] - self._va_grid[None, :, None])
        z = z.reshape(-1, len(self.letter_grid_logmar))
        p_table = self._guess + self._kappa * ndtr(z)
        self._p_table = p_table.astype(np.float32)  # for the scoring matrix products (float32: 3× faster)
        self._h_table = binary_entropy_bits(p_table, s.lapse + self._kappa * ndtr(-z)).astype(np.float32)
        self._coarse_lenses = lens_grid(s.sphere_bounds_d, s.cylinder_bounds_d, COARSE_LENS_STEP_D)
        os_, oc = np.meshgrid(LOCAL_OFFSETS_D, LOCAL_OFFSETS_D, indexing="ij")
        self._local_offsets = np.column_stack([os_.ravel(), oc.ravel()])
        self._history: list[tuple[Trial, bool]] = []
        self._cache = TrialCache()
        self.last_decision_ms = math.nan

    # ---------------------------------------------------------------- state
    @property
    def rule(self) -> str:
        return self.settings.rule

    @property
    def model(self):
        """No GP: the dashboard's model panels have nothing to draw (``None``, like a session
        before its first fit)."""
        return None

    def settings_dict(self) -> dict:
        """The settings (JSON types) and the stopping rule: ``AcuityLawOptimizer(**settings_dict())``
        is this optimizer without its history (:meth:`from_settings`)."""
        return {**self.settings.to_dict(), "stop": None if self.stop is None else self.stop.to_dict()}

    def to_state(self) -> dict:
        return {
            "format": STATE_FORMAT,
            "settings": self.settings_dict(),
            "history": [[t.letter_logmar, t.sphere_d, t.cylinder_d, int(c)] for t, c in self._history],
        }

    @classmethod
    @single_threaded
    def from_state(cls, state: dict) -> AcuityLawOptimizer:
        return cls.from_letter_state(state, STATE_FORMAT, "acuity-law")

    # ---------------------------------------------------------------- posterior
    def _posterior(self) -> np.ndarray:
        """:meth:`posterior`: ``(n_corrections, n_va_best, n_slopes)``, float32, normalized by a float64 sum.
        The log-posterior's maximum is 0 (zeros at first, re-centred after every answer by
        :meth:`GridPosterior._add_log_likelihood`), so it is not subtracted again."""
        w = np.exp(self._log_post)
        w /= np.float32(w.sum(dtype=np.float64))
        return w

    def _correction_marginal(self) -> np.ndarray:
        return self._cached("marginal", lambda: self.posterior().sum(axis=(1, 2)))

    def correction_posterior(self) -> np.ndarray:
        """Marginal posterior of the correction, ``(len(sphere_grid_d), len(cylinder_grid_d))``."""
        return self._correction_marginal().reshape(len(self.sphere_grid_d), len(self.cylinder_grid_d))

    def _loss(self, lenses, corrections, accommodation_d: float = 0.0) -> np.ndarray:
        """Acuity loss ``log10(1 + b²)`` of each lens (rows) under each correction (columns), by an eye
        with ``accommodation_d`` D of accommodation (0, the law: the loss the reported lens and the
        confidence weigh — the relaxed eye's, whose correction is the lens to prescribe)."""
        return acuity_loss_table(lenses, corrections, accommodation_d)

    def _loss_of_draws(self, lenses, corrections, shape) -> np.ndarray:
        """:meth:`_loss` of each lens (rows) under each draw (columns): its correction and the
        amplitude of accommodation of its ``shape`` index (the posterior's last axis)."""
        return accommodate_columns(
            self._loss(lenses, corrections), lenses, corrections, self._shape_accommodation_d[shape]
        )

    def answer_log_likelihood(self, letter_logmar: float, correct: bool, va_logmar) -> np.ndarray:
        """``log P(c | s, VA, a)`` of an answer to a letter of size ``s`` by an eye whose acuity through
        the lens is ``va_logmar`` (the model's only dependence on the correction and ``VA₀``), for
        each slope ``a`` of the posterior's last axis (leading axis; the slopes repeated for each
        amplitude of accommodation of the prior)."""
        va = np.asarray(va_logmar, dtype=float)
        z = self._slopes.reshape((-1,) + (1,) * va.ndim) * (float(letter_logmar) - va)
        log_kappa = math.log(self._kappa)
        if correct:  # γ + κ Φ(z)
            return np.logaddexp(math.log(self._guess), log_kappa + log_ndtr(z))
        return np.logaddexp(math.log(self.settings.lapse), log_kappa + log_ndtr(-z))  # λ + κ Φ(−z)

    def _trial_log_likelihood(self, trial: Trial, correct: bool) -> np.ndarray:
        """``log P(c | s, x, h)`` over the grid ``(n_corrections, n_va_best, n_slopes)``, interpolated
        linearly in ``VA`` between the points of a grid :data:`TELL_VA_STEP_LOGMAR` apart (error
        ``≤ a² δ²/8``, below 1e-4 per answer at ``a = 8``; tested against the exact values).

        ``VA = loss(x; correction) + VA₀`` and the ``VA₀`` grid steps are whole multiples of the
        table's step, so one interpolation position per correction serves every ``VA₀``: the table is
        read through a strided view whose row ``m`` holds its values at ``m, m + k, m + 2k, ...``."""
        lens = np.array([[trial.sphere_d, trial.cylinder_d]])
        tables = self.answer_log_likelihood(trial.letter_logmar, correct, self._tell_va_grid).astype(np.float32)
        n = self._n_base_slopes
        blocks = [
            self._interpolated(self._loss(lens, self._corrections, amplitude)[0], tables[i * n : (i + 1) * n])
            for i, amplitude in enumerate(self._accommodation_d)
        ]
        return blocks[0] if len(blocks) == 1 else np.concatenate(blocks, axis=2)

    def _interpolated(self, loss, tables) -> np.ndarray:
        """:meth:`_trial_log_likelihood` of one amplitude of accommodation: ``tables`` ``(n_slopes,
        n_tell_va)`` read at ``loss + VA₀`` of every correction, ``(n_corrections, n_va_best, n_slopes)``."""
        n_va_best, stride = len(self.va_best_grid_logmar), self._va_best_stride
        position = (loss + self.va_best_grid_logmar[0] - self._tell_va_grid[0]) / TELL_VA_STEP_LOGMAR
        last = tables.shape[1] - 1 - stride * (n_va_best - 1)
        position = np.clip(position, 0.0, last - 1e-6)
        low = position.astype(np.int64)
        upper = (position - low).astype(np.float32)[:, None, None]
        rows = np.lib.stride_tricks.sliding_window_view(tables.T, (stride * (n_va_best - 1) + 1,), axis=0)
        # (n - span, n_va_best, n_slopes): row m holds table[m + stride j] (small; made contiguous in
        # the posterior's axis order, so the update below runs over contiguous memory)
        rows = np.ascontiguousarray(rows[:, :, ::stride].transpose(0, 2, 1))
        return rows[low] * (1.0 - upper) + rows[low + 1] * upper  # (n_corrections, n_va_best, n_slopes)

    def _scoring_hypotheses(self):
        """:data:`N_SCORING` draws ``(corrections (n, 2), va_best (n,), slope index (n,), weights (n,))``
        from the posterior, by systematic resampling (distinct draws merged, weighted by their count)."""
        rows, va_best, slope, weights = self._scoring_draws()
        return self._corrections[rows], va_best, slope, weights

    def _scoring_draws(self):
        """:meth:`_scoring_hypotheses` with each draw's correction as its row of the grid (sorted)."""

        def compute():
            w = self.posterior().reshape(len(self._corrections), -1)
            rng = np.random.default_rng([self.settings.seed, self.n_trials, SCORING_STREAM])
            u = (rng.random() + np.arange(N_SCORING)) / N_SCORING
            # the cumulative sum of the flattened posterior, in two stages (the 450,000-long one costs
            # more than the rest of the draw): which correction (row) each draw falls in, then where
            # within the row's (VA₀, slope) cells
            row_cumulative = np.cumsum(w.sum(axis=1, dtype=np.float64))
            target = u * row_cumulative[-1]
            row = np.minimum(np.searchsorted(row_cumulative, target), len(row_cumulative) - 1)
            drawn, inverse = np.unique(row, return_inverse=True)
            within = np.cumsum(w[drawn], axis=1, dtype=np.float64)[inverse]
            offset = target - (row_cumulative[row] - within[:, -1])
            cell = np.minimum((within < offset[:, None]).sum(axis=1), w.shape[1] - 1)
            index, counts = np.unique(row * w.shape[1] + cell, return_counts=True)
            rows, va_best, slope = np.unravel_index(index, self._log_post.shape)
            return rows, self.va_best_grid_logmar[va_best], slope, counts / counts.sum()

        return self._cached("scoring", compute)

    def _correction_mass(self):
        """The corrections holding all but :data:`PRUNE_MASS` of the marginal posterior, and their
        renormalized weights."""

        def compute():
            marginal = self._correction_marginal()
            order = np.argsort(-marginal, kind="stable")
            cumulative = np.cumsum(marginal[order])
            keep = order[: int(np.searchsorted(cumulative, (1.0 - PRUNE_MASS) * cumulative[-1])) + 1]
            return self._corrections[keep], marginal[keep] / marginal[keep].sum()

        return self._cached("mass", compute)

    # ---------------------------------------------------------------- trials
    @single_threaded
    def information_table(self, lenses_d) -> np.ndarray:
        """Expected information (bits) of each lens (rows) at each letter size of
        :attr:`letter_grid_logmar` (columns), from the scoring draws binned by ``VA``."""
        lenses = np.asarray(lenses_d, dtype=float).reshape(-1, 2)
        rows, va_best, slope, weights = self._scoring_draws()
        # draws share their correction (another VA₀ or slope): each lens's loss once per correction
        drawn, inverse = np.unique(rows, return_inverse=True)
        n_coarse = len(self._coarse_lenses)
        if len(lenses) >= n_coarse and np.array_equal(lenses[:n_coarse], self._coarse_lenses):  # the candidates
            coarse = _coarse_loss_table(self.settings.sphere_bounds_d, self.settings.cylinder_bounds_d)[:, drawn]
            loss = np.vstack([coarse, self._loss(lenses[n_coarse:], self._corrections[drawn])])
        else:
            loss = self._loss(lenses, self._corrections[drawn])
        loss = accommodate_columns(
            loss[:, inverse], lenses, self._corrections[rows], self._shape_accommodation_d[slope]
        )
        va = loss + va_best[None, :]
        position = np.clip((va - self._va_grid[0]) / VA_STEP_LOGMAR, 0.0, len(self._va_grid) - 1.000001)
        low = position.astype(np.int64)
        upper = position - low  # the share of the upper bin (exact: position >= 0)
        n_va = self._p_table.shape[0]
        # the histogram's flat index: the lens's row, the draw's slope table, the acuity bin
        index = (np.arange(len(lenses))[:, None] * n_va + slope[None, :] * len(self._va_grid)) + low
        size = len(lenses) * n_va
        hist = np.bincount(index.ravel(), weights=(weights * (1.0 - upper)).ravel(), minlength=size)
        hist += np.bincount((index + 1).ravel(), weights=(weights * upper).ravel(), minlength=size)
        hist = hist.reshape(len(lenses), n_va).astype(np.float32)
        mean_p = np.clip((hist @ self._p_table).astype(float), 0.0, 1.0)
        return np.maximum(binary_entropy_bits(mean_p) - hist @ self._h_table, 0.0)

    def expected_information(self, sphere_d, cylinder_d, letter_logmar) -> float:
        """Exact mutual information (bits) between one trial's answer and ``h``, over the whole grid."""
        w = self.posterior()
        lens = np.array([[sphere_d, cylinder_d]], dtype=float)
        loss = np.stack([self._loss(lens, self._corrections, a)[0] for a in self._shape_accommodation_d], axis=1)
        va = loss[:, None, :] + self.va_best_grid_logmar[None, :, None]
        z = self._slopes[None, None, :] * (float(letter_logmar) - va)
        p = self._guess + self._kappa * ndtr(z)
        q = self.settings.lapse + self._kappa * ndtr(-z)
        return float(binary_entropy_bits((w * p).sum(), (w * q).sum()) - (w * binary_entropy_bits(p, q)).sum())

    def candidate_lenses(self) -> np.ndarray:
        """The coarse grid, the most probable corrections and a local grid around :meth:`best`,
        inside the box and rounded to ``lens_step_d``."""

        def compute():
            corrections, weights = self._correction_mass()
            top = corrections[np.argsort(-weights, kind="stable")[:N_HYPOTHESIS_CANDIDATES]]
            lenses = np.vstack([self._coarse_lenses, top, np.asarray(self.best()) + self._local_offsets])
            s = self.settings
            return rounded_lenses(lenses, s.lens_step_d, s.sphere_bounds_d, s.cylinder_bounds_d)

        return self._cached("candidates", compute)

    @single_threaded
    def ask(self) -> Trial:
        """The trial (lens, letter size) of maximal expected information about ``h``; while the
        stopping rule's check is due (:mod:`lensopt.refraction.lens_check`), the letter size of
        maximal expected information through the reported lens (one BLAS thread)."""
        start = time.perf_counter()
        if not self.check_due():
            return LensGridSearch.ask(self)
        lens = np.array([self.best()])
        s = self.settings
        trial = most_informative_trial(
            self.information_table(lens), lens, self.letter_grid_logmar, s.seed, self.n_trials
        )
        self.last_decision_ms = 1e3 * (time.perf_counter() - start)
        return trial

    def _reported_lens(self) -> tuple[float, float, None]:
        sphere_d, cylinder_d = self.best()
        return sphere_d, cylinder_d, None

    def _confidence_test(self) -> dict:
        return {"confidence": self.confidence}

    def _check_answer(self, trial, correct) -> None:
        """As every letter optimizer: a trial outside the lens box or the letter bounds is refused
        (:func:`lensopt.refraction.trial.check_trial_bounds`); the likelihood's acuity table covers
        the blur of the lenses in the box only."""
        super()._check_answer(trial, correct)
        s = self.settings
        check_trial_bounds(
            trial,
            letter_bounds_logmar=s.letter_bounds_logmar,
            sphere_bounds_d=s.sphere_bounds_d,
            cylinder_bounds_d=s.cylinder_bounds_d,
        )

    #: Add the answer: ``log w(h) += log P(c | s, x, h)`` over the whole grid (one BLAS thread).
    tell = single_threaded(GridPosterior.tell)

    # ---------------------------------------------------------------- answers
    @single_threaded
    def expected_loss_logmar(self, lenses_d) -> np.ndarray:
        """Posterior expected acuity loss ``E_w[log10(1 + b²)]`` of each lens (logMAR)."""
        corrections, weights = self._correction_mass()
        return self._loss(np.asarray(lenses_d, dtype=float).reshape(-1, 2), corrections) @ weights

    #: The lens ``(sphere_d, cylinder_d)`` minimizing the posterior expected acuity loss (one BLAS thread).
    best = single_threaded(LensGridSearch.best)

    def _lens_posterior(self):
        return self._correction_mass()

    @single_threaded
    def predicted_acuity_logmar(self, sphere_d, cylinder_d):
        """The acuity threshold (logMAR, where ``Φ = ½``) through a lens, ``VA₀ + log10(1 + b²)``, as
        ``(mean, sd)`` over the posterior (its scoring draws: correction and ``VA₀`` jointly)."""
        lenses, shape = lens_columns(sphere_d, cylinder_d)
        corrections, va_best, shape_index, weights = self._scoring_hypotheses()
        va = self._loss_of_draws(lenses, corrections, shape_index) + va_best[None, :]
        mean = va @ weights
        sd = np.sqrt(np.maximum(np.square(va - mean[:, None]) @ weights, 0.0))
        return mean.reshape(shape)[()], sd.reshape(shape)[()]  # [()]: numbers for a lens given as numbers

    @single_threaded
    def psychometric_band(self, letters_logmar, sphere_d, cylinder_d, mass=0.95):
        """``P(correct)`` at each letter size through one lens: the posterior mean, and the bounds of
        the central ``mass`` of its posterior (weighted quantiles over the scoring draws)."""
        letters = np.asarray(letters_logmar, float).ravel()
        corrections, va_best, slope, weights = self._scoring_hypotheses()
        va = self._loss_of_draws(np.array([[sphere_d, cylinder_d]], dtype=float), corrections, slope)[0] + va_best
        p = self._guess + self._kappa * ndtr(self._slopes[slope][None, :] * (letters[:, None] - va[None, :]))
        order = np.argsort(p, axis=1)
        cumulative = np.cumsum(weights[order], axis=1)
        rows = np.arange(len(letters))
        low = p[rows, order[rows, np.argmax(cumulative >= (1.0 - mass) / 2.0, axis=1)]]
        high = p[rows, order[rows, np.argmax(cumulative >= (1.0 + mass) / 2.0 - 1e-12, axis=1)]]
        return p @ weights, low, high

    @single_threaded
    def optimum_draws_d(self, n_samples: int, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
        """``(n_samples, 2)`` draws of the best lens (the true correction) from its posterior, and the
        variances (D²) of the correction grid they lie on, ``GRID_STEP_D² / 12``."""
        corrections, weights = self._correction_mass()
        samples = corrections[rng.choice(len(weights), size=n_samples, p=weights)]
        return samples, np.full(2, GRID_STEP_D**2 / 12.0)

    @single_threaded
    def confidence(self) -> float:
        """Posterior probability that :meth:`best` is within 0.025 logMAR of the best lens."""

        def compute():
            loss = self._loss(np.array([self.best()]), self._corrections)[0]
            return float(min(1.0, self._correction_marginal() @ (loss <= ACUITY_TOLERANCE_LOGMAR)))

        return self._cached("confidence", compute)

    def confidence_reaches(self, threshold: float) -> bool:
        return self.confidence() >= threshold

    @single_threaded
    def certainty(self) -> LensCertainty:
        """:meth:`confidence` and the 95 % intervals (D) of the true sphere, cylinder, ``S + C`` and
        ``M = S + C/2`` (quantiles of the correction's posterior marginals)."""

        w = self.correction_posterior()

        def interval_of(cylinder_weight: float) -> tuple[float, float]:  # of S + weight · C over the grid
            values = np.add.outer(self.sphere_grid_d, cylinder_weight * self.cylinder_grid_d).ravel()
            order = np.argsort(values, kind="stable")
            return marginal_interval(values[order], w.ravel()[order])

        return LensCertainty(
            self.confidence(),
            marginal_interval(self.sphere_grid_d, w.sum(axis=1)),
            marginal_interval(self.cylinder_grid_d, w.sum(axis=0)),
            meridian_interval_d=interval_of(1.0),
            equivalent_interval_d=interval_of(0.5),
        )
