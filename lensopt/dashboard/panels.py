"""The dashboard's four panels, drawn with matplotlib's object API onto a given figure.

No Qt and no pyplot here: the window draws each panel on its own ``FigureCanvasQTAgg`` figure, the
report draws all four on the sub-figures of one page. Each ``draw_*`` function clears the figure
it is given (a ``Figure`` or a ``SubFigure``) and draws one :class:`DashboardSnapshot`. The panels
of a duel or ranking session (:mod:`lensopt.dashboard.comparison_panels`) fill the same four slots;
both draw with the helpers of :mod:`lensopt.dashboard.drawing` (``draw_surface``, ``draw_optimum``,
``draw_rows``, ...), and :func:`draw_panel` draws either kind.
"""

from __future__ import annotations

import numpy as np

from lensopt.dashboard.comparison_panels import COMPARISON_DRAW
from lensopt.dashboard.comparison_snapshot import NOUNS
from lensopt.dashboard.drawing import (
    BEST_COLOR,
    CORRECT_COLOR,
    EYE_NAME_STYLE,
    FONT_SIZE,
    MODEL_COLOR,
    SD_FOOTNOTE,
    WRONG_COLOR,
    draw_optimum,
    draw_rows,
    draw_surface,
    draw_tried,
    draw_undone,
    elapsed_text,
    finish_history_axes,
    finish_lens_axes,
    legend_below,
    measurable_range,
    message_panel,
    number_each_eye,
    shown_text,
    trial_range_text,
    undone_label,
)
from lensopt.dashboard.prescription_panels import draw_astigmatism_plane, draw_defocus_curve
from lensopt.dashboard.prescription_text import interval_summary_rows
from lensopt.dashboard.snapshot import WAITING_MESSAGE, DashboardSnapshot
from lensopt.dashboard.unfinished_text import continue_row
from lensopt.refraction.acuity_text import logmar_text, signed_logmar, snellen_text
from lensopt.refraction.lens import diopter_text
from lensopt.refraction.shown import untried_summary
from lensopt.stopping import confidence_text, threshold_text
from lensopt.store.records import LETTERS_KIND

#: Panel names, in reading order (left to right, top to bottom).
PANELS = ("lens_map", "psychometric", "history", "summary")
#: Colour map of predicted acuity: bright = small logMAR = sharp vision.
ACUITY_CMAP = "viridis_r"


def eye_suffix(snap: DashboardSnapshot) -> str:
    """`` — OS (left eye)``: the eye a model panel shows, in a session of both eyes; else ``""``."""
    eye = snap.model_eye if snap.best is not None else None
    return f" — {eye}" if eye else ""


def snellen_20(logmar: float) -> str:
    """The Snellen chart line in feet of an acuity: ``20/40``, or ``≈ 20/40`` for one off the line
    (:func:`lensopt.refraction.acuity_text.snellen_text`)."""
    return snellen_text(logmar)[1]


def draw_lens_map(fig, snap: DashboardSnapshot) -> None:
    """Predicted acuity over (S, C), the lenses tried by outcome, the optimum and its region (of a
    full prescription: over its astigmatism plane, :mod:`lensopt.dashboard.prescription_panels`)."""
    if snap.prescription_view is not None:
        draw_astigmatism_plane(fig, snap.prescription_view, snap.message)
        return
    fig.clear()
    title = "Lens map: predicted acuity" + eye_suffix(snap)
    if snap.lens_map is None or snap.best is None:
        message_panel(fig, title, snap.message or WAITING_MESSAGE)
        return
    ax = fig.add_subplot(1, 1, 1)
    lm, best, tr = snap.lens_map, snap.best, snap.model_trials
    acuity = lm.acuity_mean_logmar
    if np.isfinite(acuity).any():
        draw_surface(
            fig,
            ax,
            lm.sphere_d,
            lm.cylinder_d,
            acuity,
            ACUITY_CMAP,
            "predicted acuity (logMAR, lower is better)",
            value_range=measurable_range(acuity, snap.letter_bounds_logmar),
        )
    else:
        ax.text(
            0.5,
            0.5,
            "acuity not estimable yet\n(no trend with letter size so far)",
            ha="center",
            va="center",
            transform=ax.transAxes,
            fontsize=FONT_SIZE + 1,
            color="0.35",
        )
    draw_tried(ax, tr.sphere_d, tr.cylinder_d, tr.correct, "lens tried")
    draw_optimum(ax, best)
    finish_lens_axes(ax, snap, title)


