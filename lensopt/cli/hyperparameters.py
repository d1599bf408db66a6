"""``lensopt hyperparameters``: regenerate the refraction GP's reference hyperparameters."""

from __future__ import annotations

import argparse

from lensopt.cli.arguments import MAX_BENCH_COUNT, Handler
from lensopt.cli.arguments import bench_count as _count
from lensopt.cli.arguments import non_negative_int as _non_negative_int
from lensopt.cli.arguments import positive_float as _positive_float

#: Defaults per --space: the two-parameter (sphere, cylinder) search and the full prescription
#: (``lensopt.refraction_hyperparameters.PRESCRIPTION_SLOPE``/``PRESCRIPTION_TRIALS``, copied: the
#: parser must not import numpy).
SPACE_DEFAULTS = {
    "sphere-cylinder": {"slope": 5.0, "responses": 260, "passes": 2},
    "power-vector": {"slope": 14.0, "responses": 60, "passes": 1},
}


def _restarts(text) -> int:
    """``--restarts``: 0 to :data:`~lensopt.cli.arguments.MAX_BENCH_COUNT` (as a benchmark's counts)."""
    value = _non_negative_int(text)
    if value > MAX_BENCH_COUNT:
        raise argparse.ArgumentTypeError(f"must be at most {MAX_BENCH_COUNT}, got {value}")
    return value


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
    p.add_argument(
        "--patients", type=_count, default=8, help=f"simulated patients, at most {MAX_BENCH_COUNT} (default 8)"
    )
    p.add_argument(
        "--responses",
        type=_count,
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
        type=_count,
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
    p.add_argument(
        "--restarts", type=_restarts, default=3, help=f"optimizer restarts per fit, 0 to {MAX_BENCH_COUNT} (default 3)"
    )
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
    p.set_defaults(handler=Handler("lensopt.cli.handlers.hyperparameters:run"))
