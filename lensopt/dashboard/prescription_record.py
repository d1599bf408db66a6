"""The printable prescription record: an A4 PDF a clinician signs (issue 17, "The record").

Page 1 is the record: who and which session, when, the prescription of each eye in clinical
notation (``-1.25 / -0.75 x 170``) with its 95 % credible intervals of sphere, cylinder, axis, M,
J0 and J45, the predicted acuity (logMAR and Snellen), the trials and why the session stopped, the
confidence in plain words, the starting refraction, the software versions and a signature line. A
session without a stored prescription (a two-parameter search, a duel or ranking session, an
unfinished session) gets a page that says so and why, never a best lens passed off as one. Nor is
an eye whose confidence fell short of the session's target (the closing console's "not enough
answers to prescribe"): in place of its lens, "No prescription: not enough answers (confidence 0.11
< 0.95 after 8 letters)" in red, and its lens small and grey as a provisional estimate, not for
prescribing; a page with no eye to prescribe has no signature line. A session not finished (still
running, interrupted — its program killed or crashed, :func:`lensopt.store.claim.session_status` —
or stopped before its end) is marked so in red under the session's rows.
Page 2 holds the curves the dashboard draws for the session (:mod:`lensopt.dashboard.panels`):
for a full-prescription session its history and the lens tested on every trial in power vectors,
otherwise the dashboard report's four panels (:func:`lensopt.dashboard.report.build_report_figure`).
A full-prescription session with answers gets a page 3: each eye's model, the astigmatism plane and
the defocus curve the dashboard draws (:mod:`lensopt.dashboard.prescription_panels`), one row per eye.

The words of page 1 are built first (:func:`lensopt.dashboard.prescription_text.build_record`, a
frozen ``PrescriptionRecord`` that tests read), then drawn here. Matplotlib's object API and
``backend_pdf`` only: no Qt, no pyplot. The file is written to a private temporary file (mode 0600: patient data) and renamed into place.
"""

from __future__ import annotations

from pathlib import Path

import matplotlib
import numpy as np
from matplotlib.backends.backend_pdf import PdfPages
from matplotlib.figure import Figure
from matplotlib.lines import Line2D
from matplotlib.ticker import MaxNLocator

from lensopt import __version__
from lensopt.dashboard.drawing import FONT_SIZE, MODEL_COLOR, fitted_size
from lensopt.dashboard.model import followed_from_store
from lensopt.dashboard.panels import EYE_LABEL_SHARE, draw_notice, draw_panel
from lensopt.dashboard.prescription_panels import draw_astigmatism_plane, draw_defocus_curve
from lensopt.dashboard.prescription_text import (
    EyeRecord,
    PrescriptionRecord,
    build_record,
    session_results,
    wrapped,
)
from lensopt.dashboard.report import PAGE_SIZE_IN, build_report_figure
from lensopt.errors import LensoptError
from lensopt.modes.letters import is_prescription
from lensopt.private_files import private_output
from lensopt.refraction.lens import Lens, power_vector_arrays
from lensopt.store.claim import session_status
from lensopt.store.records import LETTERS_KIND
from lensopt.store.verdict import NO_AXIS_REASON, stored_withheld_reason

#: Page size in inches: A4 portrait (the record, the full prescription's curves; the dashboard
#: report's four panels keep their own A4 landscape).
A4_PORTRAIT_IN = (8.27, 11.69)
#: Left and right margins of page 1 (inches).
MARGIN_IN = 0.75


#: Where page 1's values start (inches from the left edge), the width of one eye's column, and
#: where an interval starts within it (one eye; two eyes share the width).
VALUE_X_IN = MARGIN_IN + 1.6
EYE_COLUMN_IN = 2.65
INTERVAL_OFFSET_IN = 0.95
#: The font of numbers (signs and decimals aligned) and the grey of labels.
MONO = "DejaVu Sans Mono"
GREY = "0.35"
#: The red of "no prescription" and "not finished".
ALERT = "#b2182b"
#: Colours of M, J0 and J45 on the lens path (not the history's green and red of right and wrong).
POWER_VECTOR_COLORS = {"M": MODEL_COLOR, "J0": "#ff7f00", "J45": "#6a3d9a"}


