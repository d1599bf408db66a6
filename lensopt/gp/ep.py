"""Expectation Propagation for GP classification with a probit likelihood.

Sequential site updates of Rasmussen & Williams (2006) Algorithm 3.5 (rank-one updates of the
posterior covariance, which is recomputed stably from ``B = I + S̃½ K S̃½`` after every sweep),
predictions as in Algorithm 3.6, the EP log marginal likelihood of R&W eqs. 3.65, 3.73–3.74 (in
the form of GPML's ``infEP``) and its gradient, R&W eq. 5.27 / Algorithm 5.2. At an EP fixed
point the gradient in the hyperparameters needs no implicit term.

Floored likelihood (guess rate ``γ``, lapse ``λ``): the tilted moments stay in closed form
(:func:`lensopt.gp.likelihood.tilted_moments`); where a tilted variance exceeds the cavity variance
(the likelihood is not log-concave there) the site precision is clipped at 0, as for the probit's
round-off, and the site's natural mean then matches the tilted mean (``match_clipped_mean``,
:func:`_site_parameters`).

A warm start reuses the previous site parameters and pads new rows with zero-precision sites
(the prior), so an appended trial only needs a few sweeps.

Parallel EP's iterations need only the posterior marginals, ``O(n³)`` each from the ``n × n``
factor of ``B``. Told the white jitter on ``K``'s diagonal, they run on a pivoted Cholesky factor
of the rest, ``K − εI = Φ Φᵀ`` to round-off (LAPACK ``dpstrf``), when its numerical rank ``r`` is
small beside ``n`` — a smooth kernel on a few input dimensions, late in a long session — at
``O(n r²)`` (:func:`_low_rank_marginals`); the returned posterior is factored exactly as before.
"""

from __future__ import annotations

import numpy as np
from scipy.linalg import cho_solve, solve_triangular
from scipy.linalg.blas import dger
from scipy.linalg.lapack import dpotrf, dpstrf, dtrtrs

from lensopt.gp.laplace import LatentPosterior, _factor_b, lower_solve
from lensopt.gp.likelihood import Labels, labelled_tilted_moments

EP_TOLERANCE = 1e-9
"""A sweep converged when no site parameter moved by more than this (relative to ``1 + |value|``)."""

EP_MAX_SWEEPS = 200
"""Stop after this many sweeps even if the sites still move."""

MIN_CAVITY_PRECISION = 1e-12
"""Floor on the cavity precision, against round-off (it is positive in exact arithmetic)."""

PARALLEL_EP_TOLERANCE = 1e-10
"""Convergence of parallel EP (largest relative site change). Tight, so that a warm-started fit
and a cold one (a resumed session) agree to ~1e-9 and propose the same next trial; Anderson
acceleration makes the last digits cheap (~20 % more iterations than at 1e-7)."""

PARALLEL_EP_MAX_ITERATIONS = 200
"""Parallel EP hands over to the sequential schedule after this many damped iterations."""

PARALLEL_EP_MIN_DAMPING = 1.0 / 16.0
"""Smallest damping factor of parallel EP (an oscillation halves it, contraction relaxes it
back towards 1)."""

PARALLEL_EP_MEMORY = 4
"""Iterates remembered by the Anderson acceleration of parallel EP."""

LOW_RANK_SHARE = 0.5
"""Parallel EP iterates on the low-rank factor of the prior covariance when its numerical rank is at
most this share of the sites (below it an iteration costs a fraction of the full one's)."""

PARALLEL_EP_GROWTH = 1.5
"""A parallel EP step whose largest site change exceeds the previous one by this factor counts as
an oscillation (changes of the same size are the linear convergence's normal jitter)."""


def _posterior_from_sites(K: np.ndarray, tau: np.ndarray, nu: np.ndarray):
    """R&W Algorithm 3.5 lines 13–15: ``Σ = K − Vᵀ V`` with ``V = L⁻¹ S̃½ K``, and ``μ = Σ ν̃``."""
    sqrt_tau = np.sqrt(tau)
    L = _factor_b(K, sqrt_tau)
    V = solve_triangular(L, sqrt_tau[:, None] * K, lower=True, check_finite=False)
    Sigma = K - V.T @ V
    return np.asfortranarray(Sigma), Sigma @ nu, L, sqrt_tau


