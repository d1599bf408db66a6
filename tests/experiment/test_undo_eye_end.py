"""Backspace after the answer that ended an eye — at the closing screen, or before the next eye's
first answer in a session of both eyes — undoes it as an ordinary undo does: the answer is kept and
marked void in the store, the eye's result computed from it is withdrawn in the same transaction,
and the eye goes on, its trial asked again by the optimizer rebuilt from the other answers. A kill
at any moment after it leaves a session whose resume continues that eye, with no result claiming
the void answer.
"""

import csv
import io
import json
import re
import sqlite3

import pytest
from test_clinician_keys import ClinicKeys, PatientAndClinician, run, simulated_clinic

from experiment_helpers import needs_display
from lensopt.experiment.modes import MODES, answered
from lensopt.experiment.session import RunRequest, run_session
from lensopt.modes.registry import get_mode
from lensopt.store import SessionStore
from lensopt.store.export import export_session

pytestmark = needs_display

CLOSING = ["space", "backspace"]  # the closing screen's keys: close, or undo the last answer


class UndoAtClosing(ClinicKeys):
    """:class:`ClinicKeys` pressing Backspace at the first ``times`` closing screens."""

    def __init__(self, times=1, **script):
        super().__init__(**script)
        self.times = times

    def wait_for(self, keys, timeout_s=None):
        if list(keys) == CLOSING and self.times:
            self.times -= 1
            return super().wait_for(["backspace"])
        return super().wait_for(keys, timeout_s)


def test_backspace_at_the_closing_screen_voids_the_answer_that_ended_the_eye_and_asks_it_again(
    tmp_path, window, console_states
):
    outcome, info, records, lines = run(tmp_path, window, UndoAtClosing(), trials=3)
    assert outcome.status == "finished"
    assert [(r.index, r.void) for r in records] == [(1, False), (2, False), (3, True), (4, False)]
    # the trial asked again is the one the answer undone was given to: the same lens (the optimizer
    # rebuilt from the two answers before it proposes what it proposed then)
    lens = [(r.sphere_d, r.cylinder_d, r.axis_deg, r.letter_logmar) for r in records]
    assert lens[3] == lens[2]
    undo = next(x for x in lines if x.startswith("undo: OD trial 3 ("))
    assert "kept and marked void; the OD result computed from it withdrawn; the eye OD continues" in undo
    # the stored result is the one of the answers that count, not of the one undone
    rebuilt = get_mode("letters").rebuild_optimizer(info.optimizer_settings, answered(records))
    assert info.result.n_trials == 3 == rebuilt.n_trials
    assert info.result.prescription == rebuilt.prescription().text
    assert (info.n_answers, info.n_undone) == (3, 1)
    closing = [s for s in console_states if s.heading == "Session finished"]
    assert closing and all(s.message == "SPACE: close   ·   BACKSPACE: undo the last answer" for s in closing)
    # the export numbers each row as the log did (trial 3 twice: the answer undone and the one asked again)
    logged = [int(m.group(1)) for x in lines if (m := re.match(r"(?:OD )?trial\s+(\d+)/3\b", x))]
    with SessionStore(tmp_path / "s.db", readonly=True) as store:
        rows = list(csv.DictReader(io.StringIO(export_session(store, info.session_id, "csv"))))
    assert logged == [1, 2, 3, 3] == [int(row["eye_trial_number"]) for row in rows]


def test_an_eye_its_stopping_rule_ended_goes_on_after_the_undo_and_the_rule_is_asked_again(tmp_path, window):
    path, patient = simulated_clinic(tmp_path, confidence=0.6, trials=40)
    source = PatientAndClinician(patient)
    closings = []

    def wait_for(keys, timeout_s=None):
        if list(keys) == CLOSING:
            closings.append(keys)
            if len(closings) == 1:
                return ClinicKeys.wait_for(source, ["backspace"])
        return PatientAndClinician.wait_for(source, keys, timeout_s)

    source.wait_for = wait_for
    lines = []
    outcome = run_session(
        RunRequest(db_path=tmp_path / "s.db", protocol_path=path, participant="P1", seed=3),
        responses=source,
        log=lines.append,
        window=window,
    )
    stops = [x for x in lines if x.startswith("stopped at ")]
    first = int(stops[0].split()[2])
    assert len(closings) == 2 and len(stops) == 2  # stopped, undone, asked again, stopped again
    assert any(x.startswith(f"undo: OD trial {first} (") for x in lines)
    with SessionStore(tmp_path / "s.db", readonly=True) as store:
        info, records = store.session(outcome.session_id), store.trials(outcome.session_id)
    assert [r.index for r in records if r.void] == [first]
    assert outcome.status == "finished" and outcome.stopped_at == len(answered(records))
    assert info.result.n_trials == outcome.stopped_at and info.result.confidence >= 0.6


