"""Whole sessions: 30 simulated trials stored and exported; kill -9 then --resume (acceptance)."""

import json
import math
import os
import re
import signal
import subprocess
import sys
import time

import pytest
from PIL import Image

from experiment_helpers import FAST, REPO, needs_display, write_protocol
from lensopt.experiment.protocol import load_protocol
from lensopt.experiment.session import RunRequest, run_session
from lensopt.refraction.lens import diopter_text
from lensopt.refraction.letters import RefractionOptimizer
from lensopt.refraction.trial import Trial
from lensopt.stopping import confidence_text
from lensopt.store import SessionStore
from lensopt.store.export import export_session
from tests.conftest import SETTINGS_AFTER_ISSUE_14 as NEW_SETTINGS  # what sessions of before issue 14 lack
from tests.conftest import dark_span_px

pytestmark = needs_display

EXPORT_TRIAL_KEYS = {"index", "letter", "letter_logmar", "sphere_d", "cylinder_d", "response", "correct", "rt_s"}


def test_a_30_trial_simulated_session_is_stored_exported_and_drawn_to_size(tmp_path, window, fast_protocol):
    db, frames = tmp_path / "s.db", tmp_path / "frames"
    outcome = run_session(
        RunRequest(
            db_path=db,
            protocol_path=fast_protocol,
            participant="sim",
            observer="simulated",
            seed=7,
            trials=30,
            frames_dir=frames,
        ),
        log=lambda m: None,
        window=window,
    )
    assert outcome.status == "finished" and outcome.n_trials == 30
    with SessionStore(db, readonly=True) as store:
        assert [t.index for t in store.trials(outcome.session_id)] == list(range(1, 31))
        document = json.loads(export_session(store, outcome.session_id, "json"))
        csv_rows = export_session(store, outcome.session_id, "csv").strip().splitlines()
    assert len(document["trials"]) == 30 and len(csv_rows) == 31
    assert all(EXPORT_TRIAL_KEYS <= set(t) for t in document["trials"])
    cal = document["calibration"]
    assert cal["screen_width_px"] == 1920 and cal["screen_width_cm"] == 53.0 and cal["distance_cm"] == 300.0
    assert document["seed"] == 7 and document["session"]["status"] == "finished"
    lo, hi = document["optimizer_settings"]["letter_bounds_logmar"]
    for t in document["trials"]:
        assert lo - 1e-9 <= t["letter_logmar"] <= hi + 1e-9
        frame = frames / f"trial-{t['index']:03d}.png"
        assert Image.open(frame).size == tuple(window.size)
        expected = (
            2
            * cal["distance_cm"]
            * math.tan(math.radians(5 * 10 ** t["letter_logmar"] / 120))
            * cal["screen_width_px"]
            / cal["screen_width_cm"]
        )
        assert abs(dark_span_px(frame) - expected) <= max(1.0, 0.03 * expected)


def test_a_new_session_stores_its_protocol_files_path_and_sha256_and_exports_them(tmp_path, window, fast_protocol):
    """Which file, and which version of it, a session ran: its started event names the protocol
    file's absolute path and the SHA-256 of its bytes, and the JSON export shows them."""
    import hashlib

    db = tmp_path / "s.db"
    outcome = run_session(
        RunRequest(db_path=db, protocol_path=fast_protocol, participant="sim", observer="simulated", seed=7, trials=2),
        log=lambda m: None,
        window=window,
    )
    with SessionStore(db, readonly=True) as store:
        document = json.loads(export_session(store, outcome.session_id, "json"))
    started = document["events"][0]
    assert started["event"] == "started"
    assert started["detail"]["protocol_file"] == {
        "path": str(fast_protocol.absolute()),
        "sha256": hashlib.sha256(fast_protocol.read_bytes()).hexdigest(),
    }


def lensopt(*args, **kwargs):
    return subprocess.Popen(
        [sys.executable, "-m", "lensopt", *map(str, args)],
        cwd=REPO,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        **kwargs,
    )


