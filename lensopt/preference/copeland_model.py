"""Preferential Bayesian optimization over the duel space (González et al. 2017, "PBO").

An alternative to the preference kernel of METHOD.md §5: a GP classifier on the *joint* duel
inputs ``z = [x, x']`` (``2 d`` columns) with an ordinary kernel on that space, and
``p(x beats x') = π_f([x, x'])`` (González §2, eq. 2). González use the logistic link; lensopt
uses the **probit** link ``Φ``, so that the existing Laplace/EP code and the closed-form moments
of :mod:`lensopt.gp.uncertainty` apply (``E[Φ(f)] = Φ(μ / sqrt(1 + σ²))``; ``V[Φ(f)]`` by Owen's T).

Symmetry. The paper requires ``π_f([x', x]) = 1 − π_f([x, x'])`` (§2, after eq. 2). Every told
duel ``(x, x', y)`` is therefore also added as ``(x', x, 1 − y)``, and the kernel must be
invariant under swapping both arguments' halves (checked). The posterior is then invariant under
``f ↦ −f∘swap``, so the predictive mean is antisymmetric, the variance symmetric and
``π([x, x']) + π([x', x]) = 1`` exactly.

Preference part. Such a posterior also carries a *symmetric* part ``f(z) + f(swap z)`` that no
preference can reveal; it is largest on the diagonal ``x = x'``, where the mean is 0, so the
paper's ``V[σ(f)]`` would propose duels of a point against itself. The exploration variance and
the Thompson samples below therefore use the preference part ``f_a(z) = ½ (f(z) − f(swap z))``
(mean ``μ(z)``, variance ``½ (σ²(z) − cov(f(z), f(swap z)))``, zero on the diagonal).

Shapes: points ``(n, d)``; duels are two ``(n, d)`` arrays ``X_first``, ``X_second`` with labels
``preferred_first`` ``(n,)`` in ``{0, 1}`` (1 = the first member won); scores ``(n,)``.
"""

from __future__ import annotations

import copy

import numpy as np
from scipy.special import ndtr

from lensopt.gp import GPClassifier, uncertainty
from lensopt.gp.kernels import Kernel, SquaredExponential
from lensopt.gp.sampling import sample_posterior
from lensopt.optimize import MaximizerSettings, as_bounds, maximize_acquisition, scrambled_halton, uniform

DEFAULT_N_LANDMARKS = 32
"""Landmarks ``x_k`` of the soft-Copeland Monte Carlo estimate (González eq. 5); scrambled Halton."""
DEFAULT_LENGTHSCALE_FRACTION = 0.2
"""Default SE lengthscale of each column, as a fraction of that column's range (same for x and x')."""
DEFAULT_LATENT_VARIANCE = 1.0
"""Default prior variance of the duel latent ``f([x, x'])`` (prior win probabilities mostly 0.02–0.98)."""
RECENT_MEMBERS = 8
"""Members of the most recent duels offered as extra candidates to the soft-Copeland search."""
CANDIDATES_PER_DIM = 32
"""Halton candidates per searched dimension (``d`` for a point, ``2 d`` for a duel) of every search."""
SCORE_STARTS, SCORE_ITERATIONS = 2, 20
"""L-BFGS-B starts and iterations refining the Condorcet winner."""
LOCAL_CANDIDATES = 32
"""Halton points in a box around the best candidate (local refinement of gradient-free searches)."""
SAMPLE_FEATURES = 256
"""Random Fourier features of a Thompson draw of ``f`` (fewer than the sampler's default: speed)."""
PREFERENCE_CHUNK = 128
"""Duels per joint-covariance call when computing the preference part's variance."""


# ----------------------------------------------------------------------------- validation
def _as_points(X, n_dims: int, name: str) -> np.ndarray:
    try:
        X = np.asarray(X, dtype=float)
    except (TypeError, ValueError):
        raise ValueError(f"{name} must be a numeric array of shape (n, {n_dims})") from None
    if X.ndim != 2 or X.shape[1] != n_dims:
        raise ValueError(f"{name} must have shape (n, {n_dims}); got {X.shape}")
    if not np.all(np.isfinite(X)):
        raise ValueError(f"{name} contains NaN or infinite values")
    return X


