"""The ideal observer of the full prescription: grid Bayes over the true correction in 3-D (issue 16).

The full-prescription counterpart of :mod:`lensopt.bench.ideal_observer` (same design, same
pieces): a baseline for the prescription optimizers that KNOWS the patient model — slope ``a``,
guess rate ``γ = 1/n_alternatives``, lapse ``λ``, best acuity ``VA_best``, accommodation amplitude
``A`` — and does not know the true correction, the power vector ``h = (M*, J0*, J45*)``. Its
belief is a posterior over a grid of hypotheses ``h`` covering the :class:`SearchBox` (uniform
prior). An answer ``c`` to a letter of size ``s`` through the lens of power vector ``x`` has, under
hypothesis ``h``, the likelihood of the simulated patient

    P(c = 1 | s, x, h) = γ + (1 − γ − λ) Φ(a (s − VA(x; h))),
    VA(x; h) = VA_best + log10(1 + b²),   b = accommodated_blur_d(x − h, A)

(:mod:`lensopt.observer.optics`: a lens up to ``A`` D too minus in ``M`` is accommodated away).
The posterior after answers ``c_1..c_t`` is ``w(h) ∝ Π_i P(c_i | s_i, x_i, h)``, kept as
log-probabilities on the whole grid.

**Choice of trial.** The next ``(x, s)`` maximizes the mutual information between the answer and
the hypothesis (bits), ``I(x, s) = H₂(E_w[P]) − E_w[H₂(P)]``, over candidate lenses — a coarse
grid of the box (centred on the box's centre), the most probable hypotheses and a local grid
around the current estimate — each converted to a minus-cylinder :class:`Lens`, rounded with
``Lens.rounded(lens_step_d, axis_step_deg)`` and scored at the rounded lens's power vector, ×
letter sizes on a grid over the letter range. As in the 2-D observer, ``P`` depends on ``h`` only
through ``VA(x; h)``: the posterior is pushed forward to a histogram of ``VA`` per candidate lens
and both expectations are one matrix product each with precomputed tables. For scoring only, the
least probable hypotheses (``PRUNE_MASS``) are dropped and, while the posterior is broad, blocks of
2×2×2, 4×4×4, ... grid cells are merged (mass-weighted centres) until at most
``MAX_SCORING_HYPOTHESES`` remain; the posterior update always uses the full grid.

**Reported estimate.** :meth:`PrescriptionIdealObserver.best` is the posterior mean of ``h``: the
Bayes estimate for the squared power-vector error ``|x − h|²``, which is what the benchmark
scores (``blur_error_d``, the plain length, without accommodation). With accommodation
(``A > 0``) the likelihood is flat in ``M*`` over ``[M_x, M_x + A]`` for a lens that looks sharp,
so the posterior over ``M*`` is bounded sharply on the plus side (lenses too plus blur at once)
and softly, through the ``A``-wide plateau, on the minus side: lopsided, not symmetric. Its mean is
still the Bayes estimate for the squared error (the mode or the plus edge would not be); it is not
the most-plus lens the clinic would prescribe. :meth:`PrescriptionIdealObserver.prescription`
rounds it to the phoropter (0.25 D, 1°).

**Grid spacing.** A true correction between grid points is at most ``δ/2`` from one in each of
the three coordinates, so the best hypothesis is off by ``b ≤ (√3/2) δ``: ``0.087`` D for the
default ``δ = 0.1`` D, ``log10(1 + b²) ≤ 0.0033`` logMAR, well below the 0.025 logMAR (0.25 D)
criterion. The posterior mean interpolates between grid points, so the reported estimate is not
limited to the grid. ``δ = 0.1`` D keeps the full box (``M`` ±4 D, ``J0``/``J45`` ±1.5 D) at
``81 × 31 × 31 = 77 841`` hypotheses (the default box around a start: ``41 × 21 × 21 = 18 081``),
whose update costs a few milliseconds a trial; ``0.05`` D would be eight times that (and made a
60-trial session about six times slower). With the paper's slope ``a = 5`` the posterior after 100
trials is still over 0.1 D wide (sd) per coordinate, several grid cells, so
:meth:`PrescriptionIdealObserver.confidence` is a fair sum; with steep slopes (``a ≥ 10``) it
narrows to a cell or two after 60 trials and the confidence turns optimistic (0.99 with errors up to
0.2 D): pass a finer ``grid_step_d`` there if the confidence matters.

**Cost.** One ``ask`` + ``tell`` over a 100-trial session (``a = 5``) took a median of 58 ms (p95
78 ms) in the full box on an otherwise idle 2-core machine; with the machine busy (load 2.5–3.6),
105–121 ms (p95 127–149 ms) in the full box and 47–72 ms (p95 84–108 ms) in the box around a start.
The scoring of the candidates (a few hundred rounded lenses × 301 letter sizes) dominates; the
update is a few milliseconds.

**Precision.** With the paper's slope ``a = 5`` and 26 letters the 60-trial posterior is still
about 0.18 D wide (sd) in each coordinate, so the error of the mean is typically 0.2–0.4 D after 60
trials and 0.15–0.3 D after 100 (the posterior is calibrated: the truth's highest-density rank is
about uniform); with ``a = 10`` it is about 0.1–0.2 D after 60 trials.

**Confidence.** ``P_w(|x̂ − h| ≤ 0.25 D)``: the posterior mass of the hypotheses within 0.25 D of
blur (plain power-vector length) of the reported estimate ``x̂``.
"""

