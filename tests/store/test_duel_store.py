"""Duel sessions in the store: duel rows, the kind guard, the version 2 -> 3 migration, exports."""

import csv
import dataclasses
import io
import json
import sqlite3

import pytest
from export_reading import extra_from_row

from lensopt.refraction.duels import DUEL_ANSWERS as OPTIMIZER_ANSWERS
from lensopt.store import (
    DUEL_ANSWERS,
    DUEL_KIND,
    SCHEMA_VERSION,
    DuelTrialRecord,
    DuplicateTrialError,
    SessionStore,
    TrialRecord,
    WrongKindError,
)
from lensopt.store.export import DUEL_CSV_COLUMNS, export_session

CALIBRATION = {"screen_width_cm": 53.0, "screen_width_px": 1920, "distance_cm": 400.0}


def duels():
    return [
        DuelTrialRecord(
            1, -1.25, 0.5, -1.0, 0.5, 0.3, "CDHKN", "first", 1.25, 1.7e9 + 1, 1.7e9 + 2.25, {"decision_ms": 2.5}
        ),
        DuelTrialRecord(2, 0.1 + 0.2, -1 / 3, 2.0**-30, -4.0, -0.3, "ORSVZ", "same", 0.5, 1.7e9 + 3, 1.7e9 + 3.5),
        DuelTrialRecord(
            3, 4.0, -4.0, 3.75, -4.0, 1.0, "KKKKK", "second", None, 1.7e9 + 4, 1.7e9 + 9, {"text": 'a "quoted", comma'}
        ),
    ]


def test_store_answers_are_the_optimizers_answers():
    assert DUEL_ANSWERS == OPTIMIZER_ANSWERS


@pytest.fixture
def store(tmp_path):
    with SessionStore(tmp_path / "s.db") as store:
        sid = store.create_session(
            "D,01", {"protocol": {"feedback": "duel"}}, CALIBRATION, {"rule": "muc-ald", "seed": 4}, 4, kind=DUEL_KIND
        )
        for record in duels():
            store.append_duel_trial(sid, record)
        yield store


def test_duels_are_read_back_exactly_and_counted_as_the_sessions_trials(store):
    assert store.duel_trials(1) == duels()
    assert store.duel_trials(1, since_index=2) == duels()[2:]
    info = store.session(1)
    assert (info.kind, info.n_trials) == ("duel", 3)
    assert store.trials(1) == []


def test_a_duel_is_recorded_once(store):
    with pytest.raises(DuplicateTrialError, match=r"already has trial 2.*continue at index 4"):
        store.append_duel_trial(1, duels()[1])


def test_letter_trials_and_duels_do_not_mix(store):
    letters = store.create_session("L", {}, {}, {}, 1)
    trial = TrialRecord(1, 0.0, 0.0, 0.2, "K", "K", True, 0.5, 1.0, 2.0)
    with pytest.raises(WrongKindError, match="session 1 is a duel session; a letters trial"):
        store.append_trial(1, trial)
    with pytest.raises(WrongKindError, match=f"session {letters} is a letters session; a duel trial"):
        store.append_duel_trial(letters, duels()[0])
    with pytest.raises(ValueError, match="kind must be one of letters, duel"):
        store.create_session("X", {}, {}, {}, 1, kind="rankings")


@pytest.mark.parametrize(
    "field, value, message",
    [
        ("answer", "both", "answer must be one of first, second, same"),
        ("answer", None, "answer must be one of"),
        ("letters", "ab", "letters must be capital letters"),
        ("first_sphere_d", float("nan"), "first_sphere_d must be a finite number"),
        ("rt_s", -0.1, "rt_s must be >= 0"),
    ],
)
def test_a_bad_duel_record_names_the_field(field, value, message):
    values = dict(
        index=1,
        first_sphere_d=0.0,
        first_cylinder_d=0.0,
        second_sphere_d=0.25,
        second_cylinder_d=0.0,
        letter_logmar=0.1,
        letters="CDH",
        answer="same",
        rt_s=0.4,
        presented_at=1.0,
        answered_at=1.4,
    )
    values[field] = value
    with pytest.raises(ValueError, match=message):
        DuelTrialRecord(**values)


