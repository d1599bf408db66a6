"""The ranking GP: ELBO maximization, predictions, posterior draws, learned δ, agreement with duels."""

import numpy as np
import pytest
from scipy.stats import spearmanr

from lensopt.gp.kernels import SquaredExponential
from lensopt.gp.mean import BowlMean
from lensopt.preference import PreferenceGP
from lensopt.ranking.data import RankingObservation
from lensopt.ranking.likelihood import TIE, all_outcomes
from lensopt.ranking.model import TIE_THRESHOLD_BOUNDS, RankingGP
from tests.ranking.conftest import bump, gumbel_answer

KERNEL = SquaredExponential(0.15, variance=2.0)


def _observations(n, seed=0, m=2, delta=0.0, top_k=1, d=1):
    """``n`` random sets on [0, 1]^d answered by the Gumbel noise model of the bump utility."""
    rng = np.random.default_rng(seed)
    observations = []
    for _ in range(n):
        X = rng.uniform(size=(m, d))
        outcome = gumbel_answer(bump(X), rng, delta, top_k)
        observations.append(RankingObservation(X, outcome, ties_allowed=delta > 0))
    return observations


def test_elbo_increases_at_every_iteration_and_ends_above_the_prior():
    observations = _observations(25, seed=1, delta=0.5)
    trace = []
    model = RankingGP(KERNEL, learn_tie_threshold=True).fit(observations, callback=lambda i, elbo: trace.append(elbo))
    assert len(trace) == model.n_iterations_ >= 3
    assert np.all(np.diff(trace) >= -1e-9)
    prior = RankingGP(KERNEL, max_iterations=1)
    prior_elbo = prior.fit(observations).elbo()  # after one step; the prior itself is lower still
    assert trace[-1] == pytest.approx(model.elbo_) and model.elbo_ > prior_elbo
    assert model.elbo() == pytest.approx(model.elbo_, abs=1e-9)


def test_pairs_without_ties_rank_the_grid_like_a_probit_duel_model():
    """δ = 0 and pairs: the logit-ranking posterior mean orders a grid like PreferenceGP's utility."""
    observations = _observations(40, seed=2)
    ranking = RankingGP(KERNEL).fit(observations)
    Z = np.array([np.concatenate([o.inputs[o.outcome[0]], o.inputs[1 - o.outcome[0]]]) for o in observations])
    duel = PreferenceGP(SquaredExponential(0.15, variance=2.0)).fit(Z, np.ones(len(Z)))
    grid = np.linspace(0, 1, 101)[:, None]
    rho = spearmanr(ranking.predict(grid)[0], duel.predict_utility(grid)[0]).statistic
    assert rho >= 0.9
    assert abs(grid[np.argmax(ranking.predict(grid)[0]), 0] - 0.3) < 0.1


def test_prediction_at_the_training_inputs_is_the_variational_posterior():
    """Eq. 6 with U as inducing points returns q(f_U) itself at U (up to the jitter on K_UU)."""
    model = RankingGP(KERNEL).fit(_observations(15, seed=3, m=3, top_k=2))
    m, S = model.training_posterior()
    mean, cov = model.predict(model.inputs_, full_cov=True)
    np.testing.assert_allclose(mean, m, atol=1e-5)
    np.testing.assert_allclose(cov, S, atol=1e-5)
    np.testing.assert_allclose(model.predict(model.inputs_)[1], np.diag(S), atol=1e-5)


def test_mean_gradient_matches_finite_differences():
    model = RankingGP(SquaredExponential([0.3, 0.4], variance=1.0)).fit(_observations(12, seed=4, d=2))
    X = np.random.default_rng(0).uniform(size=(5, 2))
    _, grad = model.predict_mean_with_gradient(X)
    for k in range(2):
        e = np.zeros(2)
        e[k] = 1e-6
        fd = (model.predict(X + e)[0] - model.predict(X - e)[0]) / 2e-6
        np.testing.assert_allclose(grad[:, k], fd, atol=1e-6)


