"""The fonts of lensopt's figures (the dashboard, its report, the printed record).

matplotlib draws every text in one font, DejaVu Sans, which has no Chinese, Japanese or Korean
glyphs: a participant named 李小龍 printed as empty boxes on every page of the record a clinician
signs. matplotlib falls back glyph by glyph along ``font.family`` (not along ``font.sans-serif``),
so the figures' family is the sans-serif font first and then each font below that this machine has
(:func:`text_families`); a glyph that none of them has is said once, in one line
(:func:`missing_glyphs_note`), rather than in a matplotlib warning per glyph and page.
"""

from __future__ import annotations

import contextlib
import functools
import logging
import re
import warnings
from collections.abc import Iterator

import matplotlib
from matplotlib import font_manager

#: Fonts with the scripts DejaVu Sans lacks, tried in this order where installed: Debian's small
#: ``fonts-wqy-microhei`` (Chinese, Japanese kana and kanji, Korean; installed by ``.ci/task``),
#: Noto CJK (``fonts-noto-cjk``), Android's fallback, and those of Windows and macOS.
FALLBACK_FAMILIES = (
    "WenQuanYi Micro Hei",
    "Noto Sans CJK JP",
    "Noto Sans CJK SC",
    "Noto Sans CJK TC",
    "Noto Sans CJK KR",
    "Droid Sans Fallback",
    "Microsoft YaHei",
    "Yu Gothic",
    "Malgun Gothic",
    "PingFang SC",
    "Hiragino Sans",
    "Arial Unicode MS",
)

#: What the Debian packages of a fallback font are called, for the note of a missing glyph.
FONT_PACKAGES = "fonts-wqy-microhei or fonts-noto-cjk"

#: matplotlib's font log: "Failed to find font weight bold for WenQuanYi Micro Hei" for a fallback
#: font of one weight, drawn in that weight; quietened while lensopt's figures are drawn.
_FONT_LOG = logging.getLogger("matplotlib.font_manager")

_MISSING_GLYPH = re.compile(r"^Glyph (\d+) \(.*\) missing from font")


@functools.cache
def text_families() -> tuple[str, ...]:
    """``font.family`` of lensopt's figures: ``sans-serif`` (DejaVu Sans), then the
    :data:`FALLBACK_FAMILIES` this machine has."""
    installed = {font.name for font in font_manager.fontManager.ttflist}
    return ("sans-serif", *(family for family in FALLBACK_FAMILIES if family in installed))


@contextlib.contextmanager
def figure_fonts() -> Iterator[list[str]]:
    """Within it, figures made and saved use :func:`text_families`, and matplotlib's warnings of a
    glyph no font has are kept, not shown: the list it yields gets each missing character once
    (for :func:`missing_glyphs_note`). Any other warning is shown as it would have been."""
    missing: list[str] = []
    others: list[warnings.WarningMessage] = []
    level = _FONT_LOG.level
    _FONT_LOG.setLevel(logging.ERROR)  # "Failed to find font weight bold for WenQuanYi Micro Hei": its one weight
    try:
        with (
            matplotlib.rc_context({"font.family": list(text_families())}),
            warnings.catch_warnings(record=True) as caught,
        ):
            warnings.simplefilter("always")
            try:
                yield missing
            finally:
                for warning in caught:
                    character = _missing_character(str(warning.message))
                    if character is None:
                        others.append(warning)
                    elif character not in missing:
                        missing.append(character)
    finally:
        _FONT_LOG.setLevel(level)
        for warning in others:
            warnings.warn_explicit(warning.message, warning.category, warning.filename, warning.lineno)


def _missing_character(text: str) -> str | None:
    """The character of matplotlib's ``Glyph 26446 (\\N{CJK UNIFIED IDEOGRAPH-674E}) missing from
    font(s) DejaVu Sans.``, else None."""
    found = _MISSING_GLYPH.match(text)
    return None if found is None else chr(int(found.group(1)))


def missing_glyphs_note(missing: list[str]) -> str | None:
    """One line for characters no installed font has (they print as empty boxes), else None."""
    if not missing:
        return None
    return (
        f"no installed font has {''.join(missing)!r}, which print as empty boxes; install a font with them "
        f"(Debian: {FONT_PACKAGES}) and print again"
    )


def use_text_families() -> None:
    """:func:`text_families` for every figure of this process from now on: the dashboard's own
    process (``lensopt dashboard``), whose figures are redrawn as long as its window is open. A
    fallback font's missing bold is not logged (it is drawn in its one weight)."""
    matplotlib.rcParams["font.family"] = list(text_families())
    _FONT_LOG.setLevel(logging.ERROR)