def _as_duels(X_first, X_second, n_dims: int):
    A = _as_points(X_first, n_dims, "X_first")
    B = _as_points(X_second, n_dims, "X_second")
    if A.shape != B.shape:
        raise ValueError(f"X_first and X_second must have the same shape; got {A.shape} and {B.shape}")
    return A, B


def _as_outcomes(preferred_first, n: int) -> np.ndarray:
    try:
        y = np.asarray(preferred_first, dtype=float)
    except (TypeError, ValueError):
        raise ValueError("preferred_first must be an array of 0/1 labels") from None
    if y.shape != (n,):
        raise ValueError(f"preferred_first must have shape ({n},) like the duels; got {y.shape}")
    if not np.all((y == 0) | (y == 1)):
        raise ValueError("preferred_first must contain only 0/1 (1 = the first member won)")
    return y


def _swap(Z: np.ndarray, n_dims: int) -> np.ndarray:
    """``[x, x'] -> [x', x]`` row by row."""
    return np.hstack([Z[:, n_dims:], Z[:, :n_dims]])


def default_duel_kernel(bounds, lengthscales=None, variance=DEFAULT_LATENT_VARIANCE) -> Kernel:
    """SE kernel on ``[x, x']`` with the same ARD lengthscales for ``x`` and ``x'`` (in the bounds'
    units; default :data:`DEFAULT_LENGTHSCALE_FRACTION` of each column's range)."""
    box = as_bounds(bounds)
    if lengthscales is None:
        width = box[:, 1] - box[:, 0]
        lengthscales = DEFAULT_LENGTHSCALE_FRACTION * np.where(width > 0, width, 1.0)
    scales = np.broadcast_to(np.asarray(lengthscales, dtype=float), (box.shape[0],))
    return SquaredExponential(np.concatenate([scales, scales]), variance=variance)


def _check_swap_invariant(kernel: Kernel, box: np.ndarray) -> None:
    """``k(swap z, swap w) = k(z, w)``: needed for the symmetric model (module docstring)."""
    d = box.shape[0]
    Z = uniform(np.vstack([box, box]), 6, np.random.default_rng(0))
    try:
        K, K_swapped = kernel(Z), kernel(_swap(Z, d))
    except (ValueError, IndexError) as error:
        raise ValueError(f"kernel must act on the {2 * d} duel columns [x, x']: {error}") from None
    if not np.allclose(K, K_swapped, rtol=1e-10, atol=1e-12):
        raise ValueError(
            "kernel must treat x and x' alike (k(swap z, swap w) = k(z, w)); use the same lengthscales for both halves"
        )


