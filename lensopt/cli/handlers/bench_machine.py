"""What `lensopt bench decision-time` and `lensopt bench cli-startup` run: the machine's speed, not a
campaign (their parser: :mod:`lensopt.cli.bench_machine`)."""

from __future__ import annotations

import json

from lensopt.bench import decision_time
from lensopt.bench.startup import format_report as format_startup_report
from lensopt.bench.startup import measure


def run_decision_time(args) -> int:
    defaults = {
        "prescription": "bracket-ald",
        "duel": "muc-ald",
        "prescription-duel": "muc-ald",
        "prescription-ranking": "mpes-ald",
    }
    rule = args.rule or defaults.get(args.search, "ucb-ald")  # each search's default rule
    if not args.through_handler:
        given = [
            flag
            for flag, on in (("--no-lookahead", args.no_lookahead), ("--response-ms", args.response_ms is not None))
            if on
        ]
        if given:
            raise ValueError(
                f"{' and '.join(given)} {'apply' if len(given) > 1 else 'applies'} with --handler only (the handler's timing); add --handler or leave them out"
            )
    result = decision_time.run_decision_time(
        rule=rule,
        processes=args.processes,
        trials=args.trials,
        seed=args.seed,
        numpy_first=args.numpy_first,
        limit=not args.no_limit,
        search=args.search,
        handler=args.through_handler,
        stop=args.stop,
        min_trials=args.min_trials,
        lookahead=not args.no_lookahead,
        response_ms=decision_time.DEFAULT_RESPONSE_MS if args.response_ms is None else args.response_ms,
        accommodation_d=None if args.accommodation is None else tuple(args.accommodation),
    )
    print(json.dumps(result) if args.json else decision_time.format_report(result))
    return 0


def run_cli_startup(args) -> int:
    result = measure(args.runs)
    print(json.dumps(result) if args.json else format_startup_report(result))
    return 0
