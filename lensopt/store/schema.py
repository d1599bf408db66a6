"""The session database layout, its version, and migrations from every older version.

The schema version lives in ``PRAGMA user_version`` and the file is marked as a lensopt
database with ``PRAGMA application_id``. Opening a database for writing brings an older
layout up to :data:`SCHEMA_VERSION` in one transaction (all or nothing); a read-only store
reads older layouts as they are, filling the columns they lack with the defaults the migration
would have written (:data:`READ_DEFAULTS`).

Versions:

1. sessions (no ``kind``) and trials (no ``extra``): the first layout.
2. adds ``sessions.kind`` (``'letters'``) and ``trials.extra`` (JSON text, ``'{}'``).
3. adds the ``duel_trials`` table (sessions of kind ``'duel'``: two lenses, a line of letters and
   the answer ``first``/``second``/``same``). Letter sessions and their rows are untouched; a
   read-only store reads an older file as having no duels (:data:`READ_ABSENT_TABLES`).
4. adds the ``ranking_trials`` table (sessions of kind ``'ranking'``: two to four lenses as JSON
   text ``[[S, C], ...]``, a line of letters, and the order given, lens indices clearest first, as
   JSON text ``[i, j, ...]``). Earlier tables and rows are untouched; a read-only store reads an
   older file as having no rankings.
5. adds ``trials.axis_deg`` (REAL, the cylinder axis in degrees of a full-prescription letter
   trial; NULL in the two-parameter search and in every older row) and the ``results`` table: the
   prescription a finished session reports (clinical notation, sphere, cylinder, axis, predicted
   acuity, confidence, the answers it rests on, and its 95 % intervals as JSON text
   ``{"m_d": [lo, hi], ...}``), one row per session, replaced when a resumed session finishes
   again. A session's result is read with its record (:attr:`SessionInfo.result`), so ``lensopt
   sessions --json`` shows it. Earlier rows are untouched; a read-only store reads an older file as
   having NULL axes and no results.
6. adds ``trials.void`` (INTEGER 0/1, default 0): a letter answer the clinician undid (Backspace in
   ``lensopt run``) is kept and marked void rather than deleted; the optimizer is rebuilt from the
   answers that are not void, and the export keeps every row with its ``void`` flag. Earlier rows
   are untouched (not void); a read-only store reads an older file as having no void answer.
7. adds ``trials.eye`` and ``results.eye`` (TEXT ``'OD'``/``'OS'``, NULL when the session named no
   eye): a session of both eyes (OU) runs OD then OS, each eye its own search with its own trials,
   and reports one result per eye (the results table is keyed by ``id``, one row per session and
   eye). Earlier rows are untouched (no eye); a read-only store reads an older file as having none.
8. adds ``duel_trials.first_axis_deg`` and ``second_axis_deg`` (REAL): the lenses' cylinder axes of
   a duel of the full prescription (``lensopt run`` with a duel protocol and a start); NULL in a
   duel of sphere and cylinder and in every older row, which a read-only store reads as such.
9. adds ``ranking_trials.axes_deg`` (TEXT): JSON ``[a1, a2, ...]`` of the lenses' cylinder axes
   (degrees, lens 1 first) in a ranking of the full prescription (``lensopt run`` with a ranking
   protocol and a start); NULL in a ranking of sphere and cylinder and in every older row, which a
   read-only store reads as such. ``lenses_d`` keeps its ``[[sphere_d, cylinder_d], ...]``, so an
   older reader of the column never meets a lens of three numbers.
10. adds the ``session_events`` table: what happened to a session besides its answers, one row per
    event — ``started`` (its creation), ``resumed`` (each ``lensopt run --resume``) and ``noted`` (a
    clinician's note as it is typed: ``note``, ``for_trial``) with the
    unix time, the last trial stored before it (``after_trial``, 0 before the first) and JSON text
    ``detail``: the software that ran (:func:`lensopt.provenance.software`: lensopt's version and
    git commit, Python, numpy, scipy, PsychoPy, the BLAS library, the platform) and, on a resume,
    the trial budget per eye it ran with (``trials``; ``trials_given``: the ``--trials`` typed, or
    null). A later resume without ``--trials`` keeps the last budget given. Earlier sessions have
    no events; a read-only store reads an older file as having none. Since 4 Dec 2026 sessions
    also record ``ended`` (each end of their searches, with the command it advised:
    :func:`lensopt.store.session_records.continue_advice`); the table is the same.
"""

from __future__ import annotations

import contextlib
import os
import sqlite3
import sys
from pathlib import Path

