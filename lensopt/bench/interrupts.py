"""Ctrl-C in a campaign that drives a Dask cluster: noted as well as raised, so that a
KeyboardInterrupt swallowed on its way (inside Dask's start-up, or raised in a finalizer, which
Python prints and drops) is raised again at the campaign's next check
(:mod:`lensopt.bench.runner`)."""

from __future__ import annotations

import contextlib
import signal
import threading


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
