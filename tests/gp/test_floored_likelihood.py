"""The floored likelihood P(c=1|f) = γ + (1 − γ − λ) Φ(f) (METHOD.md §2b), checked against
independent computations: finite differences, quadrature, brute-force optimisation, Monte Carlo."""

import numpy as np
import pytest
from scipy.integrate import quad
from scipy.optimize import minimize_scalar
from scipy.stats import norm

from lensopt.gp import GPClassifier
from lensopt.gp import uncertainty as U
from lensopt.gp.ep import ep_posterior, parallel_ep_posterior
from lensopt.gp.kernels import SquaredExponential
from lensopt.gp.laplace import laplace_lml_gradient, laplace_posterior
from lensopt.gp.likelihood import check_floor, log_likelihood, log_likelihood_derivatives, tilted_moments

GUESS, LAPSE = 1.0 / 26.0, 0.02
FLOORS = [(GUESS, LAPSE), (GUESS, 0.0), (0.1, 0.05)]


def p_correct(f, guess, lapse):
    return guess + (1.0 - guess - lapse) * norm.cdf(f)


def likelihood(f, label, guess, lapse):
    if label == 1:
        return p_correct(f, guess, lapse)
    return lapse + (1.0 - guess - lapse) * norm.cdf(-f)  # = 1 − P(correct), without cancellation


@pytest.mark.parametrize("guess, lapse", FLOORS)
@pytest.mark.parametrize("label", [0.0, 1.0])
def test_floored_log_likelihood_is_the_log_of_guess_plus_scaled_probit(label, guess, lapse):
    f = np.array([-40.0, -6.0, -1.0, 0.0, 0.4, 2.0, 7.0, 40.0])
    p = np.array([likelihood(v, label, guess, lapse) for v in f])
    complement = np.array([likelihood(v, 1 - label, guess, lapse) for v in f])
    with np.errstate(divide="ignore"):
        expected = np.where(p < 0.5, np.log(p), np.log1p(-complement))  # each side without cancellation
    got = log_likelihood(f, np.full(f.size, label), guess, lapse)
    finite = np.isfinite(expected)
    np.testing.assert_allclose(got[finite], expected[finite], rtol=1e-10, atol=1e-300)
    assert np.all(np.isfinite(got[np.abs(f) < 40])) and np.all(got <= 0.0)


@pytest.mark.parametrize("guess, lapse", FLOORS)
@pytest.mark.parametrize("label", [0.0, 1.0])
def test_floored_log_likelihood_derivatives_match_finite_differences(label, guess, lapse):
    f = np.array([-9.0, -4.0, -2.0, -1.0, -0.3, 0.0, 0.5, 1.5, 3.0, 6.0, 9.0])
    y = np.full(f.size, label)
    eps = 1e-5
    lp, d1, d2, d3 = log_likelihood_derivatives(f, y, guess, lapse)
    lp_p, d1_p, d2_p, _ = log_likelihood_derivatives(f + eps, y, guess, lapse)
    lp_m, d1_m, d2_m, _ = log_likelihood_derivatives(f - eps, y, guess, lapse)
    np.testing.assert_allclose(lp, log_likelihood(f, y, guess, lapse), rtol=1e-12)
    np.testing.assert_allclose(d1, (lp_p - lp_m) / (2 * eps), rtol=1e-6, atol=1e-9)
    np.testing.assert_allclose(d2, (d1_p - d1_m) / (2 * eps), rtol=1e-5, atol=1e-9)
    np.testing.assert_allclose(d3, (d2_p - d2_m) / (2 * eps), rtol=1e-4, atol=1e-8)


def test_a_guess_far_below_threshold_makes_the_likelihood_convex_there():
    # a correct answer at f = −4 is almost surely a guess: log p curves upwards (d2 > 0)
    _, d1, d2, _ = log_likelihood_derivatives(np.array([-4.0]), np.array([1.0]), GUESS, LAPSE)
    assert d2[0] > 0 and 0 < d1[0] < 0.01
    # without the floor the same answer pulls f up hard (d1 ≈ 4.2)
    _, d1_plain, d2_plain, _ = log_likelihood_derivatives(np.array([-4.0]), np.array([1.0]))
    assert d1_plain[0] > 4 and d2_plain[0] < 0