from lensopt import __version__
from lensopt.errors import StoreError
from lensopt.store.records import DUEL_KIND, LETTERS_KIND, RANKING_KIND

#: Layout version written by this lensopt (``PRAGMA user_version``).
SCHEMA_VERSION = 10

#: The lensopt version that first wrote each layout from 9 on (layouts 1–9 were all written by
#: 0.1.0). A new layout raises the version, so that a database written by a newer lensopt names a
#: newer release to install (``pip install --upgrade`` of an equal version installs nothing).
FIRST_WRITTEN_BY = {9: "0.1.0", 10: "0.2.0"}

#: ``PRAGMA application_id`` of a lensopt database: the bytes ``LENS``.
APPLICATION_ID = 0x4C454E53

#: The duel table (version 3): one row per answered duel; lenses in D, letter size in logMAR.
DUEL_TRIALS_TABLE = """CREATE TABLE duel_trials (
        id INTEGER PRIMARY KEY,
        session_id INTEGER NOT NULL REFERENCES sessions(id) ON DELETE CASCADE,
        idx INTEGER NOT NULL CHECK (idx >= 1),
        first_sphere_d REAL NOT NULL,
        first_cylinder_d REAL NOT NULL,
        second_sphere_d REAL NOT NULL,
        second_cylinder_d REAL NOT NULL,
        letter_logmar REAL NOT NULL,
        letters TEXT NOT NULL,
        answer TEXT NOT NULL CHECK (answer IN ('first', 'second', 'same')),
        rt_s REAL,
        presented_at REAL NOT NULL,
        answered_at REAL NOT NULL,
        extra TEXT NOT NULL DEFAULT '{}',
        UNIQUE (session_id, idx)
    )"""

#: The ranking table (version 4): one row per answered ranking. ``lenses_d`` is JSON text
#: ``[[sphere_d, cylinder_d], ...]`` (lens 1 first), ``lens_order`` JSON text of the lens indices
#: (0-based) clearest first; letter size in logMAR.
RANKING_TRIALS_TABLE = """CREATE TABLE ranking_trials (
        id INTEGER PRIMARY KEY,
        session_id INTEGER NOT NULL REFERENCES sessions(id) ON DELETE CASCADE,
        idx INTEGER NOT NULL CHECK (idx >= 1),
        lenses_d TEXT NOT NULL,
        letter_logmar REAL NOT NULL,
        letters TEXT NOT NULL,
        lens_order TEXT NOT NULL,
        rt_s REAL,
        presented_at REAL NOT NULL,
        answered_at REAL NOT NULL,
        extra TEXT NOT NULL DEFAULT '{}',
        UNIQUE (session_id, idx)
    )"""

#: The results table (version 5): what a finished session reports, one row per session (a
#: session resumed and finished again replaces its row; kept by the store rather than by a UNIQUE
#: constraint, so that a later layout can key results by more than the session, e.g. per eye,
#: with ``ALTER TABLE ... ADD COLUMN``). Powers in D, axis in degrees (1-180),
#: ``intervals`` JSON text of 95 % intervals ``{"m_d": [lo, hi], "j0_d": ..., "axis_deg": ...}``.
RESULTS_TABLE = """CREATE TABLE results (
        id INTEGER PRIMARY KEY,
        session_id INTEGER NOT NULL REFERENCES sessions(id) ON DELETE CASCADE,
        prescription TEXT NOT NULL,
        sphere_d REAL NOT NULL,
        cylinder_d REAL NOT NULL,
        axis_deg REAL,
        predicted_acuity_logmar REAL,
        confidence REAL,
        n_trials INTEGER NOT NULL CHECK (n_trials >= 0),
        intervals TEXT NOT NULL DEFAULT '{}',
        recorded_at REAL NOT NULL,
        software_version TEXT NOT NULL
    )"""

#: Version 7's column of the results table: the eye a result is for (NULL: the session named none).
RESULTS_EYE_COLUMN = "eye TEXT CHECK (eye IN ('OD', 'OS'))"

#: Version 8's columns of the duel table: the lenses' axes in a duel of the full prescription
#: (NULL in a duel of sphere and cylinder, and in every duel stored before).
DUEL_AXIS_COLUMNS = ("first_axis_deg REAL", "second_axis_deg REAL")

#: Version 9's column of the ranking table: JSON text of the lenses' axes in a ranking of the full
#: prescription (NULL in a ranking of sphere and cylinder, and in every ranking stored before).
RANKING_AXES_COLUMN = "axes_deg TEXT"