def _site_parameters(tau_cav, nu_cav, m_hat, v_hat, match_clipped_mean: bool):
    """A site's new ``(τ̃, ν̃)`` from its cavity ``(τ₋, ν₋)`` and tilted moments ``(m̂, v̂)`` (R&W
    Algorithm 3.5 lines 7–8), arrays or scalars.

    Matching both moments needs ``τ̃ = 1/v̂ − τ₋``, negative where the tilted variance exceeds the
    cavity's (the floored likelihood is not log-concave where a correct answer lies far below
    threshold, on the guess floor's side). ``τ̃`` is clipped at 0 there, so the approximate posterior
    keeps the cavity's variance; ``match_clipped_mean`` then chooses ``ν̃ = m̂ τ₋ − ν₋``, which gives
    it the tilted mean ``m̂`` (moment matching of the mean alone, as assumed-density filtering does).
    Without it (sessions saved before, and the full prescription's archived campaigns) ``ν̃ = m̂/v̂ −
    ν₋``, the formula of an unclipped site, leaves the posterior mean at ``m̂ v₋/v̂``: pulled towards
    the prior mean, which moves more answers onto the floor's side, whose sites are clipped too: a
    cascade (docs/never-lost.md, "EP's clipped sites"; a recorded case in tests/gp/test_ep_clipping.py)."""
    tilted_precision = 1.0 / v_hat
    tau_new = np.maximum(tilted_precision - tau_cav, 0.0)
    if match_clipped_mean:
        nu_new = np.where(tilted_precision < tau_cav, m_hat * tau_cav, m_hat / v_hat) - nu_cav
    else:
        nu_new = m_hat / v_hat - nu_cav
    return tau_new, nu_new


def _tilted(labels: Labels, cavity_mean, cavity_var, prior_mean):
    """Tilted moments of the zero-mean part ``f − m`` when the likelihood sees ``m + f``."""
    log_z, mean, var = labelled_tilted_moments(labels, prior_mean + cavity_mean, cavity_var)
    return log_z, mean - prior_mean, var


def _sweep(
    Sigma: np.ndarray,
    mu: np.ndarray,
    tau: np.ndarray,
    nu: np.ndarray,
    y: np.ndarray,
    order: np.ndarray,
    floor=(0.0, 0.0),
    prior_mean=0.0,
    match_clipped_mean: bool = False,
) -> np.ndarray:
    """One pass of sequential site updates (R&W Algorithm 3.5 lines 4–12), in place.

    Returns the updated (Fortran-ordered) ``Σ``; ``mu``, ``tau`` and ``nu`` are updated in place.
    """
    prior_means = np.broadcast_to(prior_mean, y.shape)  # a constant, or the prior mean of each row
    for i in order:
        s_ii = Sigma[i, i]
        tau_cav = max(1.0 / s_ii - tau[i], MIN_CAVITY_PRECISION)  # Line 5
        nu_cav = mu[i] / s_ii - nu[i]
        _, m_hat, v_hat = _tilted(Labels.of(y[i], *floor), nu_cav / tau_cav, 1.0 / tau_cav, prior_means[i])  # Line 6
        tau_new, nu_new = (float(v) for v in _site_parameters(tau_cav, nu_cav, m_hat, v_hat, match_clipped_mean))
        d_tau = tau_new - tau[i]  # Lines 7-8
        d_nu = nu_new - nu[i]
        tau[i], nu[i] = tau_new, nu_new
        s_i = Sigma[:, i].copy()
        c = d_tau / (1.0 + d_tau * s_ii)
        Sigma = dger(-c, s_i, s_i, a=Sigma, overwrite_a=True)  # Line 10: Σ −= c s_i s_iᵀ
        # Line 11, in O(n): μ = Σ_new ν_new = μ + Δν s_i − c s_i (s_iᵀ ν_new)
        mu += s_i * (d_nu - c * (s_i @ nu))
    return Sigma


def _ep_log_marginal(
    Sigma: np.ndarray, L: np.ndarray, tau: np.ndarray, nu: np.ndarray, labels: Labels, prior_mean=0.0
) -> float:
    """EP approximation to ``log p(y | X)`` (R&W eqs. 3.65, 3.73, 3.74; GPML ``infEP`` form)."""
    return _ep_log_marginal_from_moments(np.diag(Sigma), Sigma @ nu, L, tau, nu, labels, prior_mean)


