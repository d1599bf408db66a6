"""CSV and JSON exports parse back to the stored values."""

import csv
import io
import json

import pytest

from lensopt.errors import StoreError
from lensopt.store import SessionStore, TrialRecord
from lensopt.store.export import CSV_COLUMNS, export_session

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


def parse_csv_trial(row):
    return TrialRecord(
        index=int(row["index"]),
        sphere_d=float(row["sphere_d"]),
        cylinder_d=float(row["cylinder_d"]),
        letter_logmar=float(row["letter_logmar"]),
        letter=row["letter"],
        response=row["response"] or None,
        correct={"1": True, "0": False}[row["correct"]],
        rt_s=float(row["rt_s"]) if row["rt_s"] else None,
        presented_at=float(row["presented_at"]),
        answered_at=float(row["answered_at"]),
        extra=json.loads(row["extra"]),
    )


def test_csv_export_parses_back_to_the_same_values(store):
    text = export_session(store, 1, fmt="csv")
    rows = list(csv.DictReader(io.StringIO(text)))
    assert tuple(rows[0].keys()) == CSV_COLUMNS
    assert [parse_csv_trial(row) for row in rows] == stored_trials()
    assert {row["session_id"] for row in rows} == {"1"} and rows[0]["participant"] == "P,001"


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
        assert json.loads(export_session(store, sid, fmt="json"))["trials"] == []


def test_bad_format_and_missing_session_raise(store):
    with pytest.raises(ValueError, match="format must be one of csv, json"):
        export_session(store, 1, fmt="xlsx")
    with pytest.raises(StoreError, match="no session 9"):
        export_session(store, 9, fmt="json")