#: The events table (version 10): one row per event of a session (see the module's docstring).
SESSION_EVENTS_TABLE = """CREATE TABLE session_events (
        id INTEGER PRIMARY KEY,
        session_id INTEGER NOT NULL REFERENCES sessions(id) ON DELETE CASCADE,
        at REAL NOT NULL,
        event TEXT NOT NULL,
        after_trial INTEGER NOT NULL CHECK (after_trial >= 0),
        detail TEXT NOT NULL DEFAULT '{}'
    )"""

#: Statements creating the current layout in an empty database.
CREATE_STATEMENTS = (
    """CREATE TABLE sessions (
        id INTEGER PRIMARY KEY AUTOINCREMENT,
        participant TEXT NOT NULL,
        kind TEXT NOT NULL DEFAULT 'letters',
        status TEXT NOT NULL DEFAULT 'running',
        created_at REAL NOT NULL,
        updated_at REAL NOT NULL,
        seed INTEGER NOT NULL,
        software_version TEXT NOT NULL,
        protocol TEXT NOT NULL,
        calibration TEXT NOT NULL,
        optimizer_settings TEXT NOT NULL
    )""",
    """CREATE TABLE trials (
        id INTEGER PRIMARY KEY,
        session_id INTEGER NOT NULL REFERENCES sessions(id) ON DELETE CASCADE,
        idx INTEGER NOT NULL CHECK (idx >= 1),
        sphere_d REAL NOT NULL,
        cylinder_d REAL NOT NULL,
        letter_logmar REAL NOT NULL,
        letter TEXT NOT NULL,
        response TEXT,
        correct INTEGER NOT NULL CHECK (correct IN (0, 1)),
        rt_s REAL,
        presented_at REAL NOT NULL,
        answered_at REAL NOT NULL,
        extra TEXT NOT NULL DEFAULT '{}',
        axis_deg REAL,
        void INTEGER NOT NULL DEFAULT 0 CHECK (void IN (0, 1)),
        eye TEXT CHECK (eye IN ('OD', 'OS')),
        UNIQUE (session_id, idx)
    )""",
    DUEL_TRIALS_TABLE,
    RANKING_TRIALS_TABLE,
    RESULTS_TABLE,
    f"ALTER TABLE results ADD COLUMN {RESULTS_EYE_COLUMN}",
    *(f"ALTER TABLE duel_trials ADD COLUMN {column}" for column in DUEL_AXIS_COLUMNS),
    f"ALTER TABLE ranking_trials ADD COLUMN {RANKING_AXES_COLUMN}",
    SESSION_EVENTS_TABLE,
)

#: ``MIGRATIONS[v]``: the statements that bring layout ``v`` to ``v + 1``.
MIGRATIONS = {
    1: (
        "ALTER TABLE sessions ADD COLUMN kind TEXT NOT NULL DEFAULT 'letters'",
        "ALTER TABLE trials ADD COLUMN extra TEXT NOT NULL DEFAULT '{}'",
    ),
    2: (DUEL_TRIALS_TABLE,),
    3: (RANKING_TRIALS_TABLE,),
    4: ("ALTER TABLE trials ADD COLUMN axis_deg REAL", RESULTS_TABLE),
    5: ("ALTER TABLE trials ADD COLUMN void INTEGER NOT NULL DEFAULT 0 CHECK (void IN (0, 1))",),
    6: (
        "ALTER TABLE trials ADD COLUMN eye TEXT CHECK (eye IN ('OD', 'OS'))",
        f"ALTER TABLE results ADD COLUMN {RESULTS_EYE_COLUMN}",
    ),
    7: tuple(f"ALTER TABLE duel_trials ADD COLUMN {column}" for column in DUEL_AXIS_COLUMNS),
    8: (f"ALTER TABLE ranking_trials ADD COLUMN {RANKING_AXES_COLUMN}",),
    9: (SESSION_EVENTS_TABLE,),
}

