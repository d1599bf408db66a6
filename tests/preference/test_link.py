"""Duels through the acuity link: the link against the normal quantile and the simulated patient, its
derivative and the answers' terms against finite differences, the Laplace mode against scipy, the
posterior against Gaussian conditioning written out here, and the duel's probability and information
against Monte Carlo."""

import math
from statistics import NormalDist

import numpy as np
import pytest
from scipy.optimize import minimize
from scipy.stats import multivariate_normal, norm

from lensopt.gp.kernels import LinearContext, SquaredExponential
from lensopt.gp.mean import AcuityLawMean
from lensopt.observer import SimulatedPatient
from lensopt.preference.link import AcuityLinkDuelGP, acuity_link, answer_terms
from tests.preference.conftest import finite_difference

NORMAL = NormalDist()
GUESS, LAPSE = 1 / 10, 0.02
RATES = [(1 / 26, 0.0), (1 / 10, 0.02), (0.5, 0.05), (0.0, 0.1)]
BAD_RATES = [
    (0.5, 0.5, r"guess_rate \+ lapse_rate must be < 1"),
    (0.9, 0.2, r"guess_rate \+ lapse_rate must be < 1"),
    (-0.1, 0.02, "guess_rate must be a finite number >= 0"),
    (math.nan, 0.0, "guess_rate must be a finite number >= 0"),
    (0.1, -0.02, "lapse_rate must be a finite number >= 0"),
    (0.1, math.inf, "lapse_rate must be a finite number >= 0"),
]

# [letter logMAR, M, J0, J45]: two letter sizes, lenses around the centre (the start) 0.5 D apart in M
POINTS = np.array(
    [
        [0.2, 0.0, 0.0, 0.0],
        [0.2, 0.5, 0.0, 0.0],
        [0.2, -0.5, 0.0, 0.0],
        [0.2, 0.0, 0.25, 0.0],
        [0.4, 0.0, 0.0, 0.0],
        [0.4, 0.5, 0.0, 0.0],
    ]
)
PAIRS = np.array([[0, 1], [0, 2], [2, 1], [0, 3], [4, 5]])
ANSWERS = np.array([1, 1, -1, 0, 1])

# duels at new points: the centre against a lens 0.5 D away in M (or in J0), at letter sizes from
# below the threshold to far above it; the first lens is shared by several duels
SIZES = np.array([-0.2, 0.1, 0.3, 0.5, 1.5])
FIRST = np.column_stack([np.concatenate([SIZES, [0.2]]), np.zeros((6, 3))])
SECOND = FIRST.copy()
SECOND[:5, 1] = 0.5
SECOND[5, 2] = 0.25


def kernel():
    return LinearContext(17.6, active_dims=(0,)) + SquaredExponential(1.0, variance=9.0, active_dims=(1, 2, 3))


def acuity_mean():
    return AcuityLawMean(0.0, 14.0, (0.0, 0.0, 0.0), (1, 2, 3), slope=14.0)


def model(guess=GUESS, lapse=LAPSE):
    return AcuityLinkDuelGP(kernel(), acuity_mean(), guess, lapse)


@pytest.fixture(scope="module")
def fitted():
    return model().fit(POINTS, PAIRS, ANSWERS)


@pytest.fixture(params=["prior", "fitted"])
def either(request, fitted):
    return model() if request.param == "prior" else fitted


def clarity(f, guess, lapse):
    """``Φ⁻¹(γ + (1 − γ − λ) Φ(f))`` with the standard library, one value at a time."""
    return np.array([NORMAL.inv_cdf(guess + (1 - guess - lapse) * NORMAL.cdf(v)) for v in np.ravel(f)])


def clarity_scipy(f, guess, lapse):
    """The same, vectorized through scipy.stats (moderate ``f``, or any ``f`` when ``λ > 0``)."""
    return norm.ppf(guess + (1 - guess - lapse) * norm.cdf(f))


