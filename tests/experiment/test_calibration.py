"""Screen calibration: letter heights in pixels and the renderable logMAR range (no window)."""

import math

import numpy as np
import pytest

from lensopt.errors import CalibrationError
from lensopt.experiment.calibration import Calibration, full_screen_calibration, letter_bounds_within


@pytest.fixture
def cal():
    return Calibration(screen_width_cm=53.0, screen_width_px=1920, screen_height_px=1080, distance_cm=400.0)


def test_letter_height_matches_the_hand_computed_value(cal):
    # logMAR 0 at 4 m: 5 arcmin -> 2 * 400 * tan(2.5 arcmin) cm = 0.581776 cm; x 1920/53 px/cm
    assert cal.letter_height_px(0.0) == pytest.approx(0.5817764 * 1920 / 53, rel=1e-6)


def test_letter_height_agrees_with_the_small_angle_arc_length(cal):
    # 2 d tan(theta/2) = d theta (1 + theta^2/12 + O(theta^4)) (Taylor series of tan)
    for logmar in (-0.3, 0.0, 0.5, 1.0):
        theta_rad = math.radians(5 * 10**logmar / 60)
        arc_px = 400 * theta_rad * 1920 / 53
        assert cal.letter_height_px(logmar) / arc_px - 1 == pytest.approx(theta_rad**2 / 12, rel=1e-3)


def test_height_and_logmar_are_inverse(cal):
    logmar = np.linspace(-1, 2, 13)
    assert cal.letter_logmar_for_height_px(cal.letter_height_px(logmar)) == pytest.approx(logmar)


def test_pixels_per_arcmin_is_a_fifth_of_a_logmar_0_letter(cal):
    assert cal.px_per_arcmin == pytest.approx(cal.letter_height_px(0.0) / 5, rel=1e-6)


def test_renderable_range_ends_at_a_one_pixel_stroke_and_at_the_window_margin(cal):
    low, high = cal.renderable_logmar(window_height_px=600)
    assert cal.letter_height_px(low) == pytest.approx(5.0)  # stroke = 1 px
    assert cal.letter_height_px(high) == pytest.approx(0.8 * 600)
    assert cal.renderable_logmar()[1] > high  # the full screen allows larger letters


def test_a_retina_framebuffer_doubles_the_pixels_of_a_letter(cal):
    retina = cal.with_framebuffer(3840, 2160)
    assert retina.letter_height_px(0.3) == pytest.approx(2 * cal.letter_height_px(0.3))


def test_bounds_are_intersected_with_what_the_screen_renders():
    assert letter_bounds_within((-1.0, 2.0), (-0.5, 1.4)) == (-0.5, 1.4)
    assert letter_bounds_within((-0.3, 1.0), (-0.5, 1.4)) == (-0.3, 1.0)


def test_a_set_up_that_cannot_render_the_requested_sizes_raises(cal):
    near = Calibration(53.0, 1920, 1080, distance_cm=10.0)
    with pytest.raises(CalibrationError, match=r"letter_bounds_logmar = \[-0.3, 0\] asks for letters smaller"):
        letter_bounds_within((-0.3, 0.0), near.renderable_logmar(), near)


def test_letters_too_small_or_too_large_name_the_key_and_the_fix_of_that_side(cal):
    with pytest.raises(CalibrationError) as small:
        letter_bounds_within((-0.9, -0.8), cal.renderable_logmar(), cal)
    assert "optimizer.letter_bounds_logmar = [-0.9, -0.8] asks for letters smaller" in str(small.value)
    assert "; raise them to within -0.62 to" in str(small.value)
    assert "further away (calibration.distance_cm)" in str(small.value)
    with pytest.raises(CalibrationError) as large:
        letter_bounds_within((1.8, 2.0), cal.renderable_logmar(), cal)
    assert "asks for letters larger" in str(large.value) and "seat the patient nearer" in str(large.value)


