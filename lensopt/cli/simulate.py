"""``lensopt simulate``: a simulated patient through a whole refraction session."""

from __future__ import annotations

import argparse
import json
import sys

from lensopt.cli.arguments import confidence as _confidence
from lensopt.cli.arguments import finite_float as _finite_float
from lensopt.cli.arguments import non_negative_float as _non_negative_float
from lensopt.cli.arguments import non_negative_int as _non_negative_int
from lensopt.cli.arguments import positive_float as _positive_float
from lensopt.cli.arguments import positive_int as _positive_int
from lensopt.cli.defaults import (
    ACUITY_LAW_RULE,
    ALL_RULES,
    CONTEXTUAL_DUEL_RULES,
    DEFAULT_MODEL_LAPSE,
    INFERENCE_METHODS,
    LETTER_BETA,
    PAPER_BETA_3,
    REFRACTION_BETA_3,
)
from lensopt.cli.simulate_prescription import add_prescription_arguments, full_prescription, run_prescription
from lensopt.stopping import StopRule

#: Largest ``--trials`` (as ``lensopt run``'s protocols allow).
MAX_TRIALS = 5000
#: Largest ``--n-alternatives``: a chart of more letters than a 1000-letter alphabet is a typo.
MAX_ALTERNATIVES = 1000
#: ``--stop`` given without a value.
DEFAULT_STOP_CONFIDENCE = 0.95
#: ``--min-trials`` when not given.
DEFAULT_MIN_TRIALS = 20
#: ``--trials`` when neither it nor ``--max-trials`` is given.
DEFAULT_TRIALS = 100
#: ``--inference`` when not given: EP for letters (the floored likelihood), Laplace for duels.
DEFAULT_INFERENCE = {"letters": "ep", "duel": "laplace", "ranking": "laplace"}

#: What the simulated patient answers: the kinds of :data:`lensopt.modes.registry.registry` (written
#: out so that ``lensopt --help`` does not import the optimizers; a test holds them equal).
FEEDBACK_MODES = ("letters", "duel", "ranking")
DUEL_MODELS = ("probit", "ties")
DEFAULT_RULES = {
    "letters": "ucb-ald",
    ("duel", "probit"): "muc-ald",
    ("duel", "ties"): "mpes-ald",
    "ranking": "mpes-ald",
}


def _rules(feedback, duel_model="probit"):
    if feedback == "letters":
        return (*ALL_RULES, ACUITY_LAW_RULE)
    if feedback == "duel" and duel_model == "probit":
        return CONTEXTUAL_DUEL_RULES
    return ("mpes-ald", "random")


def _default_rule(feedback, duel_model):
    return DEFAULT_RULES[(feedback, duel_model) if feedback == "duel" else feedback]


def _trials(text) -> int:
    try:  # the cap first, so that --trials 1000000000000 names it (not the size of any number)
        too_many = int(text) > MAX_TRIALS
    except ValueError:
        too_many = False
    if too_many:
        raise argparse.ArgumentTypeError(f"must be at most {MAX_TRIALS}, got {text}")
    return _positive_int(text)


def _alternatives(text) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(
            f"expected a whole number of letters (2 or more, e.g. 26), got {text!r}"
        ) from None
    if value > MAX_ALTERNATIVES:
        raise argparse.ArgumentTypeError(f"must be at most {MAX_ALTERNATIVES} letters (e.g. 26 or 10), got {value}")
    if value < 2:
        raise argparse.ArgumentTypeError(f"must be a whole number of letters, 2 or more (e.g. 26 or 10), got {value}")
    return value


def _rate(text) -> float:
    value = _finite_float(text)
    if not 0.0 <= value < 0.5:
        raise argparse.ArgumentTypeError(f"must be a rate in [0, 0.5) (e.g. 0.02), got {text}")
    return value