def stored_trials(db):
    if not db.exists():
        return []
    try:
        with SessionStore(db, readonly=True) as store:
            sid = store.latest_session_id()
            return [] if sid is None else store.trials(sid)
    except Exception:  # noqa: BLE001 - the file is being created
        return []


def started_session(tmp_path, db, participant: str, response_s: str, stored: int):
    """``lensopt run`` of a simulated session (seed 5, the patient answering after ``response_s``) into
    ``db``, returned once ``stored`` trials are on disk (or the program ended, or 120 s passed)."""
    protocol = write_protocol(tmp_path / "slow.toml", **{**FAST, "timing.simulated_response_s": response_s})
    proc = lensopt(
        "run", "--protocol", protocol, "--participant", participant, "--observer", "simulated", "--seed", 5, "--db", db
    )
    deadline = time.time() + 120
    while len(stored_trials(db)) < stored and proc.poll() is None and time.time() < deadline:
        time.sleep(0.05)
    return proc


def test_kill_9_then_resume_keeps_trials_and_continues_as_the_rebuilt_optimizer_would(tmp_path):
    db = tmp_path / "s.db"
    protocol = write_protocol(tmp_path / "slow.toml", **{**FAST, "timing.simulated_response_s": "0.2"})
    proc = lensopt(
        "run",
        "--protocol",
        protocol,
        "--participant",
        "k9",
        "--observer",
        "simulated",
        "--seed",
        5,
        "--trials",
        10,
        "--db",
        db,
    )
    deadline = time.time() + 120
    while len(stored_trials(db)) < 3 and proc.poll() is None and time.time() < deadline:
        time.sleep(0.05)
    os.kill(proc.pid, signal.SIGKILL)
    proc.communicate()
    before = stored_trials(db)
    k = len(before)
    assert 3 <= k < 10, f"the session was not killed mid-way ({k} trials stored)"
    with SessionStore(db, readonly=True) as store:
        sid = store.latest_session_id()
        info = store.session(sid)
    assert info.status == "running"  # killed: never marked finished

    resumed = lensopt("run", "--resume", sid, "--db", db)
    out, err = resumed.communicate(timeout=180)
    assert resumed.returncode == 0, err
    assert f"resuming at trial {k + 1} of 10" in out
    after = stored_trials(db)
    assert after[:k] == before  # trials 1..k intact
    assert [t.index for t in after] == list(range(1, 11))
    rebuilt = RefractionOptimizer.from_settings(
        info.optimizer_settings, [(Trial(t.sphere_d, t.cylinder_d, t.letter_logmar), t.correct) for t in before]
    )
    proposal = rebuilt.ask()
    continued = after[k]
    assert (continued.sphere_d, continued.cylinder_d, continued.letter_logmar) == pytest.approx(
        (proposal.sphere_d, proposal.cylinder_d, proposal.letter_logmar), abs=1e-9
    )


def test_sigterm_ends_a_session_as_ctrl_c_does_aborted_with_how_to_resume(tmp_path):
    """``kill`` (SIGTERM) of a running session: its clean-up runs as for Ctrl-C — the session is
    marked aborted (not left "running" for ever), the log says how to continue it, the exit code is
    128 + 15 — and every answer is on disk."""
    db = tmp_path / "s.db"
    proc = started_session(tmp_path, db, "t15", "0.2", stored=3)
    proc.send_signal(signal.SIGTERM)
    out, err = proc.communicate(timeout=60)
    assert proc.returncode == 128 + signal.SIGTERM, err
    assert "lensopt run: interrupted; everything answered so far is saved" in err and "Traceback" not in err
    with SessionStore(db, readonly=True) as store:
        sid = store.latest_session_id()
        info = store.session(sid)
    answered = [line for line in out.splitlines() if line.startswith("trial ")]
    assert info.status == "aborted" and info.n_trials == len(answered) >= 3  # every answer given is on disk
    assert f"stopped after {info.n_trials} trials; continue with: lensopt run --resume {sid} --db {db}" in out


