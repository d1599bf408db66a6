"""The windows of a session: the patient's PsychoPy window, the clinician's console, the dashboard,
and the calibration the patient's window sizes its letters with (the protocol's, or a full-screen
framebuffer's pixels).

Everything that needs a display is here, with the one-line refusal of a machine that has none
(:func:`check_display`, before anything is stored).
"""

from __future__ import annotations

import dataclasses
import errno
import importlib.util
import os
import subprocess
import sys
from pathlib import Path

from lensopt.errors import CalibrationError, LensoptError, ProtocolError, missing_extra
from lensopt.experiment.calibration import Calibration, full_screen_calibration, letter_bounds_within
from lensopt.experiment.console import open_console_window, wants_console
from lensopt.experiment.loop_screens import MIRROR_VIEW_SCALE
from lensopt.experiment.modes import mode_for
from lensopt.experiment.protocol import Protocol
from lensopt.experiment.run_request import RunRequest
from lensopt.experiment.window_layout import DashboardPlace, Rect, dashboard_place, off_screen_problem, patient_pos_px


def _no_display_error(detail: str, command: str) -> LensoptError:
    """The one line for a machine where no PsychoPy window can open (no X display, a dead one), for
    ``lensopt command``: a session may run under Xvfb; a calibration measures a real screen."""
    if command == "calibrate":
        fix = "run lensopt calibrate on the desktop of the screen to measure (a virtual screen has no size to measure)"
    else:
        fix = f"run the command on the clinic's desktop, or without a screen under xvfb-run -a (e.g. xvfb-run -a lensopt {command} ...)"
    return LensoptError(f"no display to open the PsychoPy window on ({detail}); {fix}")


def check_display(command: str = "run") -> None:
    """Refuse, in one line, a machine where no window can open, before anything is stored; the fix
    named for ``lensopt command`` (:func:`_no_display_error`).

    Without a display pyglet fails as PsychoPy's ``visual`` is imported (it opens a hidden window
    then), so importing it is the probe; a display that exists but refuses connections fails there too.
    """
    if importlib.util.find_spec("psychopy") is None:  # said first: no display would help
        raise LensoptError(str(missing_extra(ModuleNotFoundError(name="psychopy"))))
    if sys.platform.startswith("linux") and not (os.environ.get("DISPLAY") or os.environ.get("WAYLAND_DISPLAY")):
        raise _no_display_error("DISPLAY is not set", command)
    try:
        from psychopy import visual  # noqa: F401 - the import opens pyglet's shadow window: the probe
    except ModuleNotFoundError as exc:  # PsychoPy itself missing: no display would help
        error = missing_extra(exc)
        if error is None:
            raise
        raise error from None
    except UnicodeError:  # PsychoPy reads its own files in the locale's encoding: not the display's fault
        raise LensoptError(
            "PsychoPy cannot start in this locale's encoding "
            f"({sys.getfilesystemencoding()}): set a UTF-8 locale (LANG=C.UTF-8) or PYTHONUTF8=1"
        ) from None
    except OSError as exc:
        if exc.errno in (errno.EROFS, errno.EACCES, errno.EPERM, errno.ENOSPC):  # its folder in the home folder
            where = f" {exc.filename}" if exc.filename else ""
            raise LensoptError(
                f"PsychoPy cannot write its settings folder{where} ({exc.strerror}): make the home folder "
                "writable, or set HOME to a folder that is"
            ) from None
        raise _no_display_error(
            f"{type(exc).__name__}: {str(exc).splitlines()[0] if str(exc) else ''}", command
        ) from None
    except Exception as exc:  # noqa: BLE001 - pyglet raises several unrelated types when there is no display
        detail = f"{type(exc).__name__}: {str(exc).splitlines()[0] if str(exc) else ''}"
        raise _no_display_error(detail, command) from None


def on_this_display(protocol: Protocol, n_screens: int | None) -> Protocol:
    """``protocol`` with its ``[screens]`` as this display of ``n_screens`` screens places them: a
    screen it lacks is its first (so a console meant for a second screen opens beside a windowed
    patient display, as one that shares its screen). The stored protocol keeps the screens named."""
    screens = protocol.screens

    def placed(screen: int) -> int:
        return screen if n_screens is None or screen < n_screens else 0

    if (placed(screens.patient), placed(screens.console)) == (screens.patient, screens.console):
        return protocol
    screens = dataclasses.replace(screens, patient=placed(screens.patient), console=placed(screens.console))
    return dataclasses.replace(protocol, screens=screens)


