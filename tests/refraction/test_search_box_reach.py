"""How far a full prescription's search box reaches in a principal meridian (a phoropter sets
about ±20 D), and the axis a clinician writes: whole degrees from 1 to 180."""

import math

import pytest

from lensopt.refraction.lens import Lens, parse_lens
from lensopt.refraction.prescription import PHOROPTER_MAX_POWER_D, SearchBox


def test_the_farthest_meridian_is_the_farthest_m_plus_the_strongest_half_cylinder():
    box = SearchBox(Lens(-19.0), 10.0, 1.0)
    assert box.meridian_reach_d() == pytest.approx(-29.0 - math.sqrt(2.0))
    assert box.largest_m_half_width_d() == pytest.approx(1.0 - math.sqrt(2.0))


def test_a_plus_start_reaches_on_the_plus_side():
    box = SearchBox(Lens(16.0), 2.0, 1.0)
    assert box.meridian_reach_d() == pytest.approx(18.0 + math.sqrt(2.0))
    assert box.largest_m_half_width_d() == pytest.approx(PHOROPTER_MAX_POWER_D - 16.0 - math.sqrt(2.0))


def test_the_default_box_around_a_usual_start_is_well_inside_the_phoropter():
    box = SearchBox(parse_lens("-1.25 / -0.75 x 180"))
    assert abs(box.meridian_reach_d()) < 6.0
    assert abs(SearchBox().meridian_reach_d()) == pytest.approx(4.0 + 1.5 * math.sqrt(2.0))


@pytest.mark.parametrize("axis", ["-90", "0", "181", "-0"])
def test_a_whole_axis_outside_1_to_180_is_said_to_be_outside(axis):
    with pytest.raises(ValueError, match=rf"^axis {axis} in .* is outside 1-180"):
        parse_lens(f"-1.00 / -0.50 x {axis}")


def test_a_signed_axis_is_told_to_drop_the_sign():
    with pytest.raises(ValueError, match=r"^axis \+90 in .* has a sign: write it without one"):
        parse_lens("-1.00 / -0.50 x +90")


def test_a_fractional_axis_is_not_a_whole_number_of_degrees():
    with pytest.raises(ValueError, match=r"^axis 180.5 in .* is not a whole number of degrees"):
        parse_lens("-1.00 / -0.50 x 180.5")
