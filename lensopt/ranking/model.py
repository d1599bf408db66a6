"""The ranking GP: a latent utility ``f ~ GP(m, k)`` seen through rankings and ties (Nguyen et al. 2021).

Inputs are ``[s, x]`` (context columns first, then the system parameters). Observations
(:class:`~lensopt.ranking.data.RankingObservation`) are top-k rankings (Plackett–Luce, eq. 3) or
top-1 choices with ties (eqs. 1 and 4) of small compared sets. The posterior over the latent values
at the distinct compared inputs ``U`` is the Gaussian ``q(f_U) = N(m, LLᵀ)`` maximizing the ELBO
(eq. 5; :mod:`lensopt.ranking.variational`), by L-BFGS-B with analytic gradients; the tie threshold
δ and the kernel's log-hyperparameters can be learned by the same maximization.

Prediction at new inputs uses ``U`` as inducing points (paper eq. 6):
``μ(X) = K_XU K⁻¹ m``, ``Σ(X) = K_XX − K_XU K⁻¹ K_UX + K_XU K⁻¹ S K⁻¹ K_UX``; in whitened form, with
``A = L_K⁻¹ K_UX``, ``μ = Aᵀ μ̃`` and ``Σ = K_XX − AᵀA + (L̃ᵀA)ᵀ(L̃ᵀA)``.

The prior mean ``m`` is 0 in the paper; a :class:`lensopt.gp.mean.MeanFunction` (``prior_mean``,
e.g. a bowl about a starting lens) is added to every prediction and draw, and offsets the
differences the likelihood sees; the variational parameters stay those of ``f − m``.
"""

from __future__ import annotations

import numpy as np
from scipy.linalg import solve_triangular
from scipy.optimize import minimize

from lensopt.gp.kernels import Kernel
from lensopt.gp.mean import MeanFunction, values, values_and_gradient
from lensopt.gp.sampling import prior_feature_map
from lensopt.ranking.data import RankingObservation
from lensopt.ranking.likelihood import TIE_THRESHOLD_BOUNDS, outcome_probabilities
from lensopt.ranking.variational import ElboProblem, build_groups

DEFAULT_JITTER = 1e-6
"""Added to the diagonal of ``K_UU`` before its Cholesky factor."""

DEFAULT_TIE_THRESHOLD = 0.5
"""Starting (or fixed) tie threshold δ, in units of the latent utility (the Gumbel scale is 1)."""

MAX_ITERATIONS = 400
"""L-BFGS-B iterations of one ELBO maximization."""

GRADIENT_TOLERANCE = 1e-5
"""L-BFGS-B stops when every projected gradient component of −ELBO is below this."""

SAMPLE_JITTER = 1e-9
"""Relative jitter on a predictive covariance before drawing joint samples from it."""

SAMPLE_JITTER_TRIES = 6
"""Times that jitter is multiplied by 10 before falling back to an eigendecomposition."""


def _as_inputs(X, name="X") -> np.ndarray:
    X = np.asarray(X, dtype=float)
    if X.ndim != 2:
        raise ValueError(f"{name} must be a 2-D array (n_points, n_dims); got shape {X.shape}")
    if not np.all(np.isfinite(X)):
        raise ValueError(f"{name} must be finite")
    return X


