"""Shared test settings: Qt renders offscreen; PsychoPy needs an X display (xvfb-run)."""

import os
from pathlib import Path

import pytest

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
for _name in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_name, "1")
os.environ.setdefault("MPLBACKEND", "Agg")

# Hypothesis (tests/cli/test_fuzz_cli.py): a quick default profile for the suite, and a longer one
# for a nightly-style run: HYPOTHESIS_PROFILE=nightly bash .ci/task test tests/cli/test_fuzz_cli.py
try:
    from hypothesis import settings as _hypothesis_settings
except ImportError:  # pragma: no cover - hypothesis is a test dependency (pyproject.toml [test])
    pass
else:
    # default: the same examples on every run (a strict xfail stays failing), no example database
    _hypothesis_settings.register_profile("default", max_examples=25, deadline=None, derandomize=True, database=None)
    _hypothesis_settings.register_profile("nightly", max_examples=1000, deadline=None, database=None)
    _hypothesis_settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "default"))


#: Letter-optimizer settings that states and sessions saved before issue 14 do not have (the answer
#: model, the stopping rule, the lens box's edge signs): the tests of old sessions strip these.
SETTINGS_AFTER_ISSUE_14 = (
    "likelihood",
    "lapse",
    "prior_mean",
    "stop",
    "min_information_bits",
    "edge_sign_noise",
    "edge_sign_points",
)

#: A real session database of schema 4 (written by ``lensopt run`` before schema 5), kept as its SQL
#: text with its pragmas (``tests/store/data/schema-4-letters.sql``): git holds no database file.
SCHEMA_4_SQL = Path(__file__).parent / "store" / "data" / "schema-4-letters.sql"


def _build_schema_4_database(path) -> Path:
    import sqlite3

    conn = sqlite3.connect(path)
    try:
        conn.executescript(SCHEMA_4_SQL.read_text(encoding="utf-8"))
    finally:
        conn.close()
    return Path(path)


@pytest.fixture
def make_schema_4_database():
    """``make(path)``: the schema-4 session database built at ``path`` from its SQL (rows, layout and
    pragmas exactly as the file ``lensopt run`` wrote)."""
    return _build_schema_4_database


def dark_span_px(frame_png: Path, dark_below: int = 128) -> int:
    """The height (px) spanned by a saved frame's dark pixels (grey level below ``dark_below``): the
    letter's height on a light background; 0 when nothing is dark."""
    import numpy as np
    from PIL import Image

    rows = np.flatnonzero((np.asarray(Image.open(frame_png).convert("L")) < dark_below).any(axis=1))
    return int(rows[-1] - rows[0] + 1) if rows.size else 0
