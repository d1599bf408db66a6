"""ask/tell ranking optimization: valid queries, JSON state, outcome validation, MPES against random."""

import json

import numpy as np
import pytest

from lensopt.ranking import RankingOptimizer, RankingQuery, RankingSettings
from lensopt.ranking.acquisition import context_information
from lensopt.ranking.likelihood import all_outcomes
from lensopt.ranking.search import CONTEXT_GRID
from tests.ranking.conftest import bump, gumbel_answer


def _answer(optimizer, query, rng, delta=0.3):
    s = optimizer.settings
    scale = query.context[0] if query.context.size else 1.0
    return gumbel_answer(scale * bump(query.members), rng, delta if s.allow_ties else 0.0, s.top_k)


def _run(optimizer, n, seed=0):
    rng = np.random.default_rng(seed)
    for _ in range(n):
        query = optimizer.ask()
        optimizer.tell(query, _answer(optimizer, query, rng))
    return optimizer


def _in_box(values, bounds):
    bounds = np.array(bounds, dtype=float)
    return np.all((values >= bounds[:, 0] - 1e-12) & (values <= bounds[:, 1] + 1e-12))


@pytest.mark.parametrize(
    "options",
    [
        dict(set_size=2, allow_ties=True),
        dict(set_size=3, allow_ties=False, top_k=2),
        dict(set_size=3, allow_ties=True, context_bounds=[(0.2, 1.0)]),
    ],
)
def test_mpes_proposes_distinct_members_inside_the_bounds(options):
    bounds = [(-1.0, 2.0), (0.0, 1.0)]
    optimizer = _run(RankingOptimizer(bounds, seed=1, n_initial=3, **options), 6)
    query = optimizer.ask()
    m = options["set_size"]
    assert query.members.shape == (m, 2) and _in_box(query.members, bounds)
    assert len({tuple(x) for x in np.round(query.members, 6)}) == m
    assert np.isfinite(optimizer.last_mpes_nats) and optimizer.last_mpes_nats >= 0
    if "context_bounds" in options:
        assert query.context.shape == (1,) and 0.2 <= query.context[0] <= 1.0
    else:
        assert query.context.shape == (0,)


def test_context_maximizes_the_information_on_the_grid():
    optimizer = _run(RankingOptimizer([(0.0, 1.0)], context_bounds=[(0.2, 1.0)], seed=2, n_initial=3), 6)
    query = optimizer.ask()
    grid = np.linspace(0.2, 1.0, CONTEXT_GRID)
    sets = np.stack([np.hstack([np.full((2, 1), s), query.members]) for s in grid])
    rng = np.random.default_rng([2, optimizer.n_trials])
    values = context_information(optimizer.model, sets, all_outcomes(2, 1, True), True, rng, 20_000)
    chosen = np.flatnonzero(np.isclose(grid, query.context[0]))[0]
    assert values[chosen] >= values.max() - 0.01


def test_state_round_trips_through_json_and_proposes_the_same_next_query():
    optimizer = _run(RankingOptimizer([(0.0, 1.0), (0.0, 1.0)], seed=3, n_initial=3), 7)
    optimizer.ask()  # a fitted model must not change what the rebuilt optimizer proposes
    state = json.loads(json.dumps(optimizer.to_state()))
    rebuilt = RankingOptimizer.from_state(state)
    first, second = optimizer.ask(), rebuilt.ask()
    np.testing.assert_array_equal(first.members, second.members)
    np.testing.assert_array_equal(first.context, second.context)
    np.testing.assert_array_equal(optimizer.best(), rebuilt.best())
    assert rebuilt.to_state() == state


def test_a_stored_session_replays_through_tell():
    original = _run(RankingOptimizer([(0.0, 1.0)], seed=4, n_initial=2), 5)
    replayed = RankingOptimizer([(0.0, 1.0)], seed=4, n_initial=2)
    for row in original.to_state()["history"]:
        outcome = tuple(row["outcome"]) if isinstance(row["outcome"], list) else row["outcome"]
        replayed.tell(RankingQuery(context=row["context"], members=row["members"]), outcome)
    np.testing.assert_array_equal(original.ask().members, replayed.ask().members)


