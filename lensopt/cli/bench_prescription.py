"""``lensopt bench prescription``: the full prescription's campaign (issue 16), run or summarized."""

from __future__ import annotations

from lensopt.bench.prescription_spec import (
    DEFAULT_PATIENTS,
    DEFAULT_PRESCRIPTION_DUEL_RULES,
    DEFAULT_PRESCRIPTION_RANKING_RULES,
    DEFAULT_PRESCRIPTION_RULES,
    DEFAULT_SETTINGS,
    DEFAULT_SLOPE,
    DEFAULT_TRIALS,
    OLD_GLASSES_M_OFFSET_D,
    PRESCRIPTION_DUEL_RULES,
    PRESCRIPTION_FEEDBACK,
    PRESCRIPTION_RANKING_RULES,
    PRESCRIPTION_RULES,
    SAME_ANSWERS,
    SETTINGS,
)
from lensopt.bench.spec import HELD_OUT_FIRST_SEED
from lensopt.cli.arguments import Handler, note_option_defaults
from lensopt.cli.arguments import bench_count as _bench_count
from lensopt.cli.arguments import check_letters as _check_letters
from lensopt.cli.arguments import non_negative_float as _non_negative_float
from lensopt.cli.arguments import non_negative_int as _non_negative_int
from lensopt.cli.arguments import positive_float as _positive_float
from lensopt.cli.arguments import positive_int as _positive_int
from lensopt.stopping import DEFAULT_MIN_TRIALS

#: The campaign's settings by name (the grid module imports no numpy: `lensopt --help` reads it).
PRESCRIPTION_SETTINGS = tuple(s.name for s in SETTINGS)
#: Those asked for by name only: a start from old glasses, more minus than the autorefraction.
OLD_GLASSES_SETTINGS = tuple(name for name in PRESCRIPTION_SETTINGS if name not in DEFAULT_SETTINGS)
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
        default=list(DEFAULT_SETTINGS),
        help=f"settings (default: {', '.join(DEFAULT_SETTINGS)}; also {', '.join(OLD_GLASSES_SETTINGS)}: "
        f"a start {-OLD_GLASSES_M_OFFSET_D:g} D more minus than the autorefraction, old glasses)",
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
        type=_bench_count,
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
        "--check-letters",
        type=_check_letters,
        metavar="K",
        help="with --stop-confidence: the letter rules' stopping rule has K letters read through the "
        "reported lens before a stop (default: no check)",
    )
    ps.add_argument(
        "--max-step",
        type=_positive_float,
        metavar="D",
        help="travel limit of a manual phoropter: the largest change of M, J0 and J45 between consecutive "
        "trials, in [0.25, 4] D (letter rules; the ideal observer runs without; default: no limit)",
    )
    ps.add_argument(
        "--axis-step",
        type=_positive_float,
        metavar="DEG",
        help="round every axis the rules ask for and prescribe to DEG degrees, a whole number that divides "
        "180 (5: a trial frame's marks; the ideal observer runs at 1; default 1: a phoropter's dial)",
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
    ps.add_argument(
        "--summary", metavar="DIR", help="only print (and write) the summary of the campaign in DIR (no other option)"
    )
    add_cluster_options(ps, report_every=False)
    note_option_defaults(ps)  # --summary DIR refuses the others, which it would ignore
    ps.set_defaults(handler=Handler("lensopt.cli.handlers.bench_prescription:run_prescription_campaign"))
