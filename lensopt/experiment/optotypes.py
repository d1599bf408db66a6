"""Letter optotypes drawn as vector shapes on a 5 x 5 stroke grid.

A letter is 5 strokes tall, so at size logMAR ``L`` it subtends ``5 · 10**L`` arcmin and each
stroke ``10**L`` arcmin (Sloan 1959; ISO 8596). The geometry lives in ``stimuli/letters-5x5.toml``
(units: strokes, y up). This module loads and validates it and turns it into pixel polygons with
numpy only (:func:`letter_outlines_px`, :func:`rasterize`), so the geometry can be checked without a
window; :class:`LetterStim` draws the polygons as PsychoPy ``ShapeStim`` objects in pixel units.

No font metrics are involved: PsychoPy's ``TextStim.height`` is the em box, not the letter, and it
is rounded to whole points.
"""

from __future__ import annotations

import functools
import itertools
import math
import tomllib
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from lensopt.reference_data import STIMULI_DIR

GRID_STROKES = 5.0
"""Letter height (and the grid's extent) in strokes."""

SLOAN_LETTERS = "CDHKNORSVZ"
"""The ten Sloan letters (Sloan 1959), the usual 10-alternative set."""

ALPHABET = "ABCDEFGHIJKLMNOPQRSTUVWXYZ"
"""The 26 capital letters, the full-alphabet set."""

DEFAULT_LETTERS_PATH = STIMULI_DIR / "letters-5x5.toml"
"""The letter geometry shipped with lensopt (package data ``lensopt.stimuli``: the repository's
``stimuli/`` folder, or its copy in an installed wheel)."""

MAX_CHORD_ERROR_PX = 0.1
"""Largest distance (px) between a curved stroke and the chords that approximate it."""

MIN_ARC_SEGMENTS_PER_TURN = 16
"""Fewest chords per full turn of an arc, whatever the size."""

_GEOMETRY_TOLERANCE = 1e-9


@dataclass(frozen=True)
class Arc:
    """A sector of an elliptical ring: ``center``, ``outer``/``inner`` radii (rx, ry), ``degrees``."""

    center: tuple[float, float]
    outer: tuple[float, float]
    inner: tuple[float, float]
    degrees: tuple[float, float]

    def __post_init__(self):
        for name in ("center", "outer", "inner", "degrees"):
            value = tuple(float(v) for v in getattr(self, name))
            if len(value) != 2 or not all(math.isfinite(v) for v in value):
                raise ValueError(f"Arc.{name} must be two finite numbers, got {value!r}")
            object.__setattr__(self, name, value)
        if not (0 <= self.inner[0] < self.outer[0] and 0 <= self.inner[1] < self.outer[1]):
            raise ValueError(f"Arc radii must satisfy 0 <= inner < outer, got {self.inner} / {self.outer}")
        start, stop = self.degrees
        if not 0 < stop - start <= 360:
            raise ValueError(f"Arc.degrees must run forward by at most 360, got {self.degrees}")

    def outlines(self, scale_px_per_stroke: float = 1.0) -> list[np.ndarray]:
        """Simple polygons (stroke units) covering the ring sector, each spanning at most 180°."""
        start, stop = np.radians(self.degrees)
        radius_px = max(self.outer) * scale_px_per_stroke
        # chord error of a step dt on radius r is r (1 - cos(dt/2)) (Euclid)
        ratio = max(-1.0, 1.0 - MAX_CHORD_ERROR_PX / max(radius_px, 1e-9))
        step = min(2 * math.acos(ratio), 2 * math.pi / MIN_ARC_SEGMENTS_PER_TURN)
        n_pieces = math.ceil((stop - start) / math.pi - 1e-12)
        edges = np.linspace(start, stop, n_pieces + 1)
        pieces = []
        for a, b in itertools.pairwise(edges):
            t = np.linspace(a, b, max(2, math.ceil((b - a) / step) + 1))
            outer = np.column_stack([self.outer[0] * np.cos(t), self.outer[1] * np.sin(t)])
            inner = np.column_stack([self.inner[0] * np.cos(t), self.inner[1] * np.sin(t)])[::-1]
            pieces.append(np.vstack([outer, inner]) + np.asarray(self.center))
        return pieces

    def area(self) -> float:
        """Exact area of the sector (strokes²): ``(rx_o ry_o − rx_i ry_i) · Δθ / 2``."""
        dtheta = math.radians(self.degrees[1] - self.degrees[0])
        return 0.5 * dtheta * (self.outer[0] * self.outer[1] - self.inner[0] * self.inner[1])


