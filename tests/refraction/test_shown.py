"""Whether the patient read through the lens a session reports: one rule, hand values."""

import math
import types

import pytest

from lensopt.refraction.blur_law import blur_acuity_loss_logmar
from lensopt.refraction.lens import Lens
from lensopt.refraction.shown import (
    TRIED_WITHIN_D,
    letters_through,
    nearest_tried_d,
    read_through,
    untried_d,
    untried_note,
    untried_short,
    untried_summary,
)


def _trial(sphere_d, cylinder_d, axis_deg=None):
    return types.SimpleNamespace(sphere_d=sphere_d, cylinder_d=cylinder_d, axis_deg=axis_deg)


def test_a_phoropter_step_of_dioptric_distance_costs_about_the_stopping_rules_tolerance():
    """0.25 D of residual blur loses log10(1 + 0.0625) = 0.026 logMAR (METHOD.md §1), the stopping
    rule's 0.025 logMAR to the nearest step."""
    assert blur_acuity_loss_logmar(TRIED_WITHIN_D, 0.0) == pytest.approx(math.log10(1.0625), abs=1e-12)
    assert blur_acuity_loss_logmar(TRIED_WITHIN_D, 0.0) == pytest.approx(0.025, abs=0.0015)


def test_the_nearest_lens_tried_is_measured_by_the_dioptric_distance_of_the_residual():
    """Hand values: on one meridian Raasch's b² = ½(r_S² + (r_S + r_C)²); across meridians the
    power-vector difference (a -1.00 cylinder turned from 180 to 090: J0 from +0.5 to -0.5, 1 D)."""
    two_parameter = [_trial(-2.0, 0.0), _trial(-1.0, -1.0), _trial(0.5, -0.5)]
    # residuals against -1.00 / -0.50: (-1, 0.5) → b² = ½(1 + 0.25); (0, -0.5) → ⅛; (1.5, 0) → 2.25
    assert nearest_tried_d(-1.0, -0.5, None, two_parameter) == pytest.approx(math.sqrt(0.125))
    assert nearest_tried_d(-1.0, -1.0, 180.0, [_trial(-1.0, -1.0, 90.0)]) == pytest.approx(1.0)
    assert nearest_tried_d(-1.0, -1.0, 45.0, []) is None


def test_trials_without_an_axis_lie_along_the_sessions_meridian_not_the_reported_lenss_axis():
    """A two-parameter search at --axis 90 that reports S -1.00 C +0.75 stores it transposed,
    -0.25 / -0.75 x 180: the trial of that very lens (cylinder along 090) is 0 D from it, not 0.75 D."""
    stored = Lens(-1.0, 0.75, 90.0).minus_cylinder()
    assert stored.axis_deg == pytest.approx(180.0)
    tried = [_trial(-1.0, 0.75)]
    assert nearest_tried_d(stored.sphere_d, stored.cylinder_d, stored.axis_deg, tried, 90.0) == pytest.approx(0.0)
    assert nearest_tried_d(-1.0, 0.75, None, tried, 90.0) == pytest.approx(0.0)  # the signed form, no axis
    assert nearest_tried_d(stored.sphere_d, stored.cylinder_d, stored.axis_deg, tried, None) == pytest.approx(0.75)


def test_a_lens_one_phoropter_step_from_one_tried_counts_as_tried_and_further_does_not():
    lens = (-1.0, -0.5, None)
    assert untried_d(*lens, [_trial(-1.25, -0.5)]) is None  # 0.25 D: one sphere step
    assert untried_d(*lens, [_trial(-1.5, -0.5)]) == pytest.approx(0.5)
    assert untried_d(*lens, []) is None


def test_the_letters_read_through_a_lens_are_those_within_a_phoropter_step_of_it():
    """Hand values of b on one meridian (b² = ½(r_S² + (r_S + r_C)²)): 0 twice, 0.25 twice (a
    sphere step either way), √(0.0625/2) = 0.18 (a cylinder step), 0.5 (two sphere steps) and,
    across meridians, the -0.50 cylinder turned from 180 to 090 (J0 from +0.25 to -0.25: 0.5 D)."""
    trials = [
        _trial(-1.0, -0.5),
        _trial(-1.0, -0.5),
        _trial(-1.25, -0.5),
        _trial(-0.75, -0.5),
        _trial(-1.0, -0.75),
        _trial(-1.5, -0.5),
        _trial(-1.0, -0.5, 90.0),
    ]
    assert letters_through(-1.0, -0.5, None, trials[:6]) == 5
    assert letters_through(-1.0, -0.5, 180.0, trials) == 5  # the trials without an axis along 180
    assert letters_through(-1.0, -0.5, 90.0, trials) == 1  # only the one turned to 090
    assert letters_through(-1.0, -0.5, None, []) == 0


