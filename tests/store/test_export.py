"""CSV, PsychoPy and JSON exports parse back to the stored values; every mode's is tidy for pandas."""

import csv
import dataclasses
import errno
import io
import json
import os
from importlib import metadata

import pytest
from export_reading import assert_tidy_csv, assert_tidy_json, extra_from_row

from lensopt.errors import LensoptError, StoreError
from lensopt.store import DuelTrialRecord, RankingTrialRecord, ResultRecord, SessionStore, TrialRecord
from lensopt.store.export import CSV_COLUMNS, FORMATS, export_session, export_sessions
from lensopt.store.tidy import PSYCHOPY_COLUMNS

CALIBRATION = {"screen_width_cm": 52.7, "screen_width_px": 1920, "distance_cm": 400.0, "gamma": 2.2}


def stored_trials():
    return [
        TrialRecord(
            1, -1 / 3, 0.7, 0.123456789012345, "K", "K", True, 0.8125, 1.7e9 + 0.1, 1.7e9 + 0.9, {"decision_ms": 3.2}
        ),
        TrialRecord(2, 2.0**-30, -4.0, -0.3, "H", "pass", False, 1e-7, 1.7e9 + 2.5, 1.7e9 + 3.1, {}),
        TrialRecord(
            3,
            0.1 + 0.2,
            -2 / 3,
            1.0,
            "Z",
            None,
            False,
            None,
            1.7e9 + 4.0,
            1.7e9 + 9.0,
            {"text": 'a "quoted", comma', "list": [1, None, 2.5]},
        ),
    ]


@pytest.fixture
def store(tmp_path):
    with SessionStore(tmp_path / "s.db") as store:
        sid = store.create_session(
            "P,001", {"rule": "ts-ald", "trials": 3}, CALIBRATION, {"rule": "ts-ald", "seed": 5}, 5
        )
        for trial in stored_trials():
            store.append_trial(sid, trial)
        store.set_status(sid, "finished")
        yield store


def parse_csv_trial(row, stored_extra):
    return TrialRecord(
        index=int(row["trial_index"]),
        sphere_d=float(row["sphere_d"]),
        cylinder_d=float(row["cylinder_d"]),
        letter_logmar=float(row["letter_logmar"]),
        letter=row["letter"],
        response=row["response"] or None,
        correct={"1": True, "0": False}[row["correct"]],
        rt_s=float(row["rt_s"]) if row["rt_s"] else None,
        presented_at=float(row["presented_at_s"]),
        answered_at=float(row["answered_at_s"]),
        extra=extra_from_row(row, stored_extra),
    )


def test_csv_export_parses_back_to_the_same_values(store):
    text = export_session(store, 1, fmt="csv")
    rows = list(csv.DictReader(io.StringIO(text)))
    assert tuple(rows[0].keys()) == (*CSV_COLUMNS, "decision_ms", "text", "list_1", "list_2", "list_3")
    assert [parse_csv_trial(row, t.extra) for row, t in zip(rows, stored_trials())] == stored_trials()
    assert {row["session_id"] for row in rows} == {"1"} and rows[0]["participant"] == "P,001"
    assert [row["presented_at_utc"] for row in rows] == [
        "2023-11-14T22:13:20.100000Z",
        "2023-11-14T22:13:22.500000Z",
        "2023-11-14T22:13:24.000000Z",
    ]
    assert [(row["list_1"], row["list_2"], row["list_3"]) for row in rows] == [("", "", "")] * 2 + [("1", "", "2.5")]


def test_json_export_parses_back_to_the_same_values_and_metadata(store):
    document = json.loads(export_session(store, 1, fmt="json"))
    assert document["session"]["participant"] == "P,001"
    assert document["session"]["status"] == "finished" and document["session"]["n_trials"] == 3
    assert document["calibration"] == CALIBRATION
    assert document["protocol"] == {"rule": "ts-ald", "trials": 3}
    assert document["optimizer_settings"] == {"rule": "ts-ald", "seed": 5}
    assert document["seed"] == 5 and document["software_version"] == store.session(1).software_version
    trials = [TrialRecord(**{k: v for k, v in t.items()}) for t in document["trials"]]
    assert trials == stored_trials()