# ---------------------------------------------------------------- the link


@pytest.mark.parametrize("guess, lapse", RATES)
def test_link_is_the_normal_quantile_of_the_letter_probability(guess, lapse):
    f = np.linspace(-3.0, 3.0, 25)
    h, _ = acuity_link(f, guess, lapse)
    np.testing.assert_allclose(h, clarity(f, guess, lapse), rtol=1e-10, atol=1e-10)


@pytest.mark.parametrize("n_alternatives, lapse, slope", [(26, 0.0, 5.0), (10, 0.02, 14.0), (4, 0.05, 10.0)])
def test_link_is_the_simulated_patients_duel_utility(n_alternatives, lapse, slope):
    """Through the correction ``f = a s``; through another lens ``f = a (s − VA(lens))``, the
    patient's own acuity law."""
    patient = SimulatedPatient(-1.0, -0.5, slope=slope, n_alternatives=n_alternatives, lapse=lapse)
    sizes = np.array([-0.3, -0.1, 0.0, 0.05, 0.2, 0.6, 1.2])
    h, _ = acuity_link(slope * sizes, 1 / n_alternatives, lapse)
    np.testing.assert_allclose(h, patient.duel_utility(sizes, -1.0, -0.5), rtol=1e-9, atol=1e-9)
    blurred = slope * (sizes - patient.visual_acuity(-0.25, -1.0))
    h, _ = acuity_link(blurred, 1 / n_alternatives, lapse)
    np.testing.assert_allclose(h, patient.duel_utility(sizes, -0.25, -1.0), rtol=1e-9, atol=1e-9)


@pytest.mark.parametrize("guess, lapse", [(1 / 26, 0.02), (1 / 10, 0.05), (0.0, 0.1)])
def test_link_rises_from_the_guess_quantile_to_the_lapse_quantile(guess, lapse):
    f = np.linspace(-40.0, 40.0, 801)
    h, _ = acuity_link(f, guess, lapse)
    assert np.all(np.isfinite(h))
    assert np.all(np.diff(h) >= 0.0)
    assert np.all(h < NORMAL.inv_cdf(1 - lapse) + 1e-12)
    np.testing.assert_allclose(h[-1], NORMAL.inv_cdf(1 - lapse), atol=1e-9)
    np.testing.assert_allclose(acuity_link(np.array([20.0]), guess, lapse)[0], NORMAL.inv_cdf(1 - lapse), atol=1e-9)
    if guess > 0:
        assert np.all(h > NORMAL.inv_cdf(guess) - 1e-12)
        np.testing.assert_allclose(h[0], NORMAL.inv_cdf(guess), atol=1e-9)
    else:  # no guessing: the clarity falls with f without a floor
        assert h[0] < -30.0


@pytest.mark.parametrize("guess", [1 / 26, 1 / 10, 0.5])
def test_link_without_lapse_follows_the_latent_at_large_letters(guess):
    """With ``λ = 0``: ``1 − P = κ Φ(−f)``, so ``h = −Φ⁻¹(κ Φ(−f)) ≈ f − ln κ / f`` (Mills ratio) —
    far from ``1 − P``'s rounding to 0."""
    kappa = 1 - guess
    f = np.array([5.0, 10.0, 20.0, 30.0])
    h, dh = acuity_link(f, guess, 0.0)
    assert np.all(np.isfinite(h)) and np.all(np.isfinite(dh))
    np.testing.assert_allclose(h, norm.isf(kappa * norm.sf(f)), rtol=1e-10)
    np.testing.assert_allclose(h[1:], f[1:] - math.log(kappa) / f[1:], atol=2e-3)
    np.testing.assert_allclose(dh[1:], 1.0 + math.log(kappa) / f[1:] ** 2, atol=2e-3)


