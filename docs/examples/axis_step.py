"""What rounding the full prescription's axes to a trial frame's 5° marks costs.

A clinician refracting with a trial frame sets the cylinder's axis on its 5° marks, not a
phoropter's 1° dial: a protocol's ``[lens] axis_step_deg = 5`` (``PrescriptionOptimizer(axis_step_deg=5)``,
and the duel and ranking optimizers alike) rounds every axis asked for and the axis prescribed. This
script runs the same held-out clinic patients (seeds from 100,000; slope 14, eyes that may
accommodate, started from an autorefraction: the ``start-accommodation`` setting of ``lensopt bench
prescription``) at each axis step and prints, per step, the blur error of the prescription as
written (its phoropter lens' power-vector distance from the truth, D) after the budget — median, mean, and how many sessions end
more than 0.5 D off — and how often the lens the clinician sets (a letter's lens, a duel's lens 1)
changed between consecutive trials, and how often only by its axis (a dial turn). Its sessions are
those of ``lensopt bench prescription --settings start-accommodation --axis-step 5`` (a campaign's
summary gives the median blur error, the sessions over 0.5 D and the lens changes, not the mean)::

    .venv/bin/python docs/examples/axis_step.py --feedback letters --patients 60
    .venv/bin/python docs/examples/axis_step.py --feedback duel --trials 40 --patients 60
"""

from __future__ import annotations

import numpy as np
from tqdm import tqdm

from lensopt.bench.prescription import lens_changes, lenses_set, optimizer_of, patient_and_start
from lensopt.bench.prescription_spec import (
    DEFAULT_PRESCRIPTION_DUEL_RULES,
    DEFAULT_PRESCRIPTION_RULES,
    PrescriptionSpec,
)
from lensopt.cli import OneLineParser
from lensopt.cli.arguments import non_negative_float, non_negative_int, positive_float, positive_int
from lensopt.refraction.steps import DEFAULT_AXIS_STEP_DEG, is_whole_axis_step
from lensopt.simulation import simulate_prescription

#: The rule of each feedback: the shipped protocols' (clinical-prescription, clinical-prescription-duel).
RULES = {"letters": DEFAULT_PRESCRIPTION_RULES[0], "duel": DEFAULT_PRESCRIPTION_DUEL_RULES[0]}


def spec_of(seed: int, feedback: str, axis_step_deg: float, n_trials: int, tie_threshold: float) -> PrescriptionSpec:
    """The ``lensopt bench prescription --settings start-accommodation --axis-step`` run of clinic
    patient ``seed`` (a one-line ``ValueError`` for values it refuses)."""
    step = None if axis_step_deg == DEFAULT_AXIS_STEP_DEG else axis_step_deg
    return PrescriptionSpec(
        "start-accommodation",
        RULES[feedback],
        seed,
        n_trials,
        feedback=feedback,
        tie_threshold=tie_threshold,
        axis_step_deg=step,
    )


def session(seed: int, feedback: str, axis_step_deg: float, n_trials: int, tie_threshold: float) -> dict:
    """One session of clinic patient ``seed`` (:func:`spec_of`'s run): the written prescription's blur
    error (D) after ``n_trials``, and the changes of the lens set between consecutive trials (all, and
    axis-only)."""
    spec = spec_of(seed, feedback, axis_step_deg, n_trials, tie_threshold)
    patient, start = patient_and_start(spec)
    optimizer = optimizer_of(spec, patient, start)
    options = {"tie_threshold": tie_threshold} if feedback == "duel" else {}
    result = simulate_prescription(patient, optimizer, n_trials, checkpoints=(n_trials,), feedback=feedback, **options)
    changes = lens_changes(lenses_set(optimizer.history, feedback))
    return {
        "seed": seed,
        "blur_error_d": float(result.to_dict()["lens_blur_error_d"]),  # of the lens written
        "axis_deg": result.prescription["axis_deg"],  # the prescription the simulation already made
        "changes": changes["all"],
        "axis_only": changes["axis_only"],
    }


def summary(rows: list[dict]) -> str:
    """One line: the blur error's median and mean, the sessions over 0.5 D, the lens changes."""
    error = np.array([row["blur_error_d"] for row in rows])
    return (
        f"blur error median {np.median(error):.3f} D, mean {error.mean():.3f} D, > 0.5 D {int((error > 0.5).sum())}"
        f" of {len(rows)}; lens changes {sum(r['changes'] for r in rows)}, axis only {sum(r['axis_only'] for r in rows)}"
    )


def main(argv=None) -> None:
    parser = OneLineParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--feedback", choices=sorted(RULES), default="letters")
    parser.add_argument(
        "--steps",
        type=positive_float,
        nargs="+",
        default=[1.0, 5.0],
        help="axis steps (degrees) to compare, whole degrees that divide 180",
    )
    parser.add_argument(
        "--first-seed", type=non_negative_int, default=100_000, help="seed of the first patient (held out: ≥ 100000)"
    )
    parser.add_argument("--patients", type=positive_int, default=60)
    parser.add_argument("--trials", type=positive_int, default=100, help="letters or duels per session")
    parser.add_argument(
        "--tie-threshold", type=non_negative_float, default=0.0, help="duels: the patient's 'the same' threshold"
    )
    args = parser.parse_args(argv)
    for step in args.steps:
        if not is_whole_axis_step(step):
            parser.error(f"argument --steps: must be whole degrees that divide 180 (e.g. 1 or 5), got {step:g}")
    if args.tie_threshold and args.feedback != "duel":
        parser.error("argument --tie-threshold: applies to --feedback duel only; leave it out with letters")
    try:  # what else the campaign's runs refuse (a tie threshold above 20 logit units), before any session
        for step in args.steps:
            spec_of(args.first_seed, args.feedback, step, args.trials, args.tie_threshold)
    except ValueError as exc:
        parser.error(str(exc))
    seeds = range(args.first_seed, args.first_seed + args.patients)
    for step in args.steps:
        rows = [
            session(seed, args.feedback, step, args.trials, args.tie_threshold)
            for seed in tqdm(seeds, desc=f"{step:g} degree steps", unit="session")
        ]
        print(f"{args.feedback}, axis step {step:g} degrees, {args.trials} trials: {summary(rows)}", flush=True)


if __name__ == "__main__":
    main()