def test_a_flood_of_ctrl_c_ends_a_session_as_one_does_with_no_traceback(tmp_path):
    """Ctrl-C held down (60 SIGINTs 0.5 ms apart): a second one raised inside the clean-up and the
    exit, PsychoPy's and pyglet's exit handlers printed tracebacks and the process died of it (exit
    -2). After the first, the others are ignored: one closing line, exit 130, the session aborted,
    every answer on disk."""
    db = tmp_path / "s.db"
    proc = started_session(tmp_path, db, "flood", "0.2", stored=3)
    assert proc.poll() is None, "the session ended before the signals"
    for _ in range(60):
        proc.send_signal(signal.SIGINT)
        time.sleep(0.0005)
    out, err = proc.communicate(timeout=60)
    assert proc.returncode == 130, err
    assert err == "lensopt run: interrupted; everything answered so far is saved\n", err
    with SessionStore(db, readonly=True) as store:
        info = store.session(store.latest_session_id())
    answered = [line for line in out.splitlines() if line.startswith("trial ")]
    assert info.status == "aborted" and info.n_trials == len(answered) >= 3


def test_the_closing_line_gives_the_best_lens_and_its_phoropter_setting(tmp_path, window):
    protocol = write_protocol(tmp_path / "step.toml", **FAST, **{"lens.step_d": "0.25"})
    lines = []
    outcome = run_session(
        RunRequest(
            db_path=tmp_path / "s.db",
            protocol_path=protocol,
            participant="sim",
            observer="simulated",
            seed=5,
            trials=12,
        ),
        log=lines.append,
        window=window,
    )
    with SessionStore(tmp_path / "s.db", readonly=True) as store:
        info, trials = store.session(outcome.session_id), store.trials(outcome.session_id)
    rebuilt = RefractionOptimizer.from_settings(
        info.optimizer_settings, [(Trial(t.sphere_d, t.cylinder_d, t.letter_logmar), t.correct) for t in trials]
    )
    sphere_d, cylinder_d = rebuilt.best()

    def quarter(d):  # nearest quarter diopter, by hand
        return math.floor(d * 4 + 0.5) / 4

    expected = (
        f"best lens: S {sphere_d:+.2f} D  C {cylinder_d:+.2f} D; on the phoropter (0.25 D steps): "
        f"S {quarter(sphere_d):+.2f} D  C {quarter(cylinder_d):+.2f} D"
    )
    assert expected in lines, lines[-3:]
    # and stored as the session's result (no axis given: sphere and signed cylinder, no axis), with
    # the rebuilt model's confidence and predicted acuity through the phoropter's lens
    (result,) = info.results
    assert result.prescription == f"S {quarter(sphere_d):+.2f} D  C {quarter(cylinder_d):+.2f} D"
    assert (result.sphere_d, result.cylinder_d, result.axis_deg) == (quarter(sphere_d), quarter(cylinder_d), None)
    certainty = rebuilt.certainty()
    assert result.confidence == pytest.approx(certainty.confidence, abs=1e-12) and result.n_trials == 12
    # (the rebuilt model is fitted cold, the session's was warm-started: equal to EP's tolerance)
    assert result.intervals == {
        "sphere_d": pytest.approx(certainty.sphere_interval_d, abs=1e-6),
        "cylinder_d": pytest.approx(certainty.cylinder_interval_d, abs=1e-6),
        "m_d": pytest.approx(certainty.equivalent_interval_d, abs=1e-6),
    }
    acuity, _ = rebuilt.predicted_acuity_logmar(quarter(sphere_d), quarter(cylinder_d))
    assert result.predicted_acuity_logmar == pytest.approx(float(acuity), abs=1e-6)
    assert any(line.startswith(("prescription: S ", "estimate, not a prescription: S ")) for line in lines), lines[-4:]
    # without [stop] the 12 trials are the design: short of 0.95 the end is the estimate, with no call
    # for more trials and no command to continue
    assert result.confidence < 0.95
    assert any(line.startswith(f"estimate, not a prescription: {result.prescription}") for line in lines), lines[-4:]
    assert not any(
        "more trials" in line or "not enough answers" in line or line.startswith("continue with") for line in lines
    ), lines[-4:]


