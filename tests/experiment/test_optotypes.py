"""Letter geometry on the 5 x 5 stroke grid, checked with numpy only (no window)."""

import math

import numpy as np
import pytest

from lensopt.experiment.optotypes import (
    ALPHABET,
    SLOAN_LETTERS,
    Arc,
    Glyph,
    letter_outlines_px,
    load_glyphs,
    pixel_aligned_center,
    polygon_area,
    rasterize,
)


@pytest.fixture(scope="module")
def glyphs():
    return load_glyphs()


def test_all_26_letters_load_and_the_sloan_ten_are_marked(glyphs):
    assert sorted(glyphs) == list(ALPHABET)
    assert "".join(sorted(k for k, g in glyphs.items() if g.sloan)) == SLOAN_LETTERS


@pytest.mark.parametrize("letter", list(ALPHABET))
def test_every_letter_is_exactly_five_strokes_tall_inside_the_grid(glyphs, letter):
    x0, y0, x1, y1 = glyphs[letter].bounds()
    assert y0 == pytest.approx(0.0, abs=1e-6) and y1 == pytest.approx(5.0, abs=1e-6)
    assert x0 >= -1e-9 and x1 <= 5 + 1e-9


@pytest.mark.parametrize("letter", list(SLOAN_LETTERS))
def test_sloan_letters_are_five_strokes_wide_except_the_open_c(glyphs, letter):
    width = glyphs[letter].width_strokes
    if letter == "C":  # the gap cuts the ring at 40 degrees: width 2.5 + 2.5 cos 40
        assert width == pytest.approx(2.5 + 2.5 * math.cos(math.radians(40)), abs=1e-6)
    else:
        assert width == pytest.approx(5.0, abs=1e-6)


def test_ring_of_o_tessellates_to_the_annulus_area_within_the_chord_error(glyphs):
    height_px = 200.0
    polys = letter_outlines_px(glyphs["O"], height_px)
    scale = height_px / 5
    exact = math.pi * (2.5**2 - 1.5**2) * scale**2
    assert Arc((0, 0), (2.5, 2.5), (1.5, 1.5), (0, 360)).area() * scale**2 == pytest.approx(exact)
    # chords lie inside the outer circle and inside the inner one: the error is at most
    # chord error x (outer + inner circumference)
    bound = 0.1 * 2 * math.pi * (2.5 + 1.5) * scale
    tessellated = sum(polygon_area(p) for p in polys)
    assert abs(tessellated - exact) < bound
    assert tessellated < exact  # chords cut inside the outer circle more than the inner one


def test_rasterized_e_covers_its_hand_computed_area():
    # stem 1x5 + top bar 4x1 + middle 3.5x1 + bottom 4x1 = 16.5 strokes^2; 20 px per stroke with
    # edges on pixel boundaries, so every pixel is wholly in or out
    glyph = load_glyphs()["E"]
    image = rasterize(letter_outlines_px(glyph, 100.0), 120, 120)
    assert image.sum() == 16.5 * 20 * 20
    rows = np.flatnonzero(image.any(axis=1))
    assert rows[-1] - rows[0] + 1 == 100


def test_rasterized_h_crossbar_is_one_stroke_thick():
    image = rasterize(letter_outlines_px(load_glyphs()["H"], 100.0), 120, 120)
    middle_column = image[:, 60]
    assert middle_column.sum() == 20


def test_letter_outlines_are_centred_on_the_requested_point(glyphs):
    pts = np.vstack(letter_outlines_px(glyphs["K"], 50.0, center_px=(10.0, -20.0)))
    assert (pts.min(axis=0) + pts.max(axis=0)) / 2 == pytest.approx([10.0, -20.0], abs=1e-9)
    assert pts[:, 1].max() - pts[:, 1].min() == pytest.approx(50.0)


def test_a_letter_leaving_the_grid_is_refused():
    with pytest.raises(ValueError, match="grid"):
        Glyph("H", rects=((0, 0, 1, 5), (4, 0, 6, 5)))


def test_a_letter_not_five_strokes_tall_is_refused():
    with pytest.raises(ValueError, match="5 strokes tall"):
        Glyph("L", rects=((0, 0, 1, 4), (0, 0, 5, 1)))


def test_a_concave_polygon_is_refused():
    with pytest.raises(ValueError, match="convex"):
        Glyph("V", polygons=(((0, 5), (2.5, 0), (5, 5), (2.5, 2)),))


def test_a_geometry_file_with_an_unknown_key_names_the_letter(tmp_path):
    path = tmp_path / "letters.toml"
    path.write_text('[letters.A]\nrects = [[0.0, 0.0, 1.0, 5.0]]\ncolour = "red"\n')
    with pytest.raises(ValueError, match=r"letter A: unknown key\(s\) \['colour'\]"):
        load_glyphs(path)


def test_a_geometry_file_missing_letters_says_which(tmp_path):
    path = tmp_path / "letters.toml"
    path.write_text("[letters.A]\nrects = [[0.0, 0.0, 1.0, 5.0]]\n")
    with pytest.raises(ValueError, match="BCDEFGHIJKLMNOPQRSTUVWXYZ are missing"):
        load_glyphs(path)


@pytest.mark.parametrize("window_px", [(96, 80), (97, 81)])
@pytest.mark.parametrize("requested_px", [(0.0, 0.0), (13.3, -7.8)])
def test_a_letter_covers_the_whole_number_of_pixels_nearest_its_size(glyphs, window_px, requested_px):
    """A pixel is lit when its centre is inside the letter: centred on an even window's centre (a
    pixel edge), every letter was an even number of pixels tall and wide — 10.56 px drew 10. Placed
    by pixel_aligned_center it covers round(size) pixels (by rasterize, an independent count of the
    pixel centres inside), at most half a pixel from where it was asked."""
    for height_px in np.linspace(6.0, 40.0, 69) + 0.013:  # off the half-pixel ties
        center = pixel_aligned_center(requested_px, (height_px, height_px), window_px)
        assert np.abs(np.subtract(center, requested_px)).max() <= 0.5
        image = rasterize(letter_outlines_px(glyphs["H"], height_px, center), *window_px)  # 5 strokes wide
        rows, cols = np.flatnonzero(image.any(axis=1)), np.flatnonzero(image.any(axis=0))
        assert rows[-1] - rows[0] + 1 == round(height_px), (height_px, window_px)
        assert cols[-1] - cols[0] + 1 == round(height_px), (height_px, window_px)
