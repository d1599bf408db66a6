"""The drawing helpers shared by every panel: a text panel's title and values fit its panel."""

from __future__ import annotations

import pytest
from matplotlib.figure import Figure
from matplotlib.text import Text

from lensopt.dashboard.drawing import (
    FONT_SIZE,
    MIN_FONT_SCALE,
    MIN_VALUE_SCALE,
    VALUE_ROOM,
    draw_rows,
    fitted_size,
    fitted_title,
    fitted_value,
)

#: The summary title of a two-parameter session with a cylinder and no axis (it ran off the panel).
LONG_TITLE = "Summary: best lens — estimate, not a prescription: a cylinder without an axis"


@pytest.mark.parametrize("size_in", [(5.85, 3.9), (7.0, 4.5), (4.0, 3.0)])  # the report's, a window's, a small one
def test_a_text_panels_long_title_stays_inside_its_panel(size_in):
    fig = Figure(figsize=size_in, layout="constrained")
    draw_rows(fig, LONG_TITLE, [("Session", "2 · let10 · finished")])
    fig.draw_without_rendering()
    (ax,) = fig.axes
    assert ax.get_title(loc="left").replace("\n", " ") == LONG_TITLE
    (title,) = [t for t in ax.get_children() if isinstance(t, Text) and t.get_text() == ax.get_title(loc="left")]
    box = title.get_window_extent()
    assert fig.bbox.x0 <= box.x0 and box.x1 <= fig.bbox.x1, (box.bounds, fig.bbox.bounds)


def test_a_title_too_wide_is_broken_after_its_dash_before_it_is_set_smaller():
    assert fitted_title("Summary: best lens", FONT_SIZE + 2, 400.0) == ("Summary: best lens", FONT_SIZE + 2)
    title, size = fitted_title(LONG_TITLE, FONT_SIZE + 2, 400.0)
    assert title == "Summary: best lens —\nestimate, not a prescription: a cylinder without an axis"
    assert size <= FONT_SIZE + 2


LONG_NAME = "Maria-Fernanda Rodríguez-Villanueva de la Cruz (DOB 1957-03-14)"


@pytest.mark.parametrize("size_in", [(5.85, 3.9), (7.0, 4.5)])  # the report's panel, a window's
def test_a_long_participant_name_is_cut_short_so_the_session_row_stays_legible(size_in):
    """A long name had set the whole session row tiny: its name is cut short with "…", the rest of
    the row (session, eye, status) kept whole, at no less than MIN_VALUE_SCALE of the row's size."""
    from matplotlib.backends.backend_agg import FigureCanvasAgg

    fig = Figure(figsize=size_in, layout="constrained")
    canvas = FigureCanvasAgg(fig)
    row = f"1 · {LONG_NAME} · OD (right eye) · finished"
    draw_rows(fig, "Summary: prescription", [("Session", row), ("Rule", "bracket-ald")])
    canvas.draw()
    (ax,) = fig.axes
    texts = {t.get_text(): t for t in ax.texts}
    (shown,) = [text for text in texts if text.startswith("1 · Maria-Fernanda")]
    assert shown.endswith("… · OD (right eye) · finished") and len(shown) < len(row)
    size = texts[shown].get_fontsize()
    assert MIN_VALUE_SCALE * (FONT_SIZE + 2) <= size <= FONT_SIZE + 2
    assert texts[shown].get_window_extent(canvas.get_renderer()).x1 <= fig.bbox.x1
    # the name is cut no shorter than it must be: a character more would not fit at that size
    name_kept = shown.removeprefix("1 · ").split("…")[0]
    more = len(name_kept) + 1
    while LONG_NAME[:more].rstrip() == name_kept:  # a space kept: the next character
        more += 1
    one_more = row.replace(LONG_NAME, LONG_NAME[:more].rstrip() + "…")
    assert fitted_size(one_more, FONT_SIZE + 2, _value_room_pt(fig)) < MIN_VALUE_SCALE * (FONT_SIZE + 2)