def test_posterior_function_draws_have_the_predictive_mean_and_variance():
    model = RankingGP(KERNEL).fit(_observations(15, seed=5, delta=0.4))
    X = np.linspace(0, 1, 7)[:, None]
    draws = model.sample_functions(4000, np.random.default_rng(1), n_features=2048)(X)
    mean, var = model.predict(X)
    np.testing.assert_allclose(draws.mean(axis=1), mean, atol=4 * np.sqrt(var.max() / 4000) + 0.02)
    np.testing.assert_allclose(draws.var(axis=1), var, rtol=0.15, atol=0.02)


def test_outcome_probabilities_match_gumbel_simulation_over_the_predictive():
    model = RankingGP(KERNEL, tie_threshold=0.6).fit(_observations(15, seed=6, delta=0.6))
    X_set = np.array([[0.25], [0.6]])
    outcomes = all_outcomes(2, 1, ties=True)
    closed = model.outcome_probabilities(X_set, outcomes, n_samples=100_000, rng=0)
    rng = np.random.default_rng(9)
    f = model.sample_joint(X_set, 200_000, rng)
    u = f + rng.gumbel(size=f.shape)
    gap = u[:, 0] - u[:, 1]
    empirical = [np.mean(gap >= 0.6), np.mean(gap <= -0.6), np.mean(np.abs(gap) < 0.6)]
    assert outcomes[2] == TIE
    np.testing.assert_allclose(closed, empirical, atol=0.006)


def test_learned_tie_threshold_grows_with_the_frequency_of_ties():
    few = RankingGP(KERNEL, tie_threshold=0.5, learn_tie_threshold=True).fit(_observations(60, seed=7, delta=0.1))
    many = RankingGP(KERNEL, tie_threshold=0.5, learn_tie_threshold=True).fit(_observations(60, seed=7, delta=2.0))
    lo, hi = TIE_THRESHOLD_BOUNDS
    assert lo <= few.tie_threshold_ < many.tie_threshold_ <= hi
    assert many.tie_threshold_ > 1.0 and few.tie_threshold_ < 0.5


def test_tie_threshold_is_kept_until_a_tie_is_observed():
    """Without a tie the bound increases as δ shrinks (eq. 1), so δ stays at its start value."""
    observations = [o for o in _observations(30, seed=11, delta=0.3) if o.outcome != TIE]
    model = RankingGP(KERNEL, tie_threshold=0.7, learn_tie_threshold=True).fit(observations)
    assert model.tie_threshold_ == 0.7


def test_kernel_hyperparameters_are_learned_within_bounds_or_left_fixed():
    observations = _observations(30, seed=8)
    fixed = RankingGP(KERNEL).fit(observations)
    np.testing.assert_array_equal(fixed.kernel_.theta, KERNEL.theta)
    learned = RankingGP(KERNEL, learn_kernel=True).fit(observations)
    assert not np.allclose(learned.kernel_.theta, KERNEL.theta)
    bounds = KERNEL.bounds
    assert np.all((learned.kernel_.theta >= bounds[:, 0] - 1e-9) & (learned.kernel_.theta <= bounds[:, 1] + 1e-9))
    assert learned.elbo_ >= fixed.elbo_ - 1e-6


def test_warm_start_reaches_the_cold_start_posterior():
    observations = _observations(20, seed=10, delta=0.5)
    warm = RankingGP(KERNEL).fit(observations[:19]).fit(observations)
    cold = RankingGP(KERNEL).fit(observations, warm_start=False)
    assert warm.elbo_ == pytest.approx(cold.elbo_, abs=1e-5)
    grid = np.linspace(0, 1, 11)[:, None]
    np.testing.assert_allclose(warm.predict(grid)[0], cold.predict(grid)[0], atol=1e-3)


