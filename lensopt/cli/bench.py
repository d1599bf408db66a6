"""``lensopt bench``: benchmark campaigns that reproduce the paper's tables, and their report.

``functions``  Table 1: the 34 test functions, 60 iterations, 40 seeds, 5 initial samples, 7 rules.
``binary``     companion paper Table 1: binary BO without a context, 100 iterations, 60 seeds,
               2 initial samples, UCB_Φ / UCB_f / Thompson / binary EI / random.
``refraction`` Table 3: 8 slopes evenly spaced in [1, 8], 20 repetitions, 260 trials, 6 rules.
``duels``      companion paper Table 2: preferential BO, 80 iterations, 40 seeds, 9 rules.
``batch-duels`` companion paper Table 3: batches of 3, 30 iterations, 30 seeds, MUC/KSS/random.
``contextual-duels`` Table 2: contextual preferential BO, 60 iterations, 40 seeds.
``feedback``   letters vs duels vs duels with ties on the same simulated patients (issue 8).
``robustness`` ucb-ald, ts-ald and the ideal observer on held-out patients, 5 conditions (issue 14).
``prescription`` the full prescription (M, J0, J45) on clinic patients, with and without a start
               and accommodation: Bland–Altman, trials to 0.25 D, the stopping rule (issue 16).
``report DIR`` ranking table (Markdown, CSV, JSON), win matrices and regret curves (PNG).
``rescale``    regenerate ``data/benchmark-rescaling.json``.
``decision-time`` ask + tell time in N processes side by side that import numpy first (issue 14);
               ``--handler [--stop P]``: the PsychoPy handler's decisions, stop check included (issue 18).
``cli-startup`` how long ``lensopt --help`` takes, in fresh processes (issue 15).

Campaigns run on Dask: a local cluster sized to the machine by default, or an existing one with
``--scheduler tcp://HOST:8786``. On SLURM, start one with dask-jobqueue, e.g.:

    from dask_jobqueue import SLURMCluster
    # Dask's workers get glibc's MALLOC_TRIM_THRESHOLD_=65536, which makes the acuity law's and the
    # ideal observer's decisions about 4x slower; lensopt's local cluster leaves it out; on SLURM set:
    cluster = SLURMCluster(cores=1, processes=1, memory="2GB", walltime="04:00:00", job_script_prologue=[
        "export MALLOC_TRIM_THRESHOLD_=67108864 MALLOC_MMAP_THRESHOLD_=33554432"])
    cluster.scale(jobs=100); print(cluster.scheduler_address)

then ``lensopt bench functions --scheduler <that address>``. Records are written by this
command as runs finish; running it again skips the finished runs.
"""

from __future__ import annotations

import argparse
import sys

# Only light modules here (`lensopt --help` must not import numpy or scipy): the parsers' values
# come from lensopt.cli.defaults and from modules of constants; the handlers import the rest.
from lensopt.bench.binary_protocol import BINARY_BETA, BINARY_INITIAL, BINARY_ITERATIONS, BINARY_RULES, BINARY_SEEDS
from lensopt.bench.spec import HELD_OUT_FIRST_SEED
from lensopt.cli.arguments import MAX_PROCESSES, Handler, note_option_defaults
from lensopt.cli.arguments import bench_count as _bench_count
from lensopt.cli.arguments import check_letters as _check_letters
from lensopt.cli.arguments import non_negative_float as _non_negative_float
from lensopt.cli.arguments import non_negative_int as _non_negative_int
from lensopt.cli.arguments import positive_float as _positive_float
from lensopt.cli.arguments import positive_int as _positive_int
from lensopt.cli.arguments import processes as _processes
from lensopt.cli.arguments import scheduler_address as _scheduler_address
from lensopt.cli.bench_machine import add_machine_parsers
from lensopt.cli.bench_prescription import add_prescription_parser
from lensopt.cli.defaults import (
    DUEL_DEFAULTS,
    FEEDBACK_PATIENTS,
    FEEDBACK_RULES,
    FEEDBACK_SLOPE,
    FEEDBACK_TIE_THRESHOLD,
    FEEDBACK_TRIALS,
    FUNCTION_ITERATIONS,
    FUNCTION_RULES,
    FUNCTION_SEEDS,
    INITIAL_SAMPLES,
    PAPER_BETA_3,
    REFRACTION_BETA_3,
    REFRACTION_REPETITIONS,
    REFRACTION_RULES,
    REFRACTION_TRIALS,
    REPORT_EVERY,
    ROBUSTNESS_CONDITIONS,
    ROBUSTNESS_EXTRA_CONDITIONS,
    ROBUSTNESS_RULES,
)
from lensopt.stopping import DEFAULT_MIN_TRIALS, DEFAULT_STOP_CONFIDENCE


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
        type=_bench_count,
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


