"""GPClassifier: gradients against finite differences, warm starts, robustness, input validation."""

import numpy as np
import pytest
from scipy.stats import norm

from lensopt.gp import (
    GPClassifier,
    LinearContext,
    Matern32,
    Matern52,
    SquaredExponential,
    benchmark_context_kernel,
    psychophysics_kernel,
)
from lensopt.gp.uncertainty import bald_bits, epistemic_variance, probit_mean

INFERENCES = ["laplace", "ep"]

KERNELS = {
    "se_ard": SquaredExponential([0.8, 1.2, 1.5], 1.3),
    "matern32": Matern32([0.9, 1.1, 1.4], 1.2),
    "matern52": Matern52([0.7, 1.3, 1.0], 0.9),
    "linear_context": LinearContext(2.0, active_dims=(0,)),
    "sum": LinearContext(1.5, active_dims=(0,)) + Matern52([1.0, 1.3], active_dims=(1, 2)),
    "product": SquaredExponential(1.1, 1.4, active_dims=(1, 2)) * Matern32(0.9, active_dims=(0,)),
    "psychophysics": psychophysics_kernel(2.0, [1.5, 1.2], 1.3),
    "benchmark_context": benchmark_context_kernel(SquaredExponential([0.9, 1.1], 1.2, active_dims=(1, 2))),
}


def refraction_data(n, seed=0):
    """Letter size s ∈ [0, 1] logMAR, sphere and cylinder in [−2, 2] D; P(correct) rises with s."""
    rng = np.random.default_rng(seed)
    X = np.column_stack([rng.uniform(0, 1, n), rng.uniform(-2, 2, (n, 2))])
    acuity_logmar = np.log10(1 + 0.5 * (X[:, 1] ** 2 + (X[:, 1] + X[:, 2]) ** 2)) - 0.1
    y = (rng.uniform(size=n) < norm.cdf(5 * (X[:, 0] - acuity_logmar))).astype(float)
    return X, y


@pytest.mark.parametrize("inference", INFERENCES)
@pytest.mark.parametrize("name", list(KERNELS))
def test_log_marginal_likelihood_gradient_matches_finite_differences(name, inference):
    X, y = refraction_data(25, seed=1)
    gp = GPClassifier(KERNELS[name], inference=inference).fit(X, y)
    theta = gp.kernel_.theta
    value, grad = gp.log_marginal_likelihood(theta, eval_gradient=True)
    assert value == pytest.approx(gp.log_marginal_likelihood(), abs=1e-8)
    eps = 1e-5
    numeric = [
        (gp.log_marginal_likelihood(theta + e) - gp.log_marginal_likelihood(theta - e)) / (2 * eps)
        for e in np.eye(theta.size) * eps
    ]
    np.testing.assert_allclose(grad, numeric, rtol=1e-4, atol=1e-6)


@pytest.mark.parametrize("inference", INFERENCES)
@pytest.mark.parametrize("name", ["psychophysics", "benchmark_context", "matern32"])
def test_predict_latent_with_gradient_matches_finite_differences(name, inference):
    X, y = refraction_data(30, seed=2)
    gp = GPClassifier(KERNELS[name], inference=inference).fit(X, y)
    X_test = refraction_data(6, seed=3)[0]
    mean, var, d_mean, d_var = gp.predict_latent_with_gradient(X_test)
    mean_ref, var_ref = gp.predict_latent(X_test)
    np.testing.assert_allclose(mean, mean_ref, atol=1e-12)
    np.testing.assert_allclose(var, var_ref, atol=1e-12)
    eps = 1e-6
    for k in range(X.shape[1]):
        step = np.zeros(X.shape[1])
        step[k] = eps
        m_plus, v_plus = gp.predict_latent(X_test + step)
        m_minus, v_minus = gp.predict_latent(X_test - step)
        np.testing.assert_allclose(d_mean[:, k], (m_plus - m_minus) / (2 * eps), rtol=1e-5, atol=1e-7)
        np.testing.assert_allclose(d_var[:, k], (v_plus - v_minus) / (2 * eps), rtol=1e-5, atol=1e-7)