def test_json_export_always_names_the_three_calibration_keys(tmp_path):
    with SessionStore(tmp_path / "s.db") as store:
        sid = store.create_session("sim", {}, {"screen_width_cm": 30.0}, {}, 0)
        calibration = json.loads(export_session(store, sid, fmt="json"))["calibration"]
    assert calibration == {"screen_width_cm": 30.0, "screen_width_px": None, "distance_cm": None}


def test_export_writes_to_a_file_or_a_stream(store, tmp_path):
    path = tmp_path / "out.csv"
    text = export_session(store, 1, fmt="csv", out=path)
    assert path.read_text(encoding="utf-8") == text
    stream = io.StringIO()
    assert export_session(store, 1, fmt="json", out=stream) == stream.getvalue()


def test_export_of_an_empty_session_has_only_the_header(tmp_path):
    with SessionStore(tmp_path / "s.db") as store:
        sid = store.create_session("P", {}, {}, {}, 0)
        assert export_session(store, sid, fmt="csv") == ",".join(CSV_COLUMNS) + "\n"
        assert export_session(store, sid, fmt="psychopy").rstrip().split(",")[-5:] == list(PSYCHOPY_COLUMNS)
        assert json.loads(export_session(store, sid, fmt="json"))["trials"] == []


def test_bad_format_and_missing_session_raise(store):
    with pytest.raises(ValueError, match="format must be one of csv, json, psychopy"):
        export_session(store, 1, fmt="xlsx")
    with pytest.raises(StoreError, match="no session 9"):
        export_session(store, 9, fmt="json")
    with pytest.raises(StoreError, match="no session 9"):
        export_sessions(store, [1, 9], fmt="csv")


# ------------------------------------------------------------------ every mode, every format

LETTERS = [
    TrialRecord(
        1,
        -1.25,
        -0.75,
        0.3,
        "K",
        "K",
        True,
        0.8125,
        1.8e9 + 0.25,
        1.8e9 + 1.0625,
        {"letter_height_px": 51.45974779179255, "decision_ms": 0.23},
        axis_deg=170.0,
        eye="OD",
    ),
    TrialRecord(
        2,
        -1.0,
        -0.5,
        0.2,
        "H",
        "pass",
        False,
        1.5,
        1.8e9 + 3,
        1.8e9 + 4.5,
        {"letter_height_px": 40.0, "asked_lens": "-1.25 / -0.75 x 170", "lens_set_by_clinician": True, "note": "tired"},
        axis_deg=175.0,
        void=True,
        eye="OD",
    ),
    TrialRecord(3, -2.0, 0.0, 0.1, "Z", None, False, None, 1.8e9 + 6, 1.8e9 + 9, {"letter": "a clash"}, eye="OS"),
]
DUELS = [
    DuelTrialRecord(
        1, -1.25, 0.5, -1.0, 0.5, 0.3, "CDHKN", "first", 1.25, 1.8e9 + 1, 1.8e9 + 2.25, {"decision_ms": 2.5}
    ),
    DuelTrialRecord(2, 0.1 + 0.2, -1 / 3, 2.0**-30, -4.0, -0.3, "ORSVZ", "same", None, 1.8e9 + 3, 1.8e9 + 3.5),
]
RANKINGS = [
    RankingTrialRecord(
        1,
        ((-1.25, 0.5), (-1.0, 0.5), (0.25, -0.75)),
        0.3,
        "CDHKN",
        (1, 0, 2),
        2.5,
        1.8e9 + 1,
        1.8e9 + 3.5,
        {"letter_height_px": 30.5, "key_rt_s": [1.25, 2.5], "decision_ms": 2.5},
    ),
    RankingTrialRecord(
        2,
        ((0.1 + 0.2, -1 / 3), (2.0**-30, -4.0), (4.0, 4.0), (-4.0, 0.0)),
        -0.3,
        "ORSVZ",
        (3, 2, 0, 1),
        None,
        1.8e9 + 4,
        1.8e9 + 9,
    ),
]
RESULTS = [
    ResultRecord("-1.25 / -0.75 x 170", -1.25, -0.75, 170.0, 0.0, 0.96, 2, {"m_d": [-1.5, -1.0]}, eye="OD"),
    ResultRecord("-2.00 DS", -2.0, 0.0, None, 0.1, 0.95, 1, eye="OS"),
]


