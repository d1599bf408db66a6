"""``lensopt calibrate``'s handler: the monitor's size and the viewing distance (its options:
:mod:`lensopt.cli.calibrate`)."""

from __future__ import annotations

import sys

from lensopt.experiment.calibration import Calibration
from lensopt.experiment.ruler import check_monitor_name, save_monitor, screen_width_cm, show_bar


def _ask_cm(prompt: str) -> float:
    """One length typed at the terminal (cm): a positive number, else one line, exit 2."""
    print(prompt, end="", flush=True)
    text = sys.stdin.readline()
    if not text:
        raise ValueError(f"no answer to {prompt.strip()!r} (stdin closed)")
    try:
        value = float(text.strip().replace(",", "."))
    except ValueError:
        raise ValueError(f"{prompt.strip().rstrip(':')} must be a number of cm, got {text.strip()!r}") from None
    if not 0 < value < 1e6:
        raise ValueError(f"{prompt.strip().rstrip(':')} must be a positive number of cm, got {text.strip()!r}")
    return value


#: The shortest viewing distance a new calibration takes (cm): a reading distance. Closer is a slip
#: (a lane's 4 m typed as 4): letters would be drawn for a patient a hand's width from the screen.
MIN_VIEWING_DISTANCE_CM = 25.0


def _check_distance(distance_cm: float, given_as: str) -> None:
    """Calibration's own check (on a stand-in screen), and no viewing distance closer than reading."""
    Calibration(screen_width_cm=50.0, screen_width_px=1920, screen_height_px=1080, distance_cm=distance_cm)
    if distance_cm < MIN_VIEWING_DISTANCE_CM:
        raise ValueError(
            f"{given_as} {distance_cm:g} cm is closer than reading distance ({MIN_VIEWING_DISTANCE_CM:g} cm); "
            f"the distance is in centimetres: a 4 m lane is 400"
        )


#: The screen widths (cm) a calibration takes (:class:`lensopt.experiment.calibration.Calibration`).
SCREEN_WIDTH_CM = (1.0, 10_000.0)


def _screen_width_cm(args, bar_cm: float, width_px: int) -> float:
    """The screen's width (cm) from the bar measured as ``bar_cm``; a one-line refusal naming the
    bar's length (``--bar-cm``, or the length typed) when it makes a screen no one has."""
    width_cm = screen_width_cm(args.bar_px, bar_cm, width_px)
    low, high = SCREEN_WIDTH_CM
    if not low <= width_cm <= high:
        given_as = "--bar-cm" if args.bar_cm is not None else "the bar's length"
        raise ValueError(
            f"{given_as} {bar_cm:g} cm for the {args.bar_px} px bar makes the screen ({width_px} px) {width_cm:.3g} cm "
            f"wide, outside {low:g}-{high:g} cm; measure the bar again and give its length in cm (e.g. 21.5)"
        )
    return width_cm


def calibrate_command(args) -> int:
    check_monitor_name(args.name)  # before the bar is shown and measured
    if args.distance_cm is not None:  # likewise
        _check_distance(args.distance_cm, "--distance-cm")
    win = show_bar(args.screen, args.bar_px)
    try:
        width_px, height_px = (int(v) for v in win.size)
        bar_cm = args.bar_cm if args.bar_cm is not None else _ask_cm(f"length of the {args.bar_px} px bar (cm): ")
        distance_cm = args.distance_cm if args.distance_cm is not None else _ask_cm("viewing distance (cm): ")
        _check_distance(distance_cm, "the viewing distance")
    finally:
        win.close()
    calibration = Calibration(
        screen_width_cm=_screen_width_cm(args, bar_cm, width_px),
        screen_width_px=width_px,
        screen_height_px=height_px,
        distance_cm=distance_cm,
    )
    path = save_monitor(args.name, calibration)
    print(f"monitor {args.name!r}: {calibration.describe()}; saved to {path}")
    print(f'protocols use it with [calibration] monitor = "{args.name}"')
    return 0
