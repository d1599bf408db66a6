"""Schema 10: a session's start and each resume are recorded with the software that ran."""

import json
import sqlite3
import subprocess
import types
from pathlib import Path

import numpy as np
import pytest
from test_database import CALIBRATION, make_trial, new_session

import lensopt
from lensopt.cli import main
from lensopt.store import (
    ENDED,
    SCHEMA_VERSION,
    ContinueAdvice,
    SessionEvent,
    SessionStore,
    continue_advice,
    resumed_budget,
    run_window_options,
    stored_budget,
)
from lensopt.store.export import export_session
from lensopt.store.session_records import unreadable_events_text

REPO = Path(lensopt.__file__).resolve().parent.parent


def _events_rows(path) -> list[tuple]:
    conn = sqlite3.connect(path)
    try:
        return conn.execute("SELECT session_id, event, after_trial FROM session_events ORDER BY id").fetchall()
    finally:
        conn.close()


def test_a_new_session_records_its_start_with_the_software_that_runs(tmp_path):
    with SessionStore(tmp_path / "s.db") as store:
        sid = new_session(store)
        info = store.session(sid)
        (started,) = info.events
    assert started.at == info.created_at  # written with the session, in its transaction
    assert (started.event, started.after_trial) == ("started", 0)
    found = started.software
    assert found["lensopt"] == lensopt.__version__ and found["numpy"] == np.__version__
    if (REPO / ".git").exists():  # from a checkout: its commit, as git itself names it
        head = subprocess.run(["git", "-C", str(REPO), "rev-parse", "HEAD"], capture_output=True, text=True).stdout
        assert found["git_commit"].split("+")[0] == head.strip()
    assert _events_rows(tmp_path / "s.db") == [(sid, "started", 0)]


def test_a_resume_is_recorded_after_the_last_stored_trial_undone_ones_included(tmp_path):
    with SessionStore(tmp_path / "s.db") as store:
        sid = new_session(store)
        for index in (1, 2, 3):
            store.append_trial(sid, make_trial(index))
        store.void_trial(sid, 3)  # undone, kept: the resume still comes after it
        store.record_event(sid, "resumed", {"trials": 40, "trials_given": 40})
        store.record_event(sid, "resumed", {"trials": 40, "trials_given": None})
        events = store.session(sid).events
    assert [(e.event, e.after_trial) for e in events] == [("started", 0), ("resumed", 3), ("resumed", 3)]
    assert events[1].detail["trials"] == 40 and events[1].software == events[0].software
    assert events[0].at <= events[1].at <= events[2].at
    assert resumed_budget(events) == 40  # the last resume without --trials keeps the one given before


def test_an_event_this_lensopt_does_not_know_is_refused_when_written(tmp_path):
    with SessionStore(tmp_path / "s.db") as store:
        sid = new_session(store)
        with pytest.raises(ValueError, match="event must be one of started, resumed, noted"):
            store.record_event(sid, "exploded", {})
        with pytest.raises(ValueError, match="detail must be a dict"):
            store.record_event(sid, "resumed", ["not", "an", "object"])
        assert len(store.session(sid).events) == 1


def test_the_budget_kept_is_the_last_one_given(tmp_path):
    def resumed(given):
        return SessionEvent("resumed", 1.0, 5, {"trials": given or 30, "trials_given": given})

    assert resumed_budget([]) is None
    assert resumed_budget([SessionEvent("started", 0.0, 0), resumed(None)]) is None
    assert resumed_budget([resumed(50), resumed(None), resumed(70), resumed(None)]) == 70
    assert resumed_budget([resumed(True)]) is None  # not a count


def test_the_budget_a_stored_session_last_ran_with_follows_its_resumes_trials(tmp_path):
    """Its protocol's budget, or the one its last resume given --trials kept, with the stopping rule
    that resume ran: a max_trials that was the whole budget follows it, another is capped by it."""
    protocol = {"optimizer": {"trials": 40}, "stop": {"confidence": 0.95, "min_trials": 20, "max_trials": 40}}
    settings = {"rule": "ucb-ald", "stop": {"confidence": 0.95, "min_trials": 20, "max_trials": 40}}
    capped = {**settings, "stop": {**settings["stop"], "max_trials": 35}}
    with SessionStore(tmp_path / "s.db") as store:
        sid = store.create_session("P1", protocol, CALIBRATION, settings, 3)
        other = store.create_session("P2", {**protocol, "stop": capped["stop"]}, CALIBRATION, capped, 4)
        fixed = store.create_session("P3", {"optimizer": {"trials": 40}}, CALIBRATION, {"rule": "ucb-ald"}, 5)
        ran = stored_budget(store.session(sid))
        assert (ran.trials, ran.max_trials, ran.protocol_max_trials, ran.known) == (40, 40, 40, True)
        for session in (sid, other, fixed):
            store.record_event(session, "resumed", {"trials": 15, "trials_given": 15})
            store.record_event(session, "resumed", {"trials": 15, "trials_given": None})  # keeps 15
        ran = stored_budget(store.session(sid))
        assert (ran.trials, ran.protocol_trials, ran.known) == (15, 40, True)
        assert (ran.rule.min_trials, ran.rule.max_trials, ran.stored_rule.max_trials) == (15, 15, 40)
        store.record_event(other, "resumed", {"trials": 38, "trials_given": 38})
        assert stored_budget(store.session(other)).rule.max_trials == 35  # capped by 38: its own 35 holds
        ran = stored_budget(store.session(fixed))  # no stopping rule: the budget itself
        assert (ran.rule, ran.max_trials, ran.protocol_max_trials) == (None, 15, 40)
    # a session of before schema 10 (no events): its protocol's budget, not known to be the last
    before = stored_budget(types.SimpleNamespace(protocol=protocol, optimizer_settings=settings, events=()))
    assert (before.max_trials, before.known) == (40, False)


