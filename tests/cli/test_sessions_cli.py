"""`lensopt sessions` and `lensopt export` through the command dispatcher."""

import csv
import dataclasses
import io
import json
import sqlite3
import time

import pytest

import lensopt.store.database as database
from lensopt.cli import main
from lensopt.experiment.rescue import rescue_path
from lensopt.store import SCHEMA_VERSION, SessionStore, TrialRecord
from lensopt.store.claim import claim_session
from lensopt.store.export import export_session


def trial(index):
    return TrialRecord(
        index,
        0.25 * index,
        -0.5,
        0.3 - 0.01 * index,
        "K",
        "K",
        index % 2 == 1,
        0.9,
        1.7e9 + index,
        1.7e9 + index + 0.9,
        {"decision_ms": 1.5},
    )


@pytest.fixture
def db(tmp_path):
    path = tmp_path / "sessions.db"
    with SessionStore(path) as store:
        first = store.create_session(
            "P001", {"rule": "ucb-ald"}, {"screen_width_cm": 50.0}, {"rule": "ucb-ald", "seed": 3}, 3
        )
        for i in range(1, 5):
            store.append_trial(first, trial(i))
        store.set_status(first, "finished")
        store.create_session("P002", {}, {}, {}, 4)
    return path


def one_line_error(capsys):
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "Traceback" not in err
    return err


def test_sessions_prints_a_table_of_the_sessions(db, capsys):
    assert main(["sessions", "--db", str(db)]) == 0
    lines = capsys.readouterr().out.splitlines()
    header = ["id", "participant", "kind", "eye", "status", "trials", "created", "(local)", "rule", "prescription"]
    assert lines[0].split() == header  # the time is this computer's local time, not the exports' UTC
    with SessionStore(db, readonly=True) as store:
        created_at_s = store.session(1).created_at
    assert " ".join(lines[1].split()[6:8]) == time.strftime("%Y-%m-%d %H:%M", time.localtime(created_at_s))
    first, second = (line.split() for line in lines[1:])
    assert first[:6] == ["1", "P001", "letters", "-", "finished", "4"] and first[-2:] == ["ucb-ald", "-"]
    # stored as running, run by no program (killed, crashed): interrupted
    assert second[:6] == ["2", "P002", "letters", "-", "interrupted", "0"] and second[-1] == "-"


def test_a_participant_named_in_chinese_keeps_the_rest_of_the_row_in_its_columns(db, capsys):
    """李小龍 takes six terminal cells in three characters: padded by characters, the rest of the row
    sat three cells right of the header. Each wide character now counts two cells."""
    with sqlite3.connect(db) as con:
        con.execute("UPDATE sessions SET participant = ? WHERE id = 1", ("李小龍",))
    con.close()
    assert main(["sessions", "--db", str(db)]) == 0
    header, wide, narrow = capsys.readouterr().out.splitlines()[:3]
    assert narrow.index("letters") == header.index("kind")  # P002 is one cell per character
    assert wide.index("letters") == header.index("kind") - 3  # three characters of two cells each


def test_the_trials_column_counts_the_answers_kept_and_says_the_undone_apart(db, capsys):
    with SessionStore(db) as store:
        store.void_trial(1, 4)  # the clinician undid the last answer: kept, marked void
    assert main(["sessions", "--db", str(db)]) == 0
    first = capsys.readouterr().out.splitlines()[1]
    assert first.split()[:7] == ["1", "P001", "letters", "-", "finished", "3", "(+1"] and "3 (+1 undone)" in first
    assert main(["sessions", "--db", str(db), "--json"]) == 0
    listed = json.loads(capsys.readouterr().out)[0]
    assert (listed["n_trials"], listed["n_undone"]) == (4, 1)


