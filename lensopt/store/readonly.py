"""Reading a session database where SQLite cannot create its index: a folder the reader cannot
write, or a full disk.

A WAL database (what :class:`~lensopt.store.SessionStore` writes) is read through its shared-memory
index, the ``-shm`` file beside it, and SQLite creates that file (and an empty ``-wal``) on the first
read when it is missing. In a folder the reader cannot write — a colleague's sessions, a read-only
share or mount, a folder kept ``0555`` — SQLite cannot, and an ordinary ``mode=ro`` opening fails
("attempt to write a readonly database", ``SQLITE_READONLY_DIRECTORY``, or ``SQLITE_CANTOPEN``). On a
full disk it creates the ``-shm`` but cannot give it its first 32 KiB ("disk I/O error",
``SQLITE_IOERR_SHMSIZE``).

SQLite's answer (https://www.sqlite.org/wal.html#readonly) is to open such a file ``immutable=1``:
the file is read as it is, without locks or an index. That is right only when everything the
database holds is in the file itself:

- a ``-wal`` file with frames in it holds committed transactions not yet copied into the database
  file (a writer that was killed, or files copied without their ``-shm``); read ``immutable`` they
  would be silently missing, so :func:`check_nothing_outside` refuses in one line and says what to
  do (copy the database and its ``-wal`` together into a folder the reader can write, or free space);
- a rollback ``-journal`` with content is a transaction that was never finished: refused the same way;
- no program may change the file while it is read: :class:`FileState` notes the database's size,
  times and inode and its sidecar files at opening, and :meth:`SessionStore
  <lensopt.store.SessionStore>` checks them after every read (a changed file is a one-line error, and
  the read is not used).

When the ``-shm`` and ``-wal`` already exist and can be read (a session is running, or its writer was
killed), SQLite reads them without writing, and the ordinary opening works: ``immutable`` is the
fallback for the errors above (:func:`obstacle`), in a folder the reader cannot write or on a full disk,
and the first choice for a file read-only for the reader in a folder it can write, with neither file
beside it (:func:`read_only_file`): SQLite would create both there, read-only like the file, and leave
them behind, where they would stop a writer once the file is made writable again
(:func:`unwritable_sidecars` names them to a writer).
:func:`disk_is_full` also lets a writer's error say that the disk is full rather than "disk I/O error".
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

#: Free bytes below which a disk counts as full: SQLite gives a WAL index (``-shm``) 32 KiB at once,
#: and a writer needs room for a page or two besides.
FULL_DISK_BYTES = 64 * 1024


def folder_is_writable(path: Path) -> bool:
    """Whether this user may create files in ``path``'s folder (False on a read-only mount too)."""
    return os.access(path.parent, os.W_OK | os.X_OK)


def disk_is_full(path: Path) -> bool:
    """Whether the file system holding ``path``'s folder has less than :data:`FULL_DISK_BYTES` free for
    this user, or no free file entry (inode) left."""
    try:
        info = os.statvfs(path.parent)
    except OSError:
        return False
    no_inodes = info.f_files > 0 and info.f_favail == 0  # 0 files: a file system without an inode count
    return info.f_bavail * info.f_frsize < FULL_DISK_BYTES or no_inodes


def is_disk_full_error(exc: sqlite3.Error, path: Path) -> bool:
    """Whether ``exc``, raised on ``path``, is the disk being full: SQLite says so (``SQLITE_FULL``), or
    it failed to write (an I/O error, ``SQLITE_CANTOPEN`` for a file it could not create) on a disk
    that :func:`disk_is_full`."""
    name = getattr(exc, "sqlite_errorname", None) or ""
    if name == "SQLITE_FULL":
        return True
    return (name.startswith("SQLITE_IOERR") or name in CANNOT_CREATE_INDEX) and disk_is_full(path)


@dataclasses.dataclass(frozen=True)
class Obstacle:
    """Why a database is read ``immutable``: ``because`` (what stops SQLite creating its index, a
    clause of the messages) and ``remedy`` (how to read answers left outside the file; ``{sidecar}``
    stands for the ``-wal`` or ``-journal`` file's name)."""

    because: str
    remedy: str


