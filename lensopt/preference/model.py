"""GP preference learning: a probit GP classifier on duels, read back as a utility.

``P(c = 1 | s, x, x') = Φ(g(s, x, x'))`` with ``g = f(s, x) − f(s, x')`` and ``f ~ GP(0, k)``
(companion paper §2.2, seed paper eq. 11): the duel value ``g`` is a GP with the preference kernel
(:mod:`lensopt.preference.kernel`), so Laplace or EP inference is that of
:class:`lensopt.gp.GPClassifier` on duel inputs. The utility at new points follows from the same
Gaussian posterior through the cross-covariance ``k_fg``:
``E[f(a)] = k_fg(a, Z) α``, ``V[f(a)] = k(a, a) − k_fg(a, Z) R k_fg(Z, a)`` (R&W Algorithm 3.2 with
``k*`` replaced by ``k_fg``).

With a prior mean ``m`` of the utility (``utility_mean``, a :class:`lensopt.gp.mean.MeanFunction`,
e.g. a bowl about a starting lens), ``f ~ GP(m, k)`` and ``g`` has the prior mean
``m(s, x) − m(s, x')`` (:class:`DuelMean`); the utility's posterior mean is ``m(a) + k_fg(a, Z) α``.

Shapes: duel inputs ``Z`` are ``(n, n_context + 2 d)`` (``[s, x, x']``), utility inputs ``X`` are
``(n, n_context + d)`` (``[s, x]``), labels ``y`` are 1 when the first member was preferred.
"""

from __future__ import annotations

import numpy as np

from lensopt.gp import uncertainty
from lensopt.gp.classifier import DEFAULT_JITTER, GPClassifier, _validate_X
from lensopt.gp.kernels import Kernel
from lensopt.gp.mean import MeanFunction, values, values_and_gradient
from lensopt.gp.sampling import DEFAULT_N_FEATURES
from lensopt.preference.kernel import PreferenceKernel
from lensopt.preference.sampling import UtilitySample, sample_utility


class DuelMean(MeanFunction):
    """The prior mean of the duel value ``g(s, x, x') = f(s, x) − f(s, x')`` when the utility has the
    prior mean ``utility``: ``m(s, x) − m(s, x')``, on duel inputs ``[s, x, x']``."""

    def __init__(self, utility: MeanFunction, kernel: PreferenceKernel):
        self.utility = utility
        self._kernel = kernel  # splits duel inputs into their members' utility inputs

    def __call__(self, Z) -> np.ndarray:
        A, A2 = self._kernel.split(Z)
        return self.utility(A) - self.utility(A2)

    def gradient(self, Z) -> np.ndarray:
        """``∂g/∂Z`` ``(n, k + 2d)``: the first member's gradient on ``[s, x]``, minus the second's
        on ``[s, x']`` (both on the shared context ``s``)."""
        A, A2 = self._kernel.split(Z)
        k, d = self._kernel.n_context, A.shape[1] - self._kernel.n_context
        first, second = self.utility.gradient(A), self.utility.gradient(A2)
        return np.hstack([first[:, :k] - second[:, :k], first[:, k:], -second[:, k : k + d]])


class _DuelClassifier(GPClassifier):
    """A :class:`GPClassifier` that also predicts from a cross-covariance it is handed."""

    #: Built with a PreferenceKernel, whose ``with_theta`` (the only change of ``kernel_``) is one too.
    kernel_: PreferenceKernel

    def predict_from_cross(self, K_cross, prior, full_cov):
        """Mean and variance (or covariance) given ``K_cross`` ``(n_train, m)`` and the prior
        variances ``(m,)`` (or covariance ``(m, m)``) at the new points."""
        if self._fitted_inputs().shape[0] == 0:
            return np.zeros(K_cross.shape[1]), prior.copy()
        if full_cov:
            return self._fitted_posterior().predict_full(K_cross, prior)
        return self._fitted_posterior().predict(K_cross, prior)

    def weights_and_reduction(self, K_cross):
        """``(α, R K_cross)``: predictive weights and the variance-reduction term."""
        posterior = self._fitted_posterior()
        return posterior.alpha, posterior.reduction(K_cross)