class _Page:
    """Text placed from the top of a portrait page in inches (``y_in`` moves down as rows are added)."""

    def __init__(self, fig: Figure):
        self.fig = fig
        self.width_in, self.height_in = fig.get_size_inches()
        self.y_in = 0.0

    def text(self, x_in: float, text: str, size: float = FONT_SIZE + 1, **kwargs) -> None:
        kwargs.setdefault("va", "top")
        self.fig.text(x_in / self.width_in, 1.0 - self.y_in / self.height_in, text, fontsize=size, **kwargs)

    def rule(self, gap_in: float = 0.12, x_in: tuple | None = None, color: str = "0.6") -> None:
        low, high = x_in or (MARGIN_IN, self.width_in - MARGIN_IN)
        y = 1.0 - (self.y_in + gap_in) / self.height_in
        self.fig.add_artist(
            Line2D(
                [low / self.width_in, high / self.width_in], [y, y], transform=self.fig.transFigure, color=color, lw=0.8
            )
        )

    def down(self, step_in: float) -> None:
        self.y_in += step_in


def lines_within(text: str, size: float, room_pt: float) -> list[str]:
    """``text`` broken between words into lines at most ``room_pt`` wide in the font of ``size``
    points (measured as drawn; a single word wider than that keeps a line of its own)."""
    lines: list[str] = []
    for word in text.split(" "):
        joined = f"{lines[-1]} {word}" if lines else word
        if lines and fitted_size(joined, size, room_pt) < size:
            lines.append(word)
        else:
            lines[-1:] = [joined]
    return lines or [""]


def _labelled(page: _Page, label: str, lines: list[str], step_in: float = 0.24, size: float = FONT_SIZE + 1) -> None:
    page.text(MARGIN_IN, label, size=FONT_SIZE, color=GREY)
    for line in lines:
        page.text(VALUE_X_IN, line, size=size)
        page.down(step_in)


def draw_record_page(record: PrescriptionRecord, n_pages: int = 2) -> Figure:
    """Page 1 of ``n_pages``: the prescription record of :class:`PrescriptionRecord` ``record`` on A4 portrait."""
    fig = Figure(figsize=A4_PORTRAIT_IN)
    page = _Page(fig)
    right = page.width_in - MARGIN_IN
    page.down(0.5)
    page.text(MARGIN_IN, record.title, size=22, weight="bold")
    page.down(0.45)
    page.text(MARGIN_IN, record.method, size=FONT_SIZE, color=GREY)
    page.text(right, f"Session {record.session_id}", size=13, ha="right", weight="bold")
    page.rule(0.2)
    page.down(0.45)
    for label, value in record.session:  # a long value (the protocol, rule, seed, SIMULATED) on two lines
        lines = lines_within(value, FONT_SIZE + 1, (right - VALUE_X_IN) * 72.0)
        _labelled(page, label, lines, step_in=0.235)
    page.rule(0.0)
    if record.unfinished is not None:  # in red under the rule: the results may not be the session's last
        page.down(0.12)
        for line in wrapped(record.unfinished, 76):
            page.text(MARGIN_IN, line, size=FONT_SIZE, weight="bold", color=ALERT)
            page.down(0.2)
    page.down(0.3)
    if record.missing is not None:
        page.text(MARGIN_IN, "No prescription stored", size=20, weight="bold", color=ALERT)
        page.down(0.5)
        for line in wrapped(record.missing, 78):
            page.text(MARGIN_IN, line, size=FONT_SIZE + 2)
            page.down(0.27)
        page.down(0.15)
        page.text(
            MARGIN_IN,
            "This page is not a prescription. Page 2 shows the session as the dashboard draws it.",
            size=FONT_SIZE + 1,
            color=GREY,
        )
        page.down(0.5)
        _labelled(page, "Starting refraction", [record.start])
        _labelled(page, "Software", wrapped(record.software, 62), step_in=0.22, size=FONT_SIZE)
        return fig
    _draw_eyes(page, record.eyes)
    page.down(0.1)
    _labelled(page, "Starting refraction", [record.start])
    _labelled(page, "Software", wrapped(record.software, 62), step_in=0.22, size=FONT_SIZE)
    if record.signable:
        _draw_signature(page, n_pages)
    else:
        _draw_not_a_prescription(page, any(eye.fixed_design for eye in record.eyes))
    return fig


