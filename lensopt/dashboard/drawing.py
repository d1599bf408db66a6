"""Drawing helpers shared by the panels of every kind of session (matplotlib object API; no Qt, no pyplot).

The letter panels (:mod:`lensopt.dashboard.panels`) and those of a duel or ranking session
(:mod:`lensopt.dashboard.comparison_panels`) both build on this module; it imports neither.
"""

from __future__ import annotations

import math

import numpy as np
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.font_manager import FontProperties
from matplotlib.textpath import TextToPath
from matplotlib.ticker import MaxNLocator

from lensopt.dashboard.series import answer_numbers, count_text
from lensopt.refraction.acuity_text import ACUITY_MARGIN_LOGMAR
from lensopt.refraction.lens import diopter_text

#: Colours of correct and wrong answers, the best lens and the model's estimate.
CORRECT_COLOR, WRONG_COLOR, BEST_COLOR, MODEL_COLOR = "#1a9850", "#d73027", "#e7298a", "#2c7fb8"
#: Base font size (points) of the panels; clinicians read them at a glance.
FONT_SIZE = 10
#: How the history and lens-path plots name each eye over its trials: in the weight of every other
#: label (in bold, at the screen's 100 dpi, DejaVu Sans's hinted stems read as a serif face).
EYE_NAME_STYLE = {"fontsize": FONT_SIZE + 1, "fontweight": "normal", "color": "0.2"}
#: Colour of an answer the clinician undid in a legend (and in the letter history): its open marker.
UNDONE_COLOR = "0.4"


def message_panel(fig, title: str, text: str) -> None:
    """A panel with a title and one centred grey message."""
    ax = fig.add_subplot(1, 1, 1)
    ax.set_axis_off()
    ax.set_title(title, fontsize=FONT_SIZE + 2, loc="left")
    ax.text(
        0.5,
        0.5,
        text,
        ha="center",
        va="center",
        fontsize=FONT_SIZE + 3,
        color="0.35",
        transform=ax.transAxes,
        wrap=True,
    )


def padded(bounds, fraction=0.03):
    low, high = bounds
    pad = fraction * (high - low)
    return low - pad, high + pad


def covering(bounds, values) -> tuple[float, float]:
    """``bounds`` widened to hold every finite one of ``values`` (lenses tried beyond the model's grid,
    such as the full prescription's bracketing lenses beyond its box, were drawn outside the axes)."""
    low, high = float(bounds[0]), float(bounds[1])
    finite = np.asarray(values, dtype=float)
    finite = finite[np.isfinite(finite)]
    if finite.size:
        low, high = min(low, float(finite.min())), max(high, float(finite.max()))
    return low, high


def measurable_range(acuity_logmar, letter_bounds_logmar) -> tuple[float, float] | None:
    """The acuities a lens map's colours span: its values, within :data:`ACUITY_MARGIN_LOGMAR` of the
    letter sizes shown (beyond, the end colours: early in a session the model extrapolates to -5 or
    +30 logMAR, and the map was one colour with a bar from -5 to +30); None when no value lies there."""
    values = np.asarray(acuity_logmar, dtype=float)
    values = values[np.isfinite(values)]
    low, high = letter_bounds_logmar
    low, high = low - ACUITY_MARGIN_LOGMAR, high + ACUITY_MARGIN_LOGMAR
    if not values.size:
        return None
    span = max(float(values.min()), low), min(float(values.max()), high)
    return span if span[0] < span[1] else None


def draw_surface(fig, ax, sphere_d, cylinder_d, values, cmap: str, label: str, value_range=None) -> None:
    """A colour map of ``values`` ``(n_cylinder, n_sphere)`` over the lens grid, white contour lines
    (when it is not flat) labelled with their levels and a colour bar labelled ``label``;
    ``value_range`` ``(low, high)``: the values the colours span (beyond it, the end colours, and
    the bar's end pointed), else all of them."""
    low, high = (None, None) if value_range is None else value_range
    mesh = ax.pcolormesh(sphere_d, cylinder_d, values, cmap=cmap, shading="auto", rasterized=True, vmin=low, vmax=high)
    if np.nanmax(values) > np.nanmin(values) and np.isfinite(values).all():
        lines = ax.contour(sphere_d, cylinder_d, values, levels=6, colors="white", linewidths=0.6, alpha=0.7)
        # each line's own level ("%.1f" wrote the 0.25 line "0.2" and the 0.75 line "0.8")
        ax.clabel(lines, fontsize=FONT_SIZE - 3, fmt="%g")
    below = low is not None and bool(np.nanmin(values) < low)
    above = high is not None and bool(np.nanmax(values) > high)
    # a bar whose end colours also stand for the values beyond it says so with a pointed end
    extend = {(False, False): "neither", (True, False): "min", (False, True): "max", (True, True): "both"}
    bar = fig.colorbar(mesh, ax=ax, pad=0.02, extend=extend[below, above])
    bar.set_label(label, fontsize=FONT_SIZE - 1)


