"""The lens: a clinical sphero-cylinder ``S / C × α``, its power vector, phoropter rounding and notation.

The lowest layer of lensopt: it imports nothing of lensopt, only numpy and the standard library,
so that any module (the command line, the simulated patient, the optimizers) may use it cheaply.

Conventions (also in ``docs/lens.md``):

- Powers in diopters, the axis in degrees in ``(0, 180]``: 180, not 0, is the horizontal meridian.
  The constructor reads an axis of 0 as 180; the text parser, which reads what a person typed,
  refuses an axis outside 1–180.
- A lens keeps the cylinder form it was given (``cylinder_d > 0`` is plus cylinder:
  :attr:`Lens.is_plus_cylinder`); :meth:`Lens.minus_cylinder` and :meth:`Lens.plus_cylinder` convert.
  Power vectors convert back to minus cylinder.
- A lens without cylinder has axis 180 (a sphere has no axis; one value keeps equal lenses equal).
- Rounding to the phoropter breaks ties towards plus (the clinical "most plus" rule).
- Notation: ``-1.25 / -0.75 x 170``: signed powers with two decimals, the axis as three digits
  (``x 005``, so that it is not misread as 50), ``-2.00 DS`` for a sphere, ``plano`` for zero sphere.

Power vectors (Thibos, Wheeler & Horner, Optom Vis Sci 1997): ``M = S + C/2``,
``J0 = −(C/2) cos 2α``, ``J45 = −(C/2) sin 2α``; back, in minus cylinder,
``C = −2 √(J0² + J45²)``, ``S = M − C/2``, ``α = ½ atan2(J45, J0)`` in ``(0, 180]``. The blur of a
residual is its power vector's length (Raasch 1995 for aligned axes: ``√(½ (r_S² + (r_S + r_C)²))``).
An acuity's words (logMAR, the Snellen line): :mod:`lensopt.refraction.acuity_text`.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass
from decimal import ROUND_HALF_UP, Decimal
from numbers import Real

import numpy as np

__all__ = [
    "LENS_TEXT_EXAMPLES",
    "PHOROPTER_STEP_D",
    "Lens",
    "PowerVector",
    "diopter_text",
    "lens_arrays_from_power_vectors",
    "off_step_note",
    "parse_lens",
    "power_vector_arrays",
    "show_lens",
    "two_parameter_lens_text",
    "wrap_axis_deg",
]

PHOROPTER_STEP_D = 0.25
"""The power step of a phoropter (D): sphere and cylinder are set in quarter diopters."""

HUNDREDTH = Decimal("0.01")
"""What :func:`diopter_text` rounds to (D)."""

LENS_TEXT_EXAMPLES = "'-1.00 / -0.50 x 180', '-2.00 DS' or 'plano'"
"""What a well-formed lens looks like, quoted in every parsing error."""


# ---------------------------------------------------------------------------------------------
# Array math (numpy): the one implementation of the power-vector formulas in lensopt.
# ---------------------------------------------------------------------------------------------


def _cos_sin_deg(angle_deg):
    """``(cos, sin)`` of an angle in degrees, exact at multiples of 90° (``cos 180° = −1``,
    ``sin 180° = 0`` exactly, not 1.2e-16), so that axes 90 and 180 give exact power vectors."""
    angle = np.mod(np.asarray(angle_deg, dtype=float), 360.0)
    quadrant = np.rint(angle / 90.0)
    rest_rad = np.deg2rad(angle - 90.0 * quadrant)  # in [−45°, 45°]
    cos_r, sin_r = np.cos(rest_rad), np.sin(rest_rad)
    quadrant = np.mod(quadrant, 4.0)
    cos = np.select([quadrant == 0, quadrant == 1, quadrant == 2], [cos_r, -sin_r, -cos_r], sin_r)
    sin = np.select([quadrant == 0, quadrant == 1, quadrant == 2], [sin_r, cos_r, -sin_r], -cos_r)
    return cos, sin


def wrap_axis_deg(angle_deg):
    """An angle (degrees, any value) as a cylinder axis in ``(0, 180]``: 0 and 360 become 180,
    −10 becomes 170, 190 becomes 10. Arrays elementwise; a scalar gives a numpy float."""
    wrapped = np.mod(np.asarray(angle_deg, dtype=float), 180.0)
    return np.where(wrapped == 0.0, 180.0, wrapped)[()]


def power_vector_arrays(sphere_d, cylinder_d, axis_deg):
    """Thibos power vectors ``(M, J0, J45)`` (D) of sphero-cylinders ``S / C × α``.

    The arguments broadcast against each other (numpy arrays or scalars); each output has the
    broadcast shape (a numpy float for scalar input). Either cylinder form gives the same vector.
    """
    sphere_d, cylinder_d, axis_deg = np.broadcast_arrays(
        np.asarray(sphere_d, dtype=float),
        np.asarray(cylinder_d, dtype=float),
        np.asarray(axis_deg, dtype=float),
    )
    cos_2a, sin_2a = _cos_sin_deg(2.0 * axis_deg)
    half_cylinder_d = 0.5 * cylinder_d
    return (
        (sphere_d + half_cylinder_d)[()],
        (-half_cylinder_d * cos_2a)[()],
        (-half_cylinder_d * sin_2a)[()],
    )


def lens_arrays_from_power_vectors(m_d, j0_d, j45_d):
    """Minus-cylinder lenses ``(S, C, α)`` of power vectors ``(M, J0, J45)`` (D), ``α`` in ``(0, 180]``.

    ``C = −2 √(J0² + J45²)``, ``S = M − C/2``, ``α = ½ atan2(J45, J0)`` wrapped into ``(0, 180]``;
    where ``C = 0`` the axis is 180. Broadcasting as in :func:`power_vector_arrays`.
    """
    m_d, j0_d, j45_d = np.broadcast_arrays(
        np.asarray(m_d, dtype=float), np.asarray(j0_d, dtype=float), np.asarray(j45_d, dtype=float)
    )
    cylinder_d = -2.0 * np.hypot(j0_d, j45_d)
    sphere_d = m_d - 0.5 * cylinder_d
    axis_deg = wrap_axis_deg(0.5 * np.degrees(np.arctan2(j45_d, j0_d)))
    axis_deg = np.where(cylinder_d == 0.0, 180.0, axis_deg)
    return (sphere_d + 0.0)[()], (cylinder_d + 0.0)[()], np.asarray(axis_deg, dtype=float)[()]


# ---------------------------------------------------------------------------------------------
# Validation
# ---------------------------------------------------------------------------------------------


def _finite(owner: str, name: str, value, unit: str) -> float:
    """``value`` as a float; a one-line TypeError unless a real number, ValueError unless finite."""
    if isinstance(value, bool) or not isinstance(value, (Real, np.floating, np.integer)):
        raise TypeError(f"{owner}.{name} must be a finite number of {unit}, got {value!r}")
    value = float(value)
    if not math.isfinite(value):
        raise ValueError(f"{owner}.{name} must be a finite number of {unit}, got {value!r}")
    return value + 0.0  # −0.0 → 0.0, so that a zero prints and hashes one way


def _round_half_up(value: float, step: float) -> float:
    """``value`` rounded to a multiple of ``step``, ties upwards (towards plus); cleaned of the
    last-digit noise that ``k × step`` leaves for steps that are not binary fractions (0.1)."""
    return round(math.floor(value / step + 0.5) * step, 12) + 0.0


# ---------------------------------------------------------------------------------------------
# The types
# ---------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class PowerVector:
    """A Thibos power vector: spherical equivalent ``M`` and the two Jackson cross-cylinders
    ``J0`` (at 0°/90°) and ``J45`` (at 45°/135°), in diopters.

    Vectors add and subtract (a residual is ``lens − correction``), scale by a number, and their
    length :attr:`length_d` is the blur strength of a residual.
    """

    m_d: float
    j0_d: float
    j45_d: float

    def __post_init__(self):
        for name in ("m_d", "j0_d", "j45_d"):
            object.__setattr__(self, name, _finite("PowerVector", name, getattr(self, name), "diopters"))

    @property
    def length_d(self) -> float:
        """``√(M² + J0² + J45²)`` (D): the blur strength of this vector as a residual."""
        return math.sqrt(self.m_d**2 + self.j0_d**2 + self.j45_d**2)

    def to_lens(self) -> Lens:
        """The minus-cylinder lens of this vector (see :meth:`Lens.from_power_vector`)."""
        return Lens.from_power_vector(self)

    def to_array(self) -> np.ndarray:
        """``[M, J0, J45]`` as a float array of shape ``(3,)``."""
        return np.array([self.m_d, self.j0_d, self.j45_d])

    def __add__(self, other: PowerVector) -> PowerVector:
        if not isinstance(other, PowerVector):
            return NotImplemented
        return PowerVector(self.m_d + other.m_d, self.j0_d + other.j0_d, self.j45_d + other.j45_d)

    def __sub__(self, other: PowerVector) -> PowerVector:
        if not isinstance(other, PowerVector):
            return NotImplemented
        return PowerVector(self.m_d - other.m_d, self.j0_d - other.j0_d, self.j45_d - other.j45_d)

    def __neg__(self) -> PowerVector:
        return PowerVector(-self.m_d, -self.j0_d, -self.j45_d)

    def __mul__(self, factor) -> PowerVector:
        if isinstance(factor, bool) or not isinstance(factor, (Real, np.floating, np.integer)):
            return NotImplemented
        f = float(factor)
        return PowerVector(f * self.m_d, f * self.j0_d, f * self.j45_d)

    __rmul__ = __mul__


@dataclass(frozen=True)
class Lens:
    """A sphero-cylinder ``S / C × α``: sphere and cylinder in diopters, axis in degrees.

    The axis lies in ``(0, 180]``: 0 is read as 180; anything else outside is refused (wrap an
    angle first with :func:`wrap_axis_deg`). A lens without cylinder gets axis 180. The cylinder
    keeps the sign it was given; equality is field by field, so a lens and its transposition are
    not ``==`` (use :meth:`is_equivalent`).
    """

    sphere_d: float
    cylinder_d: float = 0.0
    axis_deg: float = 180.0

    def __post_init__(self):
        object.__setattr__(self, "sphere_d", _finite("Lens", "sphere_d", self.sphere_d, "diopters"))
        object.__setattr__(self, "cylinder_d", _finite("Lens", "cylinder_d", self.cylinder_d, "diopters"))
        axis_deg = _finite("Lens", "axis_deg", self.axis_deg, "degrees")
        if not 0.0 <= axis_deg <= 180.0:
            raise ValueError(
                f"Lens.axis_deg must be in 0-180 degrees (0 is read as 180), got {axis_deg!r}: "
                f"wrap an angle first with lensopt.refraction.lens.wrap_axis_deg"
            )
        if axis_deg == 0.0 or self.cylinder_d == 0.0:
            axis_deg = 180.0
        object.__setattr__(self, "axis_deg", axis_deg)

    # -- conversions -----------------------------------------------------------------------------

    @classmethod
    def from_power_vector(cls, power_vector: PowerVector) -> Lens:
        """The minus-cylinder lens of a power vector, axis in ``(0, 180]`` (180 without cylinder)."""
        sphere_d, cylinder_d, axis_deg = lens_arrays_from_power_vectors(
            power_vector.m_d, power_vector.j0_d, power_vector.j45_d
        )
        return cls(float(sphere_d), float(cylinder_d), float(axis_deg))

    @classmethod
    def parse(cls, text: str) -> Lens:
        """The lens written in ``text`` (see :func:`parse_lens`)."""
        return parse_lens(text)

    def power_vector(self) -> PowerVector:
        """The Thibos power vector ``(M, J0, J45)`` of this lens (the same for either cylinder form)."""
        m_d, j0_d, j45_d = power_vector_arrays(self.sphere_d, self.cylinder_d, self.axis_deg)
        return PowerVector(float(m_d), float(j0_d), float(j45_d))

    @property
    def is_plus_cylinder(self) -> bool:
        """Whether the cylinder is written in plus form (``cylinder_d > 0``)."""
        return self.cylinder_d > 0.0

    @property
    def is_spherical(self) -> bool:
        """Whether the lens has no cylinder."""
        return self.cylinder_d == 0.0

    def transposed(self) -> Lens:
        """The same lens in the other cylinder form: ``(S + C, −C, α ± 90°)``, axis in ``(0, 180]``."""
        if self.is_spherical:
            return self
        axis_deg = self.axis_deg + 90.0 if self.axis_deg <= 90.0 else self.axis_deg - 90.0
        return Lens(self.sphere_d + self.cylinder_d, -self.cylinder_d, axis_deg)

    def minus_cylinder(self) -> Lens:
        """This lens with a cylinder ``≤ 0`` (transposed if it was in plus cylinder)."""
        return self.transposed() if self.is_plus_cylinder else self

    def plus_cylinder(self) -> Lens:
        """This lens with a cylinder ``≥ 0`` (transposed if it was in minus cylinder)."""
        return self.transposed() if self.cylinder_d < 0.0 else self

    # -- comparison ------------------------------------------------------------------------------

    def blur_d(self, other: Lens) -> float:
        """Blur strength (D) of the residual ``self − other``: the length of the power-vector difference."""
        return (self.power_vector() - other.power_vector()).length_d

    def is_equivalent(self, other: Lens, tolerance_d: float = 1e-9) -> bool:
        """Whether the two lenses have the same powers (within ``tolerance_d``), in any cylinder form."""
        return self.blur_d(other) <= tolerance_d

    # -- the phoropter and the page --------------------------------------------------------------

    def rounded(self, step_d: float = PHOROPTER_STEP_D, axis_step_deg: float = 1.0) -> Lens:
        """The lens a phoropter can set: sphere and cylinder to multiples of ``step_d``, the axis to a
        multiple of ``axis_step_deg`` in 1–180 (177.6 → 178 with 1° steps, → 180 with 5°; 0.4 → 180).

        Ties go towards plus (−0.125 → 0.00, −0.375 → −0.25). The lens is rounded in the cylinder
        form it is written in: convert first (:meth:`minus_cylinder`) to round the form you prescribe.
        A cylinder that rounds to zero leaves a sphere (axis 180).
        """
        step_d = _finite("Lens.rounded", "step_d", step_d, "diopters")
        axis_step_deg = _finite("Lens.rounded", "axis_step_deg", axis_step_deg, "degrees")
        if step_d <= 0.0:
            raise ValueError(f"Lens.rounded.step_d must be a positive number of diopters (e.g. 0.25), got {step_d!r}")
        steps_in_180 = 180.0 / axis_step_deg if axis_step_deg > 0.0 else 0.0
        if axis_step_deg <= 0.0 or abs(steps_in_180 - round(steps_in_180)) > 1e-9:
            raise ValueError(f"Lens.rounded.axis_step_deg must divide 180 degrees (e.g. 1 or 5), got {axis_step_deg!r}")
        axis_deg = _round_half_up(self.axis_deg, axis_step_deg)
        return Lens(
            _round_half_up(self.sphere_d, step_d),
            _round_half_up(self.cylinder_d, step_d),
            180.0 if axis_deg == 0.0 else axis_deg,
        )

    def nearest_phoropter_lens(self, step_d: float = PHOROPTER_STEP_D, axis_step_deg: float = 1.0) -> Lens:
        """The lens a phoropter can set (minus cylinder; sphere and cylinder in ``step_d``, the axis in
        ``axis_step_deg`` within 1–180) nearest this one in blur (:meth:`blur_d`, the power-vector
        distance), ties to the more plus (higher ``M``): what a prescription is written as.

        Rounding sphere and cylinder each on its own (:meth:`rounded`) ignores that they share the
        spherical equivalent: ``-1.20 / -0.91 x 163`` rounds to ``-1.25 / -1.00 x 163``, 0.105 D of
        blur from it and 0.125 D more minus, where ``-1.25 / -0.75 x 163`` is 0.085 D away (a
        clinician review, 1 Dec 2026; about one lens in four, by a sweep). The nearest lens is sought
        among the 3 × 3 sphere and cylinder steps around the rounded ones, at the two whole axis
        steps either side of the axis.
        """
        lens = self.minus_cylinder()
        start = lens.rounded(step_d, axis_step_deg)  # validates the steps
        low_axis = math.floor(lens.axis_deg / axis_step_deg) * axis_step_deg
        axes = {(a % 180.0) or 180.0 for a in (low_axis, low_axis + axis_step_deg)}
        here = lens.power_vector()
        best: tuple[float, float, Lens] | None = None
        for sphere_steps in (-1, 0, 1):
            for cylinder_steps in (-1, 0, 1):
                cylinder_d = min(round(start.cylinder_d + cylinder_steps * step_d, 12) + 0.0, 0.0)
                sphere_d = round(start.sphere_d + sphere_steps * step_d, 12) + 0.0
                for axis_deg in sorted(axes) if cylinder_d < 0.0 else [180.0]:
                    candidate = Lens(sphere_d, cylinder_d, axis_deg)
                    power = candidate.power_vector()
                    key = (round((power - here).length_d, 9), -power.m_d, candidate)
                    if best is None or key[:2] < best[:2]:
                        best = key
        assert best is not None
        return best[2]

    def format(self) -> str:
        """Clinical notation: ``-1.25 / -0.75 x 170``, ``+0.50 / -1.00 x 005``, ``-2.00 DS``,
        ``plano / -0.50 x 090``, ``plano``.

        Powers are shown with their sign and two decimals (not rounded to the phoropter: call
        :meth:`rounded` first), the axis as a whole number of three digits. The cylinder form is the
        lens's own; :func:`parse_lens` reads every string this returns.
        """
        sphere = diopter_text(self.sphere_d)
        cylinder = diopter_text(self.cylinder_d)
        if cylinder == "+0.00":
            return "plano" if sphere == "+0.00" else f"{sphere} DS"
        axis = int(_round_half_up(self.axis_deg, 1.0)) or 180
        return f"{'plano' if sphere == '+0.00' else sphere} / {cylinder} x {axis:03d}"

    def __str__(self) -> str:
        return self.format()


def show_lens(lens: Lens, convention: str = "minus") -> str:
    """``lens`` in clinical notation in the ``convention`` (``"minus"`` or ``"plus"`` cylinder)."""
    return (lens.plus_cylinder() if convention == "plus" else lens.minus_cylinder()).format()


def two_parameter_lens_text(
    sphere_d: float, cylinder_d: float, axis_deg: float = 0.0, convention: str = "minus", gap: str = "  "
) -> str:
    """A lens of a two-parameter search, whose signed cylinder lies along the patient's axis: in
    clinical notation in the cylinder ``convention`` (``"minus"`` or ``"plus"``) when that axis is
    known (``axis_deg`` 1–180; ``S -0.50 D  C +1.00 D`` at 90° is ``+0.50 / -1.00 x 180`` in minus
    cylinder), else ``S -0.50 D  C +1.00 D`` (``axis_deg`` 0; ``gap`` between the two powers)."""
    if not axis_deg:
        return f"S {diopter_text(sphere_d)} D{gap}C {diopter_text(cylinder_d)} D"
    return show_lens(Lens(sphere_d, cylinder_d, axis_deg), convention)


def diopter_text(value_d: float, signed: bool = True) -> str:
    """A power in diopters to 0.01 D, halves rounded away from zero: ``-1.63`` for -1.625, ``+1.63``
    for +1.625, ``-0.13`` for -0.125 — the one rule wherever lensopt writes a power, a width or an
    sd in diopters. (Python's ``f"{-1.625:+.2f}"`` is ``-1.62``, half to even: the spherical
    equivalent ``M = S + C/2`` of lenses in 0.25 D steps often ends in 0.125 or 0.375 D.)

    The value is rounded as written in decimal (its shortest repr: 0.145 is ``0.15``, though the
    float is a hair below), signed (``+0.50``) unless ``signed`` is false (an sd: ``0.50``); one
    that shows as zero is ``+0.00`` (``0.00``), never ``-0.00``. Not a number: as Python writes it."""
    value = float(value_d)
    if not math.isfinite(value):
        return f"{value:+.2f}" if signed else f"{value:.2f}"
    rounded = Decimal(repr(value)).quantize(HUNDREDTH, rounding=ROUND_HALF_UP)
    rounded = rounded.copy_abs() if rounded.is_zero() else rounded
    return f"{rounded:+.2f}" if signed else f"{rounded:.2f}"


# ---------------------------------------------------------------------------------------------
# Reading clinical notation
# ---------------------------------------------------------------------------------------------

_DASHES = str.maketrans(
    {
        "\u2212": "-",
        "\u2013": "-",
        "\u2012": "-",
        "\u2010": "-",
        "\ufe63": "-",
        "\uff0d": "-",
        "\uff0b": "+",
        "\u00d7": "x",
        "\u00b0": " ",
    }
)
"""Unicode minus signs and dashes, the full-width plus, the multiplication sign and the degree sign."""

_NUMBER = r"[+-]?(?:\d+(?:\.\d*)?|\.\d+)(?![\d.])"
"""A decimal number with an optional sign, never split from a digit that follows it ("-100")."""
_LENS_TEXT = re.compile(
    rf"""^(?P<sphere>plano|pl|{_NUMBER})
        \s*(?:
            (?P<spherical>ds|d\.s\.|sph)
          | /?\s*(?P<cylinder>{_NUMBER})\s*(?:(?P<x>x)\s*(?P<axis>{_NUMBER})?)?
        )?$""",
    re.VERBOSE | re.IGNORECASE,
)


_COMMA_DECIMAL = re.compile(r"(\d),(\d)")
"""A decimal comma (``-2,25``), as a European keyboard or habit types it."""


def off_step_note(lens: Lens, step_d: float = PHOROPTER_STEP_D) -> str | None:
    """One line when ``lens``'s sphere or cylinder is not on the phoropter's ``step_d`` steps
    (``-2.2 -0.7 x 33``, a typo of ``-2.25 -0.75 x 33`` more often than a lens meant), naming the
    nearest lens on them (:meth:`Lens.rounded`); None for a lens on the steps."""
    nearest = lens.rounded(step_d)
    if abs(nearest.sphere_d - lens.sphere_d) < 1e-9 and abs(nearest.cylinder_d - lens.cylinder_d) < 1e-9:
        return None
    return f"{lens.format()} is not on the phoropter's {step_d:g} D steps: the nearest is {nearest.format()}"


def parse_lens(text: str) -> Lens:
    """The lens a clinician wrote: sphere, then cylinder and axis, or a sphere alone.

    Accepted: ``-1.00 -0.50 x 180``, ``-1.00/-0.50x180``, ``-1.00 / -0.50 × 180``, ``pl -0.50 x 90``,
    ``plano``, ``-2.00 DS`` (or ``sph``, or nothing after the sphere), ``+1.25 +0.75 x 90`` (plus
    cylinder, kept as written: :attr:`Lens.is_plus_cylinder`), with the unicode minus ``−``, ``×``,
    a degree sign, any case and spacing. Non-zero powers need their sign; the axis is a whole
    number from 1 to 180 (180, not 0, for the horizontal meridian).

    Raises ValueError (one line: what is wrong and an example of the right form) for any other text,
    TypeError for what is not text.
    """
    if not isinstance(text, str):
        raise TypeError(f"a lens is written as text, e.g. {LENS_TEXT_EXAMPLES}; got {text!r}")
    normalized = " ".join(text.translate(_DASHES).split())
    if not normalized:
        raise ValueError(f"no lens given (empty text): write one, e.g. {LENS_TEXT_EXAMPLES}")
    match = _LENS_TEXT.match(normalized)
    if match is None and _COMMA_DECIMAL.search(normalized):
        pointed = _COMMA_DECIMAL.sub(r"\1.\2", normalized)
        raise ValueError(f"cannot read {text!r} as a lens: use a decimal point: {pointed}")
    if match is None:
        raise ValueError(f"cannot read {text!r} as a lens (sphere / cylinder x axis): write e.g. {LENS_TEXT_EXAMPLES}")
    sphere_d = _signed_power(text, "sphere", match["sphere"])
    if match["cylinder"] is None:
        return Lens(sphere_d)
    cylinder_d = _signed_power(text, "cylinder", match["cylinder"])
    if match["axis"] is None:
        raise ValueError(
            f"the cylinder {match['cylinder']} in {text!r} has no axis: write it after an x, e.g. '-1.00 / -0.50 x 180'"
        )
    axis = match["axis"]
    whole = axis.lstrip("+-")
    if whole.isdigit() and (axis.startswith("-") or not 1 <= int(whole) <= 180):
        raise ValueError(
            f"axis {axis} in {text!r} is outside 1-180: write e.g. '-1.00 / -0.50 x 180' "
            f"(180, not 0, for the horizontal meridian)"
        )
    if whole.isdigit() and axis.startswith("+"):
        raise ValueError(f"axis {axis} in {text!r} has a sign: write it without one, e.g. '-1.00 / -0.50 x {whole}'")
    if not axis.isdigit():
        raise ValueError(
            f"axis {axis} in {text!r} is not a whole number of degrees: "
            f"write one from 1 to 180, e.g. '-1.00 / -0.50 x 180'"
        )
    if not 1 <= int(axis) <= 180:
        raise ValueError(
            f"axis {axis} in {text!r} is outside 1-180: write e.g. '-1.00 / -0.50 x 180' "
            f"(180, not 0, for the horizontal meridian)"
        )
    return Lens(sphere_d, cylinder_d, float(int(axis)))


def _signed_power(text: str, name: str, token: str) -> float:
    """The power in ``token`` (``plano``/``pl`` is 0); a one-line ValueError if non-zero and unsigned."""
    if token.lower() in ("plano", "pl"):
        return 0.0
    value = float(token)
    if value != 0.0 and token[0] not in "+-":
        raise ValueError(
            f"the {name} {token} in {text!r} has no sign: write +{token} or -{token} "
            f"(plus or minus power), e.g. '-1.00 / -0.50 x 180'"
        )
    return value + 0.0
