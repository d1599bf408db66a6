"""Ranking sessions in the store: ranking rows, the kind guard, the version 3 -> 4 migration, exports."""

import csv
import dataclasses
import io
import json
import sqlite3

import pytest
from export_reading import extra_from_row

from lensopt.store import (
    DUEL_KIND,
    RANKING_KIND,
    SCHEMA_VERSION,
    DuelTrialRecord,
    DuplicateTrialError,
    RankingTrialRecord,
    SessionStore,
    TrialRecord,
    WrongKindError,
)
from lensopt.store.export import export_session, ranking_csv_columns
from lensopt.store.schema import MIGRATIONS

CALIBRATION = {"screen_width_cm": 53.0, "screen_width_px": 1920, "distance_cm": 400.0}


def rankings():
    return [
        RankingTrialRecord(
            1,
            ((-1.25, 0.5), (-1.0, 0.5), (0.25, -0.75)),
            0.3,
            "CDHKN",
            (1, 0, 2),
            2.5,
            1.7e9 + 1,
            1.7e9 + 3.5,
            {"decision_ms": 2.5, "key_rt_s": [1.25, 2.5]},
        ),
        RankingTrialRecord(
            2,
            ((0.1 + 0.2, -1 / 3), (2.0**-30, -4.0), (4.0, 4.0), (-4.0, 0.0)),
            -0.3,
            "ORSVZ",
            (3, 2, 0, 1),
            None,
            1.7e9 + 4,
            1.7e9 + 9,
        ),
    ]


@pytest.fixture
def store(tmp_path):
    with SessionStore(tmp_path / "s.db") as store:
        sid = store.create_session(
            "R,01",
            {"protocol": {"feedback": "ranking"}},
            CALIBRATION,
            {"rule": "mpes-ald", "seed": 4},
            4,
            kind=RANKING_KIND,
        )
        for record in rankings():
            store.append_ranking_trial(sid, record)
        yield store


def test_rankings_are_read_back_exactly_and_counted_as_the_sessions_trials(store):
    assert store.ranking_trials(1) == rankings()
    assert store.ranking_trials(1, since_index=1) == rankings()[1:]
    assert store.session_trials(1) == rankings()
    info = store.session(1)
    assert (info.kind, info.n_trials) == ("ranking", 2)
    assert store.trials(1) == [] and store.duel_trials(1) == []
    assert rankings()[0].ranked_lenses_d == ((-1.0, 0.5), (-1.25, 0.5), (0.25, -0.75))


def test_a_ranking_is_recorded_once_and_only_in_a_ranking_session(store):
    with pytest.raises(DuplicateTrialError, match=r"already has trial 2.*continue at index 3"):
        store.append_ranking_trial(1, rankings()[1])
    duel = store.create_session("D", {}, {}, {}, 1, kind=DUEL_KIND)
    with pytest.raises(WrongKindError, match=f"session {duel} is a duel session; a ranking trial"):
        store.append_ranking_trial(duel, rankings()[0])
    with pytest.raises(WrongKindError, match="session 1 is a ranking session; a duel trial"):
        store.append_duel_trial(1, DuelTrialRecord(3, 0.0, 0.0, 0.25, 0.0, 0.1, "CDH", "same", 0.4, 1.0, 1.4))


@pytest.mark.parametrize(
    "field, value, message",
    [
        ("order", (0, 0, 1), "order must hold each lens index 0..2 once"),
        ("order", (0, 1), "order must hold each lens index 0..2 once"),
        ("order", (True, 0, 2), "order must hold each lens index"),
        ("lenses_d", ((0.0, 0.0), (0.0, 0.0), (0.25, 0.0)), "lenses_d must be 2 to 4 distinct"),
        ("lenses_d", ((0.0, 0.0), (float("nan"), 0.0), (0.25, 0.0)), "lenses_d must be 2 to 4 distinct finite"),
        ("lenses_d", tuple((0.25 * k, 0.0) for k in range(5)), "lenses_d must be 2 to 4"),
        ("letters", "ab", "letters must be capital letters"),
        ("rt_s", -0.1, "rt_s must be >= 0"),
    ],
)
def test_a_bad_ranking_record_names_the_field(field, value, message):
    values = dict(
        index=1,
        lenses_d=((0.0, 0.0), (0.25, 0.0), (0.0, -0.25)),
        letter_logmar=0.1,
        letters="CDH",
        order=(2, 0, 1),
        rt_s=0.4,
        presented_at=1.0,
        answered_at=1.4,
    )
    values[field] = value
    with pytest.raises(ValueError, match=message):
        RankingTrialRecord(**values)