def _history(records):
    return [(Trial(t.sphere_d, t.cylinder_d, t.letter_logmar), t.correct) for t in records]


def test_trials_below_the_stop_minimum_say_that_they_lower_it(tmp_path, window):
    """--trials 4 under a [stop] min_trials of 8 lowers the minimum to 4 for the session (and its
    resumes): the log says so, rather than leave a clinician believing the minimum holds."""
    protocol = write_protocol(tmp_path / "stop.toml", **FAST)
    protocol.write_text(protocol.read_text() + "\n[stop]\nconfidence = 0.95\nmin_trials = 8\n")
    lines: list = []
    run_session(
        RunRequest(db_path=tmp_path / "s.db", protocol_path=protocol, participant="s", observer="simulated", trials=4),
        log=lines.append,
        window=window,
    )
    said = (
        "--trials 4 is below [stop] min_trials 8: the stopping rule cannot end this session early, "
        "and its minimum is lowered to 4"
    )
    assert any(line.startswith(said) for line in lines), lines[:5]
    # resuming the finished session with fewer trials (3, below the stored minimum of 4) runs none:
    # no note of a change that does not happen
    again: list = []
    with SessionStore(tmp_path / "s.db", readonly=True) as store:
        sid = store.latest_session_id()
    run_session(RunRequest(db_path=tmp_path / "s.db", resume=sid, trials=3), log=again.append, window=window)
    assert any("nothing to do" in line for line in again) and not any("min_trials" in line for line in again), again


def test_a_stop_protocol_ends_the_session_early_with_every_answer_stored(tmp_path, window):
    protocol = write_protocol(tmp_path / "stop.toml", **FAST)
    protocol.write_text(protocol.read_text() + "\n[stop]\nconfidence = 0.02\nmin_trials = 8\n")
    db, lines = tmp_path / "s.db", []
    outcome = run_session(
        RunRequest(db_path=db, protocol_path=protocol, participant="sim", observer="simulated", seed=7, trials=30),
        log=lines.append,
        window=window,
    )
    n = outcome.stopped_at
    assert outcome.status == "finished" and 8 <= n < 30
    assert outcome.n_trials == n and outcome.confidence >= 0.02
    with SessionStore(db, readonly=True) as store:
        info, records = store.session(outcome.session_id), store.trials(outcome.session_id)
    assert [t.index for t in records] == list(range(1, n + 1)) and info.status == "finished"
    assert info.optimizer_settings["stop"] == {"confidence": 0.02, "min_trials": 8, "max_trials": 30}
    assert f"stopped at {n} trials, confidence {confidence_text(outcome.confidence)}" in lines
    # the log names the simulated patient's truth (the protocol's [simulated] table)
    simulated = [line for line in lines if line.startswith("simulated patient: correction ")]
    assert simulated == [load_protocol(protocol).simulated.describe(load_protocol(protocol).lens)], simulated
    # the stored answers say stop there, and not one answer earlier
    assert RefractionOptimizer.from_settings(info.optimizer_settings, _history(records)).should_stop()
    if n > 8:
        assert not RefractionOptimizer.from_settings(info.optimizer_settings, _history(records[:-1])).should_stop()
    # a stopped session resumed has nothing left to do, and its trials stay as they are
    k = len(lines)
    again = run_session(RunRequest(db_path=db, resume=outcome.session_id), log=lines.append, window=window)
    assert again.status == "finished" and again.n_trials == n and "nothing to do" in lines[k]
    # its stored result (the best lens at the stop) is reported again, not recomputed
    assert (again.result.prescription, again.result.n_trials) == (outcome.result.prescription, n)
    assert lines[k + 1].startswith(("prescription: ", "estimate, not a prescription: ")), lines[k:]
    with SessionStore(db, readonly=True) as store:
        assert store.trials(outcome.session_id) == records


