"""Where ``lensopt run --dashboard`` opens the dashboard: beside the console and the patient's window,
never over them — each place checked against a brute-force search of a pixel mask."""

import dataclasses
import math
import subprocess
import sys

import numpy as np
import pytest

from experiment_helpers import REPO, clinical_protocol
from lensopt.cli import build_parser
from lensopt.cli.arguments import window_geometry
from lensopt.experiment import windows
from lensopt.experiment.console import console_size_and_pos
from lensopt.experiment.protocol import load_protocol
from lensopt.experiment.window_layout import (
    FRAME_PX,
    MIN_DASHBOARD_PX,
    Rect,
    dashboard_place,
    largest_free_rect,
)
from lensopt.experiment.windows import dashboard_command, side_by_side


def longest_run(flags) -> int:
    """The longest run of True in ``flags``."""
    best = run = 0
    for flag in flags:
        run = run + 1 if flag else 0
        best = max(best, run)
    return best


def brute_force_largest_free_area(screen_px, occupied, min_px) -> int:
    """The largest free area of whole cells: a mask of the screen painted with ``occupied`` on cells as
    fine as every edge's greatest common divisor, every band of rows tried, and in it the longest run
    of free columns — independent of the code's edge candidates."""
    edges = [*screen_px, *min_px, *(v for r in occupied for v in (r.left_px, r.top_px, r.right_px, r.bottom_px))]
    cell = math.gcd(*(abs(v) for v in edges))
    cols, rows = screen_px[0] // cell, screen_px[1] // cell
    free = np.ones((rows, cols), dtype=bool)
    for r in occupied:
        free[
            max(r.top_px, 0) // cell : max(r.bottom_px, 0) // cell,
            max(r.left_px, 0) // cell : max(r.right_px, 0) // cell,
        ] = False
    best = 0
    for top in range(rows):
        band = np.ones(cols, dtype=bool)
        for bottom in range(top, rows):
            band &= free[bottom]
            height = bottom - top + 1
            width = longest_run(band)
            if height * cell >= min_px[1] and width * cell >= min_px[0]:
                best = max(best, height * width * cell * cell)
    return best


def framed(rect: Rect) -> Rect:
    return Rect(rect.left_px, rect.top_px, rect.width_px, rect.height_px + FRAME_PX)


def console_rect(protocol, fullscreen) -> Rect:
    display = dataclasses.replace(protocol.display, fullscreen=fullscreen)
    size, pos = console_size_and_pos(protocol.screens, display, protocol.display.window_size_px)
    return Rect(*(pos or (0, 0)), *size)


@pytest.mark.parametrize(
    ("screen_px", "occupied"),
    [
        ((1920, 1080), [Rect(0, 0, 900, 680)]),  # a console at the top left
        ((2560, 1440), [Rect(0, 0, 1020, 1112), Rect(1020, 0, 900, 672)]),  # patient window and console
        ((1600, 900), [Rect(200, 100, 300, 200)]),  # a window near the top left
        ((1280, 720), []),  # nothing to keep clear of
    ],
)
def test_the_largest_free_rectangle_is_free_and_as_large_as_a_brute_force_finds(screen_px, occupied):
    min_px = MIN_DASHBOARD_PX
    free = largest_free_rect(screen_px, occupied, min_px)
    assert free is not None
    assert not any(free.overlaps(r) for r in occupied)
    assert 0 <= free.left_px and free.right_px <= screen_px[0] and 0 <= free.top_px and free.bottom_px <= screen_px[1]
    assert free.width_px >= min_px[0] and free.height_px >= min_px[1]
    assert free.width_px * free.height_px == brute_force_largest_free_area(screen_px, occupied, min_px)


def test_no_free_rectangle_of_the_least_size_is_none():
    assert largest_free_rect((1280, 720), [Rect(0, 0, 800, 400)], (600, 400)) is None
    assert largest_free_rect((1280, 720), [], (1300, 400)) is None  # wider than the screen


