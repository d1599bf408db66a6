"""Large temporaries on warm pages: glibc's malloc thresholds, set once per process (Linux).

A decision of the acuity-law optimizer makes a few dozen numpy temporaries of 0.5–2 MB (the
~450,000-hypothesis log-posterior and the scoring histograms). glibc serves an allocation above its
mmap threshold (128 kB at start, raised only as large blocks are freed) with fresh pages from the
kernel and gives the memory back when it is freed; every such temporary then pays a page fault per
4 kB on first touch. Measured here (`lensopt bench decision-time --rule acuity-law`, one process):
about half of each decision's time. With the thresholds below, large blocks come from the heap and
stay there, and the same decisions take about half as long (docs/never-lost.md, "Decision time").

:func:`keep_large_blocks` sets ``M_MMAP_THRESHOLD`` to :data:`MMAP_THRESHOLD_BYTES` and
``M_TRIM_THRESHOLD`` to :data:`TRIM_THRESHOLD_BYTES` (both are needed: without the second, the heap
is trimmed after each decision and the faults come back). The process keeps up to that much freed
memory for reuse. It is called where the work happens — when a grid-Bayes optimizer is built —
and does nothing when the allocator is not glibc's (macOS, Windows, musl), when it already ran, or
when the user set ``MALLOC_MMAP_THRESHOLD_`` or ``MALLOC_TRIM_THRESHOLD_`` (glibc's own
environment variables) or ``LENSOPT_MALLOC=0``. Decisions are the same numbers either way.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import os
import sys
import threading

#: glibc's ``mallopt`` parameters (malloc.h).
M_TRIM_THRESHOLD = -1
M_MMAP_THRESHOLD = -3
#: Blocks below this size come from the heap (glibc's maximum for the dynamic threshold is 32 MiB).
MMAP_THRESHOLD_BYTES = 32 * 1024 * 1024
#: Freed heap memory kept for reuse before glibc returns it to the kernel.
TRIM_THRESHOLD_BYTES = 64 * 1024 * 1024
#: ``LENSOPT_MALLOC=0`` leaves the allocator alone.
ENV_VAR = "LENSOPT_MALLOC"
GLIBC_ENV_VARS = ("MALLOC_MMAP_THRESHOLD_", "MALLOC_TRIM_THRESHOLD_")

_lock = threading.Lock()
_state: dict[str, bool] = {}


def keep_large_blocks() -> bool:
    """Set glibc's mmap and trim thresholds once per process (module docstring); whether they are
    set (by this call or an earlier one)."""
    with _lock:
        if "set" not in _state:
            _state["set"] = _set_thresholds()
        return _state["set"]


def large_blocks_kept() -> bool:
    """Whether :func:`keep_large_blocks` has set the thresholds in this process (without calling it)."""
    return bool(_state.get("set"))


def _set_thresholds() -> bool:
    if sys.platform != "linux" or os.environ.get(ENV_VAR, "").strip() == "0":
        return False
    if any(name in os.environ for name in GLIBC_ENV_VARS):
        return False
    try:
        mallopt = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6").mallopt
    except (OSError, AttributeError):  # no libc to load, or one without mallopt (musl)
        return False
    mallopt.argtypes, mallopt.restype = (ctypes.c_int, ctypes.c_int), ctypes.c_int
    return bool(mallopt(M_MMAP_THRESHOLD, MMAP_THRESHOLD_BYTES)) and bool(
        mallopt(M_TRIM_THRESHOLD, TRIM_THRESHOLD_BYTES)
    )
