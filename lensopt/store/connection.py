"""The session store's connection: the SQLite file, its settings, its locks and its errors.

:class:`StoreConnection` is the part of :class:`~lensopt.store.SessionStore` (in
:mod:`lensopt.store.database`, which adds the writing to the reading of :mod:`lensopt.store.reading`) that talks to SQLite: it
opens the database, creating its private file and folders or upgrading its layout
(:mod:`lensopt.store.schema`), retries while another program holds a lock, turns every SQLite error
into a one-line :class:`~lensopt.errors.StoreError`, runs serialized transactions and closes the
file. Where the database lives by default, and the commands that name it: :mod:`lensopt.store.db_path`. The store's connection
errors (:class:`DatabaseLockedError`, :class:`ReadOnlyStoreError`) are defined here; :mod:`lensopt.store`
exports both.

Design (why each setting):

- ``journal_mode=WAL``: a follower (the dashboard, ``lensopt sessions``) reads while the
  experiment writes, without blocking it.
- ``synchronous=FULL`` for the writer: :meth:`SessionStore.append_trial
  <lensopt.store.SessionStore.append_trial>` returns only after the trial is on disk, so it is
  committed before the next letter is drawn; a crash or power cut loses at most the trial being
  answered.
- ``foreign_keys=ON``.
- A busy timeout of a few seconds, then a one-line :class:`DatabaseLockedError`.
- Read-only stores open the file with a ``mode=ro`` URI and ``query_only``; they never write,
  not even to migrate (older layouts are read as they are, see :mod:`lensopt.store.schema`).
  In a folder the reader cannot write, or on a full disk, where SQLite cannot create a WAL file's
  ``-shm`` index, the file is read ``immutable=1`` if it holds everything (no ``-wal`` with frames
  beside it), and every read checks that no program changed it meanwhile (:mod:`lensopt.store.readonly`);
  so is a file read-only for the reader in a folder it can write, with no ``-shm`` or ``-wal`` beside
  it, where SQLite would leave both behind, read-only, in a writer's way.
- A store opened with ``create=False`` (a resumed session) writes only to a lensopt database that
  already exists: a ``mode=rw`` URI, so SQLite never creates the file; no folder is made; a file
  holding no lensopt layout is refused before anything is written to it (not even switched to WAL).
- A full disk is said as such ("the disk holding … is full"), not as SQLite's "disk I/O error".
"""

from __future__ import annotations

import contextlib
import os
import shlex
import sqlite3
import stat
import threading
import time
from pathlib import Path
from typing import Any, Self

from lensopt.errors import StoreError
from lensopt.store import readonly as readonly_folder
from lensopt.store import schema

#: First pause before opening a database again after SQLite reported it locked or busy; each
#: further attempt waits twice as long, up to :data:`RETRY_MAX_PAUSE_S`, within the busy timeout.
RETRY_FIRST_PAUSE_S = 0.002

#: Longest pause between two attempts to open a database that another program holds.
RETRY_MAX_PAUSE_S = 0.1


class DatabaseLockedError(StoreError):
    """Another program holds the database's write lock for longer than the busy timeout."""


class ReadOnlyStoreError(StoreError):
    """A write was attempted on a store opened read-only."""


def _file_id(path: Path) -> tuple[int, int] | None:
    """``(device, inode)`` of the file at ``path``, None if there is none."""
    try:
        st = os.stat(path)
    except OSError:
        return None
    return st.st_dev, st.st_ino


#: The longest full path SQLite opens on Unix (its ``mxPathname``, in bytes): a longer one is "unable
#: to open database file", which is not a missing folder.
SQLITE_MAX_PATH_BYTES = 512

#: Mode of a session database lensopt creates (owner read/write only): sessions hold participant
#: ids and clinical results. SQLite gives its ``-wal`` and ``-shm`` files the database's mode.
PRIVATE_FILE_MODE = 0o600

#: Mode of a folder lensopt creates for a session database (owner only).
PRIVATE_FOLDER_MODE = 0o700


def _make_private_folders(folder: Path) -> None:
    """Create ``folder`` and its missing parents, each :data:`PRIVATE_FOLDER_MODE` whatever the
    umask; folders that already exist are left as they are."""
    missing = []
    while not folder.exists():
        missing.append(folder)
        if folder.parent == folder:
            break
        folder = folder.parent
    for new in reversed(missing):
        try:
            os.mkdir(new, PRIVATE_FOLDER_MODE)
        except FileExistsError:  # another program made it first: its folder, its mode
            continue
        os.chmod(new, PRIVATE_FOLDER_MODE)


