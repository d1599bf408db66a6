"""Laplace approximation for GP classification with a probit likelihood.

Newton's method for the posterior mode in the numerically stable form of Rasmussen & Williams
(2006) Algorithm 3.1, with ``B = I + W½ K W½``; predictions (Algorithm 3.2) and the gradient of
the approximate log marginal likelihood (Algorithm 5.1). Both Laplace and EP (``lensopt.gp.ep``)
produce a :class:`LatentPosterior`, the representation every prediction uses.

The Newton iterate is parameterised by ``α`` with ``f = K α`` (as in GPML's ``infLaplace``), so a
warm start pads the previous ``α`` with zeros: old rows keep their latent values, new rows start
at the previous predictive mean. Steps are halved while they do not increase the objective
``Ψ(f) = −½ αᵀf + Σ log p(y|f)`` (R&W eq. 3.12), which guarantees convergence.

Floored likelihood (guess rate ``γ``, lapse ``λ``; :mod:`lensopt.gp.likelihood`): ``−log p`` is not
convex in ``f`` for answers far on the floor's side (a correct answer well below threshold), where
the observed curvature ``−∇∇ log p`` is negative. There ``W`` is clipped at 0 — the answer adds no
precision to the Gaussian approximation, which is what a likely guess deserves — and Newton becomes
a quasi-Newton ascent with the same step-halving line search (still monotone in ``Ψ``, so it
converges; near such points linearly rather than quadratically). With ``γ = λ = 0`` nothing is
clipped and the algorithm is R&W's exactly.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from scipy.linalg import cho_solve, solve_triangular
from scipy.linalg.lapack import dpotrf, dtrtrs

from lensopt.gp.likelihood import log_likelihood, log_likelihood_derivatives

NEWTON_TOLERANCE = 1e-9
"""Newton stops once no latent value moved by more than this (Newton converges quadratically,
so the remaining error is far smaller)."""

NEWTON_MAX_ITERATIONS = 100
"""Give up after this many Newton steps (reached only for pathological inputs)."""

MAX_STEP_HALVINGS = 30
"""Line search: halve a Newton step at most this many times while the objective decreases."""


@dataclass(frozen=True)
class LatentPosterior:
    """Gaussian approximation ``q(f | X, y) = N(mean, (K⁻¹ + diag(sqrt_w²))⁻¹)`` of the latent at
    the training inputs, in the form R&W Algorithms 3.2 and 3.6 predict from.

    ``alpha``: predictive weights (mean at ``x*`` is ``k*ᵀ alpha``); ``sqrt_w``: ``W½`` (Laplace)
    or ``S̃½`` (EP); ``chol``: lower Cholesky factor of ``B = I + sqrt_w K sqrt_w``.
    ``site_precision``/``site_natural_mean`` are EP's site parameters (None for Laplace).
    """

    alpha: np.ndarray
    sqrt_w: np.ndarray
    chol: np.ndarray
    mean: np.ndarray
    log_marginal_likelihood: float
    n_iterations: int
    site_precision: np.ndarray | None = None
    site_natural_mean: np.ndarray | None = None

    def __post_init__(self):
        # column-major once, so every LAPACK solve below reads the factor without copying it
        object.__setattr__(self, "chol", np.asfortranarray(self.chol))

    def _whitened(self, K_cross: np.ndarray) -> np.ndarray:
        """``V = L⁻¹ (sqrt_w ⊙ K_cross)`` with ``K_cross`` of shape ``(n_train, m)``."""
        return lower_solve(self.chol, self.sqrt_w[:, None] * K_cross)

    def reduction(self, K_cross: np.ndarray) -> np.ndarray:
        """``R K_cross`` with ``R = sqrt_w B⁻¹ sqrt_w`` (the variance reduction operator)."""
        return self._reduction_from_whitened(self._whitened(K_cross))

    def _reduction_from_whitened(self, V: np.ndarray) -> np.ndarray:
        return self.sqrt_w[:, None] * lower_solve(self.chol, V, transpose=True)

    def predict_with_reduction(self, K_cross: np.ndarray, k_diag: np.ndarray):
        """``(mean, var, R K_cross)``: what a prediction with input gradients needs, sharing one solve."""
        mean, var, V = self._predict_whitened(K_cross, k_diag)
        return mean, var, self._reduction_from_whitened(V)

    def predict(self, K_cross: np.ndarray, k_diag: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Latent predictive mean and variance, ``K_cross`` of shape ``(n_train, m)``."""
        mean, var, _ = self._predict_whitened(K_cross, k_diag)
        return mean, var

    def _predict_whitened(self, K_cross, k_diag):
        mean = K_cross.T @ self.alpha
        V = self._whitened(K_cross)
        return mean, np.maximum(k_diag - np.einsum("ij,ij->j", V, V), 0.0), V

    def predict_full(self, K_cross: np.ndarray, K_test: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Latent predictive mean and full covariance."""
        mean = K_cross.T @ self.alpha
        V = self._whitened(K_cross)
        cov = K_test - V.T @ V
        return mean, 0.5 * (cov + cov.T)

    def training_covariance(self, K: np.ndarray) -> np.ndarray:
        """``(K⁻¹ + W)⁻¹ = K − K W½ B⁻¹ W½ K`` (R&W eq. 3.27 / 3.53 in stable form)."""
        _, cov = self.predict_full(K, K)
        return cov


def lower_solve(L: np.ndarray, B: np.ndarray, transpose: bool = False) -> np.ndarray:
    """``L⁻¹ B`` (or ``L⁻ᵀ B``) for a lower-triangular ``L``, by LAPACK ``dtrtrs`` directly: at these
    sizes (a few right-hand sides, n ≤ a few hundred) scipy's ``solve_triangular`` wrapper costs
    several times the solve itself, and the acquisition search calls this thousands of times."""
    X, info = dtrtrs(L, B, lower=1, trans=1 if transpose else 0)
    if info != 0:
        raise np.linalg.LinAlgError(f"triangular solve failed (LAPACK dtrtrs info {info}): singular factor")
    return X


def _factor_b(K: np.ndarray, sqrt_w: np.ndarray, scaled_rows: np.ndarray | None = None) -> np.ndarray:
    """Lower Cholesky factor of ``B = I + sqrt_w K sqrt_w`` (eigenvalues ≥ 1, always stable).
    ``scaled_rows``: ``sqrt_w[:, None] * K`` if the caller has it already."""
    B = (sqrt_w[:, None] * K if scaled_rows is None else scaled_rows) * sqrt_w[None, :]
    B.flat[:: B.shape[0] + 1] += 1.0
    # LAPACK dpotrf directly: scipy's cholesky wrapper costs as much as the factorization here
    L, info = dpotrf(B, lower=1, clean=1, overwrite_a=1)
    if info != 0:
        raise np.linalg.LinAlgError(f"B = I + W½ K W½ is not positive definite (LAPACK dpotrf info {info})")
    return L


def _objective(alpha: np.ndarray, f: np.ndarray, y: np.ndarray, floor=(0.0, 0.0), prior_mean=0.0) -> float:
    """``Ψ(f) = −½ αᵀ f + Σ log p(y | m + f)`` (R&W eq. 3.12 up to a constant)."""
    return float(-0.5 * alpha @ f + np.sum(log_likelihood(prior_mean + f, y, *floor)))


def laplace_posterior(
    K: np.ndarray,
    y: np.ndarray,
    alpha_init: np.ndarray | None = None,
    guess_rate: float = 0.0,
    lapse_rate: float = 0.0,
    prior_mean: float = 0.0,
) -> LatentPosterior:
    """Find the posterior mode and build the Laplace approximation (R&W Algorithm 3.1).

    ``K``: training covariance (jitter included), ``y``: labels in ``{0, 1}``, ``alpha_init``:
    optional starting weights (warm start), ``f₀ = K alpha_init``; ``guess_rate``/``lapse_rate``:
    the floored likelihood (curvature clipped at 0, see the module docstring); ``prior_mean``: a
    constant prior mean ``m`` of the latent (the Gaussian is over ``f − m``, whose mean is
    ``LatentPosterior.mean``; the likelihood sees ``m + f``).
    """
    n = K.shape[0]
    y = np.asarray(y, dtype=float)
    floor = (float(guess_rate), float(lapse_rate))
    alpha = np.zeros(n) if alpha_init is None else np.array(alpha_init, dtype=float)
    f = K @ alpha
    psi = _objective(alpha, f, y, floor, prior_mean)
    iteration = 0
    for iteration in range(1, NEWTON_MAX_ITERATIONS + 1):  # noqa: B007 - the count is read after the loop
        _, d1, d2, _ = log_likelihood_derivatives(prior_mean + f, y, *floor)
        # Line 4: W = −∇∇ log p(y|f)  (≥ 0 for the log-concave probit; clipped at 0 if floored)
        W = np.maximum(-d2, 0.0)
        sqrt_w = np.sqrt(W)
        L = _factor_b(K, sqrt_w)  # Line 5: L = cholesky(I + W½ K W½)
        b = W * f + d1  # Line 6
        # Line 7: a = b − W½ Lᵀ\(L\(W½ K b))
        a = b - sqrt_w * lower_solve(L, lower_solve(L, sqrt_w * (K @ b)), transpose=True)
        step_dir = a - alpha
        step = 1.0
        for _ in range(MAX_STEP_HALVINGS):
            alpha_try = alpha + step * step_dir
            f_try = K @ alpha_try  # Line 8: f = K a
            psi_try = _objective(alpha_try, f_try, y, floor, prior_mean)
            if psi_try >= psi - 1e-12 * (1.0 + abs(psi)):
                break
            step *= 0.5
        change = np.max(np.abs(f_try - f)) if n else 0.0
        alpha, f, psi = alpha_try, f_try, psi_try
        if change <= NEWTON_TOLERANCE:
            break
    log_p, d1, d2, _ = log_likelihood_derivatives(prior_mean + f, y, *floor)
    sqrt_w = np.sqrt(np.maximum(-d2, 0.0))
    L = _factor_b(K, sqrt_w)
    # R&W eq. 3.32 / Algorithm 3.1 line 10: log q(y|X) = −½ aᵀf + Σ log p(y|f) − Σ log L_ii
    log_z = -0.5 * alpha @ f + np.sum(log_p) - np.sum(np.log(np.diag(L)))
    return LatentPosterior(
        alpha=alpha,
        sqrt_w=sqrt_w,
        chol=L,
        mean=f,
        log_marginal_likelihood=float(log_z),
        n_iterations=iteration,
    )


def laplace_lml_gradient(
    K: np.ndarray,
    dK: np.ndarray,
    y: np.ndarray,
    posterior: LatentPosterior,
    guess_rate: float = 0.0,
    lapse_rate: float = 0.0,
    prior_mean: float = 0.0,
) -> np.ndarray:
    """Gradient of the Laplace log marginal likelihood (R&W Algorithm 5.1).

    ``dK``: ``(n, n, n_theta)`` derivatives of ``K`` in the log-hyperparameters. Includes the
    implicit term through the dependence of the mode ``f̂`` on the hyperparameters (lines 8–10).
    Where ``W`` is clipped at 0 (floored likelihood) it does not move with ``f̂``: ``d3 = 0`` there.
    """
    _, d1, d2, d3 = log_likelihood_derivatives(prior_mean + posterior.mean, y, guess_rate, lapse_rate)
    d3 = np.where(-d2 > 0.0, d3, 0.0)
    a = posterior.alpha
    L = posterior.chol
    sw = posterior.sqrt_w
    # Line 4: R = W½ Lᵀ\(L\W½)
    R = sw[:, None] * cho_solve((L, True), np.diag(sw), check_finite=False)
    # Line 5: C = L\(W½ K)
    C = solve_triangular(L, sw[:, None] * K, lower=True, check_finite=False)
    # Line 6: s2 = ∂ log q / ∂f̂ = ½ diag((K⁻¹ + W)⁻¹) ∇³ log p. Sign: ∂W/∂f̂ = −∇³ log p, so the
    # −½ log|B| term contributes +½ (as in GPML's infLaplace; checked by finite differences).
    s2 = 0.5 * (np.diag(K) - np.einsum("ij,ij->j", C, C)) * d3
    # Line 8: s1 = ½ aᵀ C_j a − ½ tr(R C_j)
    s1 = 0.5 * np.einsum("i,ijp,j->p", a, dK, a, optimize=True) - 0.5 * np.einsum("ij,jip->p", R, dK, optimize=True)
    # Lines 9-10: b = C_j ∇log p, s3 = b − K R b
    b = np.einsum("ijp,j->ip", dK, d1)
    s3 = b - K @ (R @ b)
    return s1 + s2 @ s3