def draw_tried(ax, x, y, correct, what: str, outcomes: tuple[str, str] = ("correct", "wrong")) -> None:
    """The points ``(x, y)`` of the trials by answer: correct (green dots) and wrong (red crosses),
    labelled ``"{what}, correct (n)"`` and ``"{what}, wrong (n)"`` (``outcomes``: other words for
    the two, e.g. a comparison's lens judged the clearest or not)."""
    ok = np.asarray(correct, bool)
    ax.scatter(
        x[ok],
        y[ok],
        s=26,
        marker="o",
        color=CORRECT_COLOR,
        edgecolor="black",
        linewidth=0.7,
        zorder=3,
        clip_on=False,
        label=f"{what}, {outcomes[0]} ({ok.sum()})",
    )
    ax.scatter(
        x[~ok],
        y[~ok],
        s=26,
        marker="x",
        color=WRONG_COLOR,
        linewidth=1.6,
        zorder=3,
        clip_on=False,
        label=f"{what}, {outcomes[1]} ({(~ok).sum()})",
    )


def undone_label(n: int) -> str:
    """The legend of the answers the clinician undid (Backspace at the console: kept, marked void)."""
    return f"answer undone (void, {n})"


def draw_undone(ax, x, y, color=UNDONE_COLOR, label: str | None = None, zorder: float = 3) -> None:
    """Answers the clinician undid at ``(x, y)``: open circles, drawn apart from the line of the
    answers kept (never as right or wrong: the search was not told them) — the printed record's
    lens path and the dashboard's history alike; at the trial of the answer that replaced it, a ring
    wide enough to be seen around that answer's marker. ``label``: its legend (:func:`undone_label`); a
    legend entry alone, with no point, for ``x`` and ``y`` empty."""
    ax.plot(x, y, "o", color=color, markerfacecolor="none", markersize=9, linewidth=0, label=label, zorder=zorder)


#: At most about this many trial numbers along a history's axis in a session of both eyes (each at
#: least 1/16 of the axis from the one before).
MAX_TRIAL_TICKS = 16


def number_each_eye(ax, eyes, void, noun: str = "trial") -> None:
    """In a session of both eyes, the trial axis (placed by the session's answers kept, one axis for
    both) ticked as the console numbers each eye's trials (``OS trial 1``: the answers kept of that
    eye, :func:`~lensopt.dashboard.series.answer_numbers`) and labelled so; nothing for one eye."""
    eyes, void = [str(e or "") for e in eyes], [bool(v) for v in void]
    if len(set(eyes)) < 2:
        return
    place = answer_numbers(eyes, void, per_eye=False)
    own = answer_numbers(eyes, void, per_eye=True)
    ticks: list[float] = []
    labels: list[str] = []
    # a tick closer than this to the one before is left out: the short runs of an eye given a few more
    # trials on resuming ticked every answer, side by side with their neighbours' ("2021222122")
    gap = max(int(place[-1]), 1) / MAX_TRIAL_TICKS
    first = 0
    for k in range(1, len(eyes) + 1):  # each run of one eye's trials
        if k < len(eyes) and eyes[k] == eyes[first]:
            continue
        low, high = int(own[first]), int(own[k - 1])
        bins = max(2, round(8 * (high - low + 1) / max(int(place[-1]), 1)))
        for value in MaxNLocator(nbins=bins, integer=True, steps=[1, 2, 5, 10]).tick_values(low, high):
            at = float(place[first] + value - low)
            if low <= value <= high and (not ticks or at - ticks[-1] >= gap):
                ticks.append(at)
                labels.append(str(int(value)))
        first = k
    ax.set_xticks(ticks, labels)
    ax.set_xlabel(f"{noun} (each eye's own, as on the console)", fontsize=FONT_SIZE)


