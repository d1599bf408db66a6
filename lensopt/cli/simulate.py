"""``lensopt simulate``: a simulated patient through a whole refraction session."""

from __future__ import annotations

import json
import sys

from lensopt.cli.arguments import finite_float as _finite_float
from lensopt.cli.arguments import non_negative_float as _non_negative_float
from lensopt.cli.arguments import non_negative_int as _non_negative_int
from lensopt.cli.arguments import positive_float as _positive_float
from lensopt.cli.arguments import positive_int as _positive_int
from lensopt.settings import ALL_RULES, INFERENCE_METHODS

#: What the simulated patient answers.
FEEDBACK_MODES = ("letters", "duel", "ranking")
DUEL_MODELS = ("probit", "ties")
DEFAULT_RULES = {"letters": "ucb-ald", ("duel", "probit"): "muc-ald", ("duel", "ties"): "mpes-ald",
                 "ranking": "mpes-ald"}


def _rules(feedback, duel_model="probit"):
    if feedback == "letters":
        return ALL_RULES
    if feedback == "duel" and duel_model == "probit":
        from lensopt.preference import CONTEXTUAL_RULES

        return CONTEXTUAL_RULES
    return ("mpes-ald", "random")


def _default_rule(feedback, duel_model):
    return DEFAULT_RULES[(feedback, duel_model) if feedback == "duel" else feedback]


def register(subparsers) -> None:
    p = subparsers.add_parser(
        "simulate", help="run a simulated patient through a refraction session",
        description="A simulated patient (METHOD.md §1) answers the optimizer's letters. Prints a summary, "
                    "or one JSON object with --json.",
    )
    p.add_argument("--feedback", choices=FEEDBACK_MODES, default="letters",
                   help="letters: the patient names a letter (binary, default); duel: the patient "
                        "says which of two lenses makes the letters clearer (or that they look the "
                        "same); ranking: the patient orders three lenses, clearest first")
    p.add_argument("--duel-model", choices=DUEL_MODELS, default="probit",
                   help="with duels: probit (GP preference learning; 'same' answers are dropped, "
                        "default) or ties (Nguyen et al. 2021, every answer used)")
    p.add_argument("--tie-threshold", type=_non_negative_float, default=0.0, metavar="DELTA",
                   help="with duels: the patient answers 'the same' when the noisy utilities differ "
                        "by less than DELTA (default 0: never)")
    p.add_argument("--rule", metavar="RULE",
                   help=f"acquisition rule: with letters one of {', '.join(ALL_RULES)} (default "
                        f"ucb-ald); with probit duels one of {', '.join(_rules('duel'))} (default "
                        "muc-ald); with the tie model or rankings mpes-ald (default) or random")
    p.add_argument("--trials", type=_positive_int, default=100, help="number of trials (default 100)")
    p.add_argument("--slope", type=_positive_float, default=5.0, help="psychometric slope, logMAR⁻¹ (default 5)")
    p.add_argument("--seed", type=_non_negative_int, default=0, help="seed of the patient and the optimizer")
    p.add_argument("--true-sphere", type=_finite_float, metavar="D", help="patient's true sphere correction (D)")
    p.add_argument("--true-cylinder", type=_finite_float, metavar="D", help="patient's true cylinder correction (D)")
    p.add_argument("--n-alternatives", type=_positive_int, default=26, help="letters to choose from (default 26)")
    p.add_argument("--lapse", type=float, default=0.0, help="patient's lapse rate (default 0)")
    p.add_argument("--inference", choices=INFERENCE_METHODS, default="laplace")
    p.add_argument("--sphere-bounds", type=_finite_float, nargs=2, metavar=("LO", "HI"), default=(-4.0, 4.0))
    p.add_argument("--cylinder-bounds", type=_finite_float, nargs=2, metavar=("LO", "HI"), default=(-4.0, 4.0))
    p.add_argument("--letter-bounds", type=_finite_float, nargs=2, metavar=("LO", "HI"), default=(-1.0, 2.0),
                   help="letter sizes, logMAR (default -1 2)")
    p.add_argument("--lens-step", type=_positive_float, metavar="D", help="round lenses to this step (e.g. 0.25)")
    p.add_argument("--reference-context", default="adaptive", metavar="LOGMAR|adaptive|upper",
                   help="letter size s₀ of the x-step: adaptive (default: the model's threshold at its "
                        "best lens), upper (the largest letter), or a logMAR value")
    p.add_argument("--hyperparameters", metavar="FILE",
                   help="a JSON file with a 'kernel' entry (as in data/refraction-hyperparameters.json)")
    p.add_argument("--beta", type=_non_negative_float, metavar="B",
                   help="β of UCB_Φ for letter trials (default Φ⁻¹(0.99) ≈ 2.326; the paper's Φ⁻¹(0.95) ≈ 1.645)")
    p.add_argument("--json", action="store_true", help="print one JSON object instead of a summary")
    p.set_defaults(handler=run)


def _reference_context(text):
    if text == "adaptive":
        return "adaptive"
    if text == "upper":
        return None
    try:
        return float(text)
    except ValueError:
        raise ValueError(f"--reference-context must be adaptive, upper or a logMAR value, got {text!r}") from None