def _draw_eyes(page: _Page, eyes: tuple[EyeRecord, ...]) -> None:
    """The large prescription line of each eye (or, for an eye short of the target confidence, "No
    prescription: not enough answers" — a fixed design's "Estimate, not a prescription" — in red and
    its lens small as a provisional estimate), the interval table (one column per eye, a withheld
    eye's in grey under "provisional" or "estimate"), acuity,
    trials, then each eye's stop reason and confidence in words."""
    # a two-parameter search without an axis has a sphere and a signed cylinder, in no convention
    no_axis = all(e.withheld == NO_AXIS_REASON for e in eyes)
    heading = (
        "Prescription (minus cylinder)"
        if any(e.prescribed for e in eyes)
        else ("Result (sphere and signed cylinder)" if no_axis else "Result (minus cylinder)")
    )
    page.text(MARGIN_IN, heading, size=FONT_SIZE + 3, weight="bold")
    page.down(0.58 if len(eyes) == 1 else 0.48)
    big = 28 if len(eyes) == 1 else 24
    for eye in eyes:
        page.text(MARGIN_IN, eye.eye, size=FONT_SIZE + 2, color=GREY, va="center")
        if eye.prescribed:
            page.text(VALUE_X_IN, eye.prescription, size=big, weight="bold", family=MONO, va="center")
            page.down(0.56 if len(eyes) == 1 else 0.46)
            continue
        assert eye.withheld is not None  # not prescribed: withheld says why
        page.text(VALUE_X_IN, eye.withheld_heading, size=FONT_SIZE + 6, weight="bold", color=ALERT, va="center")
        page.down(0.22)
        for line in wrapped(f"({eye.withheld})", 70):  # a long reason (no axis: what to do) on its own lines
            page.text(VALUE_X_IN, line, size=FONT_SIZE, color=ALERT)
            page.down(0.17)
        page.text(VALUE_X_IN, eye.provisional, size=FONT_SIZE - 1, color=GREY)
        page.down(0.32)
    page.down(0.0 if eyes[-1].prescribed else 0.07)  # clear of the small provisional line
    page.rule(-0.2, color="0.8")
    page.down(0.1)
    columns = [VALUE_X_IN + k * EYE_COLUMN_IN for k in range(len(eyes))]
    offset_in, interval_size = (INTERVAL_OFFSET_IN, FONT_SIZE - 0.5) if len(eyes) == 1 else (0.75, FONT_SIZE - 1)
    withheld = any(not eye.prescribed for eye in eyes)
    if len(eyes) > 1 or withheld:
        for x, eye in zip(columns, eyes):
            name = eye.eye if len(eyes) > 1 else ""
            if eye.prescribed:
                page.text(x, name, size=FONT_SIZE, weight="bold")
            else:
                short = name.split()[0] + ": " if name else ""
                label = "estimate" if eye.fixed_design else "provisional"
                page.text(x, f"{short}{label}, not for prescribing", size=FONT_SIZE - 1, color=ALERT)
        page.down(0.22)
    for x in columns:
        page.text(x, "value", size=FONT_SIZE - 1, color=GREY)
        page.text(x + offset_in, "95 % credible interval", size=FONT_SIZE - 1, color=GREY)
    page.down(0.24)
    ink = ["black" if eye.prescribed else GREY for eye in eyes]
    for k, (label, _, _) in enumerate(eyes[0].rows):
        page.text(MARGIN_IN, label, size=FONT_SIZE, color=GREY)
        for x, eye, color in zip(columns, eyes, ink):
            _, value, interval = eye.rows[k]
            page.text(x, value, size=FONT_SIZE + 0.5, family=MONO, color=color)
            page.text(x + offset_in, interval, size=interval_size, family=MONO, color=color)
        page.down(0.25 if len(eyes) == 1 else 0.23)
    page.down(0.1)
    page.text(MARGIN_IN, "Predicted acuity", size=FONT_SIZE, color=GREY)
    for x, eye, color in zip(columns, eyes, ink):
        page.text(x, eye.acuity, size=FONT_SIZE + 3, weight="bold", family=MONO, color=color)
        page.y_in += 0.3
        page.text(x, f"Snellen {eye.snellen}", size=FONT_SIZE + 1, color=color)
        if eye.not_tried_short:  # under the acuity it qualifies
            page.y_in += 0.25
            page.text(x, eye.not_tried_short, size=FONT_SIZE - 1, color=ALERT)
            page.y_in -= 0.25
        page.y_in -= 0.3
    page.down((0.6 if len(eyes) == 1 else 0.56) + (0.25 if any(e.not_tried for e in eyes) else 0.0))
    page.text(MARGIN_IN, "Trials", size=FONT_SIZE, color=GREY)
    for x, eye in zip(columns, eyes):
        page.text(x, eye.trials, size=FONT_SIZE + 1)
    page.down(0.32)
    for name, field in (("Stopped", "stop_reason"), ("Confidence", "confidence")):
        for eye in eyes:
            label = name if len(eyes) == 1 else f"{name} ({eye.eye.split()[0]})"
            weight = "bold" if field == "confidence" else "normal"
            page.text(MARGIN_IN, label, size=FONT_SIZE, color=GREY)
            for line in wrapped(getattr(eye, field), 54 if field == "confidence" else 62):
                page.text(VALUE_X_IN, line, size=FONT_SIZE + 1, weight=weight)
                page.down(0.23 if len(eyes) == 1 else 0.21)
            page.down(0.06 if len(eyes) == 1 else 0.03)