def test_a_running_session_shows_running_while_a_program_runs_it_and_interrupted_after(db, capsys):
    with claim_session(db, 2):  # as lensopt run holds it
        assert main(["sessions", "--db", str(db)]) == 0
        assert capsys.readouterr().out.splitlines()[2].split()[4] == "running"
    assert main(["sessions", "--db", str(db)]) == 0
    assert capsys.readouterr().out.splitlines()[2].split()[4] == "interrupted"


def test_sessions_json_and_the_json_export_give_the_status_shown_beside_the_stored_one(db, capsys):
    """``status`` stays the stored one (old readers, the lossless export); ``status_now`` is the
    table's: ``interrupted`` for a session stored as running that no program runs."""

    def listed():
        assert main(["sessions", "--db", str(db), "--json"]) == 0
        return [(s["status"], s["status_now"]) for s in json.loads(capsys.readouterr().out)]

    def exported():
        assert main(["export", "1", "2", "--format", "json", "--db", str(db)]) == 0
        return [(d["session"]["status"], d["session"]["status_now"]) for d in json.loads(capsys.readouterr().out)]

    killed = [("finished", "finished"), ("running", "interrupted")]
    assert listed() == killed and exported() == killed
    with claim_session(db, 2):  # as lensopt run holds it
        running = [("finished", "finished"), ("running", "running")]
        assert listed() == running and exported() == running
        with SessionStore(db, readonly=True) as store:  # the library's export reads it the same way
            assert json.loads(export_session(store, 2, fmt="json"))["session"]["status_now"] == "running"
    with SessionStore(db, readonly=True) as store:
        document = json.loads(export_session(store, 2, fmt="json"))
    assert document["session"]["status_now"] == "interrupted" and document["format_version"] == 12


def test_sessions_shows_the_eye_and_the_prescription_of_each_eye(tmp_path, capsys):
    from lensopt.store import ResultRecord

    path = tmp_path / "eyes.db"
    with SessionStore(path) as store:
        sid = store.create_session("P003", {"session": {"eye": "OU"}}, {}, {"rule": "bracket-ald"}, 5)
        for eye, rx in (("OD", "-1.25 / -0.75 x 170"), ("OS", "-2.00 DS")):
            store.set_result(sid, ResultRecord(rx, -1.25, -0.75, 170.0, 0.0, 0.97, 30, eye=eye))
        store.set_status(sid, "finished")
    assert main(["sessions", "--db", str(path)]) == 0
    row = capsys.readouterr().out.splitlines()[1]
    assert row.split()[:5] == ["1", "P003", "letters", "OU", "finished"]
    assert row.endswith("OD -1.25 / -0.75 x 170; OS -2.00 DS")


@pytest.mark.parametrize(
    "stop, expected",
    [
        ({"confidence": 0.95}, "not enough answers (confidence 0.62 < 0.95)"),
        ({"confidence": 0.6}, "-1.25 / -0.75 x 170"),
        (None, "-1.25 / -0.75 x 170 (estimate, confidence 0.62 < 0.95)"),
    ],
)
def test_a_prescription_short_of_its_protocols_confidence_is_not_listed_as_one(tmp_path, capsys, stop, expected):
    """A stored result below the session's ``[stop] confidence`` is no prescription: the listing says
    "not enough answers", without the lens, as the closing screen and the record do; a session
    without a stopping rule (a study, held to 0.95) lists its lens as the study's estimate."""
    from lensopt.store import ResultRecord

    path = tmp_path / "low.db"
    with SessionStore(path) as store:
        sid = store.create_session("P004", {"stop": stop} if stop else {}, {}, {"rule": "bracket-ald"}, 5)
        store.set_result(sid, ResultRecord("-1.25 / -0.75 x 170", -1.25, -0.75, 170.0, 0.0, 0.62, 12))
        store.set_status(sid, "finished")
    assert main(["sessions", "--db", str(path)]) == 0
    row = capsys.readouterr().out.splitlines()[1]
    assert row.endswith(expected), row