def test_a_value_that_fits_or_has_no_parts_is_never_cut():
    assert fitted_value("1 · P01 · OD (right eye) · running", FONT_SIZE + 2, 400.0) == (
        "1 · P01 · OD (right eye) · running",
        FONT_SIZE + 2,
    )
    long_value = "provisional estimate -1.00 / -0.50 x 154, not for prescribing"
    text, size = fitted_value(long_value, FONT_SIZE + 2, 150.0)
    assert text == long_value and size < MIN_VALUE_SCALE * (FONT_SIZE + 2)  # set smaller, never cut


def _value_room_pt(fig) -> float:
    return VALUE_ROOM * fig.bbox.width / fig.dpi * 72.0


def _surface(value_range=None):
    """A lens map of acuities from 0 to 1.75 logMAR drawn by draw_surface: its contour lines, the
    labels on them, and its colour bar."""
    import numpy as np
    from matplotlib.collections import QuadMesh
    from matplotlib.contour import ContourSet

    from lensopt.dashboard.drawing import draw_surface

    sphere_d, cylinder_d = np.linspace(-2.0, 2.0, 41), np.linspace(-2.0, 0.0, 21)
    s, c = np.meshgrid(sphere_d, cylinder_d)
    values = 1.75 * ((s / 2.0) ** 2 + (c + 1.0) ** 2) / 2.0
    fig = Figure(figsize=(5, 4))
    ax = fig.add_subplot()
    draw_surface(fig, ax, sphere_d, cylinder_d, values, "viridis_r", "acuity (logMAR)", value_range)
    fig.draw_without_rendering()
    (lines,) = [child for child in ax.collections if isinstance(child, ContourSet)]
    (mesh,) = [child for child in ax.collections if isinstance(child, QuadMesh)]
    return lines, [t.get_text() for t in ax.texts], mesh.colorbar


def test_each_contour_line_is_labelled_with_its_own_level():
    """Lines at 0.25 logMAR steps were labelled "%.1f": the 0.25 line "0.2", the 0.75 line "0.8"."""
    lines, labels, _ = _surface()
    levels = [float(level) for level in lines.levels]
    assert 0.25 in levels and 0.75 in levels  # matplotlib's levels for 0-1.75: quarter steps
    assert labels and all(float(text) in levels for text in labels), (labels, levels)
    assert "0.25" in labels or "0.75" in labels


def test_a_colour_bar_whose_end_colours_also_stand_for_values_beyond_it_has_pointed_ends():
    """Colours clamped to the measurable acuities (0.2 to 1.0 here, the values 0 to 1.75): the bar's
    end colours also stand for the values beyond, and it said nothing of them."""
    assert _surface((0.2, 1.0))[2].extend == "both"
    assert _surface((-0.5, 1.0))[2].extend == "max"
    assert _surface()[2].extend == "neither"


#: The summary of a two-parameter session of both eyes that stopped short (an audit's screenshot of a
#: 1500 × 950 dashboard): big rows with notes, and rows of the other eye, squeezed into the panel.
CROWDED_ROWS = [
    ("Session", "4 · P001 · OU (both eyes) · finished · acuity-law, accommodation up to 8 D"),
    (
        "Continue",
        "lensopt run --resume 4 --trials 36 --no-fullscreen --db /tmp/audit/s.db",
        "short of its target; --trials at most (no trend of the confidence)",
    ),
    ("Lens", "not enough answers to prescribe", "estimate -0.50 / -1.50 x 180, not for prescribing"),
    ("Sphere", "-0.50 ± 0.96 D", "95% interval -2.10 to +1.70 D"),
    ("Cylinder", "-1.50 ± 1.08 D", "95% interval -3.60 to +0.90 D"),
    (
        "Acuity",
        "+0.26 ± 0.19 logMAR (≈ 20/40)",
        "predicted, not measured: the nearest lens tried is 0.35 D from this one",
    ),
    ("Confidence", "0.11", "that this lens is within 0.025 logMAR of the best"),
    ("Stops at", "confidence 0.95, trial 12: max trials reached"),
    ("Trials", "OS 12, 6 correct (50%) · 24 in the session"),
    ("Time", "0 min 33 s"),
    ("OD", "not enough answers to prescribe", "confidence 0.04 < 0.95 after 12 trials"),
    ("", "provisional estimate -0.25 / -2.25 x 180, not for prescribing"),
    ("", "predicted, not measured: the nearest lens tried is 0.40 D from this one"),
]
CROWDED_BIG = ("Lens", "Sphere", "Cylinder", "Acuity", "Confidence")


