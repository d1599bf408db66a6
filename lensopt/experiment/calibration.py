"""Screen calibration: how many pixels a letter of a given logMAR needs, and which sizes fit.

A letter of size logMAR ``L`` subtends ``θ = 5 · 10**L`` arcmin. Seen from ``distance_cm`` and
centred on the line of sight it is ``2 · distance_cm · tan(θ / 2)`` cm tall, that is
``2 · distance_cm · tan(θ / 2) · screen_width_px / screen_width_cm`` pixels (square pixels assumed).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, fields, replace
from typing import Any

import numpy as np

from lensopt.errors import CalibrationError

ARCMIN_PER_DEGREE = 60.0
"""Minutes of arc in one degree."""

LETTER_ARCMIN_AT_LOGMAR_0 = 5.0
"""A logMAR 0 letter is 5 arcmin tall (5 strokes of 1 arcmin)."""

LETTER_STROKES = 5
"""A letter is 5 strokes tall: its height is 5 times its stroke."""

DEFAULT_MIN_STROKE_PX = 1.0
"""Smallest stroke (px) drawn faithfully: below one pixel a stroke is not resolved by the screen."""

DEFAULT_MAX_HEIGHT_FRACTION = 0.8
"""Largest letter, as a fraction of the window height (leaves a margin around the letter)."""


@dataclass(frozen=True)
class Calibration:
    """Physical set-up of the screen. ``screen_*_px`` are the full screen's pixels."""

    screen_width_cm: float
    screen_width_px: int
    screen_height_px: int
    distance_cm: float
    min_stroke_px: float = DEFAULT_MIN_STROKE_PX
    max_height_fraction: float = DEFAULT_MAX_HEIGHT_FRACTION

    def __post_init__(self):
        for name, low, high in (
            ("screen_width_cm", 1.0, 10_000.0),
            ("distance_cm", 5.0, 100_000.0),
            ("min_stroke_px", 0.1, 100.0),
            ("max_height_fraction", 0.05, 1.0),
        ):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, (int, float)) or not low <= value <= high:
                raise ValueError(f"calibration {name} must be a number in [{low:g}, {high:g}], got {value!r}")
            object.__setattr__(self, name, float(value))
        for name in ("screen_width_px", "screen_height_px"):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or not 16 <= value <= 100_000:
                raise ValueError(f"calibration {name} must be a whole number of pixels in [16, 100000], got {value!r}")
            object.__setattr__(self, name, int(value))

    @classmethod
    def from_monitor(cls, name: str, **overrides) -> Calibration:
        """Read width (cm), resolution (px) and distance (cm) from a PsychoPy Monitor Center monitor."""
        from psychopy import monitors

        if name not in monitors.getAllMonitors():
            known = ", ".join(monitors.getAllMonitors()) or "none"
            raise CalibrationError(
                f"no PsychoPy monitor named {name!r} (known: {known}); create it in PsychoPy's Monitor Center, "
                "or leave calibration.monitor out and give screen_width_cm, screen_width_px, screen_height_px "
                "and distance_cm in [calibration]"
            )
        mon = open_monitor(name)
        width_cm, distance_cm, size_px = mon.getWidth(), mon.getDistance(), mon.getSizePix()
        if width_cm is None or distance_cm is None or size_px is None:
            raise CalibrationError(
                f"PsychoPy monitor {name!r} lacks its width, distance or size in pixels; set them in Monitor Center"
            )
        values: dict[str, Any] = dict(
            screen_width_cm=float(width_cm),
            screen_width_px=int(size_px[0]),
            screen_height_px=int(size_px[1]),
            distance_cm=float(distance_cm),
        )
        values.update(overrides)
        return cls(**values)

    @classmethod
    def from_dict(cls, data: dict) -> Calibration:
        """The calibration ``to_dict`` wrote; a one-line :class:`CalibrationError` naming what is wrong
        otherwise (not a table, an unknown or a missing field, a bad value)."""
        if not isinstance(data, dict):
            raise CalibrationError(f"a calibration must be a table of its fields, got {type(data).__name__}")
        names = [f.name for f in fields(cls)]
        unknown = sorted(set(data) - set(names))
        if unknown:
            raise CalibrationError(
                f"unknown calibration field(s) {', '.join(unknown)}; the fields are {', '.join(names)}"
            )
        try:
            return cls(**data)
        except TypeError as exc:
            raise CalibrationError(f"incomplete calibration: {exc}") from None

    def to_dict(self) -> dict:
        return asdict(self)

    @property
    def px_per_cm(self) -> float:
        return self.screen_width_px / self.screen_width_cm

    @property
    def px_per_arcmin(self) -> float:
        """Pixels per arcmin at the centre of the screen (small-angle: ``d · tan(1′) · px/cm``)."""
        return self.distance_cm * math.tan(math.radians(1 / ARCMIN_PER_DEGREE)) * self.px_per_cm

    def letter_height_px(self, letter_logmar):
        """Height (px) of a letter of size ``letter_logmar``: ``2 d tan(5·10^L / 2 arcmin) · px/cm``."""
        half_angle_deg = LETTER_ARCMIN_AT_LOGMAR_0 * 10.0 ** np.asarray(letter_logmar, float) / (2 * ARCMIN_PER_DEGREE)
        height = 2 * self.distance_cm * np.tan(np.radians(half_angle_deg)) * self.px_per_cm
        return float(height) if np.ndim(height) == 0 else height

    def letter_logmar_for_height_px(self, height_px):
        """Inverse of :meth:`letter_height_px`."""
        half_angle_deg = np.degrees(np.arctan(np.asarray(height_px, float) / self.px_per_cm / (2 * self.distance_cm)))
        logmar = np.log10(half_angle_deg * 2 * ARCMIN_PER_DEGREE / LETTER_ARCMIN_AT_LOGMAR_0)
        return float(logmar) if np.ndim(logmar) == 0 else logmar

    def renderable_logmar(
        self,
        window_height_px: int | None = None,
        *,
        window_width_px: int | None = None,
        line_width_letters: float = 1.0,
    ) -> tuple[float, float]:
        """Smallest and largest logMAR drawn faithfully: stroke ≥ ``min_stroke_px`` and the
        letter at most ``max_height_fraction`` of the window (or screen) height.

        With ``window_width_px``, a line ``line_width_letters`` letter heights wide (a line of
        letters, see :func:`lensopt.experiment.optotypes.line_width_letters`) must also fit in
        ``max_height_fraction`` of the window width.
        """
        height_px = self.screen_height_px if window_height_px is None else min(window_height_px, self.screen_height_px)
        largest_px = self.max_height_fraction * height_px
        if window_width_px is not None:
            if not line_width_letters >= 1.0:
                raise ValueError(f"line_width_letters must be >= 1 letter height, got {line_width_letters!r}")
            width_px = min(window_width_px, self.screen_width_px)
            largest_px = min(largest_px, self.max_height_fraction * width_px / line_width_letters)
        low = self.letter_logmar_for_height_px(LETTER_STROKES * self.min_stroke_px)
        high = self.letter_logmar_for_height_px(largest_px)
        return low, high

    def with_framebuffer(self, width_px: int, height_px: int) -> Calibration:
        """The same physical screen described by the window's actual framebuffer (e.g. a Retina
        display reporting twice the pixels): the width in cm stays, the pixel counts change."""
        return replace(self, screen_width_px=int(width_px), screen_height_px=int(height_px))

    def describe(self) -> str:
        return (
            f"{self.screen_width_cm:g} cm = {self.screen_width_px} px wide, {self.screen_height_px} px high, "
            f"viewed from {self.distance_cm:g} cm ({self.px_per_arcmin:.3f} px/arcmin)"
        )