def _draw_not_a_prescription(page: _Page, fixed_design: bool = False) -> None:
    """In place of the signature block, on a page with no eye to prescribe: that it is not a
    prescription (``fixed_design``: the session ran its protocol's fixed number of trials)."""
    page.y_in = max(page.y_in + 0.1, page.height_in - 1.1)
    page.rule(0.0)
    page.down(0.25)
    if fixed_design:
        estimates = (
            "is nothing to sign. The protocol ran a fixed number of trials (no [stop]): the estimates above are",
            "its results, not for prescribing. Page 2 shows the session as the dashboard draws it.",
        )
    else:
        estimates = (
            "is nothing to sign. The estimates above are provisional, not for prescribing.",
            "Page 2 shows the session as the dashboard draws it.",
        )
    for line in (
        "This page is not a prescription: no eye's result may be prescribed (the reasons above), so there",
        *estimates,
    ):
        page.text(MARGIN_IN, line, size=FONT_SIZE, color=ALERT)
        page.down(0.2)


def _draw_signature(page: _Page, n_pages: int) -> None:
    """The signature block at the foot of the page, and the footnote."""
    page.y_in = page.height_in - 1.4
    page.rule(0.0)
    page.down(0.55)
    right = page.width_in - MARGIN_IN
    for label, (low, high) in (
        ("Clinician", (MARGIN_IN, MARGIN_IN + 2.6)),
        ("Signature", (MARGIN_IN + 2.9, MARGIN_IN + 5.2)),
        ("Date", (MARGIN_IN + 5.5, right)),
    ):
        page.rule(0.0, x_in=(low, high), color="0.2")
        page.y_in += 0.06
        page.text(low, label, size=FONT_SIZE - 1, color=GREY)
        page.y_in -= 0.06
    page.down(0.45)
    for line in (
        "Intervals: 95 % credible intervals of the best lens (posterior draws of the session's model). Predicted",
        f"acuity: the model's letter-acuity threshold through this lens. Lenses in 0.25 D and 1° steps.  Page 1 of {n_pages}",
    ):
        page.text(MARGIN_IN, line, size=FONT_SIZE - 2, color="0.45")
        page.down(0.17)