#: Columns of the current layout, in the order the store reads them.
COLUMNS = {
    "sessions": (
        "id",
        "participant",
        "kind",
        "status",
        "created_at",
        "updated_at",
        "seed",
        "software_version",
        "protocol",
        "calibration",
        "optimizer_settings",
    ),
    "trials": (
        "idx",
        "sphere_d",
        "cylinder_d",
        "letter_logmar",
        "letter",
        "response",
        "correct",
        "rt_s",
        "presented_at",
        "answered_at",
        "extra",
        "axis_deg",
        "void",
        "eye",
    ),
    "duel_trials": (
        "idx",
        "first_sphere_d",
        "first_cylinder_d",
        "second_sphere_d",
        "second_cylinder_d",
        "letter_logmar",
        "letters",
        "answer",
        "rt_s",
        "presented_at",
        "answered_at",
        "extra",
        "first_axis_deg",
        "second_axis_deg",
    ),
    "ranking_trials": (
        "idx",
        "lenses_d",
        "letter_logmar",
        "letters",
        "lens_order",
        "rt_s",
        "presented_at",
        "answered_at",
        "extra",
        "axes_deg",
    ),
    "session_events": ("session_id", "at", "event", "after_trial", "detail"),
    "results": (
        "session_id",
        "prescription",
        "sphere_d",
        "cylinder_d",
        "axis_deg",
        "predicted_acuity_logmar",
        "confidence",
        "n_trials",
        "intervals",
        "recorded_at",
        "software_version",
        "eye",
    ),
}

#: The table holding the trials of each session kind.
TRIAL_TABLES = {LETTERS_KIND: "trials", DUEL_KIND: "duel_trials", RANKING_KIND: "ranking_trials"}

#: Tables an older layout may lack, which a read-only store then reads as empty.
READ_ABSENT_TABLES = frozenset({"duel_trials", "ranking_trials", "results", "session_events"})

#: SQL values standing in for columns an older layout lacks (what its migration writes).
READ_DEFAULTS = {
    ("sessions", "kind"): "'letters'",
    ("trials", "extra"): "'{}'",
    ("trials", "axis_deg"): "NULL",
    ("trials", "void"): "0",
    ("trials", "eye"): "NULL",
    ("results", "eye"): "NULL",
    ("duel_trials", "first_axis_deg"): "NULL",
    ("duel_trials", "second_axis_deg"): "NULL",
    ("ranking_trials", "axes_deg"): "NULL",
}

assert set(MIGRATIONS) == set(range(1, SCHEMA_VERSION)), "a migration is missing"


class NotALensoptDatabaseError(StoreError):
    """The file is not a lensopt session database, or it is damaged."""


class NewerSchemaError(StoreError):
    """The database was written by a newer lensopt."""


class OlderSchemaError(StoreError):
    """A read-only store cannot read a layout this old."""


def not_a_database(path, detail: str) -> NotALensoptDatabaseError:
    """The one-line error for a file that is not a (healthy) lensopt database."""
    return NotALensoptDatabaseError(
        f"{path} is not a lensopt session database or is damaged ({detail}); "
        "use --db to choose another file, or restore a backup"
    )


def _tables(conn: sqlite3.Connection) -> set[str]:
    rows = conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'").fetchall()
    return {name for (name,) in rows if not name.startswith("sqlite_")}


def inspect(conn: sqlite3.Connection, path) -> int:
    """The layout version of the database behind ``conn`` (0: empty), checking that it is ours.

    Raises :class:`NotALensoptDatabaseError` for another program's database or a damaged file
    and :class:`NewerSchemaError` for a layout newer than this software. Only reads, inside one
    read transaction (the caller's, or its own), so the version and the tables it sees are those
    of one moment even while another program creates the layout.
    """
    if conn.in_transaction:
        return _inspect(conn, path)
    conn.execute("BEGIN")
    try:
        return _inspect(conn, path)
    finally:
        if conn.in_transaction:
            conn.execute("COMMIT")


def _inspect(conn: sqlite3.Connection, path) -> int:
    application_id = conn.execute("PRAGMA application_id").fetchone()[0]
    version = conn.execute("PRAGMA user_version").fetchone()[0]
    tables = _tables(conn)
    if application_id not in (0, APPLICATION_ID):
        raise not_a_database(path, f"application id {application_id:#x} belongs to another program")
    if version == 0:
        if tables:
            raise not_a_database(path, f"it holds other tables: {', '.join(sorted(tables))}")
        return 0
    if version > SCHEMA_VERSION:
        raise NewerSchemaError(
            f"{path} was written by a newer lensopt (schema {version} > {SCHEMA_VERSION}); upgrade lensopt "
            f"(this one is {__version__})"
        )
    if not {"sessions", "trials"} <= tables:
        raise not_a_database(path, "the sessions and trials tables are missing")
    problems = [row[0] for row in conn.execute("PRAGMA quick_check").fetchall()]
    if problems != ["ok"]:
        raise not_a_database(path, f"integrity check: {problems[0]}")
    return version