class PreferenceGP:
    """Probit preference model ``P(first preferred) = Φ(f(s, x) − f(s, x'))``, ``f ~ GP(m, k)``.

    ``base_kernel``: covariance ``k`` of the utility on ``[s, x]`` (context columns first);
    ``n_context``: number of context columns (0 for plain preferential BO); ``inference``:
    ``"laplace"`` or ``"ep"``; ``jitter``: added to the diagonal of ``k_g(Z, Z)``;
    ``utility_mean``: the utility's prior mean ``m`` (a :class:`lensopt.gp.mean.MeanFunction`;
    None: 0, as in the papers).
    """

    def __init__(
        self,
        base_kernel: Kernel,
        n_context: int = 0,
        inference: str = "laplace",
        jitter: float = DEFAULT_JITTER,
        utility_mean: MeanFunction | None = None,
    ):
        if utility_mean is not None and not isinstance(utility_mean, MeanFunction):
            raise ValueError(f"utility_mean must be a MeanFunction or None, got {utility_mean!r}")
        kernel = PreferenceKernel(base_kernel, n_context)
        self.utility_mean = utility_mean
        prior_mean = 0.0 if utility_mean is None else DuelMean(utility_mean, kernel)
        self.classifier = _DuelClassifier(kernel, inference, jitter, prior_mean=prior_mean)
        self.n_system_: int | None = None

    # ---- attributes ---------------------------------------------------------------------------
    @property
    def kernel(self) -> PreferenceKernel:
        """The preference kernel (its ``base`` is the utility kernel; changes after a re-fit)."""
        return self.classifier.kernel_

    @property
    def base_kernel(self) -> Kernel:
        return self.kernel.base

    @property
    def n_context(self) -> int:
        return self.kernel.n_context

    @property
    def inference(self) -> str:
        return self.classifier.inference

    @property
    def jitter(self) -> float:
        return self.classifier.jitter

    @property
    def Z_train_(self) -> np.ndarray | None:
        return self.classifier.X_train_

    @property
    def y_train_(self) -> np.ndarray | None:
        return self.classifier.y_train_

    # ---- fitting ------------------------------------------------------------------------------
    def _validate_duels(self, Z, name="Z") -> np.ndarray:
        Z = _validate_X(Z, name)
        d = self.kernel.n_system(Z.shape[1])
        if self.n_system_ is not None and d != self.n_system_ and self.Z_train_ is not None:
            raise ValueError(f"{name} has {d} system columns per member but the model was fitted on {self.n_system_}")
        return Z

    def fit(self, Z, y) -> PreferenceGP:
        """Condition on duels ``Z`` ``(n, k + 2d)`` and outcomes ``y`` (1 = first member preferred).

        Warm-starts when ``(Z, y)`` extends the previous fit by appended rows.
        """
        Z = _validate_X(Z, "Z")
        self.n_system_ = self.kernel.n_system(Z.shape[1])
        self.classifier.fit(Z, y)
        return self

    def fit_hyperparameters(self, Z, y, n_restarts: int = 5, seed=None) -> PreferenceGP:
        """Type-II ML of the base kernel's hyperparameters on the duel likelihood, then fit."""
        Z = _validate_X(Z, "Z")
        self.n_system_ = self.kernel.n_system(Z.shape[1])
        self.classifier.fit_hyperparameters(Z, y, n_restarts=n_restarts, seed=seed)
        return self

    def log_marginal_likelihood(self, theta=None, eval_gradient: bool = False):
        """Approximate ``log p(y | Z, θ)`` (and its gradient), as :meth:`GPClassifier.log_marginal_likelihood`."""
        return self.classifier.log_marginal_likelihood(theta, eval_gradient)

    def _require_fit(self):
        if self.Z_train_ is None:
            raise RuntimeError("PreferenceGP is not fitted yet; call fit(Z, y) first")

    # ---- duels --------------------------------------------------------------------------------
    def predict_duel(self, Z, full_cov: bool = False):
        """Posterior mean ``(n,)`` and variance ``(n,)`` (or covariance) of ``g`` at duels ``Z``."""
        self._require_fit()
        return self.classifier.predict_latent(self._validate_duels(Z), full_cov=full_cov)

    def predict_duel_with_gradient(self, Z):
        """``(mean, var, dmean_dZ, dvar_dZ)`` of ``g`` at ``Z`` (gradients ``(n, k + 2d)``)."""
        self._require_fit()
        return self.classifier.predict_latent_with_gradient(self._validate_duels(Z))

    def duel_probability(self, Z) -> np.ndarray:
        """``P(first preferred) = Φ(μ / sqrt(1 + σ²))``."""
        return uncertainty.probit_mean(*self.predict_duel(Z))

    def duel_epistemic_variance(self, Z) -> np.ndarray:
        """``V[Φ(g(z))]`` (Owen's T; companion paper eq. 9)."""
        return uncertainty.epistemic_variance(*self.predict_duel(Z))

    def duel_bald(self, Z) -> np.ndarray:
        """Mutual information between the duel's outcome and ``g``, in bits (Houlsby et al. 2011)."""
        return uncertainty.bald_bits(*self.predict_duel(Z))

    # ---- utility ------------------------------------------------------------------------------
    def _validate_utility(self, X) -> np.ndarray:
        self._require_fit()
        X = _validate_X(X)
        assert self.n_system_ is not None  # set by every fit, before the classifier's
        expected = self.n_context + self.n_system_
        if X.shape[1] != expected:
            raise ValueError(
                f"utility inputs [s, x] need {expected} columns ({self.n_context} context + "
                f"{self.n_system_} system); got {X.shape[1]}"
            )
        return X

    def predict_utility(self, X, full_cov: bool = False):
        """Posterior mean ``(n,)`` and variance ``(n,)`` (or covariance ``(n, n)``) of ``f`` at ``[s, x]``.

        The utility is identified only up to a constant by duels; its prior fixes the scale
        (``E[f] = m`` a priori), which every reported difference is independent of.
        """
        X = self._validate_utility(X)
        Z_train = self.Z_train_
        assert Z_train is not None  # fitted (_validate_utility)
        prior = self.base_kernel(X) if full_cov else self.base_kernel.diag(X)
        if Z_train.shape[0] == 0:
            return self.utility_mean_at(X), prior
        K_cross = self.kernel.cross_cov(X, Z_train).T
        mean, var = self.classifier.predict_from_cross(K_cross, prior, full_cov)
        return self.utility_mean_at(X) + mean, var

    def predict_utility_with_gradient(self, X):
        """``(mean, var, dmean_dX, dvar_dX)`` of ``f`` at ``[s, x]`` (gradients ``(n, k + d)``)."""
        X = self._validate_utility(X)
        prior, dprior = self.base_kernel.diag(X), self.base_kernel.diag_gradient_x(X)
        mean0, dmean0 = values_and_gradient(self.utility_mean, X)
        Z_train = self.Z_train_
        assert Z_train is not None  # fitted (_validate_utility)
        if Z_train.shape[0] == 0:
            return mean0, prior, dmean0, dprior
        K_cross = self.kernel.cross_cov(X, Z_train).T  # (n_train, m)
        mean, var = self.classifier.predict_from_cross(K_cross, prior, False)
        dK = self.kernel.cross_cov_gradient_x(X, Z_train)  # (m, n_train, k + d)
        alpha, RK = self.classifier.weights_and_reduction(K_cross)
        dmean = np.einsum("mnd,n->md", dK, alpha)
        dvar = dprior - 2.0 * np.einsum("mnd,nm->md", dK, RK)
        return mean0 + mean, var, dmean0 + dmean, dvar

    def utility_mean_at(self, X) -> np.ndarray:
        """The utility's prior mean ``m(X)`` ``(n,)`` (zeros without one)."""
        return values(self.utility_mean, X)

    def sample_utility(self, rng, n_features: int = DEFAULT_N_FEATURES) -> UtilitySample:
        """One posterior utility function (decoupled bases), callable on ``[s, x]``."""
        self._require_fit()
        return sample_utility(self, rng, n_features=n_features)