def open_window(protocol: Protocol, fullscreen: bool):
    check_display()
    from psychopy import logging, visual

    logging.console.setLevel(logging.ERROR)
    monitor = protocol.calibration.monitor or None
    protocol = side_by_side(protocol, fullscreen, screen_widths_px())
    screens = protocol.screens
    pos = patient_pos_px(protocol, fullscreen)
    try:
        win = visual.Window(
            size=list(protocol.display.window_size_px),
            pos=None if pos is None else list(pos),
            screen=screens.patient,
            fullscr=fullscreen,
            units="pix",
            color="white",
            colorSpace="named",
            monitor=monitor,
            allowGUI=not fullscreen,
            checkTiming=False,
            winType="pyglet",
            viewScale=list(MIRROR_VIEW_SCALE) if protocol.display.mirror else None,
        )
    except Exception as exc:  # noqa: BLE001 - pyglet raises several unrelated types when there is no display
        raise LensoptError(
            f"cannot open a PsychoPy window ({type(exc).__name__}: {str(exc).splitlines()[0] if str(exc) else ''}); "
            "check DISPLAY or run under xvfb-run"
        ) from None
    if protocol.display.mirror:
        win.flip()  # legacy GL applies the view scale at a flip: without one the first frame is not mirrored
    return win


def calibration_from_protocol(protocol: Protocol) -> Calibration:
    """The protocol's calibration: its numbers, or a PsychoPy Monitor Center monitor."""
    c = protocol.calibration
    if c.monitor:
        distance = {"distance_cm": c.distance_cm} if c.distance_cm else {}  # 0: the monitor's own
        try:
            return Calibration.from_monitor(c.monitor, min_stroke_px=c.min_stroke_px, **distance)
        except (CalibrationError, ValueError) as exc:  # named by the file and key that asked for it
            raise CalibrationError(f"{protocol.source}: calibration.monitor = {c.monitor!r}: {exc}") from None
    return Calibration(
        screen_width_cm=c.screen_width_cm,
        screen_width_px=c.screen_width_px,
        screen_height_px=c.screen_height_px,
        distance_cm=c.distance_cm,
        min_stroke_px=c.min_stroke_px,
    )


def expected_window_size_px(
    protocol: Protocol, calibration: Calibration, fullscreen: bool, widths_px: list[int] | None = None
) -> tuple[int, int]:
    """The window's size in pixels before it opens: the screen, or the protocol's window within it —
    narrowed, as :func:`open_window` narrows it, to leave the console room beside it on a screen of
    ``widths_px`` (:func:`screen_widths_px`; None: not narrowed, a window given by the caller)."""
    if fullscreen:
        return calibration.screen_width_px, calibration.screen_height_px
    if widths_px is not None:
        protocol = side_by_side(protocol, fullscreen, widths_px)
    width_px, height_px = protocol.display.window_size_px
    return min(width_px, calibration.screen_width_px), min(height_px, calibration.screen_height_px)


def open_console(protocol: Protocol, log, fullscreen: bool | None = None):
    """The clinician's console window (:mod:`lensopt.experiment.console`), placed by ``[screens]``
    on the screens this display has (:func:`on_this_display`) beside a patient window that is
    ``fullscreen`` or not (default: the protocol's ``[display] fullscreen``). A console over a
    full-screen patient window is refused before (:func:`console_over_the_chart`) but for a simulated
    patient, where it is said here."""
    screens = protocol.screens
    n_screens = screen_count()
    if fullscreen is not None:
        protocol = dataclasses.replace(protocol, display=dataclasses.replace(protocol.display, fullscreen=fullscreen))
    if n_screens is not None and max(screens.console, screens.patient) >= n_screens:
        log(
            f"[screens] names screen {max(screens.console, screens.patient)} but this display has only "
            f"{n_screens} (numbered from 0): the window goes to the first screen"
        )
    problem = console_over_the_chart(protocol, protocol.display.fullscreen, n_screens)
    if problem:  # a simulated patient (a person's session was refused)
        log(problem.split(";")[0])
    try:
        return open_console_window(side_by_side(protocol, protocol.display.fullscreen, screen_widths_px()))
    except Exception as exc:  # noqa: BLE001 - pyglet raises several unrelated types (no such screen...)
        raise LensoptError(
            f"cannot open the clinician's console on screen {screens.console} ({type(exc).__name__}: "
            f"{str(exc).splitlines()[0] if str(exc) else ''}); check [screens] console in the protocol"
        ) from None


