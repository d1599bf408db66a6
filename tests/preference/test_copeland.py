"""The Copeland model of González et al. 2017, each check against an independent computation."""

import json

import numpy as np
import pytest
from scipy.integrate import quad
from scipy.special import ndtr

from lensopt.gp import uncertainty
from lensopt.gp.kernels import SquaredExponential
from lensopt.preference import DuelQuery
from lensopt.preference.copeland import (
    RULES,
    CopelandModel,
    CopelandOptimizer,
    best_challenger,
    copeland_expected_improvement,
    default_duel_kernel,
    dueling_thompson,
    pure_exploration,
)

FORRESTER_ARGMIN = 0.7572487144081974
FORRESTER_KERNEL = {"lengthscales": (0.15,), "latent_variance": 4.0}
"""SE hyperparameters that suit the Forrester duels below (the model does not fit them)."""


def forrester_utility(x):
    """Utility to maximize: the Forrester function (Forrester et al. 2008), negated and scaled so
    that probit duels ``Φ(u(x) − u(x'))`` are informative but not deterministic."""
    x = np.asarray(x, dtype=float)
    return -((6 * x - 2) ** 2) * np.sin(12 * x - 4) / 4.0


def forrester_duels(n, rng):
    A, B = rng.uniform(0, 1, (n, 1)), rng.uniform(0, 1, (n, 1))
    y = rng.uniform(size=n) < ndtr(forrester_utility(A[:, 0]) - forrester_utility(B[:, 0]))
    return A, B, y.astype(float)


def fitted_forrester_model(seed=0, n_duels=15, landmark_seed=0):
    A, B, y = forrester_duels(n_duels, np.random.default_rng(seed))
    kernel = default_duel_kernel([(0, 1)], FORRESTER_KERNEL["lengthscales"], FORRESTER_KERNEL["latent_variance"])
    return CopelandModel([(0, 1)], kernel=kernel, seed=landmark_seed).fit(A, B, y)


def fitted_2d_model(n_duels=20):
    rng = np.random.default_rng(3)
    A, B = rng.uniform(-1, 1, (n_duels, 2)), rng.uniform(-1, 1, (n_duels, 2))
    y = (rng.uniform(size=n_duels) < ndtr(np.sum(B**2 - A**2, axis=1))).astype(float)
    return CopelandModel([(-1, 1), (-1, 1)], seed=1).fit(A, B, y)


# ---- the soft-Copeland score and the win probability -------------------------------------
def test_soft_copeland_score_matches_quadrature_within_the_qmc_error():
    x = np.array([[0.1], [0.45], [0.76]])
    models = [fitted_forrester_model(landmark_seed=s) for s in range(12)]
    exact = np.array(
        [quad(lambda t, xi=xi: models[0].win_probability(xi[None], [[t]])[0], 0.0, 1.0, epsabs=1e-10)[0] for xi in x]
    )
    scores = np.array([m.soft_copeland(x) for m in models])  # 12 randomized QMC estimates
    spread = scores.std(axis=0, ddof=1)
    assert np.all(spread < 0.01)  # 32 landmarks: the QMC error is small
    np.testing.assert_array_less(np.abs(scores.mean(axis=0) - exact), 4 * spread / np.sqrt(len(models)) + 1e-6)
    assert np.all(np.abs(scores - exact) < 5 * spread + 1e-6)


def test_win_probability_and_preference_variance_match_monte_carlo_over_the_latent():
    model = fitted_2d_model()
    rng = np.random.default_rng(7)
    A, B = rng.uniform(-1, 1, (4, 2)), rng.uniform(-1, 1, (4, 2))
    Z = np.vstack([np.hstack([A, B]), np.hstack([B, A])])  # the duels and their mirrors, jointly
    mean, cov = model.gp.predict_latent(Z, full_cov=True)
    f = rng.multivariate_normal(mean, cov, size=200_000, method="eigh")
    p = ndtr(f[:, :4])
    np.testing.assert_allclose(model.win_probability(A, B), p.mean(axis=0), atol=3e-3)
    preference = ndtr(0.5 * (f[:, :4] - f[:, 4:]))  # Φ(f_a), f_a = ½ (f(z) − f(swap z))
    np.testing.assert_allclose(model.preference_variance(A, B), preference.var(axis=0), rtol=0.03, atol=2e-4)