@dataclass(frozen=True)
class Glyph:
    """One letter as the union of rectangles, convex polygons and ring sectors (stroke units)."""

    letter: str
    rects: tuple[tuple[float, float, float, float], ...] = ()
    polygons: tuple[tuple[tuple[float, float], ...], ...] = ()
    arcs: tuple[Arc, ...] = ()
    sloan: bool = False

    def __post_init__(self):
        if len(self.letter) != 1 or self.letter not in ALPHABET:
            raise ValueError(f"Glyph.letter must be one capital letter A-Z, got {self.letter!r}")
        rects = tuple(tuple(float(v) for v in r) for r in self.rects)
        for r in rects:
            if len(r) != 4 or not (r[0] < r[2] and r[1] < r[3]):
                raise ValueError(f"letter {self.letter}: rect must be [x0, y0, x1, y1] with x0<x1, y0<y1, got {r}")
        polygons = tuple(tuple((float(x), float(y)) for x, y in p) for p in self.polygons)
        for p in polygons:
            if len(p) < 3 or not _is_convex(np.asarray(p)):
                raise ValueError(f"letter {self.letter}: polygon must be convex with >= 3 vertices, got {p}")
        arcs = tuple(a if isinstance(a, Arc) else Arc(**a) for a in self.arcs)
        object.__setattr__(self, "rects", rects)
        object.__setattr__(self, "polygons", polygons)
        object.__setattr__(self, "arcs", arcs)
        if not (rects or polygons or arcs):
            raise ValueError(f"letter {self.letter}: no shapes")
        x0, y0, x1, y1 = self.bounds()
        if min(x0, y0) < -_GEOMETRY_TOLERANCE or max(x1, y1) > GRID_STROKES + _GEOMETRY_TOLERANCE:
            raise ValueError(f"letter {self.letter}: shapes leave the 0..5 grid (bounds {self.bounds()})")
        if abs(y0) > 1e-6 or abs(y1 - GRID_STROKES) > 1e-6:
            raise ValueError(f"letter {self.letter}: must span y = 0..5 exactly (5 strokes tall), spans {y0}..{y1}")

    def outlines(self, scale_px_per_stroke: float = 1.0) -> list[np.ndarray]:
        """Simple polygons in stroke units whose union is the letter (arcs fine enough at this scale)."""
        out = [np.array([[x0, y0], [x1, y0], [x1, y1], [x0, y1]]) for x0, y0, x1, y1 in self.rects]
        out += [np.asarray(p, dtype=float) for p in self.polygons]
        for arc in self.arcs:
            out += arc.outlines(scale_px_per_stroke)
        return out

    def bounds(self) -> tuple[float, float, float, float]:
        """(x_min, y_min, x_max, y_max) in strokes; arcs sampled finely enough for 1e-6 strokes."""
        points = np.vstack(self.outlines(scale_px_per_stroke=1e5))
        return (*points.min(axis=0), *points.max(axis=0))

    @property
    def width_strokes(self) -> float:
        x0, _, x1, _ = self.bounds()
        return x1 - x0


def _is_convex(points: np.ndarray) -> bool:
    edges = np.roll(points, -1, axis=0) - points
    cross = edges[:, 0] * np.roll(edges, -1, axis=0)[:, 1] - edges[:, 1] * np.roll(edges, -1, axis=0)[:, 0]
    cross = cross[np.abs(cross) > _GEOMETRY_TOLERANCE]
    return bool(cross.size > 0 and (np.all(cross > 0) or np.all(cross < 0)))