@pytest.fixture
def modes_db(tmp_path):
    """A database with a finished full-prescription OU letter session (1), a duel (2) and a ranking session (3)."""
    path = tmp_path / "modes.db"
    protocol = {"protocol": {"name": "clinical-prescription"}, "session": {"eye": "OU"}}
    with SessionStore(path) as store:
        sid = store.create_session("P,01", protocol, CALIBRATION, {"rule": "bracket-ald"}, 1)
        for record in LETTERS:
            store.append_trial(sid, record)
        for result in RESULTS:
            store.set_result(sid, result)
        store.set_status(sid, "finished")
        sid = store.create_session("D01", {}, CALIBRATION, {"rule": "muc-ald"}, 2, kind="duel")
        for record in DUELS:
            store.append_duel_trial(sid, record)
        sid = store.create_session("R01", {}, CALIBRATION, {"rule": "mpes-ald"}, 3, kind="ranking")
        for record in RANKINGS:
            store.append_ranking_trial(sid, record)
    return path


@pytest.mark.parametrize("fmt", FORMATS)
@pytest.mark.parametrize("session_id, kind", [(1, "letters"), (2, "duel"), (3, "ranking")])
def test_pandas_reads_every_mode_and_format_with_numbers_as_numbers_and_no_json_in_a_cell(
    modes_db, session_id, kind, fmt
):
    before = modes_db.read_bytes()
    with SessionStore(modes_db, readonly=True) as store:
        text = export_session(store, session_id, fmt=fmt)
    assert modes_db.read_bytes() == before  # the export only reads
    if fmt == "json":
        frame = assert_tidy_json(text)
        assert len(frame) == {1: 3, 2: 2, 3: 2}[session_id]
        return
    frame = assert_tidy_csv(text)
    assert set(frame["kind"]) == {kind} and list(frame["trial_index"]) == list(range(1, len(frame) + 1))
    assert frame["trial_index"].dtype == "int64" and frame["session_id"].dtype == "int64"
    assert "index" not in frame.columns and "extra" not in frame.columns
    if fmt == "psychopy":
        assert list(frame.columns[-5:]) == list(PSYCHOPY_COLUMNS)


def test_letter_csv_flattens_extra_and_keeps_the_clinicians_columns(modes_db):
    with SessionStore(modes_db, readonly=True) as store:
        rows = list(csv.DictReader(io.StringIO(export_session(store, 1, fmt="csv"))))
    extras = ("letter_height_px", "decision_ms", "lens_set_by_clinician", "extra_letter")
    assert tuple(rows[0])[-10:] == (
        "asked_lens", "note", "protocol", "n_alternatives", "alphabet", "eye_trial_number", *extras
    )  # fmt: skip
    assert [(r["eye"], r["axis_deg"], r["void"]) for r in rows] == [
        ("OD", "170.0", "0"),
        ("OD", "175.0", "1"),
        ("OS", "", "0"),
    ]
    # the console's numbers: OD trial 1; OD trial 2, undone (the next OD answer is trial 2 again); OS trial 1
    assert [r["eye_trial_number"] for r in rows] == ["1", "2", "1"]
    assert rows[1]["asked_lens"] == "-1.25 / -0.75 x 170" and rows[1]["note"] == "tired"
    assert [r["lens_set_by_clinician"] for r in rows] == ["", "1", ""]
    assert [r["extra_letter"] for r in rows] == ["", "", "a clash"] and [r["letter"] for r in rows] == ["K", "H", "Z"]
    assert [extra_from_row(r, t.extra) for r, t in zip(rows, LETTERS)] == [t.extra for t in LETTERS]