def console_over_the_chart(protocol: Protocol, fullscreen: bool, n_screens: int | None) -> str | None:
    """Why the clinician's console of ``protocol`` would be drawn on the patient's full-screen
    window (``n_screens``: the display's screens; a screen it lacks is its first), or None. The
    console shows the lens and the name of the letter shown: a patient must not see it."""
    if not fullscreen or not wants_console(protocol):
        return None
    screens, placed = protocol.screens, on_this_display(protocol, n_screens).screens
    if placed.console != placed.patient:
        return None
    where = (
        f"[screens] console = {screens.console}, but this display has only {n_screens} screen"
        f"{'' if n_screens == 1 else 's'}"
        if placed.console != screens.console
        else f"[screens] puts the console on screen {screens.console}, the patient's"
    )
    return (
        f"{where}: the clinician's console (the lens, the letter's name) would be drawn on the patient's "
        "full-screen chart; connect the second screen, or run with --no-fullscreen (a window, the console "
        "beside it)"
    )


#: A calibration's screen width beyond this factor of the real screen's (either way) is no display
#: scaling (HiDPI: 1.25 to 2) but a wrong number: refused rather than warned of.
MAX_SCREEN_WIDTH_FACTOR = 3.0


def screen_width_problem(calibration_width_px: int, screen_width_px: int | None) -> tuple[str, bool] | None:
    """What a calibration's ``screen_width_px`` that is not the width of the screen the patient's
    window opened on (``screen_width_px``, None: unknown) does to the letters, and whether it is past
    any display scaling (:data:`MAX_SCREEN_WIDTH_FACTOR`: refuse); None when they agree. A windowed
    chart's letters are sized from the calibration's pixels per cm, so every letter is off by their
    ratio (a full-screen chart takes its framebuffer's pixels instead)."""
    if screen_width_px is None or screen_width_px <= 0 or abs(calibration_width_px - screen_width_px) <= 1:
        return None
    ratio = calibration_width_px / screen_width_px
    text = (
        f"[calibration] screen_width_px = {calibration_width_px}, but the patient's screen is {screen_width_px} px "
        f"wide: every letter would be drawn {max(ratio, 1 / ratio):.2g}x too {'large' if ratio > 1 else 'small'}; "
        "set screen_width_px to the screen's width (or use the monitor lensopt calibrate stores)"
    )
    return text, _past_scaling(ratio)


def _past_scaling(ratio: float) -> bool:
    """Whether a calibration's pixels over the screen's, ``ratio``, is past any display scaling."""
    return not 1 / MAX_SCREEN_WIDTH_FACTOR <= ratio <= MAX_SCREEN_WIDTH_FACTOR


def screen_height_problem(calibration_height_px: int, screen_height_px: int | None, field: str) -> str | None:
    """The one-line problem of a calibration's height in pixels (``field`` names where it is set)
    past any display scaling (:data:`MAX_SCREEN_WIDTH_FACTOR`) of the patient's screen's
    ``screen_height_px`` (None: unknown), else None. A typo (108 for 1080) cut every window, and so
    the largest letter, to 108 px, with a note blaming the screen's size."""
    if screen_height_px is None or screen_height_px <= 0:
        return None
    ratio = calibration_height_px / screen_height_px
    if not _past_scaling(ratio):
        return None
    return (
        f"{field} = {calibration_height_px}, but the patient's screen is {screen_height_px} px high "
        f"({max(ratio, 1 / ratio):.2g}x {'more' if ratio > 1 else 'less'}, no display scaling): the letters' "
        "range would be cut to the wrong height; set it to the screen's height in pixels"
    )


