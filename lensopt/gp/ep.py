"""Expectation Propagation for GP classification with a probit likelihood.

Sequential site updates of Rasmussen & Williams (2006) Algorithm 3.5 (rank-one updates of the
posterior covariance, which is recomputed stably from ``B = I + S̃½ K S̃½`` after every sweep),
predictions as in Algorithm 3.6, the EP log marginal likelihood of R&W eqs. 3.65, 3.73–3.74 (in
the form of GPML's ``infEP``) and its gradient, R&W eq. 5.27 / Algorithm 5.2. At an EP fixed
point the gradient in the hyperparameters needs no implicit term.

A warm start reuses the previous site parameters and pads new rows with zero-precision sites
(the prior), so an appended trial only needs a few sweeps.
"""

from __future__ import annotations

import numpy as np
from scipy.linalg import cho_solve, solve_triangular
from scipy.linalg.blas import dger
from scipy.special import log_ndtr

from lensopt.gp.laplace import LatentPosterior, _factor_b
from lensopt.gp.likelihood import signs, tilted_moments

EP_TOLERANCE = 1e-9
"""A sweep converged when no site parameter moved by more than this (relative to ``1 + |value|``)."""

EP_MAX_SWEEPS = 200
"""Stop after this many sweeps even if the sites still move."""

MIN_CAVITY_PRECISION = 1e-12
"""Floor on the cavity precision, against round-off (it is positive in exact arithmetic)."""


def _posterior_from_sites(K: np.ndarray, tau: np.ndarray, nu: np.ndarray):
    """R&W Algorithm 3.5 lines 13–15: ``Σ = K − Vᵀ V`` with ``V = L⁻¹ S̃½ K``, and ``μ = Σ ν̃``."""
    sqrt_tau = np.sqrt(tau)
    L = _factor_b(K, sqrt_tau)
    V = solve_triangular(L, sqrt_tau[:, None] * K, lower=True, check_finite=False)
    Sigma = K - V.T @ V
    return np.asfortranarray(Sigma), Sigma @ nu, L, sqrt_tau


def _sweep(Sigma: np.ndarray, mu: np.ndarray, tau: np.ndarray, nu: np.ndarray, y: np.ndarray,
           order: np.ndarray) -> np.ndarray:
    """One pass of sequential site updates (R&W Algorithm 3.5 lines 4–12), in place.

    Returns the updated (Fortran-ordered) ``Σ``; ``mu``, ``tau`` and ``nu`` are updated in place.
    """
    for i in order:
        s_ii = Sigma[i, i]
        tau_cav = max(1.0 / s_ii - tau[i], MIN_CAVITY_PRECISION)  # Line 5
        nu_cav = mu[i] / s_ii - nu[i]
        _, m_hat, v_hat = tilted_moments(y[i], nu_cav / tau_cav, 1.0 / tau_cav)  # Line 6
        tau_new = max(1.0 / v_hat - tau_cav, 0.0)  # Line 7
        d_tau = tau_new - tau[i]
        nu_new = m_hat / v_hat - nu_cav  # Line 8
        d_nu = nu_new - nu[i]
        tau[i], nu[i] = tau_new, nu_new
        s_i = Sigma[:, i].copy()
        c = d_tau / (1.0 + d_tau * s_ii)
        Sigma = dger(-c, s_i, s_i, a=Sigma, overwrite_a=True)  # Line 10: Σ −= c s_i s_iᵀ
        # Line 11, in O(n): μ = Σ_new ν_new = μ + Δν s_i − c s_i (s_iᵀ ν_new)
        mu += s_i * (d_nu - c * (s_i @ nu))
    return Sigma


def _ep_log_marginal(Sigma: np.ndarray, L: np.ndarray, tau: np.ndarray, nu: np.ndarray,
                     y: np.ndarray) -> float:
    """EP approximation to ``log p(y | X)`` (R&W eqs. 3.65, 3.73, 3.74; GPML ``infEP`` form)."""
    s = np.diag(Sigma)
    mu = Sigma @ nu
    tau_cav = np.maximum(1.0 / s - tau, MIN_CAVITY_PRECISION)
    nu_cav = mu / s - nu
    log_z_i = log_ndtr(signs(y) * (nu_cav / tau_cav) / np.sqrt(1.0 + 1.0 / tau_cav))
    return float(
        -np.sum(np.log(np.diag(L)))
        + np.sum(log_z_i)
        + 0.5 * nu @ mu
        + 0.5 * nu_cav @ ((tau / tau_cav * nu_cav - 2.0 * nu) / (tau + tau_cav))
        - 0.5 * np.sum(nu**2 / (tau_cav + tau))
        + 0.5 * np.sum(np.log1p(tau / tau_cav))
    )


def ep_posterior(
    K: np.ndarray,
    y: np.ndarray,
    sites_init: tuple[np.ndarray, np.ndarray] | None = None,
    tolerance: float | None = None,
    max_sweeps: int = EP_MAX_SWEEPS,
) -> LatentPosterior:
    """Run EP to convergence (R&W Algorithm 3.5) and return the Gaussian approximation.

    ``sites_init``: optional ``(τ̃, ν̃)`` to start from (warm start). Sites are visited in index
    order every sweep, so the result is deterministic.
    """
    tolerance = EP_TOLERANCE if tolerance is None else tolerance
    n = K.shape[0]
    y = np.asarray(y, dtype=float)
    if sites_init is None:
        tau, nu = np.zeros(n), np.zeros(n)
    else:
        tau, nu = (np.array(a, dtype=float) for a in sites_init)
    Sigma, mu, L, sqrt_tau = _posterior_from_sites(K, tau, nu)
    order = np.arange(n)
    sweep = 0
    for sweep in range(1, max_sweeps + 1):
        tau_old, nu_old = tau.copy(), nu.copy()
        _sweep(Sigma, mu, tau, nu, y, order)
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
        log_marginal_likelihood=_ep_log_marginal(Sigma, L, tau, nu, y),
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
    return 0.5 * np.einsum("i,ijp,j->p", a, dK, a, optimize=True) - 0.5 * np.einsum(
        "ij,jip->p", R, dK, optimize=True
    )
