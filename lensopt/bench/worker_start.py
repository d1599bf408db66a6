"""What each worker of a campaign's local Dask cluster does as it starts (a Dask worker preload:
:data:`lensopt.bench.runner.WORKER_PRELOAD`): ignore Ctrl-C, which the terminal sends to every
process of its group; the campaign's own process handles it and shuts the workers down."""

from __future__ import annotations

import signal
import threading


def dask_setup(worker) -> None:
    """Dask's preload hook, run in the worker process before it takes tasks (and again in a worker
    its nanny restarts)."""
    if threading.current_thread() is threading.main_thread():  # where Python lets a handler be set
        signal.signal(signal.SIGINT, signal.SIG_IGN)
