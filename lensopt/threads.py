"""One BLAS thread for the duration of a decision, whatever the import order.

The GP matrices of lensopt are small (n ≤ a few hundred). On a small machine, BLAS threads that
compete for the cores — two processes with two OpenBLAS threads each on two cores — make a
decision tens of times slower (issue 14, item 7: median 306 ms instead of 7.4 ms). Environment
variables such as ``OPENBLAS_NUM_THREADS`` are read only when the BLAS library is loaded, i.e.
when numpy is first imported, which in a PsychoPy script happens before lensopt is imported. So
the limit is applied *per call*, with threadpoolctl, where the work happens:

    from lensopt.threads import single_threaded

    class MyOptimizer:
        @single_threaded
        def ask(self): ...

or, around any block, ``with blas_single_thread(): ...``.

Setting: the environment variable ``LENSOPT_BLAS_THREADS`` (read on every call) is the number of
BLAS/OpenMP threads inside those calls: a non-negative integer, default 1; ``0`` leaves the
libraries' own setting alone (no limit).

How, and what it costs: ``threadpoolctl.threadpool_limits(1)`` scans every loaded shared library
on each call (about 1.2 ms here, more than a tenth of a 60 Hz frame). Instead a
``threadpoolctl.ThreadpoolController`` is cached, and each call only reads and sets the thread
counts of the BLAS and OpenMP libraries it found (a few microseconds). The cache is rebuilt when
``len(sys.modules)`` changed since the last scan: a native library is almost always loaded by
importing a Python module, so a library loaded later (a second BLAS, say) is limited from the
next call on. A library loaded without a Python import (``ctypes.CDLL``) is not seen until the
next import; call :func:`rescan` after loading one that way.

Nesting and threads: the limit is process-wide (so are the BLAS thread counts). A counter guarded
by a lock records how many limited calls are running, in any thread; the first to enter saves the
libraries' thread counts and sets the limit, the last to leave restores them. Nested calls (``ask``
calling ``best``) and calls from the Qt dashboard's worker thread while the main thread
decides are therefore fine; while any limited call runs, other BLAS work of the process also runs
with the limit. OpenMP defines its thread count per calling thread, so an OpenMP library (not used
by numpy or scipy's OpenBLAS) is limited in the thread that entered first.
"""

from __future__ import annotations

import contextlib
import functools
import os
import sys
import threading
from collections.abc import Callable, Iterator
from typing import Any, ParamSpec, TypeVar

ENV_VAR = "LENSOPT_BLAS_THREADS"
"""The environment variable: BLAS threads inside lensopt's decisions (default 1; 0 = no limit)."""

DEFAULT_BLAS_THREADS = 1

_USER_APIS = ("blas", "openmp")

_MARK = "__lensopt_single_threaded__"
"""The attribute :func:`single_threaded` sets on what it returns (read by :func:`is_single_threaded`)."""

P = ParamSpec("P")
R = TypeVar("R")

_lock = threading.RLock()
_depth = 0  # limited calls running, in all threads
_saved: dict[int, tuple[Any, int]] = {}  # id(lib controller) -> (lib controller, threads before)
_limit_in_effect: int | None = None
_libraries: list[Any] | None = None  # threadpoolctl LibController objects of the blas and openmp APIs
_modules_seen = -1  # len(sys.modules) at the last scan
_parsed: tuple[str | None, int] | None = None  # (raw value, parsed) of the environment variable


def blas_threads_setting() -> int:
    """The number of BLAS threads for lensopt's calls, from ``LENSOPT_BLAS_THREADS``: 0 = no limit.

    Raises ``ValueError`` (one line) when the variable is not a non-negative integer.
    """
    global _parsed
    raw = os.environ.get(ENV_VAR)
    cached = _parsed
    if cached is not None and cached[0] == raw:
        return cached[1]
    text = (raw or "").strip()
    if not text:
        value = DEFAULT_BLAS_THREADS
    else:
        try:
            value = int(text)
        except ValueError:
            value = -1
        if value < 0:
            raise ValueError(
                f"{ENV_VAR} must be a non-negative integer (the BLAS threads of a "
                f"decision; 0 = no limit; default {DEFAULT_BLAS_THREADS}), got {raw!r}"
            )
    _parsed = (raw, value)
    return value


