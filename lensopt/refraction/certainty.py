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

The draws (issue 18: the stopping rule is checked between two trials of a PsychoPy loop, within a
60 Hz frame) — :func:`_stage_factors`: ``x̂`` and ``w`` first, then the other candidates ordered
by how likely they are to beat ``x̂`` (``(μ − μ̂)/√(σ² + σ̂²)``), in stages: 16 of them, 64, then
all. Each stage is drawn from its covariance conditional on the stages before it, so earlier
columns never change; the last, largest stage (their intercepts are smooth in the lens at the
kernel's lengthscale, so their covariance is numerically of low rank) from a pivoted Cholesky
factor stopped at :data:`RANK_TOLERANCE`. The stopping rule asks only whether the confidence
reaches its threshold: :func:`confidence_reaches` answers that from the first stages when they
settle it — exactly as the full computation would, since a draw already lost to a lens of an early
stage stays lost — which at a 0.95 threshold is nearly always after the first 16 lenses.

How many draws: 512, and 4096 where the estimate of 512 reaches the stopping rule's threshold by
less than four of its standard errors (:func:`refine_draws`): a rule asked after every trial picks
its stop from the estimate's noise otherwise.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass

import numpy as np
from scipy.linalg import solve_triangular
from scipy.linalg.lapack import dpstrf

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
#: Posterior draws: the confidence's Monte Carlo standard error is at most 0.5/√512 ≈ 0.022.
N_DRAWS = 512
#: Where the first draws put the confidence at a stopping rule's threshold or above it by less than
#: :data:`REFINE_SDS` of their Monte Carlo standard errors, the estimate is refined to
#: :data:`PRECISE_DRAWS` draws (:func:`refine_draws`) before the rule may stop. A rule asked after
#: every trial stops at the first trial whose *estimate* passes its threshold, so with 512 draws
#: (SE 0.0096 at 0.95) a session whose confidence hovers a little below the threshold passes it by
#: sampling noise alone within some dozens of trials (a true 0.93 passes 0.95 about once in 50
#: trials); on tuning patients at slope 2 many stops were of that kind. With 4096 draws the SE is
#: 0.0034 at 0.95. An estimate below the threshold is not refined: more draws could only move a stop
#: a trial later, and the check's quick answer stays as quick; so the extra draws are made only on
#: the trials where the first draws say "stop" (docs/psychopy.md, "Near a stop").
PRECISE_DRAWS = 4096
REFINE_SDS = 4.0
#: Candidates kept unless their intercept lies this many posterior SDs below the best one's reach.
PRUNE_SDS = 3.0
#: Candidates drawn first, the most likely to beat the reported lens first (after 16, then after 64
#: of them, the stopping rule can often tell that the confidence is short of its threshold).
SCREEN_SIZES = (16, 64)
#: The remaining candidates are drawn from a low-rank factor of their covariance (given the ones
#: drawn first) that leaves out at most this fraction of the largest posterior variance, per lens:
#: an SD of ~2e-4 latent units against a tolerance of ``0.025 w`` ≈ 0.1 (``w`` ≈ 3–5 per logMAR).
RANK_TOLERANCE = 1e-8
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
    #: The 95 % interval of ``S + C``, the best lens's other principal meridian: the sphere of the
    #: lens written in the other cylinder form (a two-parameter result at an axis, in minus
    #: cylinder, :mod:`lensopt.experiment.results`). None where it was not computed.
    meridian_interval_d: tuple[float, float] | None = None
    #: The 95 % interval of the spherical equivalent ``M = S + C/2`` (the same in either cylinder
    #: form). None where it was not computed.
    equivalent_interval_d: tuple[float, float] | None = None

    def to_dict(self) -> dict:
        out = {
            "confidence": self.confidence,
            "sphere_interval_d": list(self.sphere_interval_d),
            "cylinder_interval_d": list(self.cylinder_interval_d),
            "tolerance_logmar": self.tolerance_logmar,
            "n_draws": self.n_draws,
        }
        for name in ("meridian_interval_d", "equivalent_interval_d"):
            if getattr(self, name) is not None:
                out[name] = list(getattr(self, name))
        return out


def _grid(lo: float, hi: float, step: float) -> np.ndarray:
    n = int(np.floor((hi - lo) / step + 1e-9)) + 1
    return lo + step * np.arange(n)


@functools.lru_cache(maxsize=8)
def _coarse_grid(sphere_bounds_d, cylinder_bounds_d) -> np.ndarray:
    """The coarse grid over the lens box, sphere-major (read-only: shared between calls)."""
    (sphere_lo, sphere_hi), (cylinder_lo, cylinder_hi) = sphere_bounds_d, cylinder_bounds_d
    grid = (
        np.array(
            np.meshgrid(
                _grid(sphere_lo, sphere_hi, COARSE_STEP_D),
                _grid(cylinder_lo, cylinder_hi, COARSE_STEP_D),
                indexing="ij",
            )
        )
        .reshape(2, -1)
        .T
    )
    grid.setflags(write=False)
    return grid


def _first_of_each(rows: np.ndarray) -> np.ndarray:
    """Indices of the first occurrence of each distinct row of ``rows`` ``(n, 2)``, in lexicographic
    order of the rows (what ``np.unique(rows, axis=0, return_index=True)`` returns, faster)."""
    order = np.lexsort((rows[:, 1], rows[:, 0]))  # stable: the first occurrence leads its group
    ordered = rows[order]
    new = np.ones(len(rows), dtype=bool)
    new[1:] = (ordered[1:] != ordered[:-1]).any(axis=1)
    return order[new]


def _covered(coarse, tested, sphere_bounds_d, cylinder_bounds_d) -> np.ndarray:
    """Which lenses of the coarse grid ``coarse`` (sphere-major, from :func:`_coarse_grid`) lie within
    :data:`COVERED_RADIUS_D` of a ``tested`` lens: the same distance test as over every pair, made only
    for the grid lenses around each tested one (a few grid steps either way)."""
    (sphere_lo, sphere_hi), (cylinder_lo, cylinder_hi) = sphere_bounds_d, cylinder_bounds_d
    spheres = _grid(sphere_lo, sphere_hi, COARSE_STEP_D)
    cylinders = _grid(cylinder_lo, cylinder_hi, COARSE_STEP_D)
    reach = int(np.ceil(COVERED_RADIUS_D / COARSE_STEP_D)) + 1
    steps = np.arange(-reach, reach + 1)
    i = np.clip(
        np.floor((tested[:, 0] - sphere_bounds_d[0]) / COARSE_STEP_D).astype(int)[:, None] + steps, 0, len(spheres) - 1
    )
    j = np.clip(
        np.floor((tested[:, 1] - cylinder_bounds_d[0]) / COARSE_STEP_D).astype(int)[:, None] + steps,
        0,
        len(cylinders) - 1,
    )
    ds = spheres[i] - tested[:, :1]  # (n, k): sphere differences to the neighbouring grid lines
    dc = cylinders[j] - tested[:, 1:]
    distance = np.sqrt(ds[:, :, None] ** 2 + dc[:, None, :] ** 2)  # (n, k, k), as ((a - b) ** 2).sum(-1)
    covered = np.zeros(len(coarse), dtype=bool)
    flat = i[:, :, None] * len(cylinders) + j[:, None, :]
    covered[flat[distance <= COVERED_RADIUS_D]] = True
    return covered


def candidate_lenses(best_lens, sphere_bounds_d, cylinder_bounds_d, tested_lenses=None) -> np.ndarray:
    """``(m, 2)`` lenses: ``best_lens`` first, the fine grid around it (clipped to the box), the
    ``tested_lenses`` ``(n, 2)`` and the coarse box grid within :data:`COVERED_RADIUS_D` of them."""
    coarse = _coarse_grid(tuple(map(float, sphere_bounds_d)), tuple(map(float, cylinder_bounds_d)))
    if tested_lenses is None:
        tested = np.zeros((0, 2))
    else:
        tested = np.asarray(tested_lenses, float).reshape(-1, 2)
        tested = tested[_first_of_each(tested)]  # each tested lens once, in lexicographic order
    if len(tested):
        coarse = np.vstack([coarse[_covered(coarse, tested, sphere_bounds_d, cylinder_bounds_d)], tested])
    offsets = _grid(-FINE_HALF_WIDTH_D, FINE_HALF_WIDTH_D, FINE_STEP_D)
    fine = np.array(np.meshgrid(best_lens[0] + offsets, best_lens[1] + offsets, indexing="ij")).reshape(2, -1).T
    inside = (
        (fine[:, 0] >= sphere_bounds_d[0])
        & (fine[:, 0] <= sphere_bounds_d[1])
        & (fine[:, 1] >= cylinder_bounds_d[0])
        & (fine[:, 1] <= cylinder_bounds_d[1])
    )
    lenses = np.vstack([np.asarray(best_lens, float)[None, :], fine[inside], coarse])
    return lenses[np.sort(_first_of_each(np.round(lenses, 9)))]  # each lens once, best first


def joint_factor(cov) -> np.ndarray:
    """Lower Cholesky factor of a joint posterior covariance, jittered as needed relative to its
    largest variance (:func:`_dense_factor`)."""
    return _dense_factor(cov, max(float(np.max(np.diag(cov))), 1e-12))


def draws_from_factor(mean, chol, n_draws, rng) -> np.ndarray:
    """``(n_draws, m)`` joint draws ``mean + z cholᵀ`` (``chol`` from :func:`joint_factor`)."""
    return mean[None, :] + rng.standard_normal((n_draws, mean.size)) @ chol.T


def _joint_draws(mean, cov, n_draws, rng):
    return draws_from_factor(mean, joint_factor(cov), n_draws, rng)


def _prepare(model, best_lens, sphere_bounds_d, cylinder_bounds_d):
    """The kept candidate lenses, ``x̂`` first and then the others by threat, and the model's points
    ``[(0, x̂), (1, x̂), (0, lens₁), (0, lens₂)...]`` in that order; the largest posterior variance
    among them (the scale of the jitter and of the rank tolerance)."""
    lenses = candidate_lenses(best_lens, sphere_bounds_d, cylinder_bounds_d, model.X_train_[:, 1:])
    at_zero = np.column_stack([np.zeros(len(lenses)), lenses])
    mu, var = model.predict_latent(at_zero)
    var = np.maximum(var, 0.0)
    sd = np.sqrt(var)
    keep = mu + PRUNE_SDS * sd >= np.max(mu - PRUNE_SDS * sd)
    keep[0] = True
    kept = np.flatnonzero(keep)
    others = kept[1:]
    threat = (mu[others] - mu[0]) / np.sqrt(var[others] + var[0] + 1e-300)
    order = np.concatenate([[0], others[np.argsort(-threat, kind="stable")]])
    lenses = lenses[order]
    points = np.vstack([at_zero[:1], [[1.0, *lenses[0]]], at_zero[order[1:]]])
    return lenses, points, float(np.max(var[kept]))


def _dense_factor(cov, scale):
    """Lower Cholesky factor of ``cov`` with the smallest jitter (relative to ``scale``) that works."""
    eye = np.eye(cov.shape[0])
    for jitter in (1e-10, 1e-8, 1e-6, 1e-4):
        try:
            return np.linalg.cholesky(cov + jitter * scale * eye)
        except np.linalg.LinAlgError:
            continue
    raise np.linalg.LinAlgError(  # pragma: no cover - a covariance this broken is a bug upstream
        "posterior covariance of the candidate lenses is not positive definite"
    )


def _low_rank_factor(cov, scale):
    """``F`` ``(n, r)`` with ``F Fᵀ = cov`` up to a residual whose every variance is at most
    :data:`RANK_TOLERANCE` × ``scale`` (LAPACK's pivoted Cholesky ``dpstrf``, stopped there)."""
    factor, piv, rank, info = dpstrf(cov, tol=RANK_TOLERANCE * scale, lower=1)
    if info < 0:  # pragma: no cover - an argument error is a bug here
        raise np.linalg.LinAlgError(f"pivoted Cholesky failed (LAPACK dpstrf info {info})")
    F = np.zeros((cov.shape[0], rank))
    F[piv - 1] = np.tril(factor)[:, :rank]
    return F


def _stage_ends(m: int) -> list[int]:
    """Where the stages of :func:`_stage_factors` end: after the two points of ``x̂`` and
    :data:`SCREEN_SIZES` lenses, then at all ``m`` points."""
    return sorted({min(2 + size, m) for size in SCREEN_SIZES} | {m})


def _stage_factors(model, points, scale):
    """Yield ``(start, end, mean, cross, factor)`` for each stage of the joint posterior of
    ``points``: a block Cholesky factorization, ``f[start:end] = mean + cross z_before + factor
    z_new`` with ``z_before`` the normals of the stages before and ``z_new`` fresh ones.

    Each block is the covariance of its points conditional on the points before it. The first
    stages are dense (Cholesky factors, jittered as needed); the last one — the many lenses that
    rarely beat ``x̂`` — is low-rank (:func:`_low_rank_factor`): their intercepts, smooth in the lens
    at the kernel's lengthscale, are nearly determined by the lenses before them and by one another."""
    m = points.shape[0]
    factor = np.zeros((0, 0))  # lower Cholesky factor of the dense stages so far
    start = 0
    for end in _stage_ends(m):
        mean, cov = model.predict_latent(points[:end], full_cov=True)
        if start:
            cross = solve_triangular(factor, cov[:start, start:end], lower=True, check_finite=False).T
            block_cov = cov[start:end, start:end] - cross @ cross.T
        else:
            cross, block_cov = np.zeros((end, 0)), cov
        if end == m:
            yield start, end, mean[start:end], cross, _low_rank_factor(block_cov, scale)
            return
        block_factor = _dense_factor(block_cov, scale)
        yield start, end, mean[start:end], cross, block_factor
        factor = np.block([[factor, np.zeros((start, end - start))], [cross, block_factor]])
        start = end


def _draws(stages, n_draws, rng):
    """Yield the joint posterior draws ``(n_draws, e)`` of the points up to the end ``e`` of each of
    ``stages`` (:func:`_stage_factors`, or a list of them: drawn again for more draws). Each stage
    draws its fresh normals after those of the stages before it, and the columns already drawn never
    change: a stage's draws are the first columns of the full computation's, number for number."""
    draws = np.zeros((n_draws, 0))
    normals = np.zeros((n_draws, 0))
    for _, _, mean, cross, factor in stages:
        fresh = rng.standard_normal((factor.shape[1], n_draws)).T
        block = mean[None, :] + fresh @ factor.T
        if cross.size:
            block += normals @ cross.T
        draws = np.hstack([draws, block])
        normals = np.hstack([normals, fresh])
        yield draws


def narrowly_reaches(confidence: float, threshold: float | None, n_draws: int) -> bool:
    """Whether an estimate ``confidence`` from ``n_draws`` draws reaches a stopping rule's
    ``threshold`` (None: no rule) by too little to be sure it is not sampling noise: by less than
    :data:`REFINE_SDS` of its standard errors, ``√(t(1 − t)/n)`` at the threshold."""
    if threshold is None:
        return False
    return 0.0 <= confidence - threshold < REFINE_SDS * np.sqrt(threshold * (1.0 - threshold) / n_draws)


def refine_draws(draws, draw_more, confidence_of, threshold: float | None, precise_draws: int = PRECISE_DRAWS):
    """``draws`` ``(n, m)``, with ``draw_more(precise_draws − n)`` further draws appended where the
    confidence they give (``confidence_of(draws)``) :func:`narrowly_reaches` ``threshold``: where a
    stopping rule would stop, the estimate of :data:`PRECISE_DRAWS` draws, whose noise a rule asked
    after every trial does not pick its stop from."""
    missing = precise_draws - draws.shape[0]
    if missing > 0 and narrowly_reaches(confidence_of(draws), threshold, draws.shape[0]):
        return np.vstack([draws, draw_more(missing)])
    return draws


def acuity_loss(gap, slope):
    """Acuity loss (logMAR) of the reported lens, ``gap / slope``: its intercept's shortfall from the
    best lens's (latent units) over the psychometric slope ``w``; infinite where ``w ≤ 0`` (a
    psychometric function that does not rise with the letter size: no lens is known good)."""
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(slope > 0, gap / slope, np.inf)


def _losses(draws):
    """Acuity loss (logMAR) of ``x̂`` in each draw of ``[g(x̂), w + g(x̂), g(lens₁)...]``."""
    g0 = draws[:, 0]
    return acuity_loss(np.maximum(draws[:, 2:].max(axis=1, initial=-np.inf), g0) - g0, draws[:, 1] - g0)


def lens_certainty(
    model,
    best_lens,
    sphere_bounds_d,
    cylinder_bounds_d,
    rng: np.random.Generator,
    tolerance_logmar: float = ACUITY_TOLERANCE_LOGMAR,
    n_draws: int = N_DRAWS,
    threshold: float | None = None,
    precise_draws: int = PRECISE_DRAWS,
) -> LensCertainty:
    """The certainty of ``best_lens`` under ``model`` (a fitted GP on ``[letter_logmar, sphere_d,
    cylinder_d]`` with the psychophysics kernel); see the module docstring. ``n_draws`` draws, or
    ``precise_draws`` where their confidence narrowly reaches the stopping rule's ``threshold``
    (None: no rule; :func:`refine_draws`)."""
    lenses, points, scale = _prepare(model, best_lens, sphere_bounds_d, cylinder_bounds_d)
    stages = list(_stage_factors(model, points, scale))
    *_, draws = _draws(stages, n_draws, rng)  # all stages: every candidate
    draws = refine_draws(
        draws, lambda n: _last(_draws(stages, n, rng)), _confidence_of(tolerance_logmar), threshold, precise_draws
    )
    loss = _losses(draws)
    g = np.delete(draws, 1, axis=1)  # the intercepts, in the order of ``lenses``
    best = lenses[np.argmax(g, axis=1)]
    lo, hi = np.percentile(best, [2.5, 97.5], axis=0)
    meridian = np.percentile(best.sum(axis=1), [2.5, 97.5])  # S + C of the same draws
    equivalent = np.percentile(best[:, 0] + 0.5 * best[:, 1], [2.5, 97.5])  # M = S + C/2
    return LensCertainty(
        confidence=float(np.mean(loss <= tolerance_logmar)),
        sphere_interval_d=(float(lo[0]), float(hi[0])),
        cylinder_interval_d=(float(lo[1]), float(hi[1])),
        tolerance_logmar=float(tolerance_logmar),
        n_draws=int(draws.shape[0]),
        meridian_interval_d=(float(meridian[0]), float(meridian[1])),
        equivalent_interval_d=(float(equivalent[0]), float(equivalent[1])),
    )


def confidence_reaches(
    model,
    best_lens,
    sphere_bounds_d,
    cylinder_bounds_d,
    rng: np.random.Generator,
    threshold: float,
    tolerance_logmar: float = ACUITY_TOLERANCE_LOGMAR,
    n_draws: int = N_DRAWS,
    precise_draws: int = PRECISE_DRAWS,
) -> bool:
    """``lens_certainty(..., threshold=threshold).confidence >= threshold`` — the same answer, from
    the same draws, but stopped at the first stage of :func:`_stage_factors` that settles it.

    The lenses most likely to beat ``x̂`` are drawn first. A draw in which one of the lenses drawn so
    far beats ``x̂`` by more than the tolerance is a loss whatever the other lenses do, so the
    fraction of draws not yet lost is an upper bound on the confidence of the first ``n_draws``
    (exact, not statistical: the same numbers enter the full computation). Once it is below
    ``threshold`` the answer is no; the stopping rule asks this at every trial, and usually the first
    stage answers it. A confidence that narrowly reaches it is refined as the full computation
    refines it."""
    _, points, scale = _prepare(model, best_lens, sphere_bounds_d, cylinder_bounds_d)
    stages: list = []

    def factorized():
        for stage in _stage_factors(model, points, scale):
            stages.append(stage)
            yield stage

    confidence_of = _confidence_of(tolerance_logmar)
    for draws in _draws(factorized(), n_draws, rng):
        if confidence_of(draws) < threshold:
            return False
    draws = refine_draws(draws, lambda n: _last(_draws(stages, n, rng)), confidence_of, threshold, precise_draws)
    return confidence_of(draws) >= threshold


def _confidence_of(tolerance_logmar: float):
    """The confidence a set of draws (of ``[g(x̂), w + g(x̂), g(lens₁)...]``) gives."""
    return lambda draws: float(np.mean(_losses(draws) <= tolerance_logmar))


def _last(iterable):
    *_, last = iterable
    return last
