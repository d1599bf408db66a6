"""The evidence lower bound of the ranking GP and its analytic gradient (Nguyen et al. 2021, eq. 5).

``q(f_U) = N(m, S)`` over the latent values at the distinct compared inputs ``U`` (n rows), in the
whitened parameterization ``f_U = L_K v``, ``v ~ N(μ̃, L̃ L̃ᵀ)``, ``L_K L_Kᵀ = K_UU + jitter·I``, so
``m = L_K μ̃`` and ``S = L Lᵀ`` with the lower-triangular ``L = L_K L̃`` (Hensman et al. 2015 call
this "whitening"; the family is the full Gaussian of eq. 5). Then

    ELBO = Σ_obs E_q[log p(o | f_C)] − KL(N(μ̃, L̃L̃ᵀ) ‖ N(0, I)),
    KL   = ½ (‖L̃‖²_F + ‖μ̃‖² − n) − Σ_i log |L̃_ii|.

Every likelihood depends on ``f_C`` only through the ``r = m − 1`` differences
``d = f_{C[:r]} − f_{C[r]}`` (shift invariance), whose marginal under ``q`` is
``N(D μ̃, (D L̃)(D L̃)ᵀ)`` with ``D = L_K[C[:r]] − L_K[C[r]]``; the expectation is an ``r``-dimensional
Gauss–Hermite product rule ``Σ_q w_q log p(μ_d + C_d ξ_q)``, ``C_d C_dᵀ = Σ_d``, differentiated
exactly: ``∂/∂C_d = Σ_q w_q ∇log p ξ_qᵀ``, then back through the Cholesky factor (Murray 2016,
"Differentiation of the Cholesky decomposition", eq. 10) to ``Σ_d``, ``L̃``, ``μ̃`` and — when the
kernel is learned — through ``L_K`` to ``K_UU`` and its log-hyperparameters.

Parameters of the optimizer (one flat vector): ``μ̃`` (n), the lower triangle of ``L̃`` row by row
with its diagonal as logarithms, then the free log-hyperparameters of the kernel (if learned), then
``log δ`` (if learned, and only once a tie has been observed). A bounded log-parameter
``t ∈ [lo, hi]`` is optimized as ``η`` with ``t = lo + (hi − lo) σ(η)`` (``σ`` the logistic
function), so that the problem is unconstrained: scipy's L-BFGS-B spends a Python loop over every
coordinate as soon as any bound is given.
Everything here is private: :class:`lensopt.ranking.RankingGP` validates.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cache

import numpy as np
from scipy.linalg import solve_triangular

from lensopt.ranking.likelihood import TIE_THRESHOLD_BOUNDS, log_choice_canonical, log_tie, log_top_k_canonical

GAUSS_HERMITE_POINTS = {1: 16, 2: 8, 3: 6}
"""Gauss–Hermite nodes per dimension of the difference space (``m − 1`` = 1, 2, 3 dimensions)."""

DIFFERENCE_JITTER = 1e-10
"""Added to the covariance of the differences of a compared set before its Cholesky factor."""


@cache
def gauss_hermite(r: int) -> tuple[np.ndarray, np.ndarray]:
    """Product-rule nodes ``(Q, r)`` and weights ``(Q,)`` for ``E[g(ξ)]``, ``ξ ~ N(0, I_r)``."""
    if r not in GAUSS_HERMITE_POINTS:
        raise ValueError(f"sets of {r + 1} members are not supported; at most {max(GAUSS_HERMITE_POINTS) + 1}")
    x, w = np.polynomial.hermite_e.hermegauss(GAUSS_HERMITE_POINTS[r])
    w = w / np.sqrt(2.0 * np.pi)
    grids = np.meshgrid(*([x] * r), indexing="ij")
    nodes = np.stack([g.ravel() for g in grids], axis=1)
    weights = np.prod(np.stack(np.meshgrid(*([w] * r), indexing="ij"), axis=0).reshape(r, -1), axis=0)
    nodes.setflags(write=False)
    weights.setflags(write=False)
    return nodes, weights


def cholesky_backward(C, C_bar):
    """Symmetric gradient ``Σ̄`` of a function of ``C = chol(Σ)`` given ``C̄`` (batched ``(..., r, r)``).

    Murray (2016), eq. 10: ``S = C⁻ᵀ Φ(Cᵀ C̄) C⁻¹`` with ``Φ`` the lower triangle with its diagonal
    halved; the gradient with respect to a symmetric ``Σ`` is ``(S + Sᵀ) / 2``.
    """
    P = np.tril(np.swapaxes(C, -1, -2) @ np.tril(C_bar))
    P[..., np.arange(P.shape[-1]), np.arange(P.shape[-1])] *= 0.5
    if C.ndim == 2:  # X = C⁻ᵀ P, then S = X C⁻¹ from Cᵀ Sᵀ = Xᵀ
        X = solve_triangular(C, P, lower=True, trans="T")
        S = solve_triangular(C, X.T, lower=True, trans="T").T
    else:  # small batched factors (r ≤ 3)
        Cinv = np.linalg.inv(C)
        S = np.swapaxes(Cinv, -1, -2) @ P @ Cinv
    return 0.5 * (S + np.swapaxes(S, -1, -2))


@dataclass(frozen=True)
class Group:
    """Observations of one kind and size, members in canonical order (ranked ones first).

    ``kind``: ``"rank"`` (Plackett–Luce top-``k``), ``"choice"`` (one winner, eq. 1) or ``"tie"``;
    ``index``: ``(n_g, m)`` rows of ``U``; ``positions``: ``(n_g,)`` indices of the observations in
    the list they came from.
    """

    kind: str
    k: int
    index: np.ndarray
    positions: np.ndarray


def build_groups(observations, row_of) -> list[Group]:
    """Group observations by (kind, m, k); ``row_of(x)`` maps an input row to its index in ``U``."""
    buckets: dict[tuple, list] = {}
    for position, obs in enumerate(observations):
        order = obs.canonical_order()
        k = 0 if obs.kind == "tie" else len(obs.outcome)
        rows = [row_of(obs.inputs[j]) for j in order]
        buckets.setdefault((obs.kind, obs.m, k), []).append((rows, position))
    return [
        Group(kind, k, np.array([r for r, _ in items], dtype=int), np.array([p for _, p in items], dtype=int))
        for (kind, _, k), items in sorted(buckets.items())
    ]


def expected_log_likelihood(group: Group, mu, Sigma, delta):
    """``Σ_g E[log p(o_g | d)]`` for ``d ~ N(mu_g, Sigma_g)`` by Gauss–Hermite, with its gradients in
    ``mu`` ``(G, r)``, ``Sigma`` ``(G, r, r)`` (symmetric) and ``δ``."""
    r = mu.shape[1]
    C = np.linalg.cholesky(Sigma + DIFFERENCE_JITTER * np.eye(r))
    nodes, weights = gauss_hermite(r)
    d = mu[:, None, :] + nodes @ np.swapaxes(C, 1, 2)  # (G, Q, r)
    f = np.concatenate([d, np.zeros(d.shape[:2] + (1,))], axis=2)
    value, grad_f, grad_delta = _log_lik(group.kind, group.k, f, delta)
    weighted = np.swapaxes(grad_f[..., :r], 1, 2) * weights  # (G, r, Q)
    g_Sigma = cholesky_backward(C, weighted @ nodes)
    return float(np.sum(value @ weights)), weighted.sum(axis=2), g_Sigma, float(np.sum(grad_delta @ weights))


def _log_lik(kind, k, f, delta):
    """Value, gradient in ``f`` and gradient in ``δ`` of a group's canonical log-likelihood."""
    if kind == "rank":
        value, grad = log_top_k_canonical(f, k)
        return value, grad, np.zeros(value.shape)
    if kind == "choice":
        return log_choice_canonical(f, delta)
    return log_tie(f, delta)