def test_sessions_json_lists_every_session(db, capsys):
    assert main(["sessions", "--db", str(db), "--json"]) == 0
    sessions = json.loads(capsys.readouterr().out)
    assert [(s["session_id"], s["participant"], s["n_trials"]) for s in sessions] == [(1, "P001", 4), (2, "P002", 0)]
    assert sessions[0]["optimizer_settings"] == {"rule": "ucb-ald", "seed": 3}


def test_sessions_uses_the_database_named_by_lensopt_db(db, capsys, monkeypatch):
    monkeypatch.setenv("LENSOPT_DB", str(db))
    assert main(["sessions"]) == 0
    assert "P002" in capsys.readouterr().out


def test_sessions_of_an_empty_database_says_so(tmp_path, capsys):
    SessionStore(tmp_path / "empty.db").close()
    assert main(["sessions", "--db", str(tmp_path / "empty.db")]) == 0
    assert capsys.readouterr().out.startswith("no sessions in ")


def test_export_csv_to_stdout_matches_the_store(db, capsys):
    assert main(["export", "1", "--format", "csv", "--db", str(db)]) == 0
    out = capsys.readouterr().out
    rows = list(csv.DictReader(io.StringIO(out)))
    assert [int(r["trial_index"]) for r in rows] == [1, 2, 3, 4]
    assert [float(r["decision_ms"]) for r in rows] == [1.5] * 4  # extra, one column per key
    assert [float(r["sphere_d"]) for r in rows] == [0.25, 0.5, 0.75, 1.0]
    with SessionStore(db, readonly=True) as store:
        assert out == export_session(store, 1, fmt="csv")


def test_export_json_to_a_file(db, tmp_path, capsys):
    out = tmp_path / "s1.json"
    assert main(["export", "1", "--format", "json", "--db", str(db), "--output", str(out)]) == 0
    document = json.loads(out.read_text())
    assert document["seed"] == 3 and len(document["trials"]) == 4
    assert document["trials"][0]["extra"] == {"decision_ms": 1.5}
    assert document["calibration"]["screen_width_cm"] == 50.0
    assert "wrote session 1 (4 trials)" in capsys.readouterr().err


@pytest.mark.parametrize(
    "command",
    [
        ["export", "1", "--output", "{db}"],
        ["export", "--all", "--format", "json", "--output", "{db}-wal"],
        ["print", "1", "--out", "{link}"],  # a symlink to the database named like a record
        ["dashboard", "1", "--report", "{link}"],
    ],
)
def test_an_output_that_is_the_session_database_is_refused_and_the_database_kept(db, tmp_path, capsys, command):
    """Writing an export, a record or a report over the database it reads would destroy every session:
    refused in one line, exit 2, the file unchanged byte for byte."""
    link = tmp_path / "record.pdf"
    link.symlink_to(db)
    before = db.read_bytes()
    argv = [part.format(db=db, link=link) for part in command] + ["--db", str(db)]
    assert main(argv) == 2
    assert "is the session database" in one_line_error(capsys)
    assert db.read_bytes() == before
    with SessionStore(db, readonly=True) as store:
        assert len(store.trials(1)) == 4


def test_export_of_a_missing_session_is_one_line_and_exit_2(db, capsys):
    assert main(["export", "9", "--db", str(db)]) == 2
    assert "no session 9" in one_line_error(capsys)


def test_export_with_a_bad_format_is_one_line_and_exit_2(db, capsys):
    assert main(["export", "1", "--format", "xml", "--db", str(db)]) == 2
    assert "--format must be one of csv, json, psychopy" in one_line_error(capsys)