def window_screen_width_px(win) -> int | None:
    """The width (px) of the screen a PsychoPy (pyglet) window opened on, in the window's framebuffer
    pixels (a Retina screen's are twice its points, which pyglet gives: the window's own framebuffer
    to points ratio scales them), or None if it cannot say."""
    try:
        handle = win.winHandle
        scale = float(win.size[0]) / float(handle.width) if handle.width else 1.0
        return round(handle.screen.width * scale)
    except Exception:  # noqa: BLE001 - another backend, or no handle: the check is skipped
        return None


def screen_count() -> int | None:
    """How many screens the display has (pyglet's count), or None if it cannot say."""
    widths = screen_widths_px()
    return None if widths is None else len(widths)


def screen_widths_px() -> list[int] | None:
    """The width of each screen of the display (pyglet's, in its units), or None if it cannot say."""
    rects = screen_rects_px()
    return None if rects is None else [rect.width_px for rect in rects]


def screen_rects_px() -> list[Rect] | None:
    """Each screen of the display on the desktop (pyglet's, in its units), or None if it cannot say."""
    try:
        import pyglet

        screens = pyglet.canvas.get_display().get_screens()
        return [Rect(int(s.x), int(s.y), int(s.width), int(s.height)) for s in screens]
    except Exception:  # noqa: BLE001 - only a hint for the layout and the log
        return None


def side_by_side(protocol: Protocol, fullscreen: bool, widths_px: list[int] | None) -> Protocol:
    """``protocol`` placed on this display (:func:`on_this_display`) with, when the console shares
    a windowed patient's screen, a patient window narrow enough for the console beside it (a
    1920-px window on a 1920-px screen left the console off the screen); the stored protocol keeps
    its own size."""
    placed = on_this_display(protocol, None if widths_px is None else len(widths_px))
    screens = placed.screens
    if fullscreen or not wants_console(placed) or screens.console != screens.patient or widths_px is None:
        return placed
    if screens.console_pos_px is not None:  # placed by the protocol: its own choice
        return placed
    left = (screens.patient_pos_px or (0, 0))[0]
    room = widths_px[screens.patient] - left - screens.console_size_px[0]
    width, height = placed.display.window_size_px
    if room <= 0 or width <= room:
        return placed
    return dataclasses.replace(placed, display=dataclasses.replace(placed.display, window_size_px=(room, height)))


def dashboard_place_here(protocol: Protocol, fullscreen: bool) -> DashboardPlace | None:
    """Where ``lensopt run --dashboard`` opens the dashboard on this display: beside the console
    (:func:`lensopt.experiment.window_layout.dashboard_place`), the windows placed as they open."""
    rects = screen_rects_px()
    if rects is None:
        return None
    placed = side_by_side(protocol, fullscreen, [rect.width_px for rect in rects])
    place = dashboard_place(placed, fullscreen, [(rect.width_px, rect.height_px) for rect in rects])
    if place is None:
        return None
    screen = rects[place.screen]
    return dataclasses.replace(place, origin_px=(screen.left_px, screen.top_px))


#: What the dashboard's own process imports (lensopt[dashboard]), beside the experiment's.
DASHBOARD_MODULES = ("PyQt5", "matplotlib")


def check_dashboard() -> None:
    """``lensopt run --dashboard``: refuse, in one line and before anything is stored, when the
    dashboard's process could not open its window (lensopt[dashboard] not installed); it said so
    after the first trial, and the session went on without it."""
    missing = [module for module in DASHBOARD_MODULES if importlib.util.find_spec(module) is None]
    if missing:
        raise LensoptError(
            f"--dashboard needs lensopt's 'dashboard' part ({' and '.join(missing)} not installed): "
            "pip install 'lensopt[dashboard]', or run the session without --dashboard"
        )


def dashboard_command(session_id: int, db_path: Path, place: DashboardPlace | None) -> list[str]:
    """The command of the session's dashboard: at ``place`` (:func:`dashboard_place_here`), or, with
    no place free beside the session's windows (None), minimized — it would cover the console or the
    chart; never taking the keyboard from the console or the patient's window."""
    at = ["--minimized"] if place is None else ["--geometry", place.desktop_geometry]
    return [sys.executable, "-m", "lensopt", "dashboard", str(session_id), "--db", str(db_path), *at, "--no-activate"]