@functools.lru_cache(maxsize=4)
def load_glyphs(path: str | Path | None = None) -> dict[str, Glyph]:
    """Read and validate the letter geometry (default: ``stimuli/letters-5x5.toml``)."""
    path = Path(path) if path is not None else DEFAULT_LETTERS_PATH
    try:
        with open(path, "rb") as fh:
            data = tomllib.load(fh)
    except FileNotFoundError:
        raise ValueError(f"letter geometry file {path} not found; reinstall lensopt") from None
    except tomllib.TOMLDecodeError as exc:
        raise ValueError(f"letter geometry file {path} is not valid TOML: {exc}") from None
    allowed = {"rects", "polygons", "arcs", "sloan"}
    glyphs = {}
    for letter, spec in data.get("letters", {}).items():
        unknown = set(spec) - allowed
        if unknown:
            raise ValueError(f"{path}: letter {letter}: unknown key(s) {sorted(unknown)}; allowed {sorted(allowed)}")
        try:
            glyphs[letter] = Glyph(letter=letter, **spec)
        except (TypeError, ValueError) as exc:
            raise ValueError(f"{path}: {exc}") from None
    missing = sorted(set(ALPHABET) - set(glyphs))
    if missing:
        raise ValueError(f"{path}: letters {''.join(missing)} are missing; all 26 capitals are needed")
    sloan = "".join(sorted(k for k, g in glyphs.items() if g.sloan))
    if sloan != SLOAN_LETTERS:
        raise ValueError(f"{path}: `sloan = true` must mark exactly {SLOAN_LETTERS}, marks {sloan}")
    return glyphs


def letter_outlines_px(glyph: Glyph, height_px: float, center_px=(0.0, 0.0)) -> list[np.ndarray]:
    """The letter's polygons in pixels, ``height_px`` tall, its bounding box centred on ``center_px``."""
    if not (math.isfinite(height_px) and height_px > 0):
        raise ValueError(f"height_px must be a positive number, got {height_px!r}")
    scale = height_px / GRID_STROKES
    x0, _, x1, _ = glyph.bounds()
    offset = np.asarray(center_px, dtype=float) - scale * np.array([(x0 + x1) / 2, GRID_STROKES / 2])
    return [scale * p + offset for p in glyph.outlines(scale)]


def pixel_aligned_center(center_px, extent_px, window_px) -> tuple[float, float]:
    """The centre nearest ``center_px`` (window pixels from its centre, as PsychoPy's ``units="pix"``)
    at which a shape ``extent_px`` (width, height) covers, in each direction, the whole number of
    pixel centres nearest its size, in a window ``window_px`` (width, height) px: a pixel is lit when
    its centre lies inside the shape (OpenGL's rule, and :func:`rasterize`'s), so an odd count needs
    the shape's centre on a pixel's centre and an even count on an edge between two. Centred on the
    window's centre — an edge in a window of even size — every letter was an even number of pixels
    tall: one of 10.56 px drew 10 (−0.024 logMAR at the smallest letters at 4 m), up to 1 px off
    where now at most half a pixel."""
    aligned = []
    for value, extent, size in zip(center_px, extent_px, window_px):
        pixel_centre = (0.5 - size / 2) % 1.0  # where the window's pixel centres lie, modulo 1
        phase = pixel_centre if round(extent) % 2 else (pixel_centre + 0.5) % 1.0
        aligned.append(math.floor(float(value) - phase + 0.5) + phase)
    return aligned[0], aligned[1]


def polygon_area(points: np.ndarray) -> float:
    """Area of a simple polygon (shoelace formula)."""
    x, y = np.asarray(points, dtype=float).T
    return 0.5 * abs(np.dot(x, np.roll(y, -1)) - np.dot(y, np.roll(x, -1)))


