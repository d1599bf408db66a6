"""The acuity a session may report: within one chart line of the letter sizes it showed."""

import math

import pytest

from lensopt.refraction.acuity_text import ACUITY_MARGIN_LOGMAR, measurable_acuity_logmar


@pytest.mark.parametrize(
    "acuity, expected",
    [
        (0.13, 0.13),
        (-0.4, -0.4),  # one line below the smallest letter (-0.3): still reported
        (1.1, 1.1),  # one line above the largest (1.0)
        (-0.41, None),
        (1.11, None),
        (-6.23, None),  # a model's extrapolation after a few wrong answers ("20/0" on the dashboard)
        (math.nan, None),
        (math.inf, None),
        (None, None),
    ],
)
def test_an_acuity_is_reported_within_one_line_of_the_letters_shown(acuity, expected):
    assert ACUITY_MARGIN_LOGMAR == 0.1
    assert measurable_acuity_logmar(acuity, (-0.3, 1.0)) == (None if expected is None else pytest.approx(expected))
