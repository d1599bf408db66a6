"""Grid Bayes over the correction: the posterior the acuity-law optimizer
(:mod:`lensopt.refraction.acuity_law`) and the ideal observers (:mod:`lensopt.bench.ideal_observer`,
two lens parameters; :mod:`lensopt.bench.ideal_prescription`, three) keep, and the steps of the
(sphere, cylinder) searches that the acuity-law optimizer and the two-parameter ideal observer share:
the candidate lenses' rounding, the most informative trial, the reported lens (the minimizer of the
posterior expected acuity loss ``E_w[log10(1 + b²)]``) and the posterior intervals."""

from __future__ import annotations

import math
import time
from typing import Any

import numpy as np
from scipy.optimize import minimize

from lensopt.refraction.phoropter import round_to_step, round_to_step_array
from lensopt.refraction.trial import Trial, TrialHistory, check_no_axis
from lensopt.trial_cache import TrialCache

_LN10 = math.log(10.0)


def grid_axis(bounds, step) -> np.ndarray:
    """Grid points from ``low`` to ``high`` at ``step`` (both ends included when they fit)."""
    low, high = bounds
    n = math.floor((high - low) / step + 1e-9) + 1
    return low + step * np.arange(n)


def check_bounds(name, bounds) -> tuple[float, float]:
    """``bounds`` as ``(low, high)`` floats; a one-line ValueError unless finite with ``low < high``."""
    try:
        low, high = (float(v) for v in bounds)
    except (TypeError, ValueError):
        raise ValueError(f"{name} must be a pair (low, high), got {bounds!r}") from None
    if not (math.isfinite(low) and math.isfinite(high) and low < high):
        raise ValueError(f"{name} must be finite with low < high, got {bounds!r}")
    return low, high


def rounded_lenses(lenses, lens_step_d, sphere_bounds_d, cylinder_bounds_d) -> np.ndarray:
    """``lenses`` ``(n, 2)`` rounded to the phoropter's step inside the box, each once, in order."""
    lenses = np.asarray(lenses, dtype=float).reshape(-1, 2)
    rounded = np.column_stack(
        [
            round_to_step_array(lenses[:, 0], lens_step_d, sphere_bounds_d),
            round_to_step_array(lenses[:, 1], lens_step_d, cylinder_bounds_d),
        ]
    )
    _, first = np.unique(np.round(rounded, 9), axis=0, return_index=True)
    return rounded[np.sort(first)]


def most_informative_trial(info, lenses, letter_grid_logmar, seed: int, n_trials: int) -> Trial:
    """The trial of the largest ``info[i, j]`` (lens ``i``, letter size ``j``); exact ties broken by
    ``np.random.default_rng([seed, n_trials])``."""
    best = info.max()
    ties = np.flatnonzero(info.ravel() >= best - 1e-9 * max(best, 1e-12))
    pick = ties[0] if len(ties) == 1 else np.random.default_rng([seed, n_trials]).choice(ties)
    i, j = np.unravel_index(pick, info.shape)
    return Trial(
        sphere_d=float(lenses[i, 0]), cylinder_d=float(lenses[i, 1]), letter_logmar=float(letter_grid_logmar[j])
    )


def minimize_expected_loss(
    corrections, weights, expected_loss, sphere_bounds_d, cylinder_bounds_d, lens_step_d, n_starts
) -> tuple[float, float]:
    """The lens minimizing ``Σ_h w(h) log10(1 + b²(x − h))`` over ``corrections`` ``(n, 2)`` with
    ``weights``: L-BFGS-B from the best of the ``n_starts`` heaviest corrections and their mean, then,
    with ``lens_step_d``, the best of the four phoropter lenses around it. ``expected_loss(lenses)``
    is the same loss for many lenses at once."""
    order = np.argsort(-weights, kind="stable")[:n_starts]
    starts = np.vstack([corrections[order], weights @ corrections])
    x0 = starts[np.argmin(expected_loss(starts))]

    def loss_and_gradient(x):
        r_s, r_c = x[0] - corrections[:, 0], x[1] - corrections[:, 1]
        b2 = 0.5 * (r_s**2 + (r_s + r_c) ** 2)
        loss = np.log10(1.0 + b2) @ weights
        scale = weights / ((1.0 + b2) * _LN10)
        return loss, np.array([scale @ (2.0 * r_s + r_c), scale @ (r_s + r_c)])

    result = minimize(loss_and_gradient, x0, jac=True, method="L-BFGS-B", bounds=(sphere_bounds_d, cylinder_bounds_d))
    x = result.x if result.fun <= loss_and_gradient(x0)[0] else x0
    if lens_step_d is not None:
        step = lens_step_d
        base = np.floor(x / step) * step
        corners = np.array(
            [
                [
                    round_to_step(base[0] + i * step, step, sphere_bounds_d),
                    round_to_step(base[1] + j * step, step, cylinder_bounds_d),
                ]
                for i in (0, 1)
                for j in (0, 1)
            ]
        )
        x = corners[np.argmin(expected_loss(corners))]
    return float(x[0]), float(x[1])


