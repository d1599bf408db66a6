"""``lensopt bench prescription``'s handler: the full prescription's campaign (issue 16), run or
summarized (its options: :mod:`lensopt.cli.bench_prescription`)."""

from __future__ import annotations

import shlex

from lensopt.bench import prescription, prescription_summary
from lensopt.bench.prescription_spec import get_setting, prescription_specs
from lensopt.bench.spec import HELD_OUT_FIRST_SEED, split_of
from lensopt.cli.bench_prescription import DEFAULT_RULES_BY_FEEDBACK
from lensopt.cli.handlers.bench import run_specs
from lensopt.cli.handlers.bench_report import summarize_after_runs, summarize_only
from lensopt.refraction.steps import is_whole_axis_step


def run_prescription_campaign(args) -> int:
    if args.summary:
        return summarize_only(args, prescription_summary.write_summary, prescription.SUMMARY_NAME)
    if args.stop_confidence is not None and not 0 < args.stop_confidence < 1:
        raise ValueError(
            f"--stop-confidence must be strictly between 0 and 1 (e.g. 0.95), got {args.stop_confidence:g}"
        )
    if args.min_trials is not None and args.stop_confidence is None:
        raise ValueError("--min-trials needs --stop-confidence (the stopping rule whose stop is recorded)")
    if args.check_letters and args.stop_confidence is None:
        raise ValueError("--check-letters needs --stop-confidence (the stopping rule whose check it is)")
    if args.max_step is not None and not 0.25 <= args.max_step <= 4:
        raise ValueError(f"--max-step must be a step in [0.25, 4] D (e.g. 0.5), got {args.max_step:g}")
    if args.max_step is not None and args.feedback != "letters":
        raise ValueError("--max-step applies to --feedback letters only; leave it out for duels and rankings")
    if args.axis_step is not None and not is_whole_axis_step(args.axis_step):
        raise ValueError(f"--axis-step must be whole degrees that divide 180 (e.g. 5), got {args.axis_step:g}")
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
        check_letters=args.check_letters or None,
        axis_step_deg=args.axis_step,
    )
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
    if args.check_letters:
        command += ["--check-letters", str(args.check_letters)]
    if args.max_step is not None:
        command += ["--max-step", f"{args.max_step:g}"]
    if args.axis_step is not None:
        command += ["--axis-step", f"{args.axis_step:g}"]
    if args.tie_threshold:
        command += ["--tie-threshold", f"{args.tie_threshold:g}"]
    if args.same_answers is not None:
        command += ["--same-answers", *args.same_answers]
    manifest = {
        "campaign": "prescription",
        "split": split_of(args.first_seed),  # of every seed: prescription_specs refuses a campaign of both
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
        "axis_step_deg": args.axis_step,
        "tie_threshold": args.tie_threshold,
        "same_answers": args.same_answers,
        "stop": None
        if args.stop_confidence is None
        else {
            "confidence": args.stop_confidence,
            "min_trials": specs[0].min_trials,
            "max_trials": args.trials,
            **({"check_letters": args.check_letters} if args.check_letters else {}),
        },
        "command": shlex.join(command),
    }
    status = run_specs(args, "prescription", specs, manifest, prescription.run_prescription_campaign)
    return summarize_after_runs(args.out, prescription_summary.write_summary, prescription.SUMMARY_NAME, status)
