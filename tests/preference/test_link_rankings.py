"""Rankings through the acuity link: the Plackett–Luce terms against the stage probabilities written
out, finite differences and Gumbel-noise sorting (Monte Carlo), two-lens rankings against a logistic
duel, and the Laplace mode against scipy."""

import itertools

import numpy as np
import pytest
from scipy.optimize import minimize
from scipy.special import expit
from scipy.stats import norm

from lensopt.preference.link import RANKING_LOGIT_SCALE, AcuityLinkRankingGP, check_orders, plackett_luce_terms
from tests.preference.test_link import DISTINCT, GUESS, LAPSE, POINTS, acuity_mean, clarity_scipy, kernel, prior

# three-lens rankings of the test points, clearest first (one lens repeated across rankings)
ORDERS = np.array([[0, 1, 2], [3, 0, 1], [2, 3, 1], [4, 5, 0]])


def stage_log_probability(u, order):
    """``log P(order)`` under Plackett–Luce, one stage at a time with plain Python sums."""
    total = 0.0
    for j in range(len(order) - 1):
        rest = [float(np.exp(u[i])) for i in order[j:]]
        total += float(np.log(rest[0] / sum(rest)))
    return total


def test_the_terms_value_is_the_product_of_the_stage_probabilities():
    u = np.random.default_rng(0).normal(0.0, 2.0, len(POINTS))
    value, _, _ = plackett_luce_terms(u, ORDERS)
    assert value == pytest.approx(sum(stage_log_probability(u, order) for order in ORDERS), rel=1e-12)


def test_the_terms_gradient_and_curvature_match_finite_differences_and_the_curvature_is_psd():
    u = np.random.default_rng(1).normal(0.0, 2.0, len(POINTS))
    _, gradient, curvature = plackett_luce_terms(u, ORDERS)
    step = 1e-5
    eye = np.eye(len(u))

    def value(x):
        return plackett_luce_terms(x, ORDERS)[0]

    numeric = np.array([(value(u + step * e) - value(u - step * e)) / (2 * step) for e in eye])
    np.testing.assert_allclose(gradient, numeric, atol=1e-7)
    hessian = np.array(
        [
            [
                (
                    value(u + step * (a + b))
                    - value(u + step * (a - b))
                    - value(u - step * (a - b))
                    + value(u - step * (a + b))
                )
                / (4 * step * step)
                for b in eye
            ]
            for a in eye
        ]
    )
    np.testing.assert_allclose(curvature, -hessian, atol=1e-4)
    assert np.linalg.eigvalsh(curvature).min() > -1e-12


def test_the_order_probabilities_are_the_frequencies_of_sorted_gumbel_noisy_utilities():
    """The simulated patient ranks by sorting utilities plus Gumbel noise: 200,000 rankings of three
    lenses against ``exp(ℓ)`` of every order."""
    u = np.array([0.8, -0.3, 0.1])
    rng = np.random.default_rng(2)
    noisy = u + rng.gumbel(size=(200_000, 3))
    counts = {order: 0 for order in itertools.permutations(range(3))}
    for row in np.argsort(-noisy, axis=1):
        counts[tuple(int(i) for i in row)] += 1
    for order, count in counts.items():
        p = np.exp(plackett_luce_terms(u, np.array([order]))[0])
        assert count / 200_000 == pytest.approx(p, abs=4 * np.sqrt(p * (1 - p) / 200_000))


def test_a_ranking_of_two_lenses_is_a_logistic_duel_of_their_clarities():
    gp = AcuityLinkRankingGP(kernel(), acuity_mean(), GUESS, LAPSE)
    f = np.array([1.3, -0.4])
    h = clarity_scipy(f, GUESS, LAPSE)
    value = plackett_luce_terms(RANKING_LOGIT_SCALE * gp.link(f)[0], np.array([[0, 1]]))[0]
    assert np.exp(value) == pytest.approx(expit(RANKING_LOGIT_SCALE * (h[0] - h[1])), rel=1e-10)
    assert expit(RANKING_LOGIT_SCALE * (h[0] - h[1])) == pytest.approx(norm.cdf(h[0] - h[1]), abs=0.01)


def reference_log_posterior(f, points):
    m, K = prior(points)
    u = RANKING_LOGIT_SCALE * clarity_scipy(f, GUESS, LAPSE)
    value = sum(stage_log_probability(u, order) for order in ORDERS)
    return value - 0.5 * (f - m) @ np.linalg.solve(K, f - m)


@pytest.mark.parametrize("points", [POINTS, DISTINCT], ids=["lenses_repeated", "distinct_lenses"])
def test_the_laplace_mode_is_the_maximum_scipy_finds(points):
    gp = AcuityLinkRankingGP(kernel(), acuity_mean(), GUESS, LAPSE).fit(points, ORDERS)
    m, K = prior(points)
    L = np.linalg.cholesky(K)
    result = minimize(
        lambda w: -reference_log_posterior(m + L @ w, points),
        np.zeros(len(points)),
        method="BFGS",
        options={"gtol": 1e-9},
    )
    np.testing.assert_allclose(gp.f_, m + L @ result.x, atol=1e-4)
    assert gp.log_posterior(gp.f_) == pytest.approx(reference_log_posterior(gp.f_, points), rel=1e-9, abs=1e-9)
    assert not np.allclose(gp.f_, m, atol=1e-2)  # the rankings moved f off the prior mean
    mean, variance = gp.predict(points)
    np.testing.assert_allclose(mean, gp.f_, atol=1e-4)
    assert np.all(variance < kernel().diag(points))  # the rankings taught something at every lens


def test_the_lens_ranked_first_is_predicted_clearer_than_the_one_ranked_last():
    points = np.array([[0.3, 0.0, 0.0, 0.0], [0.3, 0.5, 0.0, 0.0], [0.3, -0.5, 0.0, 0.0]])
    gp = AcuityLinkRankingGP(kernel(), acuity_mean(), GUESS, LAPSE).fit(points, np.array([[1, 0, 2]] * 4))
    mean, _ = gp.predict(points)
    assert mean[1] > mean[0] > mean[2]


@pytest.mark.parametrize(
    "orders, message",
    [
        (np.array([0, 1, 2]), "orders must be a"),
        (np.array([[0.0, 1.0]]), "orders must be a"),
        (np.array([[0, 9]]), "must index the 6 points"),
        (np.array([[0, 0, 1]]), "distinct points"),
    ],
)
def test_bad_orders_are_one_clear_value_error(orders, message):
    with pytest.raises(ValueError, match=message) as caught:
        check_orders(orders, 6)
    assert "\n" not in str(caught.value)
