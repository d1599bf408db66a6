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

Page 1 is laid out by :mod:`lensopt.dashboard.record_page` from the words
:func:`lensopt.dashboard.prescription_text.build_record` builds (a frozen ``PrescriptionRecord``
that tests read); pages 2 and 3 are drawn here. Matplotlib's object API and ``backend_pdf`` only:
no Qt, no pyplot. The file is written to a private temporary file (mode 0600: patient data) and
renamed into place.
"""

from __future__ import annotations

import warnings
from collections.abc import Callable
from pathlib import Path

import matplotlib
import numpy as np
from matplotlib.backends.backend_pdf import PdfPages
from matplotlib.figure import Figure
from matplotlib.ticker import MaxNLocator

from lensopt import __version__
from lensopt.dashboard.drawing import (
    EYE_NAME_STYLE,
    FONT_SIZE,
    MODEL_COLOR,
    draw_undone,
    fitted_title,
    number_each_eye,
    undone_label,
)
from lensopt.dashboard.fonts import figure_fonts, missing_glyphs_note
from lensopt.dashboard.model import followed_from_store
from lensopt.dashboard.panels import EYE_LABEL_SHARE, draw_notice, draw_panel
from lensopt.dashboard.prescription_panels import draw_astigmatism_plane, draw_defocus_curve
from lensopt.dashboard.prescription_text import (
    build_record,
    session_results,
)
from lensopt.dashboard.record_page import A4_PORTRAIT_IN, draw_record_page
from lensopt.dashboard.report import PAGE_SIZE_IN, build_report_figure
from lensopt.dashboard.series import answer_numbers
from lensopt.errors import LensoptError
from lensopt.modes.letters import is_prescription
from lensopt.private_files import private_output
from lensopt.refraction.lens import Lens, power_vector_arrays
from lensopt.store.claim import session_status
from lensopt.store.records import LETTERS_KIND
from lensopt.store.verdict import stored_withheld_reason

#: Colours of M, J0 and J45 on the lens path (not the history's green and red of right and wrong).
POWER_VECTOR_COLORS = {"M": MODEL_COLOR, "J0": "#ff7f00", "J45": "#6a3d9a"}
#: How far apart (a share of the space between two results' columns) a result's M, J0 and J45 are
#: drawn, M left of its column, J45 right: their intervals side by side, each seen.
DODGE_SHARE = 0.25


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
    above their trials, numbered as the console numbers them: by the answers kept) with an answer the
    clinician undid (``void``) as an open marker off it at the trial of the answer that replaced it,
    and each stored prescription's power vector with its 95 % intervals after the last trial (M, J0
    and J45 side by side, :data:`DODGE_SHARE`, named in the legend); a result
    flagged in ``provisional`` (one flag per result: short of the target confidence) open, in grey,
    and named "provisional" (it is no prescription)."""
    provisional = list(provisional) + [False] * (len(results) - len(provisional))
    ax = fig.add_subplot(1, 1, 1)
    void = np.array([bool(getattr(r, "void", False)) for r in records], dtype=bool)  # answers undone (schema 6)
    eyes = np.array([getattr(r, "eye", None) or "" for r in records], dtype=object)  # OD, OS (schema 7) or ""
    # the console's trial numbers (the answers kept; an undone one at the answer that replaced it), not the rows
    indices = [int(n) for n in answer_numbers(eyes, void, per_eye=False)]
    m_d, j0_d, j45_d = power_vector_arrays(
        [r.sphere_d for r in records], [r.cylinder_d for r in records], [r.axis_deg or 180.0 for r in records]
    )
    colors = POWER_VECTOR_COLORS
    series = (
        ("M", "m_d", m_d, colors["M"]),
        ("J0", "j0_d", j0_d, colors["J0"]),
        ("J45", "j45_d", j45_d, colors["J45"]),
    )
    last = max(indices) if indices else 0
    step = max(1.5, 0.05 * last)  # between the prescriptions' columns (one per eye), in trials
    end = last + step  # the first prescription's column, right of the last trial
    for k, result in enumerate(results):
        lens = Lens(result.sphere_d, result.cylinder_d, result.axis_deg if result.axis_deg is not None else 180.0)
        rx_values = dict(
            zip(("m_d", "j0_d", "j45_d"), power_vector_arrays(lens.sphere_d, lens.cylinder_d, lens.axis_deg))
        )
        x = end + step * k
        for j, (name, key, _, color) in enumerate(series):
            low, high = result.intervals.get(key, (rx_values[key], rx_values[key]))
            value = float(rx_values[key])
            ax.errorbar(
                [x + (j - 1) * DODGE_SHARE * step],  # M, J0, J45 side by side: their bars overlapped
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
                label=f"{name} of the result, 95 % interval" if k == 0 else None,
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
            draw_undone(ax, index[void], values[void], color=color, zorder=2)
    if void.any():
        draw_undone(ax, [], [], label=undone_label(int(void.sum())))
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
                **EYE_NAME_STYLE,
            )
    # right of the last trial, each prescription's column (without one the axis ended a trial short of it)
    ax.set_xlim(0.5, end + step * (len(results) - 1) + 0.75 * step if results else last + 0.5)
    ax.xaxis.set_major_locator(TrialTicks(last))  # the axis runs on to the prescriptions: no trials there
    ax.set_xlabel("trial", fontsize=FONT_SIZE)
    number_each_eye(ax, eyes, void)  # both eyes: OS's trials from 1, as the console counts them
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
    if not info.n_answers:  # none, or only answers the clinician undid
        return None, f"session {info.session_id} has no answered trial: no curves to draw"
    try:
        return followed_from_store(store, info.session_id), ""
    except LensoptError as exc:
        return None, str(exc)