class TrialTicks(MaxNLocator):
    """Ticks at whole trials from 1 to ``last_trial``, however far the axis runs on (the lens path's
    runs past the last trial to the prescriptions' columns, where it ticked trials that never were)."""

    def __init__(self, last_trial: int):
        super().__init__(integer=True)
        self.last_trial = last_trial

    def tick_values(self, vmin, vmax):
        if self.last_trial < 1:
            return super().tick_values(vmin, vmax)
        ticks = np.asarray(super().tick_values(max(vmin, 1.0), min(vmax, float(self.last_trial))))
        return ticks[(ticks >= 1) & (ticks <= self.last_trial)]


def _eye_runs(eyes) -> list[tuple[str, int, int]]:
    """``(eye, first, stop)`` of each run of consecutive trials of one eye (``""``: none named)."""
    runs: list[tuple[str, int, int]] = []
    for k, eye in enumerate(eyes):
        if runs and runs[-1][0] == eye:
            runs[-1] = (eye, runs[-1][1], k + 1)
        else:
            runs.append((eye, k, k + 1))
    return runs


def _draw_lens_path(fig, records, results, provisional=()) -> None:
    """The lens tested on each trial as power vectors (M, J0, J45), one line per eye (OD, OS, named
    above their trials) with an answer the clinician undid (``void``) as an open marker off it, and
    each stored prescription's power vector with its 95 % intervals after the last trial; a result
    flagged in ``provisional`` (one flag per result: short of the target confidence) open, in grey,
    and named "provisional" (it is no prescription)."""
    provisional = list(provisional) + [False] * (len(results) - len(provisional))
    ax = fig.add_subplot(1, 1, 1)
    indices = [r.index for r in records]
    m_d, j0_d, j45_d = power_vector_arrays(
        [r.sphere_d for r in records], [r.cylinder_d for r in records], [r.axis_deg or 180.0 for r in records]
    )
    colors = POWER_VECTOR_COLORS
    series = (
        ("M", "m_d", m_d, colors["M"]),
        ("J0", "j0_d", j0_d, colors["J0"]),
        ("J45", "j45_d", j45_d, colors["J45"]),
    )
    last = indices[-1] if indices else 0
    step = max(1.5, 0.05 * last)  # between the prescriptions' columns (one per eye), in trials
    end = last + step  # the first prescription's column, right of the last trial
    for k, result in enumerate(results):
        lens = Lens(result.sphere_d, result.cylinder_d, result.axis_deg if result.axis_deg is not None else 180.0)
        rx_values = dict(
            zip(("m_d", "j0_d", "j45_d"), power_vector_arrays(lens.sphere_d, lens.cylinder_d, lens.axis_deg))
        )
        x = end + step * k
        for _, key, _, color in series:
            low, high = result.intervals.get(key, (rx_values[key], rx_values[key]))
            value = float(rx_values[key])
            ax.errorbar(
                [x],
                [value],
                yerr=[[max(value - low, 0.0)], [max(high - value, 0.0)]],
                fmt="D",
                color=color,
                capsize=4,
                markersize=6,
                markeredgecolor="black",
                markerfacecolor="white" if provisional[k] else color,
                alpha=0.6 if provisional[k] else 1.0,
                zorder=4,
            )
        eye = getattr(result, "eye", None)
        ax.annotate(
            eye or "Rx",
            (x, 1.0),
            xycoords=("data", "axes fraction"),
            ha="center",
            va="bottom",
            fontsize=FONT_SIZE - 1,
        )
    void = np.array([bool(getattr(r, "void", False)) for r in records], dtype=bool)  # answers undone (schema 6)
    eyes = np.array([getattr(r, "eye", None) or "" for r in records], dtype=object)  # OD, OS (schema 7) or ""
    index = np.asarray(indices)
    runs = _eye_runs(eyes)
    for name, _, values, color in series:
        values = np.asarray(values, dtype=float)
        for k, (_, first, stop) in enumerate(runs):  # one line per eye: OD's last lens is not joined to OS's first
            kept = ~void[first:stop]
            ax.plot(
                index[first:stop][kept],
                values[first:stop][kept],
                "-o",
                color=color,
                markersize=3,
                linewidth=1.0,
                label=f"{name} of the lens tested" if k == 0 else None,
            )
        if void.any():
            ax.plot(index[void], values[void], "o", color=color, markerfacecolor="none", markersize=5, linewidth=0)
    if void.any():
        ax.plot([], [], "o", color="0.4", markerfacecolor="none", label=f"answer undone (void, {void.sum()})")
    if any(provisional):
        ax.plot([], [], "D", color="0.4", markerfacecolor="white", label="provisional estimate, not for prescribing")
    for k, (eye, first, stop) in enumerate(runs):
        if k:
            ax.axvline(index[first] - 0.5, color="0.3", linestyle="--", linewidth=0.8)
        if eye and stop - first >= EYE_LABEL_SHARE * len(index):  # as the dashboard: no overprinted names
            middle = 0.5 * (index[first] + index[stop - 1])
            ax.annotate(
                eye,
                (middle, 0.97),
                xycoords=("data", "axes fraction"),
                ha="center",
                va="top",
                fontsize=FONT_SIZE,
                weight="bold",
            )
    # right of the last trial, each prescription's column (without one the axis ended a trial short of it)
    ax.set_xlim(0.5, end + step * (len(results) - 1) + 0.75 * step if results else last + 0.5)
    ax.xaxis.set_major_locator(TrialTicks(last))  # the axis runs on to the prescriptions: no trials there
    ax.set_xlabel("trial", fontsize=FONT_SIZE)
    ax.set_ylabel("power vector (D)", fontsize=FONT_SIZE)
    if not results:
        after = ": no prescription stored"
    elif all(provisional):
        after = " and the provisional estimates (right)"
    elif any(provisional):
        after = " and each eye's result, 95 % intervals (right)"
    else:
        after = " and the prescription with its 95 % intervals (right)"
    ax.set_title(
        "Lens tested on each trial (M, J0, J45)" + after,
        fontsize=FONT_SIZE + 1,
        loc="left",
        pad=16,
    )
    ax.grid(alpha=0.3)
    ax.legend(loc="upper center", bbox_to_anchor=(0.5, -0.1), ncols=3, fontsize=FONT_SIZE - 1, frameon=False)


