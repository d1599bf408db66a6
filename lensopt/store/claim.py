"""One program per session: a session being run is claimed, so that a second ``lensopt run --resume``
of it is refused before its window opens.

Two programs running one session would both show the patient its next trial; the second to store
its answer is refused (a trial is stored once), and its answer, kept in the session's rescue file,
then stood in the way of every later resume. The claim is an advisory lock (``fcntl.flock``) on the
file ``<database>.session-<id>.lock`` beside the database, holding the claiming program's process id:
the operating system lets it go when the program ends, however it ends (a crash, a kill), so a
claim is never left behind. A program that ends its claim removes the file while still holding it,
so files do not pile up beside the database (a killed program's stays until the session's resume
ends); a claim checks, once it holds the lock, that the file it locked is still the one of that
name, and starts again if it was removed meanwhile — else two programs could each lock a file of
that name (one removed, one new). Where ``fcntl`` is missing (Windows) sessions are not claimed.
:func:`lock_file` is that lock, for any file (``lensopt bench`` holds a campaign folder's with it),
and :func:`lock_holder` tells who holds one.

Whether a session is claimed is probed (:func:`is_claimed`) by taking a shared lock for an instant;
a claim that meets a probe tries again for up to :data:`CLAIM_RETRY_S`, so a ``lensopt sessions`` or
a dashboard looking at the session never makes a resume fail.

:func:`session_status` is the status a person is shown, everywhere one is (``lensopt sessions`` and
its ``--json``, the JSON export, the printed record, the dashboard): a session stored as ``running``
is ``running`` while a program claims it and :data:`INTERRUPTED` once none does.
"""

from __future__ import annotations

import contextlib
import errno
import os
import time
from collections.abc import Callable, Iterator
from pathlib import Path

from lensopt.errors import StoreError

try:
    import fcntl
except ImportError:  # pragma: no cover - Windows
    fcntl = None  # type: ignore[assignment]


#: The errors of a non-blocking ``flock`` that mean "another program holds it".
HELD_ERRNOS = (errno.EWOULDBLOCK, errno.EAGAIN, errno.EACCES)

#: Seconds a claim keeps trying a lock that is held before refusing: a probe (:func:`is_claimed`)
#: holds it for microseconds, a program running the session for as long as it runs.
CLAIM_RETRY_S = 1.0
#: Seconds between two tries.
CLAIM_RETRY_INTERVAL_S = 0.01

#: The status shown for a session stored as running that no program runs (killed, crashed: ``lensopt
#: run --resume N`` continues it). Never stored: it is the stored ``running`` read with the claim.
INTERRUPTED = "interrupted"

#: The status shown for a session stored as ``aborted``: it ended before its end (the pause screen's
#: quit, Ctrl-C, a SIGTERM, an error); ``lensopt run --resume N`` continues it. The run, the console and the record
#: say "stopped", so ``lensopt sessions``, the dashboard and the export's ``status_now`` say it too;
#: the store keeps ``aborted``, as every older database holds it.
STOPPED = "stopped"


def claim_path(db_path, session_id: int) -> Path:
    """The lock file of session ``session_id`` of the database ``db_path`` (the resolved path: the
    same database reached through a link has the same lock)."""
    return Path(f"{Path(db_path).expanduser().resolve()}.session-{session_id}.lock")


@contextlib.contextmanager
def claim_session(db_path, session_id: int) -> Iterator[None]:
    """Hold session ``session_id`` for this program while the block runs; a one-line
    :class:`~lensopt.errors.StoreError` if another program holds it (still held after
    :data:`CLAIM_RETRY_S`: a probe's instant lock is waited out)."""

    def refusal(holder: str) -> StoreError:
        return StoreError(
            f"session {session_id} is being run by another lensopt (process {holder}); finish or close that "
            "one first — two would show the patient the same trial"
        )

    with lock_file(claim_path(db_path, session_id), refusal):
        yield


@contextlib.contextmanager
def lock_file(path: Path, refusal: Callable[[str], Exception]) -> Iterator[None]:
    """Hold the exclusive advisory lock (``fcntl.flock``) of the file ``path`` — created, holding
    this program's process id — while the block runs, and remove the file at its end; raise
    ``refusal(holder)``, ``holder`` the process id the file names (``?`` if it names none), when
    another program holds it (still held after :data:`CLAIM_RETRY_S`: a probe's instant lock is
    waited out). The operating system lets the lock go however its program ends (a crash, a kill):
    the file a killed program leaves holds nothing back. Where no lock can be taken (no ``fcntl``,
    a folder this user cannot write, a file system without locks) the block runs without one."""
    if fcntl is None:  # pragma: no cover - Windows
        yield
        return
    fd = _locked_file(path, refusal)
    if fd is None:  # a folder this user cannot write, or a file system without locks: run unlocked
        yield
        return
    try:
        # the holder's process id, which a refused second program names: only a courtesy, so a full
        # disk (ENOSPC) leaves it unwritten and the lock held — what the block writes says the disk is full
        with contextlib.suppress(OSError):
            os.ftruncate(fd, 0)
            os.pwrite(fd, str(os.getpid()).encode(), 0)
        try:
            yield
        finally:
            with contextlib.suppress(OSError):  # removed while held: no other program holds it
                path.unlink()
            fcntl.flock(fd, fcntl.LOCK_UN)
    finally:
        os.close(fd)