def test_ranking_csv_has_a_column_per_lens_and_1_based_ranks(modes_db):
    with SessionStore(modes_db, readonly=True) as store:
        rows = list(csv.DictReader(io.StringIO(export_session(store, 3, fmt="csv"))))
    lens_columns = [f"lens_{k}_{p}" for k in range(1, 5) for p in ("sphere_d", "cylinder_d", "axis_deg")]
    assert list(rows[0])[7:9] == ["eye", "letters"]  # after the session columns and trial_index
    assert list(rows[0])[9:] == [
        "letter_logmar", "n_lenses", *lens_columns, *(f"rank_{k}_lens" for k in range(1, 5)), "rt_s",
        "presented_at_utc", "answered_at_utc", "presented_at_s", "answered_at_s",
        "protocol", "n_alternatives", "alphabet", "eye_trial_number",
        "letter_height_px", "key_rt_s_1", "key_rt_s_2", "decision_ms",
    ]  # fmt: skip
    assert [row["eye_trial_number"] for row in rows] == ["1", "2"]  # one eye, no undo: as trial_index
    for row, stored in zip(rows, RANKINGS):
        n = int(row["n_lenses"])
        lenses = tuple((float(row[f"lens_{k}_sphere_d"]), float(row[f"lens_{k}_cylinder_d"])) for k in range(1, n + 1))
        order = tuple(int(row[f"rank_{k}_lens"]) - 1 for k in range(1, n + 1))
        assert (lenses, order) == (stored.lenses_d, stored.order)
        assert all(row[c] == "" for c in lens_columns[3 * n :])
        assert all(row[f"lens_{k}_axis_deg"] == "" for k in range(1, n + 1))  # sphere and cylinder only
    assert [row["rank_1_lens"] for row in rows] == ["2", "4"]  # lens 2, then lens 4, clearest


def test_json_of_a_finished_ou_session_holds_the_eye_and_the_prescription_of_each_eye(modes_db):
    with SessionStore(modes_db, readonly=True) as store:
        document = json.loads(export_session(store, 1, fmt="json"))
    assert document["eye"] == "OU"
    assert [(r["eye"], r["prescription"]) for r in document["results"]] == [
        ("OD", "-1.25 / -0.75 x 170"),
        ("OS", "-2.00 DS"),
    ]
    assert document["result"]["prescription"] == "-1.25 / -0.75 x 170" and document["result"]["eye"] == "OD"
    assert [t["eye"] for t in document["trials"]] == ["OD", "OD", "OS"]
    assert [TrialRecord(**t) for t in document["trials"]] == LETTERS


def test_each_json_result_says_whether_it_is_a_prescription_and_why_not(modes_db, tmp_path):
    """``prescribed`` and ``withheld_reason`` of each result, in the export and in ``lensopt sessions
    --json``: the printed record's rule (a confidence of 0.95 reaches the default target; 0.90 not)."""
    from lensopt.store.export import info_document

    with SessionStore(modes_db) as store:
        store.set_result(1, dataclasses.replace(RESULTS[1], confidence=0.90))  # OS below the target now
        document = json.loads(export_session(store, 1, fmt="json"))
        listed = info_document(store.session(1))
    for results in (document["results"], listed["results"]):
        assert [(r["eye"], r["prescribed"], r["withheld_reason"]) for r in results] == [
            ("OD", True, None),
            ("OS", False, "confidence 0.90 < 0.95 after 1 letters"),
        ]
    assert document["result"]["prescribed"] is True and listed["result"] == listed["results"][0]
    json.dumps(listed)