def test_a_stop_session_its_budget_ended_resumes_with_more_trials_and_keeps_its_stored_settings(tmp_path, window):
    protocol = write_protocol(tmp_path / "stop.toml", **FAST)
    protocol.write_text(protocol.read_text() + "\n[stop]\nconfidence = 0.999\nmin_trials = 4\n")
    db, lines = tmp_path / "s.db", []
    request = RunRequest(db_path=db, protocol_path=protocol, participant="sim", observer="simulated", seed=7, trials=6)
    first = run_session(request, log=lines.append, window=window)
    assert first.status == "finished" and first.n_trials == 6 and first.stopped_at is None  # the budget, not the rule
    with SessionStore(db, readonly=True) as store:
        stored = store.session(first.session_id).optimizer_settings
    assert stored["stop"]["max_trials"] == 6
    # the clinician wants more answers: --trials 9 gives them (the stored rule alone would stop at once)
    resumed = RunRequest(db_path=db, resume=first.session_id, trials=9, participant="someone else")
    more = run_session(resumed, log=lines.append, window=window)
    assert more.status == "finished" and more.n_trials == 9, lines[-3:]
    assert any("its stored participant sim is used, --participant someone else is ignored" in line for line in lines)
    assert any("resuming at trial 7 of 9" in line for line in lines)
    with SessionStore(db, readonly=True) as store:
        info, records = store.session(first.session_id), store.trials(first.session_id)
    assert [t.index for t in records] == list(range(1, 10))
    assert info.optimizer_settings == stored  # resuming never rewrites the stored settings
    # the trials after the resume are those of the stored settings with the new budget
    settings = {**stored, "stop": {**stored["stop"], "max_trials": 9}}
    proposal = RefractionOptimizer.from_settings(settings, _history(records[:6])).ask()
    assert (records[6].sphere_d, records[6].cylinder_d, records[6].letter_logmar) == pytest.approx(
        (proposal.sphere_d, proposal.cylinder_d, proposal.letter_logmar), abs=1e-9
    )
    # resumed again without --trials, it keeps the budget given last (9), not the stored protocol's (6)
    lines.clear()
    again = run_session(RunRequest(db_path=db, resume=first.session_id), log=lines.append, window=window)
    assert again.n_trials == 9 and any(f"session {first.session_id} holds 9 of 9 trials" in line for line in lines), (
        lines
    )
    with SessionStore(db, readonly=True) as store:
        events = store.session(first.session_id).events
    assert [(e.event, e.after_trial, e.detail.get("trials_given")) for e in events] == [
        ("started", 0, 6),  # started with --trials 6
        ("ended", 6, None),  # each end of the searches, with what it advised
        ("resumed", 6, 9),
        ("ended", 9, None),
        ("resumed", 9, None),  # the resume that found nothing to do is recorded too
        ("ended", 9, None),
    ]


def test_a_session_whose_start_event_another_program_changed_resumes_and_exports(tmp_path, window):
    import sqlite3

    db, lines = tmp_path / "s.db", []
    request = RunRequest(
        db_path=db, protocol_path=write_protocol(tmp_path / "p.toml", **FAST), participant="sim", seed=5, trials=3
    )
    first = run_session(request, log=lines.append, window=window)
    conn = sqlite3.connect(db)
    with conn:  # its start's provenance is no longer JSON
        conn.execute(
            "UPDATE session_events SET detail = 'garbled' WHERE session_id = ? AND event = 'started'",
            (first.session_id,),
        )
    conn.close()
    lines.clear()
    more = run_session(RunRequest(db_path=db, resume=first.session_id, trials=5), log=lines.append, window=window)
    assert more.status == "finished" and more.n_trials == 5, lines[-3:]
    assert lines[0].startswith(f"session {first.session_id} in {db}: an event another program changed"), lines[0]
    with SessionStore(db, readonly=True) as store:
        info = store.session(first.session_id)
        assert [t.index for t in store.trials(first.session_id)] == [1, 2, 3, 4, 5]
        document = json.loads(export_session(store, first.session_id, "json"))
    assert [(e.event, e.after_trial) for e in info.events] == [("ended", 3), ("resumed", 3), ("ended", 5)]
    assert len(info.unreadable_events) == 1 and len(document["trials"]) == 5
    assert document["unreadable_events"] == list(info.unreadable_events)


