"""Rescued answers recovered (issue 19): the database locks mid-session, the answer goes to the rescue
file, and ``--resume`` stores it (once) before the session goes on."""

import dataclasses
import json

import pytest

from experiment_helpers import needs_display
from lensopt.errors import StoreError
from lensopt.experiment.rescue import rescue_path
from lensopt.experiment.session import RunRequest, run_session
from lensopt.store import DatabaseLockedError, SessionStore

pytestmark = needs_display


def lock_at_trial_3(monkeypatch):
    """The database refuses trial 3 as locked (the other trials are stored); returns the store's own
    ``append_trial``, to put back."""
    original = SessionStore.append_trial

    def locked_at_trial_3(self, session_id, record):
        if record.index == 3:
            raise DatabaseLockedError("the session database is locked by another program")
        return original(self, session_id, record)

    monkeypatch.setattr(SessionStore, "append_trial", locked_at_trial_3)
    return original


def test_an_answer_refused_by_a_locked_database_is_recovered_on_resume(tmp_path, window, fast_protocol, monkeypatch):
    db, lines = tmp_path / "s.db", []
    original = lock_at_trial_3(monkeypatch)
    request = RunRequest(
        db_path=db, protocol_path=fast_protocol, participant="P", observer="simulated", seed=5, trials=6
    )
    with pytest.raises(StoreError, match=r"trial 3 was saved to .*unsaved\.jsonl"):
        run_session(request, log=lines.append, window=window)
    monkeypatch.setattr(SessionStore, "append_trial", original)
    with SessionStore(db, readonly=True) as store:
        (info,) = store.sessions()
        assert [t.index for t in store.trials(info.session_id)] == [1, 2]
    rescue = rescue_path(db, info.session_id)
    assert rescue.exists()

    outcome = run_session(RunRequest(db_path=db, resume=info.session_id), log=lines.append, window=window)
    assert outcome.status == "finished" and outcome.n_trials == 6
    assert any(f"recovered 1 answer(s) of session {info.session_id}" in line for line in lines)
    assert not rescue.exists() and rescue.with_name(rescue.name.replace("unsaved", "recovered")).exists()

    # the same session run without the lock: the rescued answer is the one it gave, and the rest follows
    twin = run_session(
        RunRequest(
            db_path=tmp_path / "twin.db",
            protocol_path=fast_protocol,
            participant="P",
            observer="simulated",
            seed=5,
            trials=6,
        ),
        log=lambda line: None,
        window=window,
    )
    with SessionStore(db, readonly=True) as a, SessionStore(tmp_path / "twin.db", readonly=True) as b:
        mine, theirs = a.trials(info.session_id), b.trials(twin.session_id)
    key = lambda t: (t.index, t.sphere_d, t.cylinder_d, t.letter_logmar, t.letter, t.response, t.correct)  # noqa: E731
    assert [key(t) for t in mine[:3]] == [key(t) for t in theirs[:3]]


def test_a_rescue_file_that_contradicts_the_database_is_refused_in_one_line(tmp_path, window, fast_protocol):
    db = tmp_path / "s.db"
    first = run_session(
        RunRequest(db_path=db, protocol_path=fast_protocol, participant="P", observer="simulated", seed=5, trials=3),
        log=lambda line: None,
        window=window,
    )
    with SessionStore(db, readonly=True) as store:
        stored = store.trials(first.session_id)[-1]
    wrong = dataclasses.replace(stored, letter_logmar=stored.letter_logmar + 0.1)
    rescue_path(db, first.session_id).write_text(json.dumps(dataclasses.asdict(wrong)) + "\n")
    with pytest.raises(StoreError, match=r"holds another answer for trial 3 than the database"):
        run_session(RunRequest(db_path=db, resume=first.session_id, trials=4), log=lambda line: None, window=window)
    with SessionStore(db, readonly=True) as store:
        assert store.trials(first.session_id)[-1] == stored and store.session(first.session_id).n_trials == 3


@pytest.mark.parametrize("refused", ["set_result", "set_status"])
def test_a_finished_session_whose_end_the_database_refuses_says_so_and_a_resume_stores_it(
    refused, tmp_path, window, fast_protocol, monkeypatch
):
    """The database locked just after the last answer: the session said "finished" (exit 0) while its
    result or its status was not stored. Now: a one-line StoreError naming what is missing and the
    command that stores it; the resume does."""
    db, lines = tmp_path / "s.db", []
    original = getattr(SessionStore, refused)

    def locked(self, session_id, value):
        if refused == "set_result" or value == "finished":
            raise DatabaseLockedError("the session database is locked by another program")
        return original(self, session_id, value)

    monkeypatch.setattr(SessionStore, refused, locked)
    request = RunRequest(
        db_path=db, protocol_path=fast_protocol, participant="P", observer="simulated", seed=5, trials=4
    )
    missing = "its result" if refused == "set_result" else r"its finished status \(the session database is locked"
    with pytest.raises(StoreError, match=rf"every answer is stored, but not {missing}.*lensopt run --resume 1 --db"):
        run_session(request, log=lines.append, window=window)
    monkeypatch.setattr(SessionStore, refused, original)
    with SessionStore(db, readonly=True) as store:
        info = store.session(1)
    assert info.n_trials == 4
    assert (info.status, len(info.results)) == (("finished", 0) if refused == "set_result" else ("running", 1))
    outcome = run_session(RunRequest(db_path=db, resume=1), log=lines.append, window=window)
    assert outcome.status == "finished" and outcome.n_trials == 4
    with SessionStore(db, readonly=True) as store:
        info = store.session(1)
    assert info.status == "finished" and [r.n_trials for r in info.results] == [4]


