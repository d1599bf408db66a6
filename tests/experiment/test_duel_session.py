"""Duel sessions in a real PsychoPy window: simulated, by keys, quit and resumed, killed and resumed."""

import json
import math
import os
import signal
import subprocess
import sys
import time

import numpy as np
import pytest
from PIL import Image

from experiment_helpers import FAST, REPO, needs_display, write_protocol
from lensopt.experiment.keyboard import InjectedKeySource
from lensopt.experiment.session import RunRequest, run_session
from lensopt.modes.presentation import presented
from lensopt.refraction.duels import DuelRefractionOptimizer, DuelTrial
from lensopt.store import SessionStore
from lensopt.store.export import export_session

pytestmark = needs_display

DUEL_PROTOCOL = REPO / "protocols" / "clinical-duel.toml"
WINDOWED = {**FAST, "display.fullscreen": "false"}


def duel_protocol(tmp_path, name="duel.toml", **fields):
    return write_protocol(tmp_path / name, DUEL_PROTOCOL, **{**WINDOWED, **fields})


def history(records):
    return [(DuelTrial(r.first_lens_d, r.second_lens_d, r.letter_logmar), r.answer) for r in records]


def dark_rows_and_columns(path):
    image = np.asarray(Image.open(path).convert("L")) < 128
    return np.flatnonzero(image.any(axis=1)), np.flatnonzero(image.any(axis=0))


def test_a_simulated_duel_session_stores_and_exports_every_answer_ties_included(tmp_path, window):
    db, frames = tmp_path / "s.db", tmp_path / "frames"
    protocol = duel_protocol(tmp_path, **{"protocol.observer": '"simulated"', "simulated.tie_threshold": "3.0"})
    outcome = run_session(
        RunRequest(db_path=db, protocol_path=protocol, participant="sim", seed=11, trials=8, frames_dir=frames),
        log=lambda m: None,
        window=window,
    )
    assert outcome.status == "finished" and outcome.n_trials == 8
    with SessionStore(db, readonly=True) as store:
        info = store.session(outcome.session_id)
        stored = store.duel_trials(outcome.session_id)
        document = json.loads(export_session(store, outcome.session_id, "json"))
        csv_rows = export_session(store, outcome.session_id, "csv").strip().splitlines()
    assert info.kind == "duel" and info.optimizer_settings["rule"] == "mpes-ald"
    assert info.optimizer_settings["model"] == "ties"
    assert len(document["trials"]) == 8 and len(csv_rows) == 9
    answers = [t["answer"] for t in document["trials"]]
    assert "same" in answers and set(answers) <= {"first", "second", "same"}
    assert [t["answer"] for t in document["trials"]] == [r.answer for r in stored]
    assert {"letters", "letter_logmar", "first_sphere_d", "second_cylinder_d", "rt_s", "presented_at"} <= set(
        document["trials"][0]
    )
    assert document["calibration"]["distance_cm"] == 400.0
    # the stored duels are what the optimizer asked, in the order shown (counterbalanced: its first
    # lens is lens 2 on some trials), told back as shown (ties included)
    replay, kept = DuelRefractionOptimizer(**info.optimizer_settings), 0
    for record, (trial, answer) in zip(stored, history(stored)):
        asked = replay.ask()
        shown = presented(asked, info.seed, record.index)
        assert (shown.first_lens_d, shown.second_lens_d) == (trial.first_lens_d, trial.second_lens_d)
        kept += asked.first_lens_d == trial.first_lens_d
        assert asked.letter_logmar == pytest.approx(trial.letter_logmar, abs=1e-9)
        replay.tell(trial, answer)
        assert len(record.letters) == 5 and record.first_lens_d != record.second_lens_d
    assert 0 < kept < len(stored), kept
    cal = document["calibration"]
    for t in document["trials"][:3]:
        rows, columns = dark_rows_and_columns(frames / f"trial-{t['index']:03d}.png")
        expected = (
            2
            * cal["distance_cm"]
            * math.tan(math.radians(5 * 10 ** t["letter_logmar"] / 120))
            * cal["screen_width_px"]
            / cal["screen_width_cm"]
        )
        assert abs(rows[-1] - rows[0] + 1 - expected) <= max(1.0, 0.03 * expected)
        assert columns[-1] - columns[0] + 1 <= 9 * expected + 2  # five letters, one letter width apart
        assert columns[-1] - columns[0] + 1 >= 7 * expected