def draw_psychometric(fig, snap: DashboardSnapshot) -> None:
    """P(correct) against letter size at the best lens, its 95% band, the guess rate, near trials (of
    a full prescription: its defocus curve, :mod:`lensopt.dashboard.prescription_panels`)."""
    if snap.prescription_view is not None:
        draw_defocus_curve(fig, snap.prescription_view, snap.letter_bounds_logmar, snap.message)
        return
    fig.clear()
    title = "Psychometric curve at the best lens" + eye_suffix(snap)
    if snap.psychometric is None or snap.best is None:
        message_panel(fig, title, snap.message or WAITING_MESSAGE)
        return
    ax = fig.add_subplot(1, 1, 1)
    pc, best = snap.psychometric, snap.best
    ax.fill_between(pc.letter_logmar, pc.p_low, pc.p_high, color=MODEL_COLOR, alpha=0.25, label="95% credible band")
    ax.plot(pc.letter_logmar, pc.p_mean, color=MODEL_COLOR, linewidth=2, label=f"model P(correct) = {pc.formula}")
    lapse = f", lapse λ {pc.lapse_rate:.2f}" if pc.floored else ""
    ax.axhline(pc.guess_rate, color="0.3", linestyle=":", label=f"guess rate γ {pc.guess_rate:.3f}{lapse}")
    if np.isfinite(pc.threshold_logmar):
        ax.axvline(
            pc.threshold_logmar,
            color=BEST_COLOR,
            linestyle="--",
            label=f"acuity {logmar_text(pc.threshold_logmar)} ({snellen_20(pc.threshold_logmar)})",
        )
    ok = pc.near_correct.astype(bool)
    n_near = len(ok)
    ax.scatter(
        pc.near_letter_logmar[ok],
        np.ones(ok.sum()),
        marker="o",
        s=26,
        color=CORRECT_COLOR,
        label=f"trials within {pc.near_radius_d:.1f} D: correct",
        zorder=3,
        clip_on=False,
    )
    ax.scatter(
        pc.near_letter_logmar[~ok],
        np.zeros((~ok).sum()),
        marker="x",
        s=26,
        color=WRONG_COLOR,
        label=f"trials within {pc.near_radius_d:.1f} D: wrong",
        zorder=3,
        clip_on=False,
    )
    ax.set_xlim(snap.letter_bounds_logmar)
    ax.set_ylim(-0.04, 1.04)
    ax.set_xlabel("letter size (logMAR)", fontsize=FONT_SIZE)
    ax.set_ylabel("P(correct)", fontsize=FONT_SIZE)
    ax.set_title(
        f"{title}\nS {diopter_text(best.sphere_d)} D, C {diopter_text(best.cylinder_d)} D · {n_near} trial{'' if n_near == 1 else 's'} within "
        f"{pc.near_radius_d:.1f} D of it",
        fontsize=FONT_SIZE + 1,
        loc="left",
    )
    ax.grid(alpha=0.3)
    legend_below(ax, ncols=3)  # inside, it covered the band and the answers near threshold