def full_screen_calibration(
    calibration: Calibration,
    size_px: Sequence[int],
    warn: Callable[[str], object],
    width_name: str = "screen_width_cm",
    stored: str = "",
) -> Calibration:
    """The calibration a full-screen window sizes its letters with: the screen's width in cm over the
    framebuffer's pixels ``size_px`` (a HiDPI screen's, or another screen than the calibration
    describes), said through ``warn`` when they are not the calibration's, naming ``width_name`` (the
    setting to check) and what ``stored`` adds."""
    used = calibration.with_framebuffer(*size_px)
    given = (calibration.screen_width_px, calibration.screen_height_px)
    if (used.screen_width_px, used.screen_height_px) != given:
        warn(
            f"the full-screen window is {used.screen_width_px} x {used.screen_height_px} px, not the calibration's "
            f"{given[0]} x {given[1]}: letters are sized for {used.screen_width_px} px across "
            f"{used.screen_width_cm:g} cm ({used.px_per_arcmin:.3f} px/arcmin{stored}); check that "
            f"{width_name} is this screen's width"
        )
    return used


#: The protocol file's key for the letter sizes a session asks, named by the messages below.
PROTOCOL_LETTER_BOUNDS = "optimizer.letter_bounds_logmar"


def letter_bounds_within(
    requested_logmar: tuple[float, float],
    renderable_logmar: tuple[float, float],
    calibration: Calibration | None = None,
    bounds_name: str = PROTOCOL_LETTER_BOUNDS,
) -> tuple[float, float]:
    """Intersect the asked letter sizes with what the screen can render; raise if empty, naming
    the setting that asks for too small or too large letters (``bounds_name``: the protocol's key, or
    a Builder loop's field) and the fix."""
    low = max(requested_logmar[0], renderable_logmar[0])
    high = min(requested_logmar[1], renderable_logmar[1])
    if not low < high:
        raise CalibrationError(_no_letter_size_message(requested_logmar, renderable_logmar, calibration, bounds_name))
    return low, high