def test_before_any_observation_the_prediction_is_the_prior():
    model = RankingGP(KERNEL).fit([])
    mean, var = model.predict(np.array([[0.2], [0.7]]))
    np.testing.assert_array_equal(mean, 0.0)
    np.testing.assert_allclose(var, 2.0)


BOWL = BowlMean(0.2, 5.0, (0.7,), (0,))  # a prior mean of f peaked at 0.7, away from the bump's 0.3


def test_under_a_prior_mean_predictions_and_draws_carry_it():
    """With a bowl as the prior mean: at the training inputs the prediction is q(f_U) with the mean
    included; the mean gradient matches finite differences; function draws have the predictive
    mean and variance (Monte Carlo); before any observation the prediction is the bowl itself."""
    observations = _observations(15, seed=5, m=3, top_k=2)
    model = RankingGP(KERNEL, prior_mean=BOWL).fit(observations)
    m, S = model.training_posterior()
    mean, cov = model.predict(model.inputs_, full_cov=True)
    np.testing.assert_allclose(mean, m, atol=1e-5)
    np.testing.assert_allclose(cov, S, atol=1e-5)
    X = np.linspace(0, 1, 7)[:, None]
    _, grad = model.predict_mean_with_gradient(X)
    fd = (model.predict(X + 1e-6)[0] - model.predict(X - 1e-6)[0]) / 2e-6
    np.testing.assert_allclose(grad[:, 0], fd, atol=1e-6)
    draws = model.sample_functions(4000, np.random.default_rng(1), n_features=2048)(X)
    mean, var = model.predict(X)
    np.testing.assert_allclose(draws.mean(axis=1), mean, atol=4 * np.sqrt(var.max() / 4000) + 0.02)
    np.testing.assert_allclose(draws.var(axis=1), var, rtol=0.15, atol=0.02)
    assert np.ptp(BOWL(X)) > 0.8  # the mean matters at these points
    np.testing.assert_allclose(RankingGP(KERNEL, prior_mean=BOWL).fit([]).predict(X)[0], BOWL(X))


def test_a_prior_means_pull_fades_as_the_answers_outweigh_it():
    """The bowl (peak 0.7) adds ``m(0.7) − m(0.3)`` to the posterior difference ``f(0.7) − f(0.3)``
    before any answer; as answers about the bump (peak 0.3) accumulate, what it adds over the flat
    prior's posterior shrinks steadily, to under a tenth of it after 80."""
    points = np.array([[0.7], [0.3]])
    prior_pull = float(BOWL(points)[0] - BOWL(points)[1])

    def pull(n):
        differences = []
        for prior_mean in (BOWL, None):
            mean = (
                RankingGP(KERNEL, prior_mean=prior_mean).fit(_observations(n, seed=12, m=3, top_k=2)).predict(points)[0]
            )
            differences.append(mean[0] - mean[1])
        return differences[0] - differences[1]

    pulls = [pull(n) for n in (0, 2, 10, 40, 80)]
    assert pulls[0] == pytest.approx(prior_pull) and prior_pull > 0.3
    assert np.all(np.diff(pulls) < 0) and pulls[-1] > 0
    assert pulls[-1] < 0.1 * prior_pull


def test_bad_arguments_raise_clear_value_errors():
    with pytest.raises(ValueError, match=r"prior_mean must be a MeanFunction or None, got 1\.0"):
        RankingGP(KERNEL, prior_mean=1.0)
    with pytest.raises(ValueError, match="tie_threshold"):
        RankingGP(KERNEL, tie_threshold=0.0)
    with pytest.raises(ValueError, match="Kernel"):
        RankingGP("se")
    with pytest.raises(ValueError, match="RankingObservation"):
        RankingGP(KERNEL).fit([([0.1, 0.2], 0)])
    model = RankingGP(KERNEL).fit(_observations(3))
    with pytest.raises(ValueError, match="columns"):
        model.predict(np.zeros((2, 3)))