def draw_optimum(ax, best) -> None:
    """The best lens (a star), its sampled locations and their 95% region (a ``LensOptimum``)."""
    ax.scatter(
        best.samples_d[:, 0],
        best.samples_d[:, 1],
        s=6,
        color=BEST_COLOR,
        alpha=0.15,
        linewidth=0,
        label="sampled optimum locations",
        zorder=2,
    )
    ax.plot(
        best.region_d[:, 0],
        best.region_d[:, 1],
        "--",
        color=BEST_COLOR,
        linewidth=1.5,
        label="95% region of the optimum",
        zorder=4,
    )
    ax.scatter(
        [best.sphere_d],
        [best.cylinder_d],
        s=240,
        marker="*",
        color=BEST_COLOR,
        edgecolor="black",
        linewidth=0.8,
        zorder=5,
        label=f"best lens S {diopter_text(best.sphere_d)}, C {diopter_text(best.cylinder_d)} D",
        clip_on=False,
    )


def finish_lens_axes(ax, snap, title: str) -> None:
    """Limits (the lens bounds), labels, title and legend of a lens-map axes."""
    ax.set_xlim(padded(snap.sphere_bounds_d))
    ax.set_ylim(padded(snap.cylinder_bounds_d))
    ax.set_xlabel("sphere S (D)", fontsize=FONT_SIZE)
    ax.set_ylabel("cylinder C (D)", fontsize=FONT_SIZE)
    ax.set_title(title, fontsize=FONT_SIZE + 2, loc="left")
    legend_below(ax, ncols=3)


def legend_below(ax, ncols: int) -> None:
    """The legend of ``ax`` in up to ``ncols`` columns at the foot of its panel, outside the axes,
    where it hides no lens tried wherever the lenses fall (inside, even at ``loc="best"``, it covered
    some: a map's points fill the whole plane). A legend of the panel (``ax.figure``), not of the
    axes: constrained layout makes room for it under the x label without pushing the colour bar
    away. Fewer columns when ``ncols`` would be wider than the panel (the printed record's panels are
    narrower than the dashboard's: its labels ran off the page)."""
    panel = ax.figure
    handles, labels = ax.get_legend_handles_labels()
    canvas = panel.figure.canvas
    if not hasattr(canvas, "get_renderer"):  # a figure not yet drawn anywhere (a report, a record page)
        canvas = FigureCanvasAgg(panel.figure)
    renderer = canvas.get_renderer()
    for n in range(ncols, 0, -1):
        legend = panel.legend(
            handles,
            labels,
            loc="outside lower center",
            ncols=n,
            fontsize=FONT_SIZE - 2,
            frameon=False,
            columnspacing=1.2,
            handletextpad=0.4,
        )
        if n == 1 or legend.get_window_extent(renderer).width <= panel.bbox.width:
            return
        legend.remove()


def finish_history_axes(ax, snap, series, noun: str, ylabel: str, title: str) -> None:
    """Axes of a history panel: one tick per ``noun`` (trial, duel) of ``series``, the letter bounds
    (early estimates can be wild: the letters stay readable) with smaller letters, better acuity, up
    as in the defocus curve beside it (the two drew logMAR opposite ways), labels, title and grid; a
    replay's title counts the answers shown (those undone said apart)."""
    undone = f", +{snap.n_undone} undone" if snap.n_undone else ""
    ax.set_xlim(0.5, max(series.number[-1], 2) + 0.5)  # numbered as the console: by the answers kept
    low, high = snap.letter_bounds_logmar
    ax.set_ylim(max(high, series.letter_logmar.max()) + 0.1, min(low, series.letter_logmar.min()) - 0.1)
    ax.xaxis.set_major_locator(MaxNLocator(integer=True))
    ax.set_xlabel(noun, fontsize=FONT_SIZE)
    ax.set_ylabel(ylabel, fontsize=FONT_SIZE)
    ax.set_title(
        title + ("" if snap.live else f" (replay: first {count_text(snap.n_answers, noun)}{undone})"),
        fontsize=FONT_SIZE + 2,
        loc="left",
    )
    ax.grid(alpha=0.3)


def trial_range_text(first: int, last: int, noun: str = "trial") -> str:
    """``trials 20–80``, or ``trial 10`` for a range of one (a session of ``--trials 10`` whose
    stopping rule may act from its 10th trial, printed "trials 10–10")."""
    return f"{noun} {first}" if first == last else f"{noun}s {first}–{last}"


def shown_text(snap) -> str:
    """How many trials (or duels) the snapshot shows: ``12``, or ``12 of 40 (replay)``; of a letter
    session the answers kept, those undone said apart: ``7 (+1 undone)``, ``4 of 7 (+1 undone, replay)``."""
    undone = f"+{snap.n_undone} undone" if snap.n_undone else ""
    if snap.live:
        return f"{snap.n_answers}" + (f" ({undone})" if undone else "")
    return f"{snap.n_answers} of {snap.header.n_answers_stored} ({undone + ', ' if undone else ''}replay)"