@pytest.mark.parametrize("size_in", [(6.8, 3.7), (5.85, 3.9), (4.0, 3.0), (7.0, 6.0)])  # a window's, the report's, ...
@pytest.mark.parametrize("n_rows", [4, 8, len(CROWDED_ROWS)])
def test_no_two_texts_of_a_crowded_summary_overlap(size_in, n_rows):
    """Squeezed rows had their notes drawn over the next row's value (the spacing shrank with the
    panel, the fonts less): every text's drawn extent, title and footnote included, is clear of the
    others' and inside the panel."""
    fig = Figure(figsize=size_in, layout="constrained")
    draw_rows(
        fig,
        "Summary: best lens — OS (left eye) — not enough answers to prescribe",
        CROWDED_ROWS[:n_rows],
        big_labels=CROWDED_BIG,
        footnote="± posterior sd of the optimum's location",
    )
    fig.draw_without_rendering()
    (ax,) = fig.axes
    texts = [t for t in ax.get_children() if isinstance(t, Text) and t.get_text().strip()]
    boxes = [(t.get_text(), t.get_window_extent()) for t in texts]
    overlapping = [
        (a, b)
        for i, (a, box_a) in enumerate(boxes)
        for b, box_b in boxes[i + 1 :]
        if min(box_a.x1, box_b.x1) - max(box_a.x0, box_b.x0) > 0.5
        and min(box_a.y1, box_b.y1) - max(box_a.y0, box_b.y0) > 0.5
    ]
    assert overlapping == []
    assert all(fig.bbox.y0 - 0.5 <= box.y0 and box.y1 <= fig.bbox.y1 + 0.5 for _, box in boxes)


#: The summary of a finished full prescription of one eye (docs/prescription.md's screenshot, 8 Dec
#: 2026): rows that fit spaced a little closer, one large row with notes.
FINISHED_ROWS = [
    ("Session", "1 · P001 · OD (right eye) · finished"),
    ("Rule", "bracket-ald"),
    ("Trials", "98"),
    ("OD", "-1.00 / -1.00 x 166", "confidence 0.95 ≥ 0.95 after 98 trials"),
    ("Predicted acuity", "-0.01 logMAR · Snellen ≈ 6/6 · ≈ 20/20", "read 0 of 1 right through it, +0.00 logMAR"),
    ("95% intervals", "S -1.39 to -0.75 D, C -1.24 to -0.54 D, axis 154 to 177"),
    ("", "M -1.79 to -1.20 D, J0 +0.24 to +0.55 D, J45 -0.36 to -0.04 D"),
]


@pytest.mark.parametrize("size_in", [(6.8, 3.7), (5.85, 3.9), (7.0, 6.0)])
def test_rows_spaced_closer_to_fit_keep_their_fonts_large(size_in):
    """Rows spaced to fill the panel exactly summed to it give or take a rounding, and every font was
    set at the smallest (4.5 pt on a 7 x 6 inch panel, the values unreadable, the rows far apart): a
    font is set smaller only while its lines do not fit. Clear of each other, inside the panel."""
    fig = Figure(figsize=size_in, layout="constrained")
    draw_rows(fig, "Summary: prescription", FINISHED_ROWS, big_labels=("OD",), footnote="")
    fig.draw_without_rendering()
    (ax,) = fig.axes
    values = {t.get_text(): t.get_fontsize() for t in ax.texts}
    assert values["bracket-ald"] >= MIN_FONT_SCALE * (FONT_SIZE + 2) - 1e-9, values
    assert values["-1.00 / -1.00 x 166"] >= MIN_FONT_SCALE * (FONT_SIZE + 6) - 1e-9, values
    boxes = [t.get_window_extent() for t in ax.texts if t.get_text().strip()]
    assert all(
        min(a.y1, b.y1) - max(a.y0, b.y0) <= 0.5 or min(a.x1, b.x1) - max(a.x0, b.x0) <= 0.5
        for i, a in enumerate(boxes)
        for b in boxes[i + 1 :]
    )
    assert all(fig.bbox.y0 - 0.5 <= box.y0 and box.y1 <= fig.bbox.y1 + 0.5 for box in boxes)