@pytest.mark.parametrize("inference", INFERENCES)
def test_full_covariance_and_probabilities_agree_with_marginal_predictions(inference):
    X, y = refraction_data(40, seed=4)
    gp = GPClassifier(KERNELS["psychophysics"], inference=inference).fit(X, y)
    X_test = refraction_data(7, seed=5)[0]
    mean, var = gp.predict_latent(X_test)
    mean_full, cov = gp.predict_latent(X_test, full_cov=True)
    np.testing.assert_allclose(mean_full, mean, atol=1e-12)
    np.testing.assert_allclose(np.diag(cov), var, atol=1e-10)
    assert np.all(np.linalg.eigvalsh(cov) > -1e-9)
    np.testing.assert_allclose(gp.predict_proba(X_test), norm.cdf(mean / np.sqrt(1 + var)), atol=1e-12)
    np.testing.assert_allclose(gp.epistemic_variance(X_test), epistemic_variance(mean, var))
    np.testing.assert_allclose(gp.bald(X_test), bald_bits(mean, var))
    np.testing.assert_allclose(
        gp.aleatoric_variance(X_test) + gp.epistemic_variance(X_test),
        probit_mean(mean, var) * (1 - probit_mean(mean, var)),
        atol=1e-12,
    )


@pytest.mark.parametrize("inference", INFERENCES)
def test_training_posterior_is_the_prediction_at_the_training_inputs(inference):
    X, y = refraction_data(30, seed=6)
    gp = GPClassifier(KERNELS["psychophysics"], inference=inference).fit(X, y)
    mean, cov = gp.training_posterior()
    mean_pred, cov_pred = gp.predict_latent(X, full_cov=True)
    np.testing.assert_allclose(mean, mean_pred, atol=1e-4)  # differ only by the jitter
    np.testing.assert_allclose(cov, cov_pred, atol=1e-4)
    np.testing.assert_allclose(cov, cov.T)
    np.linalg.cholesky(cov + 1e-9 * np.eye(30))


@pytest.mark.parametrize("inference", INFERENCES)
def test_warm_start_gives_the_cold_posterior(inference):
    X, y = refraction_data(61, seed=7)
    X_test = refraction_data(50, seed=8)[0]
    gp = GPClassifier(KERNELS["psychophysics"], inference=inference)
    gp.fit(X[:55], y[:55])
    gp.fit(X[:60], y[:60])
    gp.fit(X, y)  # one appended trial: the ask/tell hot path
    warm_iterations = gp.n_iterations_
    cold = GPClassifier(KERNELS["psychophysics"], inference=inference).fit(X, y)
    if inference == "laplace":  # EP's sweep count is set by its linear convergence rate
        assert warm_iterations < cold.n_iterations_
    for warm_out, cold_out in zip(gp.predict_latent(X_test), cold.predict_latent(X_test)):
        np.testing.assert_allclose(warm_out, cold_out, atol=1e-8)
    assert gp.log_marginal_likelihood() == pytest.approx(cold.log_marginal_likelihood(), abs=1e-8)


def test_laplace_newton_converges_in_few_iterations():
    X, y = refraction_data(260, seed=9)
    gp = GPClassifier(KERNELS["psychophysics"]).fit(X, y)
    assert gp.n_iterations_ <= 10
    gp.fit(np.vstack([X, X[:1]]), np.append(y, 1.0))
    assert gp.n_iterations_ <= 5


def test_changed_data_is_refitted_not_warm_started():
    X, y = refraction_data(30, seed=10)
    gp = GPClassifier(KERNELS["psychophysics"]).fit(X, y)
    y_flipped = y.copy()
    y_flipped[0] = 1 - y_flipped[0]
    gp.fit(X, y_flipped)
    cold = GPClassifier(KERNELS["psychophysics"]).fit(X, y_flipped)
    np.testing.assert_allclose(gp.predict_latent(X)[0], cold.predict_latent(X)[0], atol=1e-9)


def _robustness_cases():
    X, y = refraction_data(40, seed=11)
    repeated = np.repeat(X[:5], 8, axis=0)
    X_big, y_big = refraction_data(1000, seed=12)
    base = KERNELS["psychophysics"]
    yield "all_correct", base, X, np.ones(40)
    yield "all_wrong", base, X, np.zeros(40)
    yield "repeated_inputs", base, repeated, (np.arange(40) % 3 == 0).astype(float)
    yield "thousand_points", base, X_big, y_big
    for ell in (1e-3, 1e3):
        for variance in (1e-4, 1e4):
            yield f"ell={ell:g},var={variance:g}", psychophysics_kernel(variance, [ell, ell], variance), X, y


