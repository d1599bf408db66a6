"""The session store: round trips, durability, concurrency and the errors a person can fix."""

import dataclasses
import os
import signal
import sqlite3
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from lensopt import __version__
from lensopt.errors import StoreError
from lensopt.store import (
    SCHEMA_VERSION,
    DatabaseLockedError,
    DuplicateTrialError,
    MissingSessionError,
    NewerSchemaError,
    NotALensoptDatabaseError,
    ReadOnlyStoreError,
    SessionInfo,
    SessionStore,
    TrialRecord,
    default_db_path,
)

PROJECT_ROOT = Path(__file__).resolve().parents[2]

CALIBRATION = {"screen_width_cm": 52.7, "screen_width_px": 1920, "screen_height_px": 1080, "distance_cm": 400.0}
PROTOCOL = {"rule": "ucb-ald", "trials": 60, "bounds": {"sphere_d": [-4, 4]}}
SETTINGS = {"rule": "ucb-ald", "seed": 11, "sphere_bounds_d": [-4.0, 4.0]}


def make_trial(index, **changes):
    values = dict(
        index=index,
        sphere_d=0.1 * index - 1 / 3,
        cylinder_d=-2 / 7 + 0.01 * index,
        letter_logmar=0.123456789012345 * (index % 5) - 0.3,
        letter="KHNZ"[index % 4],
        response="KHNZ"[(index * 3) % 4],
        correct=index % 3 != 0,
        rt_s=0.5 + index / 997,
        presented_at=1.7e9 + index * 2.000001,
        answered_at=1.7e9 + index * 2.000001 + 0.9,
        extra={"decision_ms": 3.2 + index, "note": None, "nested": {"xs": [1, 2.5]}},
    )
    values.update(changes)
    return TrialRecord(**values)


def new_session(store, participant="P001", seed=11):
    return store.create_session(participant, PROTOCOL, CALIBRATION, SETTINGS, seed)


def test_sessions_and_trials_round_trip_exactly(tmp_path):
    trials = [make_trial(i) for i in range(1, 8)]
    trials.append(make_trial(8, response=None, rt_s=None, correct=False, extra={}))
    trials.append(make_trial(9, response="pass", sphere_d=2.0**-40, cylinder_d=-1e300))
    with SessionStore(tmp_path / "s.db") as store:
        first = new_session(store)
        second = store.create_session("P002", {}, {}, {"rule": "random"}, 2**63 - 1, kind="letters")
        for trial in trials:
            store.append_trial(first, trial)
    with SessionStore(tmp_path / "s.db") as store:
        assert store.trials(first) == trials
        assert store.trials(second) == []
        assert store.trials(first, since_index=7) == trials[7:]
        assert store.trials(first)[7].response is None and store.trials(first)[7].rt_s is None
        info = store.session(first)
        assert isinstance(info, SessionInfo)
        assert (info.session_id, info.participant, info.kind, info.status) == (first, "P001", "letters", "running")
        assert (info.seed, info.software_version, info.n_trials) == (11, __version__, 9)
        assert (info.protocol, info.calibration, info.optimizer_settings) == (PROTOCOL, CALIBRATION, SETTINGS)
        assert info.updated_at >= info.created_at
        assert [s.session_id for s in store.sessions()] == [first, second]
        assert store.session(second).seed == 2**63 - 1
        assert store.latest_session_id() == second


def test_set_status_is_stored_and_validated(tmp_path):
    with SessionStore(tmp_path / "s.db") as store:
        sid = new_session(store)
        store.set_status(sid, "finished")
        assert store.session(sid).status == "finished"
        with pytest.raises(ValueError, match="status must be one of running, finished, aborted"):
            store.set_status(sid, "done")
        with pytest.raises(MissingSessionError, match="no session 42"):
            store.set_status(42, "aborted")


def test_missing_session_raises_a_one_line_store_error(tmp_path):
    with SessionStore(tmp_path / "s.db") as store:
        assert store.latest_session_id() is None
        for call in (lambda: store.session(3), lambda: store.trials(3), lambda: store.append_trial(3, make_trial(1))):
            with pytest.raises(StoreError, match=r"no session 3 .*lensopt sessions") as caught:
                call()
            assert "\n" not in str(caught.value)


