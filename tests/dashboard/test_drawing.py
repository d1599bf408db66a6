"""The drawing helpers shared by every panel: a text panel's title fits its panel."""

from __future__ import annotations

import pytest
from matplotlib.figure import Figure
from matplotlib.text import Text

from lensopt.dashboard.drawing import FONT_SIZE, draw_rows, fitted_title

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