def test_keys_1_2_same_and_escape_then_quit_keep_every_answer_and_the_session_resumes(tmp_path, window):
    db, protocol = tmp_path / "s.db", duel_protocol(tmp_path, **{"protocol.observer": '"keyboard"'})
    keys = [
        "space",  # instructions
        "space",
        ("1", 0.9),  # duel 1: clinician confirms the two lenses; lens 1
        "space",
        "2",  # duel 2: lens 2
        "space",
        "s",  # duel 3: the same
        "space",
        "escape",
        "space",
        "2",  # duel 4: pause, resume (same line again), lens 2
        "space",
        "escape",
        "q",
    ]  # duel 5: pause, quit
    source, logged = InjectedKeySource(keys), []
    first = run_session(
        RunRequest(db_path=db, protocol_path=protocol, participant="kb", seed=2, trials=6),
        responses=source,
        log=logged.append,
        window=window,
    )
    assert source.remaining == 0
    assert first.status == "aborted" and first.n_trials == 4
    # counted in duels, as the console counts them (it said "stopped after 4 trials")
    assert any(line.startswith("stopped after 4 duels; continue with: lensopt run --resume") for line in logged)
    assert sum(line.startswith("clinician: lens 1 S") for line in logged) == 5
    with SessionStore(db, readonly=True) as store:
        before = store.duel_trials(first.session_id)
        settings = store.session(first.session_id).optimizer_settings
        seed = store.session(first.session_id).seed
    assert [r.answer for r in before] == ["first", "second", "same", "second"]
    assert before[0].rt_s == pytest.approx(0.9)
    assert all(r.answered_at >= r.presented_at for r in before)

    source, logged = (
        InjectedKeySource(["space", "space", "s", "space", "1", "space"]),
        [],
    )  # the last: close the console
    second = run_session(
        RunRequest(db_path=db, resume=first.session_id), responses=source, log=logged.append, window=window
    )
    assert source.remaining == 0 and any("resuming at trial 5 of 6" in line for line in logged)
    assert second.status == "finished" and second.n_trials == 6
    with SessionStore(db, readonly=True) as store:
        after = store.duel_trials(first.session_id)
    assert after[:4] == before and [r.answer for r in after[4:]] == ["same", "first"]
    proposal = presented(DuelRefractionOptimizer.from_settings(settings, history(before)).ask(), seed, 5)
    assert (after[4].first_lens_d, after[4].second_lens_d) == (proposal.first_lens_d, proposal.second_lens_d)


class ScriptedDuels:
    """An optimizer with the duel ask/tell interface (not DuelRefractionOptimizer): the loop is generic."""

    last_decision_ms = float("nan")  # no decision to time (lensopt.asktell.AskTellOptimizer)

    def __init__(self, store_path, session_id):
        self.store_path, self.session_id, self.told = store_path, session_id, []

    def ask(self):
        return DuelTrial((0.25 * len(self.told), 0.0), (-0.25 * len(self.told), -0.5), 0.2)

    def tell(self, trial, answer):
        with SessionStore(self.store_path, readonly=True) as store:  # committed before the tell
            stored = store.duel_trials(self.session_id)
        assert len(stored) == len(self.told) + 1 and stored[-1].answer == answer
        self.told.append(answer)


def test_every_duel_answer_is_committed_before_the_optimizer_hears_it(tmp_path, window):
    from lensopt.experiment.calibration import Calibration
    from lensopt.experiment.duel_loop import DuelLoop
    from lensopt.experiment.protocol import load_protocol

    protocol = load_protocol(duel_protocol(tmp_path, **{"lens.prompt": "false"}))
    db = tmp_path / "s.db"
    with SessionStore(db) as store:
        sid = store.create_session("spy", protocol.to_dict(), {}, {}, 0, kind="duel")
        optimizer = ScriptedDuels(db, sid)
        loop = DuelLoop(
            window,
            protocol,
            Calibration(53.0, 1920, 1080, 400.0),
            optimizer,
            InjectedKeySource(["space", "2", "s", "1"]),
            lambda record: store.append_duel_trial(sid, record),
            seed=1,
            log=None,
        )
        result = loop.run(3)
    assert result.status == "finished" and optimizer.told == ["second", "same", "first"]


