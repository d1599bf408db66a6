"""A refraction trial's lens (:attr:`lensopt.refraction.trial.Trial.lens`)."""

import math

import pytest

from lensopt.refraction.trial import Trial


@pytest.mark.parametrize(
    ("sphere_d", "cylinder_d", "axis_deg"), [(-1.25, -0.75, 30.0), (2.0, 1.5, 165.0), (0.5, 0.0, 90.0)]
)
def test_a_trials_lens_has_the_power_vector_of_its_sphere_cylinder_and_axis(sphere_d, cylinder_d, axis_deg):
    lens = Trial(sphere_d, cylinder_d, 0.1, axis_deg).lens
    pv = lens.power_vector()
    angle = math.radians(2 * axis_deg)  # Thibos: M = S + C/2, J0 = −C/2 cos 2α, J45 = −C/2 sin 2α (by hand)
    assert pv.m_d == pytest.approx(sphere_d + cylinder_d / 2)
    assert pv.j0_d == pytest.approx(-cylinder_d / 2 * math.cos(angle), abs=1e-12)
    assert pv.j45_d == pytest.approx(-cylinder_d / 2 * math.sin(angle), abs=1e-12)


def test_a_two_parameter_trials_lens_is_written_at_axis_180():
    lens = Trial(-2.0, -1.0, 0.3).lens
    assert (lens.sphere_d, lens.cylinder_d, lens.axis_deg) == (-2.0, -1.0, 180.0)
    assert lens.format().endswith("180")
