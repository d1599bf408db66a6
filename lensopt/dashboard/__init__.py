"""The clinician's dashboard: a Qt window that follows a session in the database.

Layers, each usable alone:

- :mod:`~lensopt.dashboard.snapshot`: the frozen :class:`DashboardSnapshot` the panels draw, with
  each eye's verdict (:mod:`~lensopt.dashboard.verdict`: how sure, and whether a prescription);
- :mod:`~lensopt.dashboard.model`: rebuilds the optimizer from stored trials and computes the
  snapshot (numpy/scipy only), and picks the model of each kind of session;
- :mod:`~lensopt.dashboard.posterior`: the lens grid and the location of the optimum, shared by
  every kind of session;
- :mod:`~lensopt.dashboard.replay`: following a stored session and replaying its first n trials,
  shared by every kind of session;
- :mod:`~lensopt.dashboard.comparison_snapshot`, :mod:`~lensopt.dashboard.comparison_model` and
  :mod:`~lensopt.dashboard.comparison_panels`: the same three layers for the sessions that compare
  lenses (duels: two lenses, rankings: three or four);
- :mod:`~lensopt.dashboard.panels`: matplotlib drawing of the four panels (no Qt, no pyplot), with the
  helpers of :mod:`~lensopt.dashboard.drawing` that the comparison panels share, and a full
  prescription's model panels (:mod:`~lensopt.dashboard.prescription_panels`: its astigmatism plane
  and defocus curve);
- :mod:`~lensopt.dashboard.report`: the one-page PNG/PDF report;
- :mod:`~lensopt.dashboard.worker` and :mod:`~lensopt.dashboard.window`: the PyQt5 follower
  thread and window (imported only when asked for, so ``import lensopt.dashboard`` needs no Qt and no
  matplotlib).
"""

from lensopt.dashboard.model import SessionModel, snapshot_from_store
from lensopt.dashboard.snapshot import DashboardSnapshot

__all__ = ["DashboardSnapshot", "DashboardWindow", "SessionModel", "snapshot_from_store", "write_report"]


def __getattr__(name):
    if name == "write_report":
        from lensopt.dashboard.report import write_report  # deferred: imports matplotlib

        return write_report
    if name == "DashboardWindow":
        from lensopt.dashboard.window import DashboardWindow  # deferred: imports PyQt5 and matplotlib

        return DashboardWindow
    raise AttributeError(f"module 'lensopt.dashboard' has no attribute {name!r}")