@pytest.mark.parametrize("guess, lapse", RATES)
def test_link_derivative_matches_finite_differences(guess, lapse):
    f = np.array([-6.0, -2.5, -1.0, -0.3, -1e-3, 0.0, 1e-3, 0.4, 1.0, 2.0, 3.5, 6.0])
    _, dh = acuity_link(f, guess, lapse)
    step = 1e-6
    numeric = (acuity_link(f + step, guess, lapse)[0] - acuity_link(f - step, guess, lapse)[0]) / (2 * step)
    np.testing.assert_allclose(dh, numeric, rtol=1e-6, atol=1e-8)
    assert np.all(dh >= 0.0)


def test_link_of_an_array_keeps_its_shape():
    f = np.linspace(-2.0, 2.0, 6).reshape(2, 3)
    h, dh = acuity_link(f, GUESS, LAPSE)
    assert h.shape == dh.shape == (2, 3)
    np.testing.assert_allclose(h.ravel(), clarity(f, GUESS, LAPSE), rtol=1e-10)


@pytest.mark.parametrize("guess, lapse, message", BAD_RATES)
def test_link_refuses_rates_that_leave_no_information(guess, lapse, message):
    with pytest.raises(ValueError, match=message):
        acuity_link(np.zeros(3), guess, lapse)


# ---------------------------------------------------------------- the answers' terms


def test_answer_terms_are_the_log_probabilities_of_each_answer():
    delta = np.array([-2.0, -0.5, 0.0, 0.7, 3.0])
    for answer, expected in [
        (1, norm.logcdf(delta)),
        (-1, norm.logcdf(-delta)),
        (0, norm.logcdf(delta) + norm.logcdf(-delta)),
    ]:
        value, _, _ = answer_terms(delta, np.full(delta.shape, answer))
        np.testing.assert_allclose(value, expected, rtol=1e-12)
    value, _, _ = answer_terms(delta, np.array([1, -1, 0, 1, -1]))
    np.testing.assert_allclose(
        value, [norm.logcdf(-2.0), norm.logcdf(0.5), 2 * math.log(0.5), norm.logcdf(0.7), norm.logcdf(-3.0)], rtol=1e-9
    )


@pytest.mark.parametrize("answer", [1, -1, 0])
def test_answer_slope_and_curvature_match_finite_differences(answer):
    delta = np.array([-8.0, -4.0, -1.5, -0.2, 0.0, 0.3, 1.0, 2.5, 5.0, 8.0])
    answers = np.full(delta.shape, answer)
    _, slope, curvature = answer_terms(delta, answers)
    step = 1e-5

    def value(d):
        return answer_terms(d, answers)[0]

    np.testing.assert_allclose(slope, (value(delta + step) - value(delta - step)) / (2 * step), rtol=1e-6, atol=1e-7)
    second = (value(delta + step) - 2 * value(delta) + value(delta - step)) / step**2
    np.testing.assert_allclose(curvature, -second, rtol=1e-3, atol=1e-4)
    slope_step = (answer_terms(delta + step, answers)[1] - answer_terms(delta - step, answers)[1]) / (2 * step)
    np.testing.assert_allclose(curvature, -slope_step, rtol=1e-6, atol=1e-8)
    assert np.all(curvature > 0.0)


# ---------------------------------------------------------------- the fit