class UndoBeforeOS(ClinicKeys):
    """An OU session of ``per_eye`` trials an eye: the clinician presses Backspace once, at the first
    screen after OD's last answer that ``offered(keys)`` says (OS's instructions, or its first lens prompt)."""

    def __init__(self, per_eye, offered):
        super().__init__()
        self.per_eye, self.offered, self.answers, self.pressed = per_eye, offered, 0, False

    def wait_for(self, keys, timeout_s=None):
        if self.answers == self.per_eye and not self.pressed and self.offered(keys):
            self.pressed = True
            return super().wait_for(["backspace"])
        return super().wait_for(keys, timeout_s)

    def letter_response(self, trial, letter, keys, timeout_s=None, index=0):
        self.answers += 1
        return super().letter_response(trial, letter, keys, timeout_s, index)


@pytest.mark.parametrize(
    "screen",
    [
        pytest.param(lambda keys: list(keys) == ["space", "escape", "backspace"], id="os-instructions"),
        pytest.param(lambda keys: "l" in keys, id="os-first-lens-prompt"),
    ],
)
def test_backspace_before_the_second_eyes_first_answer_undoes_the_first_eyes_last(
    tmp_path, window, console_states, screen
):
    source = UndoBeforeOS(2, screen)
    outcome, info, records, lines = run(tmp_path, window, source, trials=2, **{"session.eye": '"OU"'})
    assert source.pressed and outcome.status == "finished"
    assert [(r.index, r.eye, r.void) for r in records] == [
        (1, "OD", False),
        (2, "OD", True),
        (3, "OD", False),  # OD's second trial asked again
        (4, "OS", False),
        (5, "OS", False),
    ]
    assert any(x.startswith("undo: OD trial 2 (") and "the OD result computed from it withdrawn" in x for x in lines)
    assert not any("no answer to undo" in x for x in lines)
    assert [(r.eye, r.n_trials) for r in info.results] == [("OD", 2), ("OS", 2)]
    for result in info.results:
        rebuilt = MODES["letters"].rebuild_optimizer(info.optimizer_settings, records, result.eye)  # void skipped
        assert result.prescription == rebuilt.prescription().text
    # OS's instructions, before its first answer, offer the undo of OD's last, and say whose: beside
    # OS's "Last answers: none yet" a plain "undo the last answer" read as undoing nothing
    os_start = [s for s in console_states if s.eye == "OS" and "Eye OS:" in s.heading]
    assert os_start and all("BACKSPACE: undo OD's last answer" in s.keys_text for s in os_start)
    os_later = [s for s in console_states if s.eye == "OS" and s.answers]
    assert os_later and all("BACKSPACE: undo the last answer" in s.keys_text for s in os_later if s.keys_text)


def snapshot(db, copy):
    """``copy`` holds what a kill -9 at this moment would leave of ``db``: its committed transactions."""
    with sqlite3.connect(db) as source, sqlite3.connect(copy) as target:
        source.backup(target)


def test_a_kill_after_the_undo_at_the_closing_screen_resumes_that_eye_with_no_result_claiming_it(
    tmp_path, window, monkeypatch
):
    """Killed the moment the undo is stored (before the session goes on), or at the trial asked
    again: neither database holds a result claiming the void answer, and each resume asks that
    trial again and stores the result of the answers that count."""
    kills = {"undone": tmp_path / "undone.db", "asked again": tmp_path / "asked.db"}
    original = SessionStore.void_trial

    def void_and_kill(self, session_id, index):
        withdrawn = original(self, session_id, index)
        snapshot(tmp_path / "s.db", kills["undone"])
        return withdrawn

    monkeypatch.setattr(SessionStore, "void_trial", void_and_kill)

    class KilledAtTheTrialAskedAgain(UndoAtClosing):
        def letter_response(self, trial, letter, keys, timeout_s=None, index=0):
            if index == 4:
                snapshot(tmp_path / "s.db", kills["asked again"])
            return super().letter_response(trial, letter, keys, timeout_s, index)

    outcome, info, records, _ = run(tmp_path, window, KilledAtTheTrialAskedAgain(), trials=3)
    assert outcome.status == "finished" and [r.void for r in records] == [False, False, True, False]
    monkeypatch.undo()
    for moment, db in kills.items():
        with SessionStore(db, readonly=True) as store:
            killed = store.session(outcome.session_id)
            exported = json.loads(export_session(store, outcome.session_id, "json"))
        assert killed.status == "running" and killed.results == (), moment  # withdrawn with the undo
        assert exported["results"] == [] and [t["void"] for t in exported["trials"]] == [False, False, True]
        lines = []
        resumed = run_session(
            RunRequest(db_path=db, resume=outcome.session_id), responses=ClinicKeys(), log=lines.append, window=window
        )
        assert any("resuming at eye OD, trial 3 of 3" in x for x in lines), (moment, lines)
        with SessionStore(db, readonly=True) as store:
            after, trials = store.session(outcome.session_id), store.trials(outcome.session_id)
        assert resumed.status == "finished" and [t.void for t in trials] == [False, False, True, False]
        assert trials[3].letter == records[3].letter and trials[3].sphere_d == records[3].sphere_d  # asked again
        assert after.result.n_trials == 3 and after.result.prescription == info.result.prescription, moment