def draw_history(fig, snap: DashboardSnapshot) -> None:
    """Letter size and correctness per trial, and the estimated best acuity over trials, trials
    numbered as the console numbers them (:attr:`~lensopt.dashboard.series.TrialSeries.number`: the
    answers kept); an answer the clinician undid (kept, marked void) as the printed record draws it:
    an open marker off the letters' line at the trial of the answer that replaced it, neither right
    nor wrong (:func:`~lensopt.dashboard.drawing.draw_undone`)."""
    fig.clear()
    title = "History"
    if snap.trials.n == 0:
        message_panel(fig, title, snap.message or WAITING_MESSAGE)
        return
    ax = fig.add_subplot(1, 1, 1)
    tr, hist = snap.trials, snap.history
    assert tr.void is not None  # filled in by TrialSeries.__post_init__
    void = tr.void.astype(bool)
    ok = tr.correct.astype(bool) & ~void
    wrong = ~tr.correct.astype(bool) & ~void
    runs = tr.eye_runs()
    number = tr.number  # the console's trial numbers: the answers kept, not the rows stored
    for _, first, last in runs:  # one line per eye: OS's first letter does not follow OD's last
        kept = ~void[first : last + 1]
        x, y = number[first : last + 1][kept], tr.letter_logmar[first : last + 1][kept]
        ax.plot(x, y, color="0.75", linewidth=0.8, zorder=1)
    ax.scatter(
        number[ok],
        tr.letter_logmar[ok],
        marker="o",
        s=20,
        color=CORRECT_COLOR,
        label="letter shown, correct",
        zorder=3,
    )
    ax.scatter(
        number[wrong],
        tr.letter_logmar[wrong],
        marker="x",
        s=24,
        color=WRONG_COLOR,
        label="letter shown, wrong",
        zorder=3,
    )
    if void.any():  # after the answers kept, in the legend too
        # at the number of the answer that replaced it
        draw_undone(ax, number[void], tr.letter_logmar[void], label=undone_label(int(void.sum())))
    for k, (_, first, last) in enumerate(runs):  # each eye's estimate from its own model, not joined
        # history rows are counted in trials stored: the run of positions first..last holds rows first+1..last+1;
        # a row undone changed nothing the model was told (drawn at its answers kept)
        rows = np.asarray(hist.n_trials, dtype=int)
        inside = (rows >= first + 1) & (rows <= min(last + 1, tr.n))
        shown = inside & ~void[np.clip(rows - 1, 0, max(tr.n - 1, 0))]
        if not shown.any():
            continue
        n_trials, mean = tr.answers_after_rows(rows[shown]), hist.acuity_mean_logmar[shown]
        half = 1.959963984540054 * hist.acuity_sd_logmar[shown]
        ax.fill_between(
            n_trials, mean - half, mean + half, color=MODEL_COLOR, alpha=0.2, label="95% band" if k == 0 else None
        )
        label = "estimated best acuity" + (" (each eye's own)" if len(runs) > 1 else "")
        ax.plot(n_trials, mean, color=MODEL_COLOR, linewidth=2, label=label if k == 0 else None)
    finish_history_axes(ax, snap, tr, "trial", "letter size / acuity (logMAR, better up)", title)
    number_each_eye(ax, tr.eye, void)  # both eyes: OS's trials from 1, as the console counts them
    mark_eyes(ax, tr, runs)
    legend_below(ax, ncols=4)  # in the upper right it covered letters shown and the eyes' names


#: The smallest share of a session's trials whose eye :func:`mark_eyes` names above them.
EYE_LABEL_SHARE = 0.08
#: The band :func:`mark_eyes` adds at the top of a history's axes for the eyes' names, as a share of
#: its height (the letters and estimates stay below it).
EYE_BAND_SHARE = 0.1


def mark_eyes(ax, tr, runs) -> None:
    """Name each eye's trials above them (``OD``, ``OS``, in a band added at the top of the axes) and draw a dashed line where the session
    turns to the other eye; nothing when no trial names an eye. A run too short for its name (under
    :data:`EYE_LABEL_SHARE` of the trials: an eye given a few more trials on resuming) keeps its line,
    not its name, which would overprint its neighbours' ("ODOS OD") — except the last, the eye being
    searched, named from its first trial."""
    if not any(eye for eye, _, _ in runs):
        return
    number = tr.number  # the console's trial numbers, as the history draws them
    total = number[runs[-1][2]] - number[runs[0][1]] + 1
    # the names in a band added at the top of the axes, under the panel's title: above the axes, the
    # first eye's name overprinted the title ("HistoryOD") when its run was short
    bottom, top = ax.get_ylim()
    ax.set_ylim(bottom, top + EYE_BAND_SHARE * (top - bottom))
    for k, (eye, first, last) in enumerate(runs):
        if k:
            ax.axvline(number[first] - 0.5, color="0.3", linestyle="--", linewidth=1.0, zorder=2)
        live = k == len(runs) - 1  # the eye being searched: named from its first trial, right of the others
        if number[last] - number[first] + 1 < EYE_LABEL_SHARE * total and not live:
            continue
        middle = (number[first] + number[last]) / 2.0
        ax.text(
            middle,
            0.985,
            eye or "?",
            transform=ax.get_xaxis_transform(),
            ha="center",
            va="top",
            **EYE_NAME_STYLE,
        )


