"""``lensopt bench prescription``: the full prescription's campaign (issue 16), run or summarized."""

from __future__ import annotations

import shlex

from lensopt.bench.prescription_spec import (
    DEFAULT_PATIENTS,
    DEFAULT_PRESCRIPTION_DUEL_RULES,
    DEFAULT_PRESCRIPTION_RANKING_RULES,
    DEFAULT_PRESCRIPTION_RULES,
    DEFAULT_SLOPE,
    DEFAULT_TRIALS,
    PRESCRIPTION_DUEL_RULES,
    PRESCRIPTION_FEEDBACK,
    PRESCRIPTION_RANKING_RULES,
    PRESCRIPTION_RULES,
    SAME_ANSWERS,
    SETTINGS,
    get_setting,
    prescription_specs,
)
from lensopt.bench.spec import HELD_OUT_FIRST_SEED, split_of
from lensopt.cli.arguments import check_output_folder
from lensopt.cli.arguments import non_negative_float as _non_negative_float
from lensopt.cli.arguments import non_negative_int as _non_negative_int
from lensopt.cli.arguments import positive_float as _positive_float
from lensopt.cli.arguments import positive_int as _positive_int
from lensopt.cli.bench_campaigns import report_runs
from lensopt.stopping import DEFAULT_MIN_TRIALS

#: The campaign's settings by name (the grid module imports no numpy: `lensopt --help` reads it).
PRESCRIPTION_SETTINGS = tuple(s.name for s in SETTINGS)
#: The rules run without --rules, per feedback.
DEFAULT_RULES_BY_FEEDBACK = {
    "letters": DEFAULT_PRESCRIPTION_RULES,
    "duel": DEFAULT_PRESCRIPTION_DUEL_RULES,
    "ranking": DEFAULT_PRESCRIPTION_RANKING_RULES,
}