def test_swapped_duels_have_complementary_win_probabilities():
    model = fitted_2d_model()
    rng = np.random.default_rng(11)
    A, B = rng.uniform(-1, 1, (50, 2)), rng.uniform(-1, 1, (50, 2))
    np.testing.assert_allclose(model.win_probability(A, B) + model.win_probability(B, A), 1.0, atol=1e-10)
    np.testing.assert_allclose(model.preference_variance(A, B), model.preference_variance(B, A), atol=1e-10)
    sample = model.copeland_samples(np.random.default_rng(0))[0]
    np.testing.assert_allclose(sample.win_probability(A, B) + sample.win_probability(B, A), 1.0, atol=1e-10)
    # the training set holds every duel and its mirror with the opposite label
    X, y = model.gp.X_train_, model.gp.y_train_
    np.testing.assert_array_equal(X[1::2], np.hstack([X[0::2, 2:], X[0::2, :2]]))
    np.testing.assert_array_equal(y[1::2], 1 - y[0::2])


def test_a_point_against_itself_is_a_certain_draw_for_the_preference_part():
    model = fitted_2d_model()
    X = np.random.default_rng(2).uniform(-1, 1, (20, 2))
    np.testing.assert_allclose(model.win_probability(X, X), 0.5, atol=1e-12)
    np.testing.assert_allclose(model.preference_variance(X, X), 0.0, atol=1e-10)
    # whereas the marginal V[Φ(f)] of the paper is not zero there: it would propose self-duels
    assert np.all(model.gp.epistemic_variance(np.hstack([X, X])) > 1e-3)


def test_copeland_samples_average_to_the_preference_probability():
    model = fitted_2d_model()
    rng = np.random.default_rng(5)
    A, B = rng.uniform(-1, 1, (3, 2)), rng.uniform(-1, 1, (3, 2))
    draws = np.array([s.win_probability(A, B) for s in model.copeland_samples(rng, n_samples=300)])
    mean, var = model.preference_moments(A, B)
    expected = uncertainty.probit_mean(mean, var)
    np.testing.assert_allclose(draws.mean(axis=0), expected, atol=4 * draws.std(axis=0).max() / np.sqrt(300) + 0.01)


def test_conditioning_on_a_fantasy_duel_equals_a_fresh_fit_and_leaves_the_model_alone():
    model = fitted_forrester_model()
    probe = np.array([[0.2], [0.8]])
    before = model.soft_copeland(probe)
    fantasy = model.conditioned_on([[0.3]], [[0.7]], 0)
    fresh = fitted_forrester_model()
    fresh.fit(
        np.vstack([fresh.X_first, [[0.3]]]), np.vstack([fresh.X_second, [[0.7]]]), np.append(fresh.preferred_first, 0)
    )
    np.testing.assert_allclose(fantasy.soft_copeland(probe), fresh.soft_copeland(probe), atol=1e-7)
    np.testing.assert_array_equal(model.soft_copeland(probe), before)
    assert model.n_duels == 15 and fantasy.n_duels == 16


# ---- the Condorcet winner ------------------------------------------------------------------
def test_condorcet_winner_of_the_true_probit_duels_is_the_utility_argmax():
    grid = np.linspace(0, 1, 2001)
    u = forrester_utility(grid)
    copeland = ndtr(u[:, None] - u[None, :]).mean(axis=1)  # soft-Copeland score by a Riemann sum
    assert np.argmax(copeland) == np.argmax(u)
    assert abs(grid[np.argmax(copeland)] - FORRESTER_ARGMIN) < 1e-3


def test_condorcet_winner_maximizes_the_models_soft_copeland_score():
    model = fitted_forrester_model(n_duels=30)
    winner = model.condorcet_winner()
    grid = np.linspace(0, 1, 1001)[:, None]
    assert model.soft_copeland(winner[None])[0] >= model.soft_copeland(grid).max() - 1e-6


def test_dueling_thompson_sampling_finds_the_forrester_optimum_more_often_than_random():
    def near_optimum(rule, seed, n_duels=30):
        optimizer = CopelandOptimizer([(0, 1)], rule=rule, seed=seed, **FORRESTER_KERNEL)
        rng = np.random.default_rng(100 + seed)
        for _ in range(n_duels):
            query = optimizer.ask()
            a, b = query.members
            optimizer.tell(query, bool(rng.uniform() < ndtr(forrester_utility(a[0]) - forrester_utility(b[0]))))
        return abs(optimizer.best()[0] - FORRESTER_ARGMIN) < 0.04

    thompson = sum(near_optimum("dueling-ts", seed) for seed in range(4))
    random = sum(near_optimum("random", seed) for seed in range(4))
    assert thompson >= 3 and thompson > random


