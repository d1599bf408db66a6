"""Duels through the acuity link: the clarity of a lens saturates where the letters are too large or
too small to tell lenses apart.

The probit preference model (:mod:`lensopt.preference.model`) takes the utility ``f(s, x)`` of a lens
``x`` at letter size ``s`` as a GP and answers a duel "first" with ``Φ(f(s, x₁) − f(s, x₂))``: two
lenses differ as much at any letter size. A patient's do not. Here ``f`` is the latent of the letter
task, ``P(correct | s, x) = γ + (1 − γ − λ) Φ(f(s, x))`` with ``f ≈ a (s − VA(x))`` (METHOD.md §1,
§2b), and the clarity the patient compares is its probit,

    h(f) = Φ⁻¹(γ + (1 − γ − λ) Φ(f)),      P(first | s, x₁, x₂) = Φ(h(f₁) − h(f₂)),

the utility of :meth:`lensopt.observer.SimulatedPatient.duel_utility`. ``h`` runs from ``Φ⁻¹(γ)``
(letters too small: both lenses give guesses) to ``Φ⁻¹(1 − λ)`` (letters too large: both read), so a
duel says most where the letters are near the threshold of the lenses shown — and the letter size is
chosen for that. "The same" is told as the duel answered once each way, ``Φ(Δ) Φ(−Δ)`` with
``Δ = h(f₁) − h(f₂)`` (as :meth:`lensopt.preference.PreferenceOptimizer.tell_same`).

**Inference: Laplace.** ``f`` at the distinct members ``U`` of the duels has the prior
``N(m(U), K)``; the log-likelihood ``Σ ℓ(Δᵢ)`` is not concave in ``f`` (``h`` bends), so the mode is
found by Gauss–Newton: the curvature is ``W = Σ cᵢ vᵢ vᵢᵀ`` with ``vᵢ = ∂Δᵢ/∂f`` (``h′`` at the two
members) and ``cᵢ = −ℓ″(Δᵢ) > 0`` (``log Φ`` is concave), positive semi-definite, with step halving on
the log posterior. ``W`` then stands for the Hessian in the posterior ``N(f̂, (K⁻¹ + W)⁻¹)`` (Fisher
scoring, as the floored letter likelihood's Laplace, METHOD.md §2b). Predictions at new points:
``E[f*] = m* + K*ᵀ K⁻¹ (f̂ − m)``, ``Cov[f*] = K** − K*ᵀ (I + W K)⁻¹ W K*``.

**Rankings** (:class:`AcuityLinkRankingGP`): "put these lenses in order, clearest first" is the
Plackett–Luce model on the utilities ``u = c · h(f)`` (Gumbel noise; ``c`` =
:data:`RANKING_LOGIT_SCALE`, ``σ(c Δ) ≈ Φ(Δ)``, so that two lenses of a ranking compare as a duel
does), ``P(o₁ > o₂ > … ) = Π_j exp(u_{o_j}) / Σ_{i ≥ j} exp(u_{o_i})``. ``log`` of each stage is
concave in ``u`` (a log-sum-exp), its curvature ``diag(p) − p pᵀ`` over the lenses not yet placed
(``p`` their softmax) is positive semi-definite, and through the link ``W = D C D`` with ``D =
diag(c h′)`` (Gauss–Newton, as for duels).

**Information of a duel** (BALD, Houlsby et al. 2011): ``H[E p] − E[H p]`` over the joint Gaussian
posterior of ``(f₁, f₂)``, ``p = Φ(h(f₁) − h(f₂))``, by Gauss–Hermite quadrature on a product grid
(:data:`QUADRATURE_NODES` per dimension); the answer "the same" is not in it (as the probit model's).
"""

from __future__ import annotations

import numpy as np
from numpy.polynomial.hermite_e import hermegauss
from scipy.special import log_ndtr, ndtr, ndtri

from lensopt.gp.kernels import Kernel
from lensopt.gp.likelihood import check_floor, inverse_mills
from lensopt.gp.mean import MeanFunction

#: Answers as the model takes them: +1 the first lens clearer, −1 the second, 0 "the same".
FIRST, SECOND, SAME = 1, -1, 0

#: Scale from the probit clarity to the ranking's Gumbel (multinomial logit) model: ``σ(1.702 x) ≈ Φ(x)``
#: (max error 0.01), the simulated patient's ``LOGIT_SCALE``.
RANKING_LOGIT_SCALE = 1.702