#: Where a later page's title starts (figure fraction) and the share of the page's width it may fill.
PAGE_TITLE_X = 0.02
PAGE_TITLE_ROOM = 0.97 - PAGE_TITLE_X


def page_title(info, what: str, page: int, n_pages: int, page_width_in: float) -> tuple[str, float]:
    """A later page's title, ``Session 7 (P001): the curves — page 2 of 3``, and its font size: one
    line when it fits the page's width, else broken after the participant onto a second line, then
    set smaller if a line is still too wide (a long participant name ran off the page's edge)."""
    who = f"Session {info.session_id} ({info.participant}): "
    return fitted_title(
        f"{who}{what} — page {page} of {n_pages}", FONT_SIZE + 3, PAGE_TITLE_ROOM * page_width_in * 72.0, who
    )


def draw_curves_page(store, info, model, why: str, n_pages: int) -> Figure:
    """Page 2: what the dashboard draws for the session (``model``: its followed model, None and
    ``why`` for a session it cannot show). A full-prescription session: its history panel and the
    lens path (A4 portrait); any other: the dashboard report's four panels (A4 landscape); a
    session the dashboard cannot show: a notice saying why."""
    prescription = info.kind == LETTERS_KIND and is_prescription(info.optimizer_settings)
    title, size = page_title(info, "the curves", 2, n_pages, A4_PORTRAIT_IN[0])
    if model is None:
        fig = Figure(figsize=A4_PORTRAIT_IN, layout="constrained")
        draw_notice(fig, title, why)
        return fig
    snap = model.snapshot()
    if not prescription:
        return build_report_figure(snap)
    fig = Figure(figsize=A4_PORTRAIT_IN, layout="constrained")
    fig.suptitle(title, fontsize=size, x=PAGE_TITLE_X, ha="left")
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
    title, size = page_title(info, "each eye's model", n_pages, n_pages, PAGE_SIZE_IN[0])
    fig.suptitle(title, fontsize=size, x=PAGE_TITLE_X, ha="left")
    rows = np.asarray(fig.subfigures(max(2, len(views)), 1)).ravel()
    for row, view in zip(rows, views):
        plane, curve = np.asarray(row.subfigures(1, 2)).ravel()
        draw_astigmatism_plane(plane, view)
        draw_defocus_curve(curve, view, letter_bounds_logmar)
    return fig


def write_prescription_record(
    store, session_id: int, path, printed_at: float | None = None, warn: Callable[[str], None] | None = None
) -> Path:
    """Write session ``session_id``'s prescription record (two A4 pages; three for a full
    prescription with answers: each eye's model; three for a two-parameter session of both eyes:
    each eye's curves) from ``store`` (a
    ``SessionStore``) to the PDF ``path``, readable by its owner only (0600); return the path.
    Its text falls back to an installed font for a script DejaVu Sans lacks (a participant's name in
    Chinese: :mod:`lensopt.dashboard.fonts`); characters no font has are said once to ``warn``
    (default: a ``UserWarning``).

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
    with figure_fonts() as missing:
        _write_pages(store, session_id, path, printed_at)
    note = missing_glyphs_note(missing)
    if note:
        (warn or warnings.warn)(note)
    return path


def _write_pages(store, session_id: int, path: Path, printed_at: float | None) -> None:
    """The pages of :func:`write_prescription_record`, drawn and written to ``path``."""
    info = store.session(session_id)
    status = session_status(store.path, session_id, info.status)  # interrupted, where no program runs it
    model, why = _followed(store, info)
    views = model.eye_views() if model is not None else ()
    # a two-parameter session of both eyes: each eye's curves as they stood at its end, a page each,
    # as the dashboard's report draws them
    eye_pages = model.eye_pages() if model is not None and not views else ()
    n_pages = 3 if views else 1 + max(len(eye_pages), 1)
    record_page = draw_record_page(
        build_record(info, printed_at, status, store.trials(session_id), store.path), n_pages
    )
    if len(eye_pages) > 1:
        pages = [record_page, *(build_report_figure(snap, eye) for eye, snap in eye_pages)]
    else:
        pages = [record_page, draw_curves_page(store, info, model, why, n_pages)]
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