@pytest.mark.parametrize("guess, lapse", FLOORS)
@pytest.mark.parametrize(
    "label, cavity_mean, cavity_var",
    [(1.0, 0.0, 1.0), (0.0, 0.8, 0.3), (1.0, -2.5, 4.0), (0.0, -1.0, 0.05), (1.0, 3.0, 10.0), (1.0, -6.0, 2.0)],
)
def test_floored_tilted_moments_match_quadrature(label, cavity_mean, cavity_var, guess, lapse):
    sd = np.sqrt(cavity_var)

    def moment(k):
        return quad(
            lambda f: f**k * likelihood(f, label, guess, lapse) * norm.pdf(f, cavity_mean, sd),
            cavity_mean - 12 * sd,
            cavity_mean + 12 * sd,
            points=[0.0],
            epsabs=1e-13,
            limit=200,
        )[0]

    z0, z1, z2 = moment(0), moment(1), moment(2)
    log_z, mean, var = tilted_moments(np.array([label]), np.array([cavity_mean]), np.array([cavity_var]), guess, lapse)
    assert log_z[0] == pytest.approx(np.log(z0), rel=1e-9, abs=1e-10)
    assert mean[0] == pytest.approx(z1 / z0, rel=1e-7, abs=1e-9)
    assert var[0] == pytest.approx(z2 / z0 - (z1 / z0) ** 2, rel=1e-6, abs=1e-9)


@pytest.mark.parametrize("guess, lapse", [(-0.1, 0.0), (0.5, 0.5), (0.2, np.nan)])
def test_impossible_floors_are_refused(guess, lapse):
    with pytest.raises(ValueError, match="rate"):
        check_floor(guess, lapse)
    with pytest.raises(ValueError, match=r"(guess|lapse)_rate.* must be "):
        GPClassifier(SquaredExponential(1.0), guess_rate=guess, lapse_rate=lapse)


# ---- inference on small data against brute force -------------------------------------------

X_SMALL = np.array([[-1.0], [0.0], [0.3], [2.0]])
Y_SMALL = np.array([1.0, 1.0, 0.0, 1.0])  # the last: a correct answer far from the others


def _kernel_matrix():
    return SquaredExponential(0.8, variance=4.0)(X_SMALL) + 1e-8 * np.eye(4)


def test_floored_laplace_mode_is_the_argmax_of_the_exact_log_posterior():
    K = _kernel_matrix()
    post = laplace_posterior(K, Y_SMALL, guess_rate=GUESS, lapse_rate=LAPSE)
    K_inv = np.linalg.inv(K)

    def negative_log_posterior(f):
        return 0.5 * f @ K_inv @ f - np.sum(log_likelihood(f, Y_SMALL, GUESS, LAPSE))

    from scipy.optimize import minimize

    best = minimize(negative_log_posterior, np.zeros(4), method="BFGS", options={"gtol": 1e-10})
    np.testing.assert_allclose(post.mean, best.x, atol=1e-5)
    # curvature: W = max(−∇∇ log p, 0) at the mode
    _, _, d2, _ = log_likelihood_derivatives(post.mean, Y_SMALL, GUESS, LAPSE)
    np.testing.assert_allclose(post.sqrt_w**2, np.maximum(-d2, 0.0), rtol=1e-9, atol=1e-14)


def test_floored_laplace_of_one_observation_matches_brute_force_mode_and_curvature():
    k = 3.0
    post = laplace_posterior(np.array([[k]]), np.array([1.0]), guess_rate=GUESS, lapse_rate=LAPSE)
    mode = minimize_scalar(
        lambda f: 0.5 * f * f / k - np.log(p_correct(f, GUESS, LAPSE)),
        bounds=(-10, 10),
        method="bounded",
        options={"xatol": 1e-10},
    ).x
    assert post.mean[0] == pytest.approx(mode, abs=1e-6)
    h = 1e-4
    curvature = (
        -(
            np.log(p_correct(mode + h, GUESS, LAPSE))
            - 2 * np.log(p_correct(mode, GUESS, LAPSE))
            + np.log(p_correct(mode - h, GUESS, LAPSE))
        )
        / h**2
    )
    assert post.sqrt_w[0] ** 2 == pytest.approx(max(curvature, 0.0), rel=1e-4)


def test_floored_laplace_lml_gradient_matches_finite_differences():
    kernel = SquaredExponential(0.8, variance=4.0)
    theta = kernel.theta

    def lml(th):
        K = kernel.with_theta(th)(X_SMALL) + 1e-8 * np.eye(4)
        return laplace_posterior(K, Y_SMALL, guess_rate=GUESS, lapse_rate=LAPSE).log_marginal_likelihood

    K = kernel(X_SMALL) + 1e-8 * np.eye(4)
    post = laplace_posterior(K, Y_SMALL, guess_rate=GUESS, lapse_rate=LAPSE)
    grad = laplace_lml_gradient(K, kernel.gradient_theta(X_SMALL), Y_SMALL, post, GUESS, LAPSE)
    eps = 1e-6
    numeric = [(lml(theta + eps * e) - lml(theta - eps * e)) / (2 * eps) for e in np.eye(theta.size)]
    np.testing.assert_allclose(grad, numeric, rtol=1e-4, atol=1e-7)


