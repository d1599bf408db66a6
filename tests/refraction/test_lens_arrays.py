import math

import numpy as np
import pytest

from lensopt.refraction.lens_arrays import lens_columns


def test_lens_columns_pair_each_sphere_with_its_cylinder_and_keep_the_shape():
    lenses, shape = lens_columns([[0.5, -1.0, 2.0]], -0.25)
    assert shape == (1, 3)
    np.testing.assert_array_equal(lenses, [[0.5, -0.25], [-1.0, -0.25], [2.0, -0.25]])
    lenses, shape = lens_columns(1.0, -0.5)
    assert shape == () and lenses.tolist() == [[1.0, -0.5]]


@pytest.mark.parametrize(
    ("sphere_d", "cylinder_d", "message"),
    [
        (math.nan, 0.0, r"^sphere_d must be finite numbers of diopters, got nan$"),
        (0.0, [0.0, -math.inf], r"^cylinder_d must be finite numbers of diopters, got -inf$"),
        ("plano", 0.0, r"^sphere_d must be numbers of diopters, got 'plano'$"),
        ([0.0, 1.0], [0.0, 0.0, 0.0], r"^sphere_d of shape \(2,\) and cylinder_d of shape \(3,\) do not broadcast"),
    ],
)
def test_lens_columns_refuse_a_power_that_is_no_finite_number_in_one_line(sphere_d, cylinder_d, message):
    with pytest.raises(ValueError, match=message):
        lens_columns(sphere_d, cylinder_d)
