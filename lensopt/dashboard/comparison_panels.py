"""The four panels of a duel or ranking session, in the slots of the letter panels (no Qt, no pyplot).

A full prescription's duels or rankings through the acuity link draw, in the first two slots, the
astigmatism plane and the defocus curve of a letter search's eye (:mod:`lensopt.dashboard.prescription_panels`):
their model predicts acuity. Otherwise:

- ``lens_map``: posterior mean utility over (S, C), every compared set as a line through its
  lenses in the patient's order (a duel: a segment), the clearest lens filled and the others open
  (a duel's "the same": dashed, all open), the best lens and its region;
- ``psychometric`` slot: the utility profile through the best lens (what the letter mode's
  psychometric curve would be meaningless for; see :mod:`lensopt.dashboard.comparison_model`);
- ``history``: letter size per trial, the number of the lens judged clearest as the marker (1, 2,
  ... or S for "the same": the key the clinician pressed first);
- ``summary``: best lens ± sd, trials and answers, time, model and rule.
"""

from __future__ import annotations

import numpy as np
from matplotlib.collections import LineCollection

from lensopt.dashboard.comparison_snapshot import ComparisonSnapshot, waiting_message
from lensopt.dashboard.drawing import (
    BEST_COLOR,
    FONT_SIZE,
    MODEL_COLOR,
    SD_FOOTNOTE,
    draw_optimum,
    draw_rows,
    draw_surface,
    elapsed_text,
    finish_history_axes,
    finish_lens_axes,
    legend_below,
    message_panel,
    shown_text,
)
from lensopt.dashboard.posterior import BAND_Z
from lensopt.dashboard.prescription_panels import draw_astigmatism_plane, draw_defocus_curve
from lensopt.dashboard.prescription_text import interval_summary_rows
from lensopt.dashboard.unfinished_text import continue_row
from lensopt.refraction.acuity_text import logmar_text
from lensopt.refraction.lens import diopter_text
from lensopt.refraction.shown import box_edges
from lensopt.stopping import ESTIMATE_NOT_PRESCRIPTION

#: Colour map of the utility: bright = high utility = clearer letters.
UTILITY_CMAP = "viridis"
#: Marker and colour of each answer in the history, by the number of the clearest lens (0: "the same").
ANSWER_STYLE = {
    1: ("$1$", "#1b7837"),
    2: ("$2$", "#762a83"),
    3: ("$3$", "#2166ac"),
    4: ("$4$", "#b2182b"),
    0: ("$S$", "#e08214"),
}
#: Colour of the sets answered "the same".
SAME_COLOR = ANSWER_STYLE[0][1]
#: Colour of the second line of the utility profile (the first is ``MODEL_COLOR``).
CYLINDER_COLOR = "#d95f02"


def _message(snap: ComparisonSnapshot) -> str:
    return snap.message or waiting_message(snap.kind)


#: The lens map's and the profile's words in a full-prescription comparison session (its prescription
#: is in the summary panel and the summary line: not repeated in every panel).
PRESCRIPTION_PANEL_NOTE = (
    "Full prescription (sphere, cylinder and axis) by {nouns}: this panel shows two-parameter sessions only. "
    "The prescription so far is in the summary."
)


def _panel_message(snap: ComparisonSnapshot) -> str:
    return PRESCRIPTION_PANEL_NOTE.format(nouns=snap.nouns) if snap.prescription else _message(snap)


