"""The session store: an SQLite file holding sessions and every answered trial.

A session has a kind, its feedback mode: a ``letters`` session keeps its trials in ``trials``
(:meth:`SessionStore.append_trial`), a ``duel`` session in ``duel_trials``
(:meth:`SessionStore.append_duel_trial`), a ``ranking`` session in ``ranking_trials``
(:meth:`SessionStore.append_ranking_trial`); a trial of another kind is refused.
:meth:`SessionStore.kind_trials` and :meth:`SessionStore.append_kind_trial` read and append by
kind (the feedback modes of :mod:`lensopt.modes.registry` name their kind, the store its table).

The store is two modules. :mod:`lensopt.store.connection` holds the SQLite machinery: the base class
:class:`~lensopt.store.connection.StoreConnection` (opening or creating the private file and its
folders, its settings and why, lock retries, one-line errors, transactions, closing), the
connection's errors (:class:`~lensopt.store.DatabaseLockedError`,
:class:`~lensopt.store.ReadOnlyStoreError`) and :func:`~lensopt.store.default_db_path`. This module holds :class:`SessionStore`, its
session and trial queries and their errors (:class:`MissingSessionError`,
:class:`DuplicateTrialError`, :class:`WrongKindError`).

Design (why; the connection's settings are explained in :mod:`lensopt.store.connection`):

- ``UNIQUE(session_id, idx)`` so a replay cannot record a trial twice.
- Plain rows and JSON text, never pickles: a database outlives the software that wrote it.
"""

from __future__ import annotations

import contextlib
import json
import re
import sqlite3
import time

from lensopt import __version__
from lensopt.errors import StoreError
from lensopt.store import schema
from lensopt.store.connection import StoreConnection
from lensopt.store.records import (
    DUEL_KIND,
    KINDS,
    LETTERS_KIND,
    RANKING_KIND,
    STATUSES,
    DuelTrialRecord,
    RankingTrialRecord,
    TrialRecord,
    check_int,
    check_text,
    stored_json,
    to_json,
)
from lensopt.store.session_records import DamagedSession, ResultRecord, SessionInfo

#: Seconds to wait for another program's write lock before giving up with a one-line error.
DEFAULT_TIMEOUT_S = 5.0

#: Largest seed a session can store (SQLite INTEGER is a signed 64-bit number).
MAX_SEED = 2**63 - 1


class MissingSessionError(StoreError):
    """No session with the requested id."""


class DuplicateTrialError(StoreError):
    """A trial with this index is already recorded for the session."""


class WrongKindError(StoreError):
    """A trial of one kind (letters, duel) was recorded into a session of the other kind."""


class DamagedSessionError(StoreError):
    """A stored session lensopt cannot read as it wrote it: ``damaged`` (a
    :class:`~lensopt.store.session_records.DamagedSession`) names it and what is wrong."""

    def __init__(self, path, damaged: DamagedSession):
        self.damaged = damaged
        super().__init__(
            f"session {damaged.session_id} in {path} is damaged: {damaged.problem}; the database was changed "
            "by another program: restore it from a copy"
        )


#: The class that opens a record's validation message (``SessionInfo.status must be ...``,
#: ``DuelTrialRecord: both lenses ...``), replaced by the session's own words in a damaged row's problem.
_OWNER = re.compile(r"^[A-Z][A-Za-z]*(\.|: )")


def _problem(exc: Exception, whose: str = "its") -> str:
    """A record's validation error as the problem of a damaged row: ``SessionInfo.status must be one
    of …`` becomes ``its status must be one of …`` (``whose``: ``its trial 4's`` for a trial)."""
    text = str(exc)
    owner = whose[: -len("'s")] if whose.endswith("'s") else whose
    match = _OWNER.match(text)
    if match is None:  # already in the session's words ("its protocol is not ..."), or Python's
        return text if text.startswith("its ") else f"{owner}: {text}"
    rest = text[match.end() :]
    if match.group(1) == ".":  # a field: "its trial 4's letter must be ..."
        return f"{whose} {rest}"
    return f"{owner}: {rest}"  # the whole record: "its duel 4: both lenses have an axis ..."


def _stored_document(text, name: str):
    """A stored JSON text read back; a ValueError naming ``name`` if it is not the JSON lensopt wrote."""
    try:
        return json.loads(text)
    except (TypeError, ValueError) as exc:
        raise ValueError(f"its {name} is not the JSON lensopt wrote ({exc})") from None