from __future__ import annotations

import math
import numbers
import time
from dataclasses import dataclass

import numpy as np
from scipy.special import log_ndtr, ndtr

from lensopt.bench.ideal_observer import (
    LETTER_STEP_LOGMAR,
    PRUNE_MASS,
    VA_STEP_LOGMAR,
    _check_positive,
)
from lensopt.gp.uncertainty import binary_entropy_bits
from lensopt.observer.optics import accommodated_blur_d, acuity_logmar
from lensopt.observer.patient import check_answer_rates
from lensopt.refraction.grid_posterior import GridPosterior, check_bounds, grid_axis
from lensopt.refraction.lens import (
    PHOROPTER_STEP_D,
    Lens,
    PowerVector,
    lens_arrays_from_power_vectors,
    power_vector_arrays,
)
from lensopt.refraction.prescription import Prescription, SearchBox, lens_intervals
from lensopt.refraction.trial import Trial
from lensopt.stopping import StopRule
from lensopt.trial_cache import TrialCache

#: The default search box: the full box, centred on plano (immutable, so shared).
DEFAULT_BOX = SearchBox()

#: Default spacing (D) of the hypothesis grid in M, J0 and J45; see the module docstring.
GRID_STEP_D = 0.1

#: The hypothesis grid may hold at most this many points (a smaller ``grid_step_d`` is refused).
MAX_GRID_POINTS = 1_000_000

#: At most this many (possibly merged) hypotheses are used to score candidates.
MAX_SCORING_HYPOTHESES = 2000

#: Blur criterion (D) of :meth:`PrescriptionIdealObserver.confidence`: about 0.025 logMAR.
CRITERION_BLUR_D = 0.25

#: Spacing (D) of the coarse candidate grid in M and in J0/J45 (centred on the box's centre).
COARSE_M_STEP_D = 1.0
COARSE_J_STEP_D = 0.75

#: Offsets (D) of the local candidate grid around the current estimate, in M and in J0/J45.
LOCAL_M_OFFSETS_D = (-1.0, -0.5, -0.25, 0.0, 0.25, 0.5, 1.0)
LOCAL_J_OFFSETS_D = (-0.5, -0.25, 0.0, 0.25, 0.5)

#: Most probable hypotheses added as candidate lenses.
N_HYPOTHESIS_CANDIDATES = 25