def test_an_old_format_session_resumes_with_its_plain_probit_model(tmp_path, window):
    import sqlite3

    db, lines = tmp_path / "s.db", []
    first = run_session(
        RunRequest(
            db_path=db,
            protocol_path=write_protocol(tmp_path / "p.toml", **FAST),
            participant="old",
            observer="simulated",
            seed=4,
            trials=6,
        ),
        log=lines.append,
        window=window,
    )
    with SessionStore(db, readonly=True) as store:
        info = store.session(first.session_id)
    old_settings = {k: v for k, v in info.optimizer_settings.items() if k not in NEW_SETTINGS}
    old_settings["inference"] = "laplace"
    old_protocol = json.loads(json.dumps(info.protocol))
    del old_protocol["optimizer"]["lapse"]
    old_protocol["optimizer"]["inference"] = "laplace"
    with sqlite3.connect(db) as connection:  # as a lensopt of before issue 14 stored it
        connection.execute(
            "UPDATE sessions SET optimizer_settings = ?, protocol = ?, status = 'aborted' WHERE id = ?",
            (json.dumps(old_settings), json.dumps(old_protocol), first.session_id),
        )
    connection.close()

    resumed = run_session(RunRequest(db_path=db, resume=first.session_id, trials=9), log=lines.append, window=window)
    assert resumed.status == "finished" and resumed.n_trials == 9 and resumed.stopped_at is None
    with SessionStore(db, readonly=True) as store:
        info, records = store.session(first.session_id), store.trials(first.session_id)
    assert info.optimizer_settings == old_settings  # resuming never rewrites the stored settings
    assert [t.index for t in records] == list(range(1, 10))
    rebuilt = RefractionOptimizer.from_settings(old_settings, _history(records[:6]))
    assert rebuilt.likelihood == "probit" and rebuilt.stop is None
    # resumed again without --trials: the budget its last resume was given (9) holds, not the stored 6
    k = len(lines)
    again = run_session(RunRequest(db_path=db, resume=first.session_id), log=lines.append, window=window)
    assert again.n_trials == 9 and f"session {first.session_id} holds 9 of 9 trials; nothing to do" in lines[k:], lines[
        k:
    ]
    # a session resumed with --trials before resumes were recorded (no event): its stored budget is behind
    # it, and the log says so rather than "9 of 6"
    with sqlite3.connect(db) as connection:
        connection.execute("DELETE FROM session_events WHERE session_id = ?", (first.session_id,))
    connection.close()
    k = len(lines)
    again = run_session(RunRequest(db_path=db, resume=first.session_id), log=lines.append, window=window)
    assert again.n_trials == 9 and (
        f"session {first.session_id} holds 9 trials, more than the budget of 6 (--trials above 9 adds more); "
        "nothing to do" in lines[k:]
    ), lines[k:]
    proposal, continued = rebuilt.ask(), records[6]
    assert (continued.sphere_d, continued.cylinder_d, continued.letter_logmar) == pytest.approx(
        (proposal.sphere_d, proposal.cylinder_d, proposal.letter_logmar), abs=1e-9
    )


def test_an_acuity_law_session_killed_mid_way_resumes_as_the_uninterrupted_one(tmp_path):
    """A protocol with ``rule = "acuity-law"``: every answer stored before the kill, the resumed session
    asks what its optimizer, rebuilt from the stored answers, asks next."""
    from experiment_helpers import assert_resumed_as_the_rebuilt_acuity_law_optimizer, kill_mid_way_and_resume

    db = tmp_path / "s.db"
    law = {"optimizer.rule": '"acuity-law"', "optimizer.n_initial": None, "optimizer.inference": None}  # no GP
    protocol = write_protocol(tmp_path / "law.toml", **{**FAST, "timing.simulated_response_s": "0.3", **law})
    _, info, before, after, resumed = kill_mid_way_and_resume(db, protocol, lambda store, sid: store.trials(sid))
    k = len(before)
    assert info.optimizer_settings["rule"] == "acuity-law" and f"resuming at trial {k + 1} of 8" in resumed.stdout
    assert after[:k] == before and [t.index for t in after] == list(range(1, 9))
    assert_resumed_as_the_rebuilt_acuity_law_optimizer(info, before, after)