class SessionStore(StoreConnection):
    """Sessions and trials in one SQLite file.

    ``SessionStore(path)`` opens (creating or upgrading) the database for writing;
    ``SessionStore(path, create=False)`` opens an existing lensopt database for writing (a resumed
    session: a missing file, or one holding no lensopt sessions, is a one-line error and nothing is
    created or written); ``SessionStore(path, readonly=True)`` opens an existing one for reading
    only. Use it as a context manager or call :meth:`close`. ``timeout_s`` (default :data:`DEFAULT_TIMEOUT_S`) is
    how long to wait for another program's lock before raising
    :class:`~lensopt.store.DatabaseLockedError`. Every problem a person can fix raises a
    :class:`~lensopt.errors.StoreError` subclass with a one-line message. One store may be shared
    between threads (calls are serialized).
    """

    def __init__(self, path, readonly: bool = False, timeout_s: float | None = None, create: bool = True):
        # the default is looked up here, in this module, at every opening (a test may lower it)
        if timeout_s is None:
            timeout_s = DEFAULT_TIMEOUT_S
        super().__init__(path, readonly, timeout_s, create)

    def _require_session(self, conn: sqlite3.Connection, session_id: int) -> None:
        if conn.execute("SELECT 1 FROM sessions WHERE id = ?", (session_id,)).fetchone() is None:
            raise MissingSessionError(f"no session {session_id} in {self.path}; list them with `lensopt sessions`")

    # -- writing ------------------------------------------------------------------------------

    def create_session(
        self,
        participant: str,
        protocol: dict,
        calibration: dict,
        optimizer_settings: dict,
        seed: int,
        kind: str = LETTERS_KIND,
    ) -> int:
        """Record a new running session and return its id."""
        owner = "SessionStore.create_session"
        check_text(owner, "participant", participant)
        if kind not in KINDS:
            raise ValueError(f"{owner}: kind must be one of {', '.join(KINDS)}, got {kind!r}")
        seed = check_int(owner, "seed", seed, 0)
        if seed > MAX_SEED:
            raise ValueError(f"{owner}: seed must be <= 2**63 - 1, got {seed}")
        documents = [
            to_json(owner, name, value)
            for name, value in (
                ("protocol", protocol),
                ("calibration", calibration),
                ("optimizer_settings", optimizer_settings),
            )
        ]
        now = time.time()
        with self._transaction(write=True) as conn:
            cursor = conn.execute(
                "INSERT INTO sessions (participant, kind, status, created_at, updated_at, seed, "
                "software_version, protocol, calibration, optimizer_settings) "
                "VALUES (?, ?, 'running', ?, ?, ?, ?, ?, ?, ?)",
                (participant, kind, now, now, seed, __version__, *documents),
            )
            return int(cursor.lastrowid)

    def append_trial(self, session_id: int, record: TrialRecord) -> None:
        """Record one answered letter trial; it is durable on disk when this returns."""
        session_id = check_int("SessionStore.append_trial", "session_id", session_id, 1)
        if not isinstance(record, TrialRecord):
            raise ValueError(f"SessionStore.append_trial: record must be a TrialRecord, got {record!r}")
        row = (
            session_id,
            record.index,
            record.sphere_d,
            record.cylinder_d,
            record.letter_logmar,
            record.letter,
            record.response,
            int(record.correct),
            record.rt_s,
            record.presented_at,
            record.answered_at,
            record.extra_json(),
            record.axis_deg,
            int(record.void),
            record.eye,
        )
        self._insert("trials", LETTERS_KIND, session_id, record.index, row)

    def void_trial(self, session_id: int, index: int) -> None:
        """Mark letter trial ``index`` of session ``session_id`` void (the clinician undid the answer):
        the row is kept, the optimizer is no longer told it. Durable on disk when this returns."""
        session_id = check_int("SessionStore.void_trial", "session_id", session_id, 1)
        index = check_int("SessionStore.void_trial", "index", index, 1)
        with self._transaction(write=True) as conn:
            self._require_session(conn, session_id)
            cursor = conn.execute("UPDATE trials SET void = 1 WHERE session_id = ? AND idx = ?", (session_id, index))
            if cursor.rowcount != 1:
                raise StoreError(f"session {session_id} has no letter trial {index} to undo")
            conn.execute("UPDATE sessions SET updated_at = ? WHERE id = ?", (time.time(), session_id))

    def keep_note_after_last_trial(self, session_id: int, note: str) -> int:
        """Keep a clinician's ``note`` typed after the last answer of letter session ``session_id``
        (the session quit, paused or ended before the next answer, with which a note is otherwise
        stored) in that last trial's ``extra`` as ``note_after`` (the last not undone) (after any kept before, ``; ``);
        its index. Durable on disk when this returns; a StoreError when the session has no letter
        trial to keep it with."""
        session_id = check_int("SessionStore.keep_note_after_last_trial", "session_id", session_id, 1)
        check_text("SessionStore.keep_note_after_last_trial", "note", note)
        with self._transaction(write=True) as conn:
            self._require_session(conn, session_id)
            row = conn.execute(
                "SELECT idx, extra FROM trials WHERE session_id = ? AND void = 0 ORDER BY idx DESC LIMIT 1",
                (session_id,),
            ).fetchone()
            if row is None:
                raise StoreError(f"session {session_id} has no answered letter trial to keep the note with")
            extra = stored_json(row[1], f"the extra data of trial {row[0]} of session {session_id}")
            if not isinstance(extra, dict):
                raise StoreError(f"the extra data of trial {row[0]} of session {session_id} is not a JSON object")
            earlier = extra.get("note_after")
            extra["note_after"] = note if not earlier else f"{earlier}; {note}"
            conn.execute(
                "UPDATE trials SET extra = ? WHERE session_id = ? AND idx = ?",
                (json.dumps(extra), session_id, row[0]),
            )
            conn.execute("UPDATE sessions SET updated_at = ? WHERE id = ?", (time.time(), session_id))
            return int(row[0])

    def append_duel_trial(self, session_id: int, record: DuelTrialRecord) -> None:
        """Record one answered duel of a ``duel`` session; durable on disk when this returns."""
        session_id = check_int("SessionStore.append_duel_trial", "session_id", session_id, 1)
        if not isinstance(record, DuelTrialRecord):
            raise ValueError(f"SessionStore.append_duel_trial: record must be a DuelTrialRecord, got {record!r}")
        row = (
            session_id,
            record.index,
            record.first_sphere_d,
            record.first_cylinder_d,
            record.second_sphere_d,
            record.second_cylinder_d,
            record.letter_logmar,
            record.letters,
            record.answer,
            record.rt_s,
            record.presented_at,
            record.answered_at,
            record.extra_json(),
            record.first_axis_deg,
            record.second_axis_deg,
        )
        self._insert("duel_trials", DUEL_KIND, session_id, record.index, row)

    def append_ranking_trial(self, session_id: int, record: RankingTrialRecord) -> None:
        """Record one answered ranking of a ``ranking`` session; durable on disk when this returns."""
        session_id = check_int("SessionStore.append_ranking_trial", "session_id", session_id, 1)
        if not isinstance(record, RankingTrialRecord):
            raise ValueError(f"SessionStore.append_ranking_trial: record must be a RankingTrialRecord, got {record!r}")
        row = (
            session_id,
            record.index,
            record.lenses_json(),
            record.letter_logmar,
            record.letters,
            record.order_json(),
            record.rt_s,
            record.presented_at,
            record.answered_at,
            record.extra_json(),
            record.axes_json(),
        )
        self._insert("ranking_trials", RANKING_KIND, session_id, record.index, row)

    def _insert(self, table: str, kind: str, session_id: int, index: int, row: tuple) -> None:
        """One trial row into ``table`` of a session of ``kind``, committed before returning."""
        columns = ("session_id",) + schema.COLUMNS[table]
        with self._transaction(write=True) as conn:
            self._require_session(conn, session_id)
            (found,) = conn.execute("SELECT kind FROM sessions WHERE id = ?", (session_id,)).fetchone()
            if found != kind:
                raise WrongKindError(
                    f"session {session_id} is a {found} session; a {kind} trial cannot be recorded in it"
                )
            try:
                conn.execute(
                    f"INSERT INTO {table} ({', '.join(columns)}) VALUES ({', '.join('?' * len(columns))})",
                    row,
                )
            except sqlite3.IntegrityError:
                (last,) = conn.execute(f"SELECT MAX(idx) FROM {table} WHERE session_id = ?", (session_id,)).fetchone()
                raise DuplicateTrialError(
                    f"session {session_id} already has trial {index}; a trial is recorded "
                    f"once, so continue at index {last + 1}"
                ) from None
            conn.execute("UPDATE sessions SET updated_at = ? WHERE id = ?", (time.time(), session_id))

    def set_result(self, session_id: int, result: ResultRecord) -> None:
        """Record the prescription session ``session_id`` reports for ``result.eye`` (replacing an
        earlier one for that eye: a session resumed and finished again reports anew); durable on disk
        when this returns."""
        session_id = check_int("SessionStore.set_result", "session_id", session_id, 1)
        if not isinstance(result, ResultRecord):
            raise ValueError(f"SessionStore.set_result: result must be a ResultRecord, got {result!r}")
        row = (
            session_id,
            result.prescription,
            result.sphere_d,
            result.cylinder_d,
            result.axis_deg,
            result.predicted_acuity_logmar,
            result.confidence,
            result.n_trials,
            result.intervals_json(),
            result.recorded_at or time.time(),
            result.software_version or __version__,
            result.eye,
        )
        columns = schema.COLUMNS["results"]
        with self._transaction(write=True) as conn:
            self._require_session(conn, session_id)
            conn.execute("DELETE FROM results WHERE session_id = ? AND eye IS ?", (session_id, result.eye))
            conn.execute(f"INSERT INTO results ({', '.join(columns)}) VALUES ({', '.join('?' * len(columns))})", row)
            conn.execute("UPDATE sessions SET updated_at = ? WHERE id = ?", (time.time(), session_id))

    def set_status(self, session_id: int, status: str) -> None:
        """Mark a session ``running``, ``finished`` or ``aborted``."""
        if status not in STATUSES:
            raise ValueError(f"SessionStore.set_status: status must be one of {', '.join(STATUSES)}, got {status!r}")
        with self._transaction(write=True) as conn:
            self._require_session(conn, session_id)
            conn.execute(
                "UPDATE sessions SET status = ?, updated_at = ? WHERE id = ?",
                (status, time.time(), session_id),
            )

    # -- reading ------------------------------------------------------------------------------

    def _session_rows(self, conn, where: str = "", parameters=()) -> list[SessionInfo | DamagedSession]:
        counts = " + ".join(
            f"(SELECT COUNT(*) FROM {table} AS t WHERE t.session_id = sessions.id)"
            for table in schema.TRIAL_TABLES.values()
            if self._select[table] is not None
        )
        # letter answers undone (schema 6's void; an older file read as it is has none)
        trials = self._select["trials"]
        undone = (
            "(SELECT COUNT(*) FROM trials AS t WHERE t.session_id = sessions.id AND t.void = 1)"
            if trials is not None and "0 AS void" not in trials
            else "0"
        )
        rows = conn.execute(
            f"SELECT {self._select['sessions']}, {counts}, {undone} FROM sessions {where} ORDER BY id",
            parameters,
        ).fetchall()
        results, damaged_results = self._results(conn)
        return [self._session_info(row, results, damaged_results) for row in rows]

    @staticmethod
    def _session_info(row, results: dict, damaged_results: dict) -> SessionInfo | DamagedSession:
        """A stored session row as its :class:`SessionInfo`, or a :class:`DamagedSession` naming what
        of it (or of its results) another program changed."""
        try:
            info = SessionInfo(
                session_id=row[0],
                participant=row[1],
                kind=row[2],
                status=row[3],
                created_at=row[4],
                updated_at=row[5],
                seed=row[6],
                software_version=row[7],
                protocol=_stored_document(row[8], "protocol"),
                calibration=_stored_document(row[9], "calibration"),
                optimizer_settings=_stored_document(row[10], "optimizer settings"),
                n_trials=row[11],
                result=results[row[0]][0] if row[0] in results else None,
                results=tuple(results.get(row[0], ())),
                n_undone=row[12],
            )
        except ValueError as exc:
            problem = _problem(exc)
        else:
            if row[0] not in damaged_results:
                return info
            problem = damaged_results[row[0]]
        return DamagedSession.of_row(row[0], problem, row[1], row[2], row[3], row[4], row[11])

    def _results(self, conn) -> tuple[dict[int, list[ResultRecord]], dict[int, str]]:
        """Every stored result by session id, one per eye (OD, OS; a session without eyes has one),
        none in an older read-only file without the table; and the problem of each session with a
        result another program changed (its first)."""
        if self._select["results"] is None:
            return {}, {}
        rows = conn.execute(f"SELECT {self._select['results']} FROM results ORDER BY id").fetchall()
        by_eye: dict[int, dict] = {}
        damaged: dict[int, str] = {}
        for row in rows:  # the latest row of a session and eye wins
            try:
                intervals = _stored_document(row[8], "result's intervals")
                if not isinstance(intervals, dict):
                    raise ValueError(f"its result's intervals must be a JSON object, got {row[8]!r}")
                by_eye.setdefault(row[0], {})[row[11]] = ResultRecord(
                    prescription=row[1],
                    sphere_d=row[2],
                    cylinder_d=row[3],
                    axis_deg=row[4],
                    predicted_acuity_logmar=row[5],
                    confidence=row[6],
                    n_trials=row[7],
                    intervals=intervals,
                    recorded_at=row[9],
                    software_version=row[10],
                    eye=row[11],
                )
            except (ValueError, TypeError) as exc:  # TypeError: an interval that is no [low, high] pair
                damaged.setdefault(row[0], _problem(exc, "its result's"))
        ordered = {sid: [eyes[e] for e in sorted(eyes, key=lambda e: e or "")] for sid, eyes in by_eye.items()}
        return ordered, damaged

    def _damaged(self, found: SessionInfo | DamagedSession) -> SessionInfo:
        """``found`` if it is a readable session, else its one-line :class:`DamagedSessionError`."""
        if isinstance(found, DamagedSession):
            raise DamagedSessionError(self.path, found)
        return found

    @contextlib.contextmanager
    def _reading_trial(self, session_id: int, whose: str):
        """A stored trial row read back: its validation error becomes a one-line
        :class:`DamagedSessionError` naming the session and the trial (``whose``: ``its trial 4's``)."""
        try:
            yield
        except (ValueError, TypeError) as exc:
            raise DamagedSessionError(self.path, DamagedSession(session_id, _problem(exc, whose))) from None

    def session(self, session_id: int) -> SessionInfo:
        """The session ``session_id`` (a :class:`MissingSessionError` if there is none, also for an id
        no SQLite row can have: not an integer in 1 … 2**63 − 1)."""
        if isinstance(session_id, bool) or not isinstance(session_id, int) or not 1 <= session_id < 2**63:
            raise MissingSessionError(f"no session {session_id} in {self.path}; list them with `lensopt sessions`")
        with self._transaction(write=False) as conn:
            found = self._session_rows(conn, "WHERE id = ?", (session_id,))
        if not found:
            raise MissingSessionError(f"no session {session_id} in {self.path}; list them with `lensopt sessions`")
        return self._damaged(found[0])

    def sessions(self) -> list[SessionInfo]:
        """All sessions, oldest first (a :class:`DamagedSessionError` naming the first that another
        program changed so that it cannot be read: :meth:`listing` reads the others all the same)."""
        return [self._damaged(found) for found in self.listing()]

    def listing(self) -> list[SessionInfo | DamagedSession]:
        """All sessions, oldest first: each a :class:`SessionInfo`, or a
        :class:`~lensopt.store.session_records.DamagedSession` for one that another program changed so that it
        cannot be read (its id, what is wrong, and what of it could be read); one damaged row does not
        keep the others from being read."""
        with self._transaction(write=False) as conn:
            return self._session_rows(conn)

    def latest_session_id(self, *, skip_empty_running: bool = False) -> int | None:
        """The id of the most recently created session, or ``None`` if there is none.

        ``skip_empty_running``: pass over sessions still ``running`` with no trial (what a session
        leaves behind when its program died before the first answer; ``lensopt dashboard
        --latest`` offers the latest session with something to show)."""
        where = ""
        if skip_empty_running:
            tables = [table for table in schema.TRIAL_TABLES.values() if self._select[table] is not None]
            any_trial = " OR ".join(f"EXISTS (SELECT 1 FROM {t} WHERE {t}.session_id = sessions.id)" for t in tables)
            where = f" WHERE status != 'running' OR {any_trial}"
        with self._transaction(write=False) as conn:
            (latest,) = conn.execute(f"SELECT MAX(id) FROM sessions{where}").fetchone()
        return latest

    def trials(self, session_id: int, since_index: int = 0) -> list[TrialRecord]:
        """The session's trials with index > ``since_index``, in index order."""
        since_index = check_int("SessionStore.trials", "since_index", since_index, 0)
        with self._transaction(write=False) as conn:
            self._require_session(conn, session_id)
            rows = conn.execute(
                f"SELECT {self._select['trials']} FROM trials WHERE session_id = ? AND idx > ? ORDER BY idx",
                (session_id, since_index),
            ).fetchall()
        return self._records(
            session_id,
            "trial",
            rows,
            lambda row: TrialRecord(
                index=row[0],
                sphere_d=row[1],
                cylinder_d=row[2],
                letter_logmar=row[3],
                letter=row[4],
                response=row[5],
                correct=bool(row[6]),
                rt_s=row[7],
                presented_at=row[8],
                answered_at=row[9],
                extra=stored_json(row[10], f"the extra data of trial {row[0]} of session {session_id}"),
                axis_deg=row[11],
                void=bool(row[12]),
                eye=row[13],
            ),
        )

    def duel_trials(self, session_id: int, since_index: int = 0) -> list[DuelTrialRecord]:
        """The session's duels with index > ``since_index``, in index order (none in a letter
        session, nor in an older read-only file without the duel table)."""
        since_index = check_int("SessionStore.duel_trials", "since_index", since_index, 0)
        with self._transaction(write=False) as conn:
            self._require_session(conn, session_id)
            if self._select["duel_trials"] is None:
                return []
            rows = conn.execute(
                f"SELECT {self._select['duel_trials']} FROM duel_trials WHERE session_id = ? AND idx > ? ORDER BY idx",
                (session_id, since_index),
            ).fetchall()
        return self._records(
            session_id,
            "duel",
            rows,
            lambda row: DuelTrialRecord(
                index=row[0],
                first_sphere_d=row[1],
                first_cylinder_d=row[2],
                second_sphere_d=row[3],
                second_cylinder_d=row[4],
                letter_logmar=row[5],
                letters=row[6],
                answer=row[7],
                rt_s=row[8],
                presented_at=row[9],
                answered_at=row[10],
                extra=stored_json(row[-3], f"the extra data of duel {row[0]} of session {session_id}"),
                first_axis_deg=row[-2],
                second_axis_deg=row[-1],
            ),
        )

    def ranking_trials(self, session_id: int, since_index: int = 0) -> list[RankingTrialRecord]:
        """The session's rankings with index > ``since_index``, in index order (none in another
        kind of session, nor in an older read-only file without the ranking table)."""
        since_index = check_int("SessionStore.ranking_trials", "since_index", since_index, 0)
        with self._transaction(write=False) as conn:
            self._require_session(conn, session_id)
            if self._select["ranking_trials"] is None:
                return []
            rows = conn.execute(
                f"SELECT {self._select['ranking_trials']} FROM ranking_trials "
                "WHERE session_id = ? AND idx > ? ORDER BY idx",
                (session_id, since_index),
            ).fetchall()
        return self._records(session_id, "ranking", rows, lambda row: RankingTrialRecord.from_row(*row))

    def _records(self, session_id: int, noun: str, rows, build) -> list:
        """``build(row)`` of each stored trial row; a row another program changed so that it cannot be
        read is a one-line :class:`DamagedSessionError` naming the session and the ``noun`` (trial, duel)."""
        records = []
        for row in rows:
            with self._reading_trial(session_id, f"its {noun} {row[0]}'s"):
                records.append(build(row))
        return records

    def _by_kind(self, kind: str, owner: str):
        """The (reader, appender) of a session kind's table, or a ValueError naming the kinds."""
        methods = {
            LETTERS_KIND: (self.trials, self.append_trial),
            DUEL_KIND: (self.duel_trials, self.append_duel_trial),
            RANKING_KIND: (self.ranking_trials, self.append_ranking_trial),
        }
        if kind not in methods:
            raise ValueError(f"SessionStore.{owner}: kind must be one of {', '.join(KINDS)}, got {kind!r}")
        return methods[kind]

    def kind_trials(self, kind: str, session_id: int, since_index: int = 0) -> list:
        """The trials of session kind ``kind`` (its table, :data:`lensopt.store.schema.TRIAL_TABLES`)
        with index > ``since_index``: :meth:`trials`, :meth:`duel_trials` or :meth:`ranking_trials`."""
        return self._by_kind(kind, "kind_trials")[0](session_id, since_index)

    def append_kind_trial(self, kind: str, session_id: int, record) -> None:
        """Record one answered trial of session kind ``kind``: :meth:`append_trial`,
        :meth:`append_duel_trial` or :meth:`append_ranking_trial`."""
        self._by_kind(kind, "append_kind_trial")[1](session_id, record)

    def session_trials(self, session_id: int, since_index: int = 0) -> list:
        """The session's trials of its own kind: :meth:`trials`, :meth:`duel_trials` or
        :meth:`ranking_trials`."""
        kind = self.session(session_id).kind
        return self.kind_trials(kind if kind in KINDS else LETTERS_KIND, session_id, since_index)