# ---- the rules -------------------------------------------------------------------------------
def test_copeland_ei_equals_a_brute_force_computation_with_fresh_models():
    model = fitted_forrester_model()
    A, B = np.array([[0.3], [0.76], [0.5]]), np.array([[0.7], [0.2], [0.55]])
    points = np.linspace(0, 1, 5)[:, None]
    values = copeland_expected_improvement(model, A, B, points)
    for i in range(len(A)):
        where = np.vstack([points, A[i], B[i]])
        best_now = model.soft_copeland(where).max()
        p = model.win_probability(A[i : i + 1], B[i : i + 1])[0]
        expected = 0.0
        for outcome, probability in ((1, p), (0, 1 - p)):
            fresh = fitted_forrester_model()
            fresh.fit(
                np.vstack([fresh.X_first, A[i]]),
                np.vstack([fresh.X_second, B[i]]),
                np.append(fresh.preferred_first, outcome),
            )
            expected += probability * max(fresh.soft_copeland(where).max() - best_now, 0.0)
        np.testing.assert_allclose(values[i], expected, rtol=1e-6, atol=1e-9)
    assert np.all(values >= 0) and np.any(values > 0)


def test_the_challenger_maximizes_the_preference_variance_against_the_first_member():
    model = fitted_forrester_model()
    x_first = np.array([0.3])
    challenger = best_challenger(model, x_first, np.random.default_rng(0))
    grid = np.linspace(0, 1, 2001)[:, None]
    on_grid = model.preference_variance(np.broadcast_to(x_first, grid.shape), grid)
    assert model.preference_variance(x_first[None], challenger[None])[0] >= 0.99 * on_grid.max()


def test_pure_exploration_proposes_the_duel_of_largest_preference_variance():
    model = fitted_forrester_model()
    x_first, x_second = pure_exploration(model, np.random.default_rng(0))
    g = np.linspace(0, 1, 81)
    A, B = np.repeat(g, len(g))[:, None], np.tile(g, len(g))[:, None]
    assert model.preference_variance(x_first[None], x_second[None])[0] >= 0.97 * model.preference_variance(A, B).max()


def test_dueling_thompson_first_members_concentrate_at_the_condorcet_winner():
    model = fitted_forrester_model(n_duels=80)
    winner = model.condorcet_winner()
    firsts = np.array([dueling_thompson(model, np.random.default_rng(s))[0][0] for s in range(12)])
    assert np.median(np.abs(firsts - winner[0])) < 0.05  # a uniform first member: about 0.25


# ---- the ask/tell loop --------------------------------------------------------------------
def _duel(x_first, x_second):
    return DuelQuery(context=[], members=[x_first, x_second])


def _told(optimizer, n_duels, seed=0):
    rng = np.random.default_rng(seed)
    box = np.array(optimizer.settings.bounds)
    for _ in range(n_duels):
        a, b = rng.uniform(box[:, 0], box[:, 1]), rng.uniform(box[:, 0], box[:, 1])
        optimizer.tell(_duel(a, b), bool(rng.integers(2)))
    return optimizer


@pytest.mark.parametrize("rule", RULES)
@pytest.mark.parametrize("bounds", [[(0.0, 1.0)], [(-4.0, 4.0), (0.5, 2.0)]])
def test_every_rule_proposes_a_duel_inside_the_bounds(rule, bounds):
    optimizer = _told(CopelandOptimizer(bounds, rule=rule, seed=3, n_initial=2), 6)
    box = np.array(bounds)
    query = optimizer.ask()
    assert query.context.shape == (0,) and query.members.shape == (2, len(bounds))
    for x in query.members:
        assert np.all(x >= box[:, 0]) and np.all(x <= box[:, 1])
    best = optimizer.best()
    assert best.shape == (len(bounds),) and np.all(best >= box[:, 0]) and np.all(best <= box[:, 1])


@pytest.mark.parametrize("rule", ["dueling-ts", "pure-exploration"])
def test_the_challenger_is_not_the_first_member(rule):
    optimizer = _told(CopelandOptimizer([(-1, 1), (-1, 1)], rule=rule, seed=0, n_initial=0), 10)
    x_first, x_second = optimizer.ask().members
    assert np.linalg.norm(x_first - x_second) > 0.05


