"""The stopping rule's check through the reported lens (``StopRule.check_letters``), and how a
confidence is shown against its threshold."""

import itertools
import json

import numpy as np
import pytest

from lensopt.stopping import (
    MAX_CHECK_LETTERS,
    StopRule,
    confidence_percent_text,
    confidence_text,
    threshold_text,
)


def _never_called():
    raise AssertionError("letters_through was called when the answer did not depend on it")


@pytest.mark.parametrize("bad", [-1, MAX_CHECK_LETTERS + 1, 2.5, True, "5"])
def test_a_check_of_impossible_length_is_refused_in_one_line(bad):
    with pytest.raises(ValueError, match="check_letters must be a whole number from 0") as error:
        StopRule(check_letters=bad)
    assert "\n" not in str(error.value)


def test_a_rule_without_a_check_is_stored_as_every_rule_before_it_and_a_check_survives_the_round_trip():
    plain = StopRule(confidence=0.9, min_trials=10, max_trials=50)
    assert plain.to_dict() == {"confidence": 0.9, "min_trials": 10, "max_trials": 50}
    assert StopRule.from_dict({"confidence": 0.9, "min_trials": 10, "max_trials": 50}).check_letters == 0
    checked = StopRule(confidence=0.9, min_trials=10, max_trials=50, check_letters=5)
    assert StopRule.from_dict(json.loads(json.dumps(checked.to_dict()))) == checked
    with pytest.raises(ValueError, match="use confidence, min_trials, max_trials, check_letters"):
        StopRule.from_dict({"confidence": 0.9, "check": 5})


@pytest.mark.parametrize(
    ("n_trials", "confidence", "letters", "stops", "checks"),
    [
        (5, 0.99, 0, False, False),  # before min_trials: neither
        (20, 0.80, 0, False, False),  # not confident: search on
        (20, 0.95, 0, False, True),  # confident, lens not read through: check it
        (20, 0.95, 2, False, True),  # two of three letters read
        (20, 0.95, 3, True, False),  # read: stop
        (20, 0.80, 7, False, False),  # read through but not confident: search on
        (50, 0.10, 0, True, False),  # the budget ends it, checked or not
    ],
)
def test_a_confident_session_stops_only_once_its_lens_is_read_through(n_trials, confidence, letters, stops, checks):
    rule = StopRule(confidence=0.9, min_trials=10, max_trials=50, check_letters=3)
    assert rule.should_stop(n_trials, confidence, letters_through=lambda: letters) is stops
    assert rule.wants_check(n_trials, confidence, letters_through=lambda: letters) is checks


def test_without_a_check_the_rule_stops_as_before_and_never_counts_letters():
    rule = StopRule(confidence=0.9, min_trials=10, max_trials=50)
    for n, c in itertools.product([1, 9, 10, 30, 49, 50, 60], [0.0, 0.5, 0.89, 0.9, 0.99]):
        before = n >= 50 or (n >= 10 and c >= 0.9)  # the rule before check_letters, by hand
        assert rule.should_stop(n, c, letters_through=_never_called) is before
        assert rule.should_stop(n, c) is before
        assert not rule.wants_check(n, c, letters_through=_never_called)


def test_the_letters_are_counted_only_when_the_confidence_is_reached():
    rule = StopRule(confidence=0.9, min_trials=10, max_trials=50, check_letters=3)
    assert not rule.should_stop(20, 0.5, letters_through=_never_called)
    assert not rule.wants_check(20, 0.5, letters_through=_never_called)
    assert rule.should_stop(50, 0.5, letters_through=_never_called)
    with pytest.raises(TypeError, match="letters_through"):
        rule.should_stop(20, 0.95)


def test_a_budget_that_ends_a_check_unfinished_is_no_stop_by_confidence():
    rule = StopRule(confidence=0.9, min_trials=10, max_trials=50, check_letters=5)
    assert rule.reason(50, 0.95, 5) == "confidence"
    assert rule.reason(50, 0.95, 2) == "max_trials" and rule.reason(50, 0.95) == "max_trials"
    assert rule.describe_stop(50, 0.95, 2) == (
        "stopped after 50 trials at confidence 0.95 (the trial budget, before the check through the lens: "
        "2 of 5 letters read)"
    )
    assert StopRule(confidence=0.9, min_trials=10, max_trials=50).reason(50, 0.95) == "confidence"


def test_a_stop_after_a_check_says_so():
    rule = StopRule(confidence=0.9, min_trials=10, max_trials=50, check_letters=5)
    assert rule.describe_stop(30, 0.93, 5) == (
        "stopped after 30 trials at confidence 0.93 (the confidence threshold 0.90, the lens read through 5 letters)"
    )
    assert "the trial budget" in rule.describe_stop(50, 0.8)


@pytest.mark.parametrize(
    ("confidence", "target", "shown"),
    [
        (0.947, 0.95, "0.94"),  # rounded to two decimals it would read as reaching 0.95
        (0.95, 0.95, "0.95"),
        (0.29, None, "0.29"),  # 0.29 * 100 is 28.999999999999996 in floating point
        (0.996, None, "0.996"),  # "1.00" would read as certainty
        (1.0, None, "0.999"),
        (0.9744, 0.975, "0.974"),  # a threshold with three decimals shows three
        (0.5, 0.9, "0.50"),
    ],
)
def test_a_confidence_is_shown_rounded_down_so_it_never_reads_as_reaching_what_it_did_not(confidence, target, shown):
    assert confidence_text(confidence, target) == shown


@pytest.mark.parametrize("target", [0.9, 0.95, 0.975, 0.99])
def test_a_shown_confidence_compares_with_its_threshold_as_the_number_does(target):
    for confidence in np.linspace(0.85, 0.9999, 2000):
        shown = float(confidence_text(confidence, target))
        assert (shown >= target) == (confidence >= target), (confidence, target, shown)
        assert shown <= confidence


@pytest.mark.parametrize(
    ("confidence", "target"),
    [(0.9997, 0.9995), (0.99949, 0.9995), (0.94999995, 0.9499999), (0.9500001, 0.9499999), (0.978, 0.975)],
)
def test_a_confidence_compares_with_a_threshold_of_any_precision_as_the_number_does(confidence, target):
    shown, threshold = confidence_text(confidence, target), threshold_text(target)
    assert float(threshold) == target  # the threshold as given, every decimal of it
    assert (float(shown) >= target) == (confidence >= target), (shown, threshold)


def test_a_missing_confidence_is_said_to_be_missing():
    assert confidence_text(float("nan")) == "not computed" == confidence_text(float("nan"), 0.95)


def test_the_stop_is_described_with_the_threshold_as_every_verdict_writes_it():
    assert StopRule(0.9, 5, 50).describe_stop(50, 0.42).endswith("(the trial budget; below the threshold 0.90)")
    said = StopRule(0.975, 5, 50).describe_stop(40, 0.978)
    assert said == "stopped after 40 trials at confidence 0.978 (the confidence threshold 0.975)"


def test_a_confidence_in_percent_is_rounded_down_and_never_certain():
    assert confidence_percent_text(0.996) == "99 %"
    assert confidence_percent_text(0.95) == "95 %"
    assert confidence_percent_text(1.0) == "99 %"
    assert threshold_text(0.95) == "0.95" and threshold_text(0.9) == "0.90" and threshold_text(0.975) == "0.975"
    assert threshold_text(1e-06) == "0.000001" and threshold_text(2.5e-05) == "0.000025"  # repr in exponent form
