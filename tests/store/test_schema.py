"""Schema versions: a hand-built version-1 database is read and migrated without losing rows."""

import errno
import sqlite3
import stat

import pytest

from lensopt.errors import StoreError
from lensopt.store import SCHEMA_VERSION, SessionStore, TrialRecord, schema

V1_DDL = (
    """CREATE TABLE sessions (
        id INTEGER PRIMARY KEY AUTOINCREMENT, participant TEXT NOT NULL,
        status TEXT NOT NULL DEFAULT 'running', created_at REAL NOT NULL, updated_at REAL NOT NULL,
        seed INTEGER NOT NULL, software_version TEXT NOT NULL, protocol TEXT NOT NULL,
        calibration TEXT NOT NULL, optimizer_settings TEXT NOT NULL)""",
    """CREATE TABLE trials (
        id INTEGER PRIMARY KEY,
        session_id INTEGER NOT NULL REFERENCES sessions(id) ON DELETE CASCADE,
        idx INTEGER NOT NULL CHECK (idx >= 1), sphere_d REAL NOT NULL, cylinder_d REAL NOT NULL,
        letter_logmar REAL NOT NULL, letter TEXT NOT NULL, response TEXT,
        correct INTEGER NOT NULL CHECK (correct IN (0, 1)), rt_s REAL,
        presented_at REAL NOT NULL, answered_at REAL NOT NULL, UNIQUE (session_id, idx))""",
)


def write_v1_database(path):
    """A database as the first layout wrote it: no sessions.kind, no trials.extra."""
    conn = sqlite3.connect(path)
    with conn:
        for statement in V1_DDL:
            conn.execute(statement)
        conn.execute(
            "INSERT INTO sessions (participant, status, created_at, updated_at, seed, software_version, "
            "protocol, calibration, optimizer_settings) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
            (
                "old-P7",
                "finished",
                1.6e9,
                1.6e9 + 60.5,
                99,
                "0.0.9",
                '{"rule": "bald"}',
                '{"screen_width_cm": 40.0, "screen_width_px": 1280, "distance_cm": 300.0}',
                '{"rule": "bald"}',
            ),
        )
        conn.executemany(
            "INSERT INTO trials (session_id, idx, sphere_d, cylinder_d, letter_logmar, letter, response, "
            "correct, rt_s, presented_at, answered_at) VALUES (1, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
            [
                (1, -1.25, 0.5, 0.3, "K", "K", 1, 0.81, 1.6e9 + 1, 1.6e9 + 1.81),
                (2, 0.1 + 0.2, -1 / 3, -0.1, "H", None, 0, None, 1.6e9 + 3, 1.6e9 + 9),
            ],
        )
        conn.execute("PRAGMA user_version = 1")
    conn.close()


EXPECTED_V1_TRIALS = [
    TrialRecord(1, -1.25, 0.5, 0.3, "K", "K", True, 0.81, 1.6e9 + 1, 1.6e9 + 1.81, {}),
    TrialRecord(2, 0.1 + 0.2, -1 / 3, -0.1, "H", None, False, None, 1.6e9 + 3, 1.6e9 + 9, {}),
]


def user_version(path):
    conn = sqlite3.connect(path)
    try:
        return conn.execute("PRAGMA user_version").fetchone()[0]
    finally:
        conn.close()


def layout(conn):
    return {
        table: sorted(tuple(row[1:]) for row in conn.execute(f"PRAGMA table_info({table})"))
        for table in ("sessions", "trials")
    }


def test_version_one_database_is_migrated_keeping_its_rows(tmp_path):
    path = tmp_path / "old.db"
    write_v1_database(path)
    with SessionStore(path) as store:
        info = store.session(1)
        assert (info.participant, info.kind, info.status, info.seed) == ("old-P7", "letters", "finished", 99)
        assert info.calibration["screen_width_px"] == 1280 and info.software_version == "0.0.9"
        assert store.trials(1) == EXPECTED_V1_TRIALS
        store.append_trial(1, TrialRecord(3, 0.0, 0.0, 0.2, "Z", "Z", True, 0.5, 2e9, 2e9 + 1, {"k": 1}))
        new = store.create_session("P8", {}, {}, {}, 1)
    assert user_version(path) == SCHEMA_VERSION
    with SessionStore(path, readonly=True) as store:
        assert store.trials(1)[:2] == EXPECTED_V1_TRIALS
        assert store.trials(1)[2].extra == {"k": 1}
        assert store.session(new).participant == "P8"