def elapsed_text(snap) -> str:
    """``4 min 05 s`` from the first presentation to the last answer."""
    minutes, seconds = divmod(round(snap.elapsed_s), 60)
    return f"{minutes} min {seconds:02d} s"


#: Footnote of a summary whose ± are Thompson-sample sds.
SD_FOOTNOTE = "± is the posterior sd of the optimum's location (Thompson samples)"
#: Heights (fraction of the panel) of a big row, a small row and a note under a value, before
#: :func:`draw_rows` shrinks them to fit.
ROW_STEPS = {"big": 0.15, "small": 0.11, "note": 0.065}
#: The smallest share of their size to which the rows' fonts shrink with their spacing.
MIN_FONT_SCALE = 0.7
#: Fraction of the panel the rows may fill (below the title, above the footnote).
ROWS_HEIGHT = 0.86
#: A line of text's height as drawn, in its font's size (ascent, descent and a little lead).
LINE_HEIGHT = 1.3
#: The smallest share of their size to which the rows' fonts shrink when even lines set close
#: (:data:`LINE_HEIGHT`) do not fit the panel: smaller still, but no text over another.
MIN_CROWDED_SCALE = 0.45

#: Where a row's value starts (axes fraction), and the share of the panel's width right of it that a
#: value may fill: a value too wide (a long provisional estimate on the report's narrower panel) is
#: set smaller rather than cut at the panel's edge. The share allows for the axes' margins.
VALUE_X = 0.28
VALUE_ROOM = 0.64


def fitted_size(text: str, size: float, room_pt: float, family=None, weight="normal") -> float:
    """``size`` (points), or smaller so that ``text`` set in it is at most ``room_pt`` wide (its
    width measured from the font's outlines, as the renderer will draw it)."""
    font = FontProperties(size=size, family=family, weight=weight)
    width_pt, _, _ = TextToPath().get_text_width_height_descent(str(text), font, ismath=False)
    return size if width_pt <= room_pt else size * room_pt / width_pt


#: The smallest share of its size a `` · ``-joined value (the session row: ``3 · P01 · OD (right eye) ·
#: running``) is set at: wider, its longest part (a long participant name) is cut short with "…".
MIN_VALUE_SCALE = 0.85
#: The characters of a part cut short that are always kept, before its "…".
MIN_KEPT_CHARS = 8


def fitted_value(text: str, size: float, room_pt: float, family=None, weight="normal") -> tuple[str, float]:
    """``text`` and its font size to fit ``room_pt`` wide (:func:`fitted_size`); a `` · ``-joined
    value that would be set below :data:`MIN_VALUE_SCALE` of ``size`` has its longest part cut
    short, "…" after its first characters (at least :data:`MIN_KEPT_CHARS`), until it fits at that
    share — the session row's long participant name (written whole in the window's header) set
    tiny had made the whole row unreadable."""
    text = str(text)
    fitted = fitted_size(text, size, room_pt, family, weight)
    parts = text.split(" · ")
    if fitted >= MIN_VALUE_SCALE * size or len(parts) < 2:
        return text, fitted
    longest = max(range(len(parts)), key=lambda i: len(parts[i]))
    whole = parts[longest]
    if len(whole) - 1 <= MIN_KEPT_CHARS:  # nothing to cut
        return text, fitted

    def cut(kept: int) -> str:
        return " · ".join([*parts[:longest], whole[:kept].rstrip() + "…", *parts[longest + 1 :]])

    low, high = MIN_KEPT_CHARS, len(whole) - 1  # the most characters kept that fit, by bisection
    while low < high:
        middle = (low + high + 1) // 2
        if fitted_size(cut(middle), size, room_pt, family, weight) >= MIN_VALUE_SCALE * size:
            low = middle
        else:
            high = middle - 1
    shortened = cut(low)
    return shortened, fitted_size(shortened, size, room_pt, family, weight)


def fitted_title(title: str, size: float, room_pt: float, after: str = " — ") -> tuple[str, float]:
    """``title`` and its font size, to fit ``room_pt`` wide: as it is, else broken after its first
    ``after`` onto a second line (``Summary: best lens`` / ``estimate, not a prescription: a cylinder
    without an axis`` ran off the panel's right edge), else set smaller."""
    if fitted_size(title, size, room_pt) < size and after in title:
        title = title.replace(after, after.rstrip() + "\n", 1)
    return title, min(fitted_size(line, size, room_pt) for line in title.split("\n"))