def _followed(store, info):
    """The dashboard's model of the session told all its records, or None and why not."""
    if not info.n_trials:
        return None, f"session {info.session_id} has no answered trial: no curves to draw"
    try:
        return followed_from_store(store, info.session_id), ""
    except LensoptError as exc:
        return None, str(exc)


def draw_curves_page(store, info, model, why: str, n_pages: int) -> Figure:
    """Page 2: what the dashboard draws for the session (``model``: its followed model, None and
    ``why`` for a session it cannot show). A full-prescription session: its history panel and the
    lens path (A4 portrait); any other: the dashboard report's four panels (A4 landscape); a
    session the dashboard cannot show: a notice saying why."""
    prescription = info.kind == LETTERS_KIND and is_prescription(info.optimizer_settings)
    title = f"Session {info.session_id} ({info.participant}): the curves — page 2 of {n_pages}"
    if model is None:
        fig = Figure(figsize=A4_PORTRAIT_IN, layout="constrained")
        draw_notice(fig, title, why)
        return fig
    snap = model.snapshot()
    if not prescription:
        return build_report_figure(snap)
    fig = Figure(figsize=A4_PORTRAIT_IN, layout="constrained")
    fig.suptitle(title, fontsize=FONT_SIZE + 3, x=0.02, ha="left")
    top, bottom = np.asarray(fig.subfigures(2, 1))  # two rows: an array of two SubFigures
    draw_panel(top, "history", snap)
    results = session_results(info)
    provisional = [stored_withheld_reason(info, r) is not None for r in results]
    _draw_lens_path(bottom, store.trials(info.session_id), results, provisional)
    return fig


