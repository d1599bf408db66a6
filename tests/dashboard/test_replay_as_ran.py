"""The dashboard and the printed record rebuild a stored comparison session from the settings its
trials show it ran with, as its resume does (lensopt.modes.as_ran.session_as_ran): they had guessed by
its creation date alone and, for a full-prescription duel made later by an older lensopt, drew
another model than the one its resume continued (a review of 7 Dec 2026)."""

from __future__ import annotations

import sqlite3

from lensopt.dashboard.model import followed_from_store
from lensopt.modes.as_ran import session_as_ran
from lensopt.modes.registry import get_mode, session_settings
from lensopt.refraction.prescription_duels import PrescriptionDuelOptimizer
from lensopt.store import DUEL_KIND, DuelTrialRecord, SessionStore
from tests.modes.test_as_ran import LATER_S, _fixture, _prescription_duel_records


def _intervals(prescription) -> tuple:
    """A prescription's 95 % intervals as the dashboard's snapshot holds them."""
    return tuple((key, float(low), float(high)) for key, (low, high) in prescription.intervals.items())


def _stored(path, commit: str) -> int:
    """The fixture's duels stored as a session that stores neither its trust centre nor its lens
    order, created on 7 Dec 2026 (by an older lensopt installed still)."""
    fixture = _fixture(commit)
    with SessionStore(path) as store:
        sid = store.create_session("P1", {"duel": {}}, {}, fixture["duel"]["state"]["settings"], 5, kind=DUEL_KIND)
        for r in _prescription_duel_records(fixture):
            record = DuelTrialRecord(
                r.index, r.first_sphere_d, r.first_cylinder_d, r.second_sphere_d, r.second_cylinder_d,
                r.letter_logmar, "CDHKN", r.answer, 1.0, 1e9 + r.index, 1e9 + r.index + 1,
                first_axis_deg=r.first_axis_deg, second_axis_deg=r.second_axis_deg,
            )  # fmt: skip
            store.append_duel_trial(sid, record)
    with sqlite3.connect(path) as conn:
        conn.execute("UPDATE sessions SET created_at = ? WHERE id = ?", (LATER_S, sid))
    conn.close()
    return sid


def test_the_dashboard_draws_the_model_a_resume_continues_not_the_one_its_date_suggests(tmp_path):
    path = tmp_path / "clinic.db"
    sid = _stored(path, "a247e62")  # its code centred by the mean; made later, its date says tilted
    with SessionStore(path, readonly=True) as store:
        info, records = store.session(sid), store.kind_trials(DUEL_KIND, sid)
        shown = followed_from_store(store, sid).snapshot()
    ran = session_as_ran(info, records).settings
    assert ran["trust_centre"] == "mean" and session_settings(info)["trust_centre"] == "tilted"
    pairs = [get_mode("duel").history_pair(record) for record in records]
    as_resumed = PrescriptionDuelOptimizer.from_settings(ran, pairs).prescription()
    by_date = PrescriptionDuelOptimizer.from_settings(session_settings(info), pairs).prescription()
    assert _intervals(as_resumed) != _intervals(by_date)  # the two models differ: the test tells them apart
    assert shown.prescription == as_resumed.text and shown.prescription_intervals == _intervals(as_resumed)


def test_a_session_whose_store_says_how_it_ran_is_drawn_from_its_store(tmp_path):
    path = tmp_path / "clinic.db"
    sid = _stored(path, "c1303ab")  # its code centred by the tilted mean, as its settings say
    with SessionStore(path, readonly=True) as store:
        info, records = store.session(sid), store.kind_trials(DUEL_KIND, sid)
        shown = followed_from_store(store, sid).snapshot()
    assert session_as_ran(info, records).settings == session_settings(info)
    pairs = [get_mode("duel").history_pair(record) for record in records]
    assert (
        shown.prescription == PrescriptionDuelOptimizer.from_settings(session_settings(info), pairs).prescription().text
    )