def eye_rows(eyes) -> list[tuple]:
    """Summary rows of each eye's result (:class:`~lensopt.dashboard.verdict.EyeEstimate`): ``(OD,
    lens or "not enough answers to prescribe", its confidence against the target and trials)``, and
    under an eye short of the target its lens, small, as a provisional estimate not for prescribing,
    with the printed record's warning when its acuity is predicted, not measured (not tried, or read
    through only with letters far larger). Under a lens shown as the eye's result (a prescription, a
    fixed design's estimate), what the closing console and the printed record say of it
    (:func:`eye_detail_rows`)."""
    rows: list[tuple] = []
    for e in eyes:
        rows.append((e.label, e.verdict(), e.evidence()))
        if e.provisional():
            rows.append(("", e.provisional()))
        details = eye_detail_rows(e) if e.n_trials and (e.prescribable or e.estimate_only) else []
        if details:  # the acuity's note says whether the lens was tried
            rows += details
        elif e.n_trials:  # under the lens it is of, the verdict's or the estimate's: the record's warning
            unmeasured = e.read_through is not None and not e.read_through.measured
            if e.untried_d is not None or unmeasured:  # not tried, or read through only with large letters
                rows.append(("", *acuity_note(e.untried_d, e.read_through)))
    return rows


def eye_detail_rows(e) -> list[tuple]:
    """Under a full prescription's lens (an :class:`~lensopt.dashboard.verdict.EyeEstimate` with its
    details): its predicted acuity with its Snellen line, and under it what the patient read through
    the lens (:meth:`lensopt.refraction.shown.ReadThrough.short`, the printed record's words) or that
    no lens tried was near it; then its 95 % intervals (:func:`interval_summary_rows`), the lens as written
    over its power vector; ``[]`` for an eye without them (a two-parameter search's)."""
    rows: list[tuple] = []
    if e.acuity_logmar is not None:
        acuity = f"{logmar_text(e.acuity_logmar)} · Snellen {' · '.join(snellen_text(e.acuity_logmar))}"
        rows.append(("Predicted acuity", acuity, *acuity_note(e.untried_d, e.read_through)))
    return rows + interval_summary_rows(e.intervals)


def summary_title(snap: DashboardSnapshot) -> str:
    """``Summary: best lens`` (``— OS (left eye)`` in a session of both eyes), with ``— not enough
    answers to prescribe`` (a study's: ``— estimate, not a prescription``) short of the session's
    target confidence; or of a full-prescription session ``Summary: prescription`` (``, each eye``),
    ``Summary: no prescription yet`` while no eye's lens may be prescribed (as the record's title)."""
    if snap.best is None and snap.eyes:
        if not any(e.prescribable for e in snap.eyes):
            return "Summary: no prescription yet"
        return "Summary: prescription" + (", each eye" if len(snap.eyes) > 1 else "")
    short = summary_shortfall(snap)  # as the closing console says it
    return f"Summary: best lens{eye_suffix(snap)}" + (f" — {short}" if short else "")


def summary_rows(snap: DashboardSnapshot) -> list[tuple]:
    """:func:`letter_summary_rows`, with under the session's row, for a session that stopped before
    its end, the command that continues it (the printed record's,
    :func:`~lensopt.dashboard.unfinished_text.continue_row`)."""
    return with_continue_row(snap.header, letter_summary_rows(snap))


def with_continue_row(header, rows: list[tuple]) -> list[tuple]:
    """``rows`` with :func:`~lensopt.dashboard.unfinished_text.continue_row` of ``header`` second,
    under the session's row, when the session stopped before its end."""
    row = continue_row(header)
    return rows if row is None else [*rows[:1], row, *rows[1:]]