def _load_kernel(path):
    try:
        with open(path) as handle:
            return json.load(handle)["kernel"]
    except (OSError, ValueError, KeyError, TypeError) as exc:
        raise ValueError(f"cannot read hyperparameters from {path} ({exc}); give a JSON file with a "
                         "'kernel' entry like data/refraction-hyperparameters.json") from None


def run(args) -> int:
    from lensopt.refraction import RefractionOptimizer
    from lensopt.simulation import make_patient, simulate_session

    for name in ("sphere_bounds", "cylinder_bounds", "letter_bounds"):
        lo, hi = getattr(args, name)
        if lo >= hi:
            raise ValueError(f"--{name.replace('_', '-')} is reversed or empty: {lo} must be below {hi}")
    if (args.true_sphere is None) != (args.true_cylinder is None):
        raise ValueError("give both --true-sphere and --true-cylinder, or neither")
    true = None if args.true_sphere is None else (args.true_sphere, args.true_cylinder)
    rule = args.rule or _default_rule(args.feedback, args.duel_model)
    allowed = _rules(args.feedback, args.duel_model)
    if rule not in allowed:
        mode = f"{args.feedback} ({args.duel_model} model)" if args.feedback == "duel" else args.feedback
        raise ValueError(f"--rule {rule} does not work with --feedback {mode}; "
                         f"choose from: {', '.join(allowed)}")
    if args.feedback != "duel" and (args.tie_threshold or args.duel_model != "probit"):
        raise ValueError("--tie-threshold and --duel-model apply to --feedback duel only")
    args.rule = rule
    reference = _reference_context(args.reference_context)
    hyperparameters = None if args.hyperparameters is None else _load_kernel(args.hyperparameters)
    patient = make_patient(args.seed, slope=args.slope, true_correction_d=true,
                           n_alternatives=args.n_alternatives, lapse=args.lapse)
    if args.feedback != "letters" and (args.reference_context != "adaptive" or hyperparameters is not None
                                       or args.beta is not None):
        raise ValueError("--reference-context, --hyperparameters and --beta apply to --feedback letters only")
    if args.feedback == "duel":
        from functools import partial

        from lensopt.duel_refraction import DuelRefractionOptimizer
        from lensopt.simulation import simulate_duel_session

        optimizer = DuelRefractionOptimizer(
            rule=rule, seed=args.seed, sphere_bounds_d=tuple(args.sphere_bounds),
            cylinder_bounds_d=tuple(args.cylinder_bounds), letter_bounds_logmar=tuple(args.letter_bounds),
            lens_step_d=args.lens_step, inference=args.inference, model=args.duel_model,
        )
        session = partial(simulate_duel_session, tie_threshold=args.tie_threshold)
    elif args.feedback == "ranking":
        from lensopt.ranking_refraction import RankingRefractionOptimizer
        from lensopt.simulation import simulate_ranking_session

        optimizer = RankingRefractionOptimizer(
            rule=rule, seed=args.seed, sphere_bounds_d=tuple(args.sphere_bounds),
            cylinder_bounds_d=tuple(args.cylinder_bounds), letter_bounds_logmar=tuple(args.letter_bounds),
            lens_step_d=args.lens_step,
        )
        session = simulate_ranking_session
    else:
        optimizer = None
        session = simulate_session
    optimizer = optimizer or RefractionOptimizer(
        rule=args.rule, seed=args.seed, sphere_bounds_d=tuple(args.sphere_bounds),
        cylinder_bounds_d=tuple(args.cylinder_bounds), letter_bounds_logmar=tuple(args.letter_bounds),
        lens_step_d=args.lens_step, inference=args.inference, n_alternatives=args.n_alternatives,
        reference_context=reference, hyperparameters=hyperparameters,
        **({} if args.beta is None else {"beta": args.beta}),
    )
    if args.json:
        result = session(patient, optimizer, args.trials)
        extra = {"duel_model": args.duel_model, "tie_threshold": args.tie_threshold} if args.feedback == "duel" else {}
        print(json.dumps({"feedback": args.feedback, **extra, **result.to_dict()}))
        return 0

    from tqdm import tqdm

    with tqdm(total=args.trials, desc=f"{args.rule} trials", unit="trial", file=sys.stderr) as bar:
        result = session(patient, optimizer, args.trials, progress=lambda t: bar.update(1))
    s, c = result.true_correction_d
    bs, bc = result.final.best_lens_d
    lat = result.latency_ms
    kind = {"duel": "duel refraction", "ranking": "ranking refraction"}.get(args.feedback, "refraction")
    print(f"Simulated {kind}: rule {result.rule}, seed {result.seed}, {result.trials} trials, slope {args.slope:g}")
    print(f"  patient's correction  S {s:+.2f} D   C {c:+.2f} D")
    print(f"  best lens found       S {bs:+.2f} D   C {bc:+.2f} D"
          f"   (errors {result.final.sphere_error_d:.2f} D, {result.final.cylinder_error_d:.2f} D)")
    print(f"  acuity error          {result.final.va_error_logmar:.4f} logMAR with that lens")
    for score in result.checkpoints[:-1]:
        print(f"    after {score.trials:>3} trials: {score.va_error_logmar:.4f} logMAR")
    print(f"  decision time         median {lat['median']:.1f} ms, p95 {lat['p95']:.1f} ms, max {lat['max']:.1f} ms")
    return 0
