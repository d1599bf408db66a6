"""Phoropter rounding: the array form gives the scalar form's floats, value for value."""

import math

import numpy as np
import pytest

from lensopt.refraction.grid_posterior import rounded_lenses
from lensopt.refraction.phoropter import round_to_step, round_to_step_array

BOUNDS_D = (-4.0, 4.0)


def _values():
    rng = np.random.default_rng(0)
    halves = np.arange(-4.5, 4.5, 0.125)  # every exact half-step (Python and numpy round halves to even)
    return np.concatenate([rng.uniform(-5.0, 5.0, 2000), halves, [-0.1, -0.0, 0.0, 0.1, 3.99, 4.1, -4.13, 4.13]])


@pytest.mark.parametrize("step_d", [0.25, 0.5, 0.3, None])
def test_the_array_rounding_equals_the_scalar_rounding_bit_for_bit(step_d):
    values = _values()
    expected = [round_to_step(v, step_d, BOUNDS_D) for v in values]
    actual = round_to_step_array(values, step_d, BOUNDS_D)
    assert actual.tolist() == expected
    # a lens is never shown as "-0.00 D": the same sign of zero as the scalar form
    assert [math.copysign(1.0, a) for a in actual] == [math.copysign(1.0, e) for e in expected]


def test_a_bound_off_the_step_is_kept_and_rounding_stays_inside():
    bounds = (-3.9, 3.9)
    values = np.array([-3.95, -3.88, 3.88, 3.95, 3.76])
    assert round_to_step_array(values, 0.25, bounds).tolist() == [round_to_step(v, 0.25, bounds) for v in values]
    assert np.all(np.abs(round_to_step_array(values, 0.25, bounds)) <= 3.9)


def test_rounded_lenses_rounds_each_column_in_its_own_bounds_and_keeps_first_occurrences():
    lenses = [[0.1, -3.9], [0.12, -3.95], [1.3, 2.2], [-0.1, -3.8]]
    rounded = rounded_lenses(lenses, 0.25, (-4.0, 4.0), (-3.5, 3.5))
    assert rounded.tolist() == [[0.0, -3.5], [1.25, 2.25]]
