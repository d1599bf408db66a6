"""``lensopt bench``: benchmark campaigns that reproduce the paper's tables, and their report.

``functions``  Table 1: the 34 test functions, 60 iterations, 40 seeds, 5 initial samples, 7 rules.
``refraction`` Table 3: 8 slopes evenly spaced in [1, 8], 20 repetitions, 260 trials, 6 rules.
``duels``      companion paper Table 2: preferential BO, 80 iterations, 40 seeds, 9 rules.
``batch-duels`` companion paper Table 3: batches of 3, 30 iterations, 30 seeds, MUC/KSS/random.
``contextual-duels`` Table 2: contextual preferential BO, 60 iterations, 40 seeds.
``feedback``   letters vs duels vs duels with ties on the same simulated patients (issue 8).
``robustness`` ucb-ald, ts-ald and the ideal observer on held-out patients, 5 conditions (issue 14).
``report DIR`` ranking table (Markdown, CSV, JSON), win matrices and regret curves (PNG).
``rescale``    regenerate ``data/benchmark-rescaling.json``.
``decision-time`` ask + tell time in N processes side by side that import numpy first (issue 14).
``cli-startup`` how long ``lensopt --help`` takes, in fresh processes (issue 15).

Campaigns run on Dask: a local cluster sized to the machine by default, or an existing one with
``--scheduler tcp://HOST:8786``. On SLURM, start one with dask-jobqueue, e.g.:

    from dask_jobqueue import SLURMCluster
    cluster = SLURMCluster(cores=1, processes=1, memory="2GB", walltime="04:00:00")
    cluster.scale(jobs=100); print(cluster.scheduler_address)

then ``lensopt bench functions --scheduler <that address>``. Records are written by this
command as runs finish; running it again skips the finished runs.
"""

from __future__ import annotations

import argparse
import math
import shlex
import sys
from pathlib import Path

# Only light modules here (`lensopt --help` must not import numpy or scipy): the parsers' values
# come from lensopt.cli.defaults and from modules of constants; the handlers import the rest.
from lensopt.bench.spec import HELD_OUT_FIRST_SEED, RunSpec, split_of
from lensopt.bench.startup import DEFAULT_RUNS, TARGET_S, measure
from lensopt.bench.startup import format_report as format_startup_report
from lensopt.cli.arguments import non_negative_float as _non_negative_float
from lensopt.cli.arguments import non_negative_int as _non_negative_int
from lensopt.cli.arguments import positive_float as _positive_float
from lensopt.cli.arguments import positive_int as _positive_int
from lensopt.cli.defaults import (
    DUEL_DEFAULTS,
    FEEDBACK_PATIENTS,
    FEEDBACK_RULES,
    FEEDBACK_SLOPE,
    FEEDBACK_TIE_THRESHOLD,
    FEEDBACK_TRIALS,
    PAPER_BETA_3,
    REFRACTION_BETA_3,
    ROBUSTNESS_CONDITIONS,
    ROBUSTNESS_RULES,
)
from lensopt.stopping import DEFAULT_MIN_TRIALS, DEFAULT_STOP_CONFIDENCE

#: Paper defaults (seed paper §4.1 and §5.3; METHOD.md §6).
FUNCTION_RULES = ("ucb-ald", "ts-ald", "cbkg", "ucb-random", "bald", "ts-random", "random")
REFRACTION_RULES = ("ucb-ald", "ts-ald", "ucb-random", "bald", "ts-random", "random")
FUNCTION_ITERATIONS, FUNCTION_SEEDS, INITIAL_SAMPLES = 60, 40, 5
REFRACTION_TRIALS, REFRACTION_REPETITIONS = 260, 20
#: The reported optimum is searched after trial 1, every REPORT_EVERY trials and the last (the
#: search costs as much as a decision; the final value and the checkpoints 30/60/100 are exact).
REPORT_EVERY = 5


