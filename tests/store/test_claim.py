"""One program per session: a session being run is claimed (lensopt.store.claim)."""

import errno
import fcntl
import os
import threading
import time

import pytest

from lensopt.errors import StoreError
from lensopt.store import claim
from lensopt.store.claim import (
    INTERRUPTED,
    claim_path,
    claim_session,
    is_claimed,
    lock_file,
    lock_holder,
    session_status,
)


def test_a_claimed_session_is_refused_to_a_second_claim_and_free_once_released(tmp_path, monkeypatch):
    monkeypatch.setattr(claim, "CLAIM_RETRY_S", 0.05)  # the refusal need not wait the whole second
    db = tmp_path / "s.db"
    with claim_session(db, 3):
        assert claim_path(db, 3).read_text() == str(os.getpid())  # who holds it, for the message
        held = rf"session 3 is being run by another lensopt \(process {os.getpid()}\)"
        with pytest.raises(StoreError, match=held), claim_session(db, 3):
            pass
        with claim_session(db, 4):  # another session is another claim
            pass
    with claim_session(db, 3):  # released: free again
        pass


def probe_lock(db, session_id: int) -> int:
    """An open descriptor of the session's lock file holding the shared lock :func:`is_claimed`
    takes for an instant (a ``lensopt sessions`` or a dashboard looking at the session)."""
    fd = os.open(claim_path(db, session_id), os.O_RDWR | os.O_CREAT, 0o600)
    fcntl.flock(fd, fcntl.LOCK_SH | fcntl.LOCK_NB)
    return fd


def test_a_claim_that_meets_a_probe_waits_it_out_instead_of_refusing(tmp_path):
    """The race: a probe's shared lock taken at the very instant of a resume's claim. The probe here
    holds it 0.2 s (far longer than a real one), from another open file, as another program would."""
    db = tmp_path / "s.db"
    fd = probe_lock(db, 5)
    release = threading.Timer(0.2, os.close, args=(fd,))  # closing the file lets the lock go
    release.start()
    try:
        started = time.monotonic()
        with claim_session(db, 5):
            waited_s = time.monotonic() - started
            assert claim_path(db, 5).read_text() == str(os.getpid())
            assert is_claimed(db, 5) is True
    finally:
        release.join()
    assert 0.15 < waited_s < claim.CLAIM_RETRY_S  # it waited for the probe, and no longer


def test_a_claim_held_by_a_program_is_refused_after_the_retry_time_not_before(tmp_path, monkeypatch):
    monkeypatch.setattr(claim, "CLAIM_RETRY_S", 0.3)
    db = tmp_path / "s.db"
    with claim_session(db, 6):
        started = time.monotonic()
        with pytest.raises(StoreError, match="session 6 is being run by another lensopt"), claim_session(db, 6):
            pass
        assert 0.3 <= time.monotonic() - started < 2.0


def test_the_status_shown_is_running_only_while_a_program_claims_the_session(tmp_path, monkeypatch):
    db = tmp_path / "s.db"
    assert session_status(db, 7, "running") == INTERRUPTED  # never claimed here: its program is gone
    with claim_session(db, 7):
        assert session_status(db, 7, "running") == "running"
        assert session_status(db, 8, "running") == INTERRUPTED  # another session, not claimed
    assert session_status(db, 7, "running") == INTERRUPTED  # its program ended without finishing it
    assert session_status(db, 7, "finished") == "finished"  # a status stored at the end is the status
    assert session_status(db, 7, "aborted") == "stopped"  # ... in the words the run and the record use
    assert session_status(None, 7, "running") == "running"  # no database to look beside: as stored
    monkeypatch.setattr(claim, "is_claimed", lambda db_path, session_id: None)  # no locks here (Windows, NFS)
    assert session_status(db, 7, "running") == "running"


def test_a_claim_that_ends_removes_its_lock_file_so_none_pile_up_beside_the_database(tmp_path):
    db = tmp_path / "s.db"
    for session_id in range(1, 6):
        with claim_session(db, session_id):
            assert claim_path(db, session_id).exists()
    assert sorted(p.name for p in tmp_path.iterdir()) == []  # nothing left beside the database
    left = claim_path(db, 9)  # a killed program's file: it stays until the session's next claim ends
    left.write_text("12345")
    assert is_claimed(db, 9) is False
    with claim_session(db, 9):
        assert left.read_text() == str(os.getpid())
    assert not left.exists()


def test_a_claim_waiting_for_one_that_ends_holds_the_next_file_of_that_name_alone(tmp_path):
    """The race removal opens: a second claim opened the file, waits for its lock; the first ends,
    removing the file, and a third claim creates a new one. The second must notice that the file it
    locked is gone and lock the new file, or the second and third would both run the session."""
    db = tmp_path / "s.db"
    holding = threading.Event()
    done = threading.Event()
    errors = []

    def second():
        try:
            with claim_session(db, 4):
                holding.set()
                done.wait(5)
        except Exception as exc:  # noqa: BLE001 - reported by the main thread
            errors.append(exc)
            holding.set()

    first = claim_session(db, 4)
    first.__enter__()
    waiter = threading.Thread(target=second)
    waiter.start()
    time.sleep(0.1)  # the second claim has opened the first's file and is trying its lock
    first.__exit__(None, None, None)  # removes the file, then lets its lock go
    try:
        assert holding.wait(5) and not errors
        assert claim_path(db, 4).read_text() == str(os.getpid())
        assert is_claimed(db, 4) is True  # the file of that name is the one held
        with pytest.raises(StoreError, match="session 4 is being run by another lensopt"), claim_session(db, 4):
            pass
    finally:
        done.set()
        waiter.join()
    assert not claim_path(db, 4).exists()


def test_a_full_disk_leaves_the_holders_process_id_unwritten_and_the_claim_held(tmp_path, monkeypatch):
    """A resume on a disk still full got an OSError traceback from writing the process id; the claim
    does not need it, and the store's own write then says, in one line, that the disk is full."""

    def full(*args):
        raise OSError(errno.ENOSPC, "No space left on device")

    db = tmp_path / "s.db"
    monkeypatch.setattr(claim.os, "pwrite", full)
    with claim_session(db, 3):
        assert is_claimed(db, 3) is True
        assert session_status(db, 3, "running") == "running"
    assert is_claimed(db, 3) is False


def test_the_holder_of_a_lock_is_the_process_its_file_names_and_none_once_let_go(tmp_path):
    path = tmp_path / "campaign.lock"
    assert lock_holder(path) is None  # no file
    with lock_file(path, StoreError):
        assert lock_holder(path) == str(os.getpid())
        assert path.read_text() == str(os.getpid())  # the probe wrote nothing
    path.write_text("4242")  # a killed program's leftover file: held by none
    assert lock_holder(path) is None
    held = os.open(path, os.O_RDWR)
    try:
        fcntl.flock(held, fcntl.LOCK_EX | fcntl.LOCK_NB)
        os.ftruncate(held, 0)  # a holder that could not write its id (a full disk)
        assert lock_holder(path) == "?"
    finally:
        os.close(held)