def test_several_sessions_go_in_one_file_session_id_first_with_the_union_of_the_columns(modes_db):
    with SessionStore(modes_db, readonly=True) as store:
        text = export_sessions(store, [3, 1, 2], fmt="csv")
        alone = {sid: export_session(store, sid, fmt="csv") for sid in (1, 2, 3)}
        documents = json.loads(export_sessions(store, [1, 2], fmt="json"))
    frame = assert_tidy_csv(text)
    assert frame.columns[0] == "session_id" and list(frame["session_id"]) == [3, 3, 1, 1, 1, 2, 2]
    union = set().union(*(next(csv.reader(io.StringIO(t))) for t in alone.values()))
    assert set(frame.columns) == union
    rows = list(csv.DictReader(io.StringIO(text)))
    for sid, single in alone.items():  # each session's rows hold its own values, the others' columns empty
        for row, own in zip([r for r in rows if r["session_id"] == str(sid)], csv.DictReader(io.StringIO(single))):
            assert {k: v for k, v in row.items() if k not in own} == dict.fromkeys(set(row) - set(own), "")
            assert {k: row[k] for k in own} == own
    assert [d["session"]["session_id"] for d in documents] == [1, 2]


def test_psychopy_format_ends_with_psychopys_session_columns(modes_db):
    with SessionStore(modes_db, readonly=True) as store:
        rows = list(csv.DictReader(io.StringIO(export_session(store, 1, fmt="psychopy"))))
        created_at = store.session(1).created_at
    header = list(rows[0])
    assert header[-5:] == ["participant", "date", "expName", "psychopyVersion", "frameRate"]
    assert header.count("participant") == 1 and header[0] == "session_id"
    assert {r["participant"] for r in rows} == {"P,01"} and {r["expName"] for r in rows} == {"clinical-prescription"}
    # the PsychoPy that ran the session's start (its distribution's version); the frame rate is not measured
    assert {(r["psychopyVersion"], r["frameRate"]) for r in rows} == {(metadata.version("psychopy-lib"), "")}
    import datetime as dt

    moment = dt.datetime.fromtimestamp(created_at, dt.UTC)
    assert rows[0]["date"] == moment.strftime("%Y-%m-%d_%Hh%M.%S.") + f"{moment.microsecond // 1000:03d}"


def test_every_row_names_who_answered_the_rule_and_the_seed_so_pooled_data_tell_a_pilot_apart(tmp_path):
    """A pilot's simulated session and a participant's in one export: each row says which it is."""
    with SessionStore(tmp_path / "s.db") as store:
        for participant, observer, rule, seed in (
            ("S01", "keyboard", "ucb-ald", 11),
            ("PILOT", "simulated", "ts-ald", 12),
        ):
            protocol = {"protocol": {"name": "study", "observer": observer}, "optimizer": {"rule": rule}}
            sid = store.create_session(participant, protocol, CALIBRATION, {"rule": rule, "seed": seed}, seed)
            store.append_trial(sid, stored_trials()[0])
        store.create_session("OLD", {"rule": "ts-ald"}, CALIBRATION, {}, 13)  # an early layout, no trial
        old = store.create_session("OLD", {"rule": "ts-ald"}, CALIBRATION, {}, 14)
        store.append_trial(old, stored_trials()[1])
        rows = list(csv.DictReader(io.StringIO(export_sessions(store, [1, 2, 4], fmt="csv"))))
        psychopy = list(csv.DictReader(io.StringIO(export_sessions(store, [1, 2], fmt="psychopy"))))
        documents = json.loads(export_sessions(store, [1, 2], fmt="json"))
    header = list(rows[0])
    assert header[: header.index("trial_index")] == ["session_id", "participant", "kind", "observer", "rule", "seed"]
    assert [(r["participant"], r["observer"], r["rule"], r["seed"]) for r in rows] == [
        ("S01", "keyboard", "ucb-ald", "11"),
        ("PILOT", "simulated", "ts-ald", "12"),
        # a protocol without those tables: no observer (not guessed); the rule it stored at its top, as
        # `lensopt sessions` shows it
        ("OLD", "", "ts-ald", "14"),
    ]
    assert [r["observer"] for r in psychopy] == ["keyboard", "simulated"]
    for document, row in zip(documents, rows):  # the JSON's own record of the same session agrees
        assert document["protocol"]["protocol"]["observer"] == row["observer"]
        assert str(document["seed"]) == row["seed"]