#: The box of ``log δ`` (the tie threshold is optimized on the log scale).
LOG_TIE_THRESHOLD_BOUNDS = tuple(np.log(TIE_THRESHOLD_BOUNDS))


class ElboProblem:
    """``−ELBO`` and its gradient over the flat parameter vector (see the module docstring)."""

    def __init__(
        self,
        U,
        groups,
        kernel,
        jitter,
        delta,
        learn_kernel,
        learn_delta,
        log_delta_bounds=LOG_TIE_THRESHOLD_BOUNDS,
        prior_mean_U=None,
    ):
        self.U = U
        self.n = U.shape[0]
        # the prior mean m(U) of f: each group's differences d are offset by m(C[:r]) − m(C[r]),
        # a constant of the parameters (no gradient)
        self.prior_mean_U = np.zeros(self.n) if prior_mean_U is None else np.asarray(prior_mean_U, dtype=float)
        m_U = self.prior_mean_U
        self.offsets = [m_U[g.index[:, :-1]] - m_U[g.index[:, -1]][:, None] for g in groups]
        self.groups = groups
        self.kernel = kernel
        self.jitter = jitter
        self.delta = float(delta)
        self.learn_kernel = bool(learn_kernel) and kernel.n_theta > 0
        self.learn_delta = bool(learn_delta) and any(g.kind == "tie" for g in groups)
        box = [kernel.bounds] if self.learn_kernel else []
        if self.learn_delta:
            box.append(np.array([log_delta_bounds], dtype=float))
        self.box = np.vstack(box) if box else np.zeros((0, 2))  # bounds of the log-hyperparameters
        self.tril = np.tril_indices(self.n)
        self.diag_pos = np.flatnonzero(self.tril[0] == self.tril[1])
        self._fixed_chol = None if self.learn_kernel else self._chol(kernel)

    # ---- packing ------------------------------------------------------------------------------
    @property
    def n_variational(self) -> int:
        return self.n + self.tril[0].size

    def pack(self, mean_w, chol_w) -> np.ndarray:
        """Flat parameters from the whitened posterior and the problem's current hyperparameters."""
        packed = chol_w[self.tril].copy()
        packed[self.diag_pos] = np.log(np.abs(packed[self.diag_pos]))
        return np.concatenate([np.asarray(mean_w, dtype=float), packed, self.pack_hyper()])

    def pack_hyper(self) -> np.ndarray:
        """``η`` of the learned hyperparameters at their current values (empty if none is learned)."""
        log_hyper = []
        if self.learn_kernel:
            log_hyper.append(self.kernel.theta)
        if self.learn_delta:
            log_hyper.append([np.log(self.delta)])
        if not log_hyper:
            return np.zeros(0)
        lo, hi = self.box[:, 0], self.box[:, 1]
        unit = np.clip((np.concatenate(log_hyper) - lo) / (hi - lo), 1e-9, 1.0 - 1e-9)
        return np.log(unit) - np.log1p(-unit)

    def _log_hyper(self, eta):
        """Bounded log-hyperparameters and their derivatives in ``η``."""
        lo, hi = self.box[:, 0], self.box[:, 1]
        sigma = 0.5 * (1.0 + np.tanh(0.5 * eta))
        return lo + (hi - lo) * sigma, (hi - lo) * sigma * (1.0 - sigma)

    def unpack(self, x):
        """``(μ̃, L̃, kernel, δ)`` from flat parameters."""
        n = self.n
        mean_w = x[:n]
        chol_w = np.zeros((n, n))
        packed = x[n : self.n_variational].copy()
        packed[self.diag_pos] = np.exp(packed[self.diag_pos])
        chol_w[self.tril] = packed
        log_hyper, _ = self._log_hyper(x[self.n_variational :])
        kernel, delta = self.kernel, self.delta
        if self.learn_kernel:
            kernel = self.kernel.with_theta(log_hyper[: self.kernel.n_theta])
        if self.learn_delta:
            delta = float(np.exp(log_hyper[-1]))
        return mean_w, chol_w, kernel, delta

    def _chol(self, kernel):
        return np.linalg.cholesky(kernel(self.U) + self.jitter * np.eye(self.n))

    # ---- objective ----------------------------------------------------------------------------
    def elbo(self, x) -> float:
        return -self(x)[0]

    def __call__(self, x):
        """``(−ELBO, −∂ELBO/∂x)``."""
        n = self.n
        mean_w, chol_w, kernel, delta = self.unpack(x)
        LK = self._fixed_chol if self._fixed_chol is not None else self._chol(kernel)

        g_mean = -mean_w.copy()  # from −KL
        g_chol = -chol_w  # lower triangular; only its lower triangle is read below
        g_chol[np.diag_indices(n)] += 1.0 / np.diag(chol_w)
        g_LK = np.zeros((n, n)) if self.learn_kernel else None
        g_delta = 0.0
        elbo = -0.5 * (np.sum(chol_w**2) + mean_w @ mean_w - n) + np.sum(np.log(np.abs(np.diag(chol_w))))

        for group, offset in zip(self.groups, self.offsets):
            idx = group.index
            r = idx.shape[1] - 1
            D = LK[idx[:, :r]] - LK[idx[:, r]][:, None, :]  # (G, r, n)
            mu = D @ mean_w + offset  # (G, r)
            V = (D.reshape(-1, n) @ chol_w).reshape(D.shape)  # (G, r, n)
            value, g_mu, g_Sigma, grad_delta = expected_log_likelihood(group, mu, V @ np.swapaxes(V, 1, 2), delta)
            elbo += value
            g_delta += grad_delta
            g_V = 2.0 * g_Sigma @ V  # Σ = V Vᵀ
            D2 = D.reshape(-1, n)
            g_mean += g_mu.reshape(-1) @ D2
            g_chol += D2.T @ g_V.reshape(-1, n)  # upper triangle ignored
            if g_LK is not None:
                g_D = g_mu[:, :, None] * mean_w + g_V @ chol_w.T  # (G, r, n)
                np.add.at(g_LK, idx[:, :r].ravel(), g_D.reshape(-1, n))
                np.add.at(g_LK, idx[:, r], -g_D.sum(axis=1))

        g_packed = g_chol[self.tril]
        g_packed[self.diag_pos] *= np.diag(chol_w)  # diagonal stored as its log
        grads = [g_mean, g_packed]
        g_hyper = []
        if g_LK is not None:  # learn_kernel
            g_K = cholesky_backward(LK, np.tril(g_LK))
            g_hyper.append(np.einsum("ij,ijk->k", g_K, kernel.gradient_theta(self.U)))
        if self.learn_delta:
            g_hyper.append([g_delta * delta])
        if g_hyper:
            grads.append(np.concatenate(g_hyper) * self._log_hyper(x[self.n_variational :])[1])
        return -elbo, -np.concatenate([np.asarray(g, dtype=float).ravel() for g in grads])