def test_a_database_still_locked_when_the_end_is_checked_still_gives_the_resume_command(
    tmp_path, window, fast_protocol, monkeypatch
):
    """The lock outlasting the end: reading the session back failed with a bare 'locked' line, without
    the command that stores the end."""
    db, locked = tmp_path / "s.db", []
    set_status, session = SessionStore.set_status, SessionStore.session

    def lock_at_the_end(self, session_id, status):
        if status == "finished":
            locked.append(True)
            raise DatabaseLockedError("the session database is locked by another program")
        return set_status(self, session_id, status)

    def read_while_locked(self, session_id):
        if locked:
            raise DatabaseLockedError("the session database is locked by another program")
        return session(self, session_id)

    monkeypatch.setattr(SessionStore, "set_status", lock_at_the_end)
    monkeypatch.setattr(SessionStore, "session", read_while_locked)
    request = RunRequest(
        db_path=db, protocol_path=fast_protocol, participant="P", observer="simulated", seed=5, trials=3
    )
    with pytest.raises(StoreError, match=r"every answer is stored, but its end could not be checked .*--resume 1 --db"):
        run_session(request, log=lambda line: None, window=window)


def _first_patients_rescued_answer(db, tmp_path, window, fast_protocol, monkeypatch):
    """A session on ``db`` whose database refuses trial 3 (kept in its rescue file), then the database
    deleted with its rescue file left behind: the rescue file and the record it holds."""
    original = lock_at_trial_3(monkeypatch)
    request = RunRequest(db_path=db, protocol_path=fast_protocol, participant="FIRST", observer="simulated", seed=5)
    with pytest.raises(StoreError, match=r"trial 3 was saved to"):
        run_session(dataclasses.replace(request, trials=6), log=lambda line: None, window=window)
    monkeypatch.setattr(SessionStore, "append_trial", original)
    for leftover in tmp_path.glob("s.db*"):
        if not leftover.name.endswith(".jsonl"):
            leftover.unlink()  # the database deleted, the rescue file left
    rescue = rescue_path(db, 1)
    (line,) = rescue.read_text().splitlines()
    return rescue, json.loads(line)


def test_a_rescue_file_left_by_a_deleted_database_goes_into_no_new_session_and_is_kept(
    tmp_path, window, fast_protocol, monkeypatch
):
    """Found by a user audit: a new database at the same path, its session 1 of another patient, took
    the first patient's rescued answer into its trials on --resume. A new session now sets the file
    aside (kept, renamed ….orphaned.jsonl), and its own answers go to a rescue file of its own."""
    db = tmp_path / "s.db"
    rescue, first_answer = _first_patients_rescued_answer(db, tmp_path, window, fast_protocol, monkeypatch)
    notes = []
    second = run_session(
        RunRequest(
            db_path=db, protocol_path=fast_protocol, participant="OTHER", observer="simulated", seed=6, trials=2
        ),
        log=lambda line: None,
        warn=notes.append,
        window=window,
    )
    orphaned = rescue.with_name("s.db.session-1.orphaned.jsonl")
    assert not rescue.exists() and json.loads(orphaned.read_text()) == first_answer
    assert any(str(orphaned) in n and "not this session's answers" in n for n in notes)
    resumed = run_session(
        RunRequest(db_path=db, resume=second.session_id, trials=4), log=lambda line: None, window=window
    )
    with SessionStore(db, readonly=True) as store:
        trials = store.trials(second.session_id)
    assert resumed.n_trials == 4 and [t.index for t in trials] == [1, 2, 3, 4]
    assert all(t.presented_at >= store_created(db, second.session_id) for t in trials)  # none of FIRST's


def store_created(db, session_id) -> float:
    with SessionStore(db, readonly=True) as store:
        return store.session(session_id).created_at


def test_an_earlier_databases_rescued_answer_is_not_stored_on_resume_and_listing_says_whose_it_is(
    tmp_path, window, fast_protocol, monkeypatch, capsys
):
    """A rescue file from before this fix's set-aside, already at a session's name when it was made:
    its answers, presented before the session began, are not stored by --resume (kept, the log says
    why), and `lensopt sessions` does not count them as the session's."""
    from lensopt.cli import main

    db = tmp_path / "s.db"
    rescue, first_answer = _first_patients_rescued_answer(db, tmp_path, window, fast_protocol, monkeypatch)
    kept_aside = rescue.with_name("held.jsonl")
    rescue.rename(kept_aside)
    second = run_session(
        RunRequest(
            db_path=db, protocol_path=fast_protocol, participant="OTHER", observer="simulated", seed=6, trials=2
        ),
        log=lambda line: None,
        window=window,
    )
    kept_aside.rename(rescue)  # as the file stood before: at session 1's name, before it began
    assert first_answer["presented_at"] < store_created(db, second.session_id)
    assert main(["sessions", "--db", str(db)]) == 0
    said = capsys.readouterr().err
    assert "has 1 answer" not in said
    assert f"{rescue} holds 1 answer from before session 1 began: another session's" in said
    lines = []
    run_session(RunRequest(db_path=db, resume=second.session_id, trials=3), log=lines.append, window=window)
    with SessionStore(db, readonly=True) as store:
        trials = store.trials(second.session_id)
    assert len(trials) == 3 and trials[2].presented_at > first_answer["presented_at"]  # asked, not FIRST's
    assert any(line.startswith("not stored: ") and "from before session 1 began" in line for line in lines)
    assert rescue.with_name("s.db.session-1.recovered.jsonl").exists()  # kept