def test_on_the_clinics_two_screens_the_dashboard_fills_the_consoles_screen_beside_the_console():
    protocol = clinical_protocol()  # patient full screen on 0, console on 1
    place = dashboard_place(protocol, True, [(1920, 1080), (1920, 1080)])
    assert place is not None and place.screen == 1
    console = framed(console_rect(protocol, True))
    assert not place.rect.overlaps(console)
    assert (place.rect.left_px, place.rect.top_px) == (console.right_px, 0)  # right of it, the full height
    assert place.rect.right_px == 1920 and place.rect.height_px == 1080 - FRAME_PX


def test_on_one_large_screen_the_dashboard_keeps_off_both_the_patients_window_and_the_console():
    sizes = [(2560, 1440)]
    protocol = side_by_side(clinical_protocol(console=0), False, [width for width, _ in sizes])
    place = dashboard_place(protocol, False, sizes)
    assert place is not None and place.screen == 0
    patient = framed(Rect(0, 0, *protocol.display.window_size_px))
    console = framed(console_rect(protocol, False))
    assert not place.rect.overlaps(patient) and not place.rect.overlaps(console)
    assert place.rect.bottom_px + FRAME_PX <= 1440 and place.rect.right_px <= 2560
    area = (place.rect.height_px + FRAME_PX) * place.rect.width_px
    assert area == brute_force_largest_free_area(
        sizes[0], [patient, console], (MIN_DASHBOARD_PX[0], MIN_DASHBOARD_PX[1] + FRAME_PX)
    )


def test_a_screen_with_no_room_beside_the_console_opens_the_dashboard_minimized():
    """A 1920 x 1080 screen shared by a patient window and the console leaves 900 x 408 px below the
    console, short of the place the dashboard needs to stay readable."""
    sizes = [(1920, 1080)]
    protocol = side_by_side(clinical_protocol(console=0), False, [width for width, _ in sizes])
    assert dashboard_place(protocol, False, sizes) is None
    assert dashboard_place(clinical_protocol(), True, [(1920, 1080), (1280, 1024)]) is None  # a small console screen
    assert dashboard_place(clinical_protocol(), True, None) is None  # the screens unknown


def test_a_research_session_puts_the_dashboard_on_a_screen_the_patient_is_not_on_and_never_on_the_chart():
    research = load_protocol(REPO / "protocols" / "research-26afc.toml")
    assert not research.lens.prompt and research.screens.patient == 0
    two = dashboard_place(research, True, [(1920, 1080), (2560, 1440)])
    assert two is not None and two.screen == 1 and two.rect == Rect(0, 0, 2560, 1440 - FRAME_PX)
    assert dashboard_place(research, True, [(1920, 1080)]) is None  # the chart fills the one screen
    beside = dashboard_place(research, False, [(3840, 1080)])  # a 1920-px window, centred on a wide screen
    assert beside is not None and (beside.rect.left_px, beside.rect.width_px) == (0, 960)  # left of it


def test_a_run_opens_the_dashboard_at_its_place_on_the_desktop_without_taking_the_keyboard(tmp_path):
    """The place goes to the dashboard in the desktop's coordinates (the console's screen's top left
    added), not by the screen's number, which Qt and pyglet may count differently."""
    place = dashboard_place(clinical_protocol(), True, [(1920, 1080), (1920, 1080)])
    place = dataclasses.replace(place, origin_px=(1920, 0))  # the console's screen right of the patient's
    command = dashboard_command(7, tmp_path / "s.db", place)
    assert "--screen" not in command and "--no-activate" in command
    geometry = window_geometry(command[command.index("--geometry") + 1])
    assert geometry == (place.rect.width_px, place.rect.height_px, 1920 + place.rect.left_px, place.rect.top_px)
    args = build_parser().parse_args(command[3:])  # after python -m lensopt
    assert (args.screen, args.geometry, args.no_activate, args.minimized) == (None, geometry, True, False)
    left_of_primary = dataclasses.replace(place, origin_px=(-1920, 0))  # a desktop's negative coordinates
    command = dashboard_command(7, tmp_path / "s.db", left_of_primary)
    assert build_parser().parse_args(command[3:]).geometry[2] == -1920 + place.rect.left_px
    no_room = dashboard_command(7, tmp_path / "s.db", None)
    assert "--geometry" not in no_room and "--minimized" in no_room and "--no-activate" in no_room
    assert build_parser().parse_args(no_room[3:]).minimized


