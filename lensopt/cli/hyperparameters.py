"""``lensopt hyperparameters``: regenerate the refraction GP's reference hyperparameters."""

from __future__ import annotations

import json
import sys

from lensopt.cli.arguments import check_output_file
from lensopt.cli.arguments import non_negative_int as _non_negative_int
from lensopt.cli.arguments import positive_float as _positive_float
from lensopt.cli.arguments import positive_int as _positive_int
from lensopt.cli.defaults import HELD_OUT_FIRST_SEED
from lensopt.reference_data import (
    DATA_DIR,
    LETTER_MODEL_HYPERPARAMETERS,
    PRESCRIPTION_HYPERPARAMETERS,
    REFRACTION_HYPERPARAMETERS,
    source_data_dir,
)

#: Defaults per --space: the two-parameter (sphere, cylinder) search and the full prescription
#: (``lensopt.refraction_hyperparameters.PRESCRIPTION_SLOPE``/``PRESCRIPTION_TRIALS``, copied: the
#: parser must not import numpy).
SPACE_DEFAULTS = {
    "sphere-cylinder": {"slope": 5.0, "responses": 260, "passes": 2},
    "power-vector": {"slope": 14.0, "responses": 60, "passes": 1},
}


def register(subparsers) -> None:
    p = subparsers.add_parser(
        "hyperparameters",
        help="fit the refraction GP's hyperparameters on simulated responses",
        description="Fits the psychophysics kernel θ s s' + k_SE on simulated responses for several "
        "patients (by default the trials of simulated UCB-ALD sessions; --design random for "
        "the seed paper's random responses, §5.2) and writes the median to --output, by "
        "default to the model's file in data/ of a source checkout (an installed lensopt "
        "needs --output: its shipped data is not rewritten). --space power-vector fits the full "
        "prescription's two kernels (start_kernel: acuity-bowl, sessions around an autorefraction; "
        "kernel: psychophysics, sessions without a start) on PrescriptionOptimizer sessions of "
        "clinic patients (tuning seeds only, below 100,000) and writes "
        "data/prescription-hyperparameters.json: the fit goes to fitted_kernel/fitted_start_kernel "
        "beside the shipped kernels unless --adopt.",
    )
    p.add_argument(
        "--space",
        choices=tuple(SPACE_DEFAULTS),
        default="sphere-cylinder",
        help="the search whose kernel is fitted: the letter search over (sphere, cylinder) (default) "
        "or the full prescription over power vectors (M, J0, J45)",
    )
    p.add_argument("--slope", type=_positive_float, help="patients' psychometric slope (default 5; power-vector 14)")
    p.add_argument("--patients", type=_positive_int, default=8)
    p.add_argument(
        "--responses",
        type=_positive_int,
        help="responses per patient (trials per session; default 260, power-vector 60; the paper's "
        "random design used 1000)",
    )
    p.add_argument(
        "--design",
        choices=("sessions", "random"),
        default="sessions",
        help="simulated UCB-ALD sessions (default) or the paper's random responses",
    )
    p.add_argument(
        "--inputs",
        choices=("meridians", "lens"),
        default="meridians",
        help="what the SE kernel compares: principal-meridian powers (S, S+C) (default) "
        "or the lens columns (S, C) as in the paper",
    )
    p.add_argument("--ard", action="store_true", help="one lengthscale per coordinate (ARD) instead of one for both")
    p.add_argument(
        "--passes",
        type=_positive_int,
        help="session/re-fit passes (sessions design; default 2, power-vector 1: the shipped kernels as pilot)",
    )
    p.add_argument(
        "--accommodation",
        choices=("half", "all", "none"),
        default="half",
        help="power-vector: which patients accommodate (half: every other one, the default)",
    )
    p.add_argument(
        "--adopt",
        action="store_true",
        help="power-vector: write the fit as the optimizer's kernel/start_kernel (default: beside them, "
        "as fitted_kernel/fitted_start_kernel)",
    )
    p.add_argument("--seed", type=_non_negative_int, default=0)
    p.add_argument("--restarts", type=_non_negative_int, default=3)
    p.add_argument(
        "--model",
        choices=("floored", "probit"),
        default="floored",
        help="answer model the hyperparameters are for: floored (issue 14's letter model, "
        "the default) or probit (the paper's)",
    )
    p.add_argument(
        "--output",
        metavar="FILE",
        help="where to write the fit (default in a source checkout: the model's file in data/; "
        "required for an installed lensopt)",
    )
    p.set_defaults(handler=run)


def _check_power_vector_args(args) -> None:
    """One-line refusals of what the power-vector fit does not have, and of held-out seeds."""
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
    last = args.seed + args.patients - 1
    if last >= HELD_OUT_FIRST_SEED:
        raise ValueError(
            f"--seed {args.seed} --patients {args.patients} reaches seed {last:,}: patients from "
            f"{HELD_OUT_FIRST_SEED:,} on are held out for the benchmarks; fit on tuning seeds only"
        )


def _check_output(output: str) -> None:
    """Refuse an --output that cannot be written, before the fit (not after it)."""
    check_output_file("--output", output)


def run(args) -> int:
    power_vector = args.space == "power-vector"
    for name, value in SPACE_DEFAULTS[args.space].items():
        if getattr(args, name) is None:
            setattr(args, name, value)
    if power_vector:
        _check_power_vector_args(args)
    elif args.adopt or args.accommodation != "half":
        raise ValueError("--adopt and --accommodation apply to --space power-vector only")
    if args.output is None:
        if power_vector:
            name = PRESCRIPTION_HYPERPARAMETERS
        else:
            name = LETTER_MODEL_HYPERPARAMETERS if args.model == "floored" else REFRACTION_HYPERPARAMETERS
        folder = source_data_dir()
        if folder is None:
            raise ValueError(
                f"give --output FILE: this lensopt is installed, not a source checkout, and its "
                f"shipped {DATA_DIR / name} is not rewritten"
            )
        args.output = str(folder / name)
    _check_output(args.output)
    if power_vector:
        return _run_power_vector(args)

    from tqdm import tqdm

    from lensopt.refraction_hyperparameters import fit_reference_hyperparameters  # deferred: imports scipy

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


def _run_power_vector(args) -> int:
    from pathlib import Path

    from tqdm import tqdm

    from lensopt.refraction_hyperparameters import (  # deferred: imports scipy
        PRESCRIPTION_KERNELS,
        fit_prescription_hyperparameters,
        prescription_hyperparameters_file,
    )

    path = Path(args.output)
    previous = None
    if path.is_file():
        try:
            previous = json.loads(path.read_text())
        except (OSError, ValueError) as error:
            raise ValueError(f"--output {args.output}: cannot read the file to update ({error})") from None
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
