"""Reading the session store: the sessions and their trials as records, and the rows another program
changed so that they cannot be read.

:class:`SessionReader` is the reading half of :class:`~lensopt.store.SessionStore` (which adds the
writing, in :mod:`lensopt.store.database`): the queries of :meth:`SessionReader.session`,
:meth:`~SessionReader.listing`, :meth:`~SessionReader.trials` and the other trial tables, each row
checked as it is read back into its record (:mod:`lensopt.store.records`,
:mod:`lensopt.store.session_records`). A row lensopt did not write as it is — a hand-edited database —
is a one-line :class:`DamagedSessionError` naming the session and what is wrong, or, in a listing, a
:class:`~lensopt.store.session_records.DamagedSession` that does not keep the others from being read.
"""

from __future__ import annotations

import contextlib
import json
import re
import sqlite3

from lensopt.errors import StoreError
from lensopt.store import schema
from lensopt.store.connection import StoreConnection
from lensopt.store.records import (
    DUEL_KIND,
    KINDS,
    LETTERS_KIND,
    RANKING_KIND,
    DuelTrialRecord,
    RankingTrialRecord,
    TrialRecord,
    check_int,
    stored_json,
)
from lensopt.store.session_records import DamagedSession, ResultRecord, SessionEvent, SessionInfo


class MissingSessionError(StoreError):
    """No session with the requested id."""


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


class SessionReader(StoreConnection):
    """The reading half of :class:`~lensopt.store.SessionStore`: sessions and trials read back as
    records from one SQLite file (opened by :class:`~lensopt.store.connection.StoreConnection`)."""

    def _require_session(self, conn: sqlite3.Connection, session_id: int) -> None:
        if conn.execute("SELECT 1 FROM sessions WHERE id = ?", (session_id,)).fetchone() is None:
            raise MissingSessionError(f"no session {session_id} in {self.path}; list them with `lensopt sessions`")

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
        results, damaged_results = self._results(conn, where, parameters)
        events, unreadable_events = self._events(conn, where, parameters)
        return [self._session_info(row, results, damaged_results, events, unreadable_events) for row in rows]

    @staticmethod
    def _session_info(
        row, results: dict, damaged_results: dict, events: dict, unreadable_events: dict
    ) -> SessionInfo | DamagedSession:
        """A stored session row as its :class:`SessionInfo` (without the events another program changed:
        ``unreadable_events`` says what they were), or a :class:`DamagedSession` naming what of it (or of
        its results) another program changed."""
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
                events=tuple(events.get(row[0], ())),
                unreadable_events=tuple(unreadable_events.get(row[0], ())),
            )
        except ValueError as exc:
            problem = _problem(exc)
        else:
            if row[0] not in damaged_results:
                return info
            problem = damaged_results[row[0]]
        return DamagedSession.of_row(row[0], problem, row[1], row[2], row[3], row[4], row[11])

    def _results(self, conn, where: str = "", parameters=()) -> tuple[dict[int, list[ResultRecord]], dict[int, str]]:
        """The stored results of the sessions ``where`` selects, by session id, one per eye (OD, OS;
        a session without eyes has one), none in an older read-only file without the table; and the
        problem of each session with a result another program changed (its first). Only those
        sessions' rows are read: a session read alone from a database of thousands read them all,
        so that exporting every session took time growing with their square."""
        if self._select["results"] is None:
            return {}, {}
        rows = conn.execute(
            f"SELECT {self._select['results']} FROM results "
            f"WHERE session_id IN (SELECT id FROM sessions {where}) ORDER BY id",
            parameters,
        ).fetchall()
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

    def _events(self, conn, where: str, parameters) -> tuple[dict[int, list[SessionEvent]], dict[int, list[str]]]:
        """The stored events of the sessions ``where`` selects (:class:`SessionEvent`, oldest first), none
        in an older read-only file without the table; and, by session, the problem of each event
        another program changed so that it cannot be read (``its event 2's detail is not the JSON
        lensopt wrote (…)``). Events are provenance beside the answers: an unreadable one is skipped,
        said, and does not keep its session's answers and results from being read."""
        if self._select["session_events"] is None:
            return {}, {}
        rows = conn.execute(
            f"SELECT {self._select['session_events']} FROM session_events "
            f"WHERE session_id IN (SELECT id FROM sessions {where}) ORDER BY id",
            parameters,
        ).fetchall()
        events: dict[int, list[SessionEvent]] = {}
        unreadable: dict[int, list[str]] = {}
        numbers: dict[int, int] = {}  # each session's events are numbered as stored, the skipped ones too
        for row in rows:
            number = numbers[row[0]] = numbers.get(row[0], 0) + 1
            found = events.setdefault(row[0], [])
            try:
                detail = _stored_document(row[4], f"event {number}'s detail")
                found.append(SessionEvent(event=row[2], at=row[1], after_trial=row[3], detail=detail))
            except (ValueError, TypeError) as exc:
                unreadable.setdefault(row[0], []).append(_problem(exc, f"its event {number}'s"))
        return events, unreadable

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

    def _reader(self, kind: str, owner: str):
        """The reader of a session kind's table, or a ValueError naming the kinds."""
        readers = {LETTERS_KIND: self.trials, DUEL_KIND: self.duel_trials, RANKING_KIND: self.ranking_trials}
        if kind not in readers:
            raise ValueError(f"SessionStore.{owner}: kind must be one of {', '.join(KINDS)}, got {kind!r}")
        return readers[kind]

    def kind_trials(self, kind: str, session_id: int, since_index: int = 0) -> list:
        """The trials of session kind ``kind`` (its table, :data:`lensopt.store.schema.TRIAL_TABLES`)
        with index > ``since_index``: :meth:`trials`, :meth:`duel_trials` or :meth:`ranking_trials`."""
        return self._reader(kind, "kind_trials")(session_id, since_index)

    def session_trials(self, session_id: int, since_index: int = 0) -> list:
        """The session's trials of its own kind: :meth:`trials`, :meth:`duel_trials` or
        :meth:`ranking_trials`."""
        kind = self.session(session_id).kind
        return self.kind_trials(kind if kind in KINDS else LETTERS_KIND, session_id, since_index)