def _locked_file(path: Path, refusal: Callable[[str], Exception]) -> int | None:
    """The lock file ``path`` opened and locked exclusively (the one of that name when locked: one
    removed by the lock it waited for is let go and the new one locked); None where no lock can
    be taken (a folder this user cannot write — a read-only copy, which nothing can run twice — or
    a file system without locks: some NFS, CIFS, FUSE); ``refusal(holder)`` raised while another
    program holds it (after :data:`CLAIM_RETRY_S`)."""
    deadline = time.monotonic() + CLAIM_RETRY_S
    while True:
        try:
            fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o600)
        except OSError:
            return None
        try:
            _lock_exclusive(fd, deadline)
        except OSError as exc:
            holder = os.pread(fd, 32, 0).decode(errors="replace").strip() or "?"
            os.close(fd)
            if exc.errno not in HELD_ERRNOS:
                return None
            raise refusal(holder) from None
        if _is_the_file_named(fd, path):
            return fd
        os.close(fd)


def _is_the_file_named(fd: int, path: Path) -> bool:
    """Whether the open file ``fd`` is still the file ``path`` names (not removed, not replaced)."""
    try:
        named = os.stat(path)
    except OSError:
        return False
    held = os.fstat(fd)
    return (named.st_dev, named.st_ino) == (held.st_dev, held.st_ino)


def _lock_exclusive(fd: int, deadline: float) -> None:
    """Lock ``fd`` exclusively, trying again while it is held until ``deadline`` (a probe's shared
    lock is let go at once); the last try's OSError when it stays held."""
    while True:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            return
        except OSError as exc:
            if exc.errno not in HELD_ERRNOS or time.monotonic() >= deadline:
                raise
        time.sleep(CLAIM_RETRY_INTERVAL_S)


def is_claimed(db_path, session_id: int) -> bool | None:
    """Whether a program runs session ``session_id`` now (holds its claim): a session stored as
    ``running`` that nobody claims was interrupted (its program killed or crashed). None where it
    cannot be told (no ``fcntl``, or a file system without locks). Reads only: no file is created.
    Its shared lock, held for an instant, never makes a claim fail (:func:`claim_session` waits it
    out)."""
    return _probe(claim_path(db_path, session_id))[0]


def lock_holder(path: Path) -> str | None:
    """The process that holds the lock of the file ``path`` now (:func:`lock_file`): the id the file
    names, ``?`` if it names none; None when no program holds it (no such file, a killed program's
    leftover) or where it cannot be told. Reads only, as :func:`is_claimed`."""
    held, holder = _probe(path)
    return (holder or "?") if held else None


def _probe(path: Path) -> tuple[bool | None, str]:
    """Whether a program holds the lock of the file ``path`` (None where it cannot be told: no
    ``fcntl``, a file system without locks), by taking a shared lock for an instant, and the process
    id the file names when one does (else "")."""
    if fcntl is None:  # pragma: no cover - Windows
        return None, ""
    try:
        fd = os.open(path, os.O_RDONLY)
    except OSError:  # never locked (a session of an older lensopt, or none ran it here)
        return False, ""
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_SH | fcntl.LOCK_NB)
        except OSError as exc:
            if exc.errno not in HELD_ERRNOS:
                return None, ""
            return True, os.pread(fd, 32, 0).decode(errors="replace").strip()
        fcntl.flock(fd, fcntl.LOCK_UN)
        return False, ""
    finally:
        os.close(fd)


def session_status(db_path, session_id: int, stored_status: str) -> str:
    """The status of session ``session_id`` (stored as ``stored_status`` in the database ``db_path``)
    that a person should see now: for a session stored as ``running``, ``running`` while a program
    runs it (holds its claim) and :data:`INTERRUPTED` when none does (``running`` where the claim
    cannot be told: no ``fcntl``, a file system without locks, no ``db_path``); :data:`STOPPED` for
    one stored as ``aborted``; ``finished`` for a finished one."""
    if stored_status == "aborted":
        return STOPPED
    if stored_status != "running" or db_path is None:
        return stored_status
    return INTERRUPTED if is_claimed(db_path, session_id) is False else stored_status