def test_a_thick_minimum_stroke_is_named_as_what_to_lower():
    """min_stroke_px = 50 makes the smallest letter 250 px: the fix is min_stroke_px, not the
    viewing distance or the letter bounds the message named."""
    thick = Calibration(53.0, 1920, 1080, distance_cm=300.0, min_stroke_px=50.0)
    with pytest.raises(CalibrationError) as refused:
        letter_bounds_within((-0.2, 1.0), thick.renderable_logmar(), thick)
    message = str(refused.value)
    assert "calibration.min_stroke_px = 50 px" in message and "lower calibration.min_stroke_px" in message
    assert "1 px, the default, draws from logMAR -0.50" in message and "distance" not in message.split(";")[-1]


@pytest.mark.parametrize(
    "field, value",
    [("screen_width_cm", 0.0), ("distance_cm", -3.0), ("screen_width_px", 10.5), ("screen_height_px", True)],
)
def test_invalid_calibration_values_name_the_field(field, value):
    values = dict(screen_width_cm=53.0, screen_width_px=1920, screen_height_px=1080, distance_cm=400.0)
    values[field] = value
    with pytest.raises(ValueError, match=field):
        Calibration(**values)


def test_to_dict_holds_the_fields_the_export_needs_and_round_trips(cal):
    d = cal.to_dict()
    assert {"screen_width_cm", "screen_width_px", "distance_cm"} <= set(d)
    assert Calibration.from_dict(d) == cal


def test_an_unknown_monitor_center_name_is_a_calibration_error():
    pytest.importorskip("psychopy")
    with pytest.raises(CalibrationError, match="no PsychoPy monitor named 'no-such-monitor-xyz'"):
        Calibration.from_monitor("no-such-monitor-xyz")


def test_the_message_names_the_setting_it_is_given_for_the_letter_bounds(cal):
    """A Builder loop's letter sizes are its *Letter bounds* field, not a protocol file's key."""
    with pytest.raises(CalibrationError) as refused:
        letter_bounds_within((1.8, 2.0), cal.renderable_logmar(), cal, "Letter bounds of lensopt refraction 'trials'")
    message = str(refused.value)
    assert message.startswith("Letter bounds of lensopt refraction 'trials' = [1.8, 2] asks for letters larger")
    assert "optimizer." not in message and "; lower them to within" in message


def test_a_full_screen_framebuffer_of_twice_the_pixels_doubles_them_and_names_the_width_to_check():
    """A Retina screen described in points (1440 x 900) draws into 2880 x 1800 px: the same 33 cm hold
    twice the pixels, so a letter is twice as many pixels tall (hand value: px per arcmin doubles)."""
    points = Calibration(screen_width_cm=33.0, screen_width_px=1440, screen_height_px=900, distance_cm=300.0)
    said = []
    used = full_screen_calibration(points, (2880, 1800), said.append, "screen_width_cm of the loop's Calibration")
    assert (used.screen_width_px, used.screen_height_px, used.screen_width_cm) == (2880, 1800, 33.0)
    assert used.letter_height_px(0.3) == pytest.approx(2 * points.letter_height_px(0.3))
    (line,) = said
    assert "2880 x 1800 px, not the calibration's 1440 x 900" in line
    assert line.endswith("check that screen_width_cm of the loop's Calibration is this screen's width")
    quiet = []
    assert full_screen_calibration(points, (1440, 900), quiet.append) == points and quiet == []


@pytest.mark.parametrize("content", ['{"a": 1}', "{bad", "[]"])
def test_a_monitor_file_psychopy_cannot_read_is_a_calibration_error_naming_it(tmp_path, monkeypatch, content):
    pytest.importorskip("psychopy")
    from psychopy.monitors import calibTools

    monkeypatch.setattr(calibTools, "monitorFolder", str(tmp_path))
    (tmp_path / "odd.json").write_text(content)
    with pytest.raises(CalibrationError, match=r"monitor file .*odd\.json cannot be read") as refused:
        Calibration.from_monitor("odd")
    assert "\n" not in str(refused.value)
