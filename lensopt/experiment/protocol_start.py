"""A protocol's starting refraction (``[start]``, ``--start``) as a new session takes it: the start
given on the command line (a typo-like power off the phoropter's steps noted, a high power's box
narrowed to what a phoropter can set), each eye's start for the eyes the session tests, and a
simulated patient outside the box around the start. :class:`lensopt.experiment.protocol.Protocol`'s
``with_start``, ``with_eye_starts`` and ``simulated_patient_problem`` apply them; a stored session's
snapshot is not re-checked, so an old session keeps resuming."""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Callable

from lensopt.errors import ProtocolError
from lensopt.experiment.protocol_checks import MIN_M_HALF_WIDTH_D, phoropter_problem
from lensopt.experiment.protocol_sections import SimulatedSection
from lensopt.experiment.search_sections import PER_EYE_START_EXAMPLE, StartSection
from lensopt.refraction.lens import Lens, off_step_note
from lensopt.refraction.prescription import PHOROPTER_MAX_POWER_D, SearchBox


def given_start(start: StartSection | None, refraction: str) -> StartSection:
    """``start`` (a protocol's own ``[start]``, or None for a new one with the default box) with the
    starting refraction ``refraction`` (``--start``); a refraction it cannot read is a one-line
    :class:`ProtocolError`."""
    try:
        return StartSection(refraction) if start is None else dataclasses.replace(start, refraction=refraction)
    except ValueError as exc:
        raise ProtocolError(f"--start: {str(exc).removeprefix('refraction: ')}") from None


def phoropter_start(given: StartSection, step_d: float, warn: Callable[[str], None] | None = None) -> StartSection:
    """A ``given`` start (:func:`given_start`) as a new session searches around it. A power off the
    phoropter's ``step_d`` steps is searched around as typed, and ``warn`` is told (most likely a
    typo). A high power whose box would reach lenses a phoropter cannot set
    (:func:`~lensopt.experiment.protocol_checks.phoropter_problem`) has its M half-width narrowed to
    fit, down to :data:`MIN_M_HALF_WIDTH_D` (the new session stores the box it searched; ``warn`` is
    told); below that, a one-line :class:`ProtocolError`."""
    starts = [(eye, given.for_eye(eye)) for eye in given.eyes or (None,)]
    for eye, eye_start in starts:
        off_step = off_step_note(eye_start.written, step_d)
        if off_step and warn is not None:
            warn(f"--start: {'' if eye is None else f'{eye} '}{off_step}")
    problem = phoropter_problem(given)
    if not problem:
        return given
    rooms = [
        SearchBox(eye_start.lens, eye_start.m_half_width_d, eye_start.j_half_width_d).largest_m_half_width_d()
        for _, eye_start in starts
    ]
    room = math.floor(min(rooms) * 100.0) / 100.0
    if room < MIN_M_HALF_WIDTH_D:
        raise ProtocolError(f"--start: {problem}")
    if warn is not None:
        warn(
            f"--start {given.refraction}: the search box's M half-width is narrowed from "
            f"{given.m_half_width_d:g} to {room:g} D, so that no lens asked for is beyond a "
            f"phoropter's ±{PHOROPTER_MAX_POWER_D:g} D"
        )
    return dataclasses.replace(given, m_half_width_d=room)


def start_of_eyes(start: StartSection, eyes: tuple[str | None, ...], warn: Callable[[str], None]) -> StartSection:
    """A given ``start`` for a new session testing ``eyes`` (``[session] eye``, ``--eye``): a session of
    one eye keeps only that eye's lens of a start of each eye; a start that names an eye the session
    does not test, or not each eye of a session of both, is a one-line :class:`ProtocolError`; a
    session of both eyes started from one lens is searched so, and ``warn`` says so."""
    if not start.eyes:
        if len(eyes) > 1:
            warn(
                f"both eyes start from {start.lens.format()} (one lens for OU): give each eye's "
                f"autorefraction, e.g. --start {PER_EYE_START_EXAMPLE}"
            )
        return start
    try:
        if len(eyes) > 1:
            for eye in eyes:
                start.for_eye(eye)
            return start
        return start.for_eye(eyes[0])
    except ValueError as exc:
        raise ProtocolError(f"--start (or [start] refraction): {exc}") from None


def patient_outside_start_box(start: StartSection, simulated: SimulatedSection) -> str | None:
    """The problem of a ``simulated`` patient outside the full prescription's box around a given
    ``start`` (``lensopt simulate --true-sphere`` refuses it too), else None; with a start of each
    eye, the one patient simulated is each eye's."""
    if start.eyes:
        for eye in start.eyes:
            problem = patient_outside_start_box(start.for_eye(eye), simulated)
            if problem:
                return f"{eye}: {problem}"
        return None
    patient = Lens(simulated.sphere_d, simulated.cylinder_d, simulated.axis_deg or 180.0)
    box = SearchBox(start.written.minus_cylinder(), start.m_half_width_d, start.j_half_width_d)
    if box.contains(patient.power_vector()):
        return None
    (m_lo, m_hi), (j0_lo, j0_hi), (j45_lo, j45_hi) = box.bounds_d
    return (
        f"the simulated patient {patient.format()} is outside the box around the start "
        f"{start.written.format()} (M {m_lo:+g} to {m_hi:+g} D, J0 {j0_lo:+g} to {j0_hi:+g} D, "
        f"J45 {j45_lo:+g} to {j45_hi:+g} D), where no lens could correct it; give a --start near the "
        "patient, widen [start] m_half_width_d / j_half_width_d, or change [simulated]"
    )