def _create_private_file(path: Path) -> bool:
    """Create an empty ``path`` with :data:`PRIVATE_FILE_MODE` (whatever the umask) before SQLite
    opens it, and say whether it was made here; an existing file is left untouched. SQLite reads an
    empty file as an empty database; if the file cannot be created, SQLite's own open reports why."""
    try:
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, PRIVATE_FILE_MODE)
    except OSError:  # FileExistsError: someone's database (or another start's); others: SQLite says
        return False
    try:
        os.fchmod(fd, PRIVATE_FILE_MODE)
    finally:
        os.close(fd)
    return True


def _read_only_for_this_user(path: Path, what: str, why: str) -> str:
    """``what`` (the database file, its folder) at ``path`` is read-only for this user, ``why`` it matters
    (may be empty) and, when this user owns it, how to make it writable (``chmod u+w``)."""
    try:
        info = os.stat(path)
    except OSError:
        return f"{what} is read-only for this user"
    mode = stat.S_IMODE(info.st_mode)
    mine = not hasattr(os, "geteuid") or info.st_uid == os.geteuid()
    whose = "" if mine else f", owned by user id {info.st_uid}"
    said = f"{what} is read-only for this user (mode {mode:04o}{whose}{'; ' + why if why else ''})"
    return f"{said}: make it writable with `chmod u+w {shlex.quote(str(path))}`" if mine else said


def read_only_obstacle(path: Path) -> str | None:
    """Why a writer cannot write the session database ``path``, or create it, with how to change it
    where this user can: its folder on a read-only file system, the file, its ``-shm`` or ``-wal``, or
    its folder read-only for this user (SQLite writes the ``-wal`` and ``-shm`` beside a database);
    None when none of these is in the way."""
    folder = path.parent
    if hasattr(os, "statvfs"):  # not on Windows
        try:
            if os.statvfs(folder).f_flag & os.ST_RDONLY:
                return f"{folder} is on a read-only file system (mounted read-only)"
        except OSError:
            pass
    found = []
    if path.exists() and not os.access(path, os.W_OK):
        found.append(_read_only_for_this_user(path, "the database file", ""))
    for sidecar in readonly_folder.unwritable_sidecars(path):
        found.append(_read_only_for_this_user(sidecar, f"its {sidecar.name}", "SQLite writes it with the database"))
    if not os.access(folder, os.W_OK | os.X_OK):
        why = (
            f"SQLite writes {path.name}-wal and {path.name}-shm beside the database"
            if path.exists()
            else "the database cannot be created in it"
        )
        found.append(_read_only_for_this_user(folder, f"its folder {folder}", why))
    return "; ".join(found) or None