class RankingGP:
    """Variational GP on rankings and ties of compared sets.

    ``kernel``: covariance of ``f`` on ``[s, x]``; ``tie_threshold``: δ (start value when learned);
    ``learn_kernel`` / ``learn_tie_threshold``: maximize the ELBO over them too (bounded in log
    space: ``kernel.bounds`` and :data:`TIE_THRESHOLD_BOUNDS`); δ is learned only once a tie has
    been observed (before, the bound only grows as δ shrinks and would pin it to its lower
    bound); ``jitter``: on ``K_UU``; ``prior_mean``: the prior mean of ``f`` (a
    :class:`lensopt.gp.mean.MeanFunction`; None: 0).
    """

    def __init__(
        self,
        kernel: Kernel,
        tie_threshold: float = DEFAULT_TIE_THRESHOLD,
        learn_kernel: bool = False,
        learn_tie_threshold: bool = False,
        jitter: float = DEFAULT_JITTER,
        max_iterations: int = MAX_ITERATIONS,
        prior_mean: MeanFunction | None = None,
    ):
        if not isinstance(kernel, Kernel):
            raise ValueError(f"kernel must be a lensopt.gp.kernels.Kernel; got {type(kernel).__name__}")
        lo, hi = TIE_THRESHOLD_BOUNDS
        if not lo <= float(tie_threshold) <= hi:
            raise ValueError(f"tie_threshold must be in [{lo}, {hi}]; got {tie_threshold!r}")
        if int(max_iterations) < 1:
            raise ValueError(f"max_iterations must be >= 1; got {max_iterations!r}")
        if prior_mean is not None and not isinstance(prior_mean, MeanFunction):
            raise ValueError(f"prior_mean must be a MeanFunction or None, got {prior_mean!r}")
        self.prior_mean = prior_mean
        self.kernel = kernel
        self.tie_threshold = float(tie_threshold)
        self.learn_kernel = bool(learn_kernel)
        self.learn_tie_threshold = bool(learn_tie_threshold)
        self.jitter = float(jitter)
        self.max_iterations = int(max_iterations)
        self.kernel_ = kernel
        self.tie_threshold_ = self.tie_threshold
        self.observations_: list[RankingObservation] = []
        self.inputs_: np.ndarray | None = None  # U (n, n_dims)
        self.mean_whitened_ = np.zeros(0)
        self.chol_whitened_ = np.zeros((0, 0))
        self.elbo_ = 0.0
        self.n_iterations_ = 0
        self._chol_K = np.zeros((0, 0))

    # ---- fitting ------------------------------------------------------------------------------
    def fit(self, observations, warm_start: bool = True, callback=None) -> RankingGP:
        """Maximize the ELBO given ``observations`` (a sequence of :class:`RankingObservation`).

        ``warm_start``: when the new observations extend the previous ones, start from the previous
        posterior (new inputs at their prior: ``U`` keeps its first rows, so ``L_K`` does too) and
        hyperparameters; otherwise from the prior (``μ̃ = 0``, ``L̃ = I``) and the constructor's
        hyperparameters. ``callback(iteration, elbo)`` is called after every L-BFGS-B iteration.
        """
        observations = list(observations)
        for i, obs in enumerate(observations):
            if not isinstance(obs, RankingObservation):
                raise ValueError(f"observation {i} must be a RankingObservation; got {type(obs).__name__}")
        if observations:
            widths = {obs.inputs.shape[1] for obs in observations}
            if len(widths) != 1:
                raise ValueError(f"every observation needs the same number of input columns; got {sorted(widths)}")
        U, row_of = _distinct_inputs(observations)
        n = U.shape[0]
        previous = self.observations_
        extends = (
            warm_start
            and self.inputs_ is not None
            and len(previous) <= len(observations)
            and all(_same(a, b) for a, b in zip(previous, observations))
        )
        if not extends:
            self.kernel_, self.tie_threshold_ = self.kernel, self.tie_threshold
        self.observations_ = observations
        self.inputs_ = U
        if n == 0:
            self.mean_whitened_, self.chol_whitened_, self._chol_K = np.zeros(0), np.zeros((0, 0)), np.zeros((0, 0))
            self.elbo_, self.n_iterations_ = 0.0, 0
            return self

        problem = ElboProblem(
            U,
            build_groups(observations, row_of),
            self.kernel_,
            self.jitter,
            self.tie_threshold_,
            self.learn_kernel,
            self.learn_tie_threshold,
            np.log(TIE_THRESHOLD_BOUNDS),
            prior_mean_U=self._mean(U),
        )
        mean_w, chol_w = np.zeros(n), np.eye(n)
        if extends:
            p = self.mean_whitened_.size
            mean_w[:p], chol_w[:p, :p] = self.mean_whitened_, self.chol_whitened_
        x0 = problem.pack(mean_w, chol_w)
        iteration = [0]

        def report(intermediate_result):
            iteration[0] += 1
            if callback is not None:
                callback(iteration[0], -float(intermediate_result.fun))

        result = minimize(
            problem,
            x0,
            jac=True,
            method="L-BFGS-B",
            callback=report,
            options={"maxiter": self.max_iterations, "gtol": GRADIENT_TOLERANCE},
        )
        mean_w, chol_w, kernel, delta = problem.unpack(result.x)
        self._chol_K = np.linalg.cholesky(kernel(U) + self.jitter * np.eye(n))
        self.kernel_, self.tie_threshold_ = kernel, delta
        self.mean_whitened_, self.chol_whitened_ = mean_w, chol_w
        self.elbo_, self.n_iterations_ = -float(result.fun), int(result.nit)
        return self

    def elbo(self, observations=None) -> float:
        """The ELBO of the current posterior and hyperparameters (on the fitted observations)."""
        observations = self.observations_ if observations is None else list(observations)
        U, row_of = _distinct_inputs(observations)
        if self.inputs_ is None or not np.array_equal(U, self.inputs_):
            raise ValueError("elbo() is defined on the fitted observations' inputs; refit first")
        problem = ElboProblem(
            U,
            build_groups(observations, row_of),
            self.kernel_,
            self.jitter,
            self.tie_threshold_,
            False,
            False,
            prior_mean_U=self._mean(U),
        )
        return problem.elbo(problem.pack(self.mean_whitened_, self.chol_whitened_))

    # ---- posterior at the training inputs -----------------------------------------------------
    def training_posterior(self) -> tuple[np.ndarray, np.ndarray]:
        """``(m (n,), S (n, n))`` of ``q(f_U)`` (the prior mean included)."""
        L = self._chol_K @ self.chol_whitened_
        return self._mean(self.inputs_) + self._chol_K @ self.mean_whitened_, L @ L.T

    def _mean(self, X) -> np.ndarray:
        """The prior mean ``m(X)`` ``(N,)`` (zeros without one)."""
        return values(self.prior_mean, X)

    # ---- prediction ---------------------------------------------------------------------------
    def _check_columns(self, X):
        if self.inputs_ is not None and self.inputs_.shape[0] and X.shape[1] != self.inputs_.shape[1]:
            raise ValueError(f"X has {X.shape[1]} columns; the model was fitted on {self.inputs_.shape[1]}")

    def _whitened_cross(self, X):
        """``A = L_K⁻¹ K_UX`` ``(n, N)`` and ``B = L̃ᵀ A``."""
        A = solve_triangular(self._chol_K, self.kernel_(self.inputs_, X), lower=True)
        return A, self.chol_whitened_.T @ A

    def predict(self, X, full_cov: bool = False):
        """Posterior latent mean ``(N,)`` and variance ``(N,)`` (or covariance ``(N, N)``) at ``X``."""
        X = _as_inputs(X)
        self._check_columns(X)
        prior = self.kernel_(X) if full_cov else self.kernel_.diag(X)
        if self.inputs_ is None or self.inputs_.shape[0] == 0:
            return self._mean(X), prior
        A, B = self._whitened_cross(X)
        mean = self._mean(X) + A.T @ self.mean_whitened_
        if full_cov:
            return mean, prior - A.T @ A + B.T @ B
        return mean, np.maximum(prior - np.sum(A * A, axis=0) + np.sum(B * B, axis=0), 0.0)

    def predict_mean_with_gradient(self, X):
        """``(μ (N,), ∂μ/∂X (N, n_dims))``."""
        X = _as_inputs(X)
        self._check_columns(X)
        mean0, grad0 = values_and_gradient(self.prior_mean, X)
        if self.inputs_ is None or self.inputs_.shape[0] == 0:
            return mean0, grad0
        beta = solve_triangular(self._chol_K, self.mean_whitened_, lower=True, trans="T")  # K⁻¹ m
        grad = np.einsum("nud,u->nd", self.kernel_.gradient_x(X, self.inputs_), beta)
        return mean0 + self.kernel_(X, self.inputs_) @ beta, grad0 + grad

    def sample_joint(self, X, n_samples: int, rng) -> np.ndarray:
        """``n_samples`` joint draws of ``f(X)`` from the predictive ``(n_samples, N)``."""
        mean, cov = self.predict(X, full_cov=True)
        return mean + rng.standard_normal((n_samples, mean.size)) @ _psd_factor(cov).T

    def outcome_probabilities(
        self, X_set, outcomes, ties_allowed: bool | None = None, n_samples: int = 4096, rng=0
    ) -> np.ndarray:
        """``p(o | D)`` for each outcome of comparing the rows of ``X_set`` ``(m, n_dims)``: Monte Carlo
        over the joint predictive of ``f(X_set)`` with the closed forms of eqs. 1, 3 and 4.
        ``ties_allowed``: whether "same" was a possible answer (None: whether ``outcomes`` lists it)."""
        X_set = _as_inputs(X_set, "X_set")
        f = self.sample_joint(X_set, int(n_samples), np.random.default_rng(rng))
        ties = any(isinstance(o, str) for o in outcomes) if ties_allowed is None else bool(ties_allowed)
        return outcome_probabilities(f, outcomes, self.tie_threshold_, ties).mean(axis=0)

    def sample_functions(self, n_samples: int, rng, n_features: int = 512) -> PathwiseSamples:
        """``n_samples`` posterior functions by decoupled bases (Wilson et al. 2020): the prior mean
        plus a random Fourier prior draw ``φ(·)ᵀw`` plus ``k(·, U) K⁻¹ (f_U − m(U) − φ(U)ᵀw − ε)``,
        ``f_U ~ q``, ``ε ~ N(0, jitter·I)``."""
        rng = np.random.default_rng(rng)
        n_dims = None if self.inputs_ is None else self.inputs_.shape[1]
        features = prior_feature_map(self.kernel_, n_features, rng, n_dims=n_dims)
        weights = rng.standard_normal((features.n_features, n_samples))
        if self.inputs_ is None or self.inputs_.shape[0] == 0:
            return PathwiseSamples(features, weights, mean=self.prior_mean)
        n = self.inputs_.shape[0]
        # draws of f_U − m(U)
        f_U = self._chol_K @ (self.mean_whitened_[:, None] + self.chol_whitened_ @ rng.standard_normal((n, n_samples)))
        residual = f_U - features(self.inputs_) @ weights - np.sqrt(self.jitter) * rng.standard_normal((n, n_samples))
        half = solve_triangular(self._chol_K, residual, lower=True)
        update = solve_triangular(self._chol_K, half, lower=True, trans="T")  # K⁻¹ residual
        return PathwiseSamples(features, weights, self.kernel_, self.inputs_, update, mean=self.prior_mean)