def letter_summary_rows(snap: DashboardSnapshot) -> list[tuple]:
    """Rows of the summary panel: ``(label, value)`` or ``(label, value, note)`` (the note, small
    and grey, under the value). With the model's certainty (``snap.certainty``): the 95 % interval
    under sphere and cylinder, the confidence, and the stopping rule when the session has one. Each
    eye's result (``snap.eyes``: every eye of a full-prescription session, the other eye of a
    two-parameter session of both eyes) is labelled OD or OS (:func:`eye_rows`)."""
    h = snap.header
    if snap.best is None:
        return [
            ("Session", h.session_text),
            ("Rule", h.rule),
            ("Trials", shown_text(snap)),
            *(eye_rows(snap.eyes) if snap.eyes and snap.trials.n else [("", snap.message or WAITING_MESSAGE)]),
        ]
    b, tr, c = snap.best, snap.model_trials, snap.certainty
    acuity = (
        f"{signed_logmar(b.acuity_mean_logmar)} ± {b.acuity_sd_logmar:.2f} logMAR ({snellen_20(b.acuity_mean_logmar)})"
        if np.isfinite(b.acuity_mean_logmar)
        else "not estimable yet"
    )
    # the answers kept (those undone said apart, never counted: the model was not told them)
    correct = f"{int(tr.correct.sum())} correct" + (f" ({100.0 * tr.correct.mean():.0f}%)" if tr.n else "")
    trials = f"{shown_text(snap)}, {correct}"
    if tr.n != snap.n_answers:  # a session of both eyes: the live eye's answers, then the session's
        trials = f"{tr.last_eye} {tr.n}, {correct} · both eyes {shown_text(snap)}"
    sphere, cylinder = (
        f"{diopter_text(b.sphere_d)} ± {diopter_text(b.sphere_sd_d, signed=False)} D",
        f"{diopter_text(b.cylinder_d)} ± {diopter_text(b.cylinder_sd_d, signed=False)} D",
    )
    notation = snap.best_lens_notation
    # with the protocol's axis: the lens in clinical notation, above its sphere and signed cylinder
    lens = [("Lens", notation, f"S and C: sphere and cylinder along {snap.lens_axis_deg:03.0f}")] if notation else []
    short = snap.verdict.shortfall() if snap.verdict is not None else ""
    if notation and short:  # not a lens to prescribe: the verdict large, the lens small (as for the full prescription)
        lens = [("Lens", short, f"estimate {notation}, not for prescribing")]
    lens += h.accommodation_rows()  # the letters' lens is the clearest, not the most plus, unless the model says
    if c is None:
        return [
            ("Session", h.session_text),
            ("Rule", h.rule),
            *lens,
            ("Sphere", sphere),
            ("Cylinder", cylinder),
            ("Acuity", acuity, *acuity_row_note(snap)),
            ("Trials", trials),
            ("Time", elapsed_text(snap)),
            *eye_rows(snap.eyes),
        ]
    rows = [
        ("Session", f"{h.session_text} · {h.rule}"),
        *lens,
        ("Sphere", sphere, f"95% interval {interval_text(c.sphere_interval_d)}"),
        ("Cylinder", cylinder, f"95% interval {interval_text(c.cylinder_interval_d)}"),
        ("Acuity", acuity, *acuity_row_note(snap)),
        (
            "Confidence",
            confidence_text(c.confidence, c.stop_confidence),
            f"that this lens is within {c.tolerance_logmar:g} logMAR of the best",
        ),
    ]
    if c.has_stop_rule:
        assert (
            c.min_trials is not None and c.max_trials is not None and c.stop_confidence is not None
        )  # a rule comes whole
        trial_range = trial_range_text(c.min_trials, c.max_trials)
        if c.budget_raised(tr.n):  # resumed with --trials beyond its budget before resumes were stored
            trial_range += " (more on resuming)"
        check = f", {c.check_letters} letters through the lens" if c.check_letters else ""
        rows.append(
            ("Stops at", f"confidence {threshold_text(c.stop_confidence)}, {trial_range}{check}: {c.stop_state(tr.n)}")
        )
    return rows + [("Trials", trials), ("Time", elapsed_text(snap)), *eye_rows(snap.eyes)]