@pytest.mark.parametrize("command", [["sessions"], ["export", "1"]])
def test_corrupt_missing_and_newer_databases_are_one_line_and_exit_2(command, tmp_path, capsys):
    garbage = tmp_path / "garbage.db"
    garbage.write_bytes(b"\x00garbage" * 1000)
    assert main(command + ["--db", str(garbage)]) == 2
    assert "is not a lensopt session database" in one_line_error(capsys)

    assert main(command + ["--db", str(tmp_path / "missing.db")]) == 2
    assert "no session database at" in one_line_error(capsys)

    newer = tmp_path / "newer.db"
    SessionStore(newer).close()
    conn = sqlite3.connect(newer)
    conn.execute(f"PRAGMA user_version = {SCHEMA_VERSION + 5}")
    conn.commit()
    conn.close()
    assert main(command + ["--db", str(newer)]) == 2
    assert "upgrade lensopt" in one_line_error(capsys)


def test_sessions_lists_while_another_program_holds_the_write_lock(db, capsys):
    # WAL: a running experiment never blocks `lensopt sessions`.
    holder = sqlite3.connect(db, isolation_level=None)
    holder.execute("BEGIN EXCLUSIVE")
    try:
        assert main(["sessions", "--db", str(db)]) == 0
        assert "P001" in capsys.readouterr().out
    finally:
        holder.execute("ROLLBACK")
        holder.close()


def test_locked_database_is_one_line_and_exit_2(db, capsys, monkeypatch):
    # A database in rollback-journal mode (as an older program may leave it) locks readers out.
    monkeypatch.setattr(database, "DEFAULT_TIMEOUT_S", 0.05)
    holder = sqlite3.connect(db, isolation_level=None)
    holder.execute("PRAGMA journal_mode = DELETE")
    holder.execute("BEGIN EXCLUSIVE")
    holder.execute("UPDATE sessions SET participant = participant")
    try:
        assert main(["sessions", "--db", str(db)]) == 2
        assert "is locked by another program; close it or use --db" in one_line_error(capsys)
    finally:
        holder.execute("ROLLBACK")
        holder.close()


def test_sessions_and_export_show_a_duel_session_and_its_ties(db, capsys):
    from lensopt.store import DuelTrialRecord

    with SessionStore(db) as store:
        sid = store.create_session("D01", {}, {}, {"rule": "muc-ald", "seed": 1}, 1, kind="duel")
        for i, answer in enumerate(("first", "same", "second"), start=1):
            store.append_duel_trial(
                sid, DuelTrialRecord(i, -1.0, 0.0, -0.75, 0.0, 0.2, "CDHKN", answer, 1.0, 10.0 * i, 10.0 * i + 1)
            )
    assert main(["sessions", "--db", str(db)]) == 0
    line = capsys.readouterr().out.splitlines()[-1]
    row = line.split()
    assert row[:6] == [str(sid), "D01", "duel", "-", "interrupted", "3"]  # stored running, run by nobody
    # no start: its best lens was printed, not stored; the column says why there is no prescription
    assert row[-8:] == ["muc-ald", "-", "(comparisons", "without", "a", "start:", "no", "prescription)"], line
    assert main(["export", str(sid), "--format", "csv", "--db", str(db)]) == 0
    rows = list(csv.DictReader(io.StringIO(capsys.readouterr().out)))
    assert [r["answer"] for r in rows] == ["first", "same", "second"]


