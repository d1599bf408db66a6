"""Private by default: session databases 0600, the folders lensopt makes for them 0700, exports
0600, whatever the umask; `lensopt sessions` warns once about a database others can read."""

import os
import stat

import pytest

from lensopt.cli import main
from lensopt.store import SessionStore


def mode(path) -> int:
    return stat.S_IMODE(os.stat(path).st_mode)


@pytest.fixture
def umask_022():
    previous = os.umask(0o022)
    try:
        yield
    finally:
        os.umask(previous)


def new_database(path):
    with SessionStore(path) as store:
        store.create_session("P001", {}, {}, {"rule": "random"}, 0)
        assert mode(path) == 0o600
        for sidecar in ("-wal", "-shm"):  # SQLite gives them the database's mode
            assert mode(f"{path}{sidecar}") == 0o600
    return path


def test_a_new_database_and_the_folders_made_for_it_are_private_under_umask_022(tmp_path, umask_022):
    path = new_database(tmp_path / "made" / "for" / "it" / "sessions.db")
    assert mode(path) == 0o600
    for folder in ("made", "made/for", "made/for/it"):
        assert mode(tmp_path / folder) == 0o700


def test_an_existing_folder_keeps_its_mode(tmp_path, umask_022):
    folder = tmp_path / "shared"
    folder.mkdir(mode=0o755)
    os.chmod(folder, 0o755)
    new_database(folder / "sessions.db")
    assert mode(folder) == 0o755


def test_an_existing_database_keeps_its_mode(tmp_path, umask_022, make_schema_4_database):
    path = make_schema_4_database(tmp_path / "schema-4.db")
    os.chmod(path, 0o644)
    with SessionStore(path) as store:
        assert store.sessions()
    assert mode(path) == 0o644


def test_an_export_file_is_private_under_umask_022(tmp_path, umask_022, capsys):
    db = new_database(tmp_path / "sessions.db")
    out = tmp_path / "export.csv"
    assert main(["export", "1", "--db", str(db), "-o", str(out)]) == 0
    assert mode(out) == 0o600
    assert out.read_text(encoding="utf-8").startswith("session_id")


def test_an_export_over_a_readable_file_makes_it_private(tmp_path, umask_022, capsys):
    db = new_database(tmp_path / "sessions.db")
    out = tmp_path / "export.json"
    out.write_text("old")
    os.chmod(out, 0o644)
    assert main(["export", "1", "--format", "json", "--db", str(db), "-o", str(out)]) == 0
    assert mode(out) == 0o600


def test_sessions_warns_once_when_the_database_is_readable_by_others(tmp_path, umask_022, capsys):
    db = new_database(tmp_path / "sessions.db")
    os.chmod(db, 0o644)
    assert main(["sessions", "--db", str(db)]) == 0
    captured = capsys.readouterr()
    assert captured.err.splitlines() == [
        f"warning: {db} is readable by other users (mode 0644); make it private with `chmod 600 {db}`"
    ]
    assert "P001" in captured.out


def test_sessions_of_a_private_database_prints_no_warning(tmp_path, umask_022, capsys):
    db = new_database(tmp_path / "sessions.db")
    assert main(["sessions", "--db", str(db), "--json"]) == 0
    assert capsys.readouterr().err == ""


@pytest.mark.skipif(not hasattr(os, "geteuid") or os.geteuid() != 0, reason="giving a file to another user needs root")
def test_the_warning_for_a_database_of_another_user_asks_its_owner(tmp_path, umask_022, capsys):
    """Only the owner (or root) can chmod a file: a database owned by someone else names its owner."""
    db = new_database(tmp_path / "sessions.db")
    os.chmod(db, 0o644)
    os.chown(db, 65534, -1)  # nobody's (the tests run as root in CI)
    assert main(["sessions", "--db", str(db)]) == 0
    (line,) = capsys.readouterr().err.splitlines()
    assert line == (
        f"warning: {db} is readable by other users (mode 0644); ask its owner (user id 65534) to make it "
        f"private (`chmod 600 {db}`)"
    )


def test_a_path_longer_than_sqlite_opens_is_named_as_that_and_leaves_no_empty_file(tmp_path):
    """Found by a user audit: a 617-byte path was "unable to open database file; check that its folder
    exists", which it did, and the failed open left a 0-byte database file behind."""
    from lensopt.errors import StoreError
    from lensopt.store import SessionStore
    from lensopt.store.connection import SQLITE_MAX_PATH_BYTES

    folder = tmp_path
    while len(os.fsencode(str(folder))) <= SQLITE_MAX_PATH_BYTES:
        folder = folder / ("d" * 200)
    folder.mkdir(parents=True)
    db = folder / "new.db"
    with pytest.raises(StoreError) as refused, SessionStore(db):
        pass
    said = str(refused.value)
    assert f"its full path is {len(os.fsencode(str(db)))} bytes long, longer than SQLite opens (512)" in said
    assert said.endswith("use --db with a shorter path")
    assert not db.exists()
