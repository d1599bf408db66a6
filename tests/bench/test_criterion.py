"""Trials to criterion and the ratio to the ideal observer: censored medians are lower bounds."""

import pytest

from lensopt.bench.criterion import criterion_stats, median_is_censored, median_text, ratio_text, versus_ideal
from lensopt.bench.robustness_summary import format_summary, summarize
from lensopt.bench.runner import HELD_OUT_FIRST_SEED
from tests.bench.test_robustness import _record


@pytest.mark.parametrize(
    "n_sessions, n_never, censored",
    [
        (4, 1, False),  # sorted 1, 2, 3, C: median (2 + 3) / 2
        (4, 2, True),  # 1, 2, C, C: the upper middle value is censored
        (5, 2, False),  # 1, 2, 3, C, C: median 3
        (5, 3, True),  # 1, 2, C, C, C: median C
        (1, 1, True),
        (0, 0, False),
    ],
)
def test_a_median_is_censored_when_a_middle_value_is_censored(n_sessions, n_never, censored):
    assert median_is_censored(n_sessions, n_never) is censored


def test_ratio_of_a_censored_median_is_printed_as_a_lower_bound():
    never = [0.3, 0.3, 0.3]  # ends above 0.025: counts as 4
    rule = [[0.3, 0.0, 0.0], never, never]  # 2, 4, 4: median 4, censored
    ideal = [[0.0, 0.0, 0.0], [0.3, 0.0, 0.0], [0.3, 0.3, 0.0]]  # 1, 2, 3: median 2
    versus = versus_ideal(rule, ideal, 0.025)
    assert versus["trials_to_criterion_median"] == 4 and versus["ideal_trials_to_criterion_median"] == 2
    assert versus["trials_to_criterion_ratio"] == 2.0 and versus["ratio_is_lower_bound"] is True
    assert ratio_text(versus) == "≥2.00"
    settled = versus_ideal(ideal, rule, 0.025)  # the ideal's median censored: no ratio
    assert settled["trials_to_criterion_ratio"] is None and ratio_text(settled) == "—"
    assert ratio_text(versus_ideal(ideal, ideal, 0.025)) == "1.00" and ratio_text(None) == "—"


def test_robustness_table_marks_a_censored_ratio():
    s = HELD_OUT_FIRST_SEED
    records = [
        _record("ucb-ald", s, [(1, 0.3), (40, 0.01)]),  # 40
        _record("ucb-ald", s + 1, [(1, 0.3)]),  # never: 101
        _record("ideal", s, [(1, 0.3), (20, 0.0)]),  # 20
        _record("ideal", s + 1, [(1, 0.3), (30, 0.0)]),  # 30
    ]
    summary = summarize(records)
    ucb = next(r for r in summary["rows"] if r["rule"] == "ucb-ald")
    assert ucb["versus_ideal"]["trials_to_criterion_ratio"] == pytest.approx(70.5 / 25)
    row = next(
        line.split()
        for line in format_summary(summary).splitlines()
        if line.startswith("slope-5  ") and "ucb-ald" in line and "vs" in line
    )
    assert "≥2.82" in row
    # the median itself, (40 + 101) / 2, is a lower bound too: the true one lies beyond the budget's 70.5
    assert ucb["trials_to_criterion"]["median_is_lower_bound"] is True and "≥70.5" in row
    ideal = next(r for r in summary["rows"] if r["rule"] == "ideal")
    assert ideal["trials_to_criterion"]["median_is_lower_bound"] is False


@pytest.mark.parametrize(
    ("ttc", "budget", "median", "never", "text"),
    [
        ([10, 20, 30, 40], 40, 25.0, 0, "25.0"),
        ([10, 20, 61, 61], 60, 40.5, 2, "≥40.5"),  # a pilot's 2 of 4 never settled: at least 40.5
        ([10, 20, 30, 61, 61], 60, 30.0, 2, "30.0"),  # the middle one settled: a median
        ([], 60, None, 0, "—"),
    ],
)
def test_a_median_of_trials_to_criterion_is_printed_as_a_lower_bound_when_censored(ttc, budget, median, never, text):
    stats = criterion_stats(ttc, budget)
    assert (stats["median"], stats["never"], stats["never_counts_as"]) == (median, never, budget + 1)
    assert stats["median_is_lower_bound"] is median_is_censored(len(ttc), never)
    assert median_text(stats) == text