def test_a_version_9_database_reads_without_events_and_records_them_once_upgraded(tmp_path):
    path = tmp_path / "v9.db"
    with SessionStore(path) as store:
        old = new_session(store, "before")
        store.append_trial(old, make_trial(1))
    conn = sqlite3.connect(path)
    with conn:  # layout 9 exactly: no events table
        conn.execute("DROP TABLE session_events")
        conn.execute("PRAGMA user_version = 9")
    conn.close()
    before = path.read_bytes()
    with SessionStore(path, readonly=True) as store:
        assert store.session(old).events == () and store.trials(old) == [make_trial(1)]
    assert path.read_bytes() == before  # read as it is
    with SessionStore(path) as store:
        new = new_session(store, "after")
        store.record_event(old, "resumed", {"trials": 12, "trials_given": None})
        assert [e.event for e in store.session(new).events] == ["started"]
        assert [(e.event, e.after_trial) for e in store.session(old).events] == [("resumed", 1)]
    conn = sqlite3.connect(path)
    try:
        assert conn.execute("PRAGMA user_version").fetchone()[0] == SCHEMA_VERSION
    finally:
        conn.close()


def _corrupt_event(path, sql: str, parameters) -> None:
    conn = sqlite3.connect(path)
    with conn:
        assert conn.execute(sql, parameters).rowcount == 1
    conn.close()


def test_an_event_another_program_changed_is_skipped_and_said_and_its_session_still_reads(tmp_path):
    path = tmp_path / "s.db"
    with SessionStore(path) as store:
        kept, changed = new_session(store, "A"), new_session(store, "B")
        for i in (1, 2):
            store.append_trial(changed, make_trial(i))
        store.record_event(changed, "resumed", {"trials": 20, "trials_given": 20})
        store.record_event(changed, "resumed", {"trials": 20, "trials_given": None})
    # the start's detail is no JSON, the first resume's event has no name: both skipped, the last resume kept
    _corrupt_event(
        path, "UPDATE session_events SET detail = 'not json' WHERE session_id = ? AND event = 'started'", (changed,)
    )
    _corrupt_event(
        path,
        "UPDATE session_events SET event = '' WHERE id = (SELECT MIN(id) FROM session_events "
        "WHERE session_id = ? AND event = 'resumed')",
        (changed,),
    )
    with SessionStore(path, readonly=True) as store:
        listed = store.listing()
        info, trials = store.session(changed), store.trials(changed)
        document = json.loads(export_session(store, changed, "json"))
        assert store.session(kept).unreadable_events == ()
    assert [type(found).__name__ for found in listed] == ["SessionInfo", "SessionInfo"]
    assert [t.index for t in trials] == [1, 2]
    assert [(e.event, e.after_trial) for e in info.events] == [("resumed", 2)]
    first, second = info.unreadable_events
    assert first.startswith("its event 1's detail is not the JSON lensopt wrote")
    assert second.startswith("its event 2's event must be a non-empty string"), second
    assert "\n" not in unreadable_events_text(info)
    assert unreadable_events_text(store_info_of(listed, kept)) is None
    # the JSON export says what was skipped, beside the events it holds
    assert document["format_version"] == 12 and len(document["trials"]) == 2
    assert document["unreadable_events"] == [first, second] and len(document["events"]) == 1


def store_info_of(listed, session_id):
    return next(found for found in listed if found.session_id == session_id)


def test_sessions_and_export_warn_of_a_skipped_event_and_export_the_answers(tmp_path, capsys):
    path = tmp_path / "s.db"
    with SessionStore(path) as store:
        sid = new_session(store, "A")
        store.append_trial(sid, make_trial(1))
    _corrupt_event(path, "UPDATE session_events SET detail = '{' WHERE session_id = ?", (sid,))

    assert main(["sessions", "--db", str(path)]) == 0
    out, err = capsys.readouterr()
    assert "damaged" not in out and out.splitlines()[1].split()[:2] == [str(sid), "A"]
    (warning,) = [line for line in err.splitlines() if "event" in line]
    assert warning.startswith(f"warning: session {sid} in {path}: an event another program changed could not be read")
    assert "its event 1's detail is not the JSON lensopt wrote" in warning and "read as stored" in warning

    out_file = tmp_path / "a.csv"
    assert main(["export", str(sid), "--db", str(path), "-o", str(out_file)]) == 0
    err = capsys.readouterr().err
    assert f"warning: session {sid} in {path}: an event" in err
    assert len(out_file.read_text().splitlines()) == 2  # the header and the answer


