"""One-page session report (PNG or PDF), drawn with the dashboard's panels.

Matplotlib's object API only (``Figure`` + ``FigureCanvasAgg`` / ``backend_pdf``), no pyplot, no
Qt: ``lensopt dashboard --report`` writes it without opening a window.
"""

from __future__ import annotations

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
from lensopt.store.records import LETTERS_KIND

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


def report_title(snap: DashboardSnapshot | ComparisonSnapshot) -> tuple[str, float]:
    """The page's title and its font size: one line when it fits the page's width, else broken
    after one of its commas onto a second line (the break that leaves the wider line narrowest),
    then set smaller if a line is still too wide (a long participant or protocol name: the title of
    participant ``P-clinical-prescription-duel`` was cut at "rule muc-ald, lenso")."""
    h = snap.header
    kind = "" if snap.kind == LETTERS_KIND else f"{snap.kind} "
    parts = [
        f"lensopt {kind}refraction report — session {h.session_id}",
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


def build_report_figure(snap: DashboardSnapshot | ComparisonSnapshot) -> Figure:
    """A4-landscape figure: a header line, then the four panels in a 2 × 2 grid."""
    fig = Figure(figsize=PAGE_SIZE_IN, layout="constrained")
    title, size = report_title(snap)
    fig.suptitle(title, fontsize=size, x=TITLE_X, ha="left")
    for sub, name in zip(np.asarray(fig.subfigures(2, 2)).ravel(), PANELS):
        draw_panel(sub, name, snap)
    return fig


def write_report(snap: DashboardSnapshot | ComparisonSnapshot, path) -> Path:
    """Write the one-page report of ``snap`` (a letter, duel or ranking session) to ``path``
    (``.pdf`` or ``.png``); return the path."""
    path = Path(path)
    suffix = path.suffix.lower()
    if suffix not in REPORT_FORMATS:
        raise ValueError(f"report file {path} must end in .pdf or .png")
    if not path.parent.is_dir():
        raise ValueError(f"cannot write the report: folder {path.parent} does not exist")
    fig = build_report_figure(snap)
    with private_output(path, "--report") as stream:  # readable by its owner only: it shows patient data
        if suffix == ".png":
            FigureCanvasAgg(fig)
            fig.savefig(stream, format="png", dpi=PNG_DPI, facecolor="white")
        else:
            title = f"lensopt session {snap.header.session_id} ({snap.header.participant})"
            with PdfPages(stream, metadata={"Title": title, "Creator": f"lensopt {__version__}"}) as pdf:
                pdf.savefig(fig)
    return path