def marginal_interval(grid_d, marginal) -> tuple[float, float]:
    """The 2.5 % and 97.5 % quantiles of a posterior ``marginal`` over the points ``grid_d``."""
    cumulative = np.cumsum(marginal)
    low, high = np.searchsorted(cumulative, [0.025 * cumulative[-1], 0.975 * cumulative[-1]])
    return float(grid_d[min(low, len(grid_d) - 1)]), float(grid_d[min(high, len(grid_d) - 1)])


class GridPosterior(TrialHistory):
    """What the grid searches share: a log-posterior ``_log_post`` over a grid of hypotheses
    ``_hyp`` (rows), the ``(trial, answer)`` history and a per-trial cache. A subclass sets
    ``settings`` (with ``seed``), ``_hyp``, ``_log_post``, ``_history = []``, ``_cache = TrialCache()``."""

    settings: Any
    _hyp: np.ndarray
    _log_post: np.ndarray
    _cache: TrialCache

    @property
    def seed(self) -> int:
        return self.settings.seed

    @property
    def hypotheses_d(self) -> np.ndarray:
        """The grid of hypotheses, one per row (D)."""
        return self._hyp.copy()

    def posterior(self) -> np.ndarray:
        """Posterior probabilities of :attr:`hypotheses_d`, shape ``(n,)``, summing to 1."""
        return self._cached("posterior", self._posterior)

    def _posterior(self) -> np.ndarray:
        w = np.exp(self._log_post - self._log_post.max())
        return w / w.sum()

    def _cached(self, name, compute):
        """``compute()`` once per trial count: a new answer drops the entries of the earlier counts
        (all of them at once, so that no entry of this count is dropped while its trial is decided)."""
        return self._cache.get(len(self._history), name, compute)

    def _trial_log_likelihood(self, trial: Trial, correct: bool) -> np.ndarray:
        """``log P(c | trial, h)`` for every hypothesis, shaped like ``_log_post`` (a subclass's model)."""
        raise NotImplementedError

    def _check_answer(self, trial, correct) -> None:
        if correct not in (0, 1, True, False):
            raise ValueError(f"correct must be True or False (or 1 or 0), got {correct!r}")
        if not isinstance(trial, Trial):
            raise ValueError(f"trial must be a lensopt.refraction.trial.Trial, got {trial!r}")

    def tell(self, trial: Trial, correct) -> None:
        """Add the answer: ``log w(h) += log P(c | trial, h)`` over the whole grid."""
        self._check_answer(trial, correct)
        self._add_log_likelihood(self._trial_log_likelihood(trial, bool(correct)))
        self._history.append((trial, bool(correct)))

    def _add_log_likelihood(self, log_likelihood: np.ndarray) -> None:
        self._log_post = self._log_post + log_likelihood
        self._log_post -= self._log_post.max()


class LensGridSearch(GridPosterior):
    """A (sphere, cylinder) search by grid Bayes — the acuity-law optimizer and the two-parameter
    ideal observer: ``ask`` takes the most informative trial of ``information_table`` over
    ``candidate_lenses`` and ``best`` the minimizer of the posterior expected acuity loss over the
    ``(points, weights)`` of ``_lens_posterior()``, from the ``n_lens_starts`` heaviest points."""

    letter_grid_logmar: np.ndarray
    last_decision_ms: float
    n_lens_starts: int

    def candidate_lenses(self) -> np.ndarray:
        raise NotImplementedError

    def _check_answer(self, trial, correct) -> None:
        super()._check_answer(trial, correct)
        check_no_axis(trial)

    def information_table(self, lenses_d) -> np.ndarray:
        raise NotImplementedError

    def expected_loss_logmar(self, lenses_d) -> np.ndarray:
        raise NotImplementedError

    def _lens_posterior(self) -> tuple[np.ndarray, np.ndarray]:
        raise NotImplementedError

    def ask(self) -> Trial:
        """The trial (lens, letter size) of maximal expected information about the hypothesis."""
        start = time.perf_counter()
        lenses = self.candidate_lenses()
        info = self.information_table(lenses)
        trial = most_informative_trial(info, lenses, self.letter_grid_logmar, self.settings.seed, self.n_trials)
        self.last_decision_ms = 1e3 * (time.perf_counter() - start)
        return trial

    def best(self) -> tuple[float, float]:
        """The lens ``(sphere_d, cylinder_d)`` minimizing the posterior expected acuity loss."""
        return self._cached("best", self._best)

    def _best(self) -> tuple[float, float]:
        s = self.settings
        points, weights = self._lens_posterior()
        return minimize_expected_loss(
            points,
            weights,
            self.expected_loss_logmar,
            s.sphere_bounds_d,
            s.cylinder_bounds_d,
            s.lens_step_d,
            self.n_lens_starts,
        )