def test_migrated_layout_equals_a_freshly_created_one(tmp_path):
    old, fresh = tmp_path / "old.db", tmp_path / "fresh.db"
    write_v1_database(old)
    SessionStore(old).close()
    SessionStore(fresh).close()
    a, b = sqlite3.connect(old), sqlite3.connect(fresh)
    try:
        assert layout(a) == layout(b)
        assert a.execute("PRAGMA application_id").fetchone() == b.execute("PRAGMA application_id").fetchone()
    finally:
        a.close()
        b.close()


def test_read_only_store_reads_a_version_one_database_without_upgrading_it(tmp_path):
    path = tmp_path / "old.db"
    write_v1_database(path)
    before = path.read_bytes()
    with SessionStore(path, readonly=True) as store:
        assert store.session(1).kind == "letters"
        assert store.trials(1) == EXPECTED_V1_TRIALS
    assert path.read_bytes() == before
    assert user_version(path) == 1


def test_failed_migration_leaves_the_old_database_intact(tmp_path, monkeypatch):
    path = tmp_path / "old.db"
    write_v1_database(path)
    broken = schema.MIGRATIONS[1] + ("ALTER TABLE no_such_table ADD COLUMN x",)
    monkeypatch.setitem(schema.MIGRATIONS, 1, broken)
    with pytest.raises(StoreError, match="no_such_table"):
        SessionStore(path)
    assert user_version(path) == 1
    conn = sqlite3.connect(path)
    try:
        columns = {row[1] for row in conn.execute("PRAGMA table_info(trials)")}
        assert "extra" not in columns  # the first statement was rolled back with the rest
        assert conn.execute("SELECT COUNT(*) FROM trials").fetchone()[0] == 2
    finally:
        conn.close()
    monkeypatch.undo()
    with SessionStore(path) as store:
        assert store.trials(1) == EXPECTED_V1_TRIALS


def test_every_older_version_has_a_migration():
    assert sorted(schema.MIGRATIONS) == list(range(1, SCHEMA_VERSION))


def test_new_database_is_marked_as_lensopt_with_the_current_version(tmp_path):
    path = tmp_path / "s.db"
    SessionStore(path).close()
    conn = sqlite3.connect(path)
    try:
        assert conn.execute("PRAGMA application_id").fetchone()[0] == schema.APPLICATION_ID
        assert conn.execute("PRAGMA user_version").fetchone()[0] == SCHEMA_VERSION
    finally:
        conn.close()


def _release(version: str) -> tuple[int, ...]:
    return tuple(int(part) for part in version.split("."))


def test_every_new_layout_came_with_a_newer_release_and_this_is_it():
    """A layout written without a new version could not be installed over the old one by pip
    (an equal version installs nothing), and the older lensopt's refusal would name no release."""
    import lensopt

    layouts = sorted(schema.FIRST_WRITTEN_BY)
    assert layouts[-1] == SCHEMA_VERSION  # the current layout names the release that writes it
    releases = [_release(schema.FIRST_WRITTEN_BY[v]) for v in layouts]
    assert releases == sorted(set(releases))  # each layout a strictly newer release
    assert _release(lensopt.__version__) >= releases[-1]


def _rows(path, table):
    conn = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
    try:
        return conn.execute(f"SELECT * FROM {table} ORDER BY id").fetchall()
    finally:
        conn.close()


def _version(path):
    conn = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
    try:
        return conn.execute("PRAGMA user_version").fetchone()[0]
    finally:
        conn.close()


