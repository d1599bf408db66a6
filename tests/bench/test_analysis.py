"""Stratified analysis: known orders give known Borda scores; AUC breaks ties; win matrices."""

import numpy as np
import pytest

from lensopt.bench.analysis import (
    ALPHA,
    borda_from_ranking,
    competition_ranking,
    pairwise_wins,
    stratified_analysis,
    trajectories_from_records,
)


def _curves(rng, final_mean, n_seeds=40, n_iter=10, start=0.0, sd=0.1):
    """Trajectories rising linearly from ``start`` to ``final_mean``, plus noise."""
    ramp = np.linspace(start, final_mean, n_iter)
    return ramp + sd * rng.standard_normal((n_seeds, n_iter))


def test_competition_ranking_and_borda_by_hand():
    assert competition_ranking([5, 3, 3, 1]).tolist() == [1, 2, 2, 4]
    assert borda_from_ranking([1, 2, 2, 4]).tolist() == [3, 1, 1, 0]
    assert borda_from_ranking([1, 1, 1]).tolist() == [0, 0, 0]


def test_known_order_gives_known_ranking_and_borda():
    rng = np.random.default_rng(0)
    rules = ["a", "b", "c", "d"]
    means = {"a": 3.0, "b": 2.0, "c": 1.0, "d": 0.0}
    results = {f"p{k}": {r: _curves(rng, means[r]) for r in rules} for k in range(3)}
    out = stratified_analysis(results)
    assert out.borda.tolist() == [9, 6, 3, 0]
    assert out.rank.tolist() == [1, 2, 3, 4]
    assert [row["rule"] for row in out.table()] == rules


def test_direction_min_reverses_the_order():
    rng = np.random.default_rng(1)
    results = {
        "err": {"low": _curves(rng, 0.0), "high": _curves(rng, 1.0)},
        "g": {"low": _curves(rng, 0.0), "high": _curves(rng, 1.0)},
    }
    out = stratified_analysis(results, directions={"err": "min", "g": "max"})
    assert out.borda_per_problem.tolist() == [[1, 0], [0, 1]]


def test_tie_on_final_value_is_broken_by_area_under_curve():
    rng = np.random.default_rng(2)
    final = rng.standard_normal(40)
    fast = np.column_stack([np.full(40, 1.0), np.full(40, 1.0), final])  # high early
    slow = np.column_stack([np.full(40, -1.0), np.full(40, -1.0), final])  # same final values
    worst = np.column_stack([np.zeros((40, 2)), final - 10])
    out = stratified_analysis({"p": {"slow": slow, "fast": fast, "worst": worst}})
    assert not out.wins_final[0, 0, 1] and not out.wins_final[0, 1, 0]  # tie on the final value
    assert out.wins_auc[0, 1, 0]  # fast beats slow on AUC
    assert out.borda.tolist() == [1, 2, 0]


def test_small_samples_cannot_reach_the_significance_level():
    # Exact one-sided Mann-Whitney p for 3 vs 3 perfectly separated values is 1/20 > 5e-4.
    wins = pairwise_wins([np.array([10.0, 11, 12]), np.array([0.0, 1, 2])], ALPHA)
    assert not wins.any()
    assert pairwise_wins([np.array([10.0, 11, 12]), np.array([0.0, 1, 2])], 0.06)[0, 1]


def test_win_fraction_matrix_by_hand():
    rng = np.random.default_rng(3)
    # p1: a > b > c ; p2: c > a, a = b, b < c... chosen so wins are clear or absent.
    p1 = {"a": _curves(rng, 2.0), "b": _curves(rng, 1.0), "c": _curves(rng, 0.0)}
    p2 = {"a": _curves(rng, 1.0), "b": _curves(rng, 1.0), "c": _curves(rng, 2.0)}
    out = stratified_analysis({"p1": p1, "p2": p2})
    # a beats b: p1 only -> 1/2 ; a beats c: p1 -> 1/2 ; b beats c: p1 -> 1/2
    # c beats a: p2 -> 1/2 ; c beats b: p2 -> 1/2 ; b beats a: never.
    expected = np.array([[0, 0.5, 0.5], [0, 0, 0.5], [0.5, 0.5, 0]])
    np.testing.assert_allclose(out.win_fraction_final, expected)
    # Borda: p1 -> a 2, b 1, c 0 ; p2 -> c 2, a and b tie at 0 (same curves in law: no AUC win).
    assert out.borda_per_problem.tolist() == [[2, 1, 0], [0, 0, 2]]
    summary = out.to_dict()
    assert summary["table"][0]["borda"] == 2 and len(summary["win_fraction_auc"]) == 3


def test_missing_rule_and_ragged_lengths_raise():
    rng = np.random.default_rng(4)
    with pytest.raises(ValueError, match="no runs of rule"):
        stratified_analysis({"p": {"a": _curves(rng, 1)}, "q": {"b": _curves(rng, 1)}}, rules=["a", "b"])
    with pytest.raises(ValueError, match="length"):
        stratified_analysis({"p": {"a": _curves(rng, 1, n_iter=5), "b": _curves(rng, 1)}})


def test_trajectories_from_records_groups_and_sorts_by_seed():
    records = [
        {"problem": "p", "rule": "a", "seed": 1, "trajectory": [1, 2], "direction": "max"},
        {"problem": "p", "rule": "a", "seed": 0, "trajectory": [0, 1], "direction": "max"},
        {"problem": "p", "rule": "b", "seed": 0, "trajectory": [5, 5], "direction": "max"},
    ]
    trajectories, directions = trajectories_from_records(records)
    assert trajectories["p"]["a"].tolist() == [[0, 1], [1, 2]]
    assert directions == {"p": "max"}
