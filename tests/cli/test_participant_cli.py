"""`lensopt sessions --participant ID` and `lensopt export --participant ID`: one participant's
sessions, found by the id given to `lensopt run`; an id with none is one line naming the close ones."""

import csv
import io
import json
import sqlite3

import pytest
from test_sessions_cli import one_line_error, trial

from lensopt.cli import main
from lensopt.store import SessionStore


@pytest.fixture
def clinic_db(tmp_path):
    """P001's sessions 1 and 3 (2 and 3 trials), P002's session 2 (1 trial), S01's session 4 (none)."""
    path = tmp_path / "clinic.db"
    with SessionStore(path) as store:
        for participant, n_trials in (("P001", 2), ("P002", 1), ("P001", 3), ("S01", 0)):
            sid = store.create_session(participant, {"rule": "ucb-ald"}, {}, {"rule": "ucb-ald"}, 3)
            for i in range(1, n_trials + 1):
                store.append_trial(sid, trial(i))
    return path


def test_sessions_lists_only_the_participants_sessions(clinic_db, capsys):
    assert main(["sessions", "--participant", "P001", "--db", str(clinic_db)]) == 0
    rows = [line.split() for line in capsys.readouterr().out.splitlines()]
    assert rows[0][:2] == ["id", "participant"]
    assert [(row[0], row[1], row[5]) for row in rows[1:]] == [("1", "P001", "2"), ("3", "P001", "3")]
    assert main(["sessions", "--participant", "P001", "--json", "--db", str(clinic_db)]) == 0
    listed = json.loads(capsys.readouterr().out)
    assert [(s["session_id"], s["participant"]) for s in listed] == [(1, "P001"), (3, "P001")]


@pytest.mark.parametrize(
    ("typed", "said"),
    [
        ("p001", "did you mean 'P001'?"),  # another case
        ("00", "did you mean 'P001' or 'P002'?"),  # a part of it
        ("S1", "did you mean 'S01'?"),  # a typo
        ("Z9", "`lensopt sessions` lists the participants"),
    ],
)
def test_a_participant_without_sessions_is_said_with_the_close_ones(clinic_db, capsys, typed, said):
    assert main(["sessions", "--participant", typed, "--db", str(clinic_db)]) == 0
    out = capsys.readouterr().out
    assert out == f"no session of participant {typed!r} in {clinic_db}; {said}\n"
    assert main(["sessions", "--participant", typed, "--json", "--db", str(clinic_db)]) == 0
    assert json.loads(capsys.readouterr().out) == []  # a script reads an empty list
    before = clinic_db.read_bytes()
    assert main(["export", "--participant", typed, "--db", str(clinic_db)]) == 2  # nothing to export: a typo
    assert (
        one_line_error(capsys) == f"lensopt export: error: no session of participant {typed!r} in {clinic_db}; {said}\n"
    )
    assert clinic_db.read_bytes() == before


def test_export_writes_every_session_of_the_participant_oldest_first(clinic_db, tmp_path, capsys):
    out = tmp_path / "p001.csv"
    assert main(["export", "--participant", "P001", "--db", str(clinic_db), "-o", str(out)]) == 0
    assert "wrote 2 sessions (5 trials)" in capsys.readouterr().err
    rows = list(csv.DictReader(io.StringIO(out.read_text())))
    assert [(r["session_id"], r["participant"], r["trial_index"]) for r in rows] == [
        ("1", "P001", "1"), ("1", "P001", "2"), ("3", "P001", "1"), ("3", "P001", "2"), ("3", "P001", "3"),
    ]  # fmt: skip
    # JSON: an array, whether the participant has one session or several
    assert main(["export", "--participant", "P002", "--format", "json", "--db", str(clinic_db)]) == 0
    documents = json.loads(capsys.readouterr().out)
    assert isinstance(documents, list) and [d["session"]["session_id"] for d in documents] == [2]


def test_a_damaged_session_that_may_be_the_participants_stops_the_export_and_names_the_others(
    clinic_db, tmp_path, capsys
):
    """A session whose participant cannot be read may be theirs: a partial export is too easily
    taken for the whole, so nothing is written and the command for the others is given."""
    conn = sqlite3.connect(clinic_db)
    conn.execute("UPDATE sessions SET participant = X'00', status = 'weird' WHERE id = 2")  # unreadable
    conn.commit()
    conn.close()
    out = tmp_path / "p001.csv"
    assert main(["export", "--participant", "P001", "--db", str(clinic_db), "-o", str(out)]) == 2
    err = one_line_error(capsys)
    assert f"session 2 in {clinic_db} is damaged" in err and "nothing was exported" in err
    assert f"`lensopt export 1 3 --db {clinic_db} -o {out}`" in err
    assert not out.exists()


def test_sessions_last_lists_the_most_recent_oldest_first_also_of_one_participant(clinic_db, capsys):
    """A clinic's database holds thousands of sessions: ``--last N`` lists the N newest, alone or
    within one participant's; with a SESSION_ID it is refused in one line."""
    assert main(["sessions", "--last", "2", "--db", str(clinic_db)]) == 0
    rows = [line.split() for line in capsys.readouterr().out.splitlines()]
    assert [(row[0], row[1]) for row in rows[1:]] == [("3", "P001"), ("4", "S01")]
    assert main(["sessions", "--last", "1", "--participant", "P001", "--json", "--db", str(clinic_db)]) == 0
    assert [s["session_id"] for s in json.loads(capsys.readouterr().out)] == [3]
    assert main(["sessions", "--last", "9", "--participant", "P001", "--db", str(clinic_db)]) == 0
    assert [line.split()[0] for line in capsys.readouterr().out.splitlines()[1:]] == ["1", "3"]
    assert main(["sessions", "3", "--last", "2", "--db", str(clinic_db)]) == 2
    assert one_line_error(capsys).startswith("lensopt sessions: error: give SESSION_ID or --last N, not both")
    with pytest.raises(SystemExit) as refused:
        main(["sessions", "--last", "0", "--db", str(clinic_db)])
    assert refused.value.code == 2
    assert "argument --last: must be at least 1, got 0" in capsys.readouterr().err