@pytest.mark.parametrize("rule", ["dueling-ts", "pure-exploration", "copeland-ei"])
def test_same_seed_and_history_give_the_same_next_duel_after_from_state(rule):
    optimizer = _told(CopelandOptimizer([(-1, 1), (0, 2)], rule=rule, seed=4, n_initial=3), 7)
    restored = CopelandOptimizer.from_state(json.loads(json.dumps(optimizer.to_state())))
    np.testing.assert_array_equal(optimizer.ask().members, restored.ask().members)
    np.testing.assert_array_equal(optimizer.best(), restored.best())
    assert restored.n_trials == optimizer.n_trials == 7


def test_first_duels_are_random_and_depend_only_on_seed_and_trial():
    a = _told(CopelandOptimizer([(0, 1)], seed=9), 2).ask()
    b = _told(CopelandOptimizer([(0, 1)], seed=9), 2, seed=1).ask()  # other history, same trial
    np.testing.assert_array_equal(a.members, b.members)


# ---- bad inputs -----------------------------------------------------------------------------
def test_unknown_rule_is_rejected():
    with pytest.raises(ValueError, match="unknown rule 'ucb'"):
        CopelandOptimizer([(0, 1)], rule="ucb")


@pytest.mark.parametrize("outcome", [0.5, 2, "yes", None])
def test_an_outcome_that_is_not_zero_or_one_is_rejected(outcome):
    with pytest.raises(ValueError, match="preferred_first"):
        CopelandOptimizer([(0, 1)]).tell(_duel([0.2], [0.4]), outcome)


def test_duels_of_the_wrong_shape_or_outside_the_bounds_are_rejected():
    optimizer = CopelandOptimizer([(0, 1), (0, 1)])
    with pytest.raises(ValueError, match="query must be a DuelQuery of two members and no context"):
        optimizer.tell(([0.1, 0.2], [0.3, 0.4]), True)
    with pytest.raises(ValueError, match="query must be a DuelQuery of two members and no context"):
        optimizer.tell(DuelQuery(context=[0.5], members=[[0.1, 0.2], [0.3, 0.4]]), True)
    with pytest.raises(ValueError, match="query must be a DuelQuery of two members and no context"):
        optimizer.tell(DuelQuery(context=[], members=[[0.1, 0.2], [0.3, 0.4], [0.5, 0.6]]), True)
    with pytest.raises(ValueError, match=r"x_first must have shape \(n, 2\)"):
        optimizer.tell(_duel([0.1], [0.3]), True)
    with pytest.raises(ValueError, match=r"x_second\[1\] = 1\.5 is outside its bounds \(0\.0, 1\.0\)$"):
        optimizer.tell(_duel([0.1, 0.2], [0.3, 1.5]), True)
    assert optimizer.n_trials == 0
    model = CopelandModel([(0, 1)])
    with pytest.raises(ValueError, match="X_first and X_second must have the same shape"):
        model.fit(np.zeros((3, 1)), np.zeros((2, 1)), [1, 0, 1])
    with pytest.raises(ValueError, match=r"preferred_first must have shape \(2,\)"):
        model.fit(np.zeros((2, 1)), np.zeros((2, 1)), [1, 0, 1])
    with pytest.raises(ValueError, match="only 0/1"):
        model.fit(np.zeros((2, 1)), np.zeros((2, 1)), [1, 0.3])
    with pytest.raises(ValueError, match=r"X must have shape \(n, 1\)"):
        model.soft_copeland(np.zeros((3, 2)))


def test_bad_settings_and_states_are_rejected():
    with pytest.raises(ValueError, match="kernel must treat x and x' alike"):
        CopelandModel([(0, 1)], kernel=SquaredExponential([0.1, 0.3]))
    with pytest.raises(ValueError, match="bounds are reversed"):
        CopelandOptimizer([(1, 0)])
    with pytest.raises(ValueError, match="lengthscales must be 2 positive numbers"):
        CopelandOptimizer([(0, 1), (0, 1)], lengthscales=(0.1,))
    with pytest.raises(ValueError, match="n_landmarks must be"):
        CopelandModel([(0, 1)], n_landmarks=0)
    with pytest.raises(ValueError, match="not a lensopt Copeland optimizer state"):
        CopelandOptimizer.from_state({"format": "lensopt.optimizer-state/1"})
    with pytest.raises(ValueError, match="cannot be saved"):
        CopelandOptimizer([(0, 1)], kernel=default_duel_kernel([(0, 1)])).to_state()