def reference_likelihood(f, pairs=PAIRS, answers=ANSWERS, guess=GUESS, lapse=LAPSE):
    """``(Σ ℓᵢ, Σ ℓ′ᵢ vᵢ, W = Σ cᵢ vᵢ vᵢᵀ)`` written out with scipy.stats: ``ℓ = log P(answer | Δ)``,
    ``vᵢ = h′(f_a) e_a − h′(f_b) e_b`` with ``h′ = κ φ(f) / φ(h)``, and ``cᵢ = −ℓ″(Δᵢ)`` from
    ``r = φ/Φ``: ``(log Φ)′(z) = r``, ``−(log Φ)″(z) = r (z + r)``."""
    h = clarity_scipy(f, guess, lapse)
    dh = (1 - guess - lapse) * norm.pdf(f) / norm.pdf(h)
    value, gradient, W = 0.0, np.zeros(len(f)), np.zeros((len(f), len(f)))
    for (a, b), answer in zip(pairs, answers):
        delta = h[a] - h[b]
        v = np.zeros(len(f))
        v[a], v[b] = dh[a], -dh[b]
        for sign in (1, -1):
            if answer in (sign, 0):
                z = sign * delta
                r = norm.pdf(z) / norm.cdf(z)
                value += norm.logcdf(z)
                gradient += sign * r * v
                W += r * (z + r) * np.outer(v, v)
    return value, gradient, W


def prior(points=POINTS, jitter=1e-6):
    return acuity_mean()(points), kernel()(points) + jitter * np.eye(len(points))


def reference_log_posterior(f, points=POINTS, pairs=PAIRS, answers=ANSWERS, guess=GUESS, lapse=LAPSE):
    """``Σ log P(answer | Δ) − ½ (f − m)ᵀ K⁻¹ (f − m)``."""
    m, K = prior(points)
    return reference_likelihood(f, pairs, answers, guess, lapse)[0] - 0.5 * (f - m) @ np.linalg.solve(K, f - m)


def scipy_mode(points=POINTS, pairs=PAIRS, answers=ANSWERS, guess=GUESS, lapse=LAPSE):
    """The maximum of the log posterior by BFGS in whitened coordinates ``f = m + L u`` (``K = L Lᵀ``):
    the prior term is then ``½ |u|²``, well conditioned even where ``K`` is nearly singular (a lens
    repeated at two letter sizes: the linear letter-size part makes ``f`` there a plane)."""
    m, K = prior(points)
    L = np.linalg.cholesky(K)

    def negative(u):
        value, gradient, _ = reference_likelihood(m + L @ u, pairs, answers, guess, lapse)
        return 0.5 * u @ u - value, u - L.T @ gradient

    result = minimize(negative, np.zeros(len(points)), jac=True, method="BFGS", options={"gtol": 1e-10})
    return m + L @ result.x


# a second design: every lens distinct, so that K is well conditioned
DISTINCT = POINTS.copy()
DISTINCT[4:, 1] = [0.25, 0.75]
DESIGNS = {"lenses_repeated_at_two_letter_sizes": POINTS, "distinct_lenses": DISTINCT}


def test_log_posterior_matches_an_independent_computation(fitted):
    rng = np.random.default_rng(1)
    for f in [fitted.f_, acuity_mean()(POINTS), *rng.normal(2.0, 2.0, (3, len(POINTS)))]:
        assert fitted.log_posterior(f) == pytest.approx(reference_log_posterior(f), rel=1e-8, abs=1e-8)


@pytest.mark.parametrize("design", sorted(DESIGNS))
def test_fit_mode_maximizes_the_log_posterior_as_scipy_finds_it(design):
    points = DESIGNS[design]
    gp = model().fit(points, PAIRS, ANSWERS)
    expected = scipy_mode(points)
    assert gp.f_.shape == (len(points),)
    np.testing.assert_allclose(gp.f_, expected, atol=1e-4)
    assert gp.log_posterior(gp.f_) >= reference_log_posterior(expected, points) - 1e-8
    assert not np.allclose(gp.f_, acuity_mean()(points), atol=1e-2)  # the duels moved f off the prior mean


@pytest.mark.parametrize("answer", [1, -1, 0], ids=["first", "second", "same"])
@pytest.mark.parametrize("guess, lapse", [(1 / 26, 0.0), (1 / 10, 0.05)])
def test_fit_with_one_answer_type_matches_scipy(answer, guess, lapse):
    answers = np.full(len(PAIRS), answer)
    gp = model(guess, lapse).fit(DISTINCT, PAIRS, answers)
    np.testing.assert_allclose(gp.f_, scipy_mode(DISTINCT, PAIRS, answers, guess, lapse), atol=1e-4)


