"""Intervals of cylinder axes (lensopt.refraction.axes)."""

import pytest

from lensopt.refraction.axes import axis_interval_deg


@pytest.mark.parametrize(
    ("given", "written"),
    [
        ((-40.0, 108.0), (140.0, 288.0)),  # from 140 through 180 to 108
        ((172.0, 188.0), (172.0, 188.0)),  # already so
        ((5.0, 10.0), (5.0, 10.0)),
        ((0.0, 10.0), (180.0, 190.0)),  # axis 0 is axis 180
        ((200.0, 250.0), (20.0, 70.0)),
        ((-200.0, -170.0), (160.0, 190.0)),
    ],
)
def test_an_axis_interval_is_written_from_a_low_end_in_0_to_180(given, written):
    low, high = axis_interval_deg(*given)
    assert (low, high) == pytest.approx(written)
    assert 0.0 < low <= 180.0 and high - low == pytest.approx(given[1] - given[0])  # the same arc