# ------------------------------------------------------------------------------- the model
class CopelandModel:
    """Probit GP on the duel space with soft-Copeland scores (González §2).

    ``bounds``: ``[(low, high)] * d`` of ``x``; ``kernel``: on the ``2 d`` columns ``[x, x']``
    (default :func:`default_duel_kernel`); ``inference``: ``"laplace"`` or ``"ep"``;
    ``n_landmarks``/``seed``: the fixed scrambled-Halton landmarks of the score. A new model is
    the prior; :meth:`fit` conditions it on duels.
    """

    def __init__(self, bounds, kernel=None, inference="laplace", n_landmarks=DEFAULT_N_LANDMARKS, seed=0):
        self.bounds = as_bounds(bounds)
        self.n_dims = self.bounds.shape[0]
        if int(n_landmarks) != n_landmarks or n_landmarks < 1:
            raise ValueError(f"n_landmarks must be a positive integer; got {n_landmarks!r}")
        kernel = default_duel_kernel(self.bounds) if kernel is None else kernel
        if not isinstance(kernel, Kernel):
            raise ValueError(f"kernel must be a lensopt.gp.kernels.Kernel; got {type(kernel).__name__}")
        _check_swap_invariant(kernel, self.bounds)
        self.gp = GPClassifier(kernel, inference=inference)
        self.seed = seed
        self.landmarks = scrambled_halton(self.bounds, int(n_landmarks), np.random.default_rng(seed))
        self.fit(np.empty((0, self.n_dims)), np.empty((0, self.n_dims)), np.empty(0))

    def fit(self, X_first, X_second, preferred_first) -> CopelandModel:
        """Condition on duels; row ``2i`` is duel ``i``, row ``2i + 1`` its mirror (warm starts)."""
        A, B = _as_duels(X_first, X_second, self.n_dims)
        y = _as_outcomes(preferred_first, A.shape[0])
        Z = np.empty((2 * A.shape[0], 2 * self.n_dims))
        Z[0::2], Z[1::2] = np.hstack([A, B]), np.hstack([B, A])
        labels = np.empty(2 * A.shape[0])
        labels[0::2], labels[1::2] = y, 1.0 - y
        self.gp.fit(Z, labels)
        self.X_first, self.X_second, self.preferred_first = A, B, y
        return self

    @property
    def n_duels(self) -> int:
        return self.X_first.shape[0]

    def conditioned_on(self, x_first, x_second, preferred_first) -> CopelandModel:
        """A copy with one more duel (a fantasy of Copeland EI); this model is left unchanged."""
        new = copy.copy(self)
        new.gp = copy.copy(self.gp)  # fit() replaces, never mutates, the copied arrays
        return new.fit(
            np.vstack([self.X_first, x_first]),
            np.vstack([self.X_second, x_second]),
            np.append(self.preferred_first, preferred_first),
        )

    # ---- predictions ------------------------------------------------------------------
    def win_probability(self, X_first, X_second) -> np.ndarray:
        """``π([x, x']) = E[Φ(f([x, x']))] = Φ(μ / sqrt(1 + σ²))`` (González eq. 4, probit)."""
        A, B = _as_duels(X_first, X_second, self.n_dims)
        return uncertainty.probit_mean(*self.gp.predict_latent(np.hstack([A, B])))

    def preference_moments(self, X_first, X_second):
        """Mean and variance ``(n,)`` of the preference part ``f_a = ½ (f([x, x']) − f([x', x]))``."""
        A, B = _as_duels(X_first, X_second, self.n_dims)
        Z = np.hstack([A, B])
        mean, var = np.empty(len(Z)), np.empty(len(Z))
        for start in range(0, len(Z), PREFERENCE_CHUNK):
            chunk = Z[start : start + PREFERENCE_CHUNK]
            c = len(chunk)
            m, C = self.gp.predict_latent(np.vstack([chunk, _swap(chunk, self.n_dims)]), full_cov=True)
            diag = np.diagonal(C)
            mean[start : start + c] = 0.5 * (m[:c] - m[c:])
            var[start : start + c] = 0.25 * (diag[:c] + diag[c:] - 2.0 * np.diagonal(C[:c, c:]))
        return mean, np.maximum(var, 0.0)

    def preference_variance(self, X_first, X_second) -> np.ndarray:
        """``V[Φ(f_a([x, x']))]`` by Owen's T: González's ``V[σ(f)]`` (§3.1) on the preference part."""
        return uncertainty.epistemic_variance(*self.preference_moments(X_first, X_second))

    def _joint_with_landmarks(self, X: np.ndarray) -> np.ndarray:
        M = len(self.landmarks)
        return np.hstack([np.repeat(X, M, axis=0), np.tile(self.landmarks, (len(X), 1))])

    def soft_copeland(self, X) -> np.ndarray:
        """``C(x) ≈ (1/M) Σ_k π([x, x_k])`` over the landmarks (González eqs. 3 and 5)."""
        X = _as_points(X, self.n_dims, "X")
        p = uncertainty.probit_mean(*self.gp.predict_latent(self._joint_with_landmarks(X)))
        return p.reshape(len(X), -1).mean(axis=1)

    def soft_copeland_with_gradient(self, X):
        """``(C(X) (n,), ∂C/∂x (n, d))`` by the chain rule through ``Φ(μ / sqrt(1 + σ²))``."""
        X = _as_points(X, self.n_dims, "X")
        d = self.n_dims
        mu, var, dmu, dvar = self.gp.predict_latent_with_gradient(self._joint_with_landmarks(X))
        g_mu, g_var = uncertainty.probit_mean_grad(mu, var)
        grad = g_mu[:, None] * dmu[:, :d] + g_var[:, None] * dvar[:, :d]
        value = uncertainty.probit_mean(mu, var)
        return value.reshape(len(X), -1).mean(axis=1), grad.reshape(len(X), -1, d).mean(axis=1)

    def recent_members(self) -> np.ndarray:
        """Both members of the last :data:`RECENT_MEMBERS` duels, ``(m, d)``."""
        return np.vstack([self.X_first[-RECENT_MEMBERS:], self.X_second[-RECENT_MEMBERS:]])

    def condorcet_winner(self, rng=None) -> np.ndarray:
        """``x_c = argmax_x C(x)`` (González §2.2): Halton candidates + recent duels, then L-BFGS-B.

        ``rng`` defaults to one derived from ``(seed, n_duels)``, so the answer is reproducible.
        """
        rng = np.random.default_rng([self.seed, self.n_duels] if rng is None else rng)
        return _maximize_score(_PosteriorScore(self), self, rng)

    def copeland_samples(self, rng, n_samples: int = 1) -> list[CopelandSample]:
        """Posterior draws of the soft-Copeland function (González §3.3, Fig. 3), for Thompson sampling."""
        rng = np.random.default_rng(rng)
        return [
            CopelandSample(sample_posterior(self.gp, rng, SAMPLE_FEATURES), self.landmarks)
            for _ in range(int(n_samples))
        ]