def test_duplicate_trial_index_is_rejected_with_a_clear_error(tmp_path):
    with SessionStore(tmp_path / "s.db") as store:
        sid = new_session(store)
        for i in (1, 2, 3):
            store.append_trial(sid, make_trial(i))
        with pytest.raises(DuplicateTrialError, match=r"already has trial 2.*continue at index 4"):
            store.append_trial(sid, make_trial(2, letter="Z"))
        assert store.trials(sid) == [make_trial(i) for i in (1, 2, 3)]
        other = new_session(store, "P002")
        store.append_trial(other, make_trial(2))  # the same index in another session is fine


@pytest.mark.parametrize("how", ["deleted", "replaced"])
def test_a_database_deleted_or_replaced_while_open_refuses_the_next_answer(tmp_path, how):
    """SQLite writes on to a deleted file it holds open: a session would end "40 trials stored" with
    nothing on disk. The next write is refused in one line instead (the session's answer then goes
    to its rescue file), and a file put back is written again."""
    path = tmp_path / "s.db"
    with SessionStore(path) as store:
        sid = new_session(store)
        store.append_trial(sid, make_trial(1))
        moved = tmp_path / "moved.db"
        os.rename(path, moved)
        if how == "replaced":
            path.write_bytes(b"")
        with pytest.raises(StoreError, match=r"was deleted, moved or replaced while lensopt had it open") as caught:
            store.append_trial(sid, make_trial(2))
        assert "\n" not in str(caught.value)
        if how == "deleted":
            os.rename(moved, path)  # put back: the same file, written again
            store.append_trial(sid, make_trial(2))
    if how == "deleted":
        with SessionStore(path, readonly=True) as store:
            assert [t.index for t in store.trials(sid)] == [1, 2]


def test_appended_trial_is_visible_to_a_second_connection_immediately(tmp_path):
    path = tmp_path / "s.db"
    with SessionStore(path) as writer:
        sid = new_session(writer)
        with SessionStore(path, readonly=True) as reader:
            assert reader.trials(sid) == []
            before = reader.data_version()
            writer.append_trial(sid, make_trial(1))
            assert reader.trials(sid) == [make_trial(1)]
            assert reader.session(sid).n_trials == 1
            assert reader.data_version() != before
            unchanged = reader.data_version()
            assert reader.data_version() == unchanged
            own_before = writer.data_version()
            writer.append_trial(sid, make_trial(2))
            assert writer.data_version() != own_before
            assert reader.trials(sid, since_index=1) == [make_trial(2)]


WRITER_SCRIPT = textwrap.dedent(
    """
    import sys, time
    sys.path.insert(0, sys.argv[3])
    from lensopt.store import SessionStore, TrialRecord
    store = SessionStore(sys.argv[1])
    sid = store.create_session("P", {}, {}, {}, 0)
    for i in range(1, int(sys.argv[2]) + 1):
        store.append_trial(sid, TrialRecord(i, 0.25 * i, -0.5, 0.1, "K", "K", True, 0.7, 1.0 + i, 1.5 + i))
    print(sid, flush=True)
    time.sleep(120)
    """
)