def test_ranking_csv_export_has_every_order_and_parses_back(store):
    rows = list(csv.DictReader(io.StringIO(export_session(store, 1, fmt="csv"))))
    assert tuple(rows[0]) == (*ranking_csv_columns(4), "decision_ms", "key_rt_s_1", "key_rt_s_2")
    n_lenses = [int(r["n_lenses"]) for r in rows]
    assert n_lenses == [3, 4]
    parsed = [
        RankingTrialRecord(
            index=int(r["trial_index"]),
            lenses_d=tuple((float(r[f"lens_{k}_sphere_d"]), float(r[f"lens_{k}_cylinder_d"])) for k in range(1, n + 1)),
            letter_logmar=float(r["letter_logmar"]),
            letters=r["letters"],
            order=tuple(int(r[f"rank_{k}_lens"]) - 1 for k in range(1, n + 1)),  # lens numbers from 1
            rt_s=float(r["rt_s"]) if r["rt_s"] else None,
            presented_at=float(r["presented_at_s"]),
            answered_at=float(r["answered_at_s"]),
            extra=extra_from_row(r, stored.extra),
        )
        for r, n, stored in zip(rows, n_lenses, rankings())
    ]
    assert parsed == rankings()
    assert [[r[f"rank_{k}_lens"] for k in range(1, 5)] for r in rows] == [["2", "1", "3", ""], ["4", "3", "1", "2"]]


def test_ranking_json_export_holds_the_calibration_and_every_ranking(store):
    document = json.loads(export_session(store, 1, fmt="json"))
    assert document["session"]["kind"] == "ranking" and document["session"]["n_trials"] == 2
    assert document["calibration"] == CALIBRATION
    assert document["trials"][0]["order"] == [1, 0, 2]
    assert [
        RankingTrialRecord(**{**t, "lenses_d": tuple(map(tuple, t["lenses_d"]))}) for t in document["trials"]
    ] == rankings()


# ------------------------------------------------------------------------------ version 3 -> 4

V3_TRIALS = [TrialRecord(1, -1.25, 0.5, 0.3, "K", "K", True, 0.81, 1.6e9 + 1, 1.6e9 + 1.81, {"decision_ms": 4.0})]
V3_DUELS = [DuelTrialRecord(1, -1.25, 0.5, -1.0, 0.5, 0.3, "CDHKN", "same", 1.25, 1.7e9 + 1, 1.7e9 + 2.25)]


def write_v3_database(path):
    """A database as layout 3 wrote it: a letter and a duel session, no ranking_trials table."""
    conn = sqlite3.connect(path)
    with conn:
        from lensopt.store.schema import CREATE_STATEMENTS

        for statement in CREATE_STATEMENTS:  # layout 3: no ranking_trials, results, axis_deg, void, eye, events
            if not any(name in statement for name in ("ranking_trials", "results", "_axis_deg", "session_events")):
                statement = statement.replace("axis_deg REAL,", "")
                statement = statement.replace("void INTEGER NOT NULL DEFAULT 0 CHECK (void IN (0, 1)),", "")
                conn.execute(statement.replace("eye TEXT CHECK (eye IN ('OD', 'OS')),", ""))
        for participant, kind in (("v3-L", "letters"), ("v3-D", "duel")):
            conn.execute(
                "INSERT INTO sessions (participant, kind, status, created_at, updated_at, seed, software_version, "
                "protocol, calibration, optimizer_settings) VALUES (?, ?, 'aborted', 1.6e9, 1.6e9, 7, '0.1.0', "
                "'{}', ?, '{\"rule\": \"mpes-ald\"}')",
                (participant, kind, json.dumps(CALIBRATION)),
            )
        t = V3_TRIALS[0]
        conn.execute(
            "INSERT INTO trials (session_id, idx, sphere_d, cylinder_d, letter_logmar, letter, response, "
            "correct, rt_s, presented_at, answered_at, extra) VALUES (1, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
            (
                t.index,
                t.sphere_d,
                t.cylinder_d,
                t.letter_logmar,
                t.letter,
                t.response,
                1,
                t.rt_s,
                t.presented_at,
                t.answered_at,
                json.dumps(t.extra),
            ),
        )
        d = V3_DUELS[0]
        conn.execute(
            "INSERT INTO duel_trials (session_id, idx, first_sphere_d, first_cylinder_d, second_sphere_d, "
            "second_cylinder_d, letter_logmar, letters, answer, rt_s, presented_at, answered_at, extra) "
            "VALUES (2, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, '{}')",
            (
                d.index,
                *d.first_lens_d,
                *d.second_lens_d,
                d.letter_logmar,
                d.letters,
                d.answer,
                d.rt_s,
                d.presented_at,
                d.answered_at,
            ),
        )
        conn.execute("PRAGMA user_version = 3")
        conn.execute("PRAGMA application_id = 1279610451")
    conn.close()