class PathwiseSamples:
    """Several posterior functions at once: call on ``X`` ``(N, n_dims)`` to get ``(N, n_samples)``
    (``mean``: the prior mean, a :class:`lensopt.gp.mean.MeanFunction`, or None)."""

    def __init__(self, features, weights, kernel=None, inputs=None, update=None, mean=None):
        self.features, self.weights = features, weights
        self.kernel, self.inputs, self.update = kernel, inputs, update
        self.mean = mean

    @property
    def n_samples(self) -> int:
        return self.weights.shape[1]

    def __call__(self, X) -> np.ndarray:
        X = _as_inputs(X)
        value = self.features(X) @ self.weights
        if self.update is not None:
            value += self.kernel(X, self.inputs) @ self.update
        if self.mean is not None:
            value += self.mean(X)[:, None]
        return value


def _same(a: RankingObservation, b: RankingObservation) -> bool:
    return a is b or (
        a.outcome == b.outcome and a.ties_allowed == b.ties_allowed and np.array_equal(a.inputs, b.inputs)
    )


def _distinct_inputs(observations):
    """``U`` (distinct input rows in order of first appearance) and a row → index map."""
    index: dict[bytes, int] = {}
    rows: list[np.ndarray] = []
    for obs in observations:
        for row in obs.inputs:
            key = row.tobytes()
            if key not in index:
                index[key] = len(rows)
                rows.append(row)
    width = observations[0].inputs.shape[1] if observations else 0
    U = np.array(rows, dtype=float).reshape(len(rows), width)
    return U, lambda row: index[np.asarray(row, dtype=float).tobytes()]


def _psd_factor(cov):
    """A factor ``F`` with ``F Fᵀ ≈ cov``: the Cholesky factor after a relative jitter grown tenfold
    up to :data:`SAMPLE_JITTER_TRIES` times, else (not triangular) eigenvectors scaled by the
    square roots of the eigenvalues clipped at 0."""
    scale = max(float(np.mean(np.diag(cov))) if cov.size else 1.0, 1e-12)
    eye = np.eye(cov.shape[0])
    for i in range(SAMPLE_JITTER_TRIES):
        try:
            return np.linalg.cholesky(cov + SAMPLE_JITTER * 10.0**i * scale * eye)
        except np.linalg.LinAlgError:
            continue
    values, vectors = np.linalg.eigh(cov)
    return vectors * np.sqrt(np.clip(values, 0.0, None))