def test_an_export_that_fails_leaves_the_earlier_file_whole_and_no_partial_file(modes_db, tmp_path, monkeypatch):
    """On a full disk ``-o S01.csv`` had cut an earlier export to 8192 bytes ending mid-row."""
    (tmp_path / "exports").mkdir()
    out = tmp_path / "exports" / "S01.csv"
    with SessionStore(modes_db, readonly=True) as store:
        export_session(store, 1, "csv", out=out)
        earlier = out.read_bytes()

        def full_disk(src, dst):
            raise OSError(errno.ENOSPC, "No space left on device")

        monkeypatch.setattr(os, "replace", full_disk)
        with pytest.raises(
            LensoptError, match=r"^cannot write .*S01\.csv \(No space left on device\); choose another --output$"
        ):
            export_session(store, 2, "json", out=out)
        monkeypatch.undo()
        assert out.read_bytes() == earlier and sorted(p.name for p in out.parent.iterdir()) == ["S01.csv"]
        export_session(store, 2, "json", out=out)  # written whole once it can be
    assert json.loads(out.read_text())["session"]["session_id"] == 2
    assert out.stat().st_mode & 0o777 == 0o600


def _session_of_protocol(store, name: str, participant: str, seed: int, kind: str = "letters") -> int:
    """A session stored as ``lensopt run`` stores one of the shipped protocol ``name``: its snapshot
    (``Protocol.to_dict()``) and its optimizer's settings (``n_alternatives`` the alphabet's length)."""
    from lensopt.experiment.protocol import load_protocol

    protocol = load_protocol(name)
    settings = {"rule": protocol.optimizer.rule, "seed": seed, "n_alternatives": len(protocol.letters.alphabet)}
    return store.create_session(participant, protocol.to_dict(), CALIBRATION, settings, seed, kind=kind)


def test_pooled_26_and_10_letter_sessions_say_on_every_row_their_protocol_and_number_of_alternatives(tmp_path):
    """A 26-AFC and a 10-AFC session in one export: each row names its protocol and how many letters
    it drew from (its guess rate 1/n), in the CSV and PsychoPy exports, after every column before."""
    with SessionStore(tmp_path / "s.db") as store:
        for name, participant, seed in (("research-26afc", "S01", 1), ("sloan-10afc", "S02", 2)):
            sid = _session_of_protocol(store, name, participant, seed)
            store.append_trial(sid, stored_trials()[0])
            store.append_trial(sid, stored_trials()[1])
        rows = list(csv.DictReader(io.StringIO(export_sessions(store, [1, 2], fmt="csv"))))
        psychopy = list(csv.DictReader(io.StringIO(export_sessions(store, [1, 2], fmt="psychopy"))))

    expected = [("research-26afc", "26", "ABCDEFGHIJKLMNOPQRSTUVWXYZ")] * 2 + [("sloan-10afc", "10", "CDHKNORSVZ")] * 2
    for table in (rows, psychopy):
        assert [(r["protocol"], r["n_alternatives"], r["alphabet"]) for r in table] == expected
    header = list(rows[0])
    first = CSV_COLUMNS.index("protocol")
    assert header[:first] == list(CSV_COLUMNS[:first])  # the columns before, in their order
    assert header[first : len(CSV_COLUMNS)] == ["protocol", "n_alternatives", "alphabet", "eye_trial_number"]
    assert "n_alternatives" in list(psychopy[0])[:-5]  # a trial column, before PsychoPy's session columns
    frame = assert_tidy_csv(export_text_of(tmp_path / "s.db", [1, 2]))
    assert frame["n_alternatives"].dtype == "int64"
    assert list(1 / frame["n_alternatives"]) == [1 / 26, 1 / 26, 1 / 10, 1 / 10]  # the guess rate