def lensopt(*args):
    return subprocess.Popen(
        [sys.executable, "-m", "lensopt", *map(str, args)],
        cwd=REPO,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


def stored_duels(db):
    try:
        with SessionStore(db, readonly=True) as store:
            sid = store.latest_session_id()
            return [] if sid is None else store.duel_trials(sid)
    except Exception:  # noqa: BLE001 - the file is being created
        return []


def test_a_duel_session_killed_after_trial_k_resumes_and_ends_with_all_trials(tmp_path):
    db = tmp_path / "s.db"
    protocol = duel_protocol(
        tmp_path,
        **{"protocol.observer": '"simulated"', "timing.simulated_response_s": "0.3", "simulated.tie_threshold": "1.5"},
    )
    proc = lensopt("run", "--protocol", protocol, "--participant", "k9", "--seed", 5, "--trials", 8, "--db", db)
    deadline = time.time() + 120
    while len(stored_duels(db)) < 3 and proc.poll() is None and time.time() < deadline:
        time.sleep(0.05)
    os.kill(proc.pid, signal.SIGKILL)
    proc.communicate()
    before = stored_duels(db)
    k = len(before)
    assert 3 <= k < 8, f"the session was not killed mid-way ({k} duels stored)"
    with SessionStore(db, readonly=True) as store:
        sid = store.latest_session_id()
        info = store.session(sid)
    assert info.status == "running" and info.kind == "duel"

    resumed = lensopt("run", "--resume", sid, "--db", db)
    out, err = resumed.communicate(timeout=180)
    assert resumed.returncode == 0, err
    assert f"resuming at trial {k + 1} of 8" in out and "best lens: S" in out
    after = stored_duels(db)
    assert after[:k] == before and [r.index for r in after] == list(range(1, 9))
    asked = DuelRefractionOptimizer.from_settings(info.optimizer_settings, history(before)).ask()
    proposal = presented(asked, info.seed, k + 1)  # in the order trial k + 1 shows its lenses
    assert (after[k].first_lens_d, after[k].second_lens_d) == (proposal.first_lens_d, proposal.second_lens_d)
    assert after[k].letter_logmar == pytest.approx(proposal.letter_logmar, abs=1e-9)


def test_comparisons_are_shown_in_a_counterbalanced_order_drawn_from_seed_and_trial():
    """Each duel's two lenses (and each ranking's three) are shown in an order drawn from (seed,
    trial): the same on every run and resume, every lens in every position about equally often over
    trials (the champion, asked first, is lens 1 about half the time), the letter size untouched."""
    from lensopt.modes.presentation import presentation_order
    from lensopt.refraction.rankings import RankingTrial

    duel = DuelTrial((-1.0, -0.5), (-1.25, -0.75), 0.3)
    shown = [presented(duel, 11, index) for index in range(1, 2001)]
    assert all({t.first_lens_d, t.second_lens_d} == {duel.first_lens_d, duel.second_lens_d} for t in shown)
    assert all(t.letter_logmar == duel.letter_logmar for t in shown)
    kept = sum(t.first_lens_d == duel.first_lens_d for t in shown)
    assert abs(kept - 1000) < 4 * (2000 * 0.25) ** 0.5  # binomial(2000, ½): within 4 SD of half
    assert presented(duel, 11, 7) == shown[6] and [presented(duel, 12, i) for i in range(1, 2001)] != shown
    ranking = RankingTrial(((0.0, 0.0), (-1.0, 0.0), (-2.0, 0.0)), 0.2)
    positions = np.zeros((3, 3))
    for index in range(1, 3001):
        order = presentation_order(5, index, 3)
        assert sorted(order) == [0, 1, 2]
        assert presented(ranking, 5, index).lenses_d == tuple(ranking.lenses_d[i] for i in order)
        for position, lens in enumerate(order):
            positions[lens, position] += 1
    assert np.all(np.abs(positions - 1000) < 4 * (3000 * (1 / 3) * (2 / 3)) ** 0.5), positions


def test_a_comparison_session_stored_before_the_counterbalanced_order_resumes_champion_first():
    """Stored protocols of duel and ranking sessions created before 30 Nov 2026 11:48 UTC have no
    ``order``: they showed the rule's champion first, and resumed they still do (``as-asked``); those
    created later that morning, before the order was stored, ran counterbalanced and resume so; a new
    session's protocol stores ``counterbalanced``; a protocol naming another order is refused."""
    from lensopt.experiment.protocol import ProtocolError, load_protocol, protocol_from_dict
    from lensopt.experiment.resume import stored_protocol
    from lensopt.modes.as_ran import COUNTERBALANCED_SINCE_S

    new = load_protocol(REPO / "protocols" / "clinical-duel.toml").to_dict()
    assert new["duel"]["order"] == new["ranking"]["order"] == "counterbalanced"
    assert protocol_from_dict(stored_protocol(new, 0.0)).duel.order == "counterbalanced"  # as stored
    old = {**new, "duel": {k: v for k, v in new["duel"].items() if k != "order"}}
    old["ranking"] = {k: v for k, v in new["ranking"].items() if k != "order"}
    resumed = protocol_from_dict(stored_protocol(old, COUNTERBALANCED_SINCE_S - 1))
    assert resumed.duel.order == resumed.ranking.order == "as-asked"
    # created after the order changed, before the protocol stored it: counterbalanced, as they ran
    between = protocol_from_dict(stored_protocol(old, COUNTERBALANCED_SINCE_S + 3600))
    assert between.duel.order == between.ranking.order == "counterbalanced"
    duel = DuelTrial((-1.0, -0.5), (-1.25, -0.75), 0.3)
    assert all(presented(duel, 11, index, "as-asked") == duel for index in range(1, 50))
    with pytest.raises(ProtocolError, match="order"):
        protocol_from_dict({**new, "duel": {**new["duel"], "order": "random"}})