def obstacle(exc: sqlite3.Error, path: Path) -> Obstacle | None:
    """Why SQLite could not read ``path`` with ``mode=ro`` (``exc``) when the reason is that it cannot
    create the WAL index beside it — a folder this user cannot write, or a full disk — else None."""
    name = getattr(exc, "sqlite_errorname", None)
    if name in CANNOT_CREATE_INDEX and not folder_is_writable(path):
        return Obstacle(
            f"its folder {path.parent} cannot be written by you",
            f"copy {path.name} and {{sidecar}} together into a folder you can write and use --db there",
        )
    if is_disk_full_error(exc, path):
        return Obstacle(
            f"the disk holding {path} is full",
            f"free space on that disk and run the command again, or copy {path.name} and {{sidecar}} together "
            "to another disk and use --db there",
        )
    return None


def read_only_file(path: Path) -> Obstacle | None:
    """Why a reader reads ``path`` ``immutable`` before SQLite tries: the file is read-only for this
    user in a folder the user can write, with no ``-shm`` or ``-wal`` beside it; else None.

    SQLite would create both there, with the file's read-only mode, and leave them behind when it
    closes (a reader cannot fold them away); once the file is made writable again, a writer would
    fail on the read-only ``-shm`` ("attempt to write a readonly database"). No program is writing
    the file meanwhile: a writer keeps a ``-shm`` beside a WAL file while it has it open, and a
    writer that starts later changes the file, which :func:`check_unchanged` notices."""
    if not path.is_file() or os.access(path, os.W_OK) or not folder_is_writable(path):
        return None
    if any(Path(f"{path}{suffix}").exists() for suffix in ("-shm", "-wal")):
        return None
    return Obstacle(
        f"{path.name} is read-only for you",
        f"make it writable (`chmod u+w {path}`) and run the command again, or copy {path.name} and "
        "{sidecar} together into a folder you can write and use --db there",
    )


def unwritable_sidecars(path: Path) -> list[Path]:
    """The ``-shm`` and ``-wal`` files beside ``path`` that this user cannot write (left, with its
    read-only mode, by a reading of the file while it was read-only, before lensopt read such files
    ``immutable``; or another user's): a writer cannot write the database while they are there so."""
    sidecars = (Path(f"{path}{suffix}") for suffix in ("-shm", "-wal"))
    return [sidecar for sidecar in sidecars if sidecar.exists() and not os.access(sidecar, os.W_OK)]


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


def check_nothing_outside(path: Path, state: FileState, why: Obstacle) -> None:
    """A one-line :class:`StoreError` when ``path`` has committed data outside the file itself (a
    ``-wal`` with frames, a ``-journal`` with content), which an ``immutable`` reading would miss;
    ``why`` it would be read so (:func:`obstacle`) is said, and what to do."""
    if state.wal_bytes is not None and state.wal_bytes > WAL_HEADER_BYTES:
        raise StoreError(
            f"{path}-wal holds answers not yet written into {path.name}, and {why.because}, so they cannot "
            f"be read here; {why.remedy.format(sidecar=f'{path.name}-wal')}"
        )
    if state.journal_bytes:
        raise StoreError(
            f"{path}-journal holds an unfinished change to {path.name}, and {why.because}, so it cannot be "
            f"read safely here; {why.remedy.format(sidecar=f'{path.name}-journal')}"
        )


def check_unchanged(path: Path, opened: FileState, why: Obstacle) -> None:
    """A one-line :class:`StoreError` when ``path`` (read ``immutable`` because of ``why``) is no longer
    as it was at ``opened``: another program wrote it, so what was read may mix old and new pages."""
    try:
        now = FileState.of(path)
    except OSError:
        now = None
    if now != opened:
        raise StoreError(
            f"{path} was changed by another program while lensopt read it ({why.because}, so it was read "
            "as a file nobody changes); run the command again"
        )