@pytest.mark.parametrize("label, k", [(1.0, 3.0), (0.0, 0.5), (1.0, 60.0)])
def test_floored_ep_is_exact_for_a_single_observation(label, k):
    post = ep_posterior(np.array([[k]]), np.array([label]), guess_rate=GUESS, lapse_rate=LAPSE)
    sd = np.sqrt(k)
    z0 = quad(lambda f: likelihood(f, label, GUESS, LAPSE) * norm.pdf(f, 0, sd), -12 * sd, 12 * sd, points=[0.0])[0]
    z1 = quad(lambda f: f * likelihood(f, label, GUESS, LAPSE) * norm.pdf(f, 0, sd), -12 * sd, 12 * sd, points=[0.0])[0]
    z2 = quad(
        lambda f: f * f * likelihood(f, label, GUESS, LAPSE) * norm.pdf(f, 0, sd), -12 * sd, 12 * sd, points=[0.0]
    )[0]
    mean, var = post.predict(np.array([[k]]), np.array([k]))
    assert mean[0] == pytest.approx(z1 / z0, rel=1e-6, abs=1e-8)
    assert var[0] == pytest.approx(z2 / z0 - (z1 / z0) ** 2, rel=1e-5)
    assert post.log_marginal_likelihood == pytest.approx(np.log(z0), rel=1e-7)


def test_floored_ep_of_two_correlated_latents_matches_two_dimensional_quadrature():
    """EP is not exact here; its mean and variances must land close to the exact posterior."""
    K = np.array([[2.0, 1.2], [1.2, 2.0]])
    y = np.array([1.0, 0.0])
    grid = np.linspace(-9, 9, 601)
    F1, F2 = np.meshgrid(grid, grid, indexing="ij")
    Kinv = np.linalg.inv(K)
    log_prior = -0.5 * (Kinv[0, 0] * F1**2 + 2 * Kinv[0, 1] * F1 * F2 + Kinv[1, 1] * F2**2)
    weight = np.exp(log_prior) * likelihood(F1, 1, GUESS, LAPSE) * likelihood(F2, 0, GUESS, LAPSE)
    weight /= weight.sum()
    exact_mean = np.array([(weight * F1).sum(), (weight * F2).sum()])
    exact_var = np.array([(weight * F1**2).sum(), (weight * F2**2).sum()]) - exact_mean**2
    for post in (
        ep_posterior(K, y, guess_rate=GUESS, lapse_rate=LAPSE),
        parallel_ep_posterior(K, y, guess_rate=GUESS, lapse_rate=LAPSE),
    ):
        mean, var = post.predict(K, np.diag(K))
        np.testing.assert_allclose(mean, exact_mean, atol=0.02)
        np.testing.assert_allclose(var, exact_var, rtol=0.03)


@pytest.mark.parametrize("guess, lapse", [(0.0, 0.0), (GUESS, LAPSE)])
def test_parallel_ep_reaches_the_sequential_fixed_point(guess, lapse):
    rng = np.random.default_rng(4)
    X = rng.uniform(-3, 3, (40, 2))
    K = SquaredExponential(1.2, variance=20.0)(X) + 1e-6 * np.eye(40)
    y = (rng.random(40) < p_correct(3 * np.sin(X[:, 0]), guess, lapse)).astype(float)
    sequential = ep_posterior(K, y, guess_rate=guess, lapse_rate=lapse)
    parallel = parallel_ep_posterior(K, y, guess_rate=guess, lapse_rate=lapse, tolerance=1e-10)
    np.testing.assert_allclose(parallel.mean, sequential.mean, atol=1e-6)
    np.testing.assert_allclose(parallel.site_precision, sequential.site_precision, atol=1e-6)
    assert parallel.log_marginal_likelihood == pytest.approx(sequential.log_marginal_likelihood, abs=1e-6)
    # a warm start from the previous sites, one new row at the prior, lands on the same point
    warm = parallel_ep_posterior(
        K,
        y,
        (np.r_[parallel.site_precision[:-1], 0.0], np.r_[parallel.site_natural_mean[:-1], 0.0]),
        guess_rate=guess,
        lapse_rate=lapse,
        tolerance=1e-10,
    )
    np.testing.assert_allclose(warm.mean, sequential.mean, atol=1e-6)


# ---- predictive uncertainty of the floored model --------------------------------------------

MOMENTS = [(0.0, 1.0), (2.0, 0.01), (-1.5, 60.0), (5.0, 100.0), (-3.0, 0.5), (0.7, 9.0)]


