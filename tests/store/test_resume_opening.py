"""A store opened to resume a session (``SessionStore(path, create=False)``) opens an existing lensopt
database only: a missing file, a missing folder, an empty file or a hard link of a live database whose
layout is still in the live one's ``-wal`` is refused in one line, and nothing is created or written.

``lensopt run --resume N --db PATH`` opens its store so (``lensopt.experiment.session.run_session``):
a relative ``--db`` typed in the wrong folder leaves no stray database behind.
"""

from __future__ import annotations

import hashlib
import os
import re
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest

from lensopt.cli import main
from lensopt.errors import StoreError
from lensopt.store import SessionStore, TrialRecord

PROJECT_ROOT = Path(__file__).resolve().parents[2]

#: Keeps a database open with a session in it, its layout still in the -wal (no checkpoint), until
#: a line comes on stdin.
LIVE_WRITER = """
import sys
sys.path.insert(0, sys.argv[2])
from lensopt.store import SessionStore
store = SessionStore(sys.argv[1])
store.create_session("P001", {}, {}, {}, 3)
print("ready", flush=True)
sys.stdin.readline()
store.close()
"""


def trial(index):
    return TrialRecord(index, 0.25, -0.5, 0.3, "K", "K", True, 0.9, 1.7e9 + index, 1.7e9 + index + 0.9)


def listing(folder: Path) -> dict[str, str]:
    return {p.name: hashlib.sha256(p.read_bytes()).hexdigest() for p in sorted(folder.iterdir())}


def test_a_store_that_must_exist_creates_neither_the_file_nor_its_folder(tmp_path):
    path = tmp_path / "not" / "there" / "sessions.db"
    with pytest.raises(StoreError, match=r"^no session database at .*sessions\.db; use --db"):
        SessionStore(path, create=False)
    assert list(tmp_path.iterdir()) == []


def test_a_relative_path_that_must_exist_names_the_folder_it_was_looked_for_in(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    with pytest.raises(StoreError, match=rf"no session database at nothere\.db \(in {re.escape(str(tmp_path))}\)"):
        SessionStore("nothere.db", create=False)
    assert list(tmp_path.iterdir()) == []


def test_an_empty_file_that_must_hold_sessions_is_refused_and_left_as_it_was(tmp_path):
    path = tmp_path / "empty.db"
    path.touch()
    with pytest.raises(StoreError, match=r"empty\.db holds no lensopt sessions; use --db"):
        SessionStore(path, create=False)
    assert listing(tmp_path) == {"empty.db": hashlib.sha256(b"").hexdigest()}


def test_a_hard_link_of_a_live_database_is_refused_without_writing_anything(tmp_path):
    """The live database's layout is in its -wal; its hard link's file (the same inode) reads as empty:
    opened to resume, it was given a layout of its own (written into the live database's file when
    checkpointed). It is refused, and no -wal or -shm is made beside it."""
    live, link = tmp_path / "live.db", tmp_path / "link.db"
    writer = subprocess.Popen(
        [sys.executable, "-c", LIVE_WRITER, str(live), str(PROJECT_ROOT)],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert writer.stdout is not None and writer.stdin is not None
        assert writer.stdout.readline().strip() == "ready"
        os.link(live, link)
        before = listing(tmp_path)
        with pytest.raises(StoreError, match=r"link\.db holds no lensopt sessions"):
            SessionStore(link, create=False)
        assert listing(tmp_path) == before  # no link.db-wal, no link.db-shm, every byte as it was
        writer.stdin.write("\n")
        writer.stdin.flush()
    finally:
        writer.wait(timeout=60)
    conn = sqlite3.connect(live)
    try:
        assert conn.execute("PRAGMA integrity_check").fetchall() == [("ok",)]
    finally:
        conn.close()
    with SessionStore(live, readonly=True) as store:
        assert [info.participant for info in store.sessions()] == ["P001"]


def test_a_store_that_must_exist_opens_an_existing_database_and_records_in_it(tmp_path):
    path = tmp_path / "s.db"
    with SessionStore(path) as store:
        sid = store.create_session("P001", {}, {}, {}, 3)
        store.append_trial(sid, trial(1))
    with SessionStore(path, create=False) as store:
        store.append_trial(sid, trial(2))
        store.set_status(sid, "finished")
    with SessionStore(path, readonly=True) as store:
        assert [t.index for t in store.trials(sid)] == [1, 2]
        assert store.session(sid).status == "finished"


def test_resuming_from_a_database_that_is_not_there_leaves_no_file(tmp_path, monkeypatch, capsys):
    """``lensopt run --resume 1 --db nothere.db`` in the wrong folder: one line, exit 2, and no new
    database (it left a 40 KB one with the layout)."""
    monkeypatch.chdir(tmp_path)
    assert main(["run", "--resume", "1", "--db", "nothere.db"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "Traceback" not in err
    assert "no session database at nothere.db" in err and "--db" in err
    assert list(tmp_path.iterdir()) == []
