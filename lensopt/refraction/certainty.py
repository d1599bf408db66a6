"""How sure the model is that its reported lens is the best one (issue 14's stopping rule).

With the psychophysics kernel the latent is ``f(s, x) = w s + g(x)``: a psychometric slope ``w``
shared by every lens and an intercept ``g(x)`` per lens (seed eq. 15). The acuity threshold of a
lens is where ``f`` reaches the threshold latent ``z``, ``s*(x) = (z − g(x)) / w``, so the acuity
lost by reporting lens ``x̂`` instead of the best lens is

    loss(x̂) = s*(x̂) − min_x s*(x) = (max_x g(x) − g(x̂)) / w     (logMAR; independent of z).

:func:`lens_certainty` draws ``(w, g)`` jointly from the GP posterior over a set of candidate
lenses and reports the fraction of draws in which ``loss(x̂) ≤ tolerance`` — the posterior
probability that the reported lens is within the tolerance of the best — and, from the same draws,
the 95 % interval of the best lens's sphere and cylinder. A draw with ``w ≤ 0`` (a psychometric
function that does not rise with the letter size) counts as a loss: no lens is known good then.

Candidates — the lenses against which ``x̂`` is measured: a fine grid around ``x̂`` (where the
best lens most likely is), the lenses already tested, and a coarse grid over the part of the lens
box within :data:`COVERED_RADIUS_D` of a tested lens; pruned to lenses whose ``g`` could still beat
the best (``μ + 3σ ≥ max(μ − 3σ)``). Lenses far from every tested lens are left out on purpose:
with the zero-mean prior their intercept stays near the prior (mean 0 = as good as the best lens,
SD ~8), so a few dozen untested corners would each keep a few per cent chance of being best, and
the confidence could never rise however well the tested region is known. Searching those corners
is the acquisition rule's job (UCB explores wherever the bound is high); the stopping rule answers
"is this the best lens of the region searched?", and its thresholds are checked on held-out
patients (``lensopt bench robustness``).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from lensopt.stopping import ACUITY_TOLERANCE_LOGMAR

#: Spacing (D) of the coarse grid over the whole lens box, and of the fine grid around ``x̂`` (a best
#: lens between fine points is within 0.125 D of one in sphere and cylinder: a loss under 0.02 logMAR).
COARSE_STEP_D = 0.5
FINE_STEP_D = 0.25
#: Half-width (D) of the fine grid around the reported lens.
FINE_HALF_WIDTH_D = 1.0
#: Coarse-grid lenses count as searched within this distance (D, in sphere and cylinder) of a
#: tested lens.
COVERED_RADIUS_D = 1.0
#: Posterior draws: the confidence's Monte Carlo standard error is at most 0.5/√512 ≈ 0.022, and
#: about 0.01 near 0.95, where the stopping rule decides.
N_DRAWS = 512
#: Candidates kept unless their intercept lies this many posterior SDs below the best one's reach.
PRUNE_SDS = 3.0
#: Spawn key of the draws' random stream (distinct from the optimizer's other streams).
CERTAINTY_STREAM = 0xCE27


@dataclass(frozen=True)
class LensCertainty:
    """``confidence``: posterior probability that the reported lens is within
    ``tolerance_logmar`` of the best lens; the 95 % intervals of the best lens's powers."""

    confidence: float
    sphere_interval_d: tuple[float, float]
    cylinder_interval_d: tuple[float, float]
    tolerance_logmar: float = ACUITY_TOLERANCE_LOGMAR
    n_draws: int = 0

    def to_dict(self) -> dict:
        return {
            "confidence": self.confidence,
            "sphere_interval_d": list(self.sphere_interval_d),
            "cylinder_interval_d": list(self.cylinder_interval_d),
            "tolerance_logmar": self.tolerance_logmar,
            "n_draws": self.n_draws,
        }


def _grid(lo, hi, step):
    n = int(np.floor((hi - lo) / step + 1e-9)) + 1
    return lo + step * np.arange(n)


