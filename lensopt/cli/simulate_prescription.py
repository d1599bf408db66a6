"""``lensopt simulate`` of the full prescription (sphere, cylinder and axis; issue 16): its options
(its run: :mod:`lensopt.cli.handlers.simulate_prescription`). Any of ``--true-axis``, ``--start``, ``--accommodation`` (or the box widths) selects it;
``--feedback letters`` (default), ``duel`` (:class:`lensopt.refraction.prescription_duels.PrescriptionDuelOptimizer`)
or ``ranking`` (:class:`lensopt.refraction.prescription_rankings.PrescriptionRankingOptimizer`)."""

from __future__ import annotations

from lensopt.cli.arguments import finite_float as _finite_float
from lensopt.cli.arguments import non_negative_float as _non_negative_float
from lensopt.cli.arguments import positive_float as _positive_float

#: The largest sphere or cylinder (D, either sign) of a simulated patient: a phoropter's range.
MAX_PATIENT_POWER_D = 20.0


def add_prescription_arguments(p) -> None:
    """The full prescription's options of ``lensopt simulate`` (one argument group)."""
    full = p.add_argument_group(
        "full prescription (sphere, cylinder and axis; any of these options selects it)",
        "The search runs in power vectors (M, J0, J45) with letters, duels or rankings (--feedback); the patient has an axis and may "
        "accommodate. Without --true-sphere/--true-cylinder the patient is drawn from a clinic population "
        "(docs/prescription.md).",
    )
    full.add_argument(
        "--true-axis", type=_finite_float, metavar="DEG", help="axis of the patient's cylinder, 1-180 degrees"
    )
    full.add_argument(
        "--start",
        metavar="RX",
        help="starting refraction, e.g. '-1.00 / -0.50 x 180' (plus cylinder is transposed), or 'auto': an "
        "autorefraction of the patient (SD 0.4 D in M, 0.2 D in J0/J45); the search box is centred on it",
    )
    full.add_argument(
        "--accommodation",
        type=_non_negative_float,
        metavar="A",
        help="the patient's amplitude of accommodation (D): lenses up to A D too minus read as well (default 0)",
    )
    full.add_argument(
        "--m-half-width",
        type=_positive_float,
        metavar="D",
        help="with --start: half-width of the search box in M (default 2)",
    )
    full.add_argument(
        "--j-half-width",
        type=_positive_float,
        metavar="D",
        help="with --start: half-width of the search box in J0 and J45 (default 1)",
    )


def full_prescription(args) -> bool:
    """Whether the options ask for the full prescription (any of its options given)."""
    return any(
        getattr(args, name) is not None
        for name in ("true_axis", "start", "accommodation", "m_half_width", "j_half_width")
    )