def _add_run_options(
    p,
    out: str,
    *,
    seeds: tuple[int, str],
    iterations: tuple[int, str],
    initial: tuple[int, str],
    rules: tuple[tuple[str, ...], str],
) -> None:
    """The options every campaign shares: ``--out`` (default ``bench-results/<out>``), ``--seeds``,
    ``--iterations``, ``--initial`` and ``--rules``, each given as ``(default, what it counts)``."""
    p.add_argument(
        "--out",
        metavar="DIR",
        default=f"bench-results/{out}",
        help=f"campaign directory; runs already in it are skipped (default bench-results/{out})",
    )
    p.add_argument(
        "--seeds", type=_positive_int, default=seeds[0], metavar="N", help=f"{seeds[1]} (default {seeds[0]})"
    )
    p.add_argument(
        "--iterations",
        type=_positive_int,
        default=iterations[0],
        metavar="N",
        help=f"{iterations[1]} (default {iterations[0]})",
    )
    p.add_argument(
        "--initial",
        type=_non_negative_int,
        default=initial[0],
        metavar="N",
        help=f"initial random {initial[1]} (default {initial[0]})",
    )
    p.add_argument(
        "--rules",
        nargs="+",
        default=list(rules[0]),
        metavar="RULE",
        help=f"{rules[1]} (default: {' '.join(rules[0])})",
    )


def _add_cluster_options(p, report_every: bool = True) -> None:
    g = p.add_argument_group("where to run")
    g.add_argument(
        "--scheduler", metavar="ADDRESS", help="address of a running Dask scheduler (default: a local cluster)"
    )
    g.add_argument(
        "--workers",
        type=_positive_int,
        metavar="N",
        help="worker processes of the local cluster (default: one per CPU)",
    )
    g.add_argument(
        "--local-sync",
        action="store_true",
        help="run in this process, one run after the other, without Dask (debugging)",
    )
    g.add_argument("--no-progress", action="store_true", help="hide the progress bar")
    if not report_every:  # the campaign reports the lens after every trial
        return
    p.add_argument(
        "--report-every",
        type=_positive_int,
        default=REPORT_EVERY,
        metavar="K",
        help="search the reported optimum every K trials (and after the first and the "
        f"last); the trajectory holds its value in between (default {REPORT_EVERY})",
    )


def _no_benchmark_command(sub) -> int:
    """``lensopt bench`` alone: one line naming the commands, exit 2."""
    names = ", ".join(sub.choices)
    print(f"lensopt bench: name a benchmark command: {names} (see `lensopt bench --help`)", file=sys.stderr)
    return 2