def candidate_lenses(best_lens, sphere_bounds_d, cylinder_bounds_d, tested_lenses=None) -> np.ndarray:
    """``(m, 2)`` lenses: ``best_lens`` first, the fine grid around it (clipped to the box), the
    ``tested_lenses`` ``(n, 2)`` and the coarse box grid within :data:`COVERED_RADIUS_D` of them."""
    coarse = (
        np.array(
            np.meshgrid(_grid(*sphere_bounds_d, COARSE_STEP_D), _grid(*cylinder_bounds_d, COARSE_STEP_D), indexing="ij")
        )
        .reshape(2, -1)
        .T
    )
    tested = np.zeros((0, 2)) if tested_lenses is None else np.unique(np.asarray(tested_lenses, float), axis=0)
    if len(tested):
        distance = np.sqrt(((coarse[:, None, :] - tested[None, :, :]) ** 2).sum(-1)).min(axis=1)
        coarse = np.vstack([coarse[distance <= COVERED_RADIUS_D], tested])
    offsets = _grid(-FINE_HALF_WIDTH_D, FINE_HALF_WIDTH_D, FINE_STEP_D)
    fine = np.array(np.meshgrid(best_lens[0] + offsets, best_lens[1] + offsets, indexing="ij")).reshape(2, -1).T
    inside = (
        (fine[:, 0] >= sphere_bounds_d[0])
        & (fine[:, 0] <= sphere_bounds_d[1])
        & (fine[:, 1] >= cylinder_bounds_d[0])
        & (fine[:, 1] <= cylinder_bounds_d[1])
    )
    lenses = np.vstack([np.asarray(best_lens, float)[None, :], fine[inside], coarse])
    _, first = np.unique(np.round(lenses, 9), axis=0, return_index=True)  # each lens once, best first
    return lenses[np.sort(first)]


def _joint_draws(mean, cov, n_draws, rng):
    scale = max(float(np.max(np.diag(cov))), 1e-12)
    for jitter in (1e-10, 1e-8, 1e-6, 1e-4):
        try:
            chol = np.linalg.cholesky(cov + jitter * scale * np.eye(cov.shape[0]))
            break
        except np.linalg.LinAlgError:
            continue
    else:  # pragma: no cover - a covariance this broken is a bug upstream
        raise np.linalg.LinAlgError("posterior covariance of the candidate lenses is not positive definite")
    return mean[None, :] + rng.standard_normal((n_draws, mean.size)) @ chol.T


def lens_certainty(
    model,
    best_lens,
    sphere_bounds_d,
    cylinder_bounds_d,
    rng: np.random.Generator,
    tolerance_logmar: float = ACUITY_TOLERANCE_LOGMAR,
    n_draws: int = N_DRAWS,
) -> LensCertainty:
    """The certainty of ``best_lens`` under ``model`` (a fitted GP on ``[letter_logmar, sphere_d,
    cylinder_d]`` with the psychophysics kernel); see the module docstring."""
    lenses = candidate_lenses(best_lens, sphere_bounds_d, cylinder_bounds_d, model.X_train_[:, 1:])
    at_zero = np.column_stack([np.zeros(len(lenses)), lenses])
    mu, var = model.predict_latent(at_zero)
    sd = np.sqrt(np.maximum(var, 0.0))
    keep = mu + PRUNE_SDS * sd >= np.max(mu - PRUNE_SDS * sd)
    keep[0] = True
    lenses, at_zero = lenses[keep], at_zero[keep]
    points = np.vstack([at_zero, [[1.0, *lenses[0]]]])  # last row: f(1, x̂) = w + g(x̂)
    mean, cov = model.predict_latent(points, full_cov=True)
    draws = _joint_draws(mean, cov, n_draws, rng)
    g = draws[:, :-1]
    slope = draws[:, -1] - draws[:, 0]
    gap = g.max(axis=1) - g[:, 0]
    with np.errstate(divide="ignore", invalid="ignore"):
        loss = np.where(slope > 0, gap / slope, np.inf)
    best = lenses[np.argmax(g, axis=1)]
    lo, hi = np.percentile(best, [2.5, 97.5], axis=0)
    return LensCertainty(
        confidence=float(np.mean(loss <= tolerance_logmar)),
        sphere_interval_d=(float(lo[0]), float(hi[0])),
        cylinder_interval_d=(float(lo[1]), float(hi[1])),
        tolerance_logmar=float(tolerance_logmar),
        n_draws=int(n_draws),
    )
