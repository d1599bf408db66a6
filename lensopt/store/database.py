"""The session store: an SQLite file holding sessions and every answered trial.

A session has a kind, its feedback mode: a ``letters`` session keeps its trials in ``trials``
(:meth:`SessionStore.append_trial`), a ``duel`` session in ``duel_trials``
(:meth:`SessionStore.append_duel_trial`), a ``ranking`` session in ``ranking_trials``
(:meth:`SessionStore.append_ranking_trial`); a trial of another kind is refused.
:meth:`SessionStore.kind_trials` and :meth:`SessionStore.append_kind_trial` read and append by
kind (the feedback modes of :mod:`lensopt.modes.registry` name their kind, the store its table).

The store is three modules. :mod:`lensopt.store.connection` holds the SQLite machinery: the base class
:class:`~lensopt.store.connection.StoreConnection` (opening or creating the private file and its
folders, its settings and why, lock retries, one-line errors, transactions, closing), the
connection's errors (:class:`~lensopt.store.DatabaseLockedError`,
:class:`~lensopt.store.ReadOnlyStoreError`) and :func:`~lensopt.store.default_db_path`.
:mod:`lensopt.store.reading` holds the reading: :class:`~lensopt.store.reading.SessionReader`, its
session and trial queries and their errors (:class:`~lensopt.store.MissingSessionError`,
:class:`~lensopt.store.DamagedSessionError`). This module holds :class:`SessionStore`, the reader and
its writing: new sessions, answered trials, results and statuses, and their errors
(:class:`DuplicateTrialError`, :class:`WrongKindError`).

Design (why; the connection's settings are explained in :mod:`lensopt.store.connection`):

- ``UNIQUE(session_id, idx)`` so a replay cannot record a trial twice.
- Plain rows and JSON text, never pickles: a database outlives the software that wrote it.
"""

from __future__ import annotations

import json
import sqlite3
import time
from collections.abc import Callable
from typing import Any

from lensopt import __version__
from lensopt.errors import StoreError
from lensopt.provenance import software
from lensopt.store import schema
from lensopt.store.reading import DamagedSessionError, MissingSessionError, SessionReader
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
from lensopt.store.session_records import EVENTS, STARTED, ResultRecord

__all__ = [
    "DEFAULT_TIMEOUT_S",
    "MAX_SEED",
    "DamagedSessionError",
    "DuplicateTrialError",
    "MissingSessionError",
    "SessionStore",
    "WrongKindError",
]

#: Seconds to wait for another program's write lock before giving up with a one-line error.
DEFAULT_TIMEOUT_S = 5.0

#: Largest seed a session can store (SQLite INTEGER is a signed 64-bit number).
MAX_SEED = 2**63 - 1


class DuplicateTrialError(StoreError):
    """A trial with this index is already recorded for the session."""


class WrongKindError(StoreError):
    """A trial of one kind (letters, duel) was recorded into a session of the other kind."""


