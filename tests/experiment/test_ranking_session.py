"""Ranking sessions in a real PsychoPy window: simulated, by keys (implied last, repeats, pause),
quit and resumed, and every order committed before the optimizer hears it."""

import csv
import io
import json

import numpy as np
import pytest

from experiment_helpers import FAST, REPO, needs_display, write_protocol
from lensopt.cli.handlers.sessions import format_table
from lensopt.experiment.keyboard import InjectedKeySource
from lensopt.experiment.session import RunRequest, run_session
from lensopt.modes.presentation import presented
from lensopt.observer import SimulatedPatient
from lensopt.refraction.rankings import RankingRefractionOptimizer, RankingTrial
from lensopt.store import SessionStore
from lensopt.store.export import export_session

pytestmark = needs_display

RANKING_PROTOCOL = REPO / "protocols" / "clinical-ranking.toml"
WINDOWED = {**FAST, "display.fullscreen": "false", "optimizer.n_initial": "2"}


def ranking_protocol(tmp_path, **fields):
    return write_protocol(tmp_path / "ranking.toml", RANKING_PROTOCOL, **{**WINDOWED, **fields})


def history(records):
    return [(RankingTrial(r.lenses_d, r.letter_logmar), r.order) for r in records]


def test_a_simulated_ranking_session_renders_stores_and_exports_every_order(tmp_path, window):
    db, frames = tmp_path / "s.db", tmp_path / "frames"
    protocol = ranking_protocol(tmp_path, **{"protocol.observer": '"simulated"'})
    outcome = run_session(
        RunRequest(db_path=db, protocol_path=protocol, participant="sim", seed=11, trials=5, frames_dir=frames),
        log=lambda m: None,
        window=window,
    )
    assert outcome.status == "finished" and outcome.n_trials == 5
    with SessionStore(db, readonly=True) as store:
        info = store.session(outcome.session_id)
        stored = store.ranking_trials(outcome.session_id)
        document = json.loads(export_session(store, outcome.session_id, "json"))
        csv_text = export_session(store, outcome.session_id, "csv")
        listing = format_table(store.sessions())
    csv_rows, rows = csv_text.strip().splitlines(), list(csv.DictReader(io.StringIO(csv_text)))
    # the tidy CSV: the lens numbers (from 1) in place 1, 2, 3, and each lens key's time
    assert [[int(r[f"rank_{k}_lens"]) - 1 for k in (1, 2, 3)] for r in rows] == [list(s.order) for s in stored]
    assert [[float(r["key_rt_s_1"]), float(r["key_rt_s_2"])] for r in rows] == [s.extra["key_rt_s"] for s in stored]
    assert info.kind == "ranking" and info.optimizer_settings["rule"] == "mpes-ald"
    assert info.optimizer_settings["n_lenses"] == 3 and info.optimizer_settings["lens_step_d"] == 0.25
    assert "ranking" in listing.splitlines()[1] and "mpes-ald" in listing.splitlines()[1]
    assert [t["order"] for t in document["trials"]] == [list(r.order) for r in stored] and len(csv_rows) == 6
    # each order is the simulated patient's of that trial (SimulatedPatient.rank_lenses, seeded (seed, trial))
    settings = dict(info.protocol["simulated"])
    del settings["tie_threshold"]
    for record in stored:
        patient = SimulatedPatient(**settings, n_alternatives=10, seed=np.random.SeedSequence([11, record.index, 1]))
        assert record.order == patient.rank_lenses(record.letter_logmar, record.lenses_d)
        assert len(record.letters) == 5 and len(record.extra["key_rt_s"]) == 2
        assert all(v / 0.25 == round(v / 0.25) for lens in record.lenses_d for v in lens)
    # the stored rankings are what the optimizer asked, in the order shown (counterbalanced: its first
    # lens is not lens 1 on every trial), told back as shown
    replay, first_kept = RankingRefractionOptimizer.from_settings(info.optimizer_settings), 0
    for record, (trial, order) in zip(stored, history(stored)):
        asked = replay.ask()
        assert presented(asked, info.seed, record.index) == trial
        first_kept += asked.lenses_d[0] == trial.lenses_d[0]
        replay.tell(trial, order)
    assert first_kept < len(stored)
    suffixes = ("-lens", "-console", "")  # the console's lens prompt, the console meanwhile, the patient's line
    expected = [f"trial-{k:03d}{suffix}.png" for k in range(1, 6) for suffix in suffixes]
    expected += ["end-console.png", "lensopt-session.json"]  # and the file naming whose frames they are
    assert sorted(p.name for p in frames.iterdir()) == sorted(expected)