def test_a_frames_folder_that_fails_mid_session_is_said_once_and_the_session_goes_on(tmp_path, window):
    """The frames folder removed (a stick pulled out, a full disk) after trial 2: a traceback ended the
    session before. Frames are diagnostics: one warning in the log, no more frames, every trial run
    and stored, the session finished."""
    import shutil

    frames = tmp_path / "frames"
    lines: list[str] = []

    def log(line):
        lines.append(line)
        if line.startswith("trial   2/") and frames.is_dir():
            shutil.rmtree(frames)
            frames.write_text("not a folder any more")

    protocol = write_protocol(tmp_path / "p.toml", **FAST)
    outcome = run_session(
        RunRequest(
            db_path=tmp_path / "s.db",
            protocol_path=protocol,
            participant="sim",
            observer="simulated",
            seed=5,
            trials=6,
            frames_dir=frames,
        ),
        log=log,
        window=window,
    )
    assert outcome.status == "finished" and outcome.n_trials == 6
    warnings = [line for line in lines if line.startswith("warning: frames are no longer saved")]
    assert len(warnings) == 1 and str(frames) in warnings[0] and "every answer is stored" in warnings[0]
    assert frames.read_text() == "not a folder any more"


def test_resuming_a_session_another_lensopt_is_running_is_refused_before_its_window_opens(tmp_path):
    """Two programs on one session would both show the patient its next trial (the second's answer
    then blocked every later resume): ``--resume`` of a session being run is one line, exit 2, and
    changes nothing; once the first program has ended, the resume goes ahead."""
    db = tmp_path / "s.db"
    first = started_session(tmp_path, db, "two", "0.6", stored=2)
    second = lensopt("run", "--resume", 1, "--db", db)
    _, err = second.communicate(timeout=60)
    assert first.poll() is None  # refused because the first still ran it (36 trials of 0.6 s)
    assert second.returncode == 2 and "Traceback" not in err, err
    assert not list(tmp_path.glob("s.db.session-1.unsaved.jsonl"))  # the second stored and rescued nothing
    assert err.strip().splitlines() == [
        f"lensopt run: error: session 1 is being run by another lensopt (process {first.pid}); finish or close "
        "that one first — two would show the patient the same trial"
    ]
    first.send_signal(signal.SIGTERM)
    first.communicate(timeout=60)
    stored = stored_trials(db)
    resumed = lensopt("run", "--resume", 1, "--db", db, "--trials", len(stored) + 1)
    _, err = resumed.communicate(timeout=120)
    assert resumed.returncode == 0, err
    assert [t.index for t in stored_trials(db)] == list(range(1, len(stored) + 2))


@pytest.mark.parametrize(("participant", "said"), [("P0\n01", "one line of printable text"), ("x" * 65, "at most 64")])
def test_a_participant_id_with_a_newline_or_too_long_is_refused(participant, said):
    with pytest.raises(ValueError, match=said):
        RunRequest(db_path="s.db", protocol_path="p.toml", participant=participant)


