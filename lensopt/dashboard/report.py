"""One-page session report (PNG or PDF; a page per eye of a session of both eyes), drawn with the dashboard's panels.

Matplotlib's object API only (``Figure`` + ``FigureCanvasAgg`` / ``backend_pdf``), no pyplot, no
Qt: ``lensopt dashboard --report`` writes it without opening a window.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import numpy as np
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.backends.backend_pdf import PdfPages
from matplotlib.figure import Figure

from lensopt import __version__
from lensopt.dashboard.clock import clock_text
from lensopt.dashboard.comparison_snapshot import ComparisonSnapshot
from lensopt.dashboard.drawing import fitted_size
from lensopt.dashboard.panels import PANELS, draw_panel
from lensopt.dashboard.record_page import text_width_pt
from lensopt.dashboard.series import SIMULATED_BANNER
from lensopt.dashboard.snapshot import DashboardSnapshot
from lensopt.private_files import private_output
from lensopt.store.records import EYE_NAMES, LETTERS_KIND

#: Page size in inches: A4 landscape.
PAGE_SIZE_IN = (11.69, 8.27)
#: Resolution of the PNG report (dots per inch).
PNG_DPI = 150
#: File suffixes the report can be written as.
REPORT_FORMATS = (".pdf", ".png")
#: The title's font size (points), and where it starts and the share of the page's width it may fill.
TITLE_SIZE = 12.0
TITLE_X = 0.01
TITLE_ROOM = 0.98 - TITLE_X


def report_title(snap: DashboardSnapshot | ComparisonSnapshot, eye: str | None = None) -> tuple[str, float]:
    """The page's title and its font size: one line when it fits the page's width, else broken
    after one of its commas onto a second line (the break that leaves the wider line narrowest),
    then set smaller if a line is still too wide (a long participant or protocol name: the title of
    participant ``P-clinical-prescription-duel`` was cut at "rule muc-ald, lenso"). ``eye``: the
    eye whose model the page shows, in a session of both eyes (named after the session)."""
    h = snap.header
    kind = "" if snap.kind == LETTERS_KIND else f"{snap.kind} "
    parts = [
        f"lensopt {kind}refraction report — session {h.session_id}",
        *([f"model of {EYE_NAMES.get(eye, eye)}"] if eye else []),
        f"participant {h.who}",
        clock_text(h.created_at),  # with its time zone, as the printed record
        h.status,
        f"rule {h.rule}",
        f"lensopt {__version__}",
        *([SIMULATED_BANNER] if h.simulated else []),
    ]
    room_pt = TITLE_ROOM * PAGE_SIZE_IN[0] * 72.0
    title = ", ".join(parts)
    if fitted_size(title, TITLE_SIZE, room_pt) < TITLE_SIZE:
        breaks = [", ".join(parts[:k]) + ",\n" + ", ".join(parts[k:]) for k in range(1, len(parts))]
        title = min(breaks, key=lambda text: max(text_width_pt(line, TITLE_SIZE) for line in text.split("\n")))
    return title, min(fitted_size(line, TITLE_SIZE, room_pt) for line in title.split("\n"))


#: One page of a report: the eye whose model it shows (a session of both eyes; None otherwise) and
#: the snapshot it draws (:meth:`lensopt.dashboard.replay.FollowedSession.eye_pages`).
ReportPage = tuple[str | None, DashboardSnapshot | ComparisonSnapshot]


def draw_page(container, snap: DashboardSnapshot | ComparisonSnapshot, eye: str | None = None) -> None:
    """One page on ``container`` (a figure, or a subfigure of a taller one): its title, then the four
    panels in a 2 × 2 grid."""
    title, size = report_title(snap, eye)
    container.suptitle(title, fontsize=size, x=TITLE_X, ha="left")
    for sub, name in zip(np.asarray(container.subfigures(2, 2)).ravel(), PANELS):
        draw_panel(sub, name, snap)


def build_report_figure(snap: DashboardSnapshot | ComparisonSnapshot, eye: str | None = None) -> Figure:
    """A4-landscape figure: a header line, then the four panels in a 2 × 2 grid."""
    fig = Figure(figsize=PAGE_SIZE_IN, layout="constrained")
    draw_page(fig, snap, eye)
    return fig


def stacked_report_figure(pages: Sequence[ReportPage]) -> Figure:
    """The pages one under the other, each A4 landscape: a PNG report of a session of both eyes."""
    fig = Figure(figsize=(PAGE_SIZE_IN[0], PAGE_SIZE_IN[1] * len(pages)), layout="constrained")
    for sub, (eye, snap) in zip(np.asarray(fig.subfigures(len(pages), 1, squeeze=False)).ravel(), pages):
        draw_page(sub, snap, eye)
    return fig


def write_report(snap: DashboardSnapshot | ComparisonSnapshot | Sequence[ReportPage], path) -> Path:
    """Write the report of ``snap`` (a letter, duel or ranking session), or of its ``pages`` (each
    eye's of a session of both, :meth:`~lensopt.dashboard.replay.FollowedSession.eye_pages`), to
    ``path``: a ``.pdf`` with a page each, or a ``.png`` with the pages one under the other; return
    the path."""
    pages: list[ReportPage] = (
        [(None, snap)] if isinstance(snap, (DashboardSnapshot, ComparisonSnapshot)) else list(snap)
    )
    path = Path(path)
    suffix = path.suffix.lower()
    if suffix not in REPORT_FORMATS:
        raise ValueError(f"report file {path} must end in .pdf or .png")
    if not path.parent.is_dir():
        raise ValueError(f"cannot write the report: folder {path.parent} does not exist")
    first = pages[0][1]
    with private_output(path, "--report") as stream:  # readable by its owner only: it shows patient data
        if suffix == ".png":
            fig = build_report_figure(first, pages[0][0]) if len(pages) == 1 else stacked_report_figure(pages)
            FigureCanvasAgg(fig)
            fig.savefig(stream, format="png", dpi=PNG_DPI, facecolor="white")
        else:
            title = f"lensopt session {first.header.session_id} ({first.header.participant})"
            with PdfPages(stream, metadata={"Title": title, "Creator": f"lensopt {__version__}"}) as pdf:
                for eye, page in pages:
                    pdf.savefig(build_report_figure(page, eye))
    return path
