"""What the campaigns' pictures share: a figure title that fits the figure (:func:`fitted_suptitle`)."""

from __future__ import annotations

import textwrap

#: Width of an average character of the title's font, in units of its size (DejaVu Sans, with a margin).
CHARACTER_WIDTH_EM = 0.6


def fitted_suptitle(fig, text: str, fontsize: float) -> None:
    """Give ``fig`` (a matplotlib Figure) the title ``text``, wrapped onto as few lines of even length
    as its width allows (a one-panel figure is narrower than a title of one line), and lay the panels
    out below it."""
    width_pt = fig.get_figwidth() * 72
    characters = max(20, int(0.95 * width_pt / (CHARACTER_WIDTH_EM * fontsize)))
    lines = textwrap.wrap(text, characters) or [""]
    balanced = -(-len(text) // len(lines))  # as many lines, of even length: no word left alone on the last
    while balanced < characters and len(textwrap.wrap(text, balanced)) > len(lines):
        balanced += 1
    lines = textwrap.wrap(text, balanced) or [""]
    fig.suptitle("\n".join(lines), fontsize=fontsize)
    fig.tight_layout()  # below the title, whatever its lines (matplotlib >= 3.3 makes room for it)
