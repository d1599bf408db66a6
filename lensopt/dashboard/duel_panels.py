"""The four panels of a duel session, in the slots of the letter panels (no Qt, no pyplot).

- ``lens_map``: posterior mean utility over (S, C), every compared pair as a segment between its
  two lenses (the preferred lens filled, the other open; "the same": both open), the best lens;
- ``psychometric`` slot: the utility profile through the best lens (what the letter mode's
  psychometric curve would be meaningless for; see :mod:`lensopt.dashboard.duel_model`);
- ``history``: letter size per duel, the answer as the marker (1, 2 or S, the keys the clinician
  pressed);
- ``summary``: best lens ± sd, duels and answers, time, model and rule.
"""

from __future__ import annotations

import numpy as np
from matplotlib.collections import LineCollection

from lensopt.dashboard.duel_snapshot import WAITING_DUEL_MESSAGE, DuelSnapshot
from lensopt.dashboard.model import BAND_Z
from lensopt.dashboard.panels import (
    BEST_COLOR,
    FONT_SIZE,
    MODEL_COLOR,
    draw_optimum,
    draw_rows,
    draw_surface,
    elapsed_text,
    finish_history_axes,
    finish_lens_axes,
    message_panel,
    shown_text,
)

#: Colour map of the utility: bright = high utility = clearer letters.
UTILITY_CMAP = "viridis"
#: Marker and colour of each answer in the history (the keys: 1, 2, S).
ANSWER_STYLE = {"first": ("$1$", "#1b7837"), "second": ("$2$", "#762a83"), "same": ("$S$", "#e08214")}
#: Colour of the pairs answered "the same".
SAME_COLOR = ANSWER_STYLE["same"][1]
#: Colour of the second line of the utility profile (the first is ``MODEL_COLOR``).
CYLINDER_COLOR = "#d95f02"


def _preferred_and_other(duels):
    """Lenses ``(n, 2)`` preferred and not preferred in the decided duels, and both lenses of ties."""
    first, second = duels.first_lens_d, duels.second_lens_d
    won_first = (duels.answer == "first")[:, None]
    decided = duels.answer != "same"
    preferred = np.where(won_first, first, second)[decided]
    other = np.where(won_first, second, first)[decided]
    tied = np.vstack([first[~decided], second[~decided]])
    return preferred, other, tied


def draw_duel_lens_map(fig, snap: DuelSnapshot) -> None:
    """Posterior mean utility over (S, C), the compared pairs by answer, the optimum and its region."""
    fig.clear()
    title = "Lens map: utility (duels)"
    if snap.utility_map is None or snap.best is None:
        message_panel(fig, title, snap.message or WAITING_DUEL_MESSAGE)
        return
    ax = fig.add_subplot(1, 1, 1)
    um, duels = snap.utility_map, snap.duels
    draw_surface(fig, ax, um.sphere_d, um.cylinder_d, um.mean, UTILITY_CMAP,
                 f"posterior mean utility at {um.letter_logmar:+.1f} logMAR (higher is clearer)")
    if not np.ptp(um.mean) > 0.0:
        ax.text(0.5, 0.9, "no preference learned yet", ha="center", va="center", transform=ax.transAxes,
                fontsize=FONT_SIZE + 1, color="white")
    tie = duels.answer == "same"
    segments = np.stack([duels.first_lens_d, duels.second_lens_d], axis=1)
    ax.add_collection(LineCollection(segments[~tie], colors="black", linewidths=1.0, alpha=0.7, zorder=3))
    ax.add_collection(LineCollection(segments[tie], colors=SAME_COLOR, linewidths=1.0, linestyles="--",
                                     alpha=0.9, zorder=3))
    preferred, other, tied = _preferred_and_other(duels)
    ax.scatter(preferred[:, 0], preferred[:, 1], s=30, marker="o", color="black", edgecolor="white",
               linewidth=0.6, zorder=4, clip_on=False, label=f"preferred lens ({len(preferred)})")
    ax.scatter(other[:, 0], other[:, 1], s=30, marker="o", facecolor="none", edgecolor="black",
               linewidth=1.2, zorder=4, clip_on=False, label=f"other lens ({len(other)})")
    ax.scatter(tied[:, 0], tied[:, 1], s=30, marker="o", facecolor="none", edgecolor=SAME_COLOR,
               linewidth=1.2, zorder=4, clip_on=False, label=f'"the same" ({len(tied) // 2} pairs)')
    draw_optimum(ax, snap.best)
    finish_lens_axes(ax, snap, title)


