"""How a prescription campaign's runs are named and ordered, and a group's agreement with the truth."""

import numpy as np
import pytest

from lensopt.bench.prescription_groups import bland_altman, feedback_of, group_order, rule_label, rule_name


def test_rule_name_says_every_variant_a_run_was_made_under():
    plain = {"rule": "bracket-ald"}
    varied = {"rule": "muc-ald", "max_step_d": 0.5, "check_letters": 5, "tie_threshold": 1.0, "same_answers": "dropped"}
    assert rule_name(plain) == "bracket-ald"
    assert rule_name(varied) == "muc-ald step≤0.5 check5 ties<1 same:dropped"


def test_a_record_without_feedback_reads_letters_and_other_feedback_is_labelled():
    assert feedback_of({"rule": "ucb-ald"}) == "letters"
    assert rule_label({"rule": "ucb-ald"}) == "ucb-ald"
    assert rule_label({"rule": "muc-ald", "feedback": "duel"}) == "muc-ald (duel)"


def test_groups_sort_by_setting_then_letters_first_then_rule_with_unknown_ones_last():
    expected = [
        ("start-accommodation", "letters", "bracket-ald"),
        ("start-accommodation", "letters", "bracket-ald step≤0.5"),
        ("start-accommodation", "letters", "ideal"),
        ("start-accommodation", "letters", "a-rule-of-tomorrow"),
        ("start-accommodation", "duel", "muc-ald"),
        ("no-start-accommodation", "letters", "ucb-ald"),
        ("a-setting-of-tomorrow", "letters", "bracket-ald"),
    ]
    keys = [expected[i] for i in (5, 4, 2, 1, 0, 6, 3)]  # shuffled
    assert sorted(keys, key=group_order) == expected


def test_bland_altman_is_the_mean_and_the_sd_of_n_minus_one_by_hand():
    # differences 0.1, 0.3, 0.5: mean 0.3, sample SD 0.2 (squares 0.04 + 0 + 0.04 over 2)
    ba = bland_altman([0.1, 0.3, 0.5])
    assert ba["n"] == 3 and ba["bias"] == pytest.approx(0.3) and ba["sd"] == pytest.approx(0.2)
    assert (ba["loa_low"], ba["loa_high"]) == pytest.approx((0.3 - 1.96 * 0.2, 0.3 + 1.96 * 0.2))
    assert np.isclose(bland_altman([0.3])["bias"], 0.3) and bland_altman([0.3])["loa_low"] is None
