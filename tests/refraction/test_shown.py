import math
import types

import pytest

from lensopt.refraction.acuity_law import blur_acuity_loss_logmar
from lensopt.refraction.shown import SHOWN_BLUR_D, nearest_shown_blur_d, not_shown_note


def _trial(sphere_d, cylinder_d, axis_deg=None):
    return types.SimpleNamespace(sphere_d=sphere_d, cylinder_d=cylinder_d, axis_deg=axis_deg)


def test_the_shown_tolerance_is_the_blur_of_the_stopping_rules_acuity_tolerance():
    """A residual of SHOWN_BLUR_D loses 0.025 logMAR under the blur-acuity law (METHOD.md §1)."""
    assert blur_acuity_loss_logmar(SHOWN_BLUR_D, 0.0) == pytest.approx(0.025, abs=1e-12)
    assert SHOWN_BLUR_D == pytest.approx(0.2435, abs=1e-4)


def test_the_nearest_lens_shown_is_measured_by_the_blur_of_the_residual():
    """Hand values: on one meridian Raasch's b² = ½(r_S² + (r_S + r_C)²); across meridians the
    power-vector difference (a -1.00 cylinder turned from 180 to 090: J0 from +0.5 to -0.5, 1 D)."""
    two_parameter = [_trial(-2.0, 0.0), _trial(-1.0, -1.0), _trial(0.5, -0.5)]
    # residuals against -1.00 / -0.50: (-1, 0.5) → b² = ½(1 + 0.25); (0, -0.5) → ⅛; (1.5, 0) → 2.25
    assert nearest_shown_blur_d(-1.0, -0.5, None, two_parameter) == pytest.approx(math.sqrt(0.125))
    turned = [_trial(-1.0, -1.0, 90.0)]
    assert nearest_shown_blur_d(-1.0, -1.0, 180.0, turned) == pytest.approx(1.0)
    # a trial without an axis lies on the reported lens's meridian, whatever it is
    assert nearest_shown_blur_d(-1.0, -1.0, 45.0, [_trial(-1.0, -1.0)]) == pytest.approx(0.0)
    assert nearest_shown_blur_d(-1.0, -1.0, 45.0, []) is None


def test_a_note_only_when_no_lens_shown_came_within_the_tolerance():
    assert not_shown_note(None) is None
    assert not_shown_note(SHOWN_BLUR_D) is None
    note = not_shown_note(0.56)
    assert note is not None and "0.56 D" in note and "check it on the chart" in note
