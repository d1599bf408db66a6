"""The fonts of lensopt's figures (lensopt.dashboard.fonts): a script DejaVu Sans lacks falls back to
an installed font; a glyph no font has is kept for one note, other warnings pass through."""

import warnings

import matplotlib
import pytest
from matplotlib.figure import Figure

from lensopt.dashboard.fonts import figure_fonts, missing_glyphs_note, text_families


def _drawn(text: str) -> None:
    fig = Figure(figsize=(3, 1))
    fig.text(0.1, 0.5, text, weight="bold")
    fig.draw_without_rendering()


def test_the_figures_fall_back_from_dejavu_sans_to_an_installed_cjk_font():
    families = text_families()
    assert families[0] == "sans-serif" and matplotlib.rcParams["font.sans-serif"][0] == "DejaVu Sans"
    assert "WenQuanYi Micro Hei" in families, "the set-up (.ci/task) installs fonts-wqy-microhei"
    with figure_fonts() as missing:
        _drawn("Zoë 李小龍 김민준 やまだ")
    assert missing == []
    # DejaVu Sans alone (matplotlib's default; set here, as a dashboard run in this process may have
    # set the fallback for every figure): a warning per glyph
    with matplotlib.rc_context({"font.family": ["sans-serif"]}), warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        _drawn("李小龍")
    assert sum("missing from font" in str(w.message) for w in caught) >= 3


def test_a_glyph_no_font_has_is_kept_once_and_other_warnings_pass_through():
    with pytest.warns(DeprecationWarning, match="an unrelated warning"), figure_fonts() as missing:
        _drawn("𓀀𓀀𓀁 on page 1")
        _drawn("𓀀 on page 2")
        warnings.warn("an unrelated warning", DeprecationWarning, stacklevel=1)
    assert missing == ["𓀀", "𓀁"]
    assert missing_glyphs_note(missing) == (
        "no installed font has '𓀀𓀁', which print as empty boxes; install a font with them "
        "(Debian: fonts-wqy-microhei or fonts-noto-cjk) and print again"
    )
    assert missing_glyphs_note([]) is None
