"""A database file read-only for its reader in a folder the reader can write (``chmod 444
sessions.db``, or a colleague's file in a shared folder).

SQLite would create the WAL file's ``-shm`` and ``-wal`` beside it on a read, read-only like the
file, and leave them there; once the file was made writable again, ``lensopt run`` failed on them
("attempt to write a readonly database"). The read-only commands now read such a file as it is and
leave nothing beside it, and a writer that meets such leftovers (from an older lensopt, or another
program) says which file is read-only and how to make it writable. The commands run as a user who
cannot write what the test makes read-only (``user``, tests/cli/conftest.py: ``nobody`` as root).
"""

from __future__ import annotations

import sys
from pathlib import Path

from test_readonly_writes_cli import _assert_one_line_error, _assert_writes, _database, _digest, _owned, _resume

#: What an older lensopt, the sqlite3 shell or a database browser did on reading the file: a plain
#: read-only opening, which creates the -shm and -wal beside it.
PLAIN_READ = "import sqlite3, sys; sqlite3.connect(f'file:{sys.argv[1]}?mode=ro', uri=True).execute('select count(*) from sessions').fetchone()"


def test_a_read_only_database_in_a_writable_folder_is_read_and_nothing_is_left_beside_it(user):
    folder = user.folder("readonly-file-reading")
    db = _owned(user, _database(folder), 0o444)
    before = _digest(folder)
    listing = user.lensopt("sessions", "--db", db)
    assert listing.returncode == 0, listing.stderr
    assert "P05" in listing.stdout.splitlines()[1]
    exported = user.lensopt("export", "1", "--db", db)
    assert exported.returncode == 0, exported.stderr
    assert len(exported.stdout.strip().splitlines()) == 1 + 4  # header and the session's four trials
    assert _digest(folder) == before  # no -shm, no -wal: the file alone, byte for byte

    # made writable again, the session resumes its writing at once
    _owned(user, db, 0o600)
    _assert_writes(user, db)


def test_a_writer_names_the_read_only_leftovers_beside_its_database_and_the_advice_works(user):
    folder = user.folder("readonly-leftovers")
    db = _owned(user, _database(folder), 0o444)
    assert user.run([sys.executable, "-c", PLAIN_READ, str(db)]).returncode == 0
    shm = Path(f"{db}-shm")
    assert shm.exists() and Path(f"{db}-wal").exists()  # left behind, read-only like the file was
    _owned(user, db, 0o600)
    before = _digest(folder)

    error = _assert_one_line_error(_resume(user, db), "run")
    assert f"database {db} cannot be written: its sessions.db-shm is read-only for this user (mode 0444" in error
    assert f"make it writable with `chmod u+w {shm}`" in error
    assert "the database file is read-only" not in error
    after = _digest(folder)
    assert {name: after[name] for name in ("sessions.db", "sessions.db-shm")} == {
        name: before[name] for name in ("sessions.db", "sessions.db-shm")
    }
    assert after["sessions.db-wal"].split()[0] == before["sessions.db-wal"].split()[0]  # empty still

    # as it says (the empty -wal SQLite gave the database's mode itself when it opened it)
    assert user.run(["chmod", "u+w", str(shm)]).returncode == 0
    _assert_writes(user, db)
