"""`lensopt bench decision-time --search prescription` times the full prescription's own rules."""

import pytest

from lensopt.bench.decision_time import run_decision_time


def test_the_bracketing_rule_is_timed_in_the_prescription_search():
    result = run_decision_time(rule="bracket-ald", processes=1, trials=8, seed=3, search="prescription")
    assert result["rule"] == "bracket-ald" and result["search"] == "prescription"
    assert result["pooled"]["n"] == 8


def test_the_bracketing_rule_is_refused_in_the_two_parameter_search():
    with pytest.raises(ValueError, match="unknown rule 'bracket-ald'"):
        run_decision_time(rule="bracket-ald", processes=1, trials=2, search="sphere-cylinder")


def test_the_full_prescriptions_duels_are_timed_through_the_acuity_link():
    result = run_decision_time(rule="muc-ald", processes=1, trials=3, seed=3, search="prescription-duel")
    assert result["rule"] == "muc-ald" and result["search"] == "prescription-duel"
    assert result["pooled"]["n"] == 3 and result["per_process"][0]["trials_run"] == 3


def test_the_full_prescriptions_duels_have_no_stopping_rule_to_time():
    with pytest.raises(
        ValueError, match="duels have no stopping rule: leave out --stop with --search prescription-duel"
    ):
        run_decision_time(rule="muc-ald", processes=1, trials=3, search="prescription-duel", stop=0.9)


def test_the_full_prescriptions_rankings_are_timed_through_the_acuity_link():
    result = run_decision_time(rule="mpes-ald", processes=1, trials=3, seed=3, search="prescription-ranking")
    assert result["rule"] == "mpes-ald" and result["search"] == "prescription-ranking"
    assert result["pooled"]["n"] == 3 and result["per_process"][0]["trials_run"] == 3
    assert result["pooled"]["median_ms"] > 0


def test_the_full_prescriptions_rankings_refuse_a_duel_rule_and_a_stopping_rule():
    with pytest.raises(ValueError, match="unknown rule 'muc-ald'"):
        run_decision_time(rule="muc-ald", processes=1, trials=3, search="prescription-ranking")
    with pytest.raises(ValueError, match="rankings have no stopping rule: leave out --stop"):
        run_decision_time(rule="mpes-ald", processes=1, trials=3, search="prescription-ranking", stop=0.9)


def test_the_full_prescriptions_rankings_are_decided_ahead_through_the_handler():
    result = run_decision_time(
        rule="mpes-ald", processes=1, trials=3, seed=3, search="prescription-ranking", handler=True, response_ms=0.0
    )
    assert result["handler"] and result["lookahead"] and result["per_process"][0]["trials_run"] == 3
