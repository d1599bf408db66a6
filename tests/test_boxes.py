"""Boxes of parameters: bounds checked by name, and which value lies outside its bounds."""

import pytest

from lensopt.boxes import bounds_pairs, first_outside


def test_first_outside_names_the_first_value_beyond_its_bounds_with_the_bounds_included():
    box = ((-4.0, 4.0), (-3.0, 0.0))
    assert first_outside((4.0, -3.0), box) is None  # on the bounds: inside
    assert first_outside((4.01, 0.5), box) == 0
    assert first_outside((0.0, 0.5), box) == 1
    assert first_outside((0.0, float("nan")), box) == 1  # NaN lies in no box


def test_bounds_pairs_refuse_reversed_infinite_and_malformed_bounds_by_name():
    assert bounds_pairs("b", [(0, 1), (-2, 2)]) == ((0.0, 1.0), (-2.0, 2.0))
    for bad, words in [
        ([(1, 0)], r"b\[0\] is reversed or empty"),
        ([(0, float("inf"))], r"b\[0\] must be finite"),
        ([1, 2], "b must be a list of"),
        ([], "b must not be empty"),
    ]:
        with pytest.raises(ValueError, match=words):
            bounds_pairs("b", bad)


@pytest.mark.parametrize(
    ("setting", "value", "said"),
    [
        ("sphere_bounds_d", (4, -4), "sphere_bounds_d is reversed or empty: low 4.0 must be < high -4.0"),
        ("cylinder_bounds_d", "ab", "cylinder_bounds_d must be a (low, high) pair, got 'ab'"),
        ("letter_bounds_logmar", (2, -1), "letter_bounds_logmar is reversed or empty: low 2.0 must be < high -1.0"),
    ],
)
def test_a_letter_optimizers_bad_bounds_are_named_as_the_user_gave_them(setting, value, said):
    """Found by an audit of the Python API: RefractionOptimizer(sphere_bounds_d=(4, -4)) was told that
    "system_bounds[0]" was reversed, a name the user never wrote (the acuity-law optimizer named it)."""
    from lensopt.refraction import RefractionOptimizer

    with pytest.raises(ValueError) as refused:
        RefractionOptimizer(**{setting: value})
    assert str(refused.value) == said


def test_a_numpy_integer_number_of_alternatives_is_taken_by_every_letter_optimizer_as_a_plain_int():
    """Found by an audit of the Python API: RefractionOptimizer and PrescriptionOptimizer refused
    n_alternatives=np.int64(10) (a value read from a numpy array), which AcuityLawOptimizer took."""
    import json

    import numpy as np

    from lensopt.refraction import AcuityLawOptimizer, PrescriptionOptimizer, RefractionOptimizer

    for make in (RefractionOptimizer, PrescriptionOptimizer, AcuityLawOptimizer):
        state = json.loads(json.dumps(make(n_alternatives=np.int64(10)).to_state()))
        assert state["settings"]["n_alternatives"] == 10