def _entropy_bits(p):
    return -(p * np.log2(p) + (1 - p) * np.log2(1 - p))


@pytest.mark.parametrize("mu, var", MOMENTS)
def test_floored_bald_and_epistemic_variance_match_monte_carlo(mu, var):
    rng = np.random.default_rng(11)
    f = rng.normal(mu, np.sqrt(var), 400_000)
    p = p_correct(f, GUESS, LAPSE)
    mc_bald = _entropy_bits(p.mean()) - _entropy_bits(p).mean()
    standard_error = _entropy_bits(p).std() / np.sqrt(f.size)
    assert U.floored_bald_bits(mu, var, GUESS, LAPSE) == pytest.approx(mc_bald, abs=5 * standard_error + 1e-6)
    assert U.floored_epistemic_variance(mu, var, GUESS, LAPSE) == pytest.approx(p.var(), rel=0.02, abs=1e-5)
    assert U.floored_mean(mu, var, GUESS, LAPSE) == pytest.approx(p.mean(), abs=5 * p.std() / np.sqrt(f.size))


def test_floored_bald_without_a_floor_is_the_exact_probit_information():
    # Houlsby's closed form approximates the same quantity to ~1e-3 bits
    mu, var = np.array([0.0, 1.5, -2.0]), np.array([1.0, 4.0, 0.5])
    np.testing.assert_allclose(U.floored_bald_bits(mu, var, 0.0, 0.0), U.bald_bits(mu, var), atol=5e-3)


def test_a_letter_far_too_small_or_far_too_large_is_worth_no_information():
    # latent far below threshold: the answer is a guess either way; far above: always right
    assert U.floored_bald_bits(-8.0, 0.5, GUESS, LAPSE) < 1e-4
    assert U.floored_bald_bits(8.0, 0.5, GUESS, LAPSE) < 1e-4
    assert U.floored_bald_bits(0.0, 1.0, GUESS, LAPSE) > 0.2


@pytest.mark.parametrize("mu, var", MOMENTS)
def test_floored_bald_gradient_matches_finite_differences(mu, var):
    g_mu, g_var = U.floored_bald_bits_grad(np.array(mu), np.array(var), GUESS, LAPSE)
    h_mu, h_var = 1e-5, 1e-5 * var
    num_mu = (U.floored_bald_bits(mu + h_mu, var, GUESS, LAPSE) - U.floored_bald_bits(mu - h_mu, var, GUESS, LAPSE)) / (
        2 * h_mu
    )
    num_var = (
        U.floored_bald_bits(mu, var + h_var, GUESS, LAPSE) - U.floored_bald_bits(mu, var - h_var, GUESS, LAPSE)
    ) / (2 * h_var)
    assert g_mu == pytest.approx(num_mu, rel=1e-4, abs=1e-8)
    assert g_var == pytest.approx(num_var, rel=1e-4, abs=1e-8)


# ---- what the floor changes for the classifier ------------------------------------------------


def test_a_lucky_guess_at_a_tiny_letter_barely_moves_the_floored_model():
    """The failure of issue 14: a correct answer to a letter far below threshold. Without the floor
    it reads as evidence of excellent acuity; with it, as the guess it almost surely was."""
    from lensopt.gp import kernels

    kernel = kernels.LinearContext(25.0, active_dims=(0,)) + SquaredExponential(2.0, variance=20.0, active_dims=(1,))
    sizes = np.r_[np.full(6, 1.0), np.full(6, 0.5), np.full(6, 0.0)]  # letter sizes, logMAR
    X_before = np.column_stack([sizes, np.zeros(18)])
    y_before = np.r_[np.ones(6), [1, 0, 1, 1, 0, 1], np.zeros(6)]  # threshold near 0.5 logMAR
    X, y = np.vstack([X_before, [[-1.0, 0.0]]]), np.r_[y_before, 1]  # then a lucky −1.0 logMAR letter
    tiny = np.array([[-1.0, 0.0]])
    for inference in ("laplace", "ep"):

        def p_tiny(floor, X, y):
            model = GPClassifier(kernel, inference=inference, guess_rate=floor[0], lapse_rate=floor[1])  # noqa: B023 - called within this iteration
            return model.fit(X, y).predict_proba(tiny)[0]

        plain_before, plain_after = p_tiny((0, 0), X_before, y_before), p_tiny((0, 0), X, y)
        floored_before, floored_after = p_tiny((GUESS, LAPSE), X_before, y_before), p_tiny((GUESS, LAPSE), X, y)
        assert plain_after > 4 * plain_before  # the plain model now expects tiny letters to be read
        assert floored_after < 1.5 * floored_before  # the floored model barely moves ...
        assert floored_after < 2 * GUESS  # ... and still expects a guess there