def test_the_json_export_carries_the_events(tmp_path):
    with SessionStore(tmp_path / "s.db") as store:
        sid = store.create_session("P", {}, CALIBRATION, {}, 3)
        store.append_trial(sid, make_trial(1))
        store.record_event(sid, "resumed", {"trials": 20, "trials_given": 20})
        document = json.loads(export_session(store, sid, "json"))
    assert document["format_version"] == 12
    assert [(e["event"], e["after_trial"], e["detail"].get("trials_given")) for e in document["events"]] == [
        ("started", 0, None),
        ("resumed", 1, 20),
    ]
    assert document["events"][0]["detail"]["software"]["lensopt"] == lensopt.__version__
    assert document["events"][0]["at_unix_s"] == pytest.approx(document["session"]["created_at"])


def _event(name, after_trial, **detail):
    return SessionEvent(event=name, at=1e9 + after_trial, after_trial=after_trial, detail=detail)


def test_the_advice_of_a_sessions_end_holds_until_it_is_resumed_or_answered_again():
    """An ``ended`` event's ``--trials`` is the advice while it is the session's last start, resume or
    end and no trial was stored after it (an undo at the closing screen appends trials without a
    resume); a note typed since does not change it."""
    ended = _event("ended", 15, continue_trials=45, at_most=False)
    started = _event("started", 0)
    assert continue_advice([started, ended], 15) == ContinueAdvice(45)
    assert continue_advice([started, ended, _event("noted", 15, note="squints", for_trial=15)], 15) == ContinueAdvice(
        45
    )
    assert continue_advice([started, ended], 16) is None  # answered since
    assert continue_advice([started, ended, _event("resumed", 15, trials=45)], 15) is None  # resumed since
    assert continue_advice([started], 15) is None  # ended before the advice was stored
    assert continue_advice([started, _event("ended", 15, continue_trials=None, at_most=False)], 15) is None
    assert continue_advice([started, _event("ended", 15, continue_trials=True)], 15) is None  # not a number
    assert continue_advice([started, _event("ended", 15, continue_trials=45, at_most=True)], 15).at_most
    # the window options lensopt run gives, and nothing else another program wrote there
    assert continue_advice([started, _event("ended", 15, continue_trials=45, options=" --no-fullscreen")], 15) == (
        ContinueAdvice(45, options=" --no-fullscreen")
    )
    assert continue_advice([started, _event("ended", 15, continue_trials=45, options="; rm -rf ~")], 15) == (
        ContinueAdvice(45)
    )


def test_the_window_options_kept_are_those_of_the_last_start_or_resume():
    """The command that continues a stopped session carries the window options its last run was
    given: a resume given none drops the start's; a note or an end between changes nothing; a value
    another program wrote, or none stored (sessions started before 6 Dec 2026), gives none."""
    started = _event("started", 0, options=" --no-fullscreen")
    assert run_window_options([]) == "" and run_window_options([_event("started", 0)]) == ""
    assert run_window_options([started, _event("noted", 3, note="squints", for_trial=3)]) == " --no-fullscreen"
    assert run_window_options([started, _event("ended", 15, continue_trials=45)]) == " --no-fullscreen"
    assert run_window_options([started, _event("resumed", 15, trials=45)]) == ""
    assert run_window_options([started, _event("resumed", 15, trials=45, options=" --fullscreen")]) == " --fullscreen"
    assert run_window_options([_event("started", 0, options="; rm -rf ~")]) == ""


def test_the_advice_is_the_command_the_console_gave_and_round_trips_through_the_store(tmp_path):
    advice = ContinueAdvice(45, at_most=True, options=" --no-fullscreen")
    assert advice.command(7) == (
        "lensopt run --resume 7 --trials 45 --no-fullscreen  (at most; the confidence so far does not say how many more)"
    )
    assert ContinueAdvice(45, options=" --no-fullscreen").command(7, tmp_path / "s.db") == (
        f"lensopt run --resume 7 --trials 45 --no-fullscreen --db {(tmp_path / 's.db').resolve()}"
    )
    with SessionStore(tmp_path / "s.db") as store:
        sid = new_session(store)
        for i in range(1, 4):
            store.append_trial(sid, make_trial(i))
        store.record_event(sid, ENDED, advice.to_detail())
        info = store.session(sid)
    assert continue_advice(info.events, info.n_trials) == advice
