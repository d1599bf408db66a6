"""Where the session's windows go on the display it has: the console never on the patient's chart."""

import dataclasses

import numpy as np
import pytest

from experiment_helpers import CLINICAL_PROTOCOL, FAST, REPO, clinical_protocol, write_protocol
from lensopt.cli import main
from lensopt.errors import ProtocolError
from lensopt.experiment.calibration import Calibration
from lensopt.experiment.protocol import load_protocol
from lensopt.experiment.session import RunRequest, run_session
from lensopt.experiment.windows import (
    MAX_SCREEN_WIDTH_FACTOR,
    calibration_from_protocol,
    console_over_the_chart,
    expected_window_size_px,
    framebuffer_calibration,
    on_this_display,
    refuse_console_on_the_chart,
    screen_count,
    screen_height_problem,
    screen_width_problem,
    side_by_side,
)
from lensopt.store import SessionStore


@pytest.mark.parametrize(
    ("screens", "n_screens", "fullscreen", "over"),
    [
        ({"patient": 0, "console": 1}, 2, True, False),  # the clinic: a screen each
        ({"patient": 0, "console": 1}, 1, True, True),  # the second screen missing: the console lands on the chart
        ({"patient": 0, "console": 0}, 2, True, True),  # one screen named for both
        ({"patient": 0, "console": 1}, 1, False, False),  # a windowed chart: the console beside it
        ({"patient": 0, "console": 1}, None, True, False),  # a display that cannot say: as named
    ],
)
def test_a_console_is_over_the_chart_only_when_it_shares_the_full_screen_patient_window(
    screens, n_screens, fullscreen, over
):
    problem = console_over_the_chart(clinical_protocol(**screens), fullscreen, n_screens)
    assert (problem is not None) == over
    if over:
        assert "full-screen chart" in problem and "--no-fullscreen" in problem and "\n" not in problem


def test_a_protocol_without_a_clinician_has_no_console_to_misplace():
    protocol = load_protocol(REPO / "protocols" / "demo-simulated.toml")
    assert not protocol.lens.prompt
    assert console_over_the_chart(protocol, True, 1) is None


def test_a_screen_the_display_lacks_is_its_first_and_the_stored_protocol_keeps_the_screens_named():
    protocol = clinical_protocol(patient=0, console=1)
    placed = on_this_display(protocol, 1)
    assert (placed.screens.patient, placed.screens.console) == (0, 0)
    assert (protocol.screens.patient, protocol.screens.console) == (0, 1)
    assert on_this_display(protocol, 2) is protocol and on_this_display(protocol, None) is protocol


def test_a_patient_session_whose_console_would_cover_the_chart_is_refused_and_creates_nothing(tmp_path, capsys):
    """On this one-screen display the clinical protocol's console (screen 1) would land on the
    full-screen chart: a session with a person answering is refused before anything is stored."""
    if screen_count() != 1:
        pytest.skip("needs a display of one screen (Xvfb)")
    db = tmp_path / "sessions.db"
    args = ["run", "--protocol", str(CLINICAL_PROTOCOL), "--participant", "P001", "--eye", "OD", "--db", str(db)]
    code = main([*args, "--start", "-1.00 / -0.50 x 180"])
    err = capsys.readouterr().err
    assert code == 2 and err.count("\n") == 1 and "Traceback" not in err, err
    assert "only 1 screen" in err and "full-screen chart" in err
    assert not db.exists()


@pytest.mark.parametrize(
    ("calibration_px", "screen_px", "expected"),
    [
        (1920, 1920, None),  # the screen it describes
        (1921, 1920, None),  # a pixel's rounding
        (1920, None, None),  # a screen that cannot say
        (2880, 1440, (2.0, "large", False)),  # HiDPI: warned, the clinician decides
        (1920, 2560, (1920 / 2560, "small", False)),
        (100000, 1920, (100000 / 1920, "large", True)),  # a wrong number: refused
        (400, 1920, (400 / 1920, "small", True)),
    ],
)
def test_a_calibration_not_of_the_screen_says_by_how_much_every_letter_is_off(calibration_px, screen_px, expected):
    problem = screen_width_problem(calibration_px, screen_px)
    if expected is None:
        assert problem is None
        return
    ratio, way, refused = expected
    text, refuse = problem
    factor = max(ratio, 1 / ratio)
    assert refuse == refused == (factor > MAX_SCREEN_WIDTH_FACTOR)
    assert f"{factor:.2g}x too {way}" in text and f"= {calibration_px}," in text and "\n" not in text


