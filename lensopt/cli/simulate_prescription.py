"""``lensopt simulate`` of the full prescription (sphere, cylinder and axis; issue 16): its options
(its run: :mod:`lensopt.cli.handlers.simulate_prescription`). Any of ``--true-axis``, ``--start``, ``--accommodation`` (or the box widths) selects it;
``--feedback letters`` (default), ``duel`` (:class:`lensopt.refraction.prescription_duels.PrescriptionDuelOptimizer`)
or ``ranking`` (:class:`lensopt.refraction.prescription_rankings.PrescriptionRankingOptimizer`)."""

from __future__ import annotations

import argparse

from lensopt.cli.arguments import non_negative_float as _non_negative_float
from lensopt.cli.arguments import positive_float as _positive_float
from lensopt.cli.arguments import whole_axis as _whole_axis
from lensopt.cli.defaults import ACUITY_LAW_RULE

#: The largest sphere or cylinder (D, either sign) of a simulated patient: a phoropter's range.
MAX_PATIENT_POWER_D = 20.0

#: The largest ``--m-half-width``, ``--j-half-width`` and ``--accommodation`` (D): a protocol's
#: ``[start] m_half_width_d``, ``j_half_width_d`` and ``[simulated] accommodation_d`` take the same
#: (``lensopt.experiment.search_sections``, ``protocol_sections``; written out so that ``lensopt
#: --help`` does not import them).
MAX_M_HALF_WIDTH_D = 10.0
MAX_J_HALF_WIDTH_D = 5.0
MAX_ACCOMMODATION_D = 20.0


def _at_most(convert, limit: float, what: str):
    """An option type: ``convert``'s value, at most ``limit`` (a one-line refusal naming ``what``)."""

    def parse(text):
        value = convert(text)
        if value > limit:
            raise argparse.ArgumentTypeError(f"must be at most {limit:g} D ({what}), got {text}")
        return value

    parse.__name__ = f"_at_most_{getattr(convert, '__name__', 'value')}"
    return parse


def add_prescription_arguments(p) -> None:
    """The full prescription's options of ``lensopt simulate`` (one argument group)."""
    full = p.add_argument_group(
        "full prescription (sphere, cylinder and axis; any of these options selects it)",
        "The search runs in power vectors (M, J0, J45) with letters, duels or rankings (--feedback); the patient has an axis and may "
        "accommodate. Without --true-sphere/--true-cylinder the patient is drawn from a clinic population "
        "(the prescription guide: docs/prescription.md in the source).",
    )
    full.add_argument(
        "--true-axis", type=_whole_axis, metavar="DEG", help="axis of the patient's cylinder, 1-180 whole degrees"
    )
    full.add_argument(
        "--start",
        metavar="RX",
        help="starting refraction, e.g. '-1.00 / -0.50 x 180' (plus cylinder is transposed), or 'auto': an "
        "autorefraction of the patient (SD 0.4 D in M, 0.2 D in J0/J45); the search box is centred on it",
    )
    full.add_argument(
        "--accommodation",
        type=_at_most(_non_negative_float, MAX_ACCOMMODATION_D, "as a protocol's [simulated] accommodation_d"),
        metavar="A",
        help=f"the patient's amplitude of accommodation (D), 0 to {MAX_ACCOMMODATION_D:g}: lenses up to A D too "
        "minus read as well (default 0); with --rule acuity-law the two-parameter search's patient (see "
        "--model-accommodation), otherwise it selects the full prescription",
    )
    full.add_argument(
        "--m-half-width",
        type=_at_most(_positive_float, MAX_M_HALF_WIDTH_D, "as a protocol's [start] m_half_width_d"),
        metavar="D",
        help=f"with --start: half-width of the search box in M, at most {MAX_M_HALF_WIDTH_D:g} (default 2)",
    )
    full.add_argument(
        "--j-half-width",
        type=_at_most(_positive_float, MAX_J_HALF_WIDTH_D, "as a protocol's [start] j_half_width_d"),
        metavar="D",
        help=f"with --start: half-width of the search box in J0 and J45, at most {MAX_J_HALF_WIDTH_D:g} (default 1)",
    )


def full_prescription(args) -> bool:
    """Whether the options ask for the full prescription (any of its options given; ``--accommodation``
    not with ``--rule acuity-law``, whose two-parameter search's patient it then sets)."""
    names: tuple[str, ...] = ("true_axis", "start", "m_half_width", "j_half_width")
    if getattr(args, "rule", None) != ACUITY_LAW_RULE:
        names += ("accommodation",)
    return any(getattr(args, name) is not None for name in names)