def add_prescription_parser(sub, add_cluster_options) -> None:
    """The ``prescription`` subcommand of ``lensopt bench`` (``add_cluster_options``: the runner's
    options, shared with the other campaigns)."""
    ps = sub.add_parser(
        "prescription",
        help="the full prescription (M, J0, J45) on clinic patients: Bland–Altman, trials to 0.25 D",
        description="Simulated full refractions (sphere, cylinder, axis) with letters, duels or rankings on clinic patients "
        "(seeds from 100,000 are held out; each record says its split), with and without a starting "
        "autorefraction and accommodation; every trial is scored. Prints and writes the summary: "
        "Bland–Altman of M, J0, J45 at 10/20/40/60/100 trials, trials to reach and stay <= 0.25 D blur "
        "(and over the ideal observer's), the stopping rule, decision times, and a Bland–Altman plot.",
    )
    ps.add_argument(
        "--out",
        metavar="DIR",
        default="bench-results/prescription",
        help="campaign directory; runs already in it are skipped (default bench-results/prescription)",
    )
    ps.add_argument(
        "--settings",
        nargs="+",
        metavar="NAME",
        default=list(PRESCRIPTION_SETTINGS),
        help=f"settings (default: all: {', '.join(PRESCRIPTION_SETTINGS)})",
    )
    ps.add_argument(
        "--rules",
        nargs="+",
        metavar="RULE",
        help=f"rules: with letters of {', '.join(PRESCRIPTION_RULES)} (default: {' '.join(DEFAULT_PRESCRIPTION_RULES)}); "
        f"with duels of {', '.join(PRESCRIPTION_DUEL_RULES)} (default: {' '.join(DEFAULT_PRESCRIPTION_DUEL_RULES)}); "
        f"with rankings {', '.join(PRESCRIPTION_RANKING_RULES)}",
    )
    ps.add_argument(
        "--feedback",
        choices=PRESCRIPTION_FEEDBACK,
        default=PRESCRIPTION_FEEDBACK[0],
        help=f"what the patient answers: letters named or not (default), duels 'one or two, or the same?' or "
        f"rankings of three lenses, clearest first (no ideal observer, no stopping rule for duels and rankings; "
        f"default {PRESCRIPTION_FEEDBACK[0]})",
    )
    ps.add_argument(
        "--patients",
        type=_positive_int,
        default=DEFAULT_PATIENTS,
        metavar="N",
        help=f"patients (seeds) per setting and rule (default {DEFAULT_PATIENTS})",
    )
    ps.add_argument(
        "--first-seed",
        type=_non_negative_int,
        default=HELD_OUT_FIRST_SEED,
        metavar="SEED",
        help=f"seed of the first patient (default {HELD_OUT_FIRST_SEED:,}: held out; below it: the tuning "
        "split, recorded as such)",
    )
    ps.add_argument(
        "--trials",
        type=_positive_int,
        default=DEFAULT_TRIALS,
        metavar="N",
        help=f"trials per session (default {DEFAULT_TRIALS})",
    )
    ps.add_argument(
        "--slope",
        type=_positive_float,
        default=DEFAULT_SLOPE,
        metavar="A",
        help=f"the patients' psychometric slope, logMAR⁻¹ (default {DEFAULT_SLOPE:g})",
    )
    ps.add_argument(
        "--lapse",
        type=_non_negative_float,
        default=0.0,
        metavar="L",
        help="the patients' lapse rate, in [0, 0.5) (default 0)",
    )
    ps.add_argument(
        "--stop-confidence",
        type=_positive_float,
        metavar="P",
        help="also record where the stopping rule at this confidence, in (0, 1), would have stopped "
        "(the sessions run the whole budget; default: no stopping rule)",
    )
    ps.add_argument(
        "--min-trials",
        type=_positive_int,
        metavar="N",
        help=f"the stopping rule's minimum trials (with --stop-confidence; default {DEFAULT_MIN_TRIALS})",
    )
    ps.add_argument(
        "--max-step",
        type=_positive_float,
        metavar="D",
        help="travel limit of a manual phoropter: the largest change of M, J0 and J45 between consecutive "
        "trials, in [0.25, 4] D (letter rules; the ideal observer runs without; default: no limit)",
    )
    ps.add_argument(
        "--tie-threshold",
        type=_non_negative_float,
        default=0.0,
        metavar="DELTA",
        help="duels: the patients say 'the same' when their noisy utilities differ by less than DELTA logit "
        "units, in [0, 20] (default 0: never)",
    )
    ps.add_argument(
        "--same-answers",
        nargs="+",
        choices=SAME_ANSWERS,
        metavar="HOW",
        help=f"duels: how the optimizer tells 'the same', one run per value on the same patients: "
        f"{' or '.join(SAME_ANSWERS)} (default: the optimizer's, {SAME_ANSWERS[0]})",
    )
    ps.add_argument("--summary", metavar="DIR", help="only print (and write) the summary of the campaign in DIR")
    add_cluster_options(ps, report_every=False)
    ps.set_defaults(handler=run_prescription_campaign)