def register(subparsers) -> None:
    bench = subparsers.add_parser(
        "bench",
        help="benchmark campaigns (paper Tables 1 and 3) and their report",
        description="Benchmark campaigns that reproduce the paper's tables, and their report.",
        epilog=__doc__.split("\n\n", 1)[1].replace("``", ""),
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    sub = bench.add_subparsers(
        title="benchmark commands", dest="bench_command", metavar="WHAT", parser_class=type(bench)
    )
    bench.set_defaults(handler=lambda args: _no_benchmark_command(sub))

    f = sub.add_parser("functions", help="contextual binary BO on the 34 test functions (Table 1)")
    _add_run_options(
        f,
        "functions",
        seeds=(FUNCTION_SEEDS, "seeds per function and rule"),
        iterations=(FUNCTION_ITERATIONS, "trials per run, initial samples included"),
        initial=(INITIAL_SAMPLES, "samples"),
        rules=(FUNCTION_RULES, "acquisition rules"),
    )
    f.add_argument("--problems", nargs="+", metavar="SLUG", help="function slugs (default: all 34)")
    f.add_argument(
        "--hyperparameters",
        choices=("fitted", "default"),
        default="fitted",
        help="base-kernel hyperparameters: the stored maximum-likelihood fit (paper, "
        "default) or 0.2 × the domain width with variance 1",
    )
    _add_cluster_options(f)
    f.set_defaults(handler=run_functions)

    r = sub.add_parser("refraction", help="simulated refraction at 8 slopes (Table 3)")
    _add_run_options(
        r,
        "refraction",
        seeds=(REFRACTION_REPETITIONS, "repetitions (patients) per slope and rule"),
        iterations=(REFRACTION_TRIALS, "trials per run"),
        initial=(INITIAL_SAMPLES, "trials"),
        rules=(REFRACTION_RULES, "acquisition rules"),
    )
    r.add_argument(
        "--slopes",
        nargs="+",
        type=_positive_float,
        metavar="A",
        help="psychometric slopes, logMAR⁻¹ (default: 8 evenly spaced in [1, 8])",
    )
    r.add_argument(
        "--problems", nargs="+", metavar="NAME", help="problem names as 'slope-A' (an alternative to --slopes)"
    )
    r.add_argument(
        "--beta",
        type=_non_negative_float,
        metavar="B",
        help=f"β of UCB_Φ (default Φ⁻¹(0.99) = {REFRACTION_BETA_3}; the contextual "
        f"paper's is Φ⁻¹(0.95) = {PAPER_BETA_3})",
    )
    _add_cluster_options(r)
    r.set_defaults(handler=run_refraction)

    titles = {
        "duels": "preferential BO on the test functions (companion paper Table 2)",
        "batch-duels": "batch preferential BO, batches of 3 (companion paper Table 3)",
        "contextual-duels": "contextual preferential BO on the test functions (Table 2)",
    }
    for campaign in DUEL_DEFAULTS:
        iterations, seeds, initial, rules = DUEL_DEFAULTS[campaign]
        d = sub.add_parser(campaign, help=titles[campaign])
        _add_run_options(
            d,
            campaign,
            seeds=(seeds, "seeds per function and rule"),
            iterations=(iterations, "queries per run, initial ones included"),
            initial=(initial, "queries"),
            rules=(rules, "acquisition rules"),
        )
        d.add_argument("--problems", nargs="+", metavar="SLUG", help="function slugs (default: all 34)")
        d.add_argument(
            "--hyperparameters",
            choices=("fitted", "default"),
            default="fitted",
            help="base-kernel hyperparameters (as for `lensopt bench functions`)",
        )
        _add_cluster_options(d)
        d.set_defaults(handler=run_duel_campaign, campaign=campaign)

    fb = sub.add_parser("feedback", help="letters vs duels (with and without ties) on the same patients")
    _add_run_options(
        fb,
        "feedback",
        seeds=(FEEDBACK_PATIENTS, "patients"),
        iterations=(FEEDBACK_TRIALS, "trials per session"),
        initial=(INITIAL_SAMPLES, "trials"),
        rules=(FEEDBACK_RULES, "feedback modes"),
    )
    fb.add_argument(
        "--slope",
        type=_positive_float,
        default=FEEDBACK_SLOPE,
        metavar="A",
        help=f"psychometric slope, logMAR⁻¹ (default {FEEDBACK_SLOPE:g})",
    )
    fb.add_argument(
        "--tie-threshold",
        type=_non_negative_float,
        default=FEEDBACK_TIE_THRESHOLD,
        metavar="DELTA",
        help=f"the patients' tie threshold δ, utility units (default {FEEDBACK_TIE_THRESHOLD:g})",
    )
    _add_cluster_options(fb)
    fb.set_defaults(handler=run_feedback_campaign)

    rb = sub.add_parser("robustness", help="ucb-ald, ts-ald and the ideal observer on held-out patients")
    rb.add_argument(
        "--out",
        metavar="DIR",
        default="bench-results/robustness",
        help="campaign directory; runs already in it are skipped (default bench-results/robustness)",
    )
    rb.add_argument(
        "--conditions",
        nargs="+",
        metavar="NAME",
        default=[name for name, _, _ in ROBUSTNESS_CONDITIONS],
        help="patient conditions (default: all: "
        + ", ".join(f"{name} {patients}×{trials}" for name, patients, trials in ROBUSTNESS_CONDITIONS)
        + ")",
    )
    rb.add_argument(
        "--rules",
        nargs="+",
        default=list(ROBUSTNESS_RULES),
        metavar="RULE",
        help=f"rules (default: {' '.join(ROBUSTNESS_RULES)}; also ucb-ald-paper, UCB-ALD "
        "with the seed paper's letter model)",
    )
    rb.add_argument("--patients", type=_positive_int, metavar="N", help="at most N patients per condition (quick runs)")
    rb.add_argument(
        "--trials",
        type=_positive_int,
        metavar="N",
        help="trials per session in every condition (default: 100, 260 at slope 2)",
    )
    seeds = rb.add_mutually_exclusive_group()
    seeds.add_argument(
        "--first-seed",
        type=_non_negative_int,
        default=HELD_OUT_FIRST_SEED,
        metavar="SEED",
        help=f"seed of the first patient (default {HELD_OUT_FIRST_SEED:,}: held out; "
        "below it: the tuning split, recorded as such)",
    )
    seeds.add_argument(
        "--tuning", action="store_true", help="patients of the tuning split (seeds from 0) instead of the held-out ones"
    )
    rb.add_argument(
        "--initial",
        type=_non_negative_int,
        default=INITIAL_SAMPLES,
        metavar="N",
        help=f"initial random trials of ucb-ald/ts-ald (default {INITIAL_SAMPLES})",
    )
    rb.add_argument(
        "--stop-confidence",
        type=_positive_float,
        default=DEFAULT_STOP_CONFIDENCE,
        metavar="P",
        help=f"confidence at which the stopping rule stops, in (0, 1) (default {DEFAULT_STOP_CONFIDENCE})",
    )
    rb.add_argument(
        "--min-trials",
        type=_positive_int,
        default=DEFAULT_MIN_TRIALS,
        metavar="N",
        help=f"the stopping rule's minimum trials (default {DEFAULT_MIN_TRIALS})",
    )
    rb.add_argument(
        "--model-lapse",
        type=_non_negative_float,
        metavar="L",
        help="lapse rate the optimizers assume (default: RefractionOptimizer's)",
    )
    rb.add_argument("--summary", metavar="DIR", help="only print (and write) the summary of the campaign in DIR")
    _add_cluster_options(rb, report_every=False)
    rb.set_defaults(handler=run_robustness_campaign)

    rep = sub.add_parser("report", help="ranking table, win matrices and regret curves of a campaign")
    rep.add_argument("dir", metavar="DIR", help="campaign directory")
    rep.add_argument("--out", metavar="DIR", help="where to write the report (default DIR/report)")
    rep.add_argument(
        "--alpha", type=_positive_float, default=5e-4, help="significance level of the pairwise tests (default 5e-4)"
    )
    rep.set_defaults(handler=run_report)

    s = sub.add_parser("rescale", help="regenerate the rescaling constants of the test functions")
    s.add_argument("--seed", type=_non_negative_int, default=0)
    s.add_argument("--samples", type=_positive_int, default=50_000)
    s.add_argument("--out", metavar="FILE", help="default: data/benchmark-rescaling.json")
    s.add_argument(
        "--fit-kernels",
        action="store_true",
        help="also fit each function's kernel hyperparameters by maximum likelihood "
        "on 1000 samples, as the paper did (about half a minute per function)",
    )
    s.set_defaults(handler=run_rescale)

    dt = sub.add_parser(
        "decision-time",
        help="ask + tell time (ms) in N processes side by side, numpy imported first",
        description="Start N Python processes at once; each imports numpy and scipy before lensopt "
        "(as a PsychoPy script does), without BLAS thread variables, and times ask + tell "
        "of a simulated refraction session. Prints median, p95 and max per process and "
        "pooled, p95 in 60 Hz frames, and the BLAS threads in effect inside a call.",
    )
    dt.add_argument("--rule", default="ucb-ald", help="acquisition rule (default ucb-ald)")
    dt.add_argument(
        "--processes", type=_positive_int, default=2, metavar="N", help="processes side by side (default 2)"
    )
    dt.add_argument("--trials", type=_positive_int, default=100, metavar="N", help="trials per process (default 100)")
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
    dt.add_argument("--json", action="store_true", help="print one JSON object")
    dt.set_defaults(handler=run_decision_time)

    cs = sub.add_parser(
        "cli-startup",
        help="how long `lensopt --help` takes (median and p95 of N fresh processes)",
        description="Run `lensopt --help` N times, each in a new process (after one untimed run), and "
        f"print the median, p95, min and max wall-clock time; the target is under {TARGET_S:g} s.",
    )
    cs.add_argument(
        "--runs", type=_positive_int, default=DEFAULT_RUNS, metavar="N", help=f"timed runs (default {DEFAULT_RUNS})"
    )
    cs.add_argument("--json", action="store_true", help="print one JSON object")
    cs.set_defaults(handler=run_cli_startup)


def _check_rules(rules) -> list[str]:
    from lensopt.binary.settings import ALL_RULES  # deferred: imports numpy (`lensopt --help` must not)

    unknown = [r for r in rules if r not in ALL_RULES]
    if unknown:
        raise ValueError(f"unknown rule(s) {', '.join(unknown)}; choose from: {', '.join(ALL_RULES)}")
    if len(set(rules)) != len(rules):
        raise ValueError("--rules lists a rule twice")
    return list(rules)


def _command(args, campaign: str, problems_flag: str, problems) -> str:
    parts = [
        "lensopt",
        "bench",
        campaign,
        "--out",
        args.out,
        "--seeds",
        str(args.seeds),
        "--iterations",
        str(args.iterations),
        "--initial",
        str(args.initial),
        "--rules",
        *args.rules,
        problems_flag,
        *[str(p) for p in problems],
        "--report-every",
        str(args.report_every),
    ]
    return shlex.join(parts)


def _run(args, campaign: str, specs, manifest: dict) -> int:
    from lensopt.bench.runner import run_campaign  # deferred: imports the optimizers, numpy and scipy

    summary = run_campaign(
        specs,
        args.out,
        manifest=manifest,
        scheduler=args.scheduler,
        n_workers=args.workers,
        local_sync=args.local_sync,
        progress=not args.no_progress,
    )
    print(
        f"lensopt bench {campaign}: {summary.n_total} runs: {summary.n_skipped} already done, "
        f"{summary.n_done} run now ({summary.wall_time_s / 60:.1f} min), "
        f"{len(summary.failures)} failed; records in {args.out}/runs"
    )
    for key, message in summary.failures[:10]:
        print(f"  failed {key}: {message}", file=sys.stderr)
    if summary.failures:
        print(
            "run the same command again to retry the failed runs (LENSOPT_DEBUG=1 prints their tracebacks)",
            file=sys.stderr,
        )
        return 1
    print(f"report: lensopt bench report {shlex.quote(args.out)}")
    return 0


def run_functions(args) -> int:
    from lensopt.bench.functions import FUNCTIONS, get_function  # deferred: imports numpy

    rules = _check_rules(args.rules)
    problems = [get_function(p).slug for p in args.problems] if args.problems else list(FUNCTIONS)
    specs = [
        RunSpec(
            "functions",
            p,
            r,
            seed,
            args.iterations,
            args.initial,
            hyperparameters=args.hyperparameters,
            report_every=args.report_every,
        )
        for seed in range(args.seeds)
        for p in problems
        for r in rules
    ]
    manifest = {
        "campaign": "functions",
        "rules": rules,
        "problems": problems,
        "seeds": args.seeds,
        "n_iterations": args.iterations,
        "n_initial": args.initial,
        "hyperparameters": args.hyperparameters,
        "report_every": args.report_every,
        "command": _command(args, "functions", "--problems", problems) + f" --hyperparameters {args.hyperparameters}",
    }
    return _run(args, "functions", specs, manifest)


def run_duel_campaign(args) -> int:
    # deferred: these import numpy and scipy (`lensopt --help` must not)
    from lensopt.bench.functions import FUNCTIONS, get_function
    from lensopt.preference import BATCH_RULES, CONTEXTUAL_RULES, DUEL_RULES

    allowed = {
        "duels": DUEL_RULES,
        "contextual-duels": CONTEXTUAL_RULES,
        "batch-duels": tuple(r for r in DUEL_RULES if r in BATCH_RULES),
    }[args.campaign]
    unknown = [r for r in args.rules if r not in allowed]
    if unknown:
        raise ValueError(f"unknown rule(s) {', '.join(unknown)} for {args.campaign}; choose from: {', '.join(allowed)}")
    if len(set(args.rules)) != len(args.rules):
        raise ValueError("--rules lists a rule twice")
    problems = [get_function(p).slug for p in args.problems] if args.problems else list(FUNCTIONS)
    specs = [
        RunSpec(
            args.campaign,
            p,
            r,
            seed,
            args.iterations,
            args.initial,
            hyperparameters=args.hyperparameters,
            report_every=args.report_every,
        )
        for seed in range(args.seeds)
        for p in problems
        for r in args.rules
    ]
    manifest = {
        "campaign": args.campaign,
        "rules": list(args.rules),
        "problems": problems,
        "seeds": args.seeds,
        "n_iterations": args.iterations,
        "n_initial": args.initial,
        "hyperparameters": args.hyperparameters,
        "report_every": args.report_every,
        "command": _command(args, args.campaign, "--problems", problems) + f" --hyperparameters {args.hyperparameters}",
    }
    return _run(args, args.campaign, specs, manifest)


def _parse_slope_name(name: str) -> float:
    prefix = "slope-"
    try:
        if not name.startswith(prefix):
            raise ValueError
        value = float(name[len(prefix) :])
    except ValueError:
        raise ValueError(f"refraction problems are named 'slope-A' (e.g. slope-5), got {name!r}") from None
    if not (math.isfinite(value) and value > 0):
        raise ValueError(f"the slope of {name!r} must be positive")
    return value


def run_refraction(args) -> int:
    # deferred: these import numpy and scipy (`lensopt --help` must not)
    from lensopt.bench.problems import PAPER_SLOPES, refraction_problem_name
    from lensopt.refraction.letters import REFRACTION_BETA

    if args.beta is None:
        args.beta = REFRACTION_BETA
    rules = _check_rules(args.rules)
    if args.slopes and args.problems:
        raise ValueError("give either --slopes or --problems, not both")
    slopes = (
        list(args.slopes)
        if args.slopes
        else [_parse_slope_name(p) for p in args.problems]
        if args.problems
        else list(PAPER_SLOPES)
    )
    names = [refraction_problem_name(a) for a in slopes]
    if len(set(names)) != len(names):
        raise ValueError("--slopes lists a slope twice")
    specs = [
        RunSpec(
            "refraction",
            name,
            r,
            seed,
            args.iterations,
            args.initial,
            slope=a,
            report_every=args.report_every,
            beta=args.beta,
        )
        for seed in range(args.seeds)
        for name, a in zip(names, slopes)
        for r in rules
    ]
    manifest = {
        "campaign": "refraction",
        "rules": rules,
        "problems": names,
        "slopes": slopes,
        "seeds": args.seeds,
        "n_iterations": args.iterations,
        "n_initial": args.initial,
        "report_every": args.report_every,
        "beta": args.beta,
        "command": _command(args, "refraction", "--slopes", [f"{a:g}" for a in slopes]) + f" --beta {args.beta:.6g}",
    }
    return _run(args, "refraction", specs, manifest)


def run_feedback_campaign(args) -> int:
    # deferred: these import numpy and scipy (`lensopt --help` must not)
    from lensopt.bench.problems import refraction_problem_name
    from lensopt.refraction.letters import REFRACTION_BETA

    unknown = [r for r in args.rules if r not in FEEDBACK_RULES]
    if unknown:
        raise ValueError(f"unknown feedback mode(s) {', '.join(unknown)}; choose from: {', '.join(FEEDBACK_RULES)}")
    if len(set(args.rules)) != len(args.rules):
        raise ValueError("--rules lists a mode twice")
    name = refraction_problem_name(args.slope)
    specs = [
        RunSpec(
            "feedback",
            name,
            r,
            seed,
            args.iterations,
            args.initial,
            slope=args.slope,
            report_every=args.report_every,
            tie_threshold=args.tie_threshold,
            beta=REFRACTION_BETA if r == "letters" else None,
        )
        for seed in range(args.seeds)
        for r in args.rules
    ]
    command = shlex.join(
        [
            "lensopt",
            "bench",
            "feedback",
            "--out",
            args.out,
            "--seeds",
            str(args.seeds),
            "--iterations",
            str(args.iterations),
            "--initial",
            str(args.initial),
            "--rules",
            *args.rules,
            "--slope",
            f"{args.slope:g}",
            "--tie-threshold",
            f"{args.tie_threshold:g}",
            "--report-every",
            str(args.report_every),
        ]
    )
    manifest = {
        "campaign": "feedback",
        "rules": list(args.rules),
        "problems": [name],
        "slope": args.slope,
        "tie_threshold": args.tie_threshold,
        "seeds": args.seeds,
        "n_iterations": args.iterations,
        "n_initial": args.initial,
        "report_every": args.report_every,
        "command": command,
    }
    return _run(args, "feedback", specs, manifest)


def run_decision_time(args) -> int:
    import json

    # deferred: imports the refraction optimizer, numpy and scipy (`lensopt --help` must not)
    from lensopt.bench.decision_time import format_report
    from lensopt.bench.decision_time import run_decision_time as run

    result = run(
        rule=args.rule,
        processes=args.processes,
        trials=args.trials,
        seed=args.seed,
        numpy_first=args.numpy_first,
        limit=not args.no_limit,
    )
    print(json.dumps(result) if args.json else format_report(result))
    return 0


def run_cli_startup(args) -> int:
    import json

    result = measure(args.runs)
    print(json.dumps(result) if args.json else format_startup_report(result))
    return 0


def run_robustness_campaign(args) -> int:
    # deferred: imports the optimizers, numpy and scipy (`lensopt --help` must not)
    from lensopt.bench.robustness import SUMMARY_NAME, get_condition, robustness_specs
    from lensopt.bench.robustness_summary import write_summary

    if args.summary:
        _, text = write_summary(args.summary)
        print(text)
        print(f"summary: {args.summary}/{SUMMARY_NAME}")
        return 0
    if not 0 < args.stop_confidence < 1:
        raise ValueError(
            f"--stop-confidence must be strictly between 0 and 1 (e.g. 0.95), got {args.stop_confidence:g}"
        )
    if args.model_lapse is not None and args.model_lapse >= 0.5:
        raise ValueError(f"--model-lapse must be in [0, 0.5) (e.g. 0.02), got {args.model_lapse:g}")
    first_seed = 0 if args.tuning else args.first_seed
    rules = list(args.rules)
    specs = robustness_specs(
        args.conditions,
        rules,
        first_seed=first_seed,
        max_patients=args.patients,
        n_trials=args.trials,
        n_initial=args.initial,
        stop_confidence=args.stop_confidence,
        min_trials=args.min_trials,
        model_lapse=args.model_lapse,
    )
    split = split_of(first_seed)
    command = [
        "lensopt",
        "bench",
        "robustness",
        "--out",
        args.out,
        "--conditions",
        *args.conditions,
        "--rules",
        *rules,
        "--first-seed",
        str(first_seed),
        "--initial",
        str(args.initial),
        "--stop-confidence",
        f"{args.stop_confidence:g}",
        "--min-trials",
        str(args.min_trials),
    ]
    command += ["--patients", str(args.patients)] if args.patients else []
    command += ["--trials", str(args.trials)] if args.trials else []
    command += ["--model-lapse", f"{args.model_lapse:g}"] if args.model_lapse is not None else []
    manifest = {
        "campaign": "robustness",
        "split": split,
        "first_seed": first_seed,
        "held_out_first_seed": HELD_OUT_FIRST_SEED,
        "rules": rules,
        "conditions": [get_condition(c).to_dict() for c in args.conditions],
        "max_patients": args.patients,
        "n_trials": args.trials,
        "n_initial": args.initial,
        "stop": {"confidence": args.stop_confidence, "min_trials": args.min_trials},
        "model_lapse": args.model_lapse,
        "command": shlex.join(command),
        "note": "model_lapse null: the optimizer's default; each record holds the settings "
        "its optimizer ran with (optimizer_settings)",
    }
    status = _run(args, "robustness", specs, manifest)
    try:
        _, text = write_summary(args.out)
    except ValueError:  # no finished run to summarize
        return status
    print(text)
    print(f"summary: {args.out}/{SUMMARY_NAME}")
    return status


def run_report(args) -> int:
    # deferred: these import numpy and scipy (`lensopt --help` must not)
    from lensopt.bench.report import write_report
    from lensopt.bench.robustness import SUMMARY_NAME
    from lensopt.bench.robustness_summary import is_robustness_campaign, write_summary

    if is_robustness_campaign(args.dir):
        _, text = write_summary(args.dir)
        print(text)
        print(f"lensopt bench report: wrote {args.dir}/{SUMMARY_NAME}")
        return 0

    out = Path(args.out) if args.out else Path(args.dir) / "report"
    write_report(args.dir, out, alpha=args.alpha)
    print((out / "ranking.md").read_text())
    print(f"lensopt bench report: wrote {out}/ranking.{{md,csv,json}}, win-*.{{csv,png}}, curves/*.png")
    return 0


def run_rescale(args) -> int:
    # deferred: imports numpy and scipy (`lensopt --help` must not)
    from lensopt.bench.reference_table import DEFAULT_TABLE_PATH, compute_rescaling_table, write_rescaling_table

    if args.out and not Path(args.out).parent.is_dir():
        raise ValueError(f"--out {args.out}: its folder does not exist; create it or choose another path")
    table = compute_rescaling_table(
        seed=args.seed,
        n_samples=args.samples,
        fit_kernels=args.fit_kernels,
        progress=(lambda slug: print(f"  {slug}", file=sys.stderr)) if args.fit_kernels else None,
    )
    path = write_rescaling_table(table, args.out or DEFAULT_TABLE_PATH)
    n_log = sum(e["take_log"] for e in table["functions"].values())
    print(
        f"lensopt bench rescale: wrote {path} ({len(table['functions'])} functions, "
        f"{n_log} log-transformed, seed {args.seed}, {args.samples} samples each)"
    )
    return 0