#: Gauss–Hermite nodes per dimension of the duel's information (a product grid of their square).
QUADRATURE_NODES = 16

#: Newton (Gauss–Newton) iterations at most, and the change of the log posterior that ends them.
MAX_ITERATIONS = 200
TOLERANCE = 1e-12

_TINY = 1e-300


def clarity(f, guess_rate: float, lapse_rate: float) -> np.ndarray:
    """``h(f) = Φ⁻¹(γ + κ Φ(f))`` (``κ = 1 − γ − λ``), through the tail beyond ``|f|``: the upper
    tail ``1 − P = λ + κ Φ(−f)`` for ``f > 0``, so that large letters keep their resolution when
    ``λ = 0`` (``h ≈ f`` there), and ``P = γ + κ Φ(f)`` itself for ``f ≤ 0``."""
    kappa = 1.0 - guess_rate - lapse_rate
    f = np.asarray(f, dtype=float)
    upper = f > 0.0
    tail = ndtri(np.maximum(np.where(upper, lapse_rate, guess_rate) + kappa * ndtr(-np.abs(f)), _TINY))
    return np.where(upper, -tail, tail)


def acuity_link(f, guess_rate: float, lapse_rate: float) -> tuple[np.ndarray, np.ndarray]:
    """``(h(f), h′(f))``: the clarity :func:`clarity` and its derivative ``κ φ(f) / φ(h)``."""
    check_floor(guess_rate, lapse_rate)
    kappa = 1.0 - guess_rate - lapse_rate
    f = np.asarray(f, dtype=float)
    h = clarity(f, guess_rate, lapse_rate)
    with np.errstate(over="ignore", invalid="ignore"):
        dh = kappa * np.exp(0.5 * (h - f) * (h + f))
    return h, np.where(np.isfinite(dh), dh, 0.0)


