"""The full prescription: the search box in power-vector space and the reported result (issue 16).

A full refraction searches the Thibos power vector ``(M, J0, J45)`` of the lens (D) — sphere,
cylinder and axis at once — with the letter size as the context. The blur of a residual is the
length of its power vector, so the three coordinates are on one scale and a kernel isotropic in
them sees blur as the patient does (:mod:`lensopt.refraction.lens`).

:class:`SearchBox` is where the search looks: centred on a starting refraction (an autorefractor
reading, the habitual glasses) with half-widths in ``M`` and in ``J0``/``J45``, or, without a
start, the :data:`FULL_BOX`. :class:`Prescription` is what a session reports: the lens in clinical
notation (rounded to the phoropter), its unrounded power vector, 95 % credible intervals and the
acuity predicted with it. :class:`PrescriptionSearch` is what every full-prescription optimizer
(letters, duels, rankings) shares: its core optimizer's settings and model, and the phoropter's lens
of a power vector.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from lensopt.refraction.axes import axis_interval_deg
from lensopt.refraction.lens import (
    Lens,
    PowerVector,
    diopter_text,
    lens_arrays_from_power_vectors,
)
from lensopt.refraction.trial import TrialHistory

#: ``settings_dict()["search"]`` of the full prescription's optimizers (letters and duels): marks
#: stored settings as theirs, so a store rebuilds them rather than the two-parameter searches.
PRESCRIPTION_SEARCH = "prescription"

#: Half-widths (D) of the box around a starting refraction: ±2 D in M, ±1 D in J0 and J45 (a
#: cylinder up to 2 D away from the start's, at any axis).
START_M_HALF_WIDTH_D = 2.0
START_J_HALF_WIDTH_D = 1.0

#: Without a starting refraction: M in ±4 D (the two-parameter search's sphere range) and J0, J45
#: in ±1.5 D (cylinders up to 3 D at any axis).
FULL_M_BOUNDS_D = (-4.0, 4.0)
FULL_J_BOUNDS_D = (-1.5, 1.5)

#: The largest power (D) in a principal meridian a phoropter reaches (about −20 to +17 D on most):
#: a box whose lenses reach past it is refused for a new session (:meth:`SearchBox.meridian_reach_d`).
PHOROPTER_MAX_POWER_D = 20.0

#: Names of the power-vector coordinates, in column order.
POWER_VECTOR_NAMES = ("m_d", "j0_d", "j45_d")

#: A prescription's 95 % intervals in the order every front end writes them (the closing console and
#: log, the printed record): (key of ``Prescription.intervals``, unit); each names them its own way.
INTERVAL_UNITS = (
    ("sphere_d", "D"),
    ("cylinder_d", "D"),
    ("axis_deg", "deg"),
    ("m_d", "D"),
    ("j0_d", "D"),
    ("j45_d", "D"),
)


def interval_rows(labels: tuple[str, ...]) -> tuple[tuple[str, str, str], ...]:
    """(key, label, unit) of each of :data:`INTERVAL_UNITS`, named by ``labels`` in that order."""
    return tuple((key, label, unit) for (key, unit), label in zip(INTERVAL_UNITS, labels, strict=True))


def axis_whole_deg(axis_deg: float) -> int:
    """An axis in whole degrees, 1-180 (an interval's end past 180 or below 1 wrapped)."""
    return (round(axis_deg) - 1) % 180 + 1


def interval_text(key: str, low: float, high: float) -> str:
    """One of :data:`INTERVAL_UNITS`' intervals as every front end writes it: ``-1.50 to -1.00 D``,
    or for the axis ``160 to 005 through 180`` (an interval may pass 180); a J0 or J45 of a search
    along one axis that the axis fixes (J45 along 180: ``+0.00 to +0.00 D`` read as a measurement)
    ``fixed by the axis``; a cylinder interval reaching above zero, which only a two-parameter search's
    signed cylinder does (a full prescription's are minus cylinders), ``(signed, along the axis)``."""
    if key == "axis_deg":
        lo, hi = axis_whole_deg(low), axis_whole_deg(high)
        return f"{lo:03d} to {hi:03d}" + (" through 180" if lo > hi else "")
    if key in ("j0_d", "j45_d") and diopter_text(low) == diopter_text(high):
        return "fixed by the axis"
    if key == "cylinder_d" and high > 0 and diopter_text(high) != "+0.00":
        # a two-parameter search's signed cylinder along its axis: "-3.10 to +0.90 D" under "Result
        # (minus cylinder)" read as a plus cylinder written in minus cylinder
        return f"{diopter_text(low)} to {diopter_text(high)} D (signed, along the axis)"
    return f"{diopter_text(low)} to {diopter_text(high)} D"


def _half_width(name: str, value) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not (math.isfinite(value) and value > 0):
        raise ValueError(f"{name} must be a positive number of diopters (e.g. 1.0), got {value!r}")
    return float(value)


@dataclass(frozen=True)
class SearchBox:
    """The power vectors ``(M, J0, J45)`` a prescription search may test: ``centre ± half-widths``.

    ``start``: the starting refraction the box is centred on (``None``: the full box, centred on
    plano). ``m_half_width_d`` and ``j_half_width_d`` (D) are the half-widths in ``M`` and in each
    of ``J0`` and ``J45``.
    """

    start: Lens | None = None
    m_half_width_d: float = START_M_HALF_WIDTH_D
    j_half_width_d: float = START_J_HALF_WIDTH_D

    def __post_init__(self):
        if self.start is not None and not isinstance(self.start, Lens):
            raise ValueError(f"SearchBox.start must be a Lens or None, got {self.start!r}")
        if self.start is not None:  # every lens near it beyond a phoropter: asked, then refused by tell
            meridian = max(self.start.sphere_d, self.start.sphere_d + self.start.cylinder_d, key=abs)
            if abs(meridian) > PHOROPTER_MAX_POWER_D + 1e-9:
                raise ValueError(
                    f"the start {self.start.format()} has a meridian of {meridian:+.2f} D, beyond a phoropter's "
                    f"±{PHOROPTER_MAX_POWER_D:g} D; refract this eye with trial lenses"
                )
        object.__setattr__(self, "m_half_width_d", _half_width("m_half_width_d", self.m_half_width_d))
        object.__setattr__(self, "j_half_width_d", _half_width("j_half_width_d", self.j_half_width_d))

    @property
    def centre(self) -> PowerVector:
        """The power vector at the centre of the box (the start's, or zero)."""
        return PowerVector(0.0, 0.0, 0.0) if self.start is None else self.start.power_vector()

    @property
    def bounds_d(self) -> tuple[tuple[float, float], tuple[float, float], tuple[float, float]]:
        """``((M_lo, M_hi), (J0_lo, J0_hi), (J45_lo, J45_hi))`` in diopters."""
        if self.start is None:
            return FULL_M_BOUNDS_D, FULL_J_BOUNDS_D, FULL_J_BOUNDS_D
        c = self.centre
        m, j = self.m_half_width_d, self.j_half_width_d
        return (c.m_d - m, c.m_d + m), (c.j0_d - j, c.j0_d + j), (c.j45_d - j, c.j45_d + j)

    def _j_reach_d(self) -> float:
        """The largest length of ``(J0, J45)`` in the box (at a corner): half the strongest cylinder."""
        _, (j0_lo, j0_hi), (j45_lo, j45_hi) = self.bounds_d
        return math.hypot(max(abs(j0_lo), abs(j0_hi)), max(abs(j45_lo), abs(j45_hi)))

    def meridian_reach_d(self) -> float:
        """The power (D, signed) of the farthest principal meridian of a lens in the box: a lens
        ``(M, J0, J45)`` has meridians ``M ± |J|``, so the farthest is ``|M| + |J|`` at a corner."""
        (m_lo, m_hi), _, _ = self.bounds_d
        m = m_lo if abs(m_lo) >= abs(m_hi) else m_hi
        return math.copysign(abs(m) + self._j_reach_d(), m)

    def largest_m_half_width_d(self, limit_d: float = PHOROPTER_MAX_POWER_D) -> float:
        """The largest ``m_half_width_d`` (D) whose box, with this ``j_half_width_d``, keeps every
        meridian within ``±limit_d`` (below 0: none does, the J half-width must narrow too)."""
        return limit_d - abs(self.centre.m_d) - self._j_reach_d()

    def contains(self, power_vector: PowerVector, slack_d: float = 1e-9) -> bool:
        """Whether ``power_vector`` lies in the box."""
        values = (power_vector.m_d, power_vector.j0_d, power_vector.j45_d)
        return all(lo - slack_d <= v <= hi + slack_d for v, (lo, hi) in zip(values, self.bounds_d))

    def to_dict(self) -> dict:
        return {
            "start": None if self.start is None else self.start.format(),
            "m_half_width_d": self.m_half_width_d,
            "j_half_width_d": self.j_half_width_d,
        }

    @classmethod
    def from_dict(cls, data: dict) -> SearchBox:
        start = data.get("start")
        return cls(
            None if start is None else Lens.parse(start),
            data.get("m_half_width_d", START_M_HALF_WIDTH_D),
            data.get("j_half_width_d", START_J_HALF_WIDTH_D),
        )


#: Spacing (D) of the fine grid of candidate lenses around a reported lens, in each of M, J0, J45: a
#: draw's best lens lies on it, the best lens itself anywhere in the cell around it.
FINE_STEP_D = 0.25

#: Offsets (D) of that grid: the lenses against which the reported one is measured (its confidence
#: and intervals).
FINE_OFFSETS_D = tuple(k * FINE_STEP_D for k in (-2, -1, 0, 1, 2))


def fine_grid_d(centre_d) -> np.ndarray:
    """The grid of :data:`FINE_OFFSETS_D` around the power vector ``centre_d``, ``(125, 3)``."""
    centre_d = np.asarray(centre_d, dtype=float)
    offsets = np.array(FINE_OFFSETS_D)
    return np.array(np.meshgrid(*(centre_d[k] + offsets for k in range(3)), indexing="ij")).reshape(3, -1).T


def distinct_inside(lenses_d: np.ndarray, bounds_d) -> np.ndarray:
    """The rows of ``lenses_d`` inside the box ``bounds_d`` (the first row, the reported lens, kept
    wherever it is), each power vector once, in their first order."""
    bounds = np.asarray(bounds_d, dtype=float)
    inside = np.all((lenses_d >= bounds[:, 0] - 1e-9) & (lenses_d <= bounds[:, 1] + 1e-9), axis=1)
    inside[0] = True
    lenses_d = lenses_d[inside]
    _, first = np.unique(np.round(lenses_d, 9), axis=0, return_index=True)
    return lenses_d[np.sort(first)]


def within_cells(power_vectors_d: np.ndarray, rng: np.random.Generator, bounds_d, cell_d: float = FINE_STEP_D):
    """Draws of the best lens spread uniformly over the grid cell (``cell_d`` wide in each of M, J0,
    J45) around the grid lens each fell on, kept in the box ``bounds_d``: the argmax over a grid
    says where the best lens is only to the grid's resolution. Without the spread, intervals of
    draws that mostly fall on one lens are a grid step wide or none (seen: J0 and J45 intervals
    after 100 letters held the truth 84 % of the time on tuning patients, some of zero width).
    The ideal observer spreads its draws the same way (:mod:`lensopt.bench.ideal_prescription`)."""
    draws = np.asarray(power_vectors_d, dtype=float).reshape(-1, 3)
    half = 0.5 * cell_d
    lows, highs = np.asarray(bounds_d, dtype=float).T
    return np.clip(draws + rng.uniform(-half, half, size=draws.shape), lows, highs)


def lens_intervals(power_vectors_d: np.ndarray, reported: Lens, level: float = 0.95) -> dict:
    """Central ``level`` intervals of draws of the best lens, ``(n, 3)`` power vectors (D): of ``M``,
    ``J0``, ``J45`` and of the minus-cylinder sphere, cylinder and axis, each widened, where it
    falls short, to hold the ``reported`` lens's own value (the axis's when it has a cylinder): the
    lens printed beside them is always inside them. It can be outside the draws' central intervals:
    it is the phoropter lens nearest the estimate (up to half a step away, past the box's edge
    from an estimate on it), and after a few answers the estimate can lie outside the draws'
    spread (seen: a provisional ``+0.50 / -0.50 x 151`` printed beside an M interval of -2.11 to
    +0.02 D). The axis interval is taken on the circle around ``reported``'s axis (a draw at 178°
    next to a reported 2° is 4° away), as ``(low, high)`` in degrees, ``low`` in (0, 180] and
    ``high`` past 180 when it passes 180 (``(172, 188)`` for 172 to 8; an interval around 27° from
    -40° to 108° is ``(140, 288)``: one convention, the data dictionary's). Draws of an argmax over
    a grid: spread them first (:func:`within_cells`)."""
    draws = np.asarray(power_vectors_d, dtype=float).reshape(-1, 3)
    tail = 50.0 * (1.0 - level)
    lens = reported.minus_cylinder()
    held = dict(zip(POWER_VECTOR_NAMES, lens.power_vector().to_array(), strict=True))
    held.update(sphere_d=lens.sphere_d, cylinder_d=lens.cylinder_d)
    sphere, cylinder, axis = lens_arrays_from_power_vectors(draws[:, 0], draws[:, 1], draws[:, 2])
    columns = dict(zip(POWER_VECTOR_NAMES, draws.T, strict=True)) | {"sphere_d": sphere, "cylinder_d": cylinder}
    out = {}
    for name, values in columns.items():
        lo, hi = np.percentile(np.atleast_1d(values), [tail, 100.0 - tail])
        out[name] = (float(min(lo, held[name])), float(max(hi, held[name])))
    centre = lens.axis_deg
    offset = (np.atleast_1d(axis) - centre + 90.0) % 180.0 - 90.0
    lo, hi = np.percentile(offset, [tail, 100.0 - tail])
    if lens.cylinder_d != 0.0:  # the lens's own axis: offset 0
        lo, hi = min(lo, 0.0), max(hi, 0.0)
    out["axis_deg"] = axis_interval_deg(centre + lo, centre + hi)
    return out


@dataclass(frozen=True)
class Prescription:
    """What a full refraction reports.

    ``lens``: the prescription, minus cylinder, rounded to the phoropter (0.25 D, axis to 1°);
    ``power_vector_d``: the unrounded estimate it was rounded from; ``intervals``: 95 % credible
    intervals (``{"m_d": (lo, hi), "j0_d": …, "j45_d": …, "sphere_d": …, "cylinder_d": …,
    "axis_deg": …}``, D and degrees); ``predicted_acuity_logmar``: the model's acuity threshold with
    the lens; ``confidence``: the posterior probability that the lens is within 0.025 logMAR of the
    best one; ``trials``: answers it rests on.
    """

    lens: Lens
    power_vector_d: PowerVector
    intervals: dict = field(default_factory=dict)
    predicted_acuity_logmar: float | None = None
    confidence: float | None = None
    trials: int = 0

    @property
    def text(self) -> str:
        """Clinical notation, e.g. ``-1.25 / -0.75 x 170``."""
        return self.lens.format()

    def to_dict(self) -> dict:
        pv = self.power_vector_d
        return {
            "prescription": self.text,
            "sphere_d": self.lens.sphere_d,
            "cylinder_d": self.lens.cylinder_d,
            "axis_deg": self.lens.axis_deg,
            "power_vector_d": {"M": pv.m_d, "J0": pv.j0_d, "J45": pv.j45_d},
            "intervals": {k: list(v) for k, v in self.intervals.items()},
            "predicted_acuity_logmar": self.predicted_acuity_logmar,
            "confidence": self.confidence,
            "trials": self.trials,
        }


def checked_lens_steps(lens_step_d, axis_step_deg) -> tuple[float | None, float]:
    """A full prescription's phoropter steps: the power step in (0, 1] D, or None for continuous
    powers, and the axis step, degrees in (0, 90] that divide 180 (1 or 5); a one-line ValueError
    naming the step otherwise, when the optimizer is made rather than at its first trial."""
    if lens_step_d is not None and (
        isinstance(lens_step_d, bool)
        or not isinstance(lens_step_d, (int, float))
        or not (math.isfinite(lens_step_d) and 0 < lens_step_d <= 1)
    ):
        raise ValueError(f"lens_step_d must be a step in (0, 1] D (e.g. 0.25) or None, got {lens_step_d!r}")
    a = axis_step_deg
    if (
        isinstance(a, bool)
        or not isinstance(a, (int, float))
        or not (math.isfinite(a) and 0 < a <= 90)
        or abs(180.0 / a - round(180.0 / a)) > 1e-9
    ):
        raise ValueError(f"axis_step_deg must be degrees in (0, 90] that divide 180 (e.g. 1 or 5), got {a!r}")
    return (None if lens_step_d is None else float(lens_step_d)), float(a)


class PrescriptionSearch(TrialHistory):
    """What every full-prescription optimizer shares: the core optimizer ``_core`` it drives (its
    ``settings`` and ``model``), the search ``box`` and the phoropter's steps. A subclass sets them."""

    #: The answer model's optimizer: ``settings``, ``model``, ...
    _core: Any

    box: SearchBox
    lens_step_d: float | None
    axis_step_deg: float
    plus_preference: float

    @property
    def settings(self):
        """The core optimizer's settings."""
        return self._core.settings

    @property
    def model(self):
        """The core optimizer's GP (None before the first modelled answer)."""
        return self._core.model

    def phoropter_lens(self, power_vector_d) -> Lens:
        """The minus-cylinder lens of a power vector ``(M, J0, J45)``, rounded to the phoropter: the
        lens a trial asks for (sphere, cylinder and axis each rounded, as the held-out campaigns ran)."""
        lens = Lens.from_power_vector(PowerVector(*(float(v) for v in power_vector_d)))
        return lens if self.lens_step_d is None else lens.rounded(self.lens_step_d, self.axis_step_deg)

    def prescribed_lens(self, estimate: PowerVector) -> Lens:
        """The lens a prescription writes for ``estimate``: the settable lens nearest it in blur, ties
        to the more plus (:meth:`~lensopt.refraction.lens.Lens.nearest_phoropter_lens`; 0.25 D and 1°
        without phoropter steps), not :meth:`phoropter_lens`'s rounding of each power on its own."""
        lens = estimate.to_lens()
        if self.lens_step_d is None:
            return lens.nearest_phoropter_lens()
        return lens.nearest_phoropter_lens(self.lens_step_d, self.axis_step_deg)