def test_a_windowed_chart_whose_calibration_is_not_the_screens_is_refused_and_keeps_nothing(tmp_path, capsys):
    """Xvfb's screen is 1920 px wide: a protocol saying 100000 px would draw every letter 52x too large."""
    if window_width_of_display() != 1920:
        pytest.skip("needs the 1920-px Xvfb screen of the test command")
    protocol = write_protocol(tmp_path / "wide.toml", **{"calibration.screen_width_px": "100000"})
    db = tmp_path / "sessions.db"
    code = main(["run", "--protocol", str(protocol), "--participant", "P1", "--seed", "1", "--db", str(db)])
    err = capsys.readouterr().err
    assert code == 2 and err.count("\n") == 1 and "Traceback" not in err, err
    assert "screen_width_px = 100000" in err and "1920 px wide" in err
    assert not db.exists()  # refused before a database file was made


@pytest.mark.parametrize(
    ("calibration_px", "screen_px", "factor"),
    [
        (1080, 1080, None),  # the screen it describes
        (2160, 1080, None),  # HiDPI (framebuffer pixels over points): within any scaling
        (1080, None, None),  # a screen that cannot say
        (108, 1080, 10.0),  # a digit left out
        (10800, 1080, 10.0),
        (359, 1080, 1080 / 359),  # just past a third
    ],
)
def test_a_calibration_height_past_any_display_scaling_is_refused_naming_the_screens(calibration_px, screen_px, factor):
    problem = screen_height_problem(calibration_px, screen_px, "[calibration] screen_height_px")
    assert (problem is None) == (factor is None), problem
    if factor is not None:
        assert problem.startswith(
            f"[calibration] screen_height_px = {calibration_px}, but the patient's screen is 1080"
        )
        assert f"({factor:.2g}x {'more' if calibration_px > screen_px else 'less'}," in problem and "\n" not in problem


@pytest.mark.parametrize("fullscreen", ["--fullscreen", "--no-fullscreen"])
def test_a_new_session_whose_calibration_height_is_not_the_screens_is_refused_before_a_database_is_made(
    tmp_path, capsys, fullscreen
):
    """A typo of 108 for 1080 px cut the letters' range to logMAR +0.61 with a note blaming the screen."""
    if window_width_of_display() != 1920:
        pytest.skip("needs the 1920 x 1080 Xvfb screen of the test command")
    protocol = write_protocol(tmp_path / "low.toml", **{"calibration.screen_height_px": "108"})
    db = tmp_path / "sessions.db"
    argv = ["run", "--protocol", str(protocol), "--participant", "P1", "--observer", "simulated", "--db", str(db)]
    code = main([*argv, fullscreen])
    err = capsys.readouterr().err
    assert code == 2 and err.count("\n") == 1 and "Traceback" not in err, err
    assert f"{protocol}: [calibration] screen_height_px = 108, but the patient's screen is 1080 px high" in err
    assert not db.exists()


def window_width_of_display():
    """The width of the first screen of this display (pyglet), or None."""
    try:
        import pyglet

        return pyglet.canvas.get_display().get_screens()[0].width
    except Exception:  # noqa: BLE001 - no display
        return None


def test_a_full_screen_window_of_other_pixels_sizes_its_letters_on_them_and_says_so():
    given = Calibration(screen_width_cm=53.0, screen_width_px=1920, screen_height_px=1080, distance_cm=400.0)
    said = []
    used = framebuffer_calibration(given, (1280, 1024), True, said.append)
    assert (used.screen_width_px, used.screen_height_px, used.screen_width_cm) == (1280, 1024, 53.0)
    assert used.px_per_arcmin == pytest.approx(given.px_per_arcmin * 1280 / 1920)  # the same cm, fewer px
    (line,) = said
    assert "1280 x 1024 px, not the calibration's 1920 x 1080" in line and "the session stores it" in line
    assert f"{used.px_per_arcmin:.3f} px/arcmin" in line
    resumed = []
    framebuffer_calibration(given, (1280, 1024), False, resumed.append)
    assert "this resumed session stored 1920 px" in resumed[0]
    quiet = []
    assert framebuffer_calibration(given, (1920, 1080), True, quiet.append) == given and quiet == []