def register(subparsers) -> None:
    p = subparsers.add_parser(
        "simulate",
        help="run a simulated patient through a refraction session",
        description="A simulated patient (METHOD.md §1) answers the optimizer's letters. Prints a summary, "
        "or one JSON object with --json.",
    )
    p.add_argument(
        "--feedback",
        choices=FEEDBACK_MODES,
        default="letters",
        help="letters: the patient names a letter (binary, default); duel: the patient "
        "says which of two lenses makes the letters clearer (or that they look the "
        "same); ranking: the patient orders three lenses, clearest first",
    )
    p.add_argument(
        "--duel-model",
        choices=DUEL_MODELS,
        default="probit",
        help="with duels: probit (GP preference learning, default; 'same' answers are dropped in the "
        "two-parameter search and told as the duel answered once each way in the full prescription) "
        "or ties (Nguyen et al. 2021, every answer used)",
    )
    p.add_argument(
        "--tie-threshold",
        type=_non_negative_float,
        default=0.0,
        metavar="DELTA",
        help="with duels: the patient answers 'the same' when the noisy utilities differ "
        "by less than DELTA (default 0: never)",
    )
    p.add_argument(
        "--rule",
        metavar="RULE",
        help=f"acquisition rule: with letters one of {', '.join((*ALL_RULES, ACUITY_LAW_RULE))} (default "
        f"ucb-ald); with probit duels one of {', '.join(_rules('duel'))} (default "
        "muc-ald); with the tie model or rankings mpes-ald (default) or random",
    )
    p.add_argument(
        "--trials",
        type=_trials,
        metavar="N",
        help=f"number of trials, at most {MAX_TRIALS} (default {DEFAULT_TRIALS}; with --stop and "
        "--max-trials, the --max-trials)",
    )
    p.add_argument("--slope", type=_positive_float, default=5.0, help="psychometric slope, logMAR⁻¹ (default 5)")
    p.add_argument("--seed", type=_non_negative_int, default=0, help="seed of the patient and the optimizer")
    p.add_argument("--true-sphere", type=_finite_float, metavar="D", help="patient's true sphere correction (D)")
    p.add_argument("--true-cylinder", type=_finite_float, metavar="D", help="patient's true cylinder correction (D)")
    p.add_argument(
        "--n-alternatives",
        type=_alternatives,
        default=26,
        metavar="N",
        help="letters to choose from, 2 or more (default 26; guess rate 1/N for the patient and the model)",
    )
    p.add_argument(
        "--lapse", type=_rate, default=0.0, metavar="L", help="the patient's lapse rate, in [0, 0.5) (default 0)"
    )
    p.add_argument(
        "--model-lapse",
        type=_rate,
        metavar="L",
        help=f"the lapse rate the letter model assumes, in [0, 0.5) (default {DEFAULT_MODEL_LAPSE:g}); also the "
        "full prescription's duels through the acuity link (--start with --feedback duel)",
    )
    p.add_argument(
        "--inference", choices=INFERENCE_METHODS, help="GP inference (default: ep with letters, laplace with duels)"
    )
    p.add_argument(
        "--stop",
        type=_confidence,
        nargs="?",
        const=DEFAULT_STOP_CONFIDENCE,
        metavar="CONFIDENCE",
        help="letters: stop once the model is this sure (default 0.95) that its lens is within "
        "0.025 logMAR of the best lens, after --min-trials and at the latest at --max-trials",
    )
    p.add_argument(
        "--min-trials",
        type=_positive_int,
        metavar="N",
        help=f"with --stop: never stop before N trials (default {DEFAULT_MIN_TRIALS})",
    )
    p.add_argument(
        "--max-trials",
        type=_trials,
        metavar="N",
        help="with --stop: stop after N trials at the latest (default: --trials)",
    )
    p.add_argument("--sphere-bounds", type=_finite_float, nargs=2, metavar=("LO", "HI"), default=(-4.0, 4.0))
    p.add_argument("--cylinder-bounds", type=_finite_float, nargs=2, metavar=("LO", "HI"), default=(-4.0, 4.0))
    p.add_argument(
        "--letter-bounds",
        type=_finite_float,
        nargs=2,
        metavar=("LO", "HI"),
        default=(-1.0, 2.0),
        help="letter sizes, logMAR (default -1 2)",
    )
    p.add_argument("--lens-step", type=_positive_float, metavar="D", help="round lenses to this step (e.g. 0.25)")
    p.add_argument(
        "--reference-context",
        default="adaptive",
        metavar="LOGMAR|adaptive|upper",
        help="letter size s₀ of the x-step: adaptive (default: the model's threshold at its "
        "best lens), upper (the largest letter), or a logMAR value",
    )
    p.add_argument(
        "--hyperparameters",
        metavar="FILE",
        help="a JSON file with a 'kernel' entry (as in data/refraction-hyperparameters.json)",
    )
    p.add_argument(
        "--beta",
        type=_non_negative_float,
        metavar="B",
        help=f"β of UCB_Φ for letter trials (default {LETTER_BETA:g}, issue 14's letter model; the "
        f"probit model's Φ⁻¹(0.99) ≈ {REFRACTION_BETA_3}, the paper's Φ⁻¹(0.95) ≈ {PAPER_BETA_3})",
    )
    add_prescription_arguments(p)
    p.add_argument("--json", action="store_true", help="print one JSON object instead of a summary")
    p.set_defaults(handler=run)


