"""Reading a session database whose folder the reader cannot write.

A WAL database (what :class:`~lensopt.store.SessionStore` writes) is read through its shared-memory
index, the ``-shm`` file beside it, and SQLite creates that file (and an empty ``-wal``) on the first
read when it is missing. In a folder the reader cannot write — a colleague's sessions, a read-only
share or mount, a folder kept ``0555`` — SQLite cannot, and an ordinary ``mode=ro`` opening fails
("attempt to write a readonly database", ``SQLITE_READONLY_DIRECTORY``, or ``SQLITE_CANTOPEN``).

SQLite's answer (https://www.sqlite.org/wal.html#readonly) is to open such a file ``immutable=1``:
the file is read as it is, without locks or an index. That is right only when everything the
database holds is in the file itself:

- a ``-wal`` file with frames in it holds committed transactions not yet copied into the database
  file (a writer that was killed, or files copied without their ``-shm``); read ``immutable`` they
  would be silently missing, so :func:`check_nothing_outside` refuses in one line and says what to
  do (copy the database and its ``-wal`` together into a folder the reader can write);
- a rollback ``-journal`` with content is a transaction that was never finished: refused the same way;
- no program may change the file while it is read: :class:`FileState` notes the database's size,
  times and inode and its sidecar files at opening, and :meth:`SessionStore
  <lensopt.store.SessionStore>` checks them after every read (a changed file is a one-line error, and
  the read is not used).

When the ``-shm`` and ``-wal`` already exist and can be read (a session is running, or its writer was
killed), SQLite reads them without writing, and the ordinary opening works: ``immutable`` is only the
fallback for the error above, in a folder the reader cannot write.
"""

from __future__ import annotations

import dataclasses
import os
import sqlite3
from pathlib import Path

from lensopt.errors import StoreError

#: Bytes of a write-ahead log's header; a ``-wal`` no longer than this holds no transaction.
WAL_HEADER_BYTES = 32

#: SQLite's errors when it cannot create a WAL database's ``-shm`` (or ``-wal``) beside it.
CANNOT_CREATE_INDEX = frozenset(
    {"SQLITE_READONLY_DIRECTORY", "SQLITE_CANTOPEN", "SQLITE_READONLY_CANTINIT", "SQLITE_READONLY"}
)


def folder_is_writable(path: Path) -> bool:
    """Whether this user may create files in ``path``'s folder (False on a read-only mount too)."""
    return os.access(path.parent, os.W_OK | os.X_OK)


def needs_immutable(exc: sqlite3.Error, path: Path) -> bool:
    """Whether ``exc``, raised while reading ``path`` with ``mode=ro``, is SQLite failing to create the
    WAL index in a folder this user cannot write (the case :mod:`lensopt.store.readonly` handles)."""
    name = getattr(exc, "sqlite_errorname", None)
    return name in CANNOT_CREATE_INDEX and not folder_is_writable(path)


def _size(path: Path) -> int | None:
    try:
        return path.stat().st_size
    except FileNotFoundError:
        return None


@dataclasses.dataclass(frozen=True)
class FileState:
    """What a database file and its sidecar files look like at one moment."""

    device: int
    inode: int
    size: int
    modified_ns: int
    wal_bytes: int | None
    journal_bytes: int | None

    @classmethod
    def of(cls, path: Path) -> FileState:
        info = path.stat()
        return cls(
            info.st_dev,
            info.st_ino,
            info.st_size,
            info.st_mtime_ns,
            _size(Path(f"{path}-wal")),
            _size(Path(f"{path}-journal")),
        )


def check_nothing_outside(path: Path, state: FileState) -> None:
    """A one-line :class:`StoreError` when ``path`` has committed data outside the file itself (a
    ``-wal`` with frames, a ``-journal`` with content), which an ``immutable`` reading would miss."""
    folder = path.parent
    if state.wal_bytes is not None and state.wal_bytes > WAL_HEADER_BYTES:
        raise StoreError(
            f"{path}-wal holds answers not yet written into {path.name}, and its folder {folder} cannot be "
            f"written by you, so they cannot be read here; copy {path.name} and {path.name}-wal together "
            "into a folder you can write and use --db there"
        )
    if state.journal_bytes:
        raise StoreError(
            f"{path}-journal holds an unfinished change to {path.name}, and its folder {folder} cannot be "
            f"written by you, so it cannot be read safely here; copy {path.name} and {path.name}-journal "
            "together into a folder you can write and use --db there"
        )


def check_unchanged(path: Path, opened: FileState) -> None:
    """A one-line :class:`StoreError` when ``path`` (read ``immutable``) is no longer as it was at
    ``opened``: another program wrote it, so what was read may mix old and new pages."""
    try:
        now = FileState.of(path)
    except OSError:
        now = None
    if now != opened:
        raise StoreError(
            f"{path} was changed by another program while lensopt read it (its folder {path.parent} cannot be "
            "written by you, so it was read as a file nobody changes); run the command again"
        )
