"""GPClassifier: a probit GP classifier with Laplace or EP inference, optionally with a guess
floor and a lapse rate, ``P(c = 1 | f) = γ + (1 − γ − λ) Φ(f)`` (METHOD.md §2b).

The public class validates inputs and keeps the training data; the maths lives in
:mod:`lensopt.gp.laplace`, :mod:`lensopt.gp.ep` and :mod:`lensopt.gp.uncertainty`.

Shapes: ``X`` is ``(n_points, n_dims)`` with context columns first (refraction:
``letter_logmar, sphere_d, cylinder_d``); labels ``y`` are ``(n_points,)`` in ``{0, 1}``
(1 = letter named correctly); predictions are ``(n_points,)``.

``fit`` is on the ask/tell hot path: when the new data extend the previous training data by
appended rows, only the new rows of the covariance are computed and inference starts from the
previous solution (Laplace: ``α`` padded with zeros; EP: sites padded with the prior).
"""

from __future__ import annotations

import numpy as np

from lensopt.gp import uncertainty
from lensopt.gp.ep import ep_lml_gradient, parallel_ep_posterior
from lensopt.gp.hyperparameters import maximize_log_marginal_likelihood
from lensopt.gp.kernels import Kernel
from lensopt.gp.laplace import LatentPosterior, laplace_lml_gradient, laplace_posterior
from lensopt.gp.likelihood import check_floor
from lensopt.gp.mean import check_prior_mean, mean_at, mean_gradient_at
from lensopt.gp.virtual import SignObservations

INFERENCE_METHODS = ("laplace", "ep")
"""Names accepted by ``GPClassifier(inference=...)``."""

DEFAULT_JITTER = 1e-6
"""Added to the diagonal of the training covariance (keeps ``K`` invertible for repeated inputs)."""


def _validate_X(X, name="X") -> np.ndarray:
    try:
        X = np.asarray(X, dtype=float)
    except (TypeError, ValueError) as error:
        raise ValueError(f"{name} must be a numeric array (n_points, n_dims): {error}") from None
    if X.ndim != 2 or X.shape[1] == 0:
        raise ValueError(f"{name} must be a 2-D array (n_points, n_dims) with n_dims ≥ 1; got shape {X.shape}")
    if not np.all(np.isfinite(X)):
        bad = int(np.argmax(~np.all(np.isfinite(X), axis=1)))
        raise ValueError(f"{name} contains NaN or infinite values (first in row {bad}); remove or fix those rows")
    return X


def _validate_y(y, n_points: int) -> np.ndarray:
    try:
        y = np.asarray(y, dtype=float)
    except (TypeError, ValueError) as error:
        raise ValueError(f"y must be a numeric array of labels in {{0, 1}}: {error}") from None
    if y.ndim != 1 or y.shape[0] != n_points:
        raise ValueError(f"y must have shape ({n_points},) to match X; got shape {y.shape}")
    if not np.all(np.isfinite(y)):
        raise ValueError("y contains NaN or infinite values; labels must be 0 or 1")
    if not np.all((y == 0) | (y == 1)):
        bad = np.unique(y[(y != 0) & (y != 1)])[:5]
        raise ValueError(f"y must contain only labels 0 and 1 (1 = correct); got {bad.tolist()}")
    return y


