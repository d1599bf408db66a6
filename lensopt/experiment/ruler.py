"""The ruler calibration FrACT users know: a bar of known pixels on the screen, measured in cm.

``lensopt calibrate`` shows the bar (:func:`show_bar`), the user types its length and the viewing
distance, and :func:`save_monitor` stores the screen as a PsychoPy Monitor Center monitor (width in
cm, distance in cm, size in px) that a protocol names with ``[calibration] monitor = "NAME"``.
PsychoPy keeps monitors in ``$HOME/.psychopy3/monitors/NAME.json`` (``%APPDATA%`` on Windows).
"""

from __future__ import annotations

import os
import time

from lensopt.errors import CalibrationError
from lensopt.experiment.calibration import Calibration, open_monitor
from lensopt.experiment.windows import check_display, screen_count

DEFAULT_BAR_PX = 800
"""Length of the bar to measure (px): long enough for a ruler to read to 1 %."""

BAR_HEIGHT_PX = 40
"""Thickness of the bar (px)."""


def screen_width_cm(bar_px: int, bar_cm: float, screen_width_px: int) -> float:
    """The screen's width (cm) from a bar of ``bar_px`` pixels measured as ``bar_cm`` (square pixels)."""
    if not bar_cm > 0 or not bar_px > 0:
        raise ValueError(f"the bar's length must be positive, got {bar_cm!r} cm for {bar_px!r} px")
    return float(bar_cm) * screen_width_px / bar_px


def show_bar(screen: int, bar_px: int):
    """Open a full-screen window on ``screen`` showing a black bar of ``bar_px`` pixels; returns
    the window (the caller closes it). Its ``size`` is the screen's framebuffer in px."""
    check_display("calibrate")
    n_screens = screen_count()
    if n_screens is not None and screen >= n_screens:  # PsychoPy would measure screen 0 without a word
        raise CalibrationError(
            f"--screen {screen}: this display has {n_screens} screen{'s' if n_screens > 1 else ''} "
            f"(numbered from 0); give --screen {n_screens - 1} or lower"
        )
    from psychopy import logging, visual

    logging.console.setLevel(logging.ERROR)
    try:
        win = visual.Window(
            fullscr=True,
            screen=screen,
            units="pix",
            color="white",
            colorSpace="named",
            checkTiming=False,
            winType="pyglet",
        )
    except Exception as exc:  # noqa: BLE001 - pyglet raises several unrelated types (no such screen...)
        raise CalibrationError(
            f"cannot open a window on screen {screen} ({type(exc).__name__}: {str(exc).splitlines()[0] if str(exc) else ''})"
        ) from None
    if bar_px > win.size[0]:
        width = int(win.size[0])
        win.close()
        raise CalibrationError(f"--bar-px {bar_px} is wider than screen {screen} ({width} px); give a shorter bar")
    visual.Rect(win, width=bar_px, height=BAR_HEIGHT_PX, fillColor="black", lineColor=None, colorSpace="named").draw()
    visual.TextStim(
        win,
        text=f"Measure this bar with a ruler ({bar_px} px), then type its length in cm in the terminal.",
        pos=(0, -3 * BAR_HEIGHT_PX),
        height=24,
        color="black",
        colorSpace="named",
        wrapWidth=0.9 * win.size[0],
    ).draw()
    win.flip()
    return win


def check_monitor_name(name: str) -> None:
    """Refuse, in one line, a monitor name that is not a plain file name (before any bar is shown)."""
    if not name.strip() or os.sep in name or name.startswith("."):
        raise CalibrationError(f"a monitor name must be a plain file name, got {name!r}")


def save_monitor(name: str, calibration: Calibration) -> str:
    """Store ``calibration`` as the PsychoPy monitor ``name`` (a monitor of that name gets a new
    calibration, dated now, that PsychoPy uses from then on); returns the file PsychoPy wrote."""
    from psychopy import monitors

    check_monitor_name(name)
    existed = name in monitors.getAllMonitors()
    monitor = open_monitor(name, autoLog=False)
    if existed:  # a new calibration, dated now (PsychoPy picks the latest by name); the earlier ones are kept
        monitor.newCalib(calibName=time.strftime("%Y_%m_%d %H:%M:%S"), verbose=False)
    monitor.setWidth(calibration.screen_width_cm)
    monitor.setDistance(calibration.distance_cm)
    monitor.setSizePix([calibration.screen_width_px, calibration.screen_height_px])
    monitor.saveMon()
    return os.path.join(monitors.calibTools.monitorFolder, f"{name}.json")