def _stop_rule(args):
    """The :class:`lensopt.stopping.StopRule` of ``--stop``, ``--min-trials``, ``--max-trials`` (or None)."""
    if args.stop is None:
        if args.min_trials is not None or args.max_trials is not None:
            raise ValueError("--min-trials and --max-trials apply with --stop only; add --stop [CONFIDENCE]")
        return None
    if args.feedback != "letters":
        raise ValueError("--stop applies to --feedback letters only")
    min_trials = DEFAULT_MIN_TRIALS if args.min_trials is None else args.min_trials
    max_trials = (
        args.max_trials if args.max_trials is not None else (args.trials if args.trials is not None else DEFAULT_TRIALS)
    )
    if min_trials > max_trials:
        raise ValueError(
            f"--min-trials {min_trials} is more than the session's {max_trials} trials; "
            "lower --min-trials or raise --max-trials / --trials"
        )
    return StopRule(confidence=args.stop, min_trials=min_trials, max_trials=max_trials)


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
    """The ``kernel`` entry of ``--hyperparameters`` FILE, checked field by field (a one-line
    ValueError naming the file and the field otherwise)."""
    from lensopt.binary.settings import KernelSpec  # deferred: imports numpy (`lensopt --help` must not)

    fix = "give a JSON file with a 'kernel' entry like data/refraction-hyperparameters.json"
    try:
        with open(path, encoding="utf-8") as handle:
            kernel = json.load(handle)["kernel"]
    except (OSError, ValueError, KeyError, TypeError) as exc:
        raise ValueError(f"cannot read hyperparameters from {path} ({exc}); {fix}") from None
    try:
        KernelSpec.from_dict(kernel)
    except (ValueError, TypeError) as exc:
        raise ValueError(f"--hyperparameters {path}: bad 'kernel' entry ({exc}); {fix}") from None
    return kernel


#: Coarsest lens step accepted (D): phoropters step 0.125-0.25 D, trial-lens sets 0.25-0.5 D.
MAX_LENS_STEP_D = 1.0