def _ep_log_marginal_from_moments(s, mu, L, tau, nu, labels: Labels, prior_mean=0.0) -> float:
    """:func:`_ep_log_marginal` from the posterior variances ``s = diag Σ`` and means ``μ``."""
    tau_cav = np.maximum(1.0 / s - tau, MIN_CAVITY_PRECISION)
    nu_cav = mu / s - nu
    log_z_i, _, _ = _tilted(labels, nu_cav / tau_cav, 1.0 / tau_cav, prior_mean)
    return float(
        -np.sum(np.log(np.diag(L)))
        + np.sum(log_z_i)
        + 0.5 * nu @ mu
        + 0.5 * nu_cav @ ((tau / tau_cav * nu_cav - 2.0 * nu) / (tau + tau_cav))
        - 0.5 * np.sum(nu**2 / (tau_cav + tau))
        + 0.5 * np.sum(np.log1p(tau / tau_cav))
    )


def _marginals_from_sites(K: np.ndarray, tau: np.ndarray, nu: np.ndarray):
    """Posterior variances ``diag Σ`` and means ``μ = Σ ν̃`` without forming ``Σ``:
    ``Σ = K − Vᵀ V``, ``V = L⁻¹ S̃½ K`` (R&W Algorithm 3.5 lines 13–15), so ``diag Σ = diag K −
    Σ_rows V²`` and ``μ = K ν̃ − Vᵀ (V ν̃)``."""
    sqrt_tau = np.sqrt(tau)
    scaled_rows = sqrt_tau[:, None] * K
    L = _factor_b(K, sqrt_tau, scaled_rows)
    V = lower_solve(L, scaled_rows)
    variances = np.diag(K) - np.einsum("ij,ij->j", V, V)
    means = K @ nu - V.T @ (V @ nu)
    return variances, means, L, sqrt_tau


def low_rank_prior(K: np.ndarray, jitter: float) -> np.ndarray | None:
    """``Φ`` ``(n, r)`` with ``Φ Φᵀ = K − jitter·I`` to round-off: LAPACK's pivoted Cholesky
    ``dpstrf`` stopped at its default tolerance (``n · u · max diag``, the rank it can resolve), or
    None when ``r`` exceeds :data:`LOW_RANK_SHARE` of ``n`` (or the factorization fails)."""
    n = K.shape[0]
    K0 = np.array(K, dtype=float, order="F")
    K0.flat[:: n + 1] -= jitter
    c, piv, rank, info = dpstrf(K0, tol=-1.0, lower=1, overwrite_a=1)
    if info < 0 or rank > LOW_RANK_SHARE * n:
        return None
    phi = np.empty((n, rank), order="F")
    phi[piv - 1] = np.tril(c[:, :rank])
    return phi


def _low_rank_marginals(phi: np.ndarray, jitter: float, tau: np.ndarray, nu: np.ndarray):
    """Posterior variances and means of sites ``(τ̃, ν̃)`` on the prior ``K = Φ Φᵀ + εI``
    (:func:`low_rank_prior`), in ``O(n r²)``. By Woodbury twice, ``Σ = (K⁻¹ + S̃)⁻¹ = ε G + G Φ M⁻¹
    Φᵀ G`` with ``G = (I + ε S̃)⁻¹`` and ``M = I + Φᵀ S̃ G Φ`` (``r × r``), so with ``M = L Lᵀ`` and
    ``W = L⁻¹ Φᵀ G``: ``diag Σ = ε g + Σ_rows W²`` and ``μ = Σ ν̃ = ε g ν̃ + Wᵀ (W ν̃)``."""
    g = 1.0 / (1.0 + jitter * tau)
    M = phi.T @ ((tau * g)[:, None] * phi)
    M.flat[:: M.shape[0] + 1] += 1.0
    L, info = dpotrf(M, lower=1, clean=1, overwrite_a=1)
    if info != 0:
        raise np.linalg.LinAlgError(f"I + Φᵀ S̃ G Φ is not positive definite (LAPACK dpotrf info {info})")
    W, info = dtrtrs(L, np.asfortranarray((g[:, None] * phi).T), lower=1)
    if info != 0:
        raise np.linalg.LinAlgError(f"triangular solve failed (LAPACK dtrtrs info {info}): singular factor")
    variances = jitter * g + np.einsum("ij,ij->j", W, W)
    means = jitter * g * nu + W.T @ (W @ nu)
    return variances, means


