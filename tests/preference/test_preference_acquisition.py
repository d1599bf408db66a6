"""Member and context acquisitions: gradients against finite differences, values against hand
formulas and Monte Carlo over the posterior."""

import numpy as np
import pytest
from scipy.stats import norm

from lensopt.gp.kernels import SquaredExponential
from lensopt.preference import PreferenceGP, default_kernel, duel_inputs
from lensopt.preference import acquisition as acq
from tests.preference.conftest import finite_difference, simulated_duels


@pytest.fixture(scope="module")
def plain():
    Z, y = simulated_duels(20, n_system=2, seed=2)
    return PreferenceGP(SquaredExponential([0.3, 0.3], variance=2.0)).fit(Z, y)


@pytest.fixture(scope="module")
def contextual():
    Z, y = simulated_duels(20, n_system=2, n_context=1, seed=5)
    return PreferenceGP(default_kernel([(0, 1), (0, 1)], n_context=1), n_context=1).fit(Z, y)


def _acquisitions(model, context):
    members = np.array([[0.3, 0.6], [0.8, 0.1]])
    return {
        "mean": acq.UtilityMean(model, context),
        "champion-ucb": acq.ChampionUCB(model, context, members[0], 1.64),
        "ei": acq.UtilityExpectedImprovement(model, context, 0.2),
        "challenge": acq.ChallengeVariance(model, context, members[:1]),
        "challenge-batch": acq.ChallengeVariance(model, context, members),
        "bivariate-ei": acq.BivariateExpectedImprovement(model, context, members[0]),
        "eiig": acq.ExpectedImprovementInformationGain(model, context, members[0]),
    }


@pytest.mark.parametrize("name", ["mean", "champion-ucb", "ei", "challenge", "challenge-batch", "bivariate-ei", "eiig"])
@pytest.mark.parametrize("which", ["plain", "contextual"])
def test_member_acquisition_gradients_match_finite_differences(name, which, plain, contextual):
    model, context = (plain, np.zeros(0)) if which == "plain" else (contextual, np.array([0.7]))
    function = _acquisitions(model, context)[name]
    X = np.random.default_rng(1).uniform(0.05, 0.95, (6, 2))
    value, grad = function.value_and_gradient(X)
    np.testing.assert_allclose(value, function(X), rtol=1e-12)
    np.testing.assert_allclose(grad, finite_difference(function, X), rtol=1e-4, atol=1e-7)


def test_context_bald_gradient_matches_finite_differences(contextual):
    function = acq.ContextBALD(contextual, np.array([[0.2, 0.3], [0.7, 0.7], [0.5, 0.1]]))
    S = np.linspace(0.1, 1.0, 7)[:, None]
    value, grad = function.value_and_gradient(S)
    np.testing.assert_allclose(value, function(S), rtol=1e-12)
    np.testing.assert_allclose(grad, finite_difference(function, S), rtol=1e-4, atol=1e-7)


def test_challenge_variance_is_the_variance_of_the_win_probability_by_monte_carlo(plain):
    champion = np.array([0.3, 0.3])
    X = np.array([[0.8, 0.2], [0.35, 0.3], [0.1, 0.9]])
    value = acq.ChallengeVariance(plain, np.zeros(0), champion[None])(X)
    mean, var = plain.predict_duel(duel_inputs(np.zeros(0), champion, X))
    g = mean + np.sqrt(var) * np.random.default_rng(0).standard_normal((200_000, 1))
    np.testing.assert_allclose(value, norm.cdf(g).var(axis=0), rtol=0.02, atol=1e-4)


def test_champion_ucb_is_the_bound_of_the_utility_difference_from_the_joint_posterior(plain):
    # μ_f(x) − μ_f(x*) + β sqrt(V f(x) + V f(x*) − 2 C(f(x), f(x*))), from the joint utility
    # posterior; zero at the champion itself (a duel against itself is settled)
    champion = np.array([0.3, 0.6])
    X = np.array([[0.8, 0.2], [0.35, 0.55], [0.1, 0.9]])
    value = acq.ChampionUCB(plain, np.zeros(0), champion, 1.64)(X)
    for x, v in zip(X, value):
        mean, cov = plain.predict_utility(np.vstack([x, champion]), full_cov=True)
        expected = mean[0] - mean[1] + 1.64 * np.sqrt(cov[0, 0] + cov[1, 1] - 2 * cov[0, 1])
        assert v == pytest.approx(expected, rel=1e-6, abs=1e-8)
    assert acq.ChampionUCB(plain, np.zeros(0), champion, 1.64)(champion[None])[0] == pytest.approx(0.0, abs=1e-3)


def test_bivariate_ei_is_the_expected_positive_part_of_the_duel_value_by_monte_carlo(plain):
    incumbent = np.array([0.5, 0.5])
    X = np.array([[0.3, 0.3], [0.9, 0.1]])
    value = acq.BivariateExpectedImprovement(plain, np.zeros(0), incumbent)(X)
    mean, var = plain.predict_duel(duel_inputs(np.zeros(0), X, incumbent))
    g = mean + np.sqrt(var) * np.random.default_rng(1).standard_normal((400_000, 1))
    np.testing.assert_allclose(value, np.maximum(g, 0).mean(axis=0), rtol=0.01, atol=1e-4)


def test_context_bald_sums_the_bald_of_every_pair(contextual):
    members = np.array([[0.2, 0.3], [0.7, 0.7], [0.5, 0.1]])
    S = np.array([[0.4], [0.9]])
    expected = sum(contextual.duel_bald(duel_inputs(S, members[i], members[j])) for i, j in [(0, 1), (0, 2), (1, 2)])
    np.testing.assert_allclose(acq.ContextBALD(contextual, members)(S), expected, rtol=1e-12)
