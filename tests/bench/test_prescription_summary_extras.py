"""`lensopt bench prescription`'s summary: the 95 % intervals' coverage and the lens changes, by hand."""

import pytest

from lensopt.bench.prescription_summary import format_summary, summarize


def _record(seed, truth_m, interval_m, changes=None, intervals=True):
    n = 4
    record = {
        "campaign": "prescription",
        "setting": "start-accommodation",
        "rule": "muc-ald",
        "feedback": "duel",
        "seed": seed,
        "split": "tuning",
        "n_trials": n,
        "slope": 14.0,
        "true_power_vector_d": {"M": truth_m, "J0": 0.1, "J45": -0.2},
        "curves": {"blur_error_d": [0.3] * n, "M": [0.1] * n, "J0": [0.0] * n, "J45": [0.0] * n},
        "estimate": {"intervals": {"m_d": interval_m, "j0_d": [-0.5, 0.5], "j45_d": [-0.1, 0.3]}}
        if intervals
        else None,
    }
    if changes is not None:
        record["lens_changes"] = changes
    return record


def test_the_summary_counts_the_sessions_whose_intervals_hold_the_truth_and_their_median_widths():
    records = [
        _record(1, -1.0, [-1.5, -0.5], {"all": 3, "axis_only": 1}),  # M held
        _record(2, -1.0, [-0.9, -0.1], {"all": 2, "axis_only": 0}),  # M missed (truth below)
        _record(3, 0.5, [0.5, 0.9], {"all": 0, "axis_only": 0}),  # M held (on the bound)
    ]  # J0 0.1 in [-0.5, 0.5] always; J45 -0.2 below [-0.1, 0.3] always
    (row,) = summarize(records)["rows"]
    coverage = row["interval_coverage"]
    assert coverage["n"] == 3
    assert (coverage["M"], coverage["J0"], coverage["J45"]) == (pytest.approx(2 / 3), 1.0, 0.0)
    assert coverage["M_width_median"] == pytest.approx(0.8)  # widths 1.0, 0.8, 0.4
    assert coverage["J0_width_median"] == pytest.approx(1.0) and coverage["J45_width_median"] == pytest.approx(0.4)
    assert row["lens_changes"] == {"all": 5, "axis_only": 1}
    text = format_summary(summarize(records))
    assert "67/100/0" in text and "5 (1)" in text


def test_records_that_say_no_intervals_or_lens_changes_leave_those_cells_unknown():
    records = [_record(1, -1.0, [-1.5, -0.5], {"all": 3, "axis_only": 1}), _record(2, -1.0, None, intervals=False)]
    (row,) = summarize(records)["rows"]
    assert row["interval_coverage"] is None and row["lens_changes"] is None