def draw_comparison_lens_map(fig, snap: ComparisonSnapshot) -> None:
    """Posterior mean utility over (S, C), the compared sets in the patient's order, the optimum and its region."""
    if snap.prescription_view is not None:  # a full prescription through the acuity link
        draw_astigmatism_plane(fig, snap.prescription_view)
        return
    fig.clear()
    title = f"Lens map: utility ({snap.nouns})"
    if snap.utility_map is None or snap.best is None:
        message_panel(fig, title, _panel_message(snap))
        return
    ax = fig.add_subplot(1, 1, 1)
    um, sets = snap.utility_map, snap.sets
    draw_surface(
        fig,
        ax,
        um.sphere_d,
        um.cylinder_d,
        um.mean,
        UTILITY_CMAP,
        f"posterior mean utility at {um.letter_logmar:+.1f} logMAR\n(higher is clearer)",  # as long as the bar
    )
    if not np.ptp(um.mean) > 0.0:
        ax.text(
            0.5,
            0.9,
            "no preference learned yet",
            ha="center",
            va="center",
            transform=ax.transAxes,
            fontsize=FONT_SIZE + 1,
            color="white",
        )
    ranked = sets.ranked_lenses_d()
    decided = [lenses for lenses, tied in zip(ranked, sets.tied) if not tied]
    tied = [lenses for lenses, tie in zip(ranked, sets.tied) if tie]
    ax.add_collection(LineCollection(decided, colors="black", linewidths=1.0, alpha=0.7, zorder=3))
    ax.add_collection(LineCollection(tied, colors=SAME_COLOR, linewidths=1.0, linestyles="--", alpha=0.9, zorder=3))
    clearest = np.reshape([lenses[0] for lenses in decided], (-1, 2))
    others = np.reshape([lens for lenses in decided for lens in lenses[1:]], (-1, 2))
    tied_lenses = np.reshape([lens for lenses in tied for lens in lenses], (-1, 2))
    ax.scatter(
        clearest[:, 0],
        clearest[:, 1],
        s=30,
        marker="o",
        color="black",
        edgecolor="white",
        linewidth=0.6,
        zorder=4,
        clip_on=False,
        label=f"clearest lens ({len(clearest)})",
    )
    ax.scatter(
        others[:, 0],
        others[:, 1],
        s=30,
        marker="o",
        facecolor="none",
        edgecolor="black",
        linewidth=1.2,
        zorder=4,
        clip_on=False,
        label=f"other lenses ({len(others)})",
    )
    if tied:
        ax.scatter(
            tied_lenses[:, 0],
            tied_lenses[:, 1],
            s=30,
            marker="o",
            facecolor="none",
            edgecolor=SAME_COLOR,
            linewidth=1.2,
            zorder=4,
            clip_on=False,
            label=f'"the same" ({len(tied)} {snap.nouns})',
        )
    draw_optimum(ax, snap.best)
    finish_lens_axes(ax, snap, title)


def draw_utility_profile(fig, snap: ComparisonSnapshot) -> None:
    """``f(lens) − f(best)`` with its 95% band, along sphere and along cylinder through the best lens."""
    if snap.prescription_view is not None:  # a full prescription through the acuity link
        draw_defocus_curve(fig, snap.prescription_view, snap.letter_bounds_logmar)
        return
    fig.clear()
    title = "Utility around the best lens"
    if snap.profile is None or snap.best is None:
        message_panel(fig, title, _panel_message(snap))
        return
    ax = fig.add_subplot(1, 1, 1)
    pr, best = snap.profile, snap.best
    lines = (
        (
            pr.sphere_d - best.sphere_d,
            pr.sphere_mean,
            pr.sphere_sd,
            MODEL_COLOR,
            f"sphere varied (C {diopter_text(best.cylinder_d)} D)",
        ),
        (
            pr.cylinder_d - best.cylinder_d,
            pr.cylinder_mean,
            pr.cylinder_sd,
            CYLINDER_COLOR,
            f"cylinder varied (S {diopter_text(best.sphere_d)} D)",
        ),
    )
    for offset, mean, sd, color, label in lines:
        ax.fill_between(offset, mean - BAND_Z * sd, mean + BAND_Z * sd, color=color, alpha=0.18)
        ax.plot(offset, mean, color=color, linewidth=2, label=label + " ± 95%")
    ax.axhline(0.0, color=BEST_COLOR, linestyle="--", linewidth=1.2, label="the best lens")
    ax.axvline(0.0, color="0.5", linewidth=0.6)
    ax.set_xlabel("lens change from the best lens (D)", fontsize=FONT_SIZE)
    ax.set_ylabel("utility − utility of the best lens", fontsize=FONT_SIZE)
    ax.set_title(
        f"{title}\nletters {logmar_text(pr.letter_logmar)} · {snap.model} model · below 0: less clear",
        fontsize=FONT_SIZE + 1,
        loc="left",
    )
    ax.grid(alpha=0.3)
    legend_below(ax, ncols=3)  # inside, it covered the band


def draw_comparison_history(fig, snap: ComparisonSnapshot) -> None:
    """Letter size per trial, the number of the lens judged clearest (S: "the same") as the marker."""
    fig.clear()
    title = "History"
    sets = snap.sets
    if sets.n == 0:
        message_panel(fig, title, _message(snap))
        return
    ax = fig.add_subplot(1, 1, 1)
    ax.plot(sets.index, sets.letter_logmar, color="0.75", linewidth=0.8, zorder=1)
    clearest, counts = sets.clearest, snap.answer_counts()
    for number, count in counts.items():
        marker, color = ANSWER_STYLE[number]
        chosen = clearest == number
        ax.scatter(
            sets.index[chosen],
            sets.letter_logmar[chosen],
            marker=marker,
            s=70,
            color=color,
            label=f"{snap.answer_label(number)} ({count})",
            zorder=3,
        )
    finish_history_axes(ax, snap, sets, snap.noun, "letter size (logMAR, smaller up)", title)
    ax.legend(
        loc="upper center", bbox_to_anchor=(0.5, -0.13), ncol=min(len(counts), 4), fontsize=FONT_SIZE - 2, frameon=False
    )


