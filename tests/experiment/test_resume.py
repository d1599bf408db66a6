"""Reading a stored session back to resume it (lensopt.experiment.resume)."""

import io
import sys

import pytest

from experiment_helpers import DEMO_PROTOCOL, REPO
from lensopt.errors import StoreError
from lensopt.experiment.protocol import load_protocol
from lensopt.experiment.resume import read_resumed, resumed_settings
from lensopt.experiment.session import RunRequest
from lensopt.experiment.windows import calibration_from_protocol
from lensopt.stopping import StopRule
from lensopt.store import SessionStore


def _stored(tmp_path, settings):
    protocol = load_protocol(DEMO_PROTOCOL)
    path = tmp_path / "s.db"
    with SessionStore(path) as store:
        sid = store.create_session(
            "P01", protocol.to_dict(), calibration_from_protocol(protocol).to_dict(), settings, 42
        )
    return path, sid


def test_a_resume_reads_the_stored_session_and_says_which_options_it_ignores(tmp_path):
    path, sid = _stored(tmp_path, {"rule": "ucb-ald"})
    request = RunRequest(db_path=path, resume=sid, seed=7, participant="someone else", eye="OS")
    notes = []
    with SessionStore(path) as store:
        resumed = read_resumed(store, request, log=print, warn=notes.append)
    assert resumed.info.seed == 42 and resumed.info.participant == "P01" and resumed.records == []
    assert resumed.mode.kind == "letters" and resumed.protocol.optimizer.rule == "ucb-ald"
    assert [n.split(": ", 1)[1].split(",")[0] for n in notes] == [
        "its stored eye is used",
        "its stored seed 42 is used",
        "its stored participant P01 is used",
    ]


def test_a_session_that_stored_no_optimizer_settings_cannot_be_resumed_and_says_how_to_keep_its_answers(tmp_path):
    path, sid = _stored(tmp_path, {})
    with SessionStore(path) as store, pytest.raises(StoreError, match=f"lensopt export {sid}"):
        read_resumed(store, RunRequest(db_path=path, resume=sid), log=print, warn=print)


def test_more_trials_on_a_resume_move_the_stored_stopping_rules_budget_only():
    protocol = load_protocol("clinical-refraction").with_trials(80)
    stored = {"rule": "acuity-law", "lapse": 0.02, "stop": StopRule(0.95, 20, 40).to_dict()}
    assert resumed_settings(stored, protocol, None) is stored  # no --trials: as it ran
    moved = resumed_settings(stored, protocol, 80)
    assert StopRule.from_dict(moved["stop"]) == StopRule(0.95, 20, 80)  # the protocol's, at the new count
    assert {k: v for k, v in moved.items() if k != "stop"} == {"rule": "acuity-law", "lapse": 0.02}
    fixed = {"rule": "acuity-law", "stop": None}  # a session without a stopping rule keeps none
    assert resumed_settings(fixed, protocol, 80) is fixed


@pytest.mark.parametrize("shown", ["as-asked", "counterbalanced"])
def test_a_duel_session_whose_protocol_stores_no_order_resumes_in_the_order_its_stored_trials_show(tmp_path, shown):
    """Found by an audit of old databases: a duel session made today by a lensopt from before the
    order was stored (its protocol without ``[duel] order``) showed its lenses as asked, and was
    resumed counterbalanced, by its creation date. Now its stored trials decide, and a resume whose
    trials overrule the guess says so."""
    from lensopt.modes.presentation import presented
    from lensopt.observer import SimulatedPatient
    from lensopt.refraction.duels import DuelRefractionOptimizer
    from lensopt.store import DuelTrialRecord

    protocol = load_protocol(REPO / "protocols" / "clinical-duel.toml")
    data = protocol.to_dict()
    data["duel"] = {key: value for key, value in data["duel"].items() if key != "order"}
    optimizer = DuelRefractionOptimizer(seed=11, n_initial=3)
    patient, path = SimulatedPatient(-1.0, -0.5, seed=3), tmp_path / "old.db"
    with SessionStore(path) as store:
        calibration = calibration_from_protocol(protocol).to_dict()
        sid = store.create_session("P01", data, calibration, optimizer.settings_dict(), 11, kind="duel")
        for index in range(1, 7):
            trial = presented(optimizer.ask(), 11, index, shown)
            answer = patient.duel_answer(trial.letter_logmar, trial.first_lens_d, trial.second_lens_d)
            optimizer.tell(trial, answer)
            lenses = (*trial.first_lens_d, *trial.second_lens_d)
            store.append_kind_trial(
                "duel", sid, DuelTrialRecord(index, *lenses, trial.letter_logmar, "ABCDE", answer, 1.0, 0.0, 1.0)
            )
    notes = []
    with SessionStore(path) as store:
        resumed = read_resumed(store, RunRequest(db_path=path, resume=sid), log=lambda _: None, warn=notes.append)
    assert resumed.protocol.duel.order == shown and len(resumed.records) == 6
    if shown == "as-asked":  # what a lensopt of before the stored order ran, as the guess says
        assert notes == []
    else:
        assert notes == [
            f"resuming session {sid}: its trials show it ran with its lenses shown counterbalanced, not as its store suggests (its lenses shown as asked); it resumes as it ran"
        ]


class _Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


@pytest.mark.parametrize(("n_answers", "shown"), [(60, True), (10, False)])
def test_a_long_history_is_rebuilt_under_a_progress_bar_on_a_terminal(monkeypatch, n_answers, shown):
    from lensopt.experiment.modes import mode_for
    from lensopt.refraction.acuity_law import AcuityLawOptimizer
    from lensopt.store import TrialRecord

    mode = mode_for(load_protocol(DEMO_PROTOCOL))
    optimizer = AcuityLawOptimizer(seed=3)
    records = []
    for index in range(1, n_answers + 1):
        trial = optimizer.ask()
        correct = trial.letter_logmar > 0.3
        optimizer.tell(trial, correct)
        records.append(
            TrialRecord(index, trial.sphere_d, trial.cylinder_d, trial.letter_logmar, "K", "K", correct, 0.5, 1.0, 1.5)
        )
    terminal = _Terminal()
    monkeypatch.setattr(sys, "stderr", terminal)
    rebuilt = mode.rebuild_optimizer(optimizer.settings_dict(), records, None, progress=True)
    assert rebuilt.n_trials == n_answers and rebuilt.best() == optimizer.best()
    assert ("rebuilding the search:" in terminal.getvalue()) == shown
    assert (f"/{n_answers} [" in terminal.getvalue()) == shown  # counted in answers (cleared once done)
