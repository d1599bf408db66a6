"""What `lensopt bench` runs: the campaign handlers (build the specs, run them on Dask, report).
The parser, and the campaigns' defaults, are in :mod:`lensopt.cli.bench` and
:mod:`lensopt.cli.defaults`."""

from __future__ import annotations

import math
import shlex
import sys
from pathlib import Path

from lensopt.bench import robustness, robustness_summary
from lensopt.bench.binary_protocol import BINARY_RULES
from lensopt.bench.functions import FUNCTIONS, get_function
from lensopt.bench.problems import PAPER_SLOPES, refraction_problem_name
from lensopt.bench.reference_table import DEFAULT_TABLE_PATH, compute_rescaling_table, write_rescaling_table
from lensopt.bench.runner import run_campaign
from lensopt.bench.spec import HELD_OUT_FIRST_SEED, RunSpec, split_of, split_of_seeds
from lensopt.binary.settings import ALL_RULES
from lensopt.cli.arguments import check_output_folder
from lensopt.cli.defaults import FEEDBACK_RULES
from lensopt.cli.handlers.bench_report import report_runs, summarize_after_runs, summarize_only
from lensopt.cli.handlers.json_output import check_replaced_json_output
from lensopt.cli.handlers.kernel_file import load_kernel
from lensopt.preference import BATCH_RULES, CONTEXTUAL_RULES, DUEL_RULES
from lensopt.reference_data import rewritable_data_file
from lensopt.refraction.letters import REFRACTION_BETA


def _check_rules(rules) -> list[str]:
    return _check_campaign_rules(rules, ALL_RULES)


def _exact(value: float) -> str:
    """A number as a recorded command gives it: short (``5``, ``1.5``) when that is the same number,
    else every digit (``2.3263478740408408``), so that the command run again resumes its campaign
    instead of being refused as other settings."""
    short = f"{value:g}"
    return short if float(short) == value else repr(float(value))


def _command(args, campaign: str, *options: str) -> str:
    """The command line of a campaign on the record: its run options, then the campaign's own
    ``options`` (its problems, slopes...), then ``--report-every``."""
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
        *options,
        "--report-every",
        str(args.report_every),
    ]
    return shlex.join(parts)


def check_where_to_run(args) -> None:
    """Refuse, in one line, ``--workers``, ``--scheduler`` and ``--local-sync`` given together where
    one of them would be ignored: ``--local-sync`` starts no cluster and connects to none, and a
    running scheduler's workers are its own (``--workers`` sizes the local cluster only)."""
    if args.local_sync and args.workers is not None:
        raise ValueError(
            f"--workers {args.workers} sizes a local Dask cluster and --local-sync runs without one, one run "
            "after the other in this process; leave out one of them"
        )
    if args.local_sync and args.scheduler:
        raise ValueError(
            f"--scheduler {args.scheduler} runs on a Dask cluster and --local-sync without one, in this "
            "process; leave out one of them"
        )
    if args.scheduler and args.workers is not None:
        raise ValueError(
            f"--workers {args.workers} sizes the local cluster, and --scheduler {args.scheduler} uses a running "
            "one, whose workers are started with it; leave out --workers"
        )


def check_initial_below_iterations(args) -> None:
    """Refuse, in one line, ``--initial`` at or above ``--iterations``: every trial would be one of
    the random first ones, and no rule would be tested."""
    if args.initial >= args.iterations:
        raise ValueError(
            f"--initial {args.initial} is not below --iterations {args.iterations}: every trial would be a "
            f"random first one and no rule would be tested; give --initial below {args.iterations} or raise "
            "--iterations"
        )


def run_specs(args, campaign: str, specs, manifest: dict, runner=run_campaign) -> int:
    """Run ``specs`` with ``runner`` (:func:`lensopt.bench.runner.run_campaign`, or a campaign's
    own) on the cluster of ``args`` into ``args.out`` and say what was done; 1 if a run failed."""
    check_where_to_run(args)
    check_output_folder("--out", args.out)

    def say_plan(n_total: int, n_done: int) -> None:  # without the bar (batch logs): what is to run, now
        print(f"lensopt bench {campaign}: {n_total} runs: {n_done} already done, {n_total - n_done} to run", flush=True)

    # a bar on a terminal only: in a batch log (nohup, a cluster's job) it is a line of carriage
    # returns, and the log would never say what the job set out to do
    bar = not args.no_progress and sys.stderr.isatty()
    summary = runner(
        specs,
        args.out,
        manifest=manifest,
        scheduler=args.scheduler,
        n_workers=args.workers,
        local_sync=args.local_sync,
        progress=bar,
        on_plan=None if bar else say_plan,
    )
    return report_runs(campaign, args.out, summary)