@pytest.mark.parametrize("design", sorted(DESIGNS))
def test_log_posterior_gradient_vanishes_at_the_fitted_mode(design):
    """Central differences of the log posterior along the columns of ``L`` (``K = L Lᵀ``): the
    gradient in whitened coordinates, zero at the mode and not elsewhere."""
    points = DESIGNS[design]
    gp = model().fit(points, PAIRS, ANSWERS)
    L = np.linalg.cholesky(prior(points)[1])
    step = 1e-5

    def gradient(f):
        return np.array([(gp.log_posterior(f + step * e) - gp.log_posterior(f - step * e)) / (2 * step) for e in L.T])

    np.testing.assert_allclose(gradient(gp.f_), 0.0, atol=1e-5)
    assert np.max(np.abs(gradient(acuity_mean()(points)))) > 1e-2


# ---------------------------------------------------------------- predictions


def test_predict_at_the_training_points_returns_the_mode(fitted):
    mean, variance = fitted.predict(POINTS)
    np.testing.assert_allclose(mean, fitted.f_, atol=1e-4)
    assert np.all(variance > 0.0) and np.all(variance < kernel().diag(POINTS))


def test_posterior_covariance_at_the_training_points_is_the_laplace_covariance(fitted):
    K = kernel()(POINTS) + fitted.jitter * np.eye(len(POINTS))
    _, _, W = reference_likelihood(fitted.f_)
    expected = np.linalg.inv(np.linalg.inv(K) + W)
    _, covariance = fitted.predict(POINTS, full_cov=True)
    np.testing.assert_allclose(covariance, expected, atol=1e-4)


def test_full_covariance_is_symmetric_positive_semidefinite_and_matches_the_variances(either):
    X = np.vstack([POINTS, FIRST, SECOND, [[0.0, -1.0, 0.5, -0.25]]])
    mean, covariance = either.predict(X, full_cov=True)
    mean_only, variance = either.predict(X)
    np.testing.assert_allclose(mean, mean_only, rtol=1e-12)
    np.testing.assert_allclose(covariance, covariance.T, atol=1e-9)
    assert np.min(np.linalg.eigvalsh(0.5 * (covariance + covariance.T))) > -1e-6
    np.testing.assert_allclose(np.diag(covariance), variance, rtol=1e-9, atol=1e-9)


def test_unfitted_prediction_is_the_prior():
    gp = model()
    X = np.vstack([FIRST, SECOND])
    mean, covariance = gp.predict(X, full_cov=True)
    np.testing.assert_allclose(mean, 14.0 * X[:, 0] - 14.0 * np.log10(1 + np.sum(X[:, 1:] ** 2, axis=1)))
    np.testing.assert_allclose(
        covariance,
        17.6 * np.outer(X[:, 0], X[:, 0]) + 9.0 * np.exp(-0.5 * np.sum((X[:, None, 1:] - X[None, :, 1:]) ** 2, axis=2)),
    )


def test_mean_gradient_matches_finite_differences(either):
    X = np.array([[0.1, 0.2, -0.1, 0.05], [0.35, -0.4, 0.3, 0.0], [0.2, 0.5, 0.0, 0.0], [1.0, 1.5, -0.5, 0.5]])
    mean, gradient = either.predict_mean_with_gradient(X)
    np.testing.assert_allclose(mean, either.predict(X)[0], rtol=1e-12)
    assert gradient.shape == X.shape
    numeric = finite_difference(lambda Z: either.predict(Z)[0], X)
    np.testing.assert_allclose(gradient, numeric, rtol=1e-6, atol=1e-5)


