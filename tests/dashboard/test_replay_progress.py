"""A long stored session is replayed under a progress bar on a terminal: ``lensopt print`` of a
1,000-trial session took 15 s in silence (an audit of a clinic's database after a year)."""

from __future__ import annotations

import io
import sys

import pytest

from lensopt.dashboard.model import followed_from_store
from lensopt.modes.base import ANSWERS_BAR_FROM
from lensopt.refraction.acuity_law import AcuityLawOptimizer
from lensopt.store import SessionStore, TrialRecord


class _Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


class _Redirected(io.StringIO):
    def isatty(self) -> bool:
        return False


@pytest.mark.parametrize(
    ("n_answers", "stream", "shown"),
    [
        (ANSWERS_BAR_FROM + 10, _Terminal, True),
        (ANSWERS_BAR_FROM - 40, _Terminal, False),
        (ANSWERS_BAR_FROM + 10, _Redirected, False),
    ],
)
def test_a_long_session_is_replayed_under_a_progress_bar_on_a_terminal_only(
    tmp_path, monkeypatch, n_answers, stream, shown
):
    optimizer = AcuityLawOptimizer(seed=3)
    path = tmp_path / "s.db"
    with SessionStore(path) as store:
        sid = store.create_session("P", {}, {}, optimizer.settings_dict(), 3)
        for index in range(1, n_answers + 1):
            trial = optimizer.ask()
            correct = trial.letter_logmar > 0.3
            optimizer.tell(trial, correct)
            store.append_trial(
                sid,
                TrialRecord(
                    index, trial.sphere_d, trial.cylinder_d, trial.letter_logmar, "K", "K", correct, 0.5, 1.0, 1.5
                ),
            )
    err = stream()
    monkeypatch.setattr(sys, "stderr", err)
    with SessionStore(path, readonly=True) as store:
        snap = followed_from_store(store, sid).snapshot()
    assert snap.n_trials == n_answers
    assert (f"replaying session {sid}:" in err.getvalue()) == shown
    assert (f"/{n_answers} [" in err.getvalue()) == shown  # counted in answers