def answer_terms(delta, answers) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``(ℓ, ℓ′, −ℓ″)`` of each answer as a function of ``Δ``: ``log Φ(Δ)`` for "first" (+1),
    ``log Φ(−Δ)`` for "second" (−1), ``log Φ(Δ) + log Φ(−Δ)`` for "the same" (0)."""
    delta = np.asarray(delta, dtype=float)
    answers = np.asarray(answers)
    value, slope, curvature = np.zeros_like(delta), np.zeros_like(delta), np.zeros_like(delta)
    for sign in (1.0, -1.0):
        weight = ((answers == sign) | (answers == SAME)).astype(float)
        z = sign * delta
        r = inverse_mills(z)  # φ(z)/Φ(z)
        value += weight * log_ndtr(z)
        slope += weight * sign * r
        curvature += weight * r * (z + r)
    return value, slope, curvature


def plackett_luce_terms(u, orders) -> tuple[float, np.ndarray, np.ndarray]:
    """``(ℓ, ∂ℓ/∂u, −∂²ℓ/∂u²)`` of rankings under the Plackett–Luce model: ``u`` ``(n,)`` the
    utilities of the points, ``orders`` ``(k, m)`` each ranking's point indices, clearest first (all
    ``m`` of its lenses: the last is placed by the others). ``ℓ = Σ_rankings Σ_{j < m−1} u_{o_j} −
    log Σ_{i ≥ j} exp(u_{o_i})``; the curvature is ``Σ diag(p) − p pᵀ`` over each stage's lenses not
    yet placed (``p`` their softmax), positive semi-definite."""
    u = np.asarray(u, dtype=float)
    orders = np.asarray(orders, dtype=int)
    value, gradient, curvature = 0.0, np.zeros(u.size), np.zeros((u.size, u.size))
    for j in range(orders.shape[1] - 1):
        rest = orders[:, j:]  # (k, m − j): the lenses not yet placed, the one placed first
        z = u[rest]
        top = z.max(axis=1, keepdims=True)
        weights = np.exp(z - top)
        total = weights.sum(axis=1, keepdims=True)
        p = weights / total
        value += float(np.sum(z[:, 0] - (top[:, 0] + np.log(total[:, 0]))))
        np.add.at(gradient, rest[:, 0], 1.0)
        np.add.at(gradient, rest, -p)
        np.add.at(curvature, (rest, rest), p)
        np.add.at(curvature, (rest[:, :, None], rest[:, None, :]), -p[:, :, None] * p[:, None, :])
    return value, gradient, curvature


def check_orders(orders, n_points: int) -> np.ndarray:
    """``orders`` as a ``(k, m)`` integer array: each row ``m ≥ 2`` distinct indices of the ``n_points`` points."""
    orders = np.asarray(orders)
    if orders.ndim != 2 or orders.shape[1] < 2 or not np.issubdtype(orders.dtype, np.integer):
        raise ValueError("orders must be a (rankings, lenses) array of point indices, clearest first, 2 lenses or more")
    if orders.size and (orders.min() < 0 or orders.max() >= n_points):
        raise ValueError(f"orders must index the {n_points} points")
    if any(len(set(row)) != len(row) for row in orders.tolist()):
        raise ValueError("a ranking must order distinct points")
    return orders.astype(int)


def check_answers(answers) -> np.ndarray:
    answers = np.asarray(answers)
    if answers.ndim != 1 or not np.all(np.isin(answers, (FIRST, SECOND, SAME))):
        raise ValueError("answers must be +1 (first clearer), -1 (second) or 0 (the same)")
    return answers.astype(int)


class AcuityLinkDuelGP:
    """Duels through the acuity link (module docstring): ``kernel`` and ``mean`` of the letter latent
    ``f`` on ``[letter_logmar, x...]``, the guess and lapse rates of the link, a jitter on ``K``.

    ``fit(points, pairs, answers)``: ``points`` ``(n, d)`` the distinct members, ``pairs`` ``(k, 2)``
    row indices of each duel's first and second lens, ``answers`` ``(k,)`` +1/−1/0."""

    def __init__(self, kernel: Kernel, mean: MeanFunction, guess_rate: float, lapse_rate: float, jitter=1e-6):
        check_floor(guess_rate, lapse_rate)
        if not isinstance(mean, MeanFunction):
            raise ValueError(f"mean must be a MeanFunction (e.g. an AcuityLawMean), got {mean!r}")
        self.kernel, self.mean = kernel, mean
        self.guess_rate, self.lapse_rate, self.jitter = float(guess_rate), float(lapse_rate), float(jitter)
        self.points_ = np.zeros((0, 0))
        self.f_ = np.zeros(0)

    # ---------------------------------------------------------------- fitting
    def link(self, f):
        return acuity_link(f, self.guess_rate, self.lapse_rate)

    def _parts(self, f, pairs, answers):
        h, dh = self.link(f)
        delta = h[pairs[:, 0]] - h[pairs[:, 1]]
        value, slope, curvature = answer_terms(delta, answers)
        rows = np.arange(len(pairs))
        V = np.zeros((len(pairs), f.size))
        np.add.at(V, (rows, pairs[:, 0]), dh[pairs[:, 0]])
        np.add.at(V, (rows, pairs[:, 1]), -dh[pairs[:, 1]])
        return value.sum(), V.T @ slope, V.T @ (curvature[:, None] * V)

    def _likelihood(self, f):
        """``(Σ ℓ, ∂/∂f, W)`` of the fitted answers at ``f`` (:meth:`_parts` of the duels)."""
        return self._parts(f, self.pairs_, self.answers_)

    def log_posterior(self, f) -> float:
        """``Σ ℓ(Δᵢ) − ½ (f − m)ᵀ K⁻¹ (f − m)`` at ``f`` on the fitted points (up to a constant)."""
        r = np.asarray(f, dtype=float) - self._m
        return float(self._likelihood(np.asarray(f, dtype=float))[0] - 0.5 * r @ np.linalg.solve(self._K, r))

    def fit(self, points, pairs, answers) -> AcuityLinkDuelGP:
        points = np.atleast_2d(np.asarray(points, dtype=float))
        pairs = np.asarray(pairs, dtype=int).reshape(-1, 2)
        answers = check_answers(answers)
        if len(pairs) != len(answers):
            raise ValueError(f"{len(pairs)} duels but {len(answers)} answers")
        if pairs.size and (pairs.min() < 0 or pairs.max() >= len(points) or np.any(pairs[:, 0] == pairs[:, 1])):
            raise ValueError("pairs must index two different rows of points")
        self.points_, self.pairs_, self.answers_ = points, pairs, answers
        return self._fit_mode()

    def _fit_mode(self):
        """The Laplace mode by Gauss–Newton on the answers of :meth:`_likelihood` (module docstring)."""
        points = self.points_
        n = len(points)
        self._K = self.kernel(points) + self.jitter * np.eye(n)
        self._m = self.mean(points)
        f = self._m.copy()
        objective = self.log_posterior(f)
        W = np.zeros((n, n))
        for _ in range(MAX_ITERATIONS):
            _, gradient, W = self._likelihood(f)
            z = np.linalg.solve(np.eye(n) + W @ self._K, W @ (f - self._m) + gradient)
            proposal = self._m + self._K @ z
            step, value = 1.0, self.log_posterior(proposal)
            while value < objective and step > 1e-4:
                step *= 0.5
                value = self.log_posterior(f + step * (proposal - f))
            if value < objective:
                break
            f, change, objective = f + step * (proposal - f), value - objective, value
            if change < TOLERANCE:
                break
        self.f_ = f
        _, _, W = self._likelihood(f)
        self._alpha = np.linalg.solve(self._K, f - self._m)
        self._reduction = np.linalg.solve(np.eye(n) + W @ self._K, W)  # (I + W K)⁻¹ W
        return self

    # ---------------------------------------------------------------- predictions
    def _fitted(self) -> bool:
        return self.f_.size > 0

    def predict(self, X, full_cov: bool = False):
        """Posterior mean ``(n,)`` and variance ``(n,)`` (or covariance ``(n, n)``) of ``f`` at ``X``."""
        X = np.atleast_2d(np.asarray(X, dtype=float))
        mean = self.mean(X)
        prior = self.kernel(X) if full_cov else self.kernel.diag(X)
        if not self._fitted():
            return mean, prior
        Ks = self.kernel(self.points_, X)
        mean = mean + Ks.T @ self._alpha
        if full_cov:
            return mean, prior - Ks.T @ self._reduction @ Ks
        return mean, prior - np.einsum("ij,ij->j", Ks, self._reduction @ Ks)

    def predict_mean_with_gradient(self, X):
        """Posterior mean ``(n,)`` of ``f`` at ``X`` and its gradient ``(n, d)``."""
        X = np.atleast_2d(np.asarray(X, dtype=float))
        mean, gradient = self.mean(X), self.mean.gradient(X)
        if not self._fitted():
            return mean, gradient
        Ks = self.kernel(X, self.points_)
        dK = self.kernel.gradient_x(X, self.points_)  # (n, m, d)
        return mean + Ks @ self._alpha, gradient + np.einsum("nmd,m->nd", dK, self._alpha)

    def pair_moments(self, X1, X2):
        """``(μ₁, μ₂, v₁, v₂, c₁₂)``: the joint Gaussian posterior of ``f`` at the rows of ``X1`` and
        ``X2`` taken in pairs."""
        X1 = np.atleast_2d(np.asarray(X1, dtype=float))
        X2 = np.atleast_2d(np.asarray(X2, dtype=float))
        mu1, mu2 = self.mean(X1), self.mean(X2)
        v1, v2 = self.kernel.diag(X1), self.kernel.diag(X2)
        c12 = _paired_cov(self.kernel, X1, X2)
        if self._fitted():
            unique, inverse = np.unique(X1, axis=0, return_inverse=True)
            K1, K2 = self.kernel(self.points_, unique)[:, np.asarray(inverse).ravel()], self.kernel(self.points_, X2)
            R2 = self._reduction @ K2
            mu1, mu2 = mu1 + K1.T @ self._alpha, mu2 + K2.T @ self._alpha
            v1 = v1 - np.einsum("ij,ij->j", K1, self._reduction @ K1)
            v2 = v2 - np.einsum("ij,ij->j", K2, R2)
            c12 = c12 - np.einsum("ij,ij->j", K1, R2)
        return mu1, mu2, np.maximum(v1, 0.0), np.maximum(v2, 0.0), c12

    def duel_probability_draws(self, X1, X2, nodes: int = QUADRATURE_NODES):
        """``(p, w)``: ``P(first)`` at the Gauss–Hermite nodes of ``(f₁, f₂)`` ``(q, n)`` and their
        weights ``(q,)``. The grid lies along the principal axes of each pair's 2 × 2 posterior
        covariance, so that swapping the two lenses gives ``1 − P`` exactly."""
        mu1, mu2, v1, v2, c12 = self.pair_moments(X1, X2)
        z, w = hermegauss(nodes)
        w = w / w.sum()
        z1, z2 = (a.ravel()[:, None] for a in np.meshgrid(z, z, indexing="ij"))
        weights = np.outer(w, w).ravel()
        half_gap = 0.5 * (v1 - v2)
        radius = np.hypot(half_gap, c12)
        centre = 0.5 * (v1 + v2)
        major, minor = np.sqrt(centre + radius), np.sqrt(np.maximum(centre - radius, 0.0))
        angle = 0.5 * np.arctan2(c12, half_gap)  # of the major axis from the f₁ axis
        cos, sin = np.cos(angle), np.sin(angle)
        f1 = mu1 + major * cos * z1 - minor * sin * z2
        f2 = mu2 + major * sin * z1 + minor * cos * z2
        g, lam = self.guess_rate, self.lapse_rate  # the clarity alone: h′ is not needed here
        return ndtr(clarity(f1, g, lam) - clarity(f2, g, lam)), weights

    def duel_probability(self, X1, X2) -> np.ndarray:
        """``P(first)`` ``(n,)`` of the duels ``(X1[i], X2[i])``, averaged over the posterior."""
        p, w = self.duel_probability_draws(X1, X2)
        return w @ p

    def duel_bald(self, X1, X2) -> np.ndarray:
        """Mutual information (bits) between each duel's answer and ``f`` (module docstring)."""
        p, w = self.duel_probability_draws(X1, X2)
        return _binary_entropy_bits(w @ p) - w @ _binary_entropy_bits(p)


