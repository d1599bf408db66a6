"""Shared test settings: Qt renders offscreen; PsychoPy needs an X display (xvfb-run)."""

import os

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