def keep_before_upgrade(conn: sqlite3.Connection, path, version: int) -> None:
    """Before an older database (layout ``version``) is upgraded: a copy of it as it is, kept beside
    it as ``<name>.schema-<version><suffix>`` (readable by its owner only; an existing copy of that
    name is kept, and the new one is ``<name>.schema-<version>.2<suffix>``, ``.3``, …: a file brought
    back from its copy to an older lensopt, and then opened by this one again, is copied again with
    the sessions recorded meanwhile), and one line on stderr saying so. After the upgrade no lensopt
    of an older layout opens the file again; a clinic that must go back to one has the copy (without
    the answers stored since). Where the copy cannot be made (a read-only folder, a full disk) the
    upgrade goes on, as before there was a copy, and the line says so; so it does when another
    program upgraded the file while it was copied (the copy, no longer of layout ``version``, is
    removed). Called before the upgrade's write lock: a copy of a file in WAL mode taken inside a
    write transaction waits for that transaction forever."""
    if not 0 < version < SCHEMA_VERSION:
        return
    path = Path(path)
    try:
        kept = _new_copy(path, version)
        try:
            target = sqlite3.connect(kept)
            try:
                conn.backup(target)
                target.execute("PRAGMA journal_mode = DELETE")  # one file, no -wal or -shm beside it
                copied = target.execute("PRAGMA user_version").fetchone()[0]
            finally:
                target.close()
            if copied != version:  # another program upgraded the file meanwhile: not the file as it was
                raise sqlite3.DatabaseError(f"another program upgraded {path} to layout {copied} meanwhile")
        except BaseException:
            with contextlib.suppress(OSError):
                kept.unlink()
            raise
        said = f"the file as it was is kept as {kept}"
    except (OSError, sqlite3.Error) as exc:
        said = f"no copy of it as it was could be kept ({exc})"
    with contextlib.suppress(OSError, ValueError):  # a closed stderr: the upgrade goes on
        print(
            f"lensopt: note: {path} is upgraded from layout {version} to {SCHEMA_VERSION}, which no "
            f"older lensopt opens; {said}",
            file=sys.stderr,
        )


#: The most copies of one layout :func:`keep_before_upgrade` numbers before it gives up on a name.
MAX_COPIES = 1000


def _new_copy(path: Path, version: int) -> Path:
    """A new empty file, readable by its owner only, for the copy of ``path`` at layout ``version``:
    ``<name>.schema-<version><suffix>``, else the first of ``.2``, ``.3``, … not taken (a name
    another program takes meanwhile is passed over)."""
    for k in range(1, MAX_COPIES + 1):
        number = "" if k == 1 else f".{k}"
        kept = path.with_name(f"{path.stem}.schema-{version}{number}{path.suffix}")
        try:
            os.close(os.open(kept, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600))
        except FileExistsError:
            continue
        return kept
    raise FileExistsError(f"{MAX_COPIES} copies of layout {version} are there already; move some elsewhere")


def upgrade(conn: sqlite3.Connection, path) -> int:
    """Create the current layout in an empty database or migrate an older one, atomically.

    ``conn`` must be in autocommit mode (``isolation_level=None``). The version is re-read
    under the write lock, so two programs opening the same new file do not both create it.
    Returns the version found before the upgrade.
    """
    conn.execute("BEGIN IMMEDIATE")
    try:
        found = inspect(conn, path)
        if found == 0:
            for statement in CREATE_STATEMENTS:
                conn.execute(statement)
        else:
            for version in range(found, SCHEMA_VERSION):
                for statement in MIGRATIONS[version]:
                    conn.execute(statement)
        if found != SCHEMA_VERSION:
            conn.execute(f"PRAGMA user_version = {SCHEMA_VERSION:d}")
            conn.execute(f"PRAGMA application_id = {APPLICATION_ID:d}")
        conn.execute("COMMIT")
    except BaseException:
        if conn.in_transaction:
            conn.execute("ROLLBACK")
        raise
    return found


def select_list(conn: sqlite3.Connection, table: str) -> str | None:
    """The SELECT column list reading ``table`` in the current layout, whatever its version;
    ``None`` for a table of :data:`READ_ABSENT_TABLES` that this (older) file does not have."""
    present = {row[1] for row in conn.execute(f"PRAGMA table_info({table})").fetchall()}
    if not present and table in READ_ABSENT_TABLES:
        return None
    parts = []
    for column in COLUMNS[table]:
        if column in present:
            parts.append(column)
        elif (table, column) in READ_DEFAULTS:
            parts.append(f"{READ_DEFAULTS[(table, column)]} AS {column}")
        else:
            raise OlderSchemaError(
                f"table {table} lacks column {column}; open the database once without read-only mode to upgrade it"
            )
    return ", ".join(parts)