class SessionStore(SessionReader):
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

    # -- writing ------------------------------------------------------------------------------

    def create_session(
        self,
        participant: str,
        protocol: dict,
        calibration: dict,
        optimizer_settings: dict,
        seed: int,
        kind: str = LETTERS_KIND,
        started: dict | None = None,
    ) -> int:
        """Record a new running session, and its ``started`` event with the software that runs it
        (:func:`lensopt.provenance.software`) and ``started``'s keys (the protocol file's path and
        SHA-256: ``protocol_file``); return its id."""
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
        to_json(owner, "started", started or {})
        now, ran = time.time(), software()  # computed before the write lock is taken (git runs once)
        with self._transaction(write=True) as conn:
            cursor = conn.execute(
                "INSERT INTO sessions (participant, kind, status, created_at, updated_at, seed, "
                "software_version, protocol, calibration, optimizer_settings) "
                "VALUES (?, ?, 'running', ?, ?, ?, ?, ?, ?, ?)",
                (participant, kind, now, now, seed, __version__, *documents),
            )
            session_id = int(cursor.lastrowid)
            self._insert_event(conn, session_id, STARTED, now, 0, {**(started or {}), "software": ran})
            return session_id

    def record_event(self, session_id: int, event: str, detail: dict) -> None:
        """Record ``event`` (:data:`~lensopt.store.session_records.EVENTS`) of session ``session_id``
        now, after its last stored trial, with ``detail`` (a JSON object; the software that runs is
        added as ``software``); durable on disk when this returns."""
        owner = "SessionStore.record_event"
        session_id = check_int(owner, "session_id", session_id, 1)
        if event not in EVENTS:
            raise ValueError(f"{owner}: event must be one of {', '.join(EVENTS)}, got {event!r}")
        to_json(owner, "detail", detail)
        detail = {**detail, "software": software()}  # before the write lock is taken
        with self._transaction(write=True) as conn:
            self._require_session(conn, session_id)
            (kind,) = conn.execute("SELECT kind FROM sessions WHERE id = ?", (session_id,)).fetchone()
            table = schema.TRIAL_TABLES.get(kind, "trials")
            (last,) = conn.execute(
                f"SELECT COALESCE(MAX(idx), 0) FROM {table} WHERE session_id = ?", (session_id,)
            ).fetchone()
            self._insert_event(conn, session_id, event, time.time(), int(last), detail)

    @staticmethod
    def _insert_event(conn, session_id: int, event: str, at: float, after_trial: int, detail: dict) -> None:
        columns = schema.COLUMNS["session_events"]
        conn.execute(
            f"INSERT INTO session_events ({', '.join(columns)}) VALUES ({', '.join('?' * len(columns))})",
            (session_id, at, event, after_trial, to_json("SessionStore", "detail", detail)),
        )

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
        self._insert("trials", LETTERS_KIND, session_id, record.index, row, eye=record.eye)

    def void_trial(self, session_id: int, index: int) -> bool:
        """Mark letter trial ``index`` of session ``session_id`` void (the clinician undid the answer):
        the row is kept, the optimizer is no longer told it. The result of the trial's eye is withdrawn
        (deleted: it is recomputed from the answers when the eye ends again) if it was computed from
        that answer — its ``n_trials`` counts it: the answer that ended the eye, undone at the end-of-eye
        or closing screen — in the same transaction, so that no stored result ever claims a void
        answer, whenever a kill comes. Whether a result was withdrawn; durable on disk when this returns."""
        session_id = check_int("SessionStore.void_trial", "session_id", session_id, 1)
        index = check_int("SessionStore.void_trial", "index", index, 1)
        with self._transaction(write=True) as conn:
            self._require_session(conn, session_id)
            row = conn.execute(
                "SELECT eye, void FROM trials WHERE session_id = ? AND idx = ?", (session_id, index)
            ).fetchone()
            cursor = conn.execute("UPDATE trials SET void = 1 WHERE session_id = ? AND idx = ?", (session_id, index))
            if row is None or cursor.rowcount != 1:
                raise StoreError(f"session {session_id} has no letter trial {index} to undo")
            # the answer's number in its eye (its answers not void, up to it): a result of that many
            # answers or more was computed from it (answers are only appended; a result, at an eye's end)
            (number,) = conn.execute(
                "SELECT COUNT(*) FROM trials WHERE session_id = ? AND eye IS ? AND void = 0 AND idx < ?",
                (session_id, row[0], index),
            ).fetchone()
            withdrawn = 0
            if not row[1]:  # voided again: nothing more to withdraw
                withdrawn = conn.execute(
                    "DELETE FROM results WHERE session_id = ? AND eye IS ? AND n_trials > ?",
                    (session_id, row[0], number),
                ).rowcount
            conn.execute("UPDATE sessions SET updated_at = ? WHERE id = ?", (time.time(), session_id))
            return bool(withdrawn)

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

    def _insert(self, table: str, kind: str, session_id: int, index: int, row: tuple, eye: str | None = None) -> None:
        """One trial row into ``table`` of a session of ``kind`` (a letter trial's of ``eye``), committed
        before returning; with it, in the same transaction, the stored result it supersedes is withdrawn
        (:func:`_withdraw_superseded_results`)."""
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
            _withdraw_superseded_results(conn, table, session_id, eye)
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

    def append_kind_trial(self, kind: str, session_id: int, record) -> None:
        """Record one answered trial of session kind ``kind``: :meth:`append_trial`,
        :meth:`append_duel_trial` or :meth:`append_ranking_trial`."""
        appenders: dict[str, Callable[[int, Any], None]] = {
            LETTERS_KIND: self.append_trial,
            DUEL_KIND: self.append_duel_trial,
            RANKING_KIND: self.append_ranking_trial,
        }
        if kind not in appenders:
            raise ValueError(f"SessionStore.append_kind_trial: kind must be one of {', '.join(KINDS)}, got {kind!r}")
        appenders[kind](session_id, record)


def _withdraw_superseded_results(conn, table: str, session_id: int, eye: str | None) -> None:
    """Delete the stored results of session ``session_id`` that an answer just added to ``table``
    supersedes: a result is stored at an eye's end and describes the answers the eye held then, so
    an answer added after it (a resume given more trials) leaves it describing fewer than the eye
    holds — what ``lensopt sessions`` and the record would show beside a dashboard that counts them
    all, if the resume were killed before the eye's end stored it anew. A letter trial's of its
    ``eye`` (answers not undone); a duel's or a ranking's session searches one eye, every row its."""
    if table == "trials":
        (held,) = conn.execute(
            "SELECT COUNT(*) FROM trials WHERE session_id = ? AND eye IS ? AND void = 0", (session_id, eye)
        ).fetchone()
        conn.execute("DELETE FROM results WHERE session_id = ? AND eye IS ? AND n_trials < ?", (session_id, eye, held))
        return
    (held,) = conn.execute(f"SELECT COUNT(*) FROM {table} WHERE session_id = ?", (session_id,)).fetchone()
    conn.execute("DELETE FROM results WHERE session_id = ? AND n_trials < ?", (session_id, held))