def _add_function_options(
    p, hyperparameters_help: str = "base-kernel hyperparameters (as for `lensopt bench functions`)"
) -> None:
    """The options of the campaigns on the test functions: ``--problems`` and ``--hyperparameters``."""
    p.add_argument("--problems", nargs="+", metavar="SLUG", help="function slugs (default: all 34)")
    p.add_argument("--hyperparameters", choices=("fitted", "default"), default="fitted", help=hyperparameters_help)


def _add_cluster_options(p, report_every: bool = True) -> None:
    g = p.add_argument_group("where to run")
    g.add_argument(
        "--scheduler",
        type=_scheduler_address,
        metavar="ADDRESS",
        help="address of a running Dask scheduler, e.g. tcp://HOST:8786 (default: a local cluster); "
        "one that does not answer within 10 s is refused",
    )
    g.add_argument(
        "--workers",
        type=_processes,
        metavar="N",
        help=f"worker processes of the local cluster, at most {MAX_PROCESSES} (default: one per CPU)",
    )
    g.add_argument(
        "--local-sync",
        action="store_true",
        help="run in this process, one run after the other, without Dask (debugging)",
    )
    g.add_argument(
        "--no-progress",
        action="store_true",
        help="hide the progress bar (shown on a terminal only; without one the campaign prints its plan)",
    )
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