def untried_row_note(distance_d: float | None) -> tuple[str, ...]:
    """The note under a lens's acuity when the patient read through no lens within a phoropter step
    of it (:func:`lensopt.refraction.shown.untried_summary`), as a row's third element; ``()`` else."""
    note = untried_summary(distance_d)
    return () if note is None else (note,)


def acuity_row_note(snap) -> tuple[str, ...]:
    """The note under the predicted acuity: that the lens was not tried (:func:`untried_row_note`),
    or what the patient read through it (measured beside the prediction); ``()`` before any answer."""
    return acuity_note(snap.untried_d, snap.read_through)


def acuity_note(untried_d: float | None, reading) -> tuple[str, ...]:
    """:func:`acuity_row_note` of a lens ``untried_d`` from every lens tried (None: within a step)
    through which the patient read ``reading`` (a :class:`~lensopt.refraction.shown.ReadThrough`,
    the printed record's words: ``read 0 of 2 right through it, -0.09 to +0.01 logMAR``;
    read only with letters far larger than predicted: ``predicted, not measured: read through it
    only at +0.96 logMAR; check it on the chart``)."""
    untried = untried_row_note(untried_d)
    if untried or reading is None:
        return untried
    # what was read, in the record's words: "measured" had called one letter missed a measurement
    return (reading.short() if reading.measured else f"predicted, {reading.short()}",)


def interval_text(interval) -> str:
    """``"-1.75 to -1.00 D"``."""
    return f"{diopter_text(interval[0])} to {diopter_text(interval[1])} D"


def draw_summary(fig, snap: DashboardSnapshot) -> None:
    """Best lens (S, C) ± sd and 95 % intervals, predicted acuity, confidence and stopping rule,
    trials and time, as large text."""
    footnote = (
        SD_FOOTNOTE
        if snap.certainty is None
        else ("± posterior sd of the optimum's location · intervals and confidence from posterior draws")
    )
    if snap.best is None and snap.eyes:  # a full prescription: a footnote only for an eye held back
        held = [e for e in snap.eyes if e.n_trials and not e.prescribable]
        footnote = "an eye below the target confidence: not prescribed, as on the console" if held else ""
    # a lens not to prescribe is set small, as the full prescription's provisional estimate: only
    # the verdict ("not enough answers to prescribe") and the confidence large
    estimate = ("Sphere", "Cylinder", "Acuity") if not summary_shortfall(snap) else ()
    draw_rows(
        fig,
        summary_title(snap),
        summary_rows(snap),
        big_labels=("Lens", *estimate, "Confidence", *(e.label for e in snap.eyes if snap.best is None)),
        footnote=footnote,
    )


def summary_shortfall(snap: DashboardSnapshot) -> str:
    """Why a two-parameter session's lens is not to be prescribed (the closing console's words), or
    ``""``."""
    return snap.verdict.shortfall() if snap.best is not None and snap.verdict is not None else ""


#: Drawing function of each panel.
DRAW = {"lens_map": draw_lens_map, "psychometric": draw_psychometric, "history": draw_history, "summary": draw_summary}


def draw_panel(fig, name: str, snap) -> None:
    """Draw panel ``name`` (one of ``PANELS``) of ``snap`` on ``fig``: a letter snapshot's panels,
    or a duel or ranking snapshot's (:data:`lensopt.dashboard.comparison_panels.COMPARISON_DRAW`,
    same slots)."""
    if name not in DRAW:
        raise ValueError(f"unknown panel {name!r}; choose one of {', '.join(PANELS)}")
    if snap.kind == LETTERS_KIND:
        DRAW[name](fig, snap)
        return
    if snap.kind not in NOUNS:
        raise ValueError(
            f"no panels for a {snap.kind!r} session; this dashboard draws letters, {', '.join(NOUNS)} sessions"
        )
    COMPARISON_DRAW[name](fig, snap)


def draw_notice(fig, title: str, text: str) -> None:
    """A panel that only says ``text`` (a missing session, a newer database, ...)."""
    fig.clear()
    message_panel(fig, title, text)
