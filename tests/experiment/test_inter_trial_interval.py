"""The next trial is decided during the inter-trial interval (``[timing] iti_s``), after the answer
is stored and told: the interval is as long as the protocol says, not that plus the decision, and
the trials are those decided after the interval."""

import sqlite3
import sys
import threading

import pytest

from experiment_helpers import FAST, REPO, needs_display, write_protocol
from lensopt.experiment import loop
from lensopt.experiment.session import RunRequest, run_session
from lensopt.refraction.duels import DuelRefractionOptimizer
from lensopt.refraction.letters import RefractionOptimizer
from lensopt.refraction.rankings import RankingRefractionOptimizer
from lensopt.store import SessionStore

pytestmark = needs_display

ITI_S = 0.4
"""The protocol's inter-trial interval in these tests."""
DECISION_S = 0.25
"""How long each slowed decision takes (waited on an event, not ``time.sleep``, which is counted)."""
N_TRIALS = 5

CASES = {
    "letters": (REPO / "protocols" / "demo-simulated.toml", RefractionOptimizer, "trials", {}),
    "duel": (
        REPO / "protocols" / "clinical-duel.toml",
        DuelRefractionOptimizer,
        "duel_trials",
        {"display.fullscreen": "false", "protocol.observer": '"simulated"'},
    ),
    "ranking": (
        REPO / "protocols" / "clinical-ranking.toml",
        RankingRefractionOptimizer,
        "ranking_trials",
        {"display.fullscreen": "false", "protocol.observer": '"simulated"'},
    ),
}
#: What a stored trial of each case asked: its lenses and letter size.
ASKED = {
    "letters": ("sphere_d", "cylinder_d", "letter_logmar"),
    "duel": ("first_lens_d", "second_lens_d", "letter_logmar"),
    "ranking": ("lenses_d", "letter_logmar"),
}


def _session(tmp_path, window, case, iti_s, monkeypatch, slow=False):
    """A simulated session of ``case`` with ``iti_s``; every decision (``ask``), with the number of
    answers stored when it began, the trial loop's own sleeps (the intervals) and the stored trials."""
    source, optimizer_class, table, fields = CASES[case]
    db = tmp_path / f"{case}-{iti_s}.db"
    protocol = write_protocol(
        tmp_path / f"{case}-{iti_s}.toml", source, **{**FAST, **fields, "timing.iti_s": str(iti_s)}
    )
    asked, slept = [], []
    real_ask, real_sleep = optimizer_class.ask, loop.time.sleep

    def ask(self):
        with sqlite3.connect(db) as connection:  # what is on disk when the decision begins
            stored = connection.execute(f"SELECT COUNT(*) FROM {table}").fetchone()[0]
        asked.append((self.n_trials, stored))
        if slow:
            threading.Event().wait(DECISION_S)
        return real_ask(self)

    def sleep(seconds):
        if sys._getframe(1).f_globals["__name__"] == loop.__name__:  # the loop's, not PsychoPy's
            slept.append(seconds)
        real_sleep(seconds)

    monkeypatch.setattr(optimizer_class, "ask", ask)
    monkeypatch.setattr(loop.time, "sleep", sleep)
    request = RunRequest(db_path=db, protocol_path=protocol, participant="sim", seed=5, trials=N_TRIALS)
    outcome = run_session(request, log=lambda m: None, window=window)
    monkeypatch.undo()
    assert outcome.status == "finished" and outcome.n_trials == N_TRIALS
    with SessionStore(db, readonly=True) as store:
        stored = getattr(store, table)(outcome.session_id)
    return asked, slept, stored


@pytest.mark.parametrize("case", sorted(CASES))
def test_the_next_trial_is_decided_during_the_interval_which_keeps_its_length(tmp_path, window, monkeypatch, case):
    asked, intervals, _ = _session(tmp_path, window, case, ITI_S, monkeypatch, slow=True)
    # one decision per trial, each after every answer before it was stored
    assert [n for n, _ in asked] == list(range(N_TRIALS))
    assert all(stored == n for n, stored in asked)
    # the intervals before trials 2..N slept what the decision left of them: at most ITI - decision;
    # the last interval decides nothing and sleeps the whole interval
    assert len(intervals) == N_TRIALS
    assert all(0.0 <= s <= ITI_S - DECISION_S + 1e-9 for s in intervals[:-1]), intervals
    assert ITI_S - 0.05 < intervals[-1] <= ITI_S


@pytest.mark.parametrize("case", sorted(CASES))
def test_trials_decided_in_the_interval_are_those_decided_without_one(tmp_path, window, monkeypatch, case):
    """Deciding ahead changes no decision: a session with an interval (decided in it) and one without
    (decided when the trial comes) ask the same trials of the same simulated patient."""
    _, intervals, with_interval = _session(tmp_path, window, case, 0.05, monkeypatch)
    _, no_intervals, without = _session(tmp_path, window, case, 0.0, monkeypatch)
    assert len(intervals) == N_TRIALS and not no_intervals

    def trials(records):
        return [tuple(getattr(r, name) for name in ASKED[case]) for r in records]

    assert len(with_interval) == N_TRIALS and trials(with_interval) == trials(without)