def _at_least_two(text) -> int:
    """A sample count whose standard deviation exists: 2 or more."""
    value = _positive_int(text)
    if value < 2:
        raise argparse.ArgumentTypeError(f"must be at least 2 (a standard deviation needs two), got {value}")
    return value


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
    _add_function_options(
        f,
        "base-kernel hyperparameters: the stored maximum-likelihood fit (paper, "
        "default) or 0.2 × the domain width with variance 1",
    )
    _add_cluster_options(f)
    f.set_defaults(handler=Handler("lensopt.cli.handlers.bench:run_functions"))

    b = sub.add_parser("binary", help="binary BO without a context on the 34 test functions (companion paper Table 1)")
    _add_run_options(
        b,
        "binary",
        seeds=(BINARY_SEEDS, "seeds per function and rule"),
        iterations=(BINARY_ITERATIONS, "trials per run, initial samples included"),
        initial=(BINARY_INITIAL, "samples"),
        rules=(tuple(BINARY_RULES), "acquisition rules"),
    )
    _add_function_options(b)
    b.add_argument(
        "--beta",
        type=_non_negative_float,
        default=BINARY_BETA,
        metavar="B",
        help=f"β of UCB_Φ (default Φ⁻¹(0.99) = {BINARY_BETA:.3f}; UCB_f keeps β = 1)",
    )
    _add_cluster_options(b)
    b.set_defaults(handler=Handler("lensopt.cli.handlers.bench:run_binary_campaign"))

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
    r.set_defaults(handler=Handler("lensopt.cli.handlers.bench:run_refraction"))

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
        _add_function_options(d)
        _add_cluster_options(d)
        d.set_defaults(handler=Handler("lensopt.cli.handlers.bench:run_duel_campaign"), campaign=campaign)

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
    fb.set_defaults(handler=Handler("lensopt.cli.handlers.bench:run_feedback_campaign"))

    rb = sub.add_parser(
        "robustness",
        help="ucb-ald, ts-ald and the ideal observer on held-out patients",
        description="Simulated refractions (sphere, cylinder) of held-out patients (seeds from 100,000; --tuning "
        "or a lower --first-seed: the tuning split, each record says which) in 5 conditions — slopes 5, 2 and 8, "
        "a lapse rate of 0.05, Sloan letters — by ucb-ald, ts-ald, the acuity law and the ideal observer, on the "
        "same patients; every trial is scored, and where the stopping rule would stop is recorded while the "
        "session runs its whole budget. Prints and writes the summary: the acuity error after 30/60/100/260 "
        "trials, sessions above 0.1 logMAR, trials to reach and stay <= 0.025 logMAR (and over the ideal "
        "observer's), the stopping rule's stops and how many were right, decision times, and the error curves.",
    )
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
        help="patient conditions (default: all of the issue's: "
        + ", ".join(f"{name} {patients}×{trials}" for name, patients, trials in ROBUSTNESS_CONDITIONS)
        + "; also "
        + ", ".join(f"{name} {patients}×{trials}" for name, patients, trials in ROBUSTNESS_EXTRA_CONDITIONS)
        + ": slope 2-8 and best acuity -0.1..0.3 logMAR drawn per patient)",
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
        type=_bench_count,
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
        "--check-letters",
        type=_check_letters,
        metavar="K",
        help="the stopping rule's check: before a stop, K letters through the reported lens "
        "(the letter rules; default: no check)",
    )
    rb.add_argument(
        "--model-lapse",
        type=_non_negative_float,
        metavar="L",
        help="lapse rate the optimizers assume (default: RefractionOptimizer's)",
    )
    rb.add_argument(
        "--hyperparameters",
        metavar="FILE",
        help="kernel of ucb-ald and ts-ald: a JSON file with a 'kernel' entry, as `lensopt hyperparameters` "
        "writes (default: the shipped data/letter-model-hyperparameters.json); recorded in every run",
    )
    rb.add_argument(
        "--summary", metavar="DIR", help="only print (and write) the summary of the campaign in DIR (no other option)"
    )
    _add_cluster_options(rb, report_every=False)
    note_option_defaults(rb)  # --summary DIR refuses the others, which it would ignore
    rb.set_defaults(handler=Handler("lensopt.cli.handlers.bench:run_robustness_campaign"))

    add_prescription_parser(sub, _add_cluster_options)

    rep = sub.add_parser("report", help="ranking table, win matrices and regret curves of a campaign")
    rep.add_argument("dir", metavar="DIR", help="campaign directory")
    rep.add_argument("--out", metavar="DIR", help="where to write the report (default DIR/report)")
    rep.add_argument(
        "--alpha", type=_positive_float, default=5e-4, help="significance level of the pairwise tests (default 5e-4)"
    )
    rep.set_defaults(handler=Handler("lensopt.cli.handlers.bench_report:run_report"))

    s = sub.add_parser("rescale", help="regenerate the rescaling constants of the test functions")
    s.add_argument("--seed", type=_non_negative_int, default=0)
    s.add_argument(
        "--samples", type=_at_least_two, default=50_000, help="draws per statistic, at least 2 (default 50000)"
    )
    s.add_argument("--out", metavar="FILE", help="default: data/benchmark-rescaling.json")
    s.add_argument(
        "--fit-kernels",
        action="store_true",
        help="also fit each function's kernel hyperparameters by maximum likelihood "
        "on 1000 samples, as the paper did (about half a minute per function)",
    )
    s.set_defaults(handler=Handler("lensopt.cli.handlers.bench:run_rescale"))

    add_machine_parsers(sub)