def user_version(path):
    conn = sqlite3.connect(path)
    try:
        return conn.execute("PRAGMA user_version").fetchone()[0]
    finally:
        conn.close()


def test_a_version_3_database_upgrades_keeping_its_letter_and_duel_sessions(tmp_path):
    path = tmp_path / "v3.db"
    write_v3_database(path)
    with SessionStore(path, readonly=True) as store:  # read as it is, untouched
        assert store.ranking_trials(1) == [] and store.duel_trials(2) == V3_DUELS
    assert user_version(path) == 3
    with SessionStore(path) as store:
        assert [(i.participant, i.kind, i.n_trials) for i in store.sessions()] == [
            ("v3-L", "letters", 1),
            ("v3-D", "duel", 1),
        ]
        assert store.trials(1) == V3_TRIALS and store.duel_trials(2) == V3_DUELS
        ranking = store.create_session("R", {}, CALIBRATION, {}, 1, kind=RANKING_KIND)
        store.append_ranking_trial(ranking, rankings()[0])
    assert user_version(path) == SCHEMA_VERSION and MIGRATIONS[3]
    with SessionStore(path, readonly=True) as store:
        assert store.trials(1) == V3_TRIALS and store.duel_trials(2) == V3_DUELS
        assert store.ranking_trials(ranking) == [rankings()[0]] and store.session(ranking).n_trials == 1


def test_the_migrated_ranking_table_equals_a_fresh_one(tmp_path):
    old, fresh = tmp_path / "old.db", tmp_path / "fresh.db"
    write_v3_database(old)
    SessionStore(old).close()
    SessionStore(fresh).close()
    layouts = []
    for path in (old, fresh):
        conn = sqlite3.connect(path)
        try:
            layouts.append(
                {
                    table: sorted(tuple(row[1:]) for row in conn.execute(f"PRAGMA table_info({table})"))
                    for table in ("sessions", "trials", "duel_trials", "ranking_trials")
                }
            )
        finally:
            conn.close()
    assert layouts[0] == layouts[1] and layouts[0]["ranking_trials"]


FULL = RankingTrialRecord(
    1,
    ((-1.25, -0.75), (-1.25, -0.75), (-1.0, -0.5)),  # two lenses that differ only in their axes
    0.3,
    "CDHKN",
    (2, 0, 1),
    1.5,
    1.7e9,
    1.7e9 + 1.5,
    {"decision_ms": 40.0},
    (170.0, 10.0, 180.0),
)


def test_a_ranking_of_the_full_prescription_keeps_its_lenses_axes(tmp_path):
    """Schema 9: the lenses' axes are stored (JSON text in ``axes_deg``) and read back; a ranking of
    sphere and cylinder has none (NULL); lenses of one sphere and cylinder are distinct by their axes."""
    with SessionStore(tmp_path / "s.db") as store:
        sid = store.create_session("RX", {}, CALIBRATION, {"search": "prescription"}, 1, kind=RANKING_KIND)
        store.append_ranking_trial(sid, FULL)
        store.append_ranking_trial(sid, rankings()[1])
    with SessionStore(tmp_path / "s.db", readonly=True) as store:
        full, plain = store.ranking_trials(sid)
    assert full == FULL and full.axes_deg == (170.0, 10.0, 180.0) and full.has_axes
    assert plain.axes_deg is None and not plain.has_axes
    conn = sqlite3.connect(tmp_path / "s.db")
    try:
        rows = conn.execute("SELECT lenses_d, axes_deg FROM ranking_trials ORDER BY idx").fetchall()
    finally:
        conn.close()
    assert rows[0] == ("[[-1.25,-0.75],[-1.25,-0.75],[-1.0,-0.5]]", "[170.0,10.0,180.0]") and rows[1][1] is None