def narrowed_letters_note(
    requested_logmar: tuple[float, float], shown_logmar: tuple[float, float], fullscreen: bool
) -> str | None:
    """What a new session's clinician is told when the screen set-up shows fewer letter sizes than
    the protocol asks for (:func:`letter_bounds_within` narrowed them), or None: an eye that cannot
    read the largest letter shown reads nothing larger, so its acuity through a very wrong lens is
    not measured beyond it."""
    (asked_low, asked_high), (low, high) = requested_logmar, shown_logmar
    parts = []
    # narrowed by less than the note's two decimals: it said "+1.74, not +1.74"
    if high < asked_high and f"{high:+.2f}" != f"{asked_high:+.2f}":
        fix = "a nearer seat, calibration.distance_cm, or a larger screen" if fullscreen else "the chart full screen"
        parts.append(
            f"the largest letter shown is logMAR {high:+.2f}, not {asked_high:+.2f} as the protocol asks ({fix} shows them)"
        )
    if low > asked_low and f"{low:+.2f}" != f"{asked_low:+.2f}":
        parts.append(f"the smallest is logMAR {low:+.2f}, not {asked_low:+.2f} (the screen's pixels)")
    return "; ".join(parts) or None


def _no_letter_size_message(
    requested_logmar: tuple[float, float],
    renderable_logmar: tuple[float, float],
    calibration: Calibration | None,
    bounds_name: str,
) -> str:
    (asked_low, asked_high), (drawn_low, drawn_high) = requested_logmar, renderable_logmar
    where = f" ({calibration.describe()})" if calibration is not None else ""
    asked = f"{bounds_name} = [{asked_low:g}, {asked_high:g}]"
    stroke = (
        "" if calibration is None else f", a stroke of calibration.min_stroke_px = {calibration.min_stroke_px:g} px"
    )
    if calibration is not None and calibration.min_stroke_px > DEFAULT_MIN_STROKE_PX and asked_high <= drawn_low:
        default_low = calibration.letter_logmar_for_height_px(LETTER_STROKES * DEFAULT_MIN_STROKE_PX)
        return (
            f"this screen set-up draws letters from logMAR {drawn_low:.2f}{stroke}, to {drawn_high:.2f}{where}: "
            f"none of {asked}; lower calibration.min_stroke_px (the thinnest stroke drawn; "
            f"{DEFAULT_MIN_STROKE_PX:g} px, the default, draws from logMAR {default_low:.2f})"
        )
    if asked_high <= drawn_low:
        return (
            f"{asked} asks for letters smaller than this screen set-up draws: its smallest is logMAR "
            f"{drawn_low:.2f}{stroke}{where}; raise them to within {drawn_low:.2f} to "
            f"{drawn_high:.2f}, or seat the patient further away (calibration.distance_cm)"
        )
    return (
        f"{asked} asks for letters larger than this screen set-up draws: its largest is logMAR "
        f"{drawn_high:.2f}{where}; lower them to within {drawn_low:.2f} to {drawn_high:.2f}, "
        "or seat the patient nearer (calibration.distance_cm)"
    )


def open_monitor(name: str, **options):
    """PsychoPy's monitor ``name`` (``monitors.Monitor(name, **options)``); a one-line
    :class:`CalibrationError` naming its file and the fix when PsychoPy cannot read that file (not
    JSON, or JSON of another shape: PsychoPy raised a bare TypeError, when the calibration was read,
    or a decoder's message with no file named)."""
    from psychopy import monitors

    try:
        monitor = monitors.Monitor(name, **options)
        monitor.getWidth(), monitor.getDistance(), monitor.getSizePix()  # its current calibration, read
        return monitor
    except (TypeError, ValueError, KeyError, AttributeError, IndexError) as exc:
        path = f"{monitors.calibTools.monitorFolder}/{name}.json"
        raise CalibrationError(
            f"PsychoPy's monitor file {path} cannot be read ({type(exc).__name__}: {exc}); correct it in "
            f"PsychoPy's Monitor Center, or move it aside and calibrate {name!r} again"
        ) from None