class _Anderson:
    """Anderson acceleration (type II, Walker & Ni 2011) of the fixed-point map ``x ↦ G(x)``:
    the next iterate combines the last ``memory`` images so that the combined residual
    ``G(x) − x`` is smallest in least squares. Parallel EP converges linearly (its change shrinks by
    a constant factor per iteration, often 0.7–0.9 here); this turns tens of iterations into a few."""

    def __init__(self, memory: int):
        self.memory = memory
        self.reset()

    def reset(self) -> None:
        self._last: tuple[np.ndarray, np.ndarray] | None = None  # the previous iterate and its image
        self._d_residual: list[np.ndarray] = []
        self._d_image: list[np.ndarray] = []

    def step(self, x: np.ndarray, g: np.ndarray, damping: float) -> np.ndarray:
        residual = g - x
        if self._last is not None:
            last_x, last_g = self._last
            self._d_residual.append(residual - (last_g - last_x))
            self._d_image.append(g - last_g)
            del self._d_residual[: -self.memory], self._d_image[: -self.memory]
        self._last = (x, g)
        if not self._d_residual:
            return x + damping * residual
        dR = np.column_stack(self._d_residual)
        gamma = np.linalg.lstsq(dR, residual, rcond=None)[0]
        return x + damping * residual - (np.column_stack(self._d_image) - (1.0 - damping) * dR) @ gamma


def parallel_ep_posterior(
    K: np.ndarray,
    y: np.ndarray,
    sites_init: tuple[np.ndarray, np.ndarray] | None = None,
    tolerance: float | None = None,
    max_iterations: int = PARALLEL_EP_MAX_ITERATIONS,
    guess_rate: float = 0.0,
    lapse_rate: float = 0.0,
    prior_mean: float = 0.0,
    match_clipped_mean: bool = False,
    jitter: float | None = None,
) -> LatentPosterior:
    """EP with parallel site updates: every site is refreshed from the same posterior, then the
    posterior is recomputed once (Minka 2001; van Gerven et al. 2010), vectorized instead of R&W's
    ``n`` sequential rank-one updates per sweep. The fixed points are those of
    :func:`ep_posterior`. Updates are damped when they oscillate (factor halved whenever the
    largest site change grows by :data:`PARALLEL_EP_GROWTH`, down to
    :data:`PARALLEL_EP_MIN_DAMPING`, and relaxed back towards 1 while it shrinks); if they still
    have not converged after ``max_iterations``, the sequential schedule finishes from there.
    ``match_clipped_mean``: a clipped site's natural mean (:func:`_site_parameters`). ``jitter``: the
    white variance ``ε`` added to ``K``'s diagonal, if known; the iterations then use the marginals of
    :func:`_low_rank_marginals` where :func:`low_rank_prior` finds ``K − εI`` of low rank (equal to
    the full computation's to round-off), and the returned posterior is factored exactly.
    """
    tolerance = PARALLEL_EP_TOLERANCE if tolerance is None else tolerance
    floor = (float(guess_rate), float(lapse_rate))
    n = K.shape[0]
    y = np.asarray(y, dtype=float)
    labels = Labels.of(y, *floor)  # the same every iteration
    if sites_init is None:
        tau, nu = np.zeros(n), np.zeros(n)
    else:
        tau, nu = (np.array(a, dtype=float) for a in sites_init)
    white = 0.0 if jitter is None else float(jitter)
    phi = None if jitter is None else low_rank_prior(K, white)

    def marginals(tau, nu):  # (variances, means, L, sqrt τ̃); L None on the low-rank path
        if phi is None:
            return _marginals_from_sites(K, tau, nu)
        return (*_low_rank_marginals(phi, white, tau, nu), None, None)

    variances, means, L, sqrt_tau = marginals(tau, nu)
    damping, last_moved = 1.0, np.inf
    accelerator = _Anderson(PARALLEL_EP_MEMORY)
    iteration, converged = 0, False
    for iteration in range(1, max_iterations + 1):  # noqa: B007 - the count is read after the loop
        tau_cav = np.maximum(1.0 / variances - tau, MIN_CAVITY_PRECISION)
        nu_cav = means / variances - nu
        _, m_hat, v_hat = _tilted(labels, nu_cav / tau_cav, 1.0 / tau_cav, prior_mean)
        tau_new, nu_new = _site_parameters(tau_cav, nu_cav, m_hat, v_hat, match_clipped_mean)
        x, x_new = np.concatenate([tau, nu]), np.concatenate([tau_new, nu_new])
        moved = float(np.max(np.abs(x_new - x) / (1.0 + np.abs(x)), initial=0.0))  # over both kinds of site parameter
        if moved <= tolerance:
            converged = True
            break
        if moved > PARALLEL_EP_GROWTH * last_moved:  # oscillating: restart, damp harder
            damping = max(0.5 * damping, PARALLEL_EP_MIN_DAMPING)
            accelerator.reset()
        elif moved < last_moved:  # contracting: relax the damping again
            damping = min(1.0, 1.5 * damping)
        last_moved = moved
        x = accelerator.step(x, x_new, damping)
        tau, nu = np.maximum(x[:n], 0.0), x[n:]
        variances, means, L, sqrt_tau = marginals(tau, nu)
    if not converged:
        return ep_posterior(
            K,
            y,
            (tau, nu),
            tolerance=tolerance,
            guess_rate=guess_rate,
            lapse_rate=lapse_rate,
            prior_mean=prior_mean,
            match_clipped_mean=match_clipped_mean,
        )
    if L is None:  # the low-rank path: the posterior's factor, exactly
        sqrt_tau = np.sqrt(tau)
        L = _factor_b(K, sqrt_tau)
    alpha = nu - sqrt_tau * lower_solve(L, lower_solve(L, sqrt_tau * (K @ nu)), transpose=True)
    return LatentPosterior(
        alpha=alpha,
        sqrt_w=sqrt_tau,
        chol=L,
        mean=means,
        log_marginal_likelihood=_ep_log_marginal_from_moments(variances, means, L, tau, nu, labels, prior_mean),
        n_iterations=iteration,
        site_precision=tau,
        site_natural_mean=nu,
    )


