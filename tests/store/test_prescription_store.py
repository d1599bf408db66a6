"""Schema 5: letter trials keep their axis, sessions their prescription; every older layout migrates.

``data/schema-4-letters.sql`` is a real database written by lensopt before schema 5 (``lensopt run
--protocol demo-simulated --participant old-v4 --seed 7 --trials 12``), with its CSV export by that
version (``schema-4-letters.csv``) and what its rebuilt optimizer then asked and reported
(``schema-4-letters-next.json``).
"""

import csv
import dataclasses
import io
import json
import sqlite3
from pathlib import Path

import pytest
from export_reading import extra_from_row
from test_schema import EXPECTED_V1_TRIALS, write_v1_database

from lensopt.errors import StoreError
from lensopt.modes.registry import get_mode
from lensopt.store import (
    DUEL_KIND,
    SCHEMA_VERSION,
    DuelTrialRecord,
    RankingTrialRecord,
    ResultRecord,
    SessionStore,
    TrialRecord,
    schema,
)
from lensopt.store.export import CSV_COLUMNS, export_session

DATA = Path(__file__).parent / "data"

DUEL = DuelTrialRecord(1, -1.25, 0.5, -1.0, 0.5, 0.3, "CDHKN", "same", 1.25, 1.7e9 + 1, 1.7e9 + 2.25)
RANKING = RankingTrialRecord(1, ((-1.0, 0.0), (-0.5, 0.0), (0.0, -0.5)), 0.2, "CDHKN", (2, 0, 1), 2.0, 1.8e9, 1.8e9 + 2)

RESULT = ResultRecord(
    prescription="-1.25 / -0.75 x 170",
    sphere_d=-1.25,
    cylinder_d=-0.75,
    axis_deg=170.0,
    predicted_acuity_logmar=-0.02,
    confidence=0.93,
    n_trials=40,
    intervals={"m_d": [-1.8, -1.4], "axis_deg": [160.0, 185.0]},
    recorded_at=1.9e9,
    software_version="9.9.9",
)


def write_database(path, version: int) -> None:
    """A database as layout ``version`` wrote it: the version-1 letter session, then each older
    migration by hand, with a duel session from layout 3 and a ranking session from layout 4."""
    write_v1_database(path)
    conn = sqlite3.connect(path)
    with conn:
        for step in range(1, version):
            for statement in schema.MIGRATIONS[step]:
                conn.execute(statement)
        if version >= 3:
            conn.execute(
                "INSERT INTO sessions (participant, kind, status, created_at, updated_at, seed, software_version, "
                "protocol, calibration, optimizer_settings) VALUES ('D', 'duel', 'aborted', 1.7e9, 1.7e9, 3, "
                "'0.1.0', '{}', '{}', '{}')"
            )
            conn.execute(
                "INSERT INTO duel_trials (session_id, idx, first_sphere_d, first_cylinder_d, second_sphere_d, "
                "second_cylinder_d, letter_logmar, letters, answer, rt_s, presented_at, answered_at) "
                "VALUES (2, 1, -1.25, 0.5, -1.0, 0.5, 0.3, 'CDHKN', 'same', 1.25, ?, ?)",
                (1.7e9 + 1, 1.7e9 + 2.25),
            )
        if version >= 4:
            conn.execute(
                "INSERT INTO sessions (participant, kind, status, created_at, updated_at, seed, software_version, "
                "protocol, calibration, optimizer_settings) VALUES ('R', 'ranking', 'aborted', 1.8e9, 1.8e9, 4, "
                "'0.1.0', '{}', '{}', '{}')"
            )
            conn.execute(
                "INSERT INTO ranking_trials (session_id, idx, lenses_d, letter_logmar, letters, lens_order, rt_s, "
                "presented_at, answered_at) VALUES (3, 1, ?, 0.2, 'CDHKN', ?, 2.0, 1.8e9, ?)",
                (RANKING.lenses_json(), RANKING.order_json(), 1.8e9 + 2),
            )
        conn.execute(f"PRAGMA user_version = {version:d}")
    conn.close()


def user_version(path) -> int:
    conn = sqlite3.connect(path)
    try:
        return conn.execute("PRAGMA user_version").fetchone()[0]
    finally:
        conn.close()