class AcuityLinkRankingGP(AcuityLinkDuelGP):
    """Rankings through the acuity link (module docstring): the duel model's latent, prior, Laplace
    fit and predictions, with the Plackett–Luce likelihood of ``u = logit_scale · h(f)``.

    ``fit(points, orders)``: ``points`` ``(n, d)`` the distinct lenses at their letter sizes,
    ``orders`` ``(k, m)`` each ranking's rows of ``points``, clearest first."""

    def __init__(
        self,
        kernel: Kernel,
        mean: MeanFunction,
        guess_rate: float,
        lapse_rate: float,
        jitter=1e-6,
        logit_scale: float = RANKING_LOGIT_SCALE,
    ):
        super().__init__(kernel, mean, guess_rate, lapse_rate, jitter)
        self.logit_scale = float(logit_scale)

    def fit(self, points, orders) -> AcuityLinkRankingGP:  # type: ignore[override]
        points = np.atleast_2d(np.asarray(points, dtype=float))
        self.points_, self.orders_ = points, check_orders(orders, len(points))
        self._fit_mode()
        return self

    def _likelihood(self, f):
        h, dh = self.link(f)
        value, gradient, curvature = plackett_luce_terms(self.logit_scale * h, self.orders_)
        d = self.logit_scale * dh
        return value, d * gradient, d[:, None] * curvature * d[None, :]


def _paired_cov(kernel: Kernel, X1, X2) -> np.ndarray:
    """``k(X1[i], X2[i])`` ``(n,)`` without the ``(n, n)`` matrix: through the distinct rows of
    ``X1`` (a duel's candidates share their first lens), in blocks when they are many."""
    unique, inverse = np.unique(X1, axis=0, return_inverse=True)
    inverse = np.asarray(inverse).ravel()
    if len(unique) <= 64:
        return kernel(unique, X2)[inverse, np.arange(len(X2))]
    out = np.empty(len(X1))
    for i in range(0, len(X1), 256):
        out[i : i + 256] = np.diagonal(kernel(X1[i : i + 256], X2[i : i + 256]))
    return out


def _binary_entropy_bits(p) -> np.ndarray:
    p = np.clip(np.asarray(p, dtype=float), 1e-15, 1.0 - 1e-15)
    return -(p * np.log2(p) + (1.0 - p) * np.log2(1.0 - p))


__all__ = [
    "FIRST",
    "RANKING_LOGIT_SCALE",
    "SAME",
    "SECOND",
    "AcuityLinkDuelGP",
    "AcuityLinkRankingGP",
    "acuity_link",
    "answer_terms",
    "clarity",
    "plackett_luce_terms",
]
