"""``lensopt calibrate``'s command line: scripted answers on stdin, and bad input in one line, exit 2."""

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
needs_display = pytest.mark.skipif(
    not os.environ.get("DISPLAY"), reason="needs an X display: run under xvfb-run -a -s '-screen 0 1920x1080x24'"
)


def _calibrate(home, *args, stdin="", display=True):
    env = {**os.environ, "HOME": str(home)}
    if not display:
        env.pop("DISPLAY", None)
    return subprocess.run(
        [sys.executable, "-m", "lensopt", "calibrate", *map(str, args)],
        cwd=REPO,
        env=env,
        input=stdin,
        capture_output=True,
        text=True,
        timeout=120,
    )


def _refused(done) -> str:
    assert done.returncode == 2, (done.returncode, done.stdout, done.stderr)
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and "Traceback" not in done.stderr, done.stderr
    return lines[0]


def _monitor(home, name):
    path = home / ".psychopy3" / "monitors" / f"{name}.json"
    return next(iter(json.loads(path.read_text()).values())) if path.exists() else None


@needs_display
def test_the_lengths_typed_on_stdin_are_stored_as_a_psychopy_monitor(tmp_path):
    done = _calibrate(tmp_path, "--name", "lane-2", "--bar-px", 600, stdin="30,0\n400\n")
    assert done.returncode == 0, done.stderr
    monitor = _monitor(tmp_path, "lane-2")
    width_px = monitor["sizePix"][0]
    assert monitor["width"] == pytest.approx(30.0 * width_px / 600) and monitor["distance"] == 400.0
    assert 'monitor = "lane-2"' in done.stdout


@needs_display
@pytest.mark.parametrize("stdin", ["abc\n300\n", "20\n-5\n", "0\n300\n", "20\n", ""])
def test_a_bad_typed_length_is_one_line_and_stores_nothing(tmp_path, stdin):
    line = _refused(_calibrate(tmp_path, "--name", "bad", stdin=stdin))
    assert "cm" in line or "stdin" in line, line
    assert _monitor(tmp_path, "bad") is None


@pytest.mark.parametrize(
    "args, option",
    [
        (["--bar-cm", "0", "--distance-cm", "300"], "--bar-cm"),
        (["--bar-cm", "-20", "--distance-cm", "300"], "--bar-cm"),
        (["--bar-cm", "20", "--distance-cm", "0"], "--distance-cm"),
        (["--bar-cm", "20", "--distance-cm", "nan"], "--distance-cm"),
        (["--bar-px", "0"], "--bar-px"),
        (["--screen", "-1"], "--screen"),
    ],
)
def test_a_non_positive_length_is_refused_before_any_window(tmp_path, args, option):
    line = _refused(_calibrate(tmp_path, *args, display=False))
    assert option in line, line


def test_without_a_display_calibrate_says_so_in_one_line(tmp_path):
    line = _refused(_calibrate(tmp_path, "--bar-cm", "20", "--distance-cm", "300", display=False))
    assert "display" in line.lower(), line
    # a virtual screen has no size to measure: not told to run "lensopt run" under xvfb-run
    assert "run lensopt calibrate on the desktop of the screen to measure" in line and "xvfb-run" not in line
    assert _monitor(tmp_path, "lensopt") is None


@needs_display
def test_a_bar_wider_than_the_screen_or_a_too_close_distance_is_refused(tmp_path):
    assert "wider" in _refused(_calibrate(tmp_path, "--bar-px", 100_000, "--bar-cm", 20, "--distance-cm", 300))
    assert "distance_cm" in _refused(_calibrate(tmp_path, "--bar-cm", 20, "--distance-cm", 1))
    # closer than reading (a lane in metres typed as cm): refused before any window, naming the unit
    close = _refused(_calibrate(tmp_path, "--bar-cm", 20, "--distance-cm", 10, display=False))
    assert "--distance-cm 10 cm is closer than reading distance (25 cm)" in close and "a 4 m lane is 400" in close
    assert "name" in _refused(_calibrate(tmp_path, "--name", "../x", "--bar-cm", 20, "--distance-cm", 300))
    stored = {p.stem for p in (tmp_path / ".psychopy3" / "monitors").glob("*.json")}
    assert stored <= {"testMonitor"}, stored  # PsychoPy's own default monitor only


@needs_display
def test_a_screen_the_display_does_not_have_is_refused_not_replaced_by_screen_0(tmp_path):
    """PsychoPy opens screen 0 for a screen that does not exist (a warning at most): the bar would be
    measured, and stored, on another screen than the one named."""
    line = _refused(_calibrate(tmp_path, "--screen", 3, "--bar-cm", 20, "--distance-cm", 300))
    assert "--screen 3: this display has 1 screen (numbered from 0); give --screen 0 or lower" in line
    assert _monitor(tmp_path, "lensopt") is None


@needs_display
def test_recalibrating_a_monitor_adds_a_new_dated_calibration_that_psychopy_uses(tmp_path):
    """The second calibration of a monitor is stored under its own date (it overwrote the first's
    numbers under the first's date); PsychoPy's Monitor picks it, and the first is kept."""
    import time

    for bar_cm in (20, 25):
        done = _calibrate(tmp_path, "--name", "lane", "--bar-cm", bar_cm, "--distance-cm", 300)
        assert done.returncode == 0, done.stderr
        time.sleep(1.1)  # calibrations are named to the second
    path = tmp_path / ".psychopy3" / "monitors" / "lane.json"
    calibs = json.loads(path.read_text())
    assert len(calibs) == 2
    first, second = (calibs[name] for name in sorted(calibs))
    assert second["width"] == pytest.approx(first["width"] * 25 / 20)
    check = "from psychopy import monitors; print(monitors.Monitor('lane').getWidth())"
    width = subprocess.run(
        [sys.executable, "-c", check], env={**os.environ, "HOME": str(tmp_path)}, capture_output=True, text=True
    ).stdout.split()[-1]
    assert float(width) == pytest.approx(second["width"])


def test_a_bad_name_or_distance_is_refused_before_the_bar_is_shown(tmp_path):
    """Checked before any window (here: no display at all), not after the bar has been measured."""
    assert "monitor name must be a plain file name" in _refused(
        _calibrate(tmp_path, "--name", "../x", "--bar-cm", 20, "--distance-cm", 300, display=False)
    )
    assert "distance_cm" in _refused(_calibrate(tmp_path, "--bar-cm", 20, "--distance-cm", 1, display=False))


@needs_display
@pytest.mark.parametrize("content", ['{"a": 1}', "{bad"])
def test_a_monitor_file_psychopy_cannot_read_is_one_line_naming_it_and_is_left_as_it_was(tmp_path, content):
    """A monitor file of another shape ended in a TypeError traceback; a corrupt one in the JSON
    decoder's message, with no file named."""
    folder = tmp_path / ".psychopy3" / "monitors"
    folder.mkdir(parents=True)
    (folder / "odd.json").write_text(content)
    line = _refused(_calibrate(tmp_path, "--name", "odd", "--bar-cm", 20, "--distance-cm", 300))
    assert f"{folder / 'odd.json'} cannot be read" in line and "calibrate 'odd' again" in line, line
    assert (folder / "odd.json").read_text() == content
