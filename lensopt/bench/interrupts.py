"""Ctrl-C in a campaign that drives a Dask cluster: noted as well as raised, so that a
KeyboardInterrupt swallowed on its way (inside Dask's start-up, or raised in a finalizer, which
Python prints and drops) is raised again at the campaign's next check
(:mod:`lensopt.bench.runner`)."""

from __future__ import annotations

import contextlib
import logging
import multiprocessing
import os
import shlex
import signal
import sys
import tempfile
import threading
from pathlib import Path


@contextlib.contextmanager
def noting_interrupts(received: list[int]):
    """Ctrl-C as usual (a KeyboardInterrupt), its signal also noted in ``received``: a Ctrl-C while
    Dask starts a local cluster was raised inside Dask's start-up, or inside a finalizer, and lost
    there under load (the campaign ran to its end, exit 0); noted, the caller raises it again at its
    next check. In the main thread only (where Python delivers signals)."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    before = signal.getsignal(signal.SIGINT)

    if before == signal.SIG_IGN:  # ignored by whoever started us: stays ignored
        yield
        return

    def note(signum, frame):
        received.append(signum)
        if callable(before):
            before(signum, frame)  # Python's default handler raises KeyboardInterrupt
        raise KeyboardInterrupt

    signal.signal(signal.SIGINT, note)
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, before)


def raise_if_interrupted(interrupted: list[int]) -> None:
    """Raise the KeyboardInterrupt of a Ctrl-C noted by :func:`noting_interrupts` that something
    swallowed (Dask's start-up, a finalizer)."""
    if interrupted:
        raise KeyboardInterrupt


@contextlib.contextmanager
def children_ignoring_interrupts():
    """The Python processes ``multiprocessing`` spawns meanwhile (a local Dask cluster's workers) start
    with Ctrl-C ignored, from their first instruction: the terminal sends Ctrl-C to every process of
    its group, and a worker still importing (before its preload, :mod:`lensopt.bench.worker_start`,
    could ignore it) died of it with a traceback of its imports — dozens of lines under the
    campaign's one. They are spawned through a two-line shell script that ignores SIGINT and then runs
    this Python (an ignored signal stays ignored across ``exec``, and Python then installs no
    KeyboardInterrupt handler); this process keeps its own Ctrl-C throughout. POSIX only; where the
    script cannot be run (a ``noexec`` temporary directory) the workers start as before."""
    if os.name != "posix" or not Path("/bin/sh").exists():
        yield
        return
    spawn = multiprocessing.get_context("spawn")
    before = multiprocessing.spawn.get_executable()
    with tempfile.TemporaryDirectory(prefix="lensopt-workers-") as folder:
        script = Path(folder) / "python"
        script.write_text(f"#!/bin/sh\ntrap '' INT\nexec {shlex.quote(os.fsdecode(before or sys.executable))} \"$@\"\n")
        script.chmod(0o700)
        if not os.access(script, os.X_OK):
            yield
            return
        spawn.set_executable(str(script))
        try:
            yield
        finally:
            spawn.set_executable(before)


class _NannyNotStarted(logging.Filter):
    """Drops asyncio's "Task exception was never retrieved" of a Dask nanny whose start a Ctrl-C cut
    short (``RuntimeError: Nanny failed to start``): its cluster is closed, the campaign says it
    was interrupted."""

    def filter(self, record: logging.LogRecord) -> bool:
        error = record.exc_info[1] if record.exc_info else None
        return not (isinstance(error, RuntimeError) and "failed to start" in str(error))


_NANNY_NOT_STARTED = _NannyNotStarted()


def close_unstarted(clusters) -> None:
    """Close Dask clusters a Ctrl-C interrupted as they started, without the tracebacks their
    half-started workers leave (Dask's own close at exit printed one of an assertion on a worker
    still starting)."""
    logging.getLogger("asyncio").addFilter(_NANNY_NOT_STARTED)
    for cluster in clusters:
        with contextlib.suppress(Exception):
            cluster.close(timeout=10)
