"""One program per session: a session being run is claimed (lensopt.store.claim)."""

import fcntl
import os
import threading
import time

import pytest

from lensopt.errors import StoreError
from lensopt.store import claim
from lensopt.store.claim import INTERRUPTED, claim_path, claim_session, is_claimed, session_status


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
    for stored in ("finished", "aborted"):  # a status stored at the end is the status
        assert session_status(db, 7, stored) == stored
    assert session_status(None, 7, "running") == "running"  # no database to look beside: as stored
    monkeypatch.setattr(claim, "is_claimed", lambda db_path, session_id: None)  # no locks here (Windows, NFS)
    assert session_status(db, 7, "running") == "running"