def test_an_older_database_is_kept_as_it_was_beside_its_upgrade_and_said_once(tmp_path, make_schema_4_database, capsys):
    """Found by an audit of old databases: the first write by a newer lensopt upgraded the file in
    place, silently, and no older lensopt could open it again, not even for the sessions it never
    touched. Now a copy of the file as it was is kept beside it, once, and the upgrade says so."""
    path = make_schema_4_database(tmp_path / "clinic.db")
    sessions, trials = _rows(path, "sessions"), _rows(path, "trials")
    with SessionStore(path) as store:
        store.set_status(1, "aborted")
    kept = tmp_path / "clinic.schema-4.db"
    note = capsys.readouterr().err
    assert note == (
        f"lensopt: note: {path} is upgraded from layout 4 to {SCHEMA_VERSION}, which no older lensopt opens; "
        f"the file as it was is kept as {kept}\n"
    )
    assert _version(path) == SCHEMA_VERSION and _version(kept) == 4
    assert _rows(kept, "sessions") == sessions and _rows(kept, "trials") == trials  # as it was, every row
    assert stat.S_IMODE(kept.stat().st_mode) == 0o600  # patient data: its owner's only
    with SessionStore(path) as store:  # upgraded: no second copy, nothing said
        assert store.session(1).status == "aborted"
    assert capsys.readouterr().err == "" and sorted(p.name for p in tmp_path.glob("clinic.schema-*")) == [kept.name]


def test_a_new_database_keeps_no_copy_and_a_copy_that_cannot_be_made_is_said(
    tmp_path, make_schema_4_database, capsys, monkeypatch
):
    with SessionStore(tmp_path / "new.db") as store:
        store.create_session("P01", {}, {}, {}, 1)
    assert capsys.readouterr().err == "" and [p.name for p in tmp_path.iterdir() if "schema" in p.name] == []
    path = make_schema_4_database(tmp_path / "old.db")

    def full_disk(*args, **kwargs):
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(schema.os, "open", full_disk)
    with SessionStore(path) as store:
        assert store.session(1).participant
    said = capsys.readouterr().err
    assert said.endswith(
        "which no older lensopt opens; no copy of it as it was could be kept ([Errno 28] No space left on device)\n"
    )
    assert _version(path) == SCHEMA_VERSION and not (tmp_path / "old.schema-4.db").exists()


def test_a_file_brought_back_to_an_older_layout_and_upgraded_again_is_copied_again_and_said(
    tmp_path, make_schema_4_database, capsys
):
    """A clinic goes back to its older lensopt with the copy, records there, then opens the file with
    this one again: the second upgrade said nothing and made no copy, so the only file an older
    lensopt opens lacked every session recorded meanwhile (a review of 7 Dec 2026)."""
    path = make_schema_4_database(tmp_path / "clinic.db")
    with SessionStore(path) as store:
        store.set_status(1, "aborted")
    first = tmp_path / "clinic.schema-4.db"
    capsys.readouterr()
    for name in ("clinic.db-wal", "clinic.db-shm"):
        (tmp_path / name).unlink(missing_ok=True)
    path.write_bytes(first.read_bytes())  # back to the older lensopt, from the copy
    conn = sqlite3.connect(path)
    with conn:
        conn.execute("UPDATE sessions SET participant = 'recorded meanwhile' WHERE id = 1")  # the older lensopt's work
    conn.close()
    with SessionStore(path) as store:
        assert store.session(1).participant == "recorded meanwhile"
    second = tmp_path / "clinic.schema-4.2.db"
    assert capsys.readouterr().err.endswith(f"the file as it was is kept as {second}\n")
    assert _rows(second, "sessions") != _rows(first, "sessions") and _version(second) == 4
    assert "recorded meanwhile" in str(_rows(second, "sessions")) and _version(path) == SCHEMA_VERSION


def test_a_copy_another_program_upgraded_meanwhile_is_removed_and_said(tmp_path, make_schema_4_database, capsys):
    """Another program upgrading the same file between this one's look at its layout and its copy:
    the copy, named layout 4, held layout 10, and the note called it the file as it was."""
    path = make_schema_4_database(tmp_path / "clinic.db")
    with SessionStore(tmp_path / "upgraded.db") as store:  # what the other program leaves: the newest layout
        store.create_session("P01", {}, {}, {}, 1)
    upgraded = sqlite3.connect(tmp_path / "upgraded.db")

    class Upgraded:  # this program's connection, which reads the file as the other program left it
        def backup(self, target):
            upgraded.backup(target)

    schema.keep_before_upgrade(Upgraded(), path, 4)
    upgraded.close()
    said = capsys.readouterr().err
    assert said.endswith(
        f"no copy of it as it was could be kept (another program upgraded {path} to layout {SCHEMA_VERSION} meanwhile)\n"
    ), said
    assert not list(tmp_path.glob("clinic.schema-*"))