def run(args) -> int:
    if args.lens_step is not None and args.lens_step > MAX_LENS_STEP_D:
        raise ValueError(
            f"--lens-step {args.lens_step:g} D is coarser than any phoropter; give at most {MAX_LENS_STEP_D:g} D "
            "(usually 0.25)"
        )
    if full_prescription(args):
        stop = _stop_rule(args)
        if args.trials is None:
            args.trials = stop.max_trials if stop is not None and args.max_trials is not None else DEFAULT_TRIALS
        if stop is not None and stop.max_trials > args.trials:
            raise ValueError(
                f"--max-trials {stop.max_trials} is more than --trials {args.trials}; raise --trials or lower --max-trials"
            )
        return run_prescription(args, stop)
    # deferred: these import the optimizers, numpy and scipy (`lensopt --help` must not)
    from lensopt.boxes import first_outside
    from lensopt.modes.registry import get_mode
    from lensopt.simulation import make_patient, simulate

    for name in ("sphere_bounds", "cylinder_bounds", "letter_bounds"):
        lo, hi = getattr(args, name)
        if lo >= hi:
            raise ValueError(f"--{name.replace('_', '-')} is reversed or empty: {lo} must be below {hi}")
    if (args.true_sphere is None) != (args.true_cylinder is None):
        raise ValueError("give both --true-sphere and --true-cylinder, or neither")
    true = None if args.true_sphere is None else (args.true_sphere, args.true_cylinder)
    box = (args.sphere_bounds, args.cylinder_bounds)
    if true is not None and (outside := first_outside(true, box)) is not None:
        flag, value, (low, high) = ("sphere", "cylinder")[outside], true[outside], box[outside]
        raise ValueError(
            f"--true-{flag} {value:g} is outside the lens box [{low:g}, {high:g}] D, where no "
            f"lens could correct it; give a value inside it or widen --{flag}-bounds"
        )
    rule = args.rule or _default_rule(args.feedback, args.duel_model)
    allowed = _rules(args.feedback, args.duel_model)
    if rule not in allowed:
        mode = f"{args.feedback} ({args.duel_model} model)" if args.feedback == "duel" else args.feedback
        raise ValueError(f"--rule {rule} does not work with --feedback {mode}; choose from: {', '.join(allowed)}")
    if args.feedback != "duel" and (args.tie_threshold or args.duel_model != "probit"):
        raise ValueError("--tie-threshold and --duel-model apply to --feedback duel only")
    args.rule = rule
    stop = _stop_rule(args)
    if args.trials is None:
        args.trials = stop.max_trials if stop is not None and args.max_trials is not None else DEFAULT_TRIALS
    if stop is not None and stop.max_trials > args.trials:
        raise ValueError(
            f"--max-trials {stop.max_trials} is more than --trials {args.trials}; raise --trials or lower --max-trials"
        )
    if args.feedback != "letters" and args.model_lapse is not None:
        raise ValueError("--model-lapse applies to --feedback letters only")
    inference = args.inference or DEFAULT_INFERENCE[args.feedback]
    reference = _reference_context(args.reference_context)
    hyperparameters = None if args.hyperparameters is None else _load_kernel(args.hyperparameters)
    patient = make_patient(
        args.seed, slope=args.slope, true_correction_d=true, n_alternatives=args.n_alternatives, lapse=args.lapse
    )
    if args.feedback != "letters" and (
        args.reference_context != "adaptive" or hyperparameters is not None or args.beta is not None
    ):
        raise ValueError("--reference-context, --hyperparameters and --beta apply to --feedback letters only")
    # the feedback mode's optimizer, given the options it takes (the checks above refuse the others)
    mode = get_mode(args.feedback)
    options = {
        "inference": inference,
        "model": args.duel_model,
        "n_alternatives": args.n_alternatives,
        "reference_context": reference,
        "hyperparameters": hyperparameters,
        "stop": stop,
        **({} if args.beta is None else {"beta": args.beta}),
        **({} if args.model_lapse is None else {"lapse": args.model_lapse}),
    }
    optimizer = mode.new_optimizer(
        options,
        rule=rule,
        seed=args.seed,
        sphere_bounds_d=tuple(args.sphere_bounds),
        cylinder_bounds_d=tuple(args.cylinder_bounds),
        letter_bounds_logmar=tuple(args.letter_bounds),
        lens_step_d=args.lens_step,
    )
    answer_options = {"tie_threshold": args.tie_threshold} if "tie_threshold" in mode.answer_options else {}

    def session(patient, optimizer, n_trials, progress=None):
        return simulate(
            mode, patient, optimizer, n_trials, progress=progress, use_stop=stop is not None, **answer_options
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
    print(
        f"Simulated {mode.title}: rule {result.rule}, seed {result.seed}, {result.trials} trials, slope {args.slope:g}"
    )
    print(f"  patient's correction  S {s:+.2f} D   C {c:+.2f} D")
    print(
        f"  best lens found       S {bs:+.2f} D   C {bc:+.2f} D"
        f"   (errors {result.final.sphere_error_d:.2f} D, {result.final.cylinder_error_d:.2f} D)"
    )
    print(f"  acuity error          {result.final.va_error_logmar:.4f} logMAR with that lens")
    if result.certainty is not None:
        cert = result.certainty
        if result.stopped_at is not None:
            print(f"  {stop.describe_stop(result.stopped_at, cert['confidence'])}")
        print(
            f"  confidence            {cert['confidence']:.2f} that this lens is within "
            f"{cert['tolerance_logmar']:g} logMAR of the best"
        )
        (slo, shi), (clo, chi) = cert["sphere_interval_d"], cert["cylinder_interval_d"]
        print(f"  95% interval          S {slo:+.2f} to {shi:+.2f} D   C {clo:+.2f} to {chi:+.2f} D")
    for score in result.checkpoints[:-1]:
        print(f"    after {score.trials:>3} trials: {score.va_error_logmar:.4f} logMAR")
    print(f"  decision time         median {lat['median']:.1f} ms, p95 {lat['p95']:.1f} ms, max {lat['max']:.1f} ms")
    return 0
