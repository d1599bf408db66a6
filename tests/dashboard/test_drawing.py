"""The drawing helpers shared by every panel: a text panel's title and values fit its panel."""

from __future__ import annotations

import pytest
from matplotlib.figure import Figure
from matplotlib.text import Text

from lensopt.dashboard.drawing import (
    FONT_SIZE,
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