@pytest.mark.parametrize("n_duels", [6, 70])
def test_pair_moments_are_the_joint_prediction_of_the_two_lenses(either, n_duels):
    """Against the full covariance of the stacked ``[X1; X2]``: with a first lens shared by several
    duels (6) and with more distinct first lenses than fit in one block (70)."""
    if n_duels == 6:
        X1, X2 = FIRST, SECOND
    else:
        rng = np.random.default_rng(4)
        X1 = np.column_stack([rng.uniform(-0.2, 1.0, n_duels), rng.uniform(-1, 1, (n_duels, 3))])
        X2 = X1 + np.column_stack([np.zeros(n_duels), rng.normal(0, 0.5, (n_duels, 3))])
    mu1, mu2, v1, v2, c12 = either.pair_moments(X1, X2)
    mean, covariance = either.predict(np.vstack([X1, X2]), full_cov=True)
    n = len(X1)
    np.testing.assert_allclose(mu1, mean[:n], rtol=1e-10, atol=1e-10)
    np.testing.assert_allclose(mu2, mean[n:], rtol=1e-10, atol=1e-10)
    np.testing.assert_allclose(v1, np.diag(covariance)[:n], rtol=1e-9, atol=1e-9)
    np.testing.assert_allclose(v2, np.diag(covariance)[n:], rtol=1e-9, atol=1e-9)
    np.testing.assert_allclose(c12, np.diag(covariance[:n, n:]), rtol=1e-9, atol=1e-9)


# ---------------------------------------------------------------- the duel's probability and information


def monte_carlo(gp, X1, X2, draws=200_000, seed=0, guess=GUESS, lapse=LAPSE):
    """``(P(first), BALD bits, standard errors of both)`` from joint Gaussian draws of ``(f₁, f₂)``."""
    rng = np.random.default_rng(seed)
    mu1, mu2, v1, v2, c12 = gp.pair_moments(X1, X2)

    def entropy(p):
        p = np.clip(p, 1e-15, 1 - 1e-15)
        return -(p * np.log2(p) + (1 - p) * np.log2(1 - p))

    out = []
    for i in range(len(mu1)):
        f = multivariate_normal([mu1[i], mu2[i]], [[v1[i], c12[i]], [c12[i], v2[i]]]).rvs(draws, random_state=rng)
        p = norm.cdf(clarity_scipy(f[:, 0], guess, lapse) - clarity_scipy(f[:, 1], guess, lapse))
        e = entropy(p)
        out.append((p.mean(), entropy(p.mean()) - e.mean(), p.std() / math.sqrt(draws), e.std() / math.sqrt(draws)))
    return np.array(out).T


def test_duel_probability_matches_monte_carlo(either):
    probability, _, error, _ = monte_carlo(either, FIRST, SECOND)
    np.testing.assert_allclose(either.duel_probability(FIRST, SECOND), probability, atol=3e-3 + 4 * error.max())


def test_duel_bald_matches_monte_carlo(either):
    _, bald, _, error = monte_carlo(either, FIRST, SECOND)
    np.testing.assert_allclose(either.duel_bald(FIRST, SECOND), bald, atol=1e-2 + 4 * error.max())


def test_duel_quadrature_converges_to_monte_carlo_with_more_nodes(either):
    """The product Gauss–Hermite grid itself (its correlated second coordinate): with 64 nodes per
    dimension it agrees with Monte Carlo to the Monte Carlo error."""
    probability, bald, p_error, b_error = monte_carlo(either, FIRST, SECOND)
    p, w = either.duel_probability_draws(FIRST, SECOND, nodes=64)
    np.testing.assert_allclose(w.sum(), 1.0)
    mean = w @ p
    clipped = np.clip(p, 1e-15, 1 - 1e-15)
    entropy = -(clipped * np.log2(clipped) + (1 - clipped) * np.log2(1 - clipped))
    m = np.clip(mean, 1e-15, 1 - 1e-15)
    information = -(m * np.log2(m) + (1 - m) * np.log2(1 - m)) - w @ entropy
    np.testing.assert_allclose(mean, probability, atol=4 * p_error.max() + 5e-4)
    np.testing.assert_allclose(information, bald, atol=4 * b_error.max() + 1e-3)