def export_text_of(path, session_ids, fmt="csv"):
    with SessionStore(path, readonly=True) as store:
        return export_sessions(store, session_ids, fmt=fmt)


def test_duel_and_ranking_rows_name_the_letter_set_their_lines_are_drawn_from(tmp_path):
    with SessionStore(tmp_path / "s.db") as store:
        duel = _session_of_protocol(store, "clinical-duel", "D01", 1, kind="duel")
        store.append_duel_trial(duel, DUELS[0])
        ranking = _session_of_protocol(store, "clinical-ranking", "R01", 2, kind="ranking")
        store.append_ranking_trial(ranking, RANKINGS[0])
        alphabets = {sid: store.session(sid).protocol["letters"]["alphabet"] for sid in (duel, ranking)}
    rows = list(csv.DictReader(io.StringIO(export_text_of(tmp_path / "s.db", [duel, ranking]))))
    assert [(r["protocol"], r["n_alternatives"], r["alphabet"]) for r in rows] == [
        ("clinical-duel", str(len(alphabets[duel])), alphabets[duel]),
        ("clinical-ranking", str(len(alphabets[ranking])), alphabets[ranking]),
    ]


def test_an_old_session_fills_the_protocol_columns_from_what_it_stored_and_leaves_the_rest_empty(tmp_path):
    """An early layout without the protocol's tables: the optimizer's stored ``n_alternatives`` if it
    has one, else empty; an ``extra`` value named like the new columns keeps its value, prefixed."""
    with SessionStore(tmp_path / "s.db") as store:
        with_settings = store.create_session("OLD", {"rule": "ts-ald"}, CALIBRATION, {"n_alternatives": 10}, 1)
        store.append_trial(with_settings, dataclasses.replace(stored_trials()[0], extra={"protocol": "mine"}))
        bare = store.create_session("OLD", {"rule": "ts-ald"}, CALIBRATION, {}, 2)
        store.append_trial(bare, stored_trials()[1])
    rows = list(csv.DictReader(io.StringIO(export_text_of(tmp_path / "s.db", [1, 2]))))
    assert [(r["protocol"], r["n_alternatives"], r["alphabet"]) for r in rows] == [("", "10", ""), ("", "", "")]
    assert [r["extra_protocol"] for r in rows] == ["mine", ""]


@pytest.mark.parametrize("fmt", ["csv", "psychopy"])
def test_a_database_written_before_schema_5_exports_its_protocol_and_alternatives(
    tmp_path, fmt, make_schema_4_database
):
    """The real schema-4 database (``lensopt run`` of demo-simulated, 26 letters) exports them from
    its stored snapshot, read-only."""
    make_schema_4_database(tmp_path / "old.db")
    before = (tmp_path / "old.db").read_bytes()
    rows = list(csv.DictReader(io.StringIO(export_text_of(tmp_path / "old.db", [1], fmt))))
    assert len(rows) == 12
    assert {(r["protocol"], r["n_alternatives"], r["alphabet"]) for r in rows} == {
        ("demo-simulated", "26", "ABCDEFGHIJKLMNOPQRSTUVWXYZ")
    }
    assert (tmp_path / "old.db").read_bytes() == before


def _session_with_axis(store, name: str, participant: str, kind: str, axis_deg: float) -> int:
    """A session of shipped protocol ``name`` run with ``--axis axis_deg`` (its snapshot's ``[lens] axis_deg``)."""
    from lensopt.experiment.protocol import load_protocol

    protocol = load_protocol(name).with_lens_axis(axis_deg)
    return store.create_session(participant, protocol.to_dict(), CALIBRATION, {"rule": "x"}, 1, kind=kind)