ROBUSTNESS = list(_robustness_cases())


@pytest.mark.parametrize("inference", INFERENCES)
@pytest.mark.parametrize("case", ROBUSTNESS, ids=[c[0] for c in ROBUSTNESS])
def test_fit_and_predict_stay_finite_in_hard_cases(case, inference):
    _, kernel, X, y = case
    gp = GPClassifier(kernel, inference=inference).fit(X, y)
    X_test = refraction_data(20, seed=13)[0]
    mean, var, d_mean, d_var = gp.predict_latent_with_gradient(X_test)
    outputs = [mean, var, d_mean, d_var, gp.predict_proba(X_test), gp.bald(X_test), gp.epistemic_variance(X_test)]
    outputs += list(gp.training_posterior())
    outputs += list(gp.log_marginal_likelihood(eval_gradient=True))
    for output in outputs:
        assert np.all(np.isfinite(output))
    assert np.all(var >= 0)


def test_prior_predictions_without_observations():
    gp = GPClassifier(KERNELS["psychophysics"]).fit(np.zeros((0, 3)), np.zeros(0))
    X_test = refraction_data(5, seed=14)[0]
    mean, var = gp.predict_latent(X_test)
    np.testing.assert_allclose(mean, 0.0)
    np.testing.assert_allclose(var, KERNELS["psychophysics"].diag(X_test))
    with pytest.raises(ValueError, match="at least one observation"):  # no evidence to measure
        gp.log_marginal_likelihood()
    gp.fit(X_test[:2], np.array([1.0, 0.0]))  # first observations after the empty fit
    assert np.all(np.isfinite(gp.predict_latent(X_test)[0]))


@pytest.mark.parametrize(
    "X, y, message",
    [
        (np.zeros(5), np.zeros(5), "2-D"),
        (np.zeros((5, 3)), np.zeros(4), "shape"),
        (np.zeros((5, 3)), np.zeros((5, 1)), "shape"),
        (np.zeros((3, 3)), np.array([0.0, 1.0, 2.0]), "0 and 1"),
        (np.zeros((3, 3)), np.array([0.0, 1.0, -1.0]), "0 and 1"),
        (np.array([[0.0, 1.0, np.nan]] * 3), np.zeros(3), "NaN"),
        (np.zeros((3, 3)), np.array([0.0, np.inf, 1.0]), "NaN"),
    ],
)
def test_bad_training_data_raises_a_clear_value_error(X, y, message):
    with pytest.raises(ValueError, match=message):
        GPClassifier(KERNELS["psychophysics"]).fit(X, y)


def test_bad_settings_and_test_inputs_raise_clear_errors():
    with pytest.raises(ValueError, match="unknown inference 'vb'"):
        GPClassifier(KERNELS["psychophysics"], inference="vb")
    with pytest.raises(ValueError, match="Kernel"):
        GPClassifier("rbf")
    with pytest.raises(ValueError, match="jitter"):
        GPClassifier(KERNELS["psychophysics"], jitter=-1.0)
    gp = GPClassifier(KERNELS["psychophysics"])
    with pytest.raises(RuntimeError, match="fit"):
        gp.predict_latent(np.zeros((2, 3)))
    X, y = refraction_data(10)
    gp.fit(X, y)
    with pytest.raises(ValueError, match="columns"):
        gp.predict_latent(np.zeros((2, 2)))
    with pytest.raises(ValueError, match="NaN"):
        gp.bald(np.full((2, 3), np.inf))


@pytest.mark.parametrize("inference", INFERENCES)
def test_fitting_a_shallow_copy_leaves_the_original_untouched(inference):
    # knowledge-gradient fantasies refit copy.copy(model) with one appended outcome
    import copy

    X, y = refraction_data(30, seed=15)
    gp = GPClassifier(KERNELS["psychophysics"], inference=inference).fit(X, y)
    X_test = refraction_data(5, seed=16)[0]
    before = gp.predict_latent(X_test)
    fantasy = copy.copy(gp).fit(np.vstack([X, X_test[:1]]), np.append(y, 1.0))
    assert fantasy.X_train_.shape[0] == 31 and gp.X_train_.shape[0] == 30
    for b, a in zip(before, gp.predict_latent(X_test)):
        np.testing.assert_array_equal(a, b)
