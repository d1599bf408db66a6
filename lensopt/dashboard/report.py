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
from lensopt.dashboard.comparison_snapshot import ComparisonSnapshot
from lensopt.dashboard.panels import PANELS, draw_panel
from lensopt.dashboard.prescription_text import clock_text
from lensopt.dashboard.snapshot import DashboardSnapshot
from lensopt.private_files import private_output
from lensopt.store.records import LETTERS_KIND

#: Page size in inches: A4 landscape.
PAGE_SIZE_IN = (11.69, 8.27)
#: Resolution of the PNG report (dots per inch).
PNG_DPI = 150
#: File suffixes the report can be written as.
REPORT_FORMATS = (".pdf", ".png")


def build_report_figure(snap: DashboardSnapshot | ComparisonSnapshot) -> Figure:
    """A4-landscape figure: a header line, then the four panels in a 2 × 2 grid."""
    fig = Figure(figsize=PAGE_SIZE_IN, layout="constrained")
    h = snap.header
    created = clock_text(h.created_at)  # with its time zone, as the printed record
    kind = "" if snap.kind == LETTERS_KIND else f"{snap.kind} "
    fig.suptitle(
        f"lensopt {kind}refraction report — session {h.session_id}, participant {h.who}, "
        f"{created}, {h.status}, rule {h.rule}, lensopt {__version__}",
        fontsize=12,
        x=0.01,
        ha="left",
    )
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