def test_letters_larger_than_the_largest_asked_are_not_counted_through_a_lens():
    """Through -1.00/-0.50: letters of 0.1, 0.4 and 1.3 logMAR, and a 0.1 through a lens two steps
    away; up to 0.4 logMAR two count (the boundary itself included), up to 2.0 all three."""
    sized = [
        types.SimpleNamespace(sphere_d=s, cylinder_d=c, axis_deg=None, letter_logmar=v)
        for s, c, v in [(-1.0, -0.5, 0.1), (-1.0, -0.5, 0.4), (-1.0, -0.5, 1.3), (-1.5, -0.5, 0.1)]
    ]
    assert letters_through(-1.0, -0.5, None, sized, largest_logmar=0.4) == 2
    assert letters_through(-1.0, -0.5, None, sized, largest_logmar=2.0) == 3
    assert letters_through(-1.0, -0.5, None, sized) == 3
    assert letters_through(-1.0, -0.5, None, sized, largest_logmar=0.0) == 0


def test_what_was_read_through_a_lens_counts_right_answers_and_their_sizes_by_hand():
    def answer(sphere_d, cylinder_d, letter_logmar, correct):
        return types.SimpleNamespace(
            sphere_d=sphere_d, cylinder_d=cylinder_d, axis_deg=None, letter_logmar=letter_logmar
        ), correct

    answers = [
        answer(-1.0, -0.5, 0.12, True),
        answer(-1.25, -0.5, 0.04, False),  # 0.25 D: through it
        answer(-1.0, -0.75, 0.2, True),  # 0.18 D: through it
        answer(-1.5, -0.5, -0.2, True),  # 0.5 D: not
    ]
    reading = read_through(-1.0, -0.5, None, answers)
    assert (reading.letters, reading.right) == (3, 2)
    assert (reading.smallest_logmar, reading.largest_logmar) == (0.04, 0.2)
    assert reading.note() == "read through this lens: 2 of 3 letters right, at +0.04 to +0.20 logMAR"
    assert reading.short() == "read 2 of 3 right through it, +0.04 to +0.20 logMAR"
    assert (
        read_through(-1.0, -0.5, None, answers[:1]).note()
        == "read through this lens: 1 of 1 letter right, at +0.12 logMAR"
    )
    assert read_through(-1.0, -0.5, None, answers[3:]) is None and read_through(-1.0, -0.5, None, []) is None


@pytest.mark.parametrize(
    "predicted_logmar, measured",
    [(None, True), (float("nan"), True), (-0.26, True), (-0.27, False), (0.3, True)],
)
def test_a_lens_read_only_with_letters_far_larger_than_predicted_was_not_measured(predicted_logmar, measured):
    """The smallest letter read through the lens, +0.04 logMAR, must be at most three lines (0.3
    logMAR) larger than the acuity predicted through it for that acuity to count as measured (by
    hand: +0.04 ≤ -0.26 + 0.3, +0.04 > -0.27 + 0.3)."""

    def answer(letter_logmar, correct):
        return types.SimpleNamespace(
            sphere_d=-1.0, cylinder_d=-0.5, axis_deg=None, letter_logmar=letter_logmar
        ), correct

    reading = read_through(-1.0, -0.5, None, [answer(0.04, True), answer(0.5, True)], predicted_logmar=predicted_logmar)
    assert reading.measured is measured
    if measured:
        assert reading.short() == "read 2 of 2 right through it, +0.04 to +0.50 logMAR"
    else:
        assert reading.short() == "not measured: read through it only at +0.04 to +0.50 logMAR; check it on the chart"
        assert reading.note() == (
            "read through this lens only with letters far larger than its predicted acuity (2 of 2 letters right, "
            "at +0.04 to +0.50 logMAR), so its acuity is predicted, not measured; check it on the chart"
        )


def test_the_words_give_the_distance_as_every_power_is_written_and_ask_for_a_check():
    assert untried_note(None) is None and untried_short(None) is None and untried_summary(None) is None
    note = untried_note(0.625)
    assert note == (
        "this lens was not tried: the nearest lens the patient read through is 0.63 D from it, so its acuity "
        "is predicted, not measured; check it on the chart"
    )
    assert untried_short(0.625) == "not tried; nearest tried 0.63 D away"
    assert untried_summary(0.625) == "predicted, not measured: the nearest lens tried is 0.63 D from this one"