@pytest.mark.parametrize(
    "outcome, message",
    [
        ("tie", "unknown outcome"),
        (2, r"0\.\.1"),
        ((0, 0), "repeat"),
        ((0, 1), "Remark 1"),
        (0.0, "outcome must be"),
        (True, "outcome must be"),
        ((), "at least one"),
        (None, "outcome must be"),
    ],
)
def test_malformed_outcomes_are_rejected_with_a_value_error_and_nothing_is_stored(outcome, message):
    optimizer = RankingOptimizer([(0.0, 1.0)], seed=0)
    with pytest.raises(ValueError, match=message):
        optimizer.tell(optimizer.ask(), outcome)
    assert optimizer.n_trials == 0


def test_same_is_rejected_when_ties_are_not_allowed():
    optimizer = RankingOptimizer([(0.0, 1.0)], set_size=3, allow_ties=False, top_k=2)
    with pytest.raises(ValueError, match="ties allowed"):
        optimizer.tell(optimizer.ask(), "same")
    optimizer.tell(optimizer.ask(), (2, 0))
    assert optimizer.observations[0].outcome == (2, 0)


@pytest.mark.parametrize(
    "call, message",
    [
        (lambda o: o.tell((np.zeros(0), np.zeros((2, 1))), 0), "RankingQuery"),
        (lambda o: o.tell(RankingQuery(context=[], members=[[0.2], [1.5]]), 0), "outside its bounds"),
        (lambda o: o.tell(RankingQuery(context=[], members=[[0.2], [0.2]]), 0), "distinct"),
        (lambda o: o.tell(RankingQuery(context=[0.5], members=[[0.2], [0.3]]), 0), "context"),
        (lambda o: o.tell(RankingQuery(context=[], members=[[0.2, 0.1], [0.3, 0.1]]), 0), "members must be"),
        (lambda o: o.tell(RankingQuery(context=[], members=[[0.1], [0.2], [0.3], [0.4], [0.5]]), 0), "members must be"),
    ],
)
def test_bad_queries_are_rejected_with_a_value_error(call, message):
    with pytest.raises(ValueError, match=message):
        call(RankingOptimizer([(0.0, 1.0)]))


@pytest.mark.parametrize(
    "options, message",
    [
        (dict(set_size=1), "set_size"),
        (dict(set_size=5), "set_size"),
        (dict(top_k=3), "top_k"),
        (dict(set_size=3, top_k=2, allow_ties=True), "Remark 1"),
        (dict(context_bounds=[(0, 1), (0, 1)]), "one context"),
        (dict(rule="muc"), "unknown rule"),
        (dict(tie_threshold=0.0), "tie_threshold"),
        (dict(seed=-1), "seed"),
    ],
)
def test_invalid_settings_raise_clear_value_errors(options, message):
    with pytest.raises(ValueError, match=message):
        RankingOptimizer([(0.0, 1.0)], **options)


def test_state_of_another_format_is_rejected():
    with pytest.raises(ValueError, match="not a lensopt ranking optimizer state"):
        RankingOptimizer.from_state({"format": "lensopt.preference-state/1"})
    assert RankingSettings.from_dict(RankingSettings(set_size=3).to_dict()).set_size == 3


def test_best_is_the_centre_before_any_observation_and_in_the_box_after():
    optimizer = RankingOptimizer([(-4.0, 4.0), (-2.0, 0.0)], seed=5, n_initial=2)
    np.testing.assert_array_equal(optimizer.best(), [0.0, -1.0])
    _run(optimizer, 3)
    assert _in_box(optimizer.best(), [(-4.0, 4.0), (-2.0, 0.0)])


def test_mpes_finds_the_bump_better_than_random_sets():
    """1-D bump at 0.3, pairs with ties (δ = 0.3), 20 queries: median regret over five seeds."""
    regrets = {}
    for rule in ("mpes", "random"):
        values = []
        for seed in range(5):
            optimizer = _run(RankingOptimizer([(0.0, 1.0)], rule=rule, seed=seed, n_initial=3), 20, seed=100 + seed)
            values.append(3.0 - bump(optimizer.best())[0])
        regrets[rule] = np.median(values)
    assert regrets["mpes"] < 0.5 * regrets["random"]
    assert regrets["mpes"] < 0.2