def _run(args, campaign: str, specs, manifest: dict) -> int:
    if run_specs(args, campaign, specs, manifest):
        return 1
    print(f"report: lensopt bench report {shlex.quote(args.out)}")
    return 0


def _check_campaign_rules(rules, allowed, campaign: str | None = None) -> list[str]:
    """``rules`` if every one is in ``allowed`` and none is given twice; a one-line ValueError otherwise
    (naming ``campaign`` when given)."""
    unknown = [r for r in rules if r not in allowed]
    if unknown:
        where = f" for {campaign}" if campaign else ""
        raise ValueError(f"unknown rule(s) {', '.join(unknown)}{where}; choose from: {', '.join(allowed)}")
    if len(set(rules)) != len(rules):
        raise ValueError("--rules lists a rule twice")
    return list(rules)


def _run_function_campaign(args, campaign: str, rules: list[str], **spec_options) -> int:
    """A campaign on the test functions (``functions``, the duel campaigns, ``binary``): one
    :class:`RunSpec` per seed, function and rule, with ``spec_options`` (e.g. ``beta``) in every
    spec, in the manifest and, exactly (``repr``), in its command."""
    check_initial_below_iterations(args)
    problems = [get_function(p).slug for p in args.problems] if args.problems else list(FUNCTIONS)
    specs = [
        RunSpec(
            campaign,
            p,
            r,
            seed,
            args.iterations,
            args.initial,
            hyperparameters=args.hyperparameters,
            report_every=args.report_every,
            **spec_options,
        )
        for seed in range(args.seeds)
        for p in problems
        for r in rules
    ]
    options = "".join(f" --{name} {value!r}" for name, value in spec_options.items())  # exact: reruns resume
    manifest = {
        "campaign": campaign,
        "rules": rules,
        "problems": problems,
        "seeds": args.seeds,
        "n_iterations": args.iterations,
        "n_initial": args.initial,
        "hyperparameters": args.hyperparameters,
        "report_every": args.report_every,
        **spec_options,
        "command": _command(args, campaign, "--problems", *[str(p) for p in problems])
        + f" --hyperparameters {args.hyperparameters}"
        + options,
    }
    return _run(args, campaign, specs, manifest)


def run_functions(args) -> int:
    return _run_function_campaign(args, "functions", _check_rules(args.rules))


def run_binary_campaign(args) -> int:
    return _run_function_campaign(
        args, "binary", _check_campaign_rules(args.rules, BINARY_RULES, "binary"), beta=args.beta
    )


def run_duel_campaign(args) -> int:
    allowed = {
        "duels": DUEL_RULES,
        "contextual-duels": CONTEXTUAL_RULES,
        "batch-duels": tuple(r for r in DUEL_RULES if r in BATCH_RULES),
    }[args.campaign]
    return _run_function_campaign(args, args.campaign, _check_campaign_rules(args.rules, allowed, args.campaign))


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
    if args.beta is None:
        args.beta = REFRACTION_BETA
    check_initial_below_iterations(args)
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
    split = split_of_seeds(0, args.seeds - 1)  # the patients of seeds 0, 1, ...: the tuning split
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
        "split": split,
        "rules": rules,
        "problems": names,
        "slopes": slopes,
        "seeds": args.seeds,
        "n_iterations": args.iterations,
        "n_initial": args.initial,
        "report_every": args.report_every,
        "beta": args.beta,
        "command": _command(args, "refraction", "--slopes", *[_exact(a) for a in slopes])
        + f" --beta {_exact(args.beta)}",
    }
    return _run(args, "refraction", specs, manifest)


