"""One program per session: a session being run is claimed, so that a second ``lensopt run --resume``
of it is refused before its window opens.

Two programs running one session would both show the patient its next trial; the second to store
its answer is refused (a trial is stored once), and its answer, kept in the session's rescue file,
then stood in the way of every later resume. The claim is an advisory lock (``fcntl.flock``) on the
file ``<database>.session-<id>.lock`` beside the database, holding the claiming program's process id:
the operating system lets it go when the program ends, however it ends (a crash, a kill), so a
claim is never left behind. The file itself stays (removing it could let two programs each lock a
file of that name). Where ``fcntl`` is missing (Windows) sessions are not claimed.
"""

from __future__ import annotations

import contextlib
import errno
import os
from collections.abc import Iterator
from pathlib import Path

from lensopt.errors import StoreError

try:
    import fcntl
except ImportError:  # pragma: no cover - Windows
    fcntl = None  # type: ignore[assignment]


#: The errors of a non-blocking ``flock`` that mean "another program holds it".
HELD_ERRNOS = (errno.EWOULDBLOCK, errno.EAGAIN, errno.EACCES)


def claim_path(db_path, session_id: int) -> Path:
    """The lock file of session ``session_id`` of the database ``db_path`` (the resolved path: the
    same database reached through a link has the same lock)."""
    return Path(f"{Path(db_path).expanduser().resolve()}.session-{session_id}.lock")


@contextlib.contextmanager
def claim_session(db_path, session_id: int) -> Iterator[None]:
    """Hold session ``session_id`` for this program while the block runs; a one-line
    :class:`~lensopt.errors.StoreError` if another program holds it."""
    if fcntl is None:  # pragma: no cover - Windows
        yield
        return
    path = claim_path(db_path, session_id)
    try:
        fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o600)
    except OSError:  # a folder this user cannot write (a read-only copy): nothing can run it twice here
        yield
        return
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError as exc:
            if exc.errno not in HELD_ERRNOS:  # a file system without locks (some NFS, CIFS, FUSE): run unclaimed
                yield
                return
            holder = os.pread(fd, 32, 0).decode(errors="replace").strip() or "?"
            raise StoreError(
                f"session {session_id} is being run by another lensopt (process {holder}); finish or close that "
                "one first — two would show the patient the same trial"
            ) from None
        os.ftruncate(fd, 0)
        os.pwrite(fd, str(os.getpid()).encode(), 0)
        try:
            yield
        finally:
            fcntl.flock(fd, fcntl.LOCK_UN)
    finally:
        os.close(fd)


def is_claimed(db_path, session_id: int) -> bool | None:
    """Whether a program runs session ``session_id`` now (holds its claim): a session stored as
    ``running`` that nobody claims was interrupted (its program killed or crashed). None where it
    cannot be told (no ``fcntl``, or a file system without locks). Reads only: no file is created."""
    if fcntl is None:  # pragma: no cover - Windows
        return None
    try:
        fd = os.open(claim_path(db_path, session_id), os.O_RDONLY)
    except OSError:  # never claimed (a session of an older lensopt, or none ran it here)
        return False
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_SH | fcntl.LOCK_NB)
        except OSError as exc:
            return True if exc.errno in HELD_ERRNOS else None
        fcntl.flock(fd, fcntl.LOCK_UN)
        return False
    finally:
        os.close(fd)
