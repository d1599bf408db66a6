"""The benchmarks that check the machine rather than the method: ``lensopt bench decision-time``
(ask + tell, or a PsychoPy handler's decisions, in N processes side by side; issues 14, 16, 18) and
``lensopt bench cli-startup`` (how long ``lensopt --help`` takes)."""

from __future__ import annotations

from lensopt.bench.startup import DEFAULT_RUNS, TARGET_S
from lensopt.cli.arguments import MAX_PROCESSES, Handler
from lensopt.cli.arguments import bench_count as _bench_count
from lensopt.cli.arguments import confidence as _confidence
from lensopt.cli.arguments import non_negative_float as _non_negative_float
from lensopt.cli.arguments import non_negative_int as _non_negative_int
from lensopt.cli.arguments import positive_int as _positive_int
from lensopt.cli.arguments import processes as _processes
from lensopt.stopping import DEFAULT_MIN_TRIALS


def add_machine_parsers(sub) -> None:
    """Add ``decision-time`` and ``cli-startup`` to the ``lensopt bench`` subcommands ``sub``."""
    dt = sub.add_parser(
        "decision-time",
        help="decision time (ms: ask + tell, or a PsychoPy handler's) in N processes side by side, numpy imported first",
        description="Start N Python processes at once; each imports numpy and scipy before lensopt "
        "(as a PsychoPy script does), without BLAS thread variables, and times ask + tell "
        "of a simulated refraction session — or, with --handler, every decision of the PsychoPy "
        "handler (addResponse to the next trial), with --stop the stopping rule's check included. "
        "Prints median, p95 and max per process and pooled, p95 in 60 Hz frames, and the BLAS "
        "threads in effect inside a call.",
    )
    dt.add_argument(
        "--rule",
        default=None,
        help="acquisition rule (default: the search's own, ucb-ald for sphere-cylinder, bracket-ald for "
        "the prescription around a start, muc-ald for duels, mpes-ald for rankings)",
    )
    dt.add_argument(
        "--processes",
        type=_processes,
        default=2,
        metavar="N",
        help=f"processes side by side, at most {MAX_PROCESSES} (default 2)",
    )
    dt.add_argument("--trials", type=_bench_count, default=100, metavar="N", help="trials per process (default 100)")
    dt.add_argument(
        "--seed",
        type=_non_negative_int,
        default=0,
        help="seed of process 1 (optimizer and patient); process i uses seed + i - 1",
    )
    order = dt.add_mutually_exclusive_group()
    order.add_argument(
        "--numpy-first",
        dest="numpy_first",
        action="store_true",
        default=True,
        help="import numpy and scipy before lensopt (default)",
    )
    order.add_argument(
        "--lensopt-first",
        dest="numpy_first",
        action="store_false",
        help="import lensopt first (its BLAS environment variables then apply)",
    )
    dt.add_argument(
        "--no-limit",
        action="store_true",
        help="no per-call BLAS limit (LENSOPT_BLAS_THREADS=0 in the processes): the slow case",
    )
    dt.add_argument(
        "--search",
        choices=("sphere-cylinder", "prescription", "duel", "prescription-duel", "prescription-ranking"),
        default="sphere-cylinder",
        help="sphere-cylinder: the two-parameter letter search (default); prescription: the full "
        "prescription (M, J0, J45 and the letter size) around an autorefraction, clinic patients; duel: "
        "the two-parameter duels (one or two, or the same; no --stop); prescription-duel: the full "
        "prescription's duels around an autorefraction (muc-ald: through the acuity link; no --stop); "
        "prescription-ranking: its rankings of three lenses (mpes-ald: through the acuity link; no --stop)",
    )
    dt.add_argument(
        "--handler",
        dest="through_handler",
        action="store_true",
        help="drive the optimizer through the PsychoPy handler (lensopt.psychopy.RefractionHandler) and time "
        "each decision from addResponse to the next trial: tell, the stopping rule's check and ask",
    )
    dt.add_argument(
        "--stop",
        type=_confidence,
        metavar="P",
        help="give the optimizer a stopping rule of confidence P, in (0, 1) (e.g. 0.95, a protocol's [stop]), "
        "checked in every decision from --min-trials answers on (default: no stopping rule)",
    )
    dt.add_argument(
        "--min-trials",
        type=_positive_int,
        default=DEFAULT_MIN_TRIALS,
        metavar="N",
        help=f"the stopping rule's minimum trials, at most --trials (default {DEFAULT_MIN_TRIALS}; with --stop)",
    )
    dt.add_argument(
        "--no-lookahead",
        action="store_true",
        help="with --handler: the handler decides in its own process after each answer, instead of a worker "
        "deciding ahead for both answers while the patient looks (lensopt.psychopy.lookahead)",
    )
    dt.add_argument(
        "--response-ms",
        type=_non_negative_float,
        metavar="MS",
        help="with --handler: the simulated patient answers after MS ms, untimed (default 300: quicker than any "
        "patient names a letter; 0: an instant answer, the lookahead's worst case)",
    )
    dt.add_argument(
        "--accommodation",
        type=_non_negative_float,
        nargs="+",
        metavar="A",
        help="with --rule acuity-law: its prior amplitudes of accommodation, D (a protocol's [optimizer] "
        "accommodation_d; clinical-refraction's: 0 0.5 1 2 4 8; default: the law alone)",
    )
    dt.add_argument("--json", action="store_true", help="print one JSON object")
    dt.set_defaults(handler=Handler("lensopt.cli.handlers.bench_machine:run_decision_time"))

    cs = sub.add_parser(
        "cli-startup",
        help="how long `lensopt --help` takes (median and p95 of N fresh processes)",
        description="Run `lensopt --help` N times, each in a new process (after one untimed run), and "
        f"print the median, p95, min and max wall-clock time; the target is under {TARGET_S:g} s.",
    )
    cs.add_argument(
        "--runs", type=_bench_count, default=DEFAULT_RUNS, metavar="N", help=f"timed runs (default {DEFAULT_RUNS})"
    )
    cs.add_argument("--json", action="store_true", help="print one JSON object")
    cs.set_defaults(handler=Handler("lensopt.cli.handlers.bench_machine:run_cli_startup"))
