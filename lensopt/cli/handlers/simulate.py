"""``lensopt simulate``'s handler: a simulated patient through a whole refraction session (its
options: :mod:`lensopt.cli.simulate`)."""

from __future__ import annotations

import dataclasses
import json
import math

from lensopt.boxes import first_outside
from lensopt.cli.defaults import ACUITY_LAW_RULE
from lensopt.cli.handlers.kernel_file import load_kernel
from lensopt.cli.handlers.simulate_prescription import run_prescription, trials_bar, what_ran
from lensopt.cli.simulate import (
    DEFAULT_INFERENCE,
    DEFAULT_MIN_TRIALS,
    DEFAULT_TRIALS,
    MAX_BOX_D,
    SIMULATE_LENS_BOUNDS_D,
    default_rule,
    feedback_rules,
)
from lensopt.cli.simulate_prescription import MAX_ACCOMMODATION_D, full_prescription
from lensopt.modes.registry import get_mode
from lensopt.observer.patient import PATIENT_SLOPE_PER_LOGMAR
from lensopt.observer.population import CLINIC_SLOPE_PER_LOGMAR
from lensopt.refraction.lens import diopter_text
from lensopt.refraction.shown import TRIED_WITHIN_D
from lensopt.simulation import make_patient, simulate
from lensopt.stopping import StopRule, confidence_text, stop_threshold


def _stop_rule(args):
    """The :class:`lensopt.stopping.StopRule` of ``--stop``, ``--min-trials``, ``--max-trials`` and
    ``--check-letters`` (or None)."""
    if args.stop is None:
        if args.min_trials is not None or args.max_trials is not None or args.check_letters is not None:
            raise ValueError(
                "--min-trials, --max-trials and --check-letters apply with --stop only; add --stop [CONFIDENCE]"
            )
        return None
    if args.feedback != "letters":
        raise ValueError(
            "--stop applies to --feedback letters only (duels and rankings have no stopping rule); "
            "leave --stop out, or --feedback out for letters"
        )
    min_trials = DEFAULT_MIN_TRIALS if args.min_trials is None else args.min_trials
    max_trials = (
        args.max_trials if args.max_trials is not None else (args.trials if args.trials is not None else DEFAULT_TRIALS)
    )
    if min_trials > max_trials:
        raise ValueError(
            f"--min-trials {min_trials} is more than the session's {max_trials} trials; "
            "lower --min-trials or raise --max-trials / --trials"
        )
    return StopRule(
        confidence=args.stop, min_trials=min_trials, max_trials=max_trials, check_letters=args.check_letters or 0
    )


def _reference_context(text, letter_bounds):
    """``--reference-context``: ``"adaptive"``, None (``upper``) or a logMAR letter size inside
    ``--letter-bounds`` (a one-line refusal naming the option otherwise)."""
    if text == "adaptive":
        return "adaptive"
    if text == "upper":
        return None
    low, high = letter_bounds
    fix = f"give adaptive, upper or a letter size in logMAR from {low:g} to {high:g} (--letter-bounds)"
    try:
        value = float(text)
    except ValueError:
        raise ValueError(
            f"--reference-context must be adaptive, upper or a logMAR value, got {text!r}; {fix}"
        ) from None
    if not math.isfinite(value):
        raise ValueError(f"--reference-context {text} is not a number; {fix}")
    if not low <= value <= high:
        raise ValueError(f"--reference-context {text} is outside the letter sizes; {fix}")
    return value


#: Coarsest lens step accepted (D): phoropters step 0.125-0.25 D, trial-lens sets 0.25-0.5 D.
MAX_LENS_STEP_D = 1.0


def _session_stop(args):
    """The session's stopping rule (:func:`_stop_rule`), with ``args.trials`` set when not given
    (the rule's ``--max-trials``, else the default) and checked against it."""
    stop = _stop_rule(args)
    if args.trials is None:
        args.trials = stop.max_trials if stop is not None and args.max_trials is not None else DEFAULT_TRIALS
    if stop is not None and stop.max_trials > args.trials:
        raise ValueError(
            f"--max-trials {stop.max_trials} is more than --trials {args.trials}; raise --trials or lower --max-trials"
        )
    return stop