#: Posterior draws behind the intervals of :meth:`PrescriptionIdealObserver.prescription`.
N_INTERVAL_DRAWS = 2000


@dataclass(frozen=True)
class PrescriptionIdealObserverSettings:
    """What the ideal observer knows and how it searches (``settings`` of the duck-typed API)."""

    rule: str
    seed: int
    slope: float
    n_alternatives: int
    lapse: float
    va_best_logmar: float
    accommodation_d: float
    box: SearchBox
    lens_step_d: float
    axis_step_deg: float
    letter_bounds_logmar: tuple[float, float]
    grid_step_d: float
    letter_step_logmar: float = LETTER_STEP_LOGMAR


def _check_number(name, value, low=-math.inf, low_inclusive=True):
    if isinstance(value, bool) or not isinstance(value, numbers.Real) or not math.isfinite(value):
        raise ValueError(f"{name} must be a finite number, got {value!r}")
    if float(value) < low or (float(value) == low and not low_inclusive):
        raise ValueError(f"{name} must be {'>=' if low_inclusive else '>'} {low:g}, got {value!r}")
    return float(value)


def _centred_axis(centre, bounds, step):
    """Points ``centre + k·step`` inside ``bounds`` (``centre`` itself always among them)."""
    low, high = bounds
    k_low = math.ceil((low - centre) / step - 1e-9)
    k_high = math.floor((high - centre) / step + 1e-9)
    return centre + step * np.arange(k_low, k_high + 1)


def _product(*axes) -> np.ndarray:
    grids = np.meshgrid(*axes, indexing="ij")
    return np.column_stack([g.ravel() for g in grids])