def rasterize(outlines_px: list[np.ndarray], width_px: int, height_px: int) -> np.ndarray:
    """Boolean image (rows top to bottom) of the pixels whose centres lie inside any polygon.

    Pixel ``(row, col)`` has its centre at ``x = col + 0.5 − width/2``, ``y = height/2 − row − 0.5``,
    the coordinates of a PsychoPy window in ``units="pix"``. Even-odd crossing test per polygon.
    """
    xs = np.arange(width_px) + 0.5 - width_px / 2
    ys = height_px / 2 - np.arange(height_px) - 0.5
    px, py = np.meshgrid(xs, ys)
    image = np.zeros((height_px, width_px), dtype=bool)
    for poly in outlines_px:
        inside = np.zeros_like(image)
        for (xa, ya), (xb, yb) in zip(poly, np.roll(poly, -1, axis=0)):
            if ya == yb:
                continue
            crosses = (ya > py) != (yb > py)
            x_cross = xa + (py - ya) * (xb - xa) / (yb - ya)
            inside ^= crosses & (px < x_cross)
        image |= inside
    return image


class LetterStim:
    """Draws one letter in a PsychoPy window (``units="pix"``) as filled ``ShapeStim`` polygons."""

    def __init__(self, win, glyphs: dict[str, Glyph] | None = None, color="black"):
        self.win = win
        self.glyphs = glyphs if glyphs is not None else load_glyphs()
        self.color = color
        self._stims: list = []
        self.letter: str | None = None
        self.height_px: float | None = None

    def set_letter(self, letter: str, height_px: float, center_px=(0.0, 0.0)) -> None:
        """Prepare ``letter`` at ``height_px`` (the distance from its top to its bottom edge)."""
        from psychopy import visual

        if letter not in self.glyphs:
            raise ValueError(f"no optotype for {letter!r}; letters are {''.join(sorted(self.glyphs))}")
        self.letter, self.height_px = letter, float(height_px)
        glyph = self.glyphs[letter]
        extent_px = (glyph.width_strokes * height_px / GRID_STROKES, height_px)
        center_px = pixel_aligned_center(center_px, extent_px, self.win.size)
        self._stims = [
            visual.ShapeStim(
                self.win,
                units="pix",
                vertices=poly,
                fillColor=self.color,
                lineColor=None,
                lineWidth=0,
                interpolate=False,
                autoLog=False,
            )
            for poly in letter_outlines_px(glyph, height_px, center_px)
        ]

    def draw(self) -> None:
        for stim in self._stims:
            stim.draw()


LINE_GAP_LETTER_WIDTHS = 1.0
"""Gap between two letters of a line, in letter widths (ETDRS charts: one letter width)."""


def line_width_letters(n_letters: int) -> float:
    """Width of a line of ``n_letters`` letters, in letter heights: letters are as wide as tall on
    the 5 x 5 grid, with :data:`LINE_GAP_LETTER_WIDTHS` between two of them."""
    return n_letters + (n_letters - 1) * LINE_GAP_LETTER_WIDTHS


class LetterLineStim:
    """Draws a horizontal line of letters, centred in the window, one letter width apart.

    Each letter is centred in its own square cell ``height_px`` wide (narrow letters such as I
    keep the spacing of the chart), with :data:`LINE_GAP_LETTER_WIDTHS` cells between cells.
    """

    def __init__(self, win, glyphs: dict[str, Glyph] | None = None, color="black"):
        self.win = win
        self.glyphs = glyphs if glyphs is not None else load_glyphs()
        self.color = color
        self._letters: list[LetterStim] = []
        self.letters: str = ""
        self.height_px: float | None = None

    def set_letters(self, letters: str, height_px: float) -> None:
        """Prepare ``letters`` (left to right), each ``height_px`` tall."""
        pitch_px = (1.0 + LINE_GAP_LETTER_WIDTHS) * height_px
        first_px = -pitch_px * (len(letters) - 1) / 2
        self._letters = []
        for k, letter in enumerate(letters):
            stim = LetterStim(self.win, self.glyphs, color=self.color)
            stim.set_letter(letter, height_px, center_px=(first_px + k * pitch_px, 0.0))
            self._letters.append(stim)
        self.letters, self.height_px = letters, float(height_px)

    def draw(self) -> None:
        for stim in self._letters:
            stim.draw()