def run_prescription_campaign(args) -> int:
    # deferred: imports the optimizers, numpy and scipy (`lensopt --help` must not)
    from lensopt.bench.prescription import SUMMARY_NAME, run_prescription_campaign
    from lensopt.bench.prescription_summary import write_summary

    if args.summary:
        _, text = write_summary(args.summary)
        print(text)
        print(f"summary: {args.summary}/{SUMMARY_NAME}")
        return 0
    if args.stop_confidence is not None and not 0 < args.stop_confidence < 1:
        raise ValueError(
            f"--stop-confidence must be strictly between 0 and 1 (e.g. 0.95), got {args.stop_confidence:g}"
        )
    if args.min_trials is not None and args.stop_confidence is None:
        raise ValueError("--min-trials needs --stop-confidence (the stopping rule whose stop is recorded)")
    if args.max_step is not None and not 0.25 <= args.max_step <= 4:
        raise ValueError(f"--max-step must be a step in [0.25, 4] D (e.g. 0.5), got {args.max_step:g}")
    if args.max_step is not None and args.feedback != "letters":
        raise ValueError("--max-step applies to --feedback letters only")
    if args.feedback != "duel" and (args.tie_threshold or args.same_answers is not None):
        raise ValueError("--tie-threshold and --same-answers apply to --feedback duel only")
    if args.tie_threshold > 20:
        raise ValueError(f"--tie-threshold must be in [0, 20] logit units (e.g. 1), got {args.tie_threshold:g}")
    if args.same_answers is not None and len(set(args.same_answers)) != len(args.same_answers):
        raise ValueError("--same-answers lists a value twice")
    if args.lapse >= 0.5:
        raise ValueError(f"--lapse must be in [0, 0.5) (e.g. 0.02), got {args.lapse:g}")
    settings = [get_setting(name) for name in args.settings]
    rules = list(DEFAULT_RULES_BY_FEEDBACK[args.feedback]) if args.rules is None else list(args.rules)
    specs = prescription_specs(
        settings,
        rules,
        n_patients=args.patients,
        first_seed=args.first_seed,
        n_trials=args.trials,
        slope=args.slope,
        lapse=args.lapse,
        feedback=args.feedback,
        stop_confidence=args.stop_confidence,
        min_trials=args.min_trials,
        max_step_d=args.max_step,
        tie_threshold=args.tie_threshold,
        same_answers=(None,) if args.same_answers is None else tuple(args.same_answers),
    )
    seeds = range(args.first_seed, args.first_seed + args.patients)
    splits = sorted({split_of(s) for s in seeds})
    command = [
        "lensopt",
        "bench",
        "prescription",
        "--out",
        args.out,
        "--settings",
        *args.settings,
        "--rules",
        *rules,
        "--feedback",
        args.feedback,
        "--patients",
        str(args.patients),
        "--first-seed",
        str(args.first_seed),
        "--trials",
        str(args.trials),
        "--slope",
        f"{args.slope:g}",
        "--lapse",
        f"{args.lapse:g}",
    ]
    if args.stop_confidence is not None:
        command += ["--stop-confidence", f"{args.stop_confidence:g}"]
        command += ["--min-trials", str(specs[0].min_trials)]
    if args.max_step is not None:
        command += ["--max-step", f"{args.max_step:g}"]
    if args.tie_threshold:
        command += ["--tie-threshold", f"{args.tie_threshold:g}"]
    if args.same_answers is not None:
        command += ["--same-answers", *args.same_answers]
    manifest = {
        "campaign": "prescription",
        "split": splits[0] if len(splits) == 1 else splits,
        "first_seed": args.first_seed,
        "held_out_first_seed": HELD_OUT_FIRST_SEED,
        "settings": [s.to_dict() for s in settings],
        "rules": rules,
        "feedback": args.feedback,
        "n_patients": args.patients,
        "n_trials": args.trials,
        "slope": args.slope,
        "lapse": args.lapse,
        "max_step_d": args.max_step,
        "tie_threshold": args.tie_threshold,
        "same_answers": args.same_answers,
        "stop": None
        if args.stop_confidence is None
        else {"confidence": args.stop_confidence, "min_trials": specs[0].min_trials, "max_trials": args.trials},
        "command": shlex.join(command),
    }
    check_output_folder("--out", args.out)
    summary = run_prescription_campaign(
        specs,
        args.out,
        manifest=manifest,
        scheduler=args.scheduler,
        n_workers=args.workers,
        local_sync=args.local_sync,
        progress=not args.no_progress,
    )
    status = report_runs("prescription", args.out, summary)
    try:
        _, text = write_summary(args.out)
    except ValueError:  # no finished run to summarize
        return status
    print(text)
    print(f"summary: {args.out}/{SUMMARY_NAME}")
    return status