def test_a_lens_the_patient_never_read_through_is_said_so_in_the_log_under_it(tmp_path, window):
    """An acuity-law session of 12 letters (its trials a diopter and more from the optimum its law puts
    between them): the log writes the lens, then, before anything else, that it was not tried, with
    the nearest lens the patient read through — by the trials stored, along the session's axis."""
    from lensopt.refraction.shown import untried_d, untried_note
    from lensopt.store import SessionStore

    law = {"optimizer.rule": '"acuity-law"', "optimizer.n_initial": None, "optimizer.inference": None}
    protocol = write_protocol(tmp_path / "law.toml", **{**FAST, **law, "lens.axis_deg": "180.0"})
    lines: list[str] = []
    db = tmp_path / "s.db"
    request = RunRequest(db_path=db, protocol_path=protocol, participant="sim", observer="simulated", seed=3, trials=12)
    outcome = run_session(request, log=lines.append, window=window)
    with SessionStore(db, readonly=True) as store:
        result, trials = store.session(outcome.session_id).result, store.trials(outcome.session_id)
    distance_d = untried_d(result.sphere_d, result.cylinder_d, result.axis_deg, trials, 180.0)
    assert distance_d is not None  # this session's lens was not tried (seed 3)
    lens_line = next(i for i, line in enumerate(lines) if result.prescription in line and "prescription" in line)
    after = [line for line in lines[lens_line + 1 :] if not line.startswith("95% intervals")]
    assert after[0] == untried_note(distance_d)


@pytest.mark.parametrize("convention", ["minus", "plus"])
def test_with_the_phoropters_axis_every_trials_lens_is_logged_as_the_clinician_sets_it(tmp_path, window, convention):
    """A sphere-and-cylinder search at a known axis (``--axis``): each trial's log line writes the
    lens in the protocol's cylinder convention at that axis — the lens the "clinician: set lens"
    prompt names — not the search's sphere and signed cylinder (``S -3.00 C +3.00 x 170`` under
    ``set lens plano / -3.00 x 080``)."""
    from lensopt.refraction.lens import Lens

    protocol = write_protocol(tmp_path / "axis.toml", **FAST, **{"lens.cylinder": f'"{convention}"'})
    db, lines = tmp_path / "s.db", []
    request = RunRequest(
        db_path=db, protocol_path=protocol, participant="a", observer="simulated", seed=3, trials=12, axis_deg=170.0
    )
    run_session(request, log=lines.append, window=window)
    logged = [m.group(1) for line in lines if (m := re.match(r"\s*trial +\d+/\d+  (S \S+ C \S+ x \d{3})  ", line))]
    expected = []
    for t in stored_trials(db):
        lens = Lens(t.sphere_d, t.cylinder_d, 170.0)
        shown = lens.plus_cylinder() if convention == "plus" else lens.minus_cylinder()
        expected.append(f"S {diopter_text(shown.sphere_d)} C {diopter_text(shown.cylinder_d)} x {shown.axis_deg:03.0f}")
    assert logged == expected and len(logged) == 12
    assert any(t.cylinder_d > 0 for t in stored_trials(db)) or convention == "plus"  # a transposed lens was shown


@pytest.mark.parametrize("eye", ["OD", "OU"])
def test_a_resume_rebuilds_each_eyes_search_from_its_answers_once(tmp_path, window, monkeypatch, eye):
    """Found by an audit of a year's database: a resume rebuilt the first eye's search four times
    (for its letter bounds, for each eye's state, for the log line, for the loop), 35 s of silence
    before the first trial of a 328-answer acuity-law session; now once per eye."""
    from lensopt.modes.base import FeedbackMode

    protocol = write_protocol(tmp_path / "p.toml", **FAST)
    db = tmp_path / "s.db"
    request = RunRequest(
        db_path=db, protocol_path=protocol, participant="sim", observer="simulated", seed=7, trials=4, eye=eye
    )
    first = run_session(request, log=lambda _: None, window=window)
    rebuilt = []
    real = FeedbackMode.rebuild_optimizer

    def counted(self, settings, records, *shown):
        rebuilt.append(len(records))
        return real(self, settings, records, *shown)

    monkeypatch.setattr(FeedbackMode, "rebuild_optimizer", counted)
    lines = []
    more = run_session(RunRequest(db_path=db, resume=first.session_id, trials=6), log=lines.append, window=window)
    assert more.status == "finished" and more.n_trials == (12 if eye == "OU" else 6), lines[-3:]
    assert rebuilt == ([4, 4] if eye == "OU" else [4])  # each eye's 4 answers, told once
