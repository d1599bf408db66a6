"""The clinician's console fits its window: the closing screen of both eyes (each eye's prescription,
its intervals, its predicted acuity and a "not tried" note, a command to continue) in the console's
900 x 640 pixels keeps every line on screen — above all the key that closes the session, which the
last answers under the closing lines pushed out of the window."""

from __future__ import annotations

import itertools
import types

import numpy as np
import pytest
from PIL import Image

from experiment_helpers import needs_display
from lensopt.experiment.end_point import EndPoint, closing_screen, console_broken

#: The console's size in ``[screens] console_size_px`` of the clinical protocols.
CONSOLE_SIZE_PX = (900, 640)

NOT_TRIED = (
    "this lens was not tried: the nearest lens the patient read through is {d} D from it, so its acuity is "
    "predicted, not measured; check it on the chart"
)


def _prescribed(eye: str, lens: str, confidence: float, axis: str, not_tried: str) -> EndPoint:
    """An eye's end point as a resumed plus-cylinder session's closing console shows it: long lines."""
    details = (
        f"predicted acuity -0.01 logMAR, confidence {confidence:.2f} that it is within 0.025 logMAR of the best",
        f"95% intervals (minus cylinder): S -10.61 to -8.76 D, C -3.41 to -0.38 D, axis {axis} through 180, "
        "M -11.95 to -10.26 D, J0 +0.02 to +1.63 D, J45 -1.53 to +0.10 D",
    )
    return EndPoint(eye, True, confidence, 0.8, lens, details, n_trials=124, not_tried=not_tried)


OD = _prescribed("OD", "-10.25 / -1.75 x 162", 0.81, "138 to 009", NOT_TRIED.format(d="0.26"))
OS = _prescribed("OS", "-10.00 / -1.00 x 180", 0.80, "161 to 019", NOT_TRIED.format(d="0.35"))
#: A study's estimates (no [stop]): the advice above each eye's lines, the headline "(estimate, ...)".
OD_ESTIMATE = EndPoint(
    "OD", False, 0.62, 0.95, OD.lens_text, OD.details, n_trials=260, fixed_design=True, not_tried=OD.not_tried
)
OS_ESTIMATE = EndPoint(
    "OS", False, 0.41, 0.95, OS.lens_text, OS.details, n_trials=260, fixed_design=True, not_tried=OS.not_tried
)
OS_SHORT = EndPoint("OS", False, 0.49, 0.8, "-10.00 / -1.00 x 180", more_trials=40, n_trials=124)
RESUME = "lensopt run --resume 1234 --trials 164 --db /srv/clinic/refraction/sessions-2026.db"


@needs_display
@pytest.mark.parametrize("size_px", [CONSOLE_SIZE_PX, (800, 480)], ids=["900x640", "800x480"])
@pytest.mark.parametrize(
    "end_points, resume",
    [((OD, OS), None), ((OD, OS_SHORT), RESUME), ((OD_ESTIMATE, OS_ESTIMATE), None)],
    ids=["OU prescribed", "OD prescribed, OS short", "OU estimates"],
)
def test_the_closing_console_of_both_eyes_fits_the_window_with_the_key_that_closes_it(
    tmp_path, end_points, resume, size_px
):
    """At the clinical protocols' console size and at a smaller one (``[screens] console_size_px``),
    where the closing lines fit only set smaller."""
    from psychopy import visual

    from lensopt.experiment.console import ClinicianConsole

    win = visual.Window(size=size_px, units="pix", color=(-0.85, -0.85, -0.8), checkTiming=False)
    try:
        console = ClinicianConsole(win)
        answers = tuple(
            f"{k}: {a}>{b} {mark}" for k, (a, b, mark) in enumerate([("W", "W", "ok"), ("I", "W", "x")] * 3, 60)
        )
        console.update(trial_index=65, n_trials=100, eye="OS", answers=answers, confidence=0.79)  # the last trial
        protocol = types.SimpleNamespace(keys=types.SimpleNamespace(confirm="space", undo="backspace"))
        waited = []
        undo = closing_screen(
            console, types.SimpleNamespace(wait_for=waited.append), protocol, list(end_points), tmp_path, resume, True
        )
        assert waited == [["space", "backspace"]] and not undo  # a letter session's: close, or undo
        stims = (console.title, console.heading, console.lens, console.keys, console.history, console.message)
        # measured as laid out: each drawn text's box (its top at pos, anchorVert "top") inside the window
        half_w, half_h = size_px[0] / 2, size_px[1] / 2
        boxes = []
        for stim, text in zip(stims, console.drawn):
            if text:
                width, height = (float(v) for v in stim.boundingBox)
                top = float(stim.pos[1])
                boxes.append((text, top - height, top, width))
        frame = np.asarray(Image.open(tmp_path / "end-console.png").convert("L"))
    finally:
        win.close()
    assert "SPACE: close   ·   BACKSPACE: undo OS's last answer" in console.drawn  # the keys are drawn...
    outside = [text for text, bottom, top, width in boxes if bottom < -half_h + 4 or top > half_h or width > 2 * half_w]
    assert outside == []  # ...and, like every line, inside the window
    for (_, bottom, _, _), (text, _, top, _) in itertools.pairwise(boxes):
        assert top <= bottom, text  # each part below the one above
    assert all(console_broken(line) in console.drawn[3] for e in end_points for line in e.closing_lines())  # all kept
    # the frame saved: nothing drawn in the window's last rows (the last line touched the bottom edge)
    background = np.median(frame[-4:, :])
    assert frame.shape == (size_px[1], size_px[0])
    assert (np.abs(frame[-4:, :].astype(float) - background) < 30).all()