def ep_posterior(
    K: np.ndarray,
    y: np.ndarray,
    sites_init: tuple[np.ndarray, np.ndarray] | None = None,
    tolerance: float | None = None,
    max_sweeps: int = EP_MAX_SWEEPS,
    guess_rate: float = 0.0,
    lapse_rate: float = 0.0,
    prior_mean: float = 0.0,
    match_clipped_mean: bool = False,
) -> LatentPosterior:
    """Run EP to convergence (R&W Algorithm 3.5) and return the Gaussian approximation.

    ``sites_init``: optional ``(τ̃, ν̃)`` to start from (warm start). Sites are visited in index
    order every sweep, so the result is deterministic. ``match_clipped_mean``: a clipped site's
    natural mean (:func:`_site_parameters`).
    """
    tolerance = EP_TOLERANCE if tolerance is None else tolerance
    floor = (float(guess_rate), float(lapse_rate))
    n = K.shape[0]
    y = np.asarray(y, dtype=float)
    if sites_init is None:
        tau, nu = np.zeros(n), np.zeros(n)
    else:
        tau, nu = (np.array(a, dtype=float) for a in sites_init)
    Sigma, mu, L, sqrt_tau = _posterior_from_sites(K, tau, nu)
    order = np.arange(n)
    sweep = 0
    for sweep in range(1, max_sweeps + 1):  # noqa: B007 - the count is read after the loop
        tau_old, nu_old = tau.copy(), nu.copy()
        _sweep(Sigma, mu, tau, nu, y, order, floor, prior_mean, match_clipped_mean)
        Sigma, mu, L, sqrt_tau = _posterior_from_sites(K, tau, nu)  # Lines 13-15
        moved = max(
            np.max(np.abs(tau - tau_old) / (1.0 + np.abs(tau)), initial=0.0),
            np.max(np.abs(nu - nu_old) / (1.0 + np.abs(nu)), initial=0.0),
        )
        if moved <= tolerance:
            break
    # R&W Algorithm 3.6 lines 4-5: alpha = ν̃ − S̃½ B⁻¹ S̃½ K ν̃, so that E[f*] = k*ᵀ alpha
    alpha = nu - sqrt_tau * cho_solve((L, True), sqrt_tau * (K @ nu), check_finite=False)
    return LatentPosterior(
        alpha=alpha,
        sqrt_w=sqrt_tau,
        chol=L,
        mean=mu,
        log_marginal_likelihood=_ep_log_marginal(Sigma, L, tau, nu, Labels.of(y, *floor), prior_mean),
        n_iterations=sweep,
        site_precision=tau,
        site_natural_mean=nu,
    )


def ep_lml_gradient(K: np.ndarray, dK: np.ndarray, posterior: LatentPosterior) -> np.ndarray:
    """Gradient of the EP log marginal likelihood (R&W eq. 5.27, Algorithm 5.2).

    ``∂ log Z_EP / ∂θ_j = ½ tr((b bᵀ − S̃½ B⁻¹ S̃½) ∂K/∂θ_j)`` with ``b = alpha``.
    """
    sw = posterior.sqrt_w
    R = sw[:, None] * cho_solve((posterior.chol, True), np.diag(sw), check_finite=False)
    a = posterior.alpha
    return 0.5 * np.einsum("i,ijp,j->p", a, dK, a, optimize=True) - 0.5 * np.einsum("ij,jip->p", R, dK, optimize=True)
