"""``lensopt simulate``: a simulated patient through a whole refraction session."""

from __future__ import annotations

import argparse

from lensopt.cli.arguments import Handler
from lensopt.cli.arguments import check_letters as _check_letters
from lensopt.cli.arguments import confidence as _confidence
from lensopt.cli.arguments import finite_float as _finite_float
from lensopt.cli.arguments import non_negative_float as _non_negative_float
from lensopt.cli.arguments import non_negative_int as _non_negative_int
from lensopt.cli.arguments import positive_float as _positive_float
from lensopt.cli.arguments import positive_int as _positive_int
from lensopt.cli.defaults import (
    ACUITY_LAW_RULE,
    ALL_RULES,
    CLINIC_SLOPE,
    CONTEXTUAL_DUEL_RULES,
    DEFAULT_MODEL_LAPSE,
    INFERENCE_METHODS,
    LETTER_BETA,
    PAPER_BETA_3,
    PATIENT_SLOPE,
    REFRACTION_BETA_3,
)
from lensopt.cli.simulate_prescription import add_prescription_arguments

#: Largest ``--trials`` (as ``lensopt run``'s protocols allow).
MAX_TRIALS = 5000
#: The two-parameter search's default lens box (D), sphere and cylinder alike.
SIMULATE_LENS_BOUNDS_D = (-4.0, 4.0)
#: The farthest a two-parameter box may reach (D): a phoropter's range.
MAX_BOX_D = 20.0
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


def feedback_rules(feedback, duel_model="probit"):
    if feedback == "letters":
        return (*ALL_RULES, ACUITY_LAW_RULE)
    if feedback == "duel" and duel_model == "probit":
        return CONTEXTUAL_DUEL_RULES
    return ("mpes-ald", "random")


def default_rule(feedback, duel_model):
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
        description="A simulated patient (an acuity law of the blur of the residual refraction) answers the optimizer's letters. Prints a summary, "
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
        f"ucb-ald); with probit duels one of {', '.join(feedback_rules('duel'))} (default "
        "muc-ald); with the tie model or rankings mpes-ald (default) or random",
    )
    p.add_argument(
        "--trials",
        type=_trials,
        metavar="N",
        help=f"number of trials, at most {MAX_TRIALS} (default {DEFAULT_TRIALS}; with --stop and "
        "--max-trials, the --max-trials)",
    )
    p.add_argument(
        "--slope",
        type=_positive_float,
        help=f"the patient's psychometric slope, logMAR⁻¹ (default {PATIENT_SLOPE:g}; "
        f"{CLINIC_SLOPE:g} for the full prescription, as its campaigns)",
    )
    p.add_argument(
        "--seed",
        type=_non_negative_int,
        default=0,
        help="seed of the patient and the optimizer (default 0; seeds below 100000 are the tuning patients, from 100000 on held out)",
    )
    p.add_argument("--true-sphere", type=_finite_float, metavar="D", help="patient's true sphere correction (D)")
    p.add_argument("--true-cylinder", type=_finite_float, metavar="D", help="patient's true cylinder correction (D)")
    p.add_argument(
        "--n-alternatives",
        type=_alternatives,
        default=26,
        metavar="N",
        help="letters to choose from, 2 or more (default 26; guess rate 1/N for the patient and the model; "
        "in duels and rankings it sets how clear a line of these letters looks to the patient, and with --start "
        "the model's acuity link)",
    )
    p.add_argument(
        "--lapse", type=_rate, default=0.0, metavar="L", help="the patient's lapse rate, in [0, 0.5) (default 0)"
    )
    p.add_argument(
        "--model-lapse",
        type=_rate,
        metavar="L",
        help=f"the lapse rate the letter model assumes, in [0, 0.5), above 0 with --rule acuity-law (default "
        f"{DEFAULT_MODEL_LAPSE:g}); also the "
        "full prescription's duels through the acuity link (--start with --feedback duel)",
    )
    p.add_argument(
        "--model-accommodation",
        type=_non_negative_float,
        nargs="+",
        metavar="A",
        help="with --rule acuity-law: the amplitudes of accommodation (D) its prior allows, e.g. 0 0.5 1 2 4 8 "
        "(clinical-refraction's), so that an eye that accommodates (--accommodation) ends at the most-plus lens "
        "(default: the law alone, 0)",
    )
    p.add_argument(
        "--inference",
        choices=INFERENCE_METHODS,
        help="GP inference (default: ep with letters, laplace with duels; not with --rule acuity-law, which has "
        "no GP, nor with rankings)",
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
    p.add_argument(
        "--check-letters",
        type=_check_letters,
        metavar="K",
        help="letters, with --stop: before stopping, have the patient read K letters through the "
        "reported lens (within 0.25 D of it), and stop only if the confidence still holds (default 0: no check)",
    )
    box = f"the two-parameter search's lens box, D (default {SIMULATE_LENS_BOUNDS_D[0]:g} {SIMULATE_LENS_BOUNDS_D[1]:g}"
    p.add_argument(
        "--sphere-bounds",
        type=_finite_float,
        nargs=2,
        metavar=("LO", "HI"),
        default=SIMULATE_LENS_BOUNDS_D,
        help=f"spheres of {box}; the patient's correction must lie inside)",
    )
    p.add_argument(
        "--cylinder-bounds",
        type=_finite_float,
        nargs=2,
        metavar=("LO", "HI"),
        default=SIMULATE_LENS_BOUNDS_D,
        help=f"cylinders of {box})",
    )
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
    p.set_defaults(handler=Handler("lensopt.cli.handlers.simulate:run"))