def _row_gaps(rows, big_labels, steps, notes, scale, font_scale, panel_pt) -> list[tuple[float, float]]:
    """Per row, from its top (axes fraction): where its note starts, and where the next row does —
    the rows' steps scaled by ``scale``, but never less than its value's and its note's lines set
    at ``font_scale`` (:data:`LINE_HEIGHT`) in a panel ``panel_pt`` high."""
    gaps = []
    for row, step, note_step in zip(rows, steps, notes):
        value_h = (FONT_SIZE + (6 if row[0] in big_labels else 2)) * font_scale * LINE_HEIGHT / panel_pt
        note_h = FONT_SIZE * font_scale * LINE_HEIGHT / panel_pt if note_step else 0.0
        gaps.append((max(0.62 * step * scale, value_h), max((step + note_step) * scale, value_h + note_h)))
    return gaps


def draw_rows(fig, title: str, rows, big_labels=(), footnote: str = SD_FOOTNOTE) -> None:
    """A text panel: one ``(label, value)`` or ``(label, value, note)`` row per line, the
    ``big_labels`` rows in large bold, a note small and grey under its value; the rows are spaced
    closer when they would not fit, and set smaller when even lines set close would not (no text is
    drawn over another)."""
    fig.clear()
    ax = fig.add_subplot(1, 1, 1)
    ax.set_axis_off()
    room_pt = VALUE_ROOM * fig.bbox.width / fig.dpi * 72.0
    title, title_size = fitted_title(title, FONT_SIZE + 2, (VALUE_X + VALUE_ROOM) * fig.bbox.width / fig.dpi * 72.0)
    ax.set_title(title, fontsize=title_size, loc="left")
    # the rows' axes as a constrained layout places them: the panel less its title and the layout's
    # pads (3 pt each side, 6 under the title), a twentieth kept in hand
    title_pt = title_size * LINE_HEIGHT * (title.count("\n") + 1) + 12.0
    panel_pt = max(0.95 * (fig.bbox.height / fig.dpi * 72.0 - title_pt), 1.0)
    top = 0.92
    room = min(ROWS_HEIGHT, top - ((FONT_SIZE - 2) * LINE_HEIGHT / panel_pt if footnote else 0.0))
    steps = [ROW_STEPS["big" if row[0] in big_labels else "small"] for row in rows]
    notes = [ROW_STEPS["note"] if len(row) > 2 and row[2] else 0.0 for row in rows]
    scale = min(1.0, room / max(sum(steps) + sum(notes), 1e-9))
    # rows spaced closer are written smaller too, else a value runs into the note under it
    font_scale = max(MIN_FONT_SCALE, math.sqrt(scale))
    gaps = _row_gaps(rows, big_labels, steps, notes, scale, font_scale, panel_pt)
    # smaller only while the lines, not the rows' spacing, overfill the room: spaced to fill it exactly
    # (scale < 1), their sum is the room give or take a rounding, which set every font at the minimum
    while sum(gap for _, gap in gaps) > room * (1.0 + 1e-9) and font_scale > MIN_CROWDED_SCALE:
        smaller = max(MIN_CROWDED_SCALE, 0.95 * font_scale)
        closer = _row_gaps(rows, big_labels, steps, notes, scale, smaller, panel_pt)
        if sum(gap for _, gap in closer) >= sum(gap for _, gap in gaps) - 1e-12:
            break  # the rows' spacing fills the room: smaller fonts would only leave it emptier
        font_scale, gaps = smaller, closer
    y = top
    for row, (note_gap, row_gap) in zip(rows, gaps):
        label, value = row[0], row[1]
        big = label in big_labels
        size = (FONT_SIZE + (6 if big else 2)) * font_scale
        family = "DejaVu Sans Mono" if big else None
        weight = "bold" if big else "normal"
        ax.text(0.02, y, label, fontsize=size - (2 if big else 0), color="0.35", transform=ax.transAxes, va="top")
        value, value_size = fitted_value(value, size, room_pt, family=family, weight=weight)
        ax.text(
            VALUE_X,
            y,
            value,
            fontsize=value_size,
            weight=weight,
            transform=ax.transAxes,
            va="top",
            family=family,
        )
        if len(row) > 2 and row[2]:
            ax.text(
                VALUE_X,
                y - note_gap,
                row[2],
                fontsize=fitted_size(row[2], FONT_SIZE * font_scale, room_pt),
                color="0.35",
                transform=ax.transAxes,
                va="top",
            )
        y -= row_gap
    ax.text(0.02, 0.0, footnote, fontsize=FONT_SIZE - 2, color="0.45", transform=ax.transAxes, va="bottom")