def test_a_full_screen_session_stores_the_calibration_its_letters_were_sized_with(tmp_path, window):
    """The window (800 x 600 px) stands for a full-screen framebuffer other than the protocol's 1920 px:
    the stored calibration and every letter's pixels agree with the logMAR stored."""
    protocol = write_protocol(
        tmp_path / "full.toml",
        **{
            **FAST,
            "display.fullscreen": "true",
            "protocol.observer": '"simulated"',
            "optimizer.letter_bounds_logmar": "[0.0, 1.0]",  # what 800 px render at its distance
        },
    )
    said = []
    outcome = run_session(
        RunRequest(db_path=tmp_path / "s.db", protocol_path=protocol, participant="P1", seed=2, trials=3),
        log=lambda line: None,
        warn=said.append,
        window=window,
    )
    with SessionStore(tmp_path / "s.db", readonly=True) as store:
        info, trials = store.session(outcome.session_id), store.trials(outcome.session_id)
    stored = Calibration(**info.calibration)
    assert (stored.screen_width_px, stored.screen_height_px) == tuple(window.size)
    assert any("not the calibration's 1920 x" in line for line in said)
    for trial in trials:  # letter height: 5 arcmin at logMAR 0
        expected_px = 5.0 * 10.0**trial.letter_logmar * stored.px_per_arcmin
        assert trial.extra["letter_height_px"] == pytest.approx(expected_px, rel=1e-4)  # exact angle vs linear


def test_a_console_sharing_a_windowed_patients_screen_gets_room_beside_it():
    """The clinical protocol's 1920-px window on one 1920-px screen (--no-fullscreen) left the 900-px
    console off the screen: the patient window is narrowed to leave room, the stored protocol kept."""
    protocol = clinical_protocol(patient=0, console=1)
    assert protocol.display.window_size_px[0] == 1920 and protocol.screens.console_size_px[0] == 900
    placed = side_by_side(protocol, False, [1920])
    assert placed.display.window_size_px == (1920 - 900, protocol.display.window_size_px[1])
    assert (placed.screens.patient, placed.screens.console) == (0, 0)
    assert protocol.display.window_size_px[0] == 1920  # the protocol itself unchanged
    assert side_by_side(protocol, False, [1920, 1920]).display == protocol.display  # a screen each
    assert side_by_side(protocol, True, [1920]).display == protocol.display  # full screen: refused elsewhere
    roomy = dataclasses.replace(protocol, display=dataclasses.replace(protocol.display, window_size_px=(800, 600)))
    assert side_by_side(roomy, False, [1920]).display.window_size_px == (800, 600)  # room already


def test_a_resumed_patient_session_is_refused_over_the_chart_and_told_how_to_go_on_windowed():
    protocol = clinical_protocol(patient=0, console=1)
    if screen_count() != 1:
        pytest.skip("needs a display of one screen (Xvfb)")
    with pytest.raises(ProtocolError, match="--no-fullscreen"):
        refuse_console_on_the_chart(protocol, True, "keyboard")
    refuse_console_on_the_chart(protocol, True, "simulated")  # nobody to see it: carried on
    refuse_console_on_the_chart(protocol, False, "keyboard")  # --no-fullscreen: beside the window


def test_the_window_checked_before_a_session_starts_is_the_narrowed_one_it_opens():
    """A duel protocol's line of letters on one screen, console beside it: the letter sizes were
    checked on the protocol's 1920-px window but drawn in the 1020 px left beside the console, so
    the session was refused only after it was stored — a session of no trial at every attempt."""
    protocol = clinical_protocol(patient=0, console=1)
    calibration = calibration_from_protocol(protocol)
    expected = expected_window_size_px(protocol, calibration, False, [1920])
    assert expected == side_by_side(protocol, False, [1920]).display.window_size_px == (1020, expected[1])
    assert expected_window_size_px(protocol, calibration, False, [1920, 1920])[0] == 1920  # a screen each
    assert expected_window_size_px(protocol, calibration, False)[0] == 1920  # a window the caller gives


def _within(window: tuple[int, int, int, int], screen_px: tuple[int, int]) -> bool:
    """Whether every pixel of ``window`` (left, top, width, height) is on the screen: its overlap
    with the screen has the window's whole area (an independent reading of "on the screen")."""
    left, top, width, height = window
    overlap_w = max(0, min(left + width, screen_px[0]) - max(left, 0))
    overlap_h = max(0, min(top + height, screen_px[1]) - max(top, 0))
    return overlap_w * overlap_h == width * height


