"""``lensopt hyperparameters``'s handler: regenerate the refraction GP's reference
hyperparameters (its options: :mod:`lensopt.cli.hyperparameters`)."""

from __future__ import annotations

import json
import sys

from tqdm import tqdm

from lensopt.cli.defaults import HELD_OUT_FIRST_SEED
from lensopt.cli.handlers.json_output import check_replaced_json_output
from lensopt.cli.hyperparameters import SPACE_DEFAULTS
from lensopt.reference_data import (
    LETTER_MODEL_HYPERPARAMETERS,
    PRESCRIPTION_HYPERPARAMETERS,
    REFRACTION_HYPERPARAMETERS,
    rewritable_data_file,
)
from lensopt.refraction_hyperparameters import (
    PRESCRIPTION_KERNELS,
    fit_prescription_hyperparameters,
    fit_reference_hyperparameters,
    prescription_hyperparameters_file,
)


def _check_power_vector_args(args) -> None:
    """One-line refusals of what the power-vector fit does not have."""
    for given, option in (
        (args.design != "sessions", f"--design {args.design}"),
        (args.inputs != "meridians", f"--inputs {args.inputs}"),
        (args.ard, "--ard"),
        (args.model != "floored", f"--model {args.model}"),
    ):
        if given:
            raise ValueError(
                f"{option} does not apply to --space power-vector (sessions of the floored letter model, "
                "one isotropic lengthscale on (M, J0, J45))"
            )


def _check_tuning_seeds(args) -> None:
    """Refuse, in one line, a fit whose patients reach the held-out seeds (either space: the
    patient of seed N is the benchmarks' patient of seed N)."""
    last = args.seed + args.patients - 1
    if last >= HELD_OUT_FIRST_SEED:
        raise ValueError(
            f"--seed {args.seed} --patients {args.patients} reaches seed {last:,}: patients from "
            f"{HELD_OUT_FIRST_SEED:,} on are held out for the benchmarks; fit on tuning seeds only"
        )


def run(args) -> int:
    power_vector = args.space == "power-vector"
    passes_given = args.passes is not None
    for name, value in SPACE_DEFAULTS[args.space].items():
        if getattr(args, name) is None:
            setattr(args, name, value)
    _check_tuning_seeds(args)
    if args.design == "random" and passes_given:
        raise ValueError("--passes applies to --design sessions only (the random design fits once); leave --passes out")
    if power_vector:
        _check_power_vector_args(args)
    elif args.adopt or args.accommodation != "half":
        raise ValueError("--adopt and --accommodation apply to --space power-vector only")
    if args.output is None:
        if power_vector:
            name = PRESCRIPTION_HYPERPARAMETERS
        else:
            name = LETTER_MODEL_HYPERPARAMETERS if args.model == "floored" else REFRACTION_HYPERPARAMETERS
        args.output = str(rewritable_data_file(name, "--output"))
    previous = check_replaced_json_output("--output", args.output, "hyperparameters", "the fit")
    if power_vector:
        return _run_power_vector(args, previous)

    total = args.patients * (args.passes if args.design == "sessions" else 1)
    with tqdm(total=total, desc="patients fitted", file=sys.stderr) as bar:
        result = fit_reference_hyperparameters(
            args.slope,
            args.patients,
            args.responses,
            args.seed,
            args.restarts,
            progress=lambda i: bar.update(1),
            design=args.design,
            n_passes=args.passes,
            inputs=args.inputs,
            ard=args.ard,
            model=args.model,
        )
    with open(args.output, "w") as handle:
        json.dump(result, handle, indent=2)
        handle.write("\n")
    kernel = result["kernel"]
    print(
        f"wrote {args.output}: theta {kernel['context_variance']:.3g}, lengthscales "
        f"{', '.join(f'{v:.3g}' for v in kernel['lengthscales'])} D, variance {kernel['variance']:.3g}"
    )
    return 0


def _run_power_vector(args, previous: dict | None) -> int:
    """The full prescription's fit, written over ``previous`` (the JSON object read from --output)."""
    total = args.patients * args.passes * len(PRESCRIPTION_KERNELS)
    with tqdm(total=total, desc="sessions fitted", file=sys.stderr) as bar:
        fit = fit_prescription_hyperparameters(
            args.slope,
            args.patients,
            args.responses,
            args.seed,
            args.restarts,
            progress=lambda i: bar.update(1),
            n_passes=args.passes,
            accommodation=args.accommodation,
        )
    contents = prescription_hyperparameters_file(fit, previous, adopt=args.adopt)
    with open(args.output, "w") as handle:
        json.dump(contents, handle, indent=2)
        handle.write("\n")
    print(f"wrote {args.output} ({'adopted' if args.adopt else 'as fitted_kernel, fitted_start_kernel'}):")
    for key in PRESCRIPTION_KERNELS:
        print(f"  {key}: fitted {_describe(fit[key])}")
        if previous is not None and {"context_variance", "lengthscales", "variance"} <= set(previous.get(key) or ()):
            print(f"  {' ' * len(key)}  before {_describe(previous[key])}")
    return 0


def _describe(kernel: dict) -> str:
    text = (
        f"theta {kernel['context_variance']:.3g}, lengthscale "
        f"{', '.join(f'{v:.3g}' for v in kernel['lengthscales'])} D, variance {kernel['variance']:.3g}"
    )
    return text + (f", shift variance {kernel['shift_variance']:.3g}" if "shift_variance" in kernel else "")