def test_a_duel_sessions_export_says_on_every_row_the_eye_the_session_tested(tmp_path):
    with SessionStore(tmp_path / "e.db") as store:
        protocol = {"protocol": {"feedback": "duel"}, "session": {"eye": "OS"}}
        sid = store.create_session("D", protocol, CALIBRATION, {"rule": "muc-ald", "seed": 4}, 4, kind=DUEL_KIND)
        for record in duels():
            store.append_duel_trial(sid, record)
        rows = list(csv.DictReader(io.StringIO(export_session(store, sid, fmt="csv"))))
        psychopy = list(csv.DictReader(io.StringIO(export_session(store, sid, fmt="psychopy"))))
    assert [r["eye"] for r in rows] == [r["eye"] for r in psychopy] == ["OS"] * len(duels())


def test_duel_csv_export_has_every_answer_and_parses_back(store):
    rows = list(csv.DictReader(io.StringIO(export_session(store, 1, fmt="csv"))))
    assert tuple(rows[0]) == (*DUEL_CSV_COLUMNS, "decision_ms", "text")
    lens_columns = ("letter_logmar", "first_sphere_d", "first_cylinder_d", "second_sphere_d", "second_cylinder_d")
    parsed = [
        DuelTrialRecord(
            index=int(r["trial_index"]),
            letters=r["letters"],
            answer=r["answer"],
            **{k: float(r[k]) for k in lens_columns},
            rt_s=float(r["rt_s"]) if r["rt_s"] else None,
            presented_at=float(r["presented_at_s"]),
            answered_at=float(r["answered_at_s"]),
            extra=extra_from_row(r, stored.extra),
        )
        for r, stored in zip(rows, duels())
    ]
    assert parsed == duels()
    assert [r["answer"] for r in rows] == ["first", "same", "second"]


def test_duel_json_export_holds_the_calibration_and_every_duel(store):
    document = json.loads(export_session(store, 1, fmt="json"))
    assert document["session"]["kind"] == "duel" and document["session"]["n_trials"] == 3
    assert document["calibration"] == CALIBRATION
    assert [DuelTrialRecord(**t) for t in document["trials"]] == duels()


# ------------------------------------------------------------------------------ version 2 -> 3

V2_DDL = (
    """CREATE TABLE sessions (
        id INTEGER PRIMARY KEY AUTOINCREMENT, participant TEXT NOT NULL,
        kind TEXT NOT NULL DEFAULT 'letters', status TEXT NOT NULL DEFAULT 'running',
        created_at REAL NOT NULL, updated_at REAL NOT NULL, seed INTEGER NOT NULL,
        software_version TEXT NOT NULL, protocol TEXT NOT NULL, calibration TEXT NOT NULL,
        optimizer_settings TEXT NOT NULL)""",
    """CREATE TABLE trials (
        id INTEGER PRIMARY KEY,
        session_id INTEGER NOT NULL REFERENCES sessions(id) ON DELETE CASCADE,
        idx INTEGER NOT NULL CHECK (idx >= 1), sphere_d REAL NOT NULL, cylinder_d REAL NOT NULL,
        letter_logmar REAL NOT NULL, letter TEXT NOT NULL, response TEXT,
        correct INTEGER NOT NULL CHECK (correct IN (0, 1)), rt_s REAL,
        presented_at REAL NOT NULL, answered_at REAL NOT NULL, extra TEXT NOT NULL DEFAULT '{}',
        UNIQUE (session_id, idx))""",
)

V2_TRIALS = [
    TrialRecord(1, -1.25, 0.5, 0.3, "K", "K", True, 0.81, 1.6e9 + 1, 1.6e9 + 1.81, {"decision_ms": 4.0}),
    TrialRecord(2, 0.1 + 0.2, -1 / 3, -0.1, "H", "pass", False, None, 1.6e9 + 3, 1.6e9 + 9, {}),
]


def write_v2_database(path):
    """A database as layout 2 wrote it: letter sessions only, no duel_trials table."""
    conn = sqlite3.connect(path)
    with conn:
        for statement in V2_DDL:
            conn.execute(statement)
        conn.execute(
            "INSERT INTO sessions (participant, kind, status, created_at, updated_at, seed, software_version, "
            "protocol, calibration, optimizer_settings) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
            (
                "v2-P3",
                "letters",
                "aborted",
                1.6e9,
                1.6e9 + 9,
                12,
                "0.1.0",
                '{"optimizer": {"rule": "ucb-ald"}}',
                json.dumps(CALIBRATION),
                '{"rule": "ucb-ald"}',
            ),
        )
        conn.executemany(
            "INSERT INTO trials (session_id, idx, sphere_d, cylinder_d, letter_logmar, letter, response, correct, "
            "rt_s, presented_at, answered_at, extra) VALUES (1, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
            [
                (
                    t.index,
                    t.sphere_d,
                    t.cylinder_d,
                    t.letter_logmar,
                    t.letter,
                    t.response,
                    int(t.correct),
                    t.rt_s,
                    t.presented_at,
                    t.answered_at,
                    json.dumps(t.extra),
                )
                for t in V2_TRIALS
            ],
        )
        conn.execute("PRAGMA user_version = 2")
        conn.execute("PRAGMA application_id = 1279610451")
    conn.close()