def test_keys_give_the_order_with_the_last_implied_repeats_ignored_and_quit_then_resume(tmp_path, window):
    db, protocol = tmp_path / "s.db", ranking_protocol(tmp_path)
    keys = [
        "space",  # instructions
        "space",
        ("2", 0.8),
        ("1", 1.5),  # ranking 1: clinician confirms; 2, 1, then 3 implied
        "space",
        "3",
        "3",
        "1",  # ranking 2: a repeated 3 is ignored
        "space",
        "1",
        "escape",
        "space",
        "2",
        "3",  # ranking 3: pause after 1, resume: the order restarts
        "space",
        "2",
        "escape",
        "q",
    ]  # ranking 4: pause, quit
    source, logged = InjectedKeySource(keys), []
    first = run_session(
        RunRequest(db_path=db, protocol_path=protocol, participant="kb", seed=2, trials=5),
        responses=source,
        log=logged.append,
        window=window,
    )
    assert source.remaining == 0
    assert first.status == "aborted" and first.n_trials == 3
    assert sum(line.startswith("clinician: lens 1 S") and " / lens 3 S" in line for line in logged) == 4
    assert any("lens 3 is already ranked; ignored" in line for line in logged)
    with SessionStore(db, readonly=True) as store:
        before = store.ranking_trials(first.session_id)
        info = store.session(first.session_id)
    assert [r.order for r in before] == [(1, 0, 2), (2, 0, 1), (1, 2, 0)]
    assert before[0].rt_s == pytest.approx(1.5) and before[0].extra["key_rt_s"] == [0.8, 1.5]
    assert info.status == "aborted" and all(r.answered_at >= r.presented_at for r in before)

    source, logged = (
        InjectedKeySource(["space", "space", "3", "2", "space", "1", "2", "space"]),
        [],
    )  # the last: close the console
    second = run_session(
        RunRequest(db_path=db, resume=first.session_id), responses=source, log=logged.append, window=window
    )
    assert source.remaining == 0 and any("resuming at trial 4 of 5" in line for line in logged)
    assert second.status == "finished" and second.n_trials == 5
    with SessionStore(db, readonly=True) as store:
        after = store.ranking_trials(first.session_id)
    assert after[:3] == before and [r.order for r in after[3:]] == [(2, 1, 0), (0, 1, 2)]
    proposal = RankingRefractionOptimizer.from_settings(info.optimizer_settings, history(before)).ask()
    proposal = presented(proposal, info.seed, 4)  # as trial 4 shows its lenses
    assert after[3].lenses_d == proposal.lenses_d
    assert after[3].letter_logmar == pytest.approx(proposal.letter_logmar, abs=1e-9)


class ScriptedRankings:
    """An optimizer with the ranking ask/tell interface (not RankingRefractionOptimizer): the loop is generic."""

    last_decision_ms = float("nan")  # no decision to time (lensopt.asktell.AskTellOptimizer)

    def __init__(self, store_path, session_id):
        self.store_path, self.session_id, self.told = store_path, session_id, []

    def ask(self):
        k = 0.25 * len(self.told)
        return RankingTrial(((k, 0.0), (-k, -0.5), (0.0, 1.0)), 0.2)

    def tell(self, trial, order):
        with SessionStore(self.store_path, readonly=True) as store:  # committed before the tell
            stored = store.ranking_trials(self.session_id)
        assert len(stored) == len(self.told) + 1 and stored[-1].order == order
        self.told.append(order)


def test_every_order_is_committed_before_the_optimizer_hears_it(tmp_path, window):
    from lensopt.experiment.calibration import Calibration
    from lensopt.experiment.protocol import load_protocol
    from lensopt.experiment.ranking_loop import RankingLoop

    protocol = load_protocol(ranking_protocol(tmp_path, **{"lens.prompt": "false"}))
    db = tmp_path / "s.db"
    with SessionStore(db) as store:
        sid = store.create_session("spy", protocol.to_dict(), {}, {}, 0, kind="ranking")
        optimizer = ScriptedRankings(db, sid)
        loop = RankingLoop(
            window,
            protocol,
            Calibration(53.0, 1920, 1080, 400.0),
            optimizer,
            InjectedKeySource(["space", "3", "2", "1", "3"]),
            lambda record: store.append_ranking_trial(sid, record),
            seed=1,
            log=None,
        )
        result = loop.run(2)
    assert result.status == "finished" and optimizer.told == [(2, 1, 0), (0, 2, 1)]
