"""``lensopt run``: a letter-acuity, duel or ranking session in a PsychoPy window (or resume one).

The handler, which imports PsychoPy: :mod:`lensopt.cli.handlers.run`.
"""

from __future__ import annotations

import argparse
from pathlib import Path

from lensopt.cli.arguments import DB_HELP, Handler, non_negative_int, positive_int, whole_axis
from lensopt.cli.defaults import SHIPPED_PROTOCOLS

#: What ``--eye`` names (``[session] eye``'s values).
EYES = ("OD", "OS", "OU")


def eye_name(text: str) -> str:
    """An eye as typed, in any case (``od`` is OD); anything else as typed, for argparse to refuse."""
    return text.upper() if text.upper() in EYES else text


def register(subparsers) -> None:
    """Add the ``run`` subcommand."""
    parser = subparsers.add_parser(
        "run",
        help="run (or resume) a letter-acuity, duel or ranking session in a PsychoPy window",
        description="Show one letter per trial at the size the optimizer asks for, with the lens it "
        "asks for (or, with a duel protocol, a line of letters to compare through two lenses: 1, 2 or "
        "the same; with a ranking protocol, through three lenses put in order, clearest first), and "
        "store every answer as it is given. Escape pauses (resume or quit safely).",
    )
    parser.add_argument(
        "--protocol",
        metavar="FILE",
        type=Path,
        help=f"protocol TOML file, or the bare name of a shipped protocol ({', '.join(SHIPPED_PROTOCOLS)}); "
        "not needed with --resume",
    )
    parser.add_argument("--participant", metavar="ID", help="participant id (required for a new session)")
    parser.add_argument(
        "--observer", choices=("keyboard", "simulated"), help="who answers (default: the protocol's observer)"
    )
    parser.add_argument("--seed", type=non_negative_int, metavar="N", help="random seed (default: drawn and stored)")
    parser.add_argument("--trials", type=positive_int, metavar="N", help="number of trials (default: the protocol's)")
    parser.add_argument(
        "--db",
        metavar="PATH",
        type=Path,
        help=DB_HELP,
    )
    parser.add_argument(
        "--save-frames",
        metavar="DIR",
        type=Path,
        dest="save_frames",
        help="save each trial's letter (or letter-line) frame as DIR/trial-NNN.png (window size, unscaled), "
        "the clinician's console meanwhile as DIR/trial-NNN-console.png and its lens prompt as DIR/trial-NNN-lens.png; "
        "DIR/lensopt-session.json names the session (a new session needs a folder without frames, a resume its own)",
    )
    parser.add_argument(
        "--start",
        metavar="RX",
        help="the starting refraction, e.g. '-1.00 / -0.50 x 180' (plus cylinder is transposed), or each eye's for "
        "--eye OU: 'OD -2.25 / -0.75 x 180, OS -1.50 / -0.50 x 010': search sphere, cylinder and axis around it "
        "by letters, duels or rankings, as the protocol asks (clinical-prescription*; overrides the protocol's [start])",
    )
    parser.add_argument(
        "--axis",
        type=whole_axis,
        metavar="DEG",
        dest="axis_deg",
        help="the axis (1-180) the phoropter's cylinder is set to in a sphere-and-cylinder search (the "
        "patient's, from the autorefraction or keratometry): every lens is then shown in clinical notation "
        "(clinical-refraction, clinical-duel, clinical-ranking; overrides the protocol's [lens] axis_deg)",
    )
    parser.add_argument(
        "--eye",
        type=eye_name,
        choices=EYES,
        help="the eye tested, stored with every trial and result: OD (right), OS (left) or OU (both: OD, then "
        "OS, each its own search; letter sessions), in any case; overrides the protocol's [session] eye",
    )
    parser.add_argument(
        "--resume",
        type=positive_int,
        metavar="SESSION_ID",
        help="continue a stored session after its last answered trial",
    )
    parser.add_argument(
        "--fullscreen",
        action=argparse.BooleanOptionalAction,
        default=None,
        help="full-screen window, or --no-fullscreen a window (with a console on one screen: beside it); "
        "default: the protocol's display.fullscreen, also for a resumed session",
    )
    parser.add_argument(
        "--dashboard",
        action="store_true",
        help="also open the live dashboard for this session (its own process), beside the console, never over it or "
        "the chart (minimized where there is no room)",
    )
    parser.set_defaults(handler=Handler("lensopt.cli.handlers.run:run_command"))
