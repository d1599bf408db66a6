"""The words on the patient's window without a console: read from the viewing distance."""

import types

import pytest

from lensopt.experiment.loop_screens import TEXT_HEIGHT_PX, instruction_text_height_px


@pytest.mark.parametrize(
    ("height_px", "expected_px"), [(1080, 54.0), (768, 38.4), (2160, 108.0), (400, TEXT_HEIGHT_PX)]
)
def test_instructions_scale_with_the_window_and_never_shrink_below_the_old_size(height_px, expected_px):
    """28 px instructions on a 1080 px screen had a cap height of 4.7 arcmin at 4 m — about the
    smallest letter the session tests, unreadable through a lens that blurs: they are 5 % of the
    window's height now (54 px there), never less than before on a small window."""
    window = types.SimpleNamespace(size=(1920, height_px))
    assert instruction_text_height_px(window) == pytest.approx(expected_px)
