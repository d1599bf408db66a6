"""A session row (or one of its results or trials) that another program changed so that lensopt cannot
read it: the other sessions are read all the same (:meth:`SessionStore.listing`), and the damaged one
is a one-line error naming the session, the field and its value, not an internal class."""

from __future__ import annotations

import sqlite3

import pytest

from lensopt.store import (
    DamagedSession,
    DamagedSessionError,
    ResultRecord,
    SessionInfo,
    SessionStore,
    TrialRecord,
)


def trial(index):
    return TrialRecord(index, 0.25, -0.5, 0.3, "K", "K", True, 0.9, 1.7e9 + index, 1.7e9 + index + 0.9)


@pytest.fixture
def db(tmp_path):
    """Four finished sessions of one trial each, session 2 with a result."""
    path = tmp_path / "s.db"
    with SessionStore(path) as store:
        for k in range(1, 5):
            sid = store.create_session(f"P00{k}", {"rule": "ucb-ald"}, {}, {}, k)
            store.append_trial(sid, trial(1))
            store.set_status(sid, "finished")
        store.set_result(2, ResultRecord("-1.25 / -0.75 x 170", -1.25, -0.75, 170.0, None, 0.97, 1, {"m_d": [0, 1]}))
    return path


def damage(path, sql, *parameters):
    """Change the file as another program (the sqlite3 shell) would."""
    conn = sqlite3.connect(path)
    try:
        conn.execute(sql, parameters)
        conn.commit()
    finally:
        conn.close()


DAMAGES = {
    "status": ("UPDATE sessions SET status = 'weird' WHERE id = 3", "its status must be one of", "'weird'"),
    "participant": ("UPDATE sessions SET participant = '' WHERE id = 3", "its participant", "''"),
    "created_at": ("UPDATE sessions SET created_at = 'noon' WHERE id = 3", "its created_at", "'noon'"),
    "seed": ("UPDATE sessions SET seed = -1 WHERE id = 3", "its seed", "-1"),
    "protocol": ("UPDATE sessions SET protocol = '{not json' WHERE id = 3", "its protocol is not the JSON", ""),
    "calibration": ("UPDATE sessions SET calibration = '[1, 2]' WHERE id = 3", "its calibration", "[1, 2]"),
    # bytes, which the JSON of lensopt sessions --json and lensopt export could not write (a traceback)
    "software_version": (
        "UPDATE sessions SET software_version = CAST('0.2.0' AS BLOB) WHERE id = 3",
        "its software_version must be text",
        "b'0.2.0'",
    ),
}


@pytest.mark.parametrize("field", sorted(DAMAGES))
def test_a_damaged_session_row_is_listed_as_damaged_and_the_others_are_read(db, field):
    sql, problem, value = DAMAGES[field]
    damage(db, sql)
    with SessionStore(db, readonly=True) as store:
        listed = store.listing()
    assert [type(s) for s in listed] == [SessionInfo, SessionInfo, DamagedSession, SessionInfo]
    assert [s.session_id for s in listed] == [1, 2, 3, 4]
    damaged = listed[2]
    assert problem in damaged.problem and value in damaged.problem, damaged.problem
    assert "SessionInfo" not in damaged.problem
    assert listed[1].result is not None and listed[1].result.prescription == "-1.25 / -0.75 x 170"


def test_a_damaged_session_keeps_what_of_it_could_be_read_to_recognise_it(db):
    damage(db, "UPDATE sessions SET status = 'weird' WHERE id = 3")
    with SessionStore(db, readonly=True) as store:
        damaged = store.listing()[2]
    assert (damaged.participant, damaged.kind, damaged.status, damaged.n_trials) == ("P003", "letters", "weird", 1)
    assert isinstance(damaged.created_at, float)


def test_reading_a_damaged_session_is_one_line_naming_the_session_and_the_field(db):
    damage(db, "UPDATE sessions SET status = 'weird' WHERE id = 3")
    with SessionStore(db, readonly=True) as store:
        for read in (lambda: store.session(3), store.sessions, lambda: store.session_trials(3)):
            with pytest.raises(DamagedSessionError) as caught:
                read()
            message = str(caught.value)
            assert message.startswith(f"session 3 in {db} is damaged: its status must be one of")
            assert "'weird'" in message and "restore it from a copy" in message and "\n" not in message
            assert "SessionInfo" not in message
        assert store.session(4).status == "finished"  # the others are read as ever


def test_a_damaged_result_makes_only_its_session_damaged(db):
    damage(db, "UPDATE results SET sphere_d = 'minus one' WHERE session_id = 2")
    with SessionStore(db, readonly=True) as store:
        listed = store.listing()
        assert [type(s) for s in listed] == [SessionInfo, DamagedSession, SessionInfo, SessionInfo]
        assert "its result's sphere_d" in listed[1].problem and "'minus one'" in listed[1].problem
        with pytest.raises(DamagedSessionError, match=r"^session 2 in .* is damaged: its result's sphere_d"):
            store.session(2)


def test_a_result_whose_software_version_is_not_text_makes_only_its_session_damaged(db):
    damage(db, "UPDATE results SET software_version = X'3031' WHERE session_id = 2")
    with SessionStore(db, readonly=True) as store:
        listed = store.listing()
    assert isinstance(listed[1], DamagedSession) and "its result's software_version must be text" in listed[1].problem
    assert all(isinstance(s, SessionInfo) for k, s in enumerate(listed) if k != 1)


def test_damaged_result_intervals_make_only_their_session_damaged(db):
    damage(db, "UPDATE results SET intervals = '[1, 2]' WHERE session_id = 2")
    with SessionStore(db, readonly=True) as store:
        listed = store.listing()
    assert isinstance(listed[1], DamagedSession) and "its result's intervals" in listed[1].problem
    assert all(isinstance(s, SessionInfo) for k, s in enumerate(listed) if k != 1)


def test_a_damaged_trial_is_one_line_naming_the_session_and_the_trial(db):
    damage(db, "UPDATE trials SET letter = '' WHERE session_id = 3")
    with SessionStore(db, readonly=True) as store:
        with pytest.raises(DamagedSessionError) as caught:
            store.trials(3)
        assert [t.index for t in store.trials(4)] == [1]
    message = str(caught.value)
    assert message.startswith(f"session 3 in {db} is damaged: its trial 1's letter must be")
    assert "TrialRecord" not in message


def test_a_result_stored_with_an_axis_interval_below_0_reads_in_the_one_convention(tmp_path):
    """Results stored before 7 Dec 2026 kept an axis interval around 27° as [-62.54, 68.17]; read back
    (export, lensopt sessions --json) it is [117.46, 248.17], the same arc, as newer results are written."""
    path = tmp_path / "s.db"
    with SessionStore(path) as store:
        sid = store.create_session("P1", {}, {}, {"rule": "bracket-ald"}, 1)
        store.set_result(sid, ResultRecord("-1.25 / -0.75 x 027", -1.25, -0.75, 27.0, None, 0.97, 1, {"m_d": [0, 1]}))
    with sqlite3.connect(path) as con:  # as an older lensopt wrote it
        con.execute("""UPDATE results SET intervals = '{"m_d": [0, 1], "axis_deg": [-62.54, 68.17]}'""")
    con.close()
    with SessionStore(path, readonly=True) as store:
        (result,) = store.session(sid).results
    assert result.intervals["axis_deg"] == pytest.approx([117.46, 248.17])
    assert result.intervals["m_d"] == [0.0, 1.0]