def test_the_csv_export_writes_each_lenses_axis_in_its_own_column_and_json_keeps_them(tmp_path):
    with SessionStore(tmp_path / "s.db") as store:
        sid = store.create_session("RX", {}, CALIBRATION, {"search": "prescription"}, 1, kind=RANKING_KIND)
        store.append_ranking_trial(sid, FULL)
        store.append_ranking_trial(sid, rankings()[1])
        rows = list(csv.DictReader(io.StringIO(export_session(store, sid, fmt="csv"))))
        document = json.loads(export_session(store, sid, fmt="json"))
    assert [rows[0][f"lens_{k}_axis_deg"] for k in (1, 2, 3)] == ["170.0", "10.0", "180.0"]
    assert [rows[1][f"lens_{k}_axis_deg"] for k in (1, 2, 3, 4)] == ["", "", "", ""]
    assert not any(cell.startswith("[") for row in rows for cell in row.values())  # no JSON in a cell
    assert document["trials"][0]["axes_deg"] == [170.0, 10.0, 180.0] and document["trials"][1]["axes_deg"] is None
    assert document["format_version"] >= 8  # 8: rankings' axes_deg


@pytest.mark.parametrize(
    "axes, message",
    [
        ((170.0, 10.0), "axes_deg must be None or one axis in 0-180 degrees per lens \\(3\\)"),
        ((170.0, 10.0, 181.0), "axes_deg must be None or one axis in 0-180"),
    ],
)
def test_a_ranking_record_refuses_axes_that_do_not_fit_its_lenses(axes, message):
    with pytest.raises(ValueError, match=message):
        RankingTrialRecord(1, FULL.lenses_d, 0.3, "CDHKN", (0, 1, 2), None, 1.7e9, 1.7e9 + 1, {}, axes)
    with pytest.raises(ValueError, match="distinct"):
        RankingTrialRecord(1, FULL.lenses_d, 0.3, "CDHKN", (0, 1, 2), None, 1.7e9, 1.7e9 + 1, {}, (10.0, 10.0, 5.0))


def test_a_version_8_database_reads_its_rankings_without_axes_and_after_the_upgrade_stores_them(tmp_path):
    """Migration 8 -> 9: a file of layout 8 (no ``axes_deg``) is read as it is by a read-only store
    (every ranking without axes, the file untouched), then upgraded: its old rankings keep no axes
    and a ranking of the full prescription is stored beside them with its axes."""
    path = tmp_path / "v8.db"
    with SessionStore(path) as store:
        sid = store.create_session("R8", {}, CALIBRATION, {}, 1, kind=RANKING_KIND)
        store.append_ranking_trial(sid, rankings()[0])
    conn = sqlite3.connect(path)
    with conn:  # layout 8 exactly: the ranking table without the column of version 9, no events (10)
        conn.execute("ALTER TABLE ranking_trials DROP COLUMN axes_deg")
        conn.execute("DROP TABLE session_events")
        conn.execute("PRAGMA user_version = 8")
    conn.close()
    before = path.read_bytes()
    with SessionStore(path, readonly=True) as store:
        assert store.ranking_trials(sid) == [rankings()[0]] and store.ranking_trials(sid)[0].axes_deg is None
    assert path.read_bytes() == before
    with SessionStore(path) as store:
        store.append_ranking_trial(sid, dataclasses.replace(FULL, index=2))
        old, full = store.ranking_trials(sid)
    assert old == rankings()[0] and not old.has_axes and full.axes_deg == FULL.axes_deg
    conn = sqlite3.connect(path)
    try:
        assert conn.execute("PRAGMA user_version").fetchone()[0] == SCHEMA_VERSION
    finally:
        conn.close()