class GPClassifier:
    """Probit GP classifier ``P(c = 1 | x) = γ + (1 − γ − λ) Φ(f(x))``, ``f ~ GP(0, k)``.

    ``kernel``: a :class:`lensopt.gp.kernels.Kernel`; ``inference``: ``"laplace"`` (R&W Alg. 3.1)
    or ``"ep"`` (R&W Alg. 3.5); ``jitter``: added to the training covariance diagonal;
    ``guess_rate`` ``γ`` and ``lapse_rate`` ``λ``: the floored likelihood (0 and 0: the plain
    probit ``Φ(f)`` of the papers). ``prior_mean``: the prior mean ``m`` of the latent,
    ``f ~ GP(m, k)``: a constant (0 in the papers) or a :class:`lensopt.gp.mean.MeanFunction` (a bowl). ``predict_latent`` is always the latent ``f`` (mean included);
    ``predict_proba``, ``epistemic_variance`` and ``bald`` are of the floored ``P``;
    ``training_posterior`` is of the zero-mean part ``f − m`` (what posterior sampling updates).
    ``ep_tolerance``: the largest relative change of a site parameter at which EP stops
    (``None``: :data:`lensopt.gp.ep.PARALLEL_EP_TOLERANCE`); ``ep_match_clipped_mean``: EP's
    clipped sites match the tilted mean (:func:`lensopt.gp.ep._site_parameters`). ``virtual``: optional
    :class:`lensopt.gp.virtual.SignObservations`, sites of prior knowledge conditioned on with the
    data (Siivola et al. 2018): the latent's sites are then the virtual ones first, then ``X_train_``.
    """

    def __init__(
        self,
        kernel: Kernel,
        inference: str = "laplace",
        jitter: float = DEFAULT_JITTER,
        guess_rate: float = 0.0,
        lapse_rate: float = 0.0,
        prior_mean=0.0,
        ep_tolerance: float | None = None,
        virtual: SignObservations | None = None,
        ep_match_clipped_mean: bool = False,
    ):
        if not isinstance(kernel, Kernel):
            raise ValueError(f"kernel must be a lensopt.gp.kernels.Kernel; got {type(kernel).__name__}")
        if inference not in INFERENCE_METHODS:
            raise ValueError(f"unknown inference {inference!r}; use one of {', '.join(INFERENCE_METHODS)}")
        if not (np.isfinite(jitter) and jitter >= 0):
            raise ValueError(f"jitter must be finite and ≥ 0; got {jitter}")
        self.kernel_ = kernel
        self.inference = inference
        self.jitter = float(jitter)
        check_floor(guess_rate, lapse_rate)
        self.guess_rate = float(guess_rate)
        self.lapse_rate = float(lapse_rate)
        self.prior_mean = check_prior_mean(prior_mean)
        if ep_tolerance is not None and not (isinstance(ep_tolerance, float) and 0.0 < ep_tolerance < 1.0):
            raise ValueError(f"ep_tolerance must be a float in (0, 1) or None; got {ep_tolerance!r}")
        self.ep_tolerance = ep_tolerance
        if not isinstance(ep_match_clipped_mean, bool):
            raise ValueError(f"ep_match_clipped_mean must be True or False; got {ep_match_clipped_mean!r}")
        self.ep_match_clipped_mean = ep_match_clipped_mean
        if virtual is not None and not isinstance(virtual, SignObservations):
            raise ValueError(
                f"virtual must be None or lensopt.gp.virtual.SignObservations; got {type(virtual).__name__}"
            )
        self.virtual = virtual
        self.X_train_: np.ndarray | None = None
        self.y_train_: np.ndarray | None = None
        self._K: np.ndarray | None = None
        self._posterior: LatentPosterior | None = None
        self._fitted_kernel: Kernel | None = None

    # ---- fitting ---------------------------------------------------------------------------
    def fit(self, X, y) -> GPClassifier:
        """Condition on ``(X, y)``; warm-starts when the data extend the previous fit."""
        X = _validate_X(X)
        y = _validate_y(y, X.shape[0])
        n_old = self._extends_previous(X, y)
        if n_old is None:
            K = self._train_cov(self.kernel_, X)
            init = None
        else:
            m = self._n_virtual
            n_old, n = m + n_old, m + X.shape[0]  # sites: the virtual ones first
            K = np.empty((n, n))
            K[:n_old, :n_old] = self._K
            new = X[n_old - m :]
            K[n_old:, m:] = self.kernel_(new, X)
            if self.virtual is not None:
                K[n_old:, :m] = self.virtual.cross(self.kernel_, new).T
            K[:n_old, n_old:] = K[n_old:, :n_old].T
            K[np.arange(n_old, n), np.arange(n_old, n)] += self.jitter
            init = self._warm_start(n - n_old)
        self._set_posterior(self.kernel_, X, y, K, self._infer(K, y, init, X))
        return self

    def fit_hyperparameters(self, X, y, n_restarts: int = 5, seed=None) -> GPClassifier:
        """Type-II ML of the kernel hyperparameters (bounded multi-start L-BFGS-B), then fit.

        The first start is the current kernel's ``theta``; ``n_restarts`` more are drawn from
        ``seed``. ``kernel_`` becomes the fitted kernel.
        """
        X = _validate_X(X)
        y = _validate_y(y, X.shape[0])
        if X.shape[0] == 0:
            raise ValueError("fit_hyperparameters needs at least one observation; X has no rows")
        last = {"init": None}

        def objective(theta):
            kernel = self.kernel_.with_theta(theta)
            K = self._train_cov(kernel, X)
            posterior = self._infer(K, y, last["init"], X)
            assert posterior is not None  # X has rows (checked above)
            last["init"] = self._init_from(posterior)
            return posterior.log_marginal_likelihood, self._lml_gradient(kernel, X, y, K, posterior)

        result = maximize_log_marginal_likelihood(
            objective, self.kernel_.theta, self.kernel_.bounds, n_restarts=n_restarts, seed=seed
        )
        self.kernel_ = self.kernel_.with_theta(result.theta)
        self._fitted_kernel = None  # force a cold fit with the new kernel
        return self.fit(X, y)

    def log_marginal_likelihood(self, theta=None, eval_gradient: bool = False):
        """Approximate ``log p(y | X, θ)`` (Laplace eq. 3.32 or EP eq. 3.65) at ``theta``
        (log-hyperparameters; None = the current kernel), with its gradient if asked."""
        self._require_fit()
        X, y = self.X_train_, self.y_train_
        assert X is not None and y is not None  # fitted (_require_fit)
        if theta is None:
            kernel, K, posterior = self.kernel_, self._K, self._posterior
        else:
            kernel = self.kernel_.with_theta(theta)
            K = self._train_cov(kernel, X)
            posterior = self._infer(K, y, None, X)
        if posterior is None:
            raise ValueError("log_marginal_likelihood needs at least one observation; the model was fitted on none")
        if not eval_gradient:
            return posterior.log_marginal_likelihood
        return posterior.log_marginal_likelihood, self._lml_gradient(kernel, X, y, K, posterior)

    # ---- predictions -----------------------------------------------------------------------
    def predict_latent(self, X, full_cov: bool = False) -> tuple[np.ndarray, np.ndarray]:
        """Latent mean ``(n,)`` and variance ``(n,)`` (or covariance ``(n, n)`` if ``full_cov``)."""
        X = self._validate_test(X)
        X_train = self._fitted_inputs()
        if self._posterior is None:
            mean = np.broadcast_to(mean_at(self.prior_mean, X), (X.shape[0],)).astype(float)
            return (mean, self.kernel_(X)) if full_cov else (mean, self.kernel_.diag(X))
        posterior = self._fitted_posterior()
        K_cross = self._site_cross(self.kernel_, X_train, X)
        if full_cov:
            mean, cov = posterior.predict_full(K_cross, self.kernel_(X))
        else:
            mean, cov = posterior.predict(K_cross, self.kernel_.diag(X))
        return mean_at(self.prior_mean, X) + mean, cov

    def predict_latent_with_gradient(self, X):
        """``(mean, var, dmean_dX (n, d), dvar_dX (n, d))`` for gradient-based acquisition search."""
        X = self._validate_test(X)
        dk_diag = self.kernel_.diag_gradient_x(X)
        X_train = self._fitted_inputs()
        if self._posterior is None:
            mean = np.broadcast_to(mean_at(self.prior_mean, X), (X.shape[0],)).astype(float)
            return mean, self.kernel_.diag(X), np.zeros(X.shape) + mean_gradient_at(self.prior_mean, X), dk_diag
        posterior = self._fitted_posterior()
        K_cross = self._site_cross(self.kernel_, X_train, X)
        mean, var, RK = posterior.predict_with_reduction(K_cross, self.kernel_.diag(X))
        dK = self._site_gradient_x(X_train, X)  # (m, n, d): ∂k(x*_i, site_j)/∂x*_i
        dmean = np.einsum("mnd,n->md", dK, posterior.alpha)
        # var = k** − k*ᵀ R k*  ⇒  ∂var/∂x* = ∂k**/∂x* − 2 (R k*)ᵀ ∂k*/∂x*
        dvar = dk_diag - 2.0 * np.einsum("mnd,nm->md", dK, RK)
        if isinstance(self.prior_mean, float):
            return self.prior_mean + mean, var, dmean, dvar
        return mean_at(self.prior_mean, X) + mean, var, dmean + mean_gradient_at(self.prior_mean, X), dvar

    def predict_latent_mean(self, X) -> np.ndarray:
        """The latent mean ``(n,)`` alone: :meth:`predict_latent`'s first value, the same numbers,
        without the variance's triangular solve (a search of the posterior mean's maximum)."""
        X = self._validate_test(X)
        X_train = self._fitted_inputs()
        if self._posterior is None:
            return np.broadcast_to(mean_at(self.prior_mean, X), (X.shape[0],)).astype(float)
        return (
            mean_at(self.prior_mean, X) + self._site_cross(self.kernel_, X_train, X).T @ self._fitted_posterior().alpha
        )

    def predict_latent_mean_with_gradient(self, X):
        """``(mean (n,), dmean_dX (n, d))``: :meth:`predict_latent_with_gradient` without the variance."""
        X = self._validate_test(X)
        X_train = self._fitted_inputs()
        if self._posterior is None:
            mean = np.broadcast_to(mean_at(self.prior_mean, X), (X.shape[0],)).astype(float)
            return mean, np.zeros(X.shape) + mean_gradient_at(self.prior_mean, X)
        posterior = self._fitted_posterior()
        mean = self._site_cross(self.kernel_, X_train, X).T @ posterior.alpha
        dmean = np.einsum("mnd,n->md", self._site_gradient_x(X_train, X), posterior.alpha)
        if isinstance(self.prior_mean, float):
            return self.prior_mean + mean, dmean
        return mean_at(self.prior_mean, X) + mean, dmean + mean_gradient_at(self.prior_mean, X)

    def prior_mean_at(self, X):
        """The prior mean ``m(X)`` ``(n,)`` (a constant or a :class:`lensopt.gp.mean.MeanFunction`)."""
        X = _validate_X(X)
        return np.broadcast_to(mean_at(self.prior_mean, X), (X.shape[0],)).astype(float)

    @property
    def floored(self) -> bool:
        """Whether the likelihood has a guess floor or a lapse rate."""
        return self.guess_rate > 0.0 or self.lapse_rate > 0.0

    def predict_proba(self, X) -> np.ndarray:
        """``γ + κ Φ(μ / sqrt(1 + σ²))``: probability of a correct answer (``μ_c`` when unfloored)."""
        return uncertainty.floored_mean(*self.predict_latent(X), self.guess_rate, self.lapse_rate)

    def epistemic_variance(self, X) -> np.ndarray:
        """``V[P] = κ² V[Φ(f)]`` via Owen's T."""
        return uncertainty.floored_epistemic_variance(*self.predict_latent(X), self.guess_rate, self.lapse_rate)

    def aleatoric_variance(self, X) -> np.ndarray:
        """``E[Φ(f)(1 − Φ(f))]`` (of the latent probit, without the floor)."""
        return uncertainty.aleatoric_variance(*self.predict_latent(X))

    def bald(self, X) -> np.ndarray:
        """BALD mutual information between the outcome and ``f``, in bits (floored: by quadrature)."""
        if self.floored:
            return uncertainty.floored_bald_bits(*self.predict_latent(X), self.guess_rate, self.lapse_rate)
        return uncertainty.bald_bits(*self.predict_latent(X))

    def training_posterior(self) -> tuple[np.ndarray, np.ndarray]:
        """Gaussian posterior ``(mean (n,), cov (n, n))`` of the latent at the sites: ``X_train_``,
        after the virtual sites if there are any (:meth:`site_covariance`)."""
        self._fitted_inputs()
        if self._posterior is None:
            return np.zeros(0), np.zeros((0, 0))
        posterior = self._fitted_posterior()
        assert self._K is not None  # kept with the posterior
        return posterior.mean.copy(), posterior.training_covariance(self._K)

    @property
    def n_iterations_(self) -> int:
        """Newton iterations (Laplace) or sweeps (EP) of the last fit."""
        self._require_fit()
        return 0 if self._posterior is None else self._posterior.n_iterations

    def site_covariance(self) -> np.ndarray:
        """The prior covariance of the sites :meth:`training_posterior` is of (jitter included)."""
        self._fitted_inputs()
        return np.zeros((0, 0)) if self._K is None else self._K.copy()

    # ---- private ---------------------------------------------------------------------------
    @property
    def _n_virtual(self) -> int:
        return 0 if self.virtual is None else self.virtual.n_sites

    def _site_cross(self, kernel: Kernel, X_train: np.ndarray, X: np.ndarray) -> np.ndarray:
        """``cov(sites, f(X))`` ``(n_sites, n)``: the virtual sites' rows first, then ``k(X_train, X)``."""
        K = kernel(X_train, X)
        return K if self.virtual is None else np.vstack([self.virtual.cross(kernel, X), K])

    def _site_gradient_x(self, X_train: np.ndarray, X: np.ndarray) -> np.ndarray:
        """``∂ cov(site_j, f(X_i)) / ∂X_i`` ``(n, n_sites, d)``."""
        dK = self.kernel_.gradient_x(X, X_train)
        return dK if self.virtual is None else np.concatenate([self.virtual.gradient_x(self.kernel_, X), dK], axis=1)

    def _combine_sites(self, values: np.ndarray, axis: int) -> np.ndarray:
        """Values at ``[virtual.points; X]`` along ``axis`` as values at the sites."""
        assert self.virtual is not None
        values = np.moveaxis(values, axis, 0)
        n_points = 2 * self.virtual.n_sites
        return np.moveaxis(np.concatenate([self.virtual.combine(values[:n_points]), values[n_points:]]), 0, axis)

    def _train_cov(self, kernel: Kernel, X: np.ndarray) -> np.ndarray:
        if self.virtual is None:
            K = kernel(X)
        else:
            K = self._combine_sites(self._combine_sites(kernel(np.vstack([self.virtual.points, X])), 0), 1)
        K[np.diag_indices_from(K)] += self.jitter
        return K

    def _site_labels_and_mean(self, y: np.ndarray, X: np.ndarray):
        """The sites' labels and prior mean: the virtual sites' (label 1) before the data's."""
        if self.virtual is None:
            return y, mean_at(self.prior_mean, X)
        mean = np.broadcast_to(mean_at(self.prior_mean, X), (X.shape[0],))
        m = self.virtual.n_sites
        return np.concatenate([np.ones(m), y]), np.concatenate([self.virtual.prior_mean(self.prior_mean), mean])

    def _infer(self, K, y, init, X) -> LatentPosterior | None:
        if K.shape[0] == 0:
            return None
        y, prior_mean = self._site_labels_and_mean(y, X)
        floor = dict(guess_rate=self.guess_rate, lapse_rate=self.lapse_rate, prior_mean=prior_mean)
        if self.inference == "laplace":
            return laplace_posterior(K, y, alpha_init=init, **floor)
        return parallel_ep_posterior(
            K,
            y,
            sites_init=init,
            tolerance=self.ep_tolerance,
            match_clipped_mean=self.ep_match_clipped_mean,
            jitter=self.jitter,
            **floor,
        )

    def _init_from(self, posterior: LatentPosterior | None):
        if posterior is None:
            return None
        if self.inference == "laplace":
            return posterior.alpha
        return posterior.site_precision, posterior.site_natural_mean

    def _warm_start(self, n_new: int):
        init = self._init_from(self._posterior)
        if init is None:
            return None
        if self.inference == "laplace":
            return np.concatenate([init, np.zeros(n_new)])
        return tuple(np.concatenate([site, np.zeros(n_new)]) for site in init)

    def _lml_gradient(self, kernel, X, y, K, posterior) -> np.ndarray:
        if posterior is None:
            return np.zeros(kernel.n_theta)
        if self.virtual is None:
            dK = kernel.gradient_theta(X)
        else:
            dK = self._combine_sites(
                self._combine_sites(kernel.gradient_theta(np.vstack([self.virtual.points, X])), 0), 1
            )
        y, prior_mean = self._site_labels_and_mean(y, X)
        if self.inference == "laplace":
            return laplace_lml_gradient(K, dK, y, posterior, self.guess_rate, self.lapse_rate, prior_mean)
        return ep_lml_gradient(K, dK, posterior)

    def _set_posterior(self, kernel, X, y, K, posterior) -> None:
        self.X_train_, self.y_train_ = X.copy(), y.copy()
        self.X_train_.setflags(write=False)  # its kernel terms are kept between predictions
        self._K, self._posterior, self._fitted_kernel = K, posterior, kernel

    def _extends_previous(self, X, y) -> int | None:
        """Number of previous rows if ``(X, y)`` appends rows to the last fit (same kernel)."""
        if self._fitted_kernel is not self.kernel_ or self.X_train_ is None:
            return None
        n_old = self.X_train_.shape[0]
        assert self.y_train_ is not None  # kept with X_train_
        if (
            n_old == 0
            or X.shape[0] < n_old
            or X.shape[1] != self.X_train_.shape[1]
            or not np.array_equal(X[:n_old], self.X_train_)
            or not np.array_equal(y[:n_old], self.y_train_)
        ):
            return None
        return n_old

    def _require_fit(self) -> None:
        if self.X_train_ is None:
            raise RuntimeError("GPClassifier is not fitted yet; call fit(X, y) first")

    def _fitted_inputs(self) -> np.ndarray:
        """``X_train_`` of a fitted model (the RuntimeError of :meth:`_require_fit` otherwise)."""
        self._require_fit()
        assert self.X_train_ is not None  # _require_fit raised otherwise
        return self.X_train_

    def _fitted_posterior(self) -> LatentPosterior:
        """The posterior of a fit on at least one observation (only an empty fit has none)."""
        assert self._posterior is not None, "the model was fitted on no observations"
        return self._posterior

    def _validate_test(self, X) -> np.ndarray:
        X_train = self._fitted_inputs()
        X = _validate_X(X)
        if X.shape[1] != X_train.shape[1]:
            raise ValueError(f"X has {X.shape[1]} columns but the model was fitted on {X_train.shape[1]}")
        return X