@needs_display
def test_a_console_with_room_draws_its_last_answers_at_full_size():
    """A trial's console fits as it is: nothing left out, nothing set smaller."""
    from psychopy import visual

    from lensopt.experiment.console import ClinicianConsole

    win = visual.Window(size=CONSOLE_SIZE_PX, units="pix", checkTiming=False)
    try:
        console = ClinicianConsole(win)
        console.update(
            trial_index=65,
            n_trials=100,
            eye="OS",
            heading="Letter D shown at +0.21 logMAR: type the letter the patient names",
            lens_text="-0.25 / -2.25 x 180",
            keys_text="Keys: the letter named   ·   SPACE: cannot read (a miss)   ·   ESCAPE: pause / stop",
            answers=("59: S>S ok", "60: I>I ok"),
            confidence=0.79,
        )
    finally:
        win.close()
    assert console.drawn[4].startswith("Last answers:") and console.scale == 1.0


@needs_display
@pytest.mark.parametrize("width_px", [900, 600])
def test_keys_too_many_for_one_line_are_listed_one_a_line_never_a_line_ended_on_a_separator(width_px):
    """The window wrapped a long list of keys at any space, leaving "ESCAPE: pause / stop   ·" at a
    line's end; too long for one line, the list is set one key a line; short enough, as it is."""
    from psychopy import visual

    from lensopt.experiment.console import KEY_SEPARATOR, ClinicianConsole

    keys = KEY_SEPARATOR.join(
        [
            "Keys: the letter named",
            "SPACE: cannot read (a miss)",
            "ESCAPE: pause / stop",
            "BACKSPACE: undo the last answer",
        ]
    )
    short = KEY_SEPARATOR.join(["SPACE: continue", "ESCAPE: pause / stop"])
    win = visual.Window(size=(width_px, 640), units="pix", checkTiming=False)
    try:
        console = ClinicianConsole(win)
        console.update(
            trial_index=2, n_trials=40, heading="Set the lens", lens_text="-1.00 / -0.50 x 180", keys_text=keys
        )
        set_long = console.keys.text
        one_line_px = console.keys.height * 1.6
        console.update(keys_text=short)
        set_short, short_px = console.keys.text, float(console.keys.boundingBox[1])
    finally:
        win.close()
    assert set_long == keys.replace(KEY_SEPARATOR, "\n")  # 4 keys are too many for one line at either width
    assert set_short == short and short_px <= one_line_px  # 2 fit
    assert console.drawn[3] == short  # what the console says it shows: the keys as given


def test_a_closing_line_breaks_between_its_phrases_not_inside_one():
    acuity, intervals = (f"OD: {line}" for line in OD.details)
    assert console_broken(acuity).split("\n") == [
        "OD: predicted acuity -0.01 logMAR",
        "confidence 0.81 that it is within 0.025 logMAR of the best",
    ]
    first, second = console_broken(intervals).split("\n")
    assert first.endswith("axis 138 to 009 through 180,") and second.startswith("M -11.95 to -10.26 D, J0 ")
    assert console_broken(OD.not_tried) == OD.not_tried  # nothing to break at