def user_version(path):
    conn = sqlite3.connect(path)
    try:
        return conn.execute("PRAGMA user_version").fetchone()[0]
    finally:
        conn.close()


def test_a_version_2_database_opens_upgrades_and_keeps_its_letter_sessions(tmp_path):
    path = tmp_path / "v2.db"
    write_v2_database(path)
    with SessionStore(path) as store:
        info = store.session(1)
        assert (info.participant, info.kind, info.status, info.n_trials, info.seed) == (
            "v2-P3",
            "letters",
            "aborted",
            2,
            12,
        )
        assert store.trials(1) == V2_TRIALS and store.duel_trials(1) == []
        store.append_trial(1, TrialRecord(3, 0.0, 0.0, 0.2, "Z", "Z", True, 0.5, 2e9, 2e9 + 1))
        duel = store.create_session("D", {}, CALIBRATION, {}, 1, kind=DUEL_KIND)
        store.append_duel_trial(duel, duels()[1])
    assert user_version(path) == SCHEMA_VERSION
    with SessionStore(path, readonly=True) as store:
        assert store.trials(1)[:2] == V2_TRIALS and len(store.trials(1)) == 3
        assert store.duel_trials(duel) == [duels()[1]] and store.session(duel).n_trials == 1


def test_a_read_only_store_reads_a_version_2_database_as_it_is(tmp_path):
    path = tmp_path / "v2.db"
    write_v2_database(path)
    before = path.read_bytes()
    with SessionStore(path, readonly=True) as store:
        assert store.session(1).n_trials == 2 and store.trials(1) == V2_TRIALS
        assert store.duel_trials(1) == []
    assert path.read_bytes() == before and user_version(path) == 2


def test_the_migrated_duel_table_equals_a_fresh_one(tmp_path):
    old, fresh = tmp_path / "old.db", tmp_path / "fresh.db"
    write_v2_database(old)
    SessionStore(old).close()
    SessionStore(fresh).close()
    layouts = []
    for path in (old, fresh):
        conn = sqlite3.connect(path)
        try:
            layouts.append(
                {
                    table: sorted(tuple(row[1:]) for row in conn.execute(f"PRAGMA table_info({table})"))
                    for table in ("sessions", "trials", "duel_trials")
                }
            )
        finally:
            conn.close()
    assert layouts[0] == layouts[1] and layouts[0]["duel_trials"]


def test_a_duel_of_the_full_prescription_keeps_its_lenses_axes(tmp_path):
    """Schema 8: both lenses' axes are stored and read back; a duel of sphere and cylinder has none."""
    full = DuelTrialRecord(1, -1.25, -0.75, -1.0, -0.5, 0.3, "CDHKN", "second", 1.1, 1.7e9, 1.7e9 + 1.1, {}, 170.0, 5.0)
    with SessionStore(tmp_path / "s.db") as store:
        sid = store.create_session("RX", {}, CALIBRATION, {"search": "prescription"}, 1, kind=DUEL_KIND)
        store.append_duel_trial(sid, full)
        store.append_duel_trial(sid, dataclasses.replace(duels()[0], index=2))
    with SessionStore(tmp_path / "s.db", readonly=True) as store:
        first, second = store.duel_trials(sid)
    assert first == full and (first.first_axis_deg, first.second_axis_deg) == (170.0, 5.0) and first.has_axes
    assert (second.first_axis_deg, second.second_axis_deg) == (None, None) and not second.has_axes
    conn = sqlite3.connect(tmp_path / "s.db")
    try:
        rows = conn.execute("SELECT first_axis_deg, second_axis_deg FROM duel_trials ORDER BY idx").fetchall()
    finally:
        conn.close()
    assert rows == [(170.0, 5.0), (None, None)]


@pytest.mark.parametrize(
    "axes, message",
    [((170.0, None), "both lenses have an axis"), ((181.0, 5.0), r"first_axis_deg must be in 0-180")],
)
def test_a_duel_record_refuses_half_an_axis_pair_or_an_axis_out_of_range(axes, message):
    with pytest.raises(ValueError, match=message):
        DuelTrialRecord(1, -1.0, -0.5, -1.0, -0.5, 0.3, "CDHKN", "same", None, 1.7e9, 1.7e9 + 1, {}, *axes)
