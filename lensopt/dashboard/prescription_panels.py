"""The lens map and curve panels of a full-prescription session (matplotlib object API; no Qt, no pyplot).

A full prescription's model predicts acuity over three powers, ``(M, J0, J45)`` (Thibos power
vectors). Its panels are two slices through the reported lens (a :class:`PrescriptionView`):

- **the astigmatism plane**: predicted acuity over ``(J0, J45)`` at the reported ``M``: the
  cylinder and its axis as one point (``J0 = −C/2 cos 2α``, ``J45 = −C/2 sin 2α``), the origin no
  cylinder; the lenses tried (their own ``M`` may differ), the start and the reported lens;
- **the defocus curve**: predicted acuity along ``M`` at the reported ``(J0, J45)``, with its 95 %
  band, the letters tried at their lenses' ``M`` (correct or not), the reported ``M``.

A search by duels or rankings through the acuity link predicts acuity too (its view is
``compared``): the points are then every lens compared, at its comparison's letter size on the
curve, marked when judged the clearest (:data:`COMPARISONS_SHOWN`).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from lensopt.dashboard.drawing import (
    BEST_COLOR,
    FONT_SIZE,
    MODEL_COLOR,
    covering,
    draw_surface,
    draw_tried,
    legend_below,
    message_panel,
    padded,
)
from lensopt.dashboard.snapshot import PrescriptionView
from lensopt.refraction.lens import PowerVector, diopter_text

#: Colour map of predicted acuity (as the two-parameter lens map's): bright = sharp vision.
ACUITY_CMAP = "viridis_r"
#: The 95 % band of the defocus curve: ± this many posterior SDs.
BAND_SDS = 1.959963984540054


@dataclass(frozen=True)
class _Shown:
    """How the panels name what the eye was shown: ``lens`` on the plane, ``mark`` on the curve
    (one and several), and the two ``outcomes`` of each."""

    lens: str
    lenses: str
    mark: str
    marks: str
    outcomes: tuple[str, str]


LETTERS_SHOWN = _Shown("lens tried", "lenses tried", "letter tried", "letters tried", ("correct", "wrong"))
COMPARISONS_SHOWN = _Shown(
    "lens compared", "lenses compared", "lens compared", "lenses compared", ("judged clearest", "not judged clearest")
)


def _shown(view: PrescriptionView) -> _Shown:
    return COMPARISONS_SHOWN if view.compared else LETTERS_SHOWN


def _acuity_words(view: PrescriptionView) -> str:
    """What the panels call the acuity they draw: predicted from letters; from comparisons, whose
    answers say which lens is clearer and not how well the eye sees, an acuity whose level the model
    assumes (the printed record's page 1 says "not predicted": a curve peaking at −0.1 logMAR read
    as the eye's acuity)."""
    return "acuity, its level assumed" if view.compared else "predicted acuity"


def _eye(view: PrescriptionView) -> str:
    return f" — {view.eye}" if view.eye else ""


#: What the panels call the model's best lens, before it is rounded to the phoropter's steps (the
#: printed record's table and the console give the rounded lens, whose M may differ by a step).
UNROUNDED = "(unrounded)"


def _lens_text(best_d) -> str:
    """The reported lens in clinical notation, ``-1.25 / -0.75 x 170``."""
    return PowerVector(*best_d).to_lens().format()


def draw_astigmatism_plane(fig, view: PrescriptionView, message: str | None = None) -> None:
    """Predicted acuity over ``(J0, J45)`` at the reported ``M``, the lenses tried, the start and
    the reported lens."""
    fig.clear()
    title = f"Astigmatism plane: {_acuity_words(view)}" + _eye(view)
    acuity = view.plane_acuity_logmar
    if not np.isfinite(acuity).any():
        message_panel(fig, title, message or "acuity not estimable yet (no trend with letter size so far)")
        return
    ax = fig.add_subplot(1, 1, 1)
    box_j0 = view.box_j0_d or (view.j0_d[0], view.j0_d[-1])
    box_j45 = view.box_j45_d or (view.j45_d[0], view.j45_d[-1])
    # the colours span the acuities of the search box (beyond it, far from the optimum, the darkest):
    # spread over the whole, wider grid they left little contrast where the optimum lies
    in_box = np.outer(
        (view.j45_d >= box_j45[0]) & (view.j45_d <= box_j45[1]), (view.j0_d >= box_j0[0]) & (view.j0_d <= box_j0[1])
    )
    inside = acuity[in_box & np.isfinite(acuity)]
    value_range = (float(inside.min()), float(inside.max())) if inside.size else None
    draw_surface(
        fig,
        ax,
        view.j0_d,
        view.j45_d,
        acuity,
        ACUITY_CMAP,
        f"{_acuity_words(view)} (logMAR, lower is better)",
        value_range,
    )
    shown = _shown(view)
    draw_tried(ax, view.tested_d[:, 1], view.tested_d[:, 2], view.tested_correct, shown.lens, shown.outcomes)
    if view.start_d is not None:  # a white square rimmed in black: seen on the map and in the legend
        for edge, width in (("black", 3.4), ("white", 1.6)):
            ax.scatter(
                view.start_d[1],
                view.start_d[2],
                s=380,  # round the best lens's star, over it: a best lens at the start hides neither
                marker="s",
                facecolor="none",
                edgecolor=edge,
                linewidth=width,
                zorder=6,
            )
        # the legend's square at the size of the other markers (no point of its own)
        ax.scatter([], [], s=90, marker="s", facecolor="none", edgecolor="black", linewidth=2.4, label="start")
    ax.scatter(
        view.best_d[1],
        view.best_d[2],
        s=220,
        marker="*",
        color=BEST_COLOR,
        edgecolor="black",
        linewidth=0.8,
        zorder=5,
        label=f"best lens {_lens_text(view.best_d)} {UNROUNDED}",
    )
    # the search box and every lens tried, at equal scales; the axes fill the panel (their limits
    # widened, not the plane shrunk to a square with half the panel empty), the map over the wider grid
    # (the region as the data limits, not fixed limits, which an adjustable aspect must override)
    (x0, x1), (y0, y1) = padded(covering(box_j0, view.tested_d[:, 1])), padded(covering(box_j45, view.tested_d[:, 2]))
    ax.ignore_existing_data_limits = True
    ax.update_datalim([(x0, y0), (x1, y1)])
    ax.set_xmargin(0.0)
    ax.set_ymargin(0.0)
    ax.autoscale_view()
    ax.set_aspect("equal", adjustable="datalim")
    ax.set_xlabel("J0 (D)", fontsize=FONT_SIZE)
    ax.set_ylabel("J45 (D)", fontsize=FONT_SIZE)
    # the panel's title, not the square plane's: over the plane, narrower than its panel, it ran off the panel
    fig.suptitle(
        f"{title}\nat M {diopter_text(view.best_d[0])} D ({shown.lenses}: at their own M)",
        fontsize=FONT_SIZE + 1,
        x=0.02,
        ha="left",
    )
    legend_below(ax, ncols=2)  # outside the plane: inside, it covered lenses tried


def draw_defocus_curve(fig, view: PrescriptionView, letter_bounds_logmar, message: str | None = None) -> None:
    """Predicted acuity along ``M`` at the reported ``(J0, J45)`` with its 95 % band, the letters
    tried at their lenses' ``M``, and the reported ``M``."""
    fig.clear()
    words = "acuity along M, its level assumed" if view.compared else "predicted acuity along M"
    title = f"Defocus curve: {words}" + _eye(view)
    mean, sd = view.curve_acuity_logmar, view.curve_sd_logmar
    if not np.isfinite(mean).any():
        message_panel(fig, title, message or "acuity not estimable yet (no trend with letter size so far)")
        return
    ax = fig.add_subplot(1, 1, 1)
    ax.fill_between(
        view.m_d, mean - BAND_SDS * sd, mean + BAND_SDS * sd, color=MODEL_COLOR, alpha=0.25, label="95% band"
    )
    threshold = "acuity threshold, its level assumed" if view.compared else "predicted acuity threshold"
    ax.plot(view.m_d, mean, color=MODEL_COLOR, linewidth=2, label=threshold)
    shown = _shown(view)
    draw_tried(ax, view.tested_d[:, 0], view.tested_letter_logmar, view.tested_correct, shown.mark, shown.outcomes)
    # the star's lens, as the plane labels it: not the rounded lens of the record's table
    best_m = f"best lens M {diopter_text(view.best_d[0])} D {UNROUNDED}"
    ax.axvline(view.best_d[0], color=BEST_COLOR, linestyle="--", label=best_m)
    low, high = letter_bounds_logmar
    ax.set_xlim(padded(covering((view.m_d[0], view.m_d[-1]), view.tested_d[:, 0])))
    ax.set_ylim(high + 0.05, low - 0.05)  # better acuity up, as on a letter chart
    ax.set_xlabel("spherical equivalent M (D)", fontsize=FONT_SIZE)
    ax.set_ylabel("letter size / acuity (logMAR, better up)", fontsize=FONT_SIZE)
    ax.set_title(
        f"{title}\nat J0 {diopter_text(view.best_d[1])} D, J45 {diopter_text(view.best_d[2])} D ({shown.marks}: at their own J)",
        fontsize=FONT_SIZE + 1,
        loc="left",
    )
    ax.grid(alpha=0.3)
    legend_below(ax, ncols=3)  # outside the axes: at loc="best" it still covered letters tried
