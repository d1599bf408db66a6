"""Shared test settings: Qt renders offscreen; PsychoPy needs an X display (xvfb-run)."""

import os

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
for _name in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_name, "1")
os.environ.setdefault("MPLBACKEND", "Agg")