def draw_utility_profile(fig, snap: DuelSnapshot) -> None:
    """``f(lens) − f(best)`` with its 95% band, along sphere and along cylinder through the best lens."""
    fig.clear()
    title = "Utility around the best lens"
    if snap.profile is None or snap.best is None:
        message_panel(fig, title, snap.message or WAITING_DUEL_MESSAGE)
        return
    ax = fig.add_subplot(1, 1, 1)
    pr, best = snap.profile, snap.best
    lines = ((pr.sphere_d - best.sphere_d, pr.sphere_mean, pr.sphere_sd, MODEL_COLOR,
              f"sphere varied (C {best.cylinder_d:+.2f} D)"),
             (pr.cylinder_d - best.cylinder_d, pr.cylinder_mean, pr.cylinder_sd, CYLINDER_COLOR,
              f"cylinder varied (S {best.sphere_d:+.2f} D)"))
    for offset, mean, sd, color, label in lines:
        ax.fill_between(offset, mean - BAND_Z * sd, mean + BAND_Z * sd, color=color, alpha=0.18)
        ax.plot(offset, mean, color=color, linewidth=2, label=label + " ± 95%")
    ax.axhline(0.0, color=BEST_COLOR, linestyle="--", linewidth=1.2, label="the best lens")
    ax.axvline(0.0, color="0.5", linewidth=0.6)
    ax.set_xlabel("lens change from the best lens (D)", fontsize=FONT_SIZE)
    ax.set_ylabel("utility − utility of the best lens", fontsize=FONT_SIZE)
    ax.set_title(f"{title}\nletters {pr.letter_logmar:+.2f} logMAR · {snap.model} model · "
                 "below 0: less clear", fontsize=FONT_SIZE + 1, loc="left")
    ax.grid(alpha=0.3)
    ax.legend(loc="lower center", fontsize=FONT_SIZE - 2, framealpha=0.85)


def draw_duel_history(fig, snap: DuelSnapshot) -> None:
    """Letter size per duel, the answer as the marker."""
    fig.clear()
    title = "History"
    duels = snap.duels
    if duels.n == 0:
        message_panel(fig, title, snap.message or WAITING_DUEL_MESSAGE)
        return
    ax = fig.add_subplot(1, 1, 1)
    ax.plot(duels.index, duels.letter_logmar, color="0.75", linewidth=0.8, zorder=1)
    labels = {"first": "lens 1 clearer", "second": "lens 2 clearer", "same": "the same"}
    for answer, count in duels.counts().items():
        marker, color = ANSWER_STYLE[answer]
        chosen = duels.answer == answer
        ax.scatter(duels.index[chosen], duels.letter_logmar[chosen], marker=marker, s=70, color=color,
                   label=f"{labels[answer]} ({count})", zorder=3)
    finish_history_axes(ax, snap, duels, "duel", "letter size (logMAR)", title)
    ax.legend(loc="upper center", bbox_to_anchor=(0.5, -0.13), ncol=3, fontsize=FONT_SIZE - 2, frameon=False)


def duel_summary_rows(snap: DuelSnapshot) -> list[tuple[str, str]]:
    """(label, value) rows of the duel summary panel."""
    h = snap.header
    rows = [("Session", f"{h.session_id} · {h.participant} · {h.status}"),
            ("Rule", f"{h.rule} · {snap.model} model")]
    if snap.best is None:
        return rows + [("Duels", "0"), ("", snap.message or WAITING_DUEL_MESSAGE)]
    b = snap.best
    return rows + [
        ("Sphere", f"{b.sphere_d:+.2f} ± {b.sphere_sd_d:.2f} D"),
        ("Cylinder", f"{b.cylinder_d:+.2f} ± {b.cylinder_sd_d:.2f} D"),
        ("Duels", shown_text(snap)),
        ("Answers", snap.answers_text()),
        ("Time", elapsed_text(snap)),
    ]


def draw_duel_summary(fig, snap: DuelSnapshot) -> None:
    """Best lens (S, C) ± sd, duels, answers, time, model and rule, as large text."""
    draw_rows(fig, "Summary: best lens (duels)", duel_summary_rows(snap), big_labels=("Sphere", "Cylinder"))


#: Drawing function of each panel slot (``lensopt.dashboard.panels.PANELS``) for a duel session.
DUEL_DRAW = {"lens_map": draw_duel_lens_map, "psychometric": draw_utility_profile, "history": draw_duel_history,
             "summary": draw_duel_summary}
