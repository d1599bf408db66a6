"""Shared test settings: Qt renders offscreen; PsychoPy needs an X display (xvfb-run)."""

import os

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
os.environ.setdefault("MPLBACKEND", "Agg")
