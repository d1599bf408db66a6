"""``lensopt calibrate``: measure the screen with a ruler and store it as a PsychoPy monitor.

    lensopt calibrate --name lane-3 [--screen 0] [--bar-px 800] [--bar-cm CM --distance-cm CM]

A bar of ``--bar-px`` pixels is shown full screen; the user types its measured length and the
viewing distance (or gives both with ``--bar-cm`` and ``--distance-cm``), and the screen is stored
as the Monitor Center monitor NAME, which a protocol names with ``[calibration] monitor = "NAME"``.
PsychoPy is imported inside the handler, so ``lensopt --help`` stays fast.
"""

from __future__ import annotations

import sys

from lensopt.cli.arguments import non_negative_int, positive_float, positive_int


def register(subparsers) -> None:
    """Add the ``calibrate`` subcommand."""
    parser = subparsers.add_parser(
        "calibrate",
        help="measure a bar on the screen with a ruler; store the screen as a PsychoPy monitor",
        description="Show a bar of known pixels full screen; type its length measured with a ruler (cm) and "
        "the viewing distance (cm). The screen is stored as the PsychoPy Monitor Center monitor NAME "
        '(width, distance, pixels), which a protocol uses with [calibration] monitor = "NAME".',
    )
    parser.add_argument("--name", metavar="NAME", default="lensopt", help="monitor name (default: lensopt)")
    parser.add_argument("--screen", type=non_negative_int, default=0, metavar="N", help="screen to measure (default 0)")
    parser.add_argument(
        "--bar-px", type=positive_int, default=800, metavar="PX", help="length of the bar in pixels (default 800)"
    )
    parser.add_argument("--bar-cm", type=positive_float, metavar="CM", help="the bar's measured length (else asked)")
    parser.add_argument(
        "--distance-cm",
        type=positive_float,
        metavar="CM",
        help="eye-to-screen distance, or through the mirror (else asked)",
    )
    parser.set_defaults(handler=calibrate_command)


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


def calibrate_command(args) -> int:
    from lensopt.experiment.calibration import Calibration
    from lensopt.experiment.ruler import save_monitor, screen_width_cm, show_bar

    win = show_bar(args.screen, args.bar_px)
    try:
        width_px, height_px = (int(v) for v in win.size)
        bar_cm = args.bar_cm if args.bar_cm is not None else _ask_cm(f"length of the {args.bar_px} px bar (cm): ")
        distance_cm = args.distance_cm if args.distance_cm is not None else _ask_cm("viewing distance (cm): ")
    finally:
        win.close()
    calibration = Calibration(
        screen_width_cm=screen_width_cm(args.bar_px, bar_cm, width_px),
        screen_width_px=width_px,
        screen_height_px=height_px,
        distance_cm=distance_cm,
    )
    path = save_monitor(args.name, calibration)
    print(f"monitor {args.name!r}: {calibration.describe()}; saved to {path}")
    print(f'protocols use it with [calibration] monitor = "{args.name}"')
    return 0