def test_swapping_the_lenses_complements_the_probability_and_keeps_the_information(either):
    """``P(first | x₂, x₁) = 1 − P(first | x₁, x₂)`` and the information is the same, exactly; the
    quadrature to the tolerance of the Monte Carlo tests."""
    forward, backward = either.duel_probability(FIRST, SECOND), either.duel_probability(SECOND, FIRST)
    np.testing.assert_allclose(backward, 1 - forward, atol=3e-3)
    np.testing.assert_allclose(either.duel_bald(SECOND, FIRST), either.duel_bald(FIRST, SECOND), atol=1e-2)


def test_a_duel_of_a_lens_with_itself_is_even_and_says_nothing(either):
    np.testing.assert_allclose(either.duel_probability(FIRST, FIRST), 0.5, atol=1e-12)
    np.testing.assert_allclose(either.duel_bald(FIRST, FIRST), 0.0, atol=1e-9)


@pytest.mark.parametrize("guess", [1 / 26, 1 / 10])
@pytest.mark.parametrize("fit", [False, True], ids=["prior", "fitted"])
def test_a_duel_says_more_near_the_lenses_threshold_than_at_huge_letters(guess, fit):
    """Lapse 0.02, the acuity law's mean: the centre lens against one 0.5 D away in M tells more at
    letters of 0.1 logMAR (near both thresholds) than at 1.5 logMAR (both read)."""
    gp = model(guess, 0.02)
    if fit:
        gp.fit(POINTS, PAIRS, ANSWERS)
    near, huge = np.array([[0.1, 0.0, 0.0, 0.0]]), np.array([[1.5, 0.0, 0.0, 0.0]])
    shift = np.array([[0.0, 0.5, 0.0, 0.0]])
    bald_near, bald_huge = gp.duel_bald(near, near + shift)[0], gp.duel_bald(huge, huge + shift)[0]
    _, mc_near, _, _ = monte_carlo(gp, near, near + shift, guess=guess)
    _, mc_huge, _, _ = monte_carlo(gp, huge, huge + shift, guess=guess)
    assert mc_near > 5 * mc_huge  # the physics, by Monte Carlo
    assert bald_near > 5 * bald_huge  # and as the model computes it


# ---------------------------------------------------------------- bad input


@pytest.mark.parametrize(
    "pairs, answers, message",
    [
        (PAIRS, [1, 1, -1, 0, 2], "answers must be"),
        (PAIRS, [1.0, 1.0, -1.0, 0.5, 1.0], "answers must be"),
        (PAIRS, [[1, 1, -1, 0, 1]], "answers must be"),
        ([[0, 1], [2, 2]], [1, -1], "two different rows"),
        ([[0, 1], [0, 6]], [1, -1], "two different rows"),
        ([[0, 1], [-1, 2]], [1, -1], "two different rows"),
        (PAIRS, [1, 1, -1], "5 duels but 3 answers"),
        (PAIRS[:2], [1, 1, -1], "2 duels but 3 answers"),
    ],
)
def test_fit_refuses_bad_duels(pairs, answers, message):
    with pytest.raises(ValueError, match=message):
        model().fit(POINTS, pairs, answers)


@pytest.mark.parametrize("guess, lapse, message", BAD_RATES)
def test_model_refuses_rates_that_leave_no_information(guess, lapse, message):
    with pytest.raises(ValueError, match=message):
        AcuityLinkDuelGP(kernel(), acuity_mean(), guess, lapse)


def test_model_refuses_a_constant_for_a_mean():
    with pytest.raises(ValueError, match="MeanFunction"):
        AcuityLinkDuelGP(kernel(), 0.0, GUESS, LAPSE)  # type: ignore[arg-type]
