"""``lensopt calibrate`` stores a PsychoPy monitor that ``lensopt run`` then uses: the letters of
the saved frames are as tall as that calibration says (acceptance, issue 18)."""

import json
import math
import os
import subprocess
import sys

import pytest

from experiment_helpers import FAST, REPO, needs_display, write_protocol
from lensopt.errors import ProtocolError
from lensopt.experiment.protocol import load_protocol
from lensopt.store import SessionStore
from tests.conftest import dark_span_px

BAR_PX, BAR_CM, DISTANCE_CM = 800, 16.0, 200.0
"""50 px/cm seen from 2 m: not the demo protocol's 36 px/cm from 3 m."""


def _lensopt(home, *args, stdin=None):
    env = {**os.environ, "HOME": str(home)}
    return subprocess.run(
        [sys.executable, "-m", "lensopt", *map(str, args)],
        cwd=REPO,
        env=env,
        input=stdin,
        capture_output=True,
        text=True,
        timeout=300,
    )


@needs_display
def test_a_calibrated_monitor_sets_the_letter_heights_of_a_run(tmp_path):
    home = tmp_path / "home"
    home.mkdir()
    done = _lensopt(
        home, "calibrate", "--name", "lane", "--bar-px", BAR_PX, "--bar-cm", BAR_CM, "--distance-cm", DISTANCE_CM
    )
    assert done.returncode == 0, done.stderr
    stored = json.loads((home / ".psychopy3" / "monitors" / "lane.json").read_text())
    calib = next(iter(stored.values()))
    width_px = calib["sizePix"][0]
    assert calib["distance"] == DISTANCE_CM
    assert calib["width"] == BAR_CM * width_px / BAR_PX  # the bar is BAR_PX of the screen's width_px

    no_numbers = {f"calibration.{k}": None for k in ("screen_width_cm", "screen_width_px", "screen_height_px")}
    protocol = write_protocol(
        tmp_path / "lane.toml",
        **FAST,
        **no_numbers,
        **{"calibration.distance_cm": None, "calibration.monitor": '"lane"'},
    )
    db, frames = tmp_path / "s.db", tmp_path / "frames"
    run = _lensopt(
        home, "run", "--protocol", protocol, "--participant", "p", "--observer", "simulated",
        "--seed", 5, "--trials", 6, "--db", db, "--save-frames", frames,
    )  # fmt: skip
    assert run.returncode == 0, run.stderr
    with SessionStore(db, readonly=True) as store:
        (info,) = store.sessions()
        trials = store.trials(info.session_id)
    assert info.calibration["distance_cm"] == DISTANCE_CM and info.calibration["screen_width_px"] == width_px
    px_per_cm = width_px / (BAR_CM * width_px / BAR_PX)  # = BAR_PX / BAR_CM
    assert len(trials) == 6
    for t in trials:
        expected_px = 2 * DISTANCE_CM * math.tan(math.radians(5 * 10**t.letter_logmar / 60 / 2)) * px_per_cm
        measured_px = dark_span_px(frames / f"trial-{t.index:03d}.png")
        assert abs(measured_px - expected_px) <= 2, (t.index, t.letter_logmar, measured_px, expected_px)


def test_a_protocol_naming_a_monitor_may_leave_the_distance_to_it(tmp_path):
    protocol = load_protocol(
        write_protocol(tmp_path / "m.toml", **{"calibration.distance_cm": None, "calibration.monitor": '"lane"'})
    )
    assert protocol.calibration.monitor == "lane" and protocol.calibration.distance_cm == 0


def test_a_protocol_without_a_monitor_still_needs_its_distance(tmp_path):
    for distance in (None, "0"):  # left out, or 0 (which means "the monitor's own")
        with pytest.raises(ProtocolError, match=r"distance_cm must be the viewing distance in cm .* monitor = NAME"):
            load_protocol(write_protocol(tmp_path / "n.toml", **{"calibration.distance_cm": distance}))