def test_export_of_several_sessions_or_all_writes_one_file_session_id_first(db, tmp_path, capsys):
    from lensopt.store import DuelTrialRecord

    with SessionStore(db) as store:
        sid = store.create_session("D01", {}, {}, {"rule": "muc-ald"}, 1, kind="duel")
        store.append_duel_trial(sid, DuelTrialRecord(1, -1.0, 0.0, -0.75, 0.0, 0.2, "CDHKN", "same", 1.0, 10.0, 11.0))
    before = db.read_bytes()
    out = tmp_path / "all.csv"
    assert main(["export", str(sid), "1", "--format", "csv", "-o", str(out), "--db", str(db)]) == 0
    assert "wrote 2 sessions (5 trials)" in capsys.readouterr().err
    rows = list(csv.DictReader(io.StringIO(out.read_text())))
    assert next(iter(rows[0])) == "session_id" and [r["session_id"] for r in rows] == ["3"] + ["1"] * 4
    assert rows[0]["answer"] == "same" and rows[0]["sphere_d"] == "" and rows[1]["sphere_d"] == "0.25"
    assert main(["export", "--all", "--format", "psychopy", "--db", str(db)]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[0].endswith("participant,date,expName,psychopyVersion,frameRate") and len(lines) == 1 + 5
    assert main(["export", "--all", "--format", "json", "--db", str(db)]) == 0
    documents = json.loads(capsys.readouterr().out)
    assert [d["session"]["session_id"] for d in documents] == [1, 2, 3]
    assert db.read_bytes() == before


@pytest.mark.parametrize(
    "argv, message",
    [
        (["export", "1", "9"], "no session 9"),
        (["export", "1", str(2**63)], f"no session {2**63}"),
        (["export", "0"], "SESSION_ID must be a positive integer, got 0"),  # as sessions, print, dashboard
        (["export", "1", "-1"], "SESSION_ID must be a positive integer, got -1"),
        (["export"], "give the sessions to export: one or more SESSION_IDs, --participant ID, or --all"),
        (["export", "1", "--all"], "give one of SESSION_IDs, --participant ID or --all, not several"),
        (["export", "--participant", "P001", "--all"], "give one of SESSION_IDs, --participant ID or --all"),
        (["export", "1", "--format", "xlsx"], "--format must be one of csv, json, psychopy"),
    ],
)
def test_a_bad_export_is_one_line_exit_2_and_writes_nothing(db, tmp_path, capsys, argv, message):
    before = db.read_bytes()
    out = tmp_path / "out.csv"
    assert main([*argv, "--db", str(db), "-o", str(out)]) == 2
    assert message in one_line_error(capsys)
    assert not out.exists() and db.read_bytes() == before


def test_export_all_of_a_database_without_sessions_is_one_line_and_exit_2(tmp_path, capsys):
    SessionStore(tmp_path / "empty.db").close()
    assert main(["export", "--all", "--db", str(tmp_path / "empty.db")]) == 2
    assert "no sessions in" in one_line_error(capsys)


def damaged_db(db):
    """``db`` with a third session whose stored status another program changed to 'weird'."""
    with SessionStore(db) as store:
        store.create_session("P003", {}, {}, {}, 5)
    conn = sqlite3.connect(db)
    conn.execute("UPDATE sessions SET status = 'weird' WHERE id = 2")
    conn.commit()
    conn.close()
    return db


def test_sessions_lists_a_damaged_session_as_damaged_and_every_other_one(db, capsys):
    assert main(["sessions", "--db", str(damaged_db(db))]) == 0
    captured = capsys.readouterr()
    rows = [line.split() for line in captured.out.splitlines()[1:]]
    assert [row[0] for row in rows] == ["1", "2", "3"]
    assert rows[0][4] == "finished" and rows[2][4] == "interrupted"
    assert rows[1][:6] == ["2", "P002", "letters", "-", "damaged", "0"]
    warning = captured.err.splitlines()
    assert len(warning) == 1 and warning[0].startswith(f"warning: session 2 in {db} is damaged: its status")
    assert "'weird'" in warning[0] and "restore it from a copy" in warning[0]
    assert "SessionInfo" not in captured.err


def test_sessions_json_lists_a_damaged_session_with_its_problem(db, capsys):
    assert main(["sessions", "--json", "--db", str(damaged_db(db))]) == 0
    listed = json.loads(capsys.readouterr().out)
    assert [(s["session_id"], s["status"], s["status_now"]) for s in listed] == [
        (1, "finished", "finished"),
        (2, "weird", "damaged"),
        (3, "running", "interrupted"),
    ]
    assert "its status must be one of running, finished, aborted" in listed[1]["problem"]


def test_export_all_with_a_damaged_session_exports_nothing_and_names_it_and_the_others(db, tmp_path, capsys):
    """A partial export is too easily taken for the whole: refused, naming the damaged session, its
    field, and the command that exports the others."""
    out = tmp_path / "all.csv"
    before = damaged_db(db).read_bytes()
    assert main(["export", "--all", "--db", str(db), "-o", str(out)]) == 2
    err = one_line_error(capsys)
    assert err.startswith(f"lensopt export: error: session 2 in {db} is damaged: its status must be one of")
    assert "nothing was exported" in err and f"`lensopt export 1 3 --db {db} -o {out}`" in err
    assert "SessionInfo" not in err
    assert not out.exists() and db.read_bytes() == before
    assert main(["export", "1", "3", "--db", str(db), "-o", str(out)]) == 0  # the advice works
    assert "wrote 2 sessions (4 trials)" in capsys.readouterr().err


def test_exporting_a_damaged_session_is_one_line_naming_the_session_not_a_class(db, capsys):
    assert main(["export", "2", "--db", str(damaged_db(db))]) == 2
    err = one_line_error(capsys)
    assert f"session 2 in {db} is damaged: its status" in err and "SessionInfo" not in err


def test_an_export_of_one_trial_says_trial_in_the_singular(tmp_path, capsys):
    db = tmp_path / "one.db"
    with SessionStore(db) as store:
        sid = store.create_session(
            "P", {}, {"screen_width_cm": 50.0, "screen_width_px": 1920, "distance_cm": 300.0}, {}, 1
        )
        store.append_trial(sid, TrialRecord(1, -1.0, 0.0, 0.3, "K", "K", True, 0.5, 1.7e9, 1.7e9 + 1, {}))
    assert main(["export", str(sid), "--db", str(db), "--output", str(tmp_path / "one.csv")]) == 0
    assert f"wrote session {sid} (1 trial) to" in capsys.readouterr().err


def test_answers_waiting_in_a_rescue_file_are_said_by_the_listing_and_the_export(tmp_path, capsys):
    """The listing and an export count what the database holds: an answer it refused, kept in a
    rescue file until a resume stores it, was invisible to both."""
    db = tmp_path / "s.db"
    with SessionStore(db) as store:
        sid = store.create_session(
            "P", {}, {"screen_width_cm": 50.0, "screen_width_px": 1920, "distance_cm": 300.0}, {}, 1
        )
        now = store.session(sid).created_at  # answers presented after the session began (before: another's)
        store.append_trial(sid, TrialRecord(1, -1.0, 0.0, 0.3, "K", "K", True, 0.5, now + 1, now + 2, {}))
    rescued = TrialRecord(2, -1.0, 0.0, 0.2, "H", "H", True, 0.5, now + 3, now + 4, {})
    rescue_path(db, sid).write_text(json.dumps(dataclasses.asdict(rescued)) + "\n")
    assert main(["sessions", "--db", str(db)]) == 0
    said = capsys.readouterr().err
    assert f"warning: session {sid} has 1 answer in {rescue_path(db, sid)} that the database does not hold yet" in said
    assert f"lensopt run --resume {sid} --db {db.resolve()} stores them" in said
    with SessionStore(db) as store:  # a later session: --last 1 leaves this one out, not its warning
        store.create_session("Q", {}, {"screen_width_cm": 50.0, "screen_width_px": 1920, "distance_cm": 300.0}, {}, 2)
    assert main(["sessions", "--last", "1", "--db", str(db)]) == 0
    listed = capsys.readouterr()
    assert [line.split()[1] for line in listed.out.splitlines()[1:]] == ["Q"]
    assert f"warning: session {sid} has 1 answer in {rescue_path(db, sid)}" in listed.err
    assert main(["export", str(sid), "--db", str(db), "--output", str(tmp_path / "s.csv")]) == 0
    assert "has 1 answer in" in capsys.readouterr().err
    rescue_path(db, sid).unlink()
    assert main(["sessions", "--db", str(db)]) == 0 and "warning" not in capsys.readouterr().err
