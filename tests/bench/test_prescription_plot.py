"""The prescription campaign's Bland–Altman plot: each setting its own bias and limits of agreement,
as the tables give them, and a row of panels per setting."""

import struct

import numpy as np
import pytest
from test_prescription_bench import _record as hand_made_record

from lensopt.bench.prescription_plot import bland_altman_groups, plot_bland_altman
from lensopt.bench.prescription_summary import summarize
from lensopt.bench.spec import HELD_OUT_FIRST_SEED


def _record(setting, seed, m_end, *, with_start=True, true_m=-1.0):
    """A finished 3-trial bracket-ald run (the summary's tests' hand-made record) whose M error ends at
    ``m_end`` (J0, J45 errors 0.05, -0.02), with or without a start, of a patient of M ``true_m``."""
    record = hand_made_record(setting, "bracket-ald", seed, [0.5, 0.2, m_end], j0=0.05, j45=-0.02)
    return {**record, "with_start": with_start, "true_power_vector_d": {"M": true_m, "J0": 0.1, "J45": 0.0}}


def _two_starts():
    s = HELD_OUT_FIRST_SEED
    autorefraction = [0.1, -0.1, 0.0, 0.05]
    old_glasses = [-0.3, -0.2, -0.4, -0.1]
    return (
        autorefraction,
        old_glasses,
        [_record("start-accommodation", s + i, m, true_m=-1.0 - i) for i, m in enumerate(autorefraction)]
        + [_record("old-glasses-accommodation", s + i, m, true_m=-1.0 - i) for i, m in enumerate(old_glasses)]
        # a setting without a start is left out of a plot of started settings
        + [_record("no-start-accommodation", s, 2.0, with_start=False)],
    )


def test_each_setting_has_its_own_bias_and_limits_as_the_tables_give_them():
    autorefraction, old_glasses, records = _two_starts()
    settings, rules, groups = bland_altman_groups(records)
    assert settings == ["start-accommodation", "old-glasses-accommodation"] and rules == ["bracket-ald"]
    rows = {(r["setting"], r["rule"]): r for r in summarize(records)["rows"]}
    for setting, errors in (("start-accommodation", autorefraction), ("old-glasses-accommodation", old_glasses)):
        m = groups[(setting, "bracket-ald")]["M"]
        d = np.array(errors)
        assert m["bland_altman"]["bias"] == pytest.approx(d.mean(), abs=1e-12)
        assert m["bland_altman"]["loa_low"] == pytest.approx(d.mean() - 1.96 * d.std(ddof=1), abs=1e-12)
        assert m["bland_altman"]["loa_high"] == pytest.approx(d.mean() + 1.96 * d.std(ddof=1), abs=1e-12)
        # x: the mean of reported (truth + error) and truth
        truth = -1.0 - np.arange(4)
        np.testing.assert_allclose(m["means"], truth + d / 2)
        np.testing.assert_allclose(m["differences"], d)
        for coord in ("M", "J0", "J45"):
            table = rows[(setting, "bracket-ald")]["at"]["3"][coord]
            assert groups[(setting, "bracket-ald")][coord]["bland_altman"] == pytest.approx(table)
    pooled = np.array(autorefraction + old_glasses)
    # not the pooled bias, which lies between the two starts' and hides both
    assert groups[("old-glasses-accommodation", "bracket-ald")]["M"]["bland_altman"]["bias"] < pooled.mean() - 0.1


def _png_size(path) -> tuple[int, int]:
    data = path.read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n" and data[12:16] == b"IHDR"
    return struct.unpack(">II", data[16:24])


def test_the_plot_has_a_row_of_panels_per_setting(tmp_path):
    _, _, records = _two_starts()
    one = [r for r in records if r["setting"] == "start-accommodation"]
    plot_bland_altman(one, tmp_path / "one.png")
    plot_bland_altman(records, tmp_path / "two.png")
    (width_one, height_one), (width_two, height_two) = _png_size(tmp_path / "one.png"), _png_size(tmp_path / "two.png")
    assert width_one == width_two
    # a row of 3.4 inches more at 110 dpi
    assert height_two - height_one == pytest.approx(3.4 * 110, abs=2)


def test_a_campaign_without_runs_to_draw_gets_one_empty_row(tmp_path):
    plot_bland_altman([], tmp_path / "none.png")
    _, height = _png_size(tmp_path / "none.png")
    assert height == pytest.approx((1.0 + 3.4) * 110, abs=2)


def test_the_legend_names_every_rule_even_one_absent_from_the_first_setting(tmp_path, monkeypatch):
    from matplotlib.figure import Figure

    drawn = []
    monkeypatch.setattr(Figure, "savefig", lambda fig, path: drawn.append(fig))
    _, _, records = _two_starts()
    ideal = [dict(r, rule="ideal") for r in records if r["setting"] == "old-glasses-accommodation"]
    plot_bland_altman(records + ideal, tmp_path / "legend.png")
    (fig,) = drawn
    assert fig.axes[0].get_title() == "start-accommodation: M"
    assert [t.get_text() for t in fig.axes[0].get_legend().get_texts()] == ["bracket-ald", "ideal"]