def draw_models_page(info, views, letter_bounds_logmar, n_pages: int = 3) -> Figure:
    """Page 3 of a full-prescription session: each eye's model (``views``, OD before OS: the
    dashboard's :class:`~lensopt.dashboard.snapshot.PrescriptionView`), one row per eye — the
    astigmatism plane at the reported M and the defocus curve at the reported J0, J45 — on A4
    landscape, the dashboard report's page (two rows, the second empty for one eye, so that an eye's
    panels keep the size they have there)."""
    fig = Figure(figsize=PAGE_SIZE_IN, layout="constrained")
    fig.suptitle(
        f"Session {info.session_id} ({info.participant}): each eye's model — page {n_pages} of {n_pages}",
        fontsize=FONT_SIZE + 3,
        x=0.02,
        ha="left",
    )
    rows = np.asarray(fig.subfigures(max(2, len(views)), 1)).ravel()
    for row, view in zip(rows, views):
        plane, curve = np.asarray(row.subfigures(1, 2)).ravel()
        draw_astigmatism_plane(plane, view)
        draw_defocus_curve(curve, view, letter_bounds_logmar)
    return fig


def _earlier_eye_ends(store, info) -> list[int]:
    """Of a two-parameter letter session of both eyes, the number of records at the end of each eye
    but the last (OD's, when OS followed): the dashboard's snapshot there shows that eye's model.
    Empty for any other session."""
    if info.kind != LETTERS_KIND or is_prescription(info.optimizer_settings) or getattr(info, "eye", None) != "OU":
        return []
    eyes = [getattr(r, "eye", None) for r in store.trials(info.session_id)]
    return [k + 1 for k in range(len(eyes) - 1) if eyes[k] != eyes[k + 1]]


def write_prescription_record(store, session_id: int, path, printed_at: float | None = None) -> Path:
    """Write session ``session_id``'s prescription record (two A4 pages; three for a full
    prescription with answers: each eye's model; three for a two-parameter session of both eyes:
    each eye's curves) from ``store`` (a
    ``SessionStore``) to the PDF ``path``, readable by its owner only (0600); return the path.

    Written to a temporary file beside ``path`` and renamed into place, so a failure leaves no
    half-written record; a folder that does not exist or cannot be written is a
    :class:`~lensopt.errors.LensoptError` naming it."""
    path = Path(path)
    if path.suffix.lower() != ".pdf":
        raise LensoptError(f"the prescription record {path} must end in .pdf")
    if path.is_dir():
        raise LensoptError(f"{path} is a folder; give a file name ending in .pdf")
    if not path.parent.is_dir():
        raise LensoptError(f"cannot write {path}: folder {path.parent} does not exist; create it first")
    info = store.session(session_id)
    status = session_status(store.path, session_id, info.status)  # interrupted, where no program runs it
    model, why = _followed(store, info)
    views = model.eye_views() if model is not None else ()
    earlier = _earlier_eye_ends(store, info) if model is not None and not views else []
    n_pages = 3 if views else 2 + len(earlier)
    pages = [
        draw_record_page(build_record(info, printed_at, status, store.trials(session_id), store.path), n_pages),
        # a two-parameter session of both eyes: each earlier eye's curves as they stood at its end
        *(build_report_figure(model.snapshot(n_end)) for n_end in earlier),
        draw_curves_page(store, info, model, why, n_pages),
    ]
    if views:
        pages.append(draw_models_page(info, views, model.snapshot().letter_bounds_logmar, n_pages))
    metadata = {
        "Title": f"Prescription record, session {info.session_id} ({info.participant})",
        "Creator": f"lensopt {__version__}",
    }
    with (
        private_output(path, "--out") as stream,
        matplotlib.rc_context({"pdf.fonttype": 42}),
        PdfPages(stream, metadata=metadata) as pdf,
    ):
        for fig in pages:
            pdf.savefig(fig)
    return path