def _scan() -> list[Any]:
    """The BLAS and OpenMP libraries loaded in this process (threadpoolctl's controllers)."""
    global _libraries, _modules_seen
    from threadpoolctl import ThreadpoolController

    if _libraries is None:
        # lensopt's numerical core needs both; loading them now means the first scan sees the
        # BLAS of numpy and of scipy, rather than the second one only from the next call on.
        import numpy  # noqa: F401

        with contextlib.suppress(ImportError):  # scipy is a dependency
            import scipy.linalg  # noqa: F401
    _modules_seen = len(sys.modules)
    controller = ThreadpoolController()
    _libraries = [lib for lib in controller.lib_controllers if lib.user_api in _USER_APIS]
    return _libraries


def rescan() -> None:
    """Find the loaded BLAS/OpenMP libraries again (after loading one without a Python import)."""
    with _lock:
        _scan()
        if _depth and _limit_in_effect is not None:
            _apply(_limit_in_effect)


def _apply(limit: int) -> None:
    """Set every known library to ``limit`` threads, saving the counts of those not yet saved."""
    for lib in _libraries or ():
        key = id(lib)
        if key not in _saved:
            before = lib.num_threads
            _saved[key] = (lib, before)
            if before != limit:
                lib.set_num_threads(limit)


def _enter() -> None:
    global _depth, _limit_in_effect
    limit = blas_threads_setting()  # may raise, before anything is changed
    with _lock:
        _depth += 1
        try:
            if limit and _depth == 1:
                if _libraries is None or len(sys.modules) != _modules_seen:
                    _scan()
                _limit_in_effect = limit
                _apply(limit)
            elif _limit_in_effect is not None and len(sys.modules) != _modules_seen:
                _scan()  # a library loaded during the outer call: limit it too
                _apply(_limit_in_effect)
        except BaseException:
            _exit()
            raise


def _exit() -> None:
    global _depth, _limit_in_effect
    with _lock:
        _depth -= 1
        if _depth == 0:
            saved = list(_saved.values())
            _saved.clear()
            _limit_in_effect = None
            for lib, before in saved:
                if lib.num_threads != before:
                    lib.set_num_threads(before)


@contextlib.contextmanager
def blas_single_thread() -> Iterator[None]:
    """Limit BLAS and OpenMP to ``LENSOPT_BLAS_THREADS`` threads (default 1) inside the block.

    Re-entrant and safe from several threads; the previous thread counts are restored when the
    last limited block of the process ends. A bad ``LENSOPT_BLAS_THREADS`` raises ``ValueError``.
    """
    _enter()
    try:
        yield
    finally:
        _exit()


def single_threaded(function: Callable[P, R]) -> Callable[P, R]:
    """Decorator: run ``function`` inside :func:`blas_single_thread`.

    Typed with ``ParamSpec``: a type checker sees the decorated function's (or method's) own
    parameters and return type."""

    @functools.wraps(function)
    def limited(*args: P.args, **kwargs: P.kwargs) -> R:
        _enter()
        try:
            return function(*args, **kwargs)
        finally:
            _exit()

    setattr(limited, _MARK, True)
    return limited


def is_single_threaded(function: object) -> bool:
    """Whether ``function`` (or a method) was decorated with :func:`single_threaded`."""
    return bool(getattr(function, _MARK, False))


def limit_in_effect() -> int | None:
    """The thread limit lensopt applies right now (``None`` outside limited calls or with 0)."""
    return _limit_in_effect


def blas_threads_now() -> list[dict[str, Any]]:
    """``threadpoolctl.threadpool_info()`` of the BLAS libraries: what is in effect at this moment."""
    from threadpoolctl import threadpool_info

    return [info for info in threadpool_info() if info.get("user_api") == "blas"]