class StoreConnection:
    """One SQLite session database, opened for writing or for reading only: the connection that
    :class:`~lensopt.store.SessionStore` queries.

    ``StoreConnection(path, readonly, timeout_s)`` opens (creating or upgrading) the database for
    writing, or with ``readonly`` an existing one for reading only; with ``create=False`` (writing)
    only a lensopt database that exists is opened (upgraded if older), else a one-line
    :class:`~lensopt.errors.StoreError` and nothing is created or written; ``timeout_s`` (seconds, >= 0) is
    how long to wait for another program's lock before raising :class:`DatabaseLockedError`
    (:class:`~lensopt.store.SessionStore` fills in its default). A subclass reads and writes in
    :meth:`_transaction`; its ``_select`` maps each table to the column list to select (None: no such
    table in an older read-only file). Calls are serialized, so one connection may be shared between
    threads. Its messages name :class:`~lensopt.store.SessionStore`, the class built on it.
    """

    def __init__(self, path, readonly: bool, timeout_s: float, create: bool = True):
        if isinstance(timeout_s, bool) or not (isinstance(timeout_s, (int, float)) and timeout_s >= 0):
            raise ValueError(f"SessionStore.timeout_s must be a number >= 0 seconds, got {timeout_s!r}")
        if not isinstance(create, bool):
            raise ValueError(f"SessionStore.create must be True or False, got {create!r}")
        self.path = Path(os.fspath(path)).expanduser()
        self.readonly = bool(readonly)
        #: Whether a missing database is created (a writer's default); never for a read-only store.
        self.create = create and not self.readonly
        self.timeout_s = float(timeout_s)
        self._lock = threading.RLock()
        self._conn: sqlite3.Connection | None = None
        #: The database file's identity when opened: a write to a file deleted or replaced since is refused.
        self._file_id: tuple[int, int] | None = None
        #: The file as it was when opened ``immutable`` (:mod:`lensopt.store.readonly`), else None.
        self._immutable_state: readonly_folder.FileState | None = None
        #: Why it was opened ``immutable``: a folder this user cannot write, or a full disk.
        self._immutable_why: readonly_folder.Obstacle | None = None
        # a file read-only for this user in a folder it can write: read as it is, leaving no -shm behind
        conn = self._connect(immutable=readonly_folder.read_only_file(self.path) if self.readonly else None)
        try:
            try:
                self._select = self._prepare(conn)
            except sqlite3.Error as exc:
                why = readonly_folder.obstacle(exc, self.path) if self.readonly else None
                if why is None:
                    raise self._error(exc) from None
                # a WAL file whose index SQLite cannot create (a folder this user cannot write, a
                # full disk): read the file as it is, if it holds everything (no -wal with frames
                # beside it), and check after every read that no program has changed it meanwhile
                conn.close()
                conn = self._connect(immutable=why)
                with self._translating():
                    self._select = self._prepare(conn)
                self._check_immutable_unchanged()
        except BaseException:
            conn.close()
            self._conn = None
            raise

    # -- opening ------------------------------------------------------------------------------

    def _connect(self, immutable: readonly_folder.Obstacle | None = None) -> sqlite3.Connection:
        """The SQLite connection; ``immutable``: why the file is read ``immutable=1`` (read-only only)."""
        options: dict[str, Any] = dict(timeout=self.timeout_s, isolation_level=None, check_same_thread=False)
        # refused before SQLite opens it: its reading created a -wal and a -shm beside a read-only
        # file, read-only like it, and left them there (the next run, the file made writable, was
        # refused on the -shm); its -shm and -wal are checked once it is open (:meth:`check_writable`)
        self._refuse_unwritable_file(sidecars=False)
        made = False  # an empty database file made here (below), for SQLite to open
        if self.readonly:
            if not self.path.is_file():
                raise StoreError(
                    f"no session database at {self.path}; run a session first or use --db to choose another file"
                )
            query = "?mode=ro"
            if immutable is not None:
                state = readonly_folder.FileState.of(self.path)
                readonly_folder.check_nothing_outside(self.path, state, immutable)
                self._immutable_state, self._immutable_why = state, immutable
                query = "?mode=ro&immutable=1"
            target, options["uri"] = self.path.resolve().as_uri() + query, True
        elif not self.create:
            if not self.path.is_file():
                raise StoreError(
                    f"no session database at {self._where()}; use --db to name the file that holds the session"
                )
            uri = self.path.resolve().as_uri()
            if not any(Path(f"{self.path}{suffix}").exists() for suffix in ("-wal", "-journal")):
                # all it holds is in the file: its layout is read without SQLite creating a -wal and
                # -shm beside it (a file that is no lensopt database is refused leaving no trace)
                self._check_holds_sessions(uri)
            # mode=rw: SQLite opens the file only if it exists (removed meanwhile: an error, no new file)
            target, options["uri"] = uri + "?mode=rw", True
        else:
            try:
                _make_private_folders(self.path.parent)
            except OSError as exc:
                raise StoreError(
                    f"cannot create the folder for {self.path} ({exc.strerror}); use --db to choose another file"
                ) from None
            made = _create_private_file(self.path)
            target = str(self.path)
        try:
            with self._translating():
                self._conn = sqlite3.connect(target, **options)
        except StoreError:
            if made:  # an empty file of ours, SQLite could not open: not left behind
                with contextlib.suppress(OSError):
                    if self.path.stat().st_size == 0:
                        self.path.unlink()
            raise
        self._file_id = _file_id(self.path)
        return self._conn

    def _prepare(self, conn: sqlite3.Connection) -> dict[str, str | None]:
        # The busy timeout comes first (sqlite3.connect already set it from timeout_s): every
        # statement below waits for another program's lock rather than failing at once.
        conn.execute(f"PRAGMA busy_timeout = {int(self.timeout_s * 1000):d}")
        conn.execute("PRAGMA foreign_keys = ON")
        return self._retrying(conn, self._prepare_once)

    def _retrying(self, conn: sqlite3.Connection, step):
        """``step(conn)``, run again while SQLite answers "database is locked" or "busy".

        SQLite does not call the busy handler everywhere: switching to WAL, or a deferred read
        meeting a program that is creating the file, can fail at once with SQLITE_BUSY (SQLite's
        guidance is to retry the whole transaction). The step is retried with a doubling pause
        (:data:`RETRY_FIRST_PAUSE_S` up to :data:`RETRY_MAX_PAUSE_S`) until ``timeout_s`` has passed,
        then the last error is raised (a one-line :class:`DatabaseLockedError` for the caller).
        """
        deadline = time.monotonic() + self.timeout_s
        pause_s = RETRY_FIRST_PAUSE_S
        while True:
            try:
                return step(conn)
            except sqlite3.OperationalError as exc:
                lowered = str(exc).lower()
                if not ("locked" in lowered or "busy" in lowered) or time.monotonic() + pause_s > deadline:
                    raise
                if conn.in_transaction:
                    conn.execute("ROLLBACK")
                time.sleep(pause_s)
                pause_s = min(2 * pause_s, RETRY_MAX_PAUSE_S)

    def _prepare_once(self, conn: sqlite3.Connection) -> dict[str, str | None]:
        if self.readonly:
            conn.execute("PRAGMA query_only = ON")
            conn.execute("BEGIN")  # the version and the column lists of one moment
            try:
                if schema.inspect(conn, self.path) == 0:
                    raise StoreError(
                        f"{self.path} holds no lensopt sessions yet; run a session first or use --db to "
                        "choose another file"
                    )
                return self._select_lists(conn)
            finally:
                if conn.in_transaction:
                    conn.execute("COMMIT")
        # Reads only, in one read transaction: never switch someone else's file to WAL.
        version = schema.inspect(conn, self.path)
        if version == 0 and not self.create:  # refused before anything is written to it
            raise self._holds_no_sessions()
        conn.execute("PRAGMA journal_mode = WAL")
        conn.execute("PRAGMA synchronous = FULL")
        if version != schema.SCHEMA_VERSION:
            schema.keep_before_upgrade(conn, self.path, version)
            schema.upgrade(conn, self.path)  # BEGIN IMMEDIATE: checks the version again, then creates
        return self._select_lists(conn)  # the current layout, which no other program changes

    def _check_holds_sessions(self, uri: str) -> None:
        """A one-line :class:`~lensopt.errors.StoreError` when the database at ``uri`` (``create=False``;
        no ``-wal`` or ``-journal`` beside it) holds no lensopt layout, read ``immutable``: nothing is written."""
        with self._translating():
            probe = sqlite3.connect(uri + "?mode=ro&immutable=1", uri=True, timeout=self.timeout_s)
        try:
            with self._translating():
                version = schema.inspect(probe, self.path)
        finally:
            probe.close()
        if version == 0:
            raise self._holds_no_sessions()

    def _holds_no_sessions(self) -> StoreError:
        return StoreError(
            f"{self._where()} holds no lensopt sessions; use --db to name the file that holds the session"
        )

    def _where(self) -> str:
        """The database's path, with the folder it is in when it was given relative to the current one
        (a relative --db typed in another folder names another file)."""
        if self.path.is_absolute():
            return str(self.path)
        return f"{self.path} (in {Path.cwd()})"

    @staticmethod
    def _select_lists(conn: sqlite3.Connection) -> dict[str, str | None]:
        return {table: schema.select_list(conn, table) for table in schema.COLUMNS}  # None: no such table

    # -- plumbing -----------------------------------------------------------------------------

    def _error(self, exc: sqlite3.Error) -> StoreError:
        message = str(exc)
        lowered = message.lower()
        if "locked" in lowered or "busy" in lowered:
            return DatabaseLockedError(
                f"database {self.path} is locked by another program; close it or use --db to choose another file"
            )
        if readonly_folder.is_disk_full_error(exc, self.path):
            return StoreError(
                f"the disk holding {self.path} is full ({message}); free space on it and try again, or use --db "
                "to choose a database on another disk"
            )
        obstacle = None
        if not self.readonly and ("readonly" in lowered or "read-only" in lowered or "unable to open" in lowered):
            obstacle = read_only_obstacle(self.path)
        if obstacle is not None:
            return self._read_only_error(obstacle)
        if "readonly" in lowered or "read-only" in lowered:
            return ReadOnlyStoreError(
                f"database {self.path} cannot be written ({message}); check its permissions or use --db"
            )
        if any(word in lowered for word in ("not a database", "malformed", "corrupt", "disk image")):
            return schema.not_a_database(self.path, message)
        if "unable to open" in lowered and len(os.fsencode(os.path.abspath(self.path))) > SQLITE_MAX_PATH_BYTES:
            return StoreError(
                f"cannot open database {self.path} ({message}): its full path is "
                f"{len(os.fsencode(os.path.abspath(self.path)))} bytes long, longer than SQLite opens "
                f"({SQLITE_MAX_PATH_BYTES}); use --db with a shorter path"
            )
        if "unable to open" in lowered:
            return StoreError(
                f"cannot open database {self.path} ({message}); check that its folder exists and is "
                "accessible, or use --db to choose another file"
            )
        return StoreError(f"database {self.path}: {message}; use --db to choose another file")

    def _read_only_error(self, obstacle: str) -> ReadOnlyStoreError:
        """The one line for a writer that cannot write its database: ``obstacle`` (:func:`read_only_obstacle`)."""
        return ReadOnlyStoreError(
            f"database {self.path} cannot be written: {obstacle}; {'or ' if 'chmod' in obstacle else ''}"
            "use --db to choose a database in a folder you can write"
        )

    @contextlib.contextmanager
    def _translating(self):
        try:
            yield
        except sqlite3.Error as exc:
            raise self._error(exc) from None

    @contextlib.contextmanager
    def _transaction(self, write: bool):
        """A serialized transaction; a write transaction takes the write lock up front."""
        if write and self.readonly:
            raise ReadOnlyStoreError(
                f"session store {self.path} was opened read-only; open it without readonly=True to record"
            )
        with self._lock:
            if self._conn is None:
                raise StoreError(f"session store {self.path} is closed; open it again")
            if write and _file_id(self.path) != self._file_id:
                # SQLite would go on writing to the open file, deleted or replaced: nothing would reach the disk
                raise StoreError(
                    f"the session database {self.path} was deleted, moved or replaced while lensopt had it open; "
                    "put it back (or choose --db) and resume the session"
                )
            conn = self._conn
            with self._translating():
                conn.execute("BEGIN IMMEDIATE" if write else "BEGIN")
                try:
                    yield conn
                    conn.execute("COMMIT")
                except BaseException:
                    if conn.in_transaction:
                        conn.execute("ROLLBACK")
                    raise
            self._check_immutable_unchanged()  # what was read is used only if no program wrote meanwhile

    @property
    def immutable(self) -> bool:
        """Whether this read-only store reads its file as one nobody changes (``immutable=1``): a WAL
        database in a folder this user cannot write or on a full disk (:mod:`lensopt.store.readonly`)."""
        return self._immutable_state is not None

    def _check_immutable_unchanged(self) -> None:
        if self._immutable_state is not None and self._immutable_why is not None:
            readonly_folder.check_unchanged(self.path, self._immutable_state, self._immutable_why)

    # -- the lock and the counter -------------------------------------------------------------

    def check_writable(self) -> None:
        """Take the write lock and let it go: a locked or read-only file is refused (one line) now,
        before a session is prepared, rather than at its first write. A read-only database file in a
        folder that can be written is refused too, and so is one whose ``-shm`` or ``-wal`` this user
        cannot write: SQLite takes the lock in the ``-wal`` and ``-shm`` beside it, and would fail only
        at the first write."""
        self._refuse_unwritable_file(sidecars=True)
        with self._transaction(write=True):
            pass

    def _refuse_unwritable_file(self, sidecars: bool) -> None:
        """A writer's one line for a database file (with ``sidecars``, or its ``-shm`` or ``-wal``)
        that this user cannot write (:func:`read_only_obstacle`); nothing for a reader or a file not
        there yet."""
        writer_of_a_file = not self.readonly and self.path.is_file()
        unwritable = not os.access(self.path, os.W_OK) or (sidecars and readonly_folder.unwritable_sidecars(self.path))
        if writer_of_a_file and unwritable:
            raise self._read_only_error(read_only_obstacle(self.path) or f"{self.path} is read-only for this user")

    def data_version(self) -> int:
        """A counter that changes whenever any connection (this one included) commits a change.

        ``PRAGMA data_version`` (changes by other connections) plus this connection's own
        ``total_changes``; both only grow, so followers can poll it cheaply.
        """
        with self._lock:
            if self._conn is None:
                raise StoreError(f"session store {self.path} is closed; open it again")
            with self._translating():
                (version,) = self._conn.execute("PRAGMA data_version").fetchone()
            # read immutable, the file's changes are not counted: a change is a one-line error, and a
            # follower (the dashboard) opens the file again
            self._check_immutable_unchanged()
            return int(version) + self._conn.total_changes

    # -- lifetime -----------------------------------------------------------------------------

    def close(self) -> None:
        """Close the database (idempotent)."""
        with self._lock:
            if self._conn is not None:
                self._conn.close()
                self._conn = None

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc_info) -> None:
        self.close()

    def __repr__(self) -> str:
        mode = "read-only, immutable" if self.immutable else "read-only" if self.readonly else "read-write"
        return f"SessionStore({str(self.path)!r}, {mode})"