def test_a_sphere_and_cylinder_search_with_an_axis_exports_that_axis_on_every_lens(tmp_path):
    """``--axis 90``: the console asked for ``+0.50 / -1.00 x 180`` where the store keeps S -0.50, signed
    C +1.00 along 90° and no axis; the CSV's ``axis_deg`` was empty, so a row's lens could not be read
    back. Every lens of such a session now carries the session's axis (a signed cylinder at an axis is
    a sphero-cylinder): the same power vectors as the lens the console named. Without an axis the
    column stays empty; a full prescription's trials keep their own."""
    from lensopt.refraction.lens import Lens

    with SessionStore(tmp_path / "s.db") as store:
        letters = _session_with_axis(store, "clinical-refraction", "A01", "letters", 90.0)
        store.append_trial(letters, TrialRecord(1, -0.5, 1.0, 0.3, "K", "K", True, 1.0, 1.8e9, 1.8e9 + 1))
        duel = _session_with_axis(store, "clinical-duel", "A02", "duel", 90.0)
        store.append_duel_trial(duel, DUELS[0])
        ranking = _session_with_axis(store, "clinical-ranking", "A03", "ranking", 90.0)
        store.append_ranking_trial(ranking, RANKINGS[0])
        plain = _session_of_protocol(store, "research-26afc", "A04", 4)
        store.append_trial(plain, stored_trials()[0])
        full = _session_of_protocol(store, "clinical-prescription", "A05", 5)
        store.append_trial(full, LETTERS[0])  # its own axis, 170
    rows = list(csv.DictReader(io.StringIO(export_text_of(tmp_path / "s.db", [letters, duel, ranking, plain, full]))))
    axes = [
        (r["axis_deg"], r["first_axis_deg"], r["second_axis_deg"], r["lens_1_axis_deg"], r["lens_3_axis_deg"])
        for r in rows
    ]
    assert axes == [
        ("90.0", "", "", "", ""),
        ("", "90.0", "90.0", "", ""),
        ("", "", "", "90.0", "90.0"),
        ("", "", "", "", ""),
        ("170.0", "", "", "", ""),
    ]
    exported = Lens(float(rows[0]["sphere_d"]), float(rows[0]["cylinder_d"]), float(rows[0]["axis_deg"]))
    asked = Lens.parse("+0.50 / -1.00 x 180")
    assert exported.power_vector().to_array() == pytest.approx(asked.power_vector().to_array(), abs=1e-12)


def test_a_first_layout_session_exports_the_rule_that_lensopt_sessions_shows(tmp_path):
    """A version-1 database stored its rule in the optimizer's settings and at the top of its protocol
    (no ``[optimizer]`` table): ``lensopt sessions`` showed ``bald``, the CSV's ``rule`` cell was empty.
    One reading of the rule serves both (:func:`lensopt.store.tidy.session_rule`)."""
    from test_schema import write_v1_database

    from lensopt.cli.handlers.sessions import _rule

    path = tmp_path / "v1.db"
    write_v1_database(path)
    with SessionStore(path, readonly=True) as store:
        info = store.session(1)
        rows = list(csv.DictReader(io.StringIO(export_sessions(store, [1], fmt="csv"))))
        psychopy = list(csv.DictReader(io.StringIO(export_sessions(store, [1], fmt="psychopy"))))
    assert _rule(info) == "bald"
    assert [r["rule"] for r in rows] == [r["rule"] for r in psychopy] == ["bald", "bald"]
    settings_only = dataclasses.replace(info, protocol={}, optimizer_settings={"rule": "ts-ald"})
    protocol_only = dataclasses.replace(info, protocol={"optimizer": {"rule": "ucb-ald"}}, optimizer_settings={})
    assert _rule(settings_only) == "ts-ald" and _rule(protocol_only) == "ucb-ald"
    assert _rule(dataclasses.replace(info, protocol={}, optimizer_settings={})) == "-"