def launch_dashboard(session_id: int, db_path: Path, log, place: DashboardPlace | None) -> None:
    """The dashboard of the session in a process of its own (:func:`dashboard_command`), its output
    not the session's: Qt's messages would fall between the trial lines, and a session's log piped
    on (``lensopt run ... | tee visit.log``) would not end while the dashboard held the pipe open
    (``lensopt dashboard N`` from a terminal shows them)."""
    if place is None:
        log(
            "the dashboard opens minimized: no place on the screens clear of the console and the chart; "
            "open it from the taskbar"
        )
    try:
        quiet = subprocess.DEVNULL
        subprocess.Popen(dashboard_command(session_id, db_path, place), stdin=quiet, stdout=quiet, stderr=quiet)
    except OSError as exc:
        log(f"dashboard did not start ({exc}); the session carries on")


def refuse_console_on_the_chart(protocol: Protocol, fullscreen: bool, observer: str) -> None:
    """A one-line ProtocolError when the clinician's console would be drawn on the patient's
    full-screen chart (:func:`console_over_the_chart`); a simulated patient sees nothing (the console
    then only warns, :func:`open_console`)."""
    problem = console_over_the_chart(protocol, fullscreen, screen_count())
    if problem and observer != "simulated":
        raise ProtocolError(f"{protocol.source}: {problem}")


def framebuffer_calibration(calibration: Calibration, size_px, new: bool, warn) -> Calibration:
    """The calibration a session's full-screen window sizes its letters with
    (:func:`lensopt.experiment.calibration.full_screen_calibration`), said when the framebuffer's
    pixels are not the calibration's — a new session stores the one used, so that its letters'
    pixels and logMAR agree in the data."""
    stored = "; the session stores it" if new else f"; this resumed session stored {calibration.screen_width_px} px"
    return full_screen_calibration(calibration, size_px, warn, "[calibration] screen_width_cm", stored)


def check_new_screen(protocol: Protocol, request: RunRequest, window=None) -> None:
    """A new session's screen, refused in one line naming the protocol file and key before a database
    file is made: a window ``[screens]`` places beyond its screen (:func:`off_screen_problem`), a
    calibration's height that is not the screen's (:func:`screen_height_problem`), its
    calibration (an unknown Monitor Center monitor) and the letter sizes it draws of
    those the protocol asks for (too small for the screen's pixels or ``min_stroke_px``, too large for
    the window). ``lensopt.experiment.session`` works them out again for the session, as it does for a resume."""
    calibration = calibration_from_protocol(protocol)
    fullscreen = protocol.display.fullscreen if request.fullscreen is None else request.fullscreen
    rects = screen_rects_px() if window is None else None  # the display, asked once
    widths_px = None if rects is None else [rect.width_px for rect in rects]
    if rects:
        sizes_px = [(rect.width_px, rect.height_px) for rect in rects]
        problem = off_screen_problem(side_by_side(protocol, fullscreen, widths_px), fullscreen, sizes_px)
        if problem:
            raise ProtocolError(f"{protocol.source}: {problem}")
        field = (
            f"calibration.monitor = {protocol.calibration.monitor!r}'s height"
            if protocol.calibration.monitor
            else "[calibration] screen_height_px"
        )
        screen_px = sizes_px[protocol.screens.patient] if protocol.screens.patient < len(sizes_px) else None
        problem = screen_height_problem(calibration.screen_height_px, screen_px and screen_px[1], field)
        if problem:
            raise CalibrationError(f"{protocol.source}: {problem}")
        mismatch = (
            None if fullscreen or screen_px is None else screen_width_problem(calibration.screen_width_px, screen_px[0])
        )
        if mismatch is not None and mismatch[1]:  # past any scaling; a warning waits for the window (its pixels)
            raise CalibrationError(f"{protocol.source}: {mismatch[0]}")
    window_size_px = expected_window_size_px(protocol, calibration, fullscreen, widths_px)
    renderable = mode_for(protocol).renderable_logmar(protocol, calibration, window_size_px)
    try:
        letter_bounds_within(protocol.optimizer.letter_bounds_logmar, renderable, calibration)
    except CalibrationError as exc:
        raise CalibrationError(f"{protocol.source}: {exc}") from None