#: What a best lens on the lens box's edge calls for (:func:`lensopt.refraction.shown.box_edge_warning`).
EDGE_ADVICE = "the search may not have found the patient's lens: run more comparisons, or check the box"


def comparison_summary_rows(snap: ComparisonSnapshot) -> list[tuple]:
    """(label, value) rows of the summary panel of a duel or ranking session; under the session's
    row, for a session that stopped before its end, the command that continues it."""
    row = continue_row(snap.header)
    rows = _comparison_summary_rows(snap)
    return rows if row is None else [*rows[:1], row, *rows[1:]]


def _comparison_summary_rows(snap: ComparisonSnapshot) -> list[tuple]:
    h, label = snap.header, snap.nouns.capitalize()
    rows = [("Session", h.session_text), ("Rule", f"{h.rule} · {snap.model} model")]
    if snap.best is None:
        if snap.sets.n == 0:
            return rows + [(label, "0"), ("", _message(snap))]
        # a session not finished (or replayed part-way) has a best lens so far, not a prescription yet
        if not snap.prescription:
            rx: list[tuple] = [("", _message(snap))]
        elif snap.shortfall:  # the end, short of the comparisons measured: as the printed record says it
            rx = [("Not prescribed", f"{snap.result_label} {snap.prescription}", snap.shortfall)]
        else:
            rx = [(snap.result_label.capitalize(), snap.prescription)]
        rx += interval_summary_rows(snap.prescription_intervals)  # as the closing console gives them
        return rows + [*rx, (label, shown_text(snap)), ("Answers", snap.answers_text())]
    b, notation, phoropter = snap.best, snap.best_lens_notation, snap.phoropter_lens
    # a search of sphere and cylinder by comparisons reports no prescription (the closing console's
    # "estimate, not a prescription"): that verdict large, its lens small — in clinical notation at
    # the protocol's axis, or on the phoropter's steps — and a lens on the box's edge warned of
    if phoropter:
        lens_text = f"{phoropter} (on the phoropter, {snap.lens_step_d:g} D steps)"
    else:
        lens_text = notation or f"S {diopter_text(b.sphere_d)} D  C {diopter_text(b.cylinder_d)} D"
    lens: list[tuple] = [("Lens", ESTIMATE_NOT_PRESCRIPTION, f"estimate {lens_text}, not for prescribing")]
    # a lens on the box's edge at the end, warned of as the closing console does (in two lines: one would not fit)
    edges = box_edges((b.sphere_d, b.cylinder_d), snap.sphere_bounds_d, snap.cylinder_bounds_d)
    if edges and snap.final:
        lens.append(("Warning", f"on the lens box's edge ({', '.join(edges)})", EDGE_ADVICE))
    lens += snap.header.accommodation_rows()  # the comparisons take the clearest lens
    return rows + [
        *lens,
        ("Sphere", f"{diopter_text(b.sphere_d)} ± {diopter_text(b.sphere_sd_d, signed=False)} D"),
        ("Cylinder", f"{diopter_text(b.cylinder_d)} ± {diopter_text(b.cylinder_sd_d, signed=False)} D"),
        (label, shown_text(snap)),
        ("Answers", snap.answers_text()),
        ("Time", elapsed_text(snap)),
    ]


def draw_comparison_summary(fig, snap: ComparisonSnapshot) -> None:
    """Best lens (S, C) ± sd, trials, answers, time, model and rule, as large text."""
    draw_rows(
        fig,
        f"Summary: best lens ({snap.nouns})",
        comparison_summary_rows(snap),
        big_labels=("Lens", "Sphere", "Cylinder"),
        footnote=SD_FOOTNOTE if snap.best is not None else "",  # a prescription's rows have no ±
    )


#: Drawing function of each panel slot (``lensopt.dashboard.panels.PANELS``) for a duel or ranking session.
COMPARISON_DRAW = {
    "lens_map": draw_comparison_lens_map,
    "psychometric": draw_utility_profile,
    "history": draw_comparison_history,
    "summary": draw_comparison_summary,
}
