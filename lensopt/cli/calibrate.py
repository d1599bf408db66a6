"""``lensopt calibrate``: measure the screen with a ruler and store it as a PsychoPy monitor.

    lensopt calibrate --name lane-3 [--screen 0] [--bar-px 800] [--bar-cm CM --distance-cm CM]

A bar of ``--bar-px`` pixels is shown full screen; the user types its measured length and the
viewing distance (or gives both with ``--bar-cm`` and ``--distance-cm``), and the screen is stored
as the Monitor Center monitor NAME, which a protocol names with ``[calibration] monitor = "NAME"``.
The handler, which imports PsychoPy: :mod:`lensopt.cli.handlers.calibrate`.
"""

from __future__ import annotations

from lensopt.cli.arguments import Handler, positive_float, positive_int, screen_number


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
    parser.add_argument("--screen", type=screen_number, default=0, metavar="N", help="screen to measure (default 0)")
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
    parser.set_defaults(handler=Handler("lensopt.cli.handlers.calibrate:calibrate_command"))