def test_a_patient_window_placed_beyond_its_screen_is_named_with_the_room_it_has():
    """``[screens] patient_pos_px = [32768, 32768]`` was taken on a 1920 x 1080 screen: the patient's
    window, letters and all, opened where nobody could see it."""
    from lensopt.experiment.window_layout import off_screen_problem

    windowed = clinical_protocol(patient=0, console=1, patient_pos_px=(32768, 32768))
    windowed = dataclasses.replace(windowed, display=dataclasses.replace(windowed.display, window_size_px=(800, 600)))
    problem = off_screen_problem(windowed, False, [(1920, 1080), (1920, 1080)])
    assert problem == (
        "the patient window (800 × 600 px at [32768, 32768]) runs off screen 0 (1920 × 1080 px), where nobody "
        "would see all of it; set screens.patient_pos_px within [1120, 480]"
    )
    assert off_screen_problem(windowed, True, [(1920, 1080), (1920, 1080)]) is None  # full screen: no position
    assert off_screen_problem(windowed, False, None) is None  # a display that cannot say
    rng = np.random.default_rng(100_000)
    for left, top in rng.integers(0, 2000, size=(300, 2)).tolist():
        placed = dataclasses.replace(
            windowed, screens=dataclasses.replace(windowed.screens, patient_pos_px=(left, top))
        )
        said = off_screen_problem(placed, False, [(1920, 1080), (1920, 1080)])
        assert (said is None) == _within((int(left), int(top), 800, 600), (1920, 1080)), (left, top, said)


def test_a_console_placed_or_pushed_beyond_its_screen_is_named():
    from lensopt.experiment.window_layout import off_screen_problem

    placed = clinical_protocol(patient=0, console=1, console_pos_px=(1500, 600))  # 900 x 640 on a 1280 x 1024
    assert off_screen_problem(placed, True, [(1920, 1080), (1280, 1024)]) == (
        "the console (900 × 640 px at [1500, 600]) runs off screen 1 (1280 × 1024 px), where nobody would see "
        "all of it; set screens.console_pos_px within [380, 384]"
    )
    assert off_screen_problem(clinical_protocol(patient=0, console=1), True, [(1920, 1080), (1280, 1024)]) is None
    # on one screen, a patient window far right leaves no room for the console beside it
    pushed = side_by_side(clinical_protocol(patient=0, console=0, patient_pos_px=(1500, 0)), False, [1920])
    problem = off_screen_problem(pushed, False, [(1920, 1080)])
    assert problem is not None and problem.startswith("the patient window")  # 1920 px wide at 1500: itself off
    narrow = dataclasses.replace(pushed, display=dataclasses.replace(pushed.display, window_size_px=(400, 300)))
    problem = off_screen_problem(narrow, False, [(1920, 1080)])
    assert problem is not None and problem.startswith("the console (900 × 640 px at [1900, 0]) runs off screen 0")
    assert problem.endswith("; move screens.patient_pos_px left or give screens.console_pos_px")


def test_a_window_larger_than_its_screen_names_its_size_not_its_place():
    """A console of 2400 x 700 on a 1920 x 1080 screen was said to be 1920 x 700 px, running off the
    screen, with advice to move it: no place shows it whole, its size is what to change."""
    from lensopt.experiment.window_layout import off_screen_problem

    wide = clinical_protocol(patient=0, console=1, console_pos_px=(0, 0), console_size_px=(2400, 700))
    assert off_screen_problem(wide, True, [(1920, 1080), (1920, 1080)]) == (
        "the console (2400 × 700 px) is larger than screen 1 (1920 × 1080 px), where nobody would see all of it; "
        "set screens.console_size_px within [1920, 1080]"
    )
    tall = clinical_protocol(patient=0, console=1, patient_pos_px=(0, 0))
    tall = dataclasses.replace(tall, display=dataclasses.replace(tall.display, window_size_px=(800, 1200)))
    problem = off_screen_problem(tall, False, [(1920, 1080), (1920, 1080)])
    assert problem is not None and problem.startswith("the patient window (800 × 1200 px) is larger than screen 0")
    assert problem.endswith("; set display.window_size_px within [1920, 1080]")
    fits = clinical_protocol(patient=0, console=1, console_pos_px=(0, 0), console_size_px=(1920, 1080))
    assert off_screen_problem(fits, True, [(1920, 1080), (1920, 1080)]) is None  # the whole screen: shown whole


def test_a_new_session_with_a_window_off_its_screen_is_refused_before_a_database_is_made(tmp_path, capsys):
    if screen_count() is None:
        pytest.skip("needs a display (Xvfb)")
    protocol = write_protocol(tmp_path / "far.toml", **FAST, **{"screens.patient_pos_px": "[32768, 32768]"})
    db = tmp_path / "s.db"
    code = main(["run", "--protocol", str(protocol), "--participant", "p", "--observer", "simulated", "--db", str(db)])
    err = capsys.readouterr().err.strip().splitlines()
    assert code == 2 and len(err) == 1, err
    assert err[0].startswith(f"lensopt run: error: {protocol}: the patient window (400 × 300 px at [32768, 32768])")
    assert not db.exists()