def full_layout(path) -> dict:
    conn = sqlite3.connect(path)
    try:
        tables = [r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'")]
        return {
            t: sorted(tuple(row[1:]) for row in conn.execute(f"PRAGMA table_info({t})"))
            for t in tables
            if not t.startswith("sqlite_")
        }
    finally:
        conn.close()


@pytest.mark.parametrize("version", range(1, SCHEMA_VERSION))
def test_every_older_version_migrates_keeping_every_row_with_null_axes_and_no_result(tmp_path, version):
    path = tmp_path / f"v{version}.db"
    write_database(path, version)
    with SessionStore(path, readonly=True) as store:  # read as it is, untouched
        assert store.trials(1) == EXPECTED_V1_TRIALS and all(t.axis_deg is None for t in store.trials(1))
        assert store.session(1).result is None
    assert user_version(path) == version
    with SessionStore(path) as store:
        infos = store.sessions()
        assert [(i.participant, i.n_trials, i.result) for i in infos] == [
            ("old-P7", 2, None),
            *([("D", 1, None)] if version >= 3 else []),
            *([("R", 1, None)] if version >= 4 else []),
        ]
        assert store.trials(1) == EXPECTED_V1_TRIALS and [t.axis_deg for t in store.trials(1)] == [None, None]
        if version >= 3:
            assert store.duel_trials(2) == [DUEL]
        if version >= 4:
            assert store.ranking_trials(3) == [RANKING]
    assert user_version(path) == SCHEMA_VERSION
    conn = sqlite3.connect(path)
    try:
        assert conn.execute("SELECT COUNT(*), COUNT(axis_deg) FROM trials").fetchone() == (2, 0)
    finally:
        conn.close()


@pytest.mark.parametrize("version", range(1, SCHEMA_VERSION))
def test_every_migrated_layout_equals_a_fresh_one_table_by_table(tmp_path, version):
    old, fresh = tmp_path / "old.db", tmp_path / "fresh.db"
    write_database(old, version)
    SessionStore(old).close()
    SessionStore(fresh).close()
    assert full_layout(old) == full_layout(fresh)


def test_a_trial_keeps_its_axis_and_a_session_its_prescription(tmp_path):
    path = tmp_path / "s.db"
    with SessionStore(path) as store:
        sid = store.create_session("P", {}, {}, {"search": "prescription"}, 1)
        store.append_trial(sid, TrialRecord(1, -1.0, -0.5, 0.3, "K", "K", True, 0.8, 1.0, 2.0, {}, axis_deg=175.0))
        store.append_trial(sid, TrialRecord(2, -1.0, 0.0, 0.2, "H", None, False, None, 3.0, 4.0))
        store.set_result(sid, RESULT)
    with SessionStore(path, readonly=True) as store:
        assert [t.axis_deg for t in store.trials(sid)] == [175.0, None]
        assert store.session(sid).result == RESULT
        document = json.loads(export_session(store, sid, "json"))
        rows = list(csv.DictReader(io.StringIO(export_session(store, sid, "csv"))))
    assert document["result"]["prescription"] == "-1.25 / -0.75 x 170"
    assert document["result"]["intervals"]["axis_deg"] == [160.0, 185.0]
    assert [t["axis_deg"] for t in document["trials"]] == [175.0, None]
    assert [r["axis_deg"] for r in rows] == ["175.0", ""]


def test_a_session_finished_again_replaces_its_prescription(tmp_path):
    with SessionStore(tmp_path / "s.db") as store:
        sid = store.create_session("P", {}, {}, {}, 1)
        store.set_result(sid, RESULT)
        later = ResultRecord("-1.50 / -0.75 x 172", -1.5, -0.75, 172.0, None, None, 60)
        store.set_result(sid, later)
        (info,) = store.sessions()
    assert info.result.prescription == "-1.50 / -0.75 x 172" and info.result.n_trials == 60
    assert info.result.software_version and info.result.recorded_at > 0  # filled in when stored


@pytest.mark.parametrize(
    "field, value, message",
    [
        ("axis_deg", 200.0, r"TrialRecord\.axis_deg must be in 0-180 degrees"),
        ("axis_deg", float("nan"), r"TrialRecord\.axis_deg must be a finite number"),
    ],
)
def test_a_trial_with_a_bad_axis_is_refused_before_the_database(field, value, message):
    with pytest.raises(ValueError, match=message):
        TrialRecord(1, -1.0, -0.5, 0.3, "K", "K", True, 0.8, 1.0, 2.0, **{field: value})


def test_a_database_written_before_schema_5_loads_replays_and_exports_as_before(tmp_path, make_schema_4_database):
    path = tmp_path / "old.db"
    make_schema_4_database(path)
    expected = json.loads((DATA / "schema-4-letters-next.json").read_text())
    assert user_version(path) == 4
    with SessionStore(path) as store:  # upgraded in place
        info, records = store.session(1), store.trials(1)
        csv_text = export_session(store, 1, "csv")
    assert user_version(path) == SCHEMA_VERSION
    assert (info.participant, info.status, info.n_trials, info.result) == ("old-v4", "finished", 12, None)
    assert all(r.axis_deg is None for r in records)
    # replay: the rebuilt optimizer asks and reports what it did before the change
    optimizer = get_mode("letters").rebuild_optimizer(info.optimizer_settings, records)
    trial = optimizer.ask()
    assert trial.axis_deg is None
    assert [trial.sphere_d, trial.cylinder_d, trial.letter_logmar] == pytest.approx(expected["next_trial"], abs=1e-9)
    assert list(optimizer.best()) == pytest.approx(expected["best_lens_d"], abs=1e-9)
    # export: the old CSV's values in the tidy columns (issue 18: ``index`` is ``trial_index``, the
    # unix times ``presented_at_s``/``answered_at_s`` beside ISO-8601 UTC, ``extra`` one column per
    # key), the columns added since empty (no axis, no eye) and no answer void
    old_rows = list(csv.DictReader(io.StringIO((DATA / "schema-4-letters.csv").read_text())))
    new_rows = list(csv.DictReader(io.StringIO(csv_text)))
    assert tuple(new_rows[0]) == (*CSV_COLUMNS, "letter_height_px", "decision_ms")
    renamed = {"index": "trial_index", "presented_at": "presented_at_s", "answered_at": "answered_at_s"}
    for old, new in zip(old_rows, new_rows, strict=True):
        assert {k: new[renamed.get(k, k)] for k in old if k != "extra"} == {
            k: v for k, v in old.items() if k != "extra"
        }
        assert extra_from_row(new, json.loads(old["extra"])) == json.loads(old["extra"])
    assert new_rows[0]["presented_at_utc"] == "2026-11-24T05:22:07.138041Z"
    assert {row["axis_deg"] for row in new_rows} == {""} and {row["void"] for row in new_rows} == {"0"}
    assert {row["eye"] for row in new_rows} == {""} and {row["kind"] for row in new_rows} == {"letters"}
    assert not any(r.void for r in records)


@pytest.mark.parametrize("fmt", ["csv", "psychopy", "json"])
def test_a_database_written_before_schema_5_exports_read_only_in_every_format_untouched(
    tmp_path, fmt, make_schema_4_database
):
    make_schema_4_database(tmp_path / "old.db")
    before = {p.name: p.read_bytes() for p in tmp_path.iterdir()}
    with SessionStore(tmp_path / "old.db", readonly=True) as store:
        text = export_session(store, 1, fmt)
    after = {p.name: p.read_bytes() for p in tmp_path.iterdir()}
    assert after["old.db"] == before["old.db"] and user_version(tmp_path / "old.db") == 4
    # a WAL database opened read-only may leave SQLite's empty write-ahead log and its index; nothing else
    assert set(after) - set(before) <= {"old.db-wal", "old.db-shm"} and not after.get("old.db-wal")
    assert (len(json.loads(text)["trials"]) if fmt == "json" else text.count("\n") - 1) == 12


@pytest.mark.parametrize("version", range(1, SCHEMA_VERSION))
def test_every_older_version_reads_and_migrates_with_no_answer_void(tmp_path, version):
    path = tmp_path / f"v{version}.db"
    write_database(path, version)
    with SessionStore(path, readonly=True) as store:  # read as it is: no void column, nothing void
        assert [t.void for t in store.trials(1)] == [False, False]
        assert store.session(1).n_undone == 0
    with SessionStore(path) as store:
        assert [t.void for t in store.trials(1)] == [False, False]
        store.void_trial(1, 2)
        assert [t.void for t in store.trials(1)] == [False, True]
        assert (store.session(1).n_undone, store.session(1).n_answers) == (1, 1)
    assert user_version(path) == SCHEMA_VERSION


def test_voiding_an_answer_a_stored_result_counts_withdraws_that_result_in_the_same_transaction(tmp_path):
    """The answer that ended an eye, undone after its result was stored: the result of that eye is
    deleted with the void (no stored result claims a void answer); the other eye's, and a result that
    did not count the answer (one stored before it, at an earlier end), stay."""
    path = tmp_path / "s.db"
    with SessionStore(path) as store:
        sid = store.create_session("P", {}, {}, {}, 1)
        for index, eye in enumerate(("OD", "OD", "OD", "OS", "OS"), start=1):
            store.append_trial(sid, TrialRecord(index, -1.0, -0.5, 0.3, "K", "K", True, 0.8, 1.0, 2.0, {}, eye=eye))
        store.set_result(sid, dataclasses.replace(RESULT, n_trials=2, eye="OD"))  # of OD's first two answers
        store.set_result(sid, dataclasses.replace(RESULT, n_trials=2, eye="OS"))
        assert store.void_trial(sid, 3) is False  # OD's third answer: its result did not count it
        assert [r.eye for r in store.session(sid).results] == ["OD", "OS"]
        assert store.void_trial(sid, 2) is True  # OD's second: its result counted it
        assert [r.eye for r in store.session(sid).results] == ["OS"]
        assert store.void_trial(sid, 2) is False  # voided again: nothing more
        assert store.void_trial(sid, 5) is True and store.session(sid).results == ()


def test_an_answer_added_after_an_eyes_result_withdraws_that_result_in_the_same_transaction(tmp_path):
    """A resume given more trials adds answers to an eye that ended: its stored result (of fewer
    answers) is withdrawn with the first of them, so that a kill before the eye ends again leaves no
    result of 22 letters beside an eye of 24; the other eye's stays, as does a result of as many
    answers as the eye holds (an undone answer not counted)."""
    path = tmp_path / "s.db"

    def answer(store, index, eye, void=False):
        store.append_trial(
            sid, TrialRecord(index, -1.0, -0.5, 0.3, "K", "K", True, 0.8, 1.0, 2.0, {}, eye=eye, void=void)
        )

    with SessionStore(path) as store:
        sid = store.create_session("P", {}, {}, {}, 1)
        for index, eye in enumerate(("OD", "OD", "OS", "OS"), start=1):
            answer(store, index, eye)
        store.set_result(sid, dataclasses.replace(RESULT, n_trials=2, eye="OD"))
        store.set_result(sid, dataclasses.replace(RESULT, n_trials=2, eye="OS"))
        answer(store, 5, "OD", void=True)  # undone: the result still counts every answer
        assert [r.eye for r in store.session(sid).results] == ["OD", "OS"]
        answer(store, 6, "OD")  # the resume's first answer to OD
    with SessionStore(path) as store:  # on disk, as a kill would leave it
        assert [(r.eye, r.n_trials) for r in store.session(sid).results] == [("OS", 2)]
        store.set_result(sid, dataclasses.replace(RESULT, n_trials=3, eye="OD"))  # OD's end, anew
        assert [(r.eye, r.n_trials) for r in store.session(sid).results] == [("OD", 3), ("OS", 2)]


def test_a_duel_added_after_the_sessions_result_withdraws_it(tmp_path):
    with SessionStore(tmp_path / "s.db") as store:
        sid = store.create_session("P", {}, {}, {}, 1, kind=DUEL_KIND)
        store.append_duel_trial(sid, DUEL)
        store.set_result(sid, dataclasses.replace(RESULT, n_trials=1))
        assert len(store.session(sid).results) == 1
        store.append_duel_trial(sid, dataclasses.replace(DUEL, index=2))
        assert store.session(sid).results == ()


def test_an_undone_answer_is_kept_marked_void_and_exported_with_its_flag(tmp_path):
    path = tmp_path / "s.db"
    with SessionStore(path) as store:
        sid = store.create_session("P", {}, {}, {}, 1)
        for index in (1, 2, 3):
            store.append_trial(sid, TrialRecord(index, -1.0, -0.5, 0.3, "K", "K", True, 0.8, 1.0, 2.0, {}))
        store.void_trial(sid, 2)
        with pytest.raises(StoreError, match="has no letter trial 9 to undo"):
            store.void_trial(sid, 9)
        records = store.trials(sid)
        document = json.loads(export_session(store, sid, "json"))
        rows = list(csv.DictReader(io.StringIO(export_session(store, sid, "csv"))))
    assert [r.void for r in records] == [False, True, False] and len(records) == 3
    with SessionStore(path, readonly=True) as store:
        info = store.session(sid)
    assert (info.n_trials, info.n_undone, info.n_answers) == (3, 1, 2)  # rows kept, answers undone, the rest
    assert [t["void"] for t in document["trials"]] == [False, True, False]
    assert [r["void"] for r in rows] == ["0", "1", "0"]


def test_a_result_per_eye_is_kept_and_replaced_per_eye(tmp_path):
    path = tmp_path / "s.db"
    with SessionStore(path) as store:
        sid = store.create_session("P", {"session": {"eye": "OU"}}, {}, {}, 1)
        store.append_trial(sid, TrialRecord(1, -1.0, -0.5, 0.3, "K", "K", True, 0.8, 1.0, 2.0, {}, 170.0, eye="OD"))
        store.append_trial(sid, TrialRecord(2, -2.0, -0.5, 0.3, "K", "K", True, 0.8, 1.0, 2.0, {}, 10.0, eye="OS"))
        store.set_result(sid, dataclasses.replace(RESULT, eye="OS", prescription="-2.00 / -0.50 x 010"))
        store.set_result(sid, dataclasses.replace(RESULT, eye="OD"))
        store.set_result(sid, dataclasses.replace(RESULT, eye="OD", prescription="-1.00 / -0.50 x 170"))
        info = store.session(sid)
        document = json.loads(export_session(store, sid, "json"))
        rows = list(csv.DictReader(io.StringIO(export_session(store, sid, "csv"))))
    assert info.eye == "OU" and [t.eye for t in store_trials(path, sid)] == ["OD", "OS"]
    assert [(r.eye, r.prescription) for r in info.results] == [
        ("OD", "-1.00 / -0.50 x 170"),
        ("OS", "-2.00 / -0.50 x 010"),
    ]
    assert info.result.eye == "OD"
    assert document["eye"] == "OU" and [r["eye"] for r in document["results"]] == ["OD", "OS"]
    assert [t["eye"] for t in document["trials"]] == ["OD", "OS"] and [r["eye"] for r in rows] == ["OD", "OS"]
    with pytest.raises(ValueError, match=r"TrialRecord\.eye must be one of OD, OS or None"):
        TrialRecord(1, -1.0, -0.5, 0.3, "K", "K", True, 0.8, 1.0, 2.0, eye="OU")


def store_trials(path, session_id):
    with SessionStore(path, readonly=True) as store:
        return store.trials(session_id)


def test_a_stored_session_holds_its_results_to_its_protocols_stop_confidence(tmp_path):
    """The target a stored result must reach to be printed or shown as a prescription: the protocol's
    [stop] confidence as stored with the session (what its closing console used), else the optimizer
    settings' stop, else 0.95; a malformed value is not a target."""
    from lensopt.store import stored_confidence_target, stored_stop_confidence

    stop = {"confidence": 0.8, "min_trials": 5, "max_trials": 20}
    with SessionStore(tmp_path / "s.db") as store:
        sid = store.create_session("P1", {"stop": stop}, {}, {"stop": dict(stop, confidence=0.6)}, 1)
        plain = store.create_session("P2", {}, {}, {"stop": None}, 1)
        info, none = store.session(sid), store.session(plain)
    assert stored_stop_confidence(info) == 0.8 and stored_confidence_target(info) == 0.8
    assert stored_stop_confidence(dataclasses.replace(info, protocol={})) == 0.6
    assert stored_stop_confidence(none) is None and stored_confidence_target(none) == 0.95
    for bad in (True, 1.5, "0.9", None):
        assert stored_confidence_target(dataclasses.replace(none, protocol={"stop": {"confidence": bad}})) == 0.95


@pytest.mark.parametrize(
    ("confidence", "target", "expected"),
    [(0.95, 0.95, True), (0.9499, 0.95, False), (0.61, 0.6, True), (0.11, 0.95, False), (None, 0.95, True)],
)
def test_a_lens_is_prescribed_from_the_target_confidence_on_and_a_result_without_one_always(
    confidence, target, expected
):
    from lensopt.stopping import enough_to_prescribe, prescription_target

    assert enough_to_prescribe(confidence, target) is expected
    assert prescription_target(None) == 0.95 and prescription_target(0.6) == 0.6


def test_a_note_no_answer_followed_is_kept_with_the_last_trial_after_any_earlier(tmp_path):
    path = tmp_path / "s.db"
    with SessionStore(path) as store:
        sid = store.create_session("P", {}, {}, {}, 1)
        with pytest.raises(StoreError, match=f"session {sid} has no answered letter trial to keep the note with"):
            store.keep_note_after_last_trial(sid, "tired")
        for index in (1, 2):
            store.append_trial(sid, TrialRecord(index, -1.0, -0.5, 0.3, "K", "K", True, 0.8, 1.0, 2.0, {"note": "x"}))
        assert store.keep_note_after_last_trial(sid, "tired") == 2
        assert store.keep_note_after_last_trial(sid, "stopped: headache") == 2
        store.append_trial(sid, TrialRecord(3, -1.0, -0.5, 0.3, "K", "Z", False, 0.8, 1.0, 2.0, {}))
        store.void_trial(sid, 3)  # undone: the note goes with the last answer kept, not with it
        assert store.keep_note_after_last_trial(sid, "and lost focus") == 2
    with SessionStore(path, readonly=True) as store:
        first, last, undone = store.trials(sid)
    assert first.extra == {"note": "x"} and undone.extra == {}
    assert last.extra == {"note": "x", "note_after": "tired; stopped: headache; and lost focus"}