def run_feedback_campaign(args) -> int:
    check_initial_below_iterations(args)
    unknown = [r for r in args.rules if r not in FEEDBACK_RULES]
    if unknown:
        raise ValueError(f"unknown feedback mode(s) {', '.join(unknown)}; choose from: {', '.join(FEEDBACK_RULES)}")
    if len(set(args.rules)) != len(args.rules):
        raise ValueError("--rules lists a mode twice")
    name = refraction_problem_name(args.slope)
    split = split_of_seeds(0, args.seeds - 1)  # the patients of seeds 0, 1, ...: the tuning split
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
    command = _command(args, "feedback", "--slope", _exact(args.slope), "--tie-threshold", _exact(args.tie_threshold))
    manifest = {
        "campaign": "feedback",
        "split": split,
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


def run_robustness_campaign(args) -> int:
    if args.summary:
        return summarize_only(args, robustness_summary.write_summary, robustness.SUMMARY_NAME)
    if not 0 < args.stop_confidence < 1:
        raise ValueError(
            f"--stop-confidence must be strictly between 0 and 1 (e.g. 0.95), got {args.stop_confidence:g}"
        )
    if args.model_lapse is not None and args.model_lapse >= 0.5:
        raise ValueError(f"--model-lapse must be in [0, 0.5) (e.g. 0.02), got {args.model_lapse:g}")
    first_seed = 0 if args.tuning else args.first_seed
    rules = list(args.rules)
    kernel = None if args.hyperparameters is None else load_kernel(args.hyperparameters)
    if kernel is not None and not set(rules) & set(robustness.GP_RULES):
        raise ValueError(
            f"--hyperparameters sets the kernel of {' and '.join(robustness.GP_RULES)}, and --rules has neither"
        )
    specs = robustness.robustness_specs(
        args.conditions,
        rules,
        first_seed=first_seed,
        max_patients=args.patients,
        n_trials=args.trials,
        n_initial=args.initial,
        stop_confidence=args.stop_confidence,
        min_trials=args.min_trials,
        check_letters=args.check_letters or None,
        model_lapse=args.model_lapse,
        kernel=kernel,
    )
    # the GP rules begin with --initial random trials (the acuity law and the ideal observer take none)
    random_start = (*robustness.GP_RULES, *robustness.EXTRA_RULES)
    random_only = [s for s in specs if s.rule in random_start and s.n_initial >= s.n_iterations]
    if random_only:  # as --initial at or above --iterations in the other campaigns
        raise ValueError(
            f"--initial {args.initial} is not below the trials of {', '.join(sorted({s.problem for s in random_only}))}: "
            f"every trial of {', '.join(sorted({s.rule for s in random_only}))} would be a random first one; "
            "lower --initial or raise --trials"
        )
    short = sorted({spec.problem for spec in specs if spec.n_iterations < args.min_trials})
    if short:  # as bench prescription and decision-time refuse it: a rule that cannot stop is not tested
        raise ValueError(
            f"--min-trials {args.min_trials} exceeds the trials of {', '.join(short)}: the stopping rule could "
            "never stop there; lower --min-trials or raise --trials"
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
        _exact(args.stop_confidence),
        "--min-trials",
        str(args.min_trials),
    ]
    command += ["--patients", str(args.patients)] if args.patients else []
    command += ["--trials", str(args.trials)] if args.trials else []
    command += ["--model-lapse", _exact(args.model_lapse)] if args.model_lapse is not None else []
    command += ["--hyperparameters", args.hyperparameters] if args.hyperparameters is not None else []
    command += ["--check-letters", str(args.check_letters)] if args.check_letters else []
    manifest = {
        "campaign": "robustness",
        "split": split,
        "first_seed": first_seed,
        "held_out_first_seed": HELD_OUT_FIRST_SEED,
        "rules": rules,
        # as run: each condition's patients capped by --patients, its trials by --trials (the defaults
        # read as the size run)
        "conditions": [robustness.condition_as_run(c, args.patients, args.trials).to_dict() for c in args.conditions],
        "max_patients": args.patients,
        "n_trials": args.trials,
        "n_initial": args.initial,
        "stop": {
            "confidence": args.stop_confidence,
            "min_trials": args.min_trials,
            **({"check_letters": args.check_letters} if args.check_letters else {}),
        },
        "model_lapse": args.model_lapse,
        "kernel": kernel,
        "command": shlex.join(command),
        "note": "model_lapse null: the optimizer's default; each record holds the settings "
        "its optimizer ran with (optimizer_settings)",
    }
    status = _run(args, "robustness", specs, manifest)
    return summarize_after_runs(args.out, robustness_summary.write_summary, robustness.SUMMARY_NAME, status)


def run_rescale(args) -> int:
    out = Path(args.out) if args.out else rewritable_data_file(DEFAULT_TABLE_PATH.name, "--out")
    # refused before the sampling: `bench rescale --out sessions.db` wrote over the database, every
    # session lost, and said "wrote"
    check_replaced_json_output("--out", out, "rescaling table", "the table", key="functions")
    table = compute_rescaling_table(
        seed=args.seed,
        n_samples=args.samples,
        fit_kernels=args.fit_kernels,
        progress=(lambda slug: print(f"  {slug}", file=sys.stderr)) if args.fit_kernels else None,
    )
    path = write_rescaling_table(table, out)
    n_log = sum(e["take_log"] for e in table["functions"].values())
    print(
        f"lensopt bench rescale: wrote {path} ({len(table['functions'])} functions, "
        f"{n_log} log-transformed, seed {args.seed}, {args.samples} samples each)"
    )
    return 0
