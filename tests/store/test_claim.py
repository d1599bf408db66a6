"""One program per session: a session being run is claimed (lensopt.store.claim)."""

import os

import pytest

from lensopt.errors import StoreError
from lensopt.store.claim import claim_path, claim_session


def test_a_claimed_session_is_refused_to_a_second_claim_and_free_once_released(tmp_path):
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