def test_writer_killed_with_sigkill_leaves_exactly_the_appended_trials(tmp_path):
    path, k = tmp_path / "s.db", 17
    child = subprocess.Popen(
        [sys.executable, "-c", WRITER_SCRIPT, str(path), str(k), str(PROJECT_ROOT)],
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        sid = int(child.stdout.readline())
    finally:
        os.kill(child.pid, signal.SIGKILL)
        child.wait(timeout=30)
        child.stdout.close()
    assert child.returncode == -signal.SIGKILL
    assert Path(str(path) + "-wal").exists()  # never closed cleanly: the trials live in the WAL
    with SessionStore(path, readonly=True) as store:
        trials = store.trials(sid)
    assert [t.index for t in trials] == list(range(1, k + 1))
    assert trials[-1].sphere_d == 0.25 * k and trials[-1].answered_at == 1.5 + k


def test_locked_database_gives_store_error_quickly(tmp_path):
    path = tmp_path / "s.db"
    with SessionStore(path) as store:
        sid = new_session(store)
    holder = sqlite3.connect(path, isolation_level=None)
    holder.execute("BEGIN EXCLUSIVE")
    try:
        with (
            SessionStore(path, timeout_s=0.05) as store,
            pytest.raises(DatabaseLockedError, match="is locked by another program; close it or use --db"),
        ):
            store.append_trial(sid, make_trial(1))
    finally:
        holder.execute("ROLLBACK")
        holder.close()
    with SessionStore(path) as store:  # nothing half-written
        assert store.trials(sid) == []


def test_database_locked_while_opening_gives_store_error(tmp_path):
    path = tmp_path / "fresh.db"
    holder = sqlite3.connect(path, isolation_level=None)  # rollback journal: readers are locked out too
    holder.execute("BEGIN EXCLUSIVE")
    try:
        with pytest.raises(DatabaseLockedError, match=str(path)):
            SessionStore(path, timeout_s=0.05)
    finally:
        holder.execute("ROLLBACK")
        holder.close()


def test_garbage_file_gives_store_error_naming_the_file(tmp_path):
    path = tmp_path / "notes.db"
    path.write_bytes(b"these are my notes, not a database\n" * 200)
    for readonly in (False, True):
        with pytest.raises(NotALensoptDatabaseError, match=rf"{path} is not a lensopt .*--db.*backup"):
            SessionStore(path, readonly=readonly)
    assert path.read_bytes() == b"these are my notes, not a database\n" * 200


def test_truncated_database_gives_store_error(tmp_path):
    path = tmp_path / "s.db"
    with SessionStore(path) as store:
        sid = new_session(store)
        for i in range(1, 41):
            store.append_trial(sid, make_trial(i, extra={"padding": "x" * 1000}))
    data = path.read_bytes()
    assert len(data) > 8 * 4096
    path.write_bytes(data[: len(data) // 2])
    for readonly in (True, False):
        with pytest.raises(NotALensoptDatabaseError, match="damaged"):
            SessionStore(path, readonly=readonly)


def test_another_programs_database_is_refused_and_left_untouched(tmp_path):
    path = tmp_path / "other.db"
    with sqlite3.connect(path) as conn:
        conn.execute("CREATE TABLE inventory (item TEXT)")
    conn.close()
    before = path.read_bytes()
    with pytest.raises(NotALensoptDatabaseError, match="inventory"):
        SessionStore(path)
    assert path.read_bytes() == before


def test_newer_schema_gives_store_error_asking_to_upgrade(tmp_path):
    path = tmp_path / "s.db"
    SessionStore(path).close()
    with sqlite3.connect(path) as conn:
        conn.execute(f"PRAGMA user_version = {SCHEMA_VERSION + 1}")
    conn.close()
    for readonly in (False, True):
        with pytest.raises(
            NewerSchemaError,
            match=rf"newer lensopt \(schema {SCHEMA_VERSION + 1} > {SCHEMA_VERSION}\); upgrade lensopt",
        ):
            SessionStore(path, readonly=readonly)


def test_read_only_store_refuses_writes_and_never_writes(tmp_path):
    path = tmp_path / "s.db"
    with SessionStore(path) as store:
        sid = new_session(store)
        store.append_trial(sid, make_trial(1))
    before = path.read_bytes()
    with SessionStore(path, readonly=True) as store:
        for call in (
            lambda: new_session(store),
            lambda: store.append_trial(sid, make_trial(2)),
            lambda: store.set_status(sid, "finished"),
        ):
            with pytest.raises(ReadOnlyStoreError, match="read-only"):
                call()
        # Even raw SQL on its connection cannot write.
        with pytest.raises(sqlite3.OperationalError, match="attempt to write a readonly database"):
            store._conn.execute("DELETE FROM trials")
        assert store.trials(sid) == [make_trial(1)]
    assert path.read_bytes() == before


def test_read_only_store_of_a_missing_file_raises_and_creates_nothing(tmp_path):
    path = tmp_path / "nothing-here.db"
    with pytest.raises(StoreError, match=r"no session database at .*--db"):
        SessionStore(path, readonly=True)
    assert not path.exists()


def test_writer_creates_missing_folders_and_uses_wal(tmp_path):
    path = tmp_path / "deep" / "er" / "s.db"
    with SessionStore(path) as store:
        assert store._conn.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
        assert store._conn.execute("PRAGMA synchronous").fetchone()[0] == 2  # FULL
        assert store._conn.execute("PRAGMA foreign_keys").fetchone()[0] == 1
    assert path.is_file()


def test_closed_store_raises_store_error(tmp_path):
    store = SessionStore(tmp_path / "s.db")
    store.close()
    store.close()
    with pytest.raises(StoreError, match="closed"):
        store.sessions()


@pytest.mark.parametrize(
    "changes, field",
    [
        ({"index": 0}, "index"),
        ({"index": True}, "index"),
        ({"sphere_d": float("nan")}, "sphere_d"),
        ({"letter_logmar": None}, "letter_logmar"),
        ({"letter": ""}, "letter"),
        ({"response": ""}, "response"),
        ({"correct": "yes"}, "correct"),
        ({"rt_s": -0.1}, "rt_s"),
        ({"extra": {"bad": float("inf")}}, "extra"),
        ({"extra": {"obj": object()}}, "extra"),
        ({"extra": [1]}, "extra"),
    ],
)
def test_trial_record_rejects_bad_values_naming_the_field(changes, field):
    with pytest.raises(ValueError, match=rf"TrialRecord\.{field}"):
        dataclasses.replace(make_trial(1), **changes)


def test_create_session_rejects_bad_values_naming_the_field(tmp_path):
    with SessionStore(tmp_path / "s.db") as store:
        with pytest.raises(ValueError, match="participant"):
            store.create_session("", {}, {}, {}, 0)
        with pytest.raises(ValueError, match="calibration"):
            store.create_session("P", {}, {"distance_cm": float("nan")}, {}, 0)
        with pytest.raises(ValueError, match="protocol"):
            store.create_session("P", "not a dict", {}, {}, 0)
        with pytest.raises(ValueError, match="seed"):
            store.create_session("P", {}, {}, {}, -1)
        with pytest.raises(ValueError, match="seed"):
            store.create_session("P", {}, {}, {}, 2**63)
        assert store.sessions() == []


def test_default_db_path_follows_the_environment(monkeypatch, tmp_path):
    monkeypatch.setenv("LENSOPT_DB", str(tmp_path / "x.db"))
    assert default_db_path() == tmp_path / "x.db"
    monkeypatch.delenv("LENSOPT_DB")
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "data"))
    assert default_db_path() == tmp_path / "data" / "lensopt" / "sessions.db"
    monkeypatch.delenv("XDG_DATA_HOME")
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    assert default_db_path() == tmp_path / "home" / ".local" / "share" / "lensopt" / "sessions.db"
    # a relative XDG_DATA_HOME is ignored, as the XDG spec says: the database moved with the folder
    # the command ran in (found by a user audit)
    monkeypatch.setenv("XDG_DATA_HOME", "relx")
    assert default_db_path() == tmp_path / "home" / ".local" / "share" / "lensopt" / "sessions.db"


def test_a_session_read_alone_reads_its_own_results_not_every_sessions(tmp_path, monkeypatch):
    """Found by an audit of a year's database: each session read built every session's results, so
    exporting all of 1,000 sessions took two minutes (time growing with their square)."""
    from lensopt.store import ResultRecord, reading

    path = tmp_path / "s.db"
    with SessionStore(path) as store:
        for k in range(1, 31):
            sid = store.create_session(f"P{k:03d}", {"rule": "ucb-ald"}, {}, {}, k)
            result = ResultRecord(f"-{k / 4:.2f} / -0.50 x 180", -k / 4, -0.5, 180.0, None, 0.96, 1, {"m_d": [0, 1]})
            store.set_result(sid, result)
    built = []
    real = reading.ResultRecord

    def counting(*args, **kwargs):
        built.append(kwargs.get("sphere_d"))
        return real(*args, **kwargs)

    monkeypatch.setattr(reading, "ResultRecord", counting)
    with SessionStore(path) as store:
        info = store.session(17)
        assert built == [-17 / 4] and info.result.sphere_d == -17 / 4
        built.clear()
        assert [i.result.sphere_d for i in store.listing()] == [-k / 4 for k in range(1, 31)]
        assert len(built) == 30  # the listing reads each once
