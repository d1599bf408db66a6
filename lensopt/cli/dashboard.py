"""``lensopt dashboard``: the clinician's live view of a session (PyQt5 + matplotlib).

    lensopt dashboard [SESSION_ID | --latest] [--db PATH] [--screenshot FILE.png]
                      [--report FILE.pdf|FILE.png] [--replay]
                      [--screen N] [--geometry WxH+X+Y] [--no-activate] [--minimized]

The dashboard opens the session database read-only and follows the session as the experiment
writes it (``lensopt run --dashboard`` starts it beside the experiment). ``--report`` writes the
report (a page per eye of a session of both) without opening a window; ``--screenshot`` renders the window after the first
model update to a PNG and exits. The handler: :mod:`lensopt.cli.handlers.dashboard`.
"""

from __future__ import annotations

from lensopt.cli.arguments import DB_HELP, Handler, screen_number, window_geometry


def register(subparsers) -> None:
    parser = subparsers.add_parser(
        "dashboard",
        help="watch a session converge: lens map, psychometric curve (duels, rankings: utility profile), "
        "history, best lens",
        description="Show a session's model live (or replay a finished one) in a Qt window.",
    )
    parser.add_argument(
        "session_id",
        nargs="?",
        type=int,
        metavar="SESSION_ID",
        help="the session to show (default: the latest session, as --latest)",
    )
    parser.add_argument(
        "--latest",
        action="store_true",
        help="show the most recently created session (passing over one left running without a trial)",
    )
    parser.add_argument("--db", metavar="PATH", help=DB_HELP)
    parser.add_argument(
        "--screenshot", metavar="FILE.png", help="render the window to a PNG after the first model update, then exit"
    )
    parser.add_argument(
        "--report",
        metavar="FILE.pdf|FILE.png",
        help="write the report of the session and exit (no window): one page, one per eye of a session of both eyes",
    )
    parser.add_argument(
        "--replay", action="store_true", help="start the trial slider at the first trial instead of following the last"
    )
    parser.add_argument(
        "--screen",
        type=screen_number,
        metavar="N",
        help="the screen to open the window on (0 the first; default: the desktop's choice); lensopt run "
        "--dashboard opens it on the protocol's console screen ([screens] console)",
    )
    parser.add_argument(
        "--geometry",
        type=window_geometry,
        metavar="WxH+X+Y",
        help="the window's size and place, px from the top left of --screen N, or of the desktop without it "
        "(as X11 writes it), kept within its screen; lensopt run --dashboard puts it beside the console",
    )
    parser.add_argument(
        "--no-activate",
        action="store_true",
        help="open without taking the keyboard (lensopt run --dashboard: the console keeps it)",
    )
    parser.add_argument(
        "--minimized",
        action="store_true",
        help="open minimized (lensopt run --dashboard when no place beside the console is free)",
    )
    parser.set_defaults(handler=Handler("lensopt.cli.handlers.dashboard:run_dashboard"))