def run(args) -> int:
    if args.lens_step is not None and args.lens_step > MAX_LENS_STEP_D:
        raise ValueError(
            f"--lens-step {args.lens_step:g} D is coarser than any phoropter; give at most {MAX_LENS_STEP_D:g} D "
            "(usually 0.25)"
        )
    if args.slope is None:  # a clinic patient's for the full prescription, as its campaigns
        args.slope = CLINIC_SLOPE_PER_LOGMAR if full_prescription(args) else PATIENT_SLOPE_PER_LOGMAR
    if full_prescription(args):
        moved = [
            f"--{name}"
            for name, value in (("sphere-bounds", args.sphere_bounds), ("cylinder-bounds", args.cylinder_bounds))
            if tuple(value) != SIMULATE_LENS_BOUNDS_D
        ]
        if moved:  # they were ignored: the full prescription's box is around --start, or the full box
            raise ValueError(
                f"{' and '.join(moved)} size the two-parameter search's box; the full prescription's is "
                "--m-half-width/--j-half-width around --start: leave them out"
            )
        return run_prescription(args, _session_stop(args))
    for name in ("sphere_bounds", "cylinder_bounds", "letter_bounds"):
        lo, hi = getattr(args, name)
        if lo >= hi:
            flag = f"--{name.replace('_', '-')}"
            raise ValueError(f"{flag} {lo:g} {hi:g} is reversed or empty: give LOW HIGH, low first (e.g. {flag} -4 4)")
        if name != "letter_bounds" and max(abs(lo), abs(hi)) > MAX_BOX_D:
            raise ValueError(f"--{name.replace('_', '-')} {lo:g} {hi:g} reaches beyond a phoropter's ±{MAX_BOX_D:g} D")
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
    rule = args.rule or default_rule(args.feedback, args.duel_model)
    allowed = feedback_rules(args.feedback, args.duel_model)
    if rule not in allowed:
        mode = f"{args.feedback} ({args.duel_model} model)" if args.feedback == "duel" else args.feedback
        raise ValueError(f"--rule {rule} does not work with --feedback {mode}; choose from: {', '.join(allowed)}")
    if args.feedback != "duel" and (args.tie_threshold or args.duel_model != "probit"):
        raise ValueError("--tie-threshold and --duel-model apply to --feedback duel only")
    if rule == ACUITY_LAW_RULE and args.inference is not None:  # it was ignored: the rule has no GP
        raise ValueError(
            f"--inference {args.inference} sets the GP's inference, and --rule {ACUITY_LAW_RULE} has no GP "
            "(grid Bayes under the blur-acuity law); leave --inference out or choose a GP rule such as ucb-ald"
        )
    if args.feedback == "ranking" and args.inference is not None:  # ignored too: the ranking model takes none
        raise ValueError(
            f"--inference {args.inference} does not apply to --feedback ranking (its model takes no inference "
            "option); leave --inference out"
        )
    args.rule = rule
    stop = _session_stop(args)
    if args.feedback != "letters" and args.model_lapse is not None:
        raise ValueError(
            "--model-lapse applies to --feedback letters only (the lapse of the letters' model); leave it out"
        )
    if args.model_accommodation is not None and not all(
        0.0 <= a <= MAX_ACCOMMODATION_D for a in args.model_accommodation
    ):
        raise ValueError(
            f"--model-accommodation takes amplitudes of accommodation from 0 to {MAX_ACCOMMODATION_D:g} D (e.g. 0 0.5 1 2 4 8), got "
            + " ".join(f"{a:g}" for a in args.model_accommodation)
        )
    if args.model_accommodation is not None and rule != ACUITY_LAW_RULE:
        raise ValueError(
            f"--model-accommodation sets the {ACUITY_LAW_RULE} optimizer's prior amplitudes of accommodation; add "
            f"--rule {ACUITY_LAW_RULE} or leave it out (the full prescription, with --start, finds the most-plus lens by itself)"
        )
    inference = args.inference or DEFAULT_INFERENCE[args.feedback]
    reference = _reference_context(args.reference_context, args.letter_bounds)
    hyperparameters = None if args.hyperparameters is None else load_kernel(args.hyperparameters)
    patient = make_patient(
        args.seed, slope=args.slope, true_correction_d=true, n_alternatives=args.n_alternatives, lapse=args.lapse
    )
    drawn = (patient.sphere_d, patient.cylinder_d)
    if true is None and (outside := first_outside(drawn, box)) is not None:  # a narrowed box: refused as a given one
        flag, (low, high) = ("sphere", "cylinder")[outside], box[outside]
        raise ValueError(
            f"seed {args.seed} draws a patient of sphere {drawn[0]:+.2f} D, cylinder {drawn[1]:+.2f} D, whose "
            f"{flag} is outside the lens box [{low:g}, {high:g}] D, where no lens could correct it; widen "
            f"--{flag}-bounds, give --true-sphere and --true-cylinder inside the box, or choose another seed"
        )
    if args.accommodation is not None:  # with --rule acuity-law: the two-parameter search's patient accommodates
        patient = dataclasses.replace(patient, accommodation_d=args.accommodation)
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
        **({} if args.model_accommodation is None else {"accommodation_d": tuple(args.model_accommodation)}),
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

    with trials_bar(args.trials, args.rule) as bar:
        result = session(patient, optimizer, args.trials, progress=lambda t: bar.update(1))
    if args.json:
        extra = {"duel_model": args.duel_model, "tie_threshold": args.tie_threshold} if args.feedback == "duel" else {}
        print(
            json.dumps(
                {
                    "feedback": args.feedback,
                    **extra,
                    **result.to_dict(),
                    **what_ran(optimizer, patient, args.seed, drawn=true is None),
                }
            )
        )
        return 0
    s, c = result.true_correction_d
    bs, bc = result.final.best_lens_d
    lat = result.latency_ms
    print(
        f"Simulated {mode.title}: rule {result.rule}, seed {result.seed}, {result.trials} trials, slope {args.slope:g}"
    )
    print(f"  patient's correction  S {diopter_text(s)} D   C {diopter_text(c)} D")
    print(
        f"  best lens found       S {diopter_text(bs)} D   C {diopter_text(bc)} D"
        f"   (errors {diopter_text(result.final.sphere_error_d, signed=False)} D, {diopter_text(result.final.cylinder_error_d, signed=False)} D)"
    )
    print(f"  acuity error          {result.final.va_error_logmar:.4f} logMAR with that lens")
    if result.letters_through_lens is not None:
        print(
            f"  letters through it    {result.letters_through_lens} (through lenses within {TRIED_WITHIN_D:g} D of it)"
        )
    if result.certainty is not None:
        cert = result.certainty
        if result.stopped_at is not None:
            print(f"  {stop.describe_stop(result.stopped_at, cert['confidence'], result.letters_through_lens)}")
        print(
            f"  confidence            {confidence_text(cert['confidence'], stop_threshold(stop))} that this lens is within "
            f"{cert['tolerance_logmar']:g} logMAR of the best"
        )
        (slo, shi), (clo, chi) = cert["sphere_interval_d"], cert["cylinder_interval_d"]
        print(
            f"  95% interval          S {diopter_text(slo)} to {diopter_text(shi)} D   C {diopter_text(clo)} to {diopter_text(chi)} D"
        )
    for score in result.checkpoints[:-1]:
        print(f"    after {score.trials:>3} trials: {score.va_error_logmar:.4f} logMAR")
    print(f"  decision time         median {lat['median']:.1f} ms, p95 {lat['p95']:.1f} ms, max {lat['max']:.1f} ms")
    return 0