@pytest.mark.parametrize("text", ["900x400", "0x400+1+1", "900x400-1+0", "20000x400+0+0", "900x400+0+40000", "wide"])
def test_a_malformed_geometry_is_one_line_exit_2(text):
    result = subprocess.run(
        [sys.executable, "-m", "lensopt", "dashboard", "1", "--geometry", text],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert result.returncode == 2 and result.stderr.count("\n") == 1, result.stderr
    assert "--geometry" in result.stderr
    assert "WIDTHxHEIGHT+LEFT+TOP" in result.stderr or "1 to 16384 px and offsets within" in result.stderr


def test_a_dashboard_with_no_place_is_launched_minimized_and_the_log_says_where_it_is(tmp_path, monkeypatch):
    launched, said = [], []
    monkeypatch.setattr(windows.subprocess, "Popen", lambda command, **_: launched.append(command))
    windows.launch_dashboard(7, tmp_path / "s.db", said.append, None)
    assert launched[-1][-2:] == ["--minimized", "--no-activate"]
    assert len(said) == 1 and "minimized" in said[0] and "taskbar" in said[0]
    windows.launch_dashboard(
        7, tmp_path / "s.db", said.append, dashboard_place(clinical_protocol(), True, [(1920, 1080)] * 2)
    )
    assert "--geometry" in launched[-1] and len(said) == 1  # placed: nothing to say


def test_a_windowed_patient_display_placed_by_psychopy_is_kept_clear_where_psychopy_centres_it():
    """A research session's window without [screens] patient_pos_px is centred by PsychoPy: the
    dashboard sharing its screen keeps off the centre, not off the top left."""
    demo = load_protocol(REPO / "protocols" / "demo-simulated.toml")
    assert not demo.lens.prompt and demo.screens.patient_pos_px is None
    width_px, height_px = demo.display.window_size_px
    place = dashboard_place(demo, False, [(3840, 2160)])
    assert place is not None and place.screen == 0
    centred = Rect((3840 - width_px) // 2, (2160 - height_px) // 2, width_px, height_px + FRAME_PX)
    assert not place.rect.overlaps(centred)
    assert place.rect.width_px * (place.rect.height_px + FRAME_PX) == brute_force_largest_free_area(
        (3840, 2160), [centred], (MIN_DASHBOARD_PX[0], MIN_DASHBOARD_PX[1] + FRAME_PX)
    )


def test_the_dashboards_output_is_not_the_sessions_so_a_piped_log_ends_with_the_session(tmp_path):
    """``lensopt run --dashboard ... | tee visit.log`` hung until the dashboard closed: its process
    inherited the session's stdout and stderr, and Qt's messages fell between the trial lines."""
    # the session's process, launching a "dashboard" that writes and then outlives it
    script = (
        "import sys\n"
        "from lensopt.experiment import windows\n"
        "outliver = [sys.executable, '-c', 'import sys, time; print(\"qt noise\"); "
        'print("qt noise", file=sys.stderr); sys.stdout.flush(); time.sleep(60)\']\n'
        "windows.dashboard_command = lambda *args: outliver\n"
        "windows.launch_dashboard(7, None, print, None)\n"
        "print('session ended')\n"
    )
    session = subprocess.Popen(
        [sys.executable, "-c", script], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=tmp_path
    )
    out, err = session.communicate(timeout=30)  # EOF once the session ends, not after the 60 s dashboard
    assert session.returncode == 0, err
    assert out.splitlines()[-1] == "session ended" and "qt noise" not in out + err
