"""``lensopt hyperparameters``: regenerate the refraction GP's reference hyperparameters."""

from __future__ import annotations

import json
import sys

from lensopt.cli.arguments import non_negative_int as _non_negative_int
from lensopt.cli.arguments import positive_float as _positive_float
from lensopt.cli.arguments import positive_int as _positive_int
from lensopt.reference_data import DATA_DIR, LETTER_MODEL_HYPERPARAMETERS, REFRACTION_HYPERPARAMETERS, source_data_dir


def register(subparsers) -> None:
    p = subparsers.add_parser(
        "hyperparameters",
        help="fit the refraction GP's hyperparameters on simulated responses",
        description="Fits the psychophysics kernel θ s s' + k_SE on simulated responses for several "
        "patients (by default the trials of simulated UCB-ALD sessions; --design random for "
        "the seed paper's random responses, §5.2) and writes the median to --output, by "
        "default to the model's file in data/ of a source checkout (an installed lensopt "
        "needs --output: its shipped data is not rewritten).",
    )
    p.add_argument("--slope", type=_positive_float, default=5.0)
    p.add_argument("--patients", type=_positive_int, default=8)
    p.add_argument(
        "--responses",
        type=_positive_int,
        default=260,
        help="responses per patient (trials per session; the paper's random design used 1000)",
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
    p.add_argument("--passes", type=_positive_int, default=2, help="session/re-fit passes (sessions design)")
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


def run(args) -> int:
    from pathlib import Path

    if args.output is None:
        name = LETTER_MODEL_HYPERPARAMETERS if args.model == "floored" else REFRACTION_HYPERPARAMETERS
        folder = source_data_dir()
        if folder is None:
            raise ValueError(
                f"give --output FILE: this lensopt is installed, not a source checkout, and its "
                f"shipped {DATA_DIR / name} is not rewritten"
            )
        args.output = str(folder / name)
    if not Path(args.output).resolve().parent.is_dir():  # before the fit, not after it
        raise ValueError(f"--output {args.output}: its folder does not exist; create it or choose another path")

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