class _PosteriorScore:
    """The soft-Copeland score as an acquisition for :func:`lensopt.optimize.maximize_acquisition`."""

    def __init__(self, model: CopelandModel):
        self.model = model

    def __call__(self, X):
        return self.model.soft_copeland(X)

    def value_and_gradient(self, X):
        return self.model.soft_copeland_with_gradient(X)


class CopelandSample:
    """One draw ``C̃(x) = (1/M) Σ_k Φ(f̃_a([x, x_k]))`` of the soft-Copeland function.

    ``f̃`` is a decoupled-basis posterior draw of the duel latent (:mod:`lensopt.gp.sampling`);
    ``f̃_a(z) = ½ (f̃(z) − f̃(swap z))`` is its preference part (module docstring), so a sample
    satisfies ``π̃([x, x']) + π̃([x', x]) = 1`` like the model.
    """

    def __init__(self, latent, landmarks: np.ndarray):
        self.latent, self.landmarks = latent, landmarks
        self.n_dims = landmarks.shape[1]

    def win_probability(self, X_first, X_second) -> np.ndarray:
        A, B = _as_duels(X_first, X_second, self.n_dims)
        f = self.latent(np.vstack([np.hstack([A, B]), np.hstack([B, A])]))
        return ndtr(0.5 * (f[: len(A)] - f[len(A) :]))

    def __call__(self, X) -> np.ndarray:
        X = _as_points(X, self.n_dims, "X")
        L = np.tile(self.landmarks, (len(X), 1))
        return self.win_probability(np.repeat(X, len(self.landmarks), axis=0), L).reshape(len(X), -1).mean(1)


# ------------------------------------------------------------------------------ the rules


def _maximize_score(score, model: CopelandModel, rng) -> np.ndarray:
    """Halton candidates and recent duel members, then L-BFGS-B (``score`` has a gradient)."""
    extra = model.recent_members() if model.n_duels else None
    search = MaximizerSettings(
        n_candidates=CANDIDATES_PER_DIM * model.n_dims, n_starts=SCORE_STARTS, max_iterations=SCORE_ITERATIONS
    )
    return maximize_acquisition(score, model.bounds, rng, settings=search, extra_candidates=extra)[0]


def _maximize_without_gradient(objective, box: np.ndarray, rng, extra=None, n_candidates=None) -> np.ndarray:
    """Best of Halton candidates (and ``extra``), then of Halton points in a box around it (± one
    candidate spacing): two vectorized calls. Used where no cheap gradient exists (the preference
    variance needs a cross-covariance) or where a few L-BFGS steps cost more than they gain
    (a Thompson sample's score)."""
    candidates = scrambled_halton(box, n_candidates or CANDIDATES_PER_DIM * box.shape[0], rng)
    if extra is not None and len(extra):
        candidates = np.vstack([candidates, extra])
    best = candidates[int(np.argmax(objective(candidates)))]
    half_width = (box[:, 1] - box[:, 0]) * len(candidates) ** (-1.0 / box.shape[0])
    local_box = np.column_stack([np.maximum(best - half_width, box[:, 0]), np.minimum(best + half_width, box[:, 1])])
    local = np.vstack([best, scrambled_halton(local_box, LOCAL_CANDIDATES, rng)])
    return local[int(np.argmax(objective(local)))]