class PrescriptionIdealObserver(GridPosterior):
    """Grid-Bayes ideal observer of the full prescription, with the duck-typed ask/tell API.

    ``ask() -> Trial`` (the rounded minus-cylinder lens and the letter size), ``tell(trial,
    correct)``, ``best() -> PowerVector`` (posterior mean), ``prescription() -> Prescription``,
    ``confidence()``, ``should_stop()`` (by ``stop``, a :class:`lensopt.stopping.StopRule` or its
    dict; never without one), ``n_trials``, ``history``, ``settings`` (``rule == "ideal"``),
    ``last_decision_ms`` (duration of the last ``ask``). Randomness — ties between candidate trials,
    the posterior draws of the intervals — comes from ``np.random.default_rng([seed, n_trials, k])``.
    """

    rule = "ideal"

    def __init__(
        self,
        *,
        slope,
        n_alternatives=26,
        lapse=0.0,
        va_best_logmar=0.0,
        accommodation_d=0.0,
        box=DEFAULT_BOX,
        seed=0,
        lens_step_d=PHOROPTER_STEP_D,
        axis_step_deg=1.0,
        letter_bounds_logmar=(-1.0, 2.0),
        grid_step_d=GRID_STEP_D,
        stop=None,
    ):
        slope = _check_positive("slope", slope)
        n_alternatives, lapse = check_answer_rates("", n_alternatives, lapse)
        va_best_logmar = _check_number("va_best_logmar", va_best_logmar)
        accommodation_d = _check_number("accommodation_d", accommodation_d, low=0.0)
        if isinstance(box, dict):
            box = SearchBox.from_dict(box)
        elif not isinstance(box, SearchBox):
            raise ValueError(f"box must be a lensopt.refraction.prescription.SearchBox (or its dict), got {box!r}")
        if isinstance(seed, bool) or not isinstance(seed, numbers.Integral) or seed < 0:
            raise ValueError(f"seed must be an integer >= 0, got {seed!r}")
        lens_step_d = _check_positive("lens_step_d", lens_step_d)
        axis_step_deg = _check_positive("axis_step_deg", axis_step_deg)
        if abs(180.0 / axis_step_deg - round(180.0 / axis_step_deg)) > 1e-9:
            raise ValueError(f"axis_step_deg must divide 180 degrees (e.g. 1 or 5), got {axis_step_deg!r}")
        letter_bounds_logmar = check_bounds("letter_bounds_logmar", letter_bounds_logmar)
        grid_step_d = _check_positive("grid_step_d", grid_step_d)
        bounds = box.bounds_d
        n_points = math.prod(math.floor((hi - lo) / grid_step_d + 1e-9) + 1 for lo, hi in bounds)
        if n_points > MAX_GRID_POINTS:
            raise ValueError(
                f"grid_step_d={grid_step_d!r} gives {n_points} hypotheses in the box, more than {MAX_GRID_POINTS}"
            )
        if stop is not None and not isinstance(stop, StopRule):
            stop = StopRule.from_dict(stop)
        self.settings = PrescriptionIdealObserverSettings(
            rule=self.rule,
            seed=int(seed),
            slope=slope,
            n_alternatives=n_alternatives,
            lapse=float(lapse),
            va_best_logmar=va_best_logmar,
            accommodation_d=accommodation_d,
            box=box,
            lens_step_d=lens_step_d,
            axis_step_deg=axis_step_deg,
            letter_bounds_logmar=letter_bounds_logmar,
            grid_step_d=grid_step_d,
        )
        self.stop = stop
        s = self.settings
        self._guess = 1.0 / n_alternatives
        self._kappa = 1.0 - self._guess - s.lapse
        # Hypothesis grid (M*, J0*, J45*), flattened in C order.
        self.grid_axes_d = tuple(grid_axis(b, grid_step_d) for b in bounds)
        self._shape = tuple(len(a) for a in self.grid_axes_d)
        self._hyp = _product(*self.grid_axes_d)
        self._log_post = np.zeros(len(self._hyp))
        # Letter sizes and the tables P(s_j, v_k), H₂(P(s_j, v_k)) on a fixed VA grid covering any
        # candidate lens (at most ~1.5 D outside the box) under any hypothesis in the box.
        self.letter_grid_logmar = grid_axis(s.letter_bounds_logmar, s.letter_step_logmar)
        diagonal = math.sqrt(sum((hi - lo) ** 2 for lo, hi in bounds)) + 3.0
        va_max = float(acuity_logmar(diagonal, s.va_best_logmar))
        self._va_grid = s.va_best_logmar + VA_STEP_LOGMAR * np.arange(
            math.ceil((va_max - s.va_best_logmar) / VA_STEP_LOGMAR) + 2
        )
        z = slope * (self.letter_grid_logmar[None, :] - self._va_grid[:, None])
        self._p_table = self._guess + self._kappa * ndtr(z)
        self._h_table = binary_entropy_bits(self._p_table, s.lapse + self._kappa * ndtr(-z))
        centre = box.centre.to_array()
        steps = (COARSE_M_STEP_D, COARSE_J_STEP_D, COARSE_J_STEP_D)
        self._coarse = _product(*(_centred_axis(c, b, st) for c, b, st in zip(centre, bounds, steps)))
        self._local_offsets = _product(LOCAL_M_OFFSETS_D, LOCAL_J_OFFSETS_D, LOCAL_J_OFFSETS_D)
        self._history: list[tuple[Trial, bool]] = []
        self._cache = TrialCache()
        self.last_decision_ms = float("nan")

    # ---------------------------------------------------------------- properties
    @property
    def box(self) -> SearchBox:
        """The search box (the start it is centred on: ``box.start``)."""
        return self.settings.box

    @property
    def hypotheses_d(self) -> np.ndarray:
        """The grid of hypotheses ``(n, 3)``: ``[M, J0, J45]`` (D) per row."""
        return self._hyp.copy()

    # ---------------------------------------------------------------- model
    def _acuity(self, lenses, hypotheses) -> np.ndarray:
        """``VA(x; h)`` of each lens power vector (rows) under each hypothesis (columns)."""
        r = [lenses[:, None, k] - hypotheses[None, :, k] for k in range(3)]
        blur = accommodated_blur_d(r[0], r[1], r[2], self.settings.accommodation_d)
        return acuity_logmar(blur, self.settings.va_best_logmar)

    def p_correct(self, letter_logmar, lens_d, hypotheses_d=None) -> np.ndarray:
        """``P(c = 1 | s, x, h)`` of the lens power vector ``x`` for every hypothesis (default: the
        grid), shape ``(n,)``."""
        h = self._hyp if hypotheses_d is None else np.asarray(hypotheses_d, dtype=float).reshape(-1, 3)
        va = self._acuity(np.asarray(lens_d, dtype=float).reshape(1, 3), h)[0]
        return self._guess + self._kappa * ndtr(self.settings.slope * (float(letter_logmar) - va))

    @staticmethod
    def trial_power_vector(trial: Trial) -> np.ndarray:
        """The power vector ``[M, J0, J45]`` of the lens a trial names (axis ``None``: a sphere)."""
        axis = 180.0 if trial.axis_deg is None else trial.axis_deg
        return np.array(power_vector_arrays(trial.sphere_d, trial.cylinder_d, axis), dtype=float)

    def _log_likelihood(self, lens, letter_logmar, correct) -> np.ndarray:
        va = self._acuity(lens.reshape(1, 3), self._hyp)[0]
        z = self.settings.slope * (letter_logmar - va)
        log_kappa = math.log(self._kappa)
        if correct:  # γ + κ Φ(z)
            return np.logaddexp(math.log(self._guess), log_kappa + log_ndtr(z))
        if self.settings.lapse > 0:  # λ + κ Φ(−z)
            return np.logaddexp(math.log(self.settings.lapse), log_kappa + log_ndtr(-z))
        return log_kappa + log_ndtr(-z)

    # ---------------------------------------------------------------- scoring
    def _scoring_hypotheses(self) -> tuple[np.ndarray, np.ndarray]:
        """Hypotheses (possibly merged blocks) and their renormalized weights for scoring: the
        least probable ones holding ``PRUNE_MASS`` dropped; while more than
        ``MAX_SCORING_HYPOTHESES`` remain, blocks of 2×2×2, 4×4×4, ... cells merged into one
        hypothesis at the block's mass-weighted centre."""
        return self._cached("scoring", self._merge_until_small)

    @staticmethod
    def _kept(weights, points):
        order = np.argsort(-weights, kind="stable")
        cumulative = np.cumsum(weights[order])
        n = int(np.searchsorted(cumulative, (1.0 - PRUNE_MASS) * cumulative[-1])) + 1
        keep = order[:n]
        return points[keep], weights[keep] / weights[keep].sum()

    def _merge_until_small(self):
        w = self.posterior()
        points, weights = self._kept(w, self._hyp)
        factor = 1
        while len(weights) > MAX_SCORING_HYPOTHESES and factor < max(self._shape):
            factor *= 2
            pad = [(0, -n % factor) for n in self._shape]
            grid_w = np.pad(w.reshape(self._shape), pad)
            blocks = tuple(x for n in grid_w.shape for x in (n // factor, factor))
            mass = grid_w.reshape(blocks).sum(axis=(1, 3, 5)).ravel()
            with np.errstate(invalid="ignore", divide="ignore"):
                centres = [
                    (grid_w * np.pad(self._hyp[:, k].reshape(self._shape), pad))
                    .reshape(blocks)
                    .sum(axis=(1, 3, 5))
                    .ravel()
                    / mass
                    for k in range(3)
                ]
            ok = mass > 0
            points, weights = self._kept(mass[ok], np.column_stack(centres)[ok])
        return points, weights

    def information_table(self, lenses_d) -> np.ndarray:
        """Expected information (bits) ``I(x, s_j)`` of each lens power vector (rows) at each letter
        size of :attr:`letter_grid_logmar` (columns), from the binned posterior of ``VA``."""
        lenses = np.asarray(lenses_d, dtype=float).reshape(-1, 3)
        points, weights = self._scoring_hypotheses()
        va = self._acuity(lenses, points)  # (n_lens, n_hyp)
        n_va = len(self._va_grid)
        position = np.clip((va - self._va_grid[0]) / VA_STEP_LOGMAR, 0.0, n_va - 1.000001)
        low = position.astype(np.int64)
        first, last = int(low.min()), int(low.max()) + 2  # only the occupied part of the VA grid
        width = last - first
        upper_share = position - low
        index = (np.arange(len(lenses))[:, None] * width + (low - first)).ravel()
        size = len(lenses) * width
        hist = np.bincount(index, weights=(weights[None, :] * (1.0 - upper_share)).ravel(), minlength=size)
        hist += np.bincount(index + 1, weights=(weights[None, :] * upper_share).ravel(), minlength=size)
        hist = hist.reshape(len(lenses), width)
        mean_p = np.clip(hist @ self._p_table[first:last], 0.0, 1.0)
        mean_h = hist @ self._h_table[first:last]
        return np.maximum(binary_entropy_bits(mean_p) - mean_h, 0.0)

    def expected_information(self, lens_d, letter_logmar) -> float:
        """Exact mutual information (bits) between the answer to one trial (lens power vector
        ``lens_d``, letter size) and the hypothesis, over the whole grid (no pruning, no binning)."""
        w = self.posterior()
        va = self._acuity(np.asarray(lens_d, dtype=float).reshape(1, 3), self._hyp)[0]
        z = self.settings.slope * (float(letter_logmar) - va)
        p = self._guess + self._kappa * ndtr(z)
        q = self.settings.lapse + self._kappa * ndtr(-z)
        return float(binary_entropy_bits(w @ p, w @ q) - w @ binary_entropy_bits(p, q))

    def candidate_lenses(self) -> tuple[list[Lens], np.ndarray]:
        """Candidate lenses of the next trial and their power vectors ``(n, 3)``: the coarse grid of
        the box, the most probable hypotheses and a local grid around :meth:`best`, each as a
        minus-cylinder lens rounded to ``lens_step_d`` and ``axis_step_deg`` (duplicates dropped)."""

        def compute():
            s = self.settings
            top = np.argsort(-self.posterior(), kind="stable")[:N_HYPOTHESIS_CANDIDATES]
            vectors = np.vstack([self._coarse, self._hyp[top], self.best().to_array() + self._local_offsets])
            spheres, cylinders, axes = lens_arrays_from_power_vectors(vectors[:, 0], vectors[:, 1], vectors[:, 2])
            lenses: dict[Lens, None] = {}
            for sphere, cylinder, axis in zip(spheres.tolist(), cylinders.tolist(), axes.tolist()):
                lenses.setdefault(Lens(sphere, cylinder, axis).rounded(s.lens_step_d, s.axis_step_deg))
            unique = list(lenses)
            pv = power_vector_arrays(
                [x.sphere_d for x in unique], [x.cylinder_d for x in unique], [x.axis_deg for x in unique]
            )
            return unique, np.column_stack(pv)

        return self._cached("candidates", compute)

    # ---------------------------------------------------------------- ask/tell
    def ask(self) -> Trial:
        """The trial (rounded lens, letter size) of maximal expected information about ``h``."""
        start = time.perf_counter()
        lenses, vectors = self.candidate_lenses()
        info = self.information_table(vectors)
        top = info.max()
        ties = np.flatnonzero(info.ravel() >= top - 1e-9 * max(top, 1e-12))
        pick = ties[0] if len(ties) == 1 else np.random.default_rng([self.seed, self.n_trials, 0]).choice(ties)
        i, j = np.unravel_index(pick, info.shape)
        lens = lenses[i]
        trial = Trial(
            sphere_d=lens.sphere_d,
            cylinder_d=lens.cylinder_d,
            letter_logmar=float(self.letter_grid_logmar[j]),
            axis_deg=lens.axis_deg,
        )
        self.last_decision_ms = 1e3 * (time.perf_counter() - start)
        return trial

    def tell(self, trial: Trial, correct) -> None:
        """Add the answer to any trial: ``log w(h) += log P(c | s, x, h)`` on the whole grid, ``x``
        the power vector of the trial's lens (a trial without axis must be spherical)."""
        self._check_answer(trial, correct)
        if trial.axis_deg is None and trial.cylinder_d != 0.0:
            raise ValueError(f"a full-prescription trial with a cylinder needs its axis_deg, got {trial!r}")
        lens = self.trial_power_vector(trial)
        self._add_log_likelihood(self._log_likelihood(lens, trial.letter_logmar, bool(correct)))
        self._history.append((trial, bool(correct)))

    # ---------------------------------------------------------------- answers
    def best(self) -> PowerVector:
        """The posterior mean of ``h``: the Bayes estimate for the squared power-vector error (see
        the module docstring for its meaning with accommodation)."""

        def compute():
            m, j0, j45 = (self.posterior() @ self._hyp).tolist()
            return PowerVector(m, j0, j45)

        return self._cached("best", compute)

    def expected_acuity_logmar(self, lens_d) -> float:
        """Posterior expected acuity ``E_w[VA(x; h)]`` (logMAR) through the lens power vector ``x``."""
        va = self._acuity(np.asarray(lens_d, dtype=float).reshape(1, 3), self._hyp)[0]
        return float(self.posterior() @ va)

    def confidence(self) -> float:
        """``Σ_h w(h) 1[|best − h| ≤ 0.25 D]`` over the whole grid (plain power-vector length)."""

        def compute():
            distance = np.linalg.norm(self._hyp - self.best().to_array(), axis=1)
            return float(min(1.0, max(0.0, self.posterior() @ (distance <= CRITERION_BLUR_D))))

        return self._cached("confidence", compute)

    def posterior_draws(self, n=N_INTERVAL_DRAWS) -> np.ndarray:
        """``n`` power vectors ``(n, 3)`` drawn from the posterior: a grid hypothesis by its
        probability, then uniformly within its grid cell (clipped to the box), from
        ``default_rng([seed, n_trials, 1])``."""
        rng = np.random.default_rng([self.seed, self.n_trials, 1])
        index = rng.choice(len(self._hyp), size=n, p=self.posterior())
        half = 0.5 * self.settings.grid_step_d
        draws = self._hyp[index] + rng.uniform(-half, half, size=(n, 3))
        lows, highs = zip(*self.settings.box.bounds_d)
        return np.clip(draws, lows, highs)

    def prescription(self) -> Prescription:
        """The posterior mean rounded to the phoropter (minus cylinder, 0.25 D, 1°), 95 % intervals
        from :data:`N_INTERVAL_DRAWS` posterior draws, the posterior expected acuity through the
        rounded lens, :meth:`confidence` and the number of trials."""
        estimate = self.best()
        lens = Lens.from_power_vector(estimate).rounded(PHOROPTER_STEP_D, 1.0)
        return Prescription(
            lens=lens,
            power_vector_d=estimate,
            intervals=lens_intervals(self.posterior_draws(), lens),
            predicted_acuity_logmar=self.expected_acuity_logmar(lens.power_vector().to_array()),
            confidence=self.confidence(),
            trials=self.n_trials,
        )

    def should_stop(self) -> bool:
        """Whether the session may stop by its :class:`lensopt.stopping.StopRule` (never without
        one); the confidence is computed only once ``min_trials`` answers are in."""
        return self.stop is not None and self.stop.should_stop(self.n_trials, self.confidence)
