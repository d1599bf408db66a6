"""Eyes: ``--eye OD|OS|OU``. Every trial and result stores its eye; OU runs OD then OS, each eye its
own search with its own stored trials and its own result; a session of both eyes killed with
SIGKILL resumes at the right eye and trial, as the uninterrupted session would have gone on."""

import csv
import io
import json
import os
import re
import signal
import subprocess
import sys
import time

from test_console import clinic_protocol

from experiment_helpers import REPO, needs_display
from lensopt.experiment.modes import MODES
from lensopt.experiment.session import RunRequest, run_session
from lensopt.store import SessionStore
from lensopt.store.export import export_session

pytestmark = needs_display


def eye_trials(db):
    """``(eye, void, sphere_d, cylinder_d, axis_deg, letter_logmar, letter, correct)`` of the latest session."""
    if not os.path.exists(db):
        return []
    try:
        with SessionStore(db, readonly=True) as store:
            sid = store.latest_session_id()
            records = [] if sid is None else store.trials(sid)
    except Exception:  # noqa: BLE001 - the file is being created
        return []
    return [
        (t.eye, t.void, t.sphere_d, t.cylinder_d, t.axis_deg, t.letter_logmar, t.letter, t.correct) for t in records
    ]


def test_an_ou_session_runs_od_then_os_each_its_own_search_and_result(tmp_path, window, drawn_texts):
    db, lines = tmp_path / "s.db", []
    outcome = run_session(
        RunRequest(db_path=db, protocol_path=clinic_protocol(tmp_path), participant="P1", seed=8, trials=3, eye="OU"),
        log=lines.append,
        window=window,
    )
    assert outcome.status == "finished" and outcome.n_trials == 6
    with SessionStore(db, readonly=True) as store:
        info, records = store.session(outcome.session_id), store.trials(outcome.session_id)
        document = json.loads(export_session(store, outcome.session_id, "json"))
        rows = list(csv.DictReader(io.StringIO(export_session(store, outcome.session_id, "csv"))))
    assert [r.eye for r in records] == ["OD"] * 3 + ["OS"] * 3 and [r.index for r in records] == list(range(1, 7))
    assert info.eye == "OU" and [r.eye for r in info.results] == ["OD", "OS"]
    for result in info.results:  # each eye's result is its own search's, rebuilt from its own trials
        rebuilt = MODES["letters"].rebuild_optimizer(info.optimizer_settings, records, result.eye)
        assert rebuilt.n_trials == 3 == result.n_trials
        assert rebuilt.prescription().text == result.prescription
        # short searches: not confident enough, so written as an estimate (a prescription once confident)
        assert f"estimate {result.eye}, not a prescription: {result.prescription}" in " ".join(lines)
    # the two searches are not the same draws: OS has its own seed
    assert [(r.sphere_d, r.cylinder_d, r.axis_deg) for r in records[:3]] != [
        (r.sphere_d, r.cylinder_d, r.axis_deg) for r in records[3:]
    ]
    assert document["eye"] == "OU" and [r["eye"] for r in document["results"]] == ["OD", "OS"]
    assert all(r["prescription"] for r in document["results"])
    assert [t["eye"] for t in document["trials"]] == [r["eye"] for r in rows] == ["OD"] * 3 + ["OS"] * 3
    titles = [text for _, text in drawn_texts if text.startswith("Trial ")]
    assert any(t.endswith("eye OD") for t in titles) and any(t.endswith("eye OS") for t in titles)
    assert any(
        "\n\nEye OS: the left eye, the right one occluded" in text for _, text in drawn_texts
    )  # after OD's result


def lensopt(*args):
    return subprocess.Popen(
        [sys.executable, "-m", "lensopt", *map(str, args)],
        cwd=REPO,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


def run_whole_and_killed(tmp_path, eye: str, n_trials: int, kill_after: int):
    """The same simulated clinic session (seed 5, ``--eye eye``) run whole and, side by side, killed
    (SIGKILL) once ``kill_after`` trials are stored; the two databases."""
    protocol = clinic_protocol(tmp_path, **{"timing.simulated_response_s": "0.15"})
    common = ("--protocol", protocol, "--participant", "k9", "--seed", 5, "--trials", n_trials, "--eye", eye)
    whole_db, killed_db = tmp_path / "whole.db", tmp_path / "killed.db"
    whole = lensopt("run", *common, "--db", whole_db)
    killed = lensopt("run", *common, "--db", killed_db)
    deadline = time.time() + 180
    while len(eye_trials(killed_db)) < kill_after and killed.poll() is None and time.time() < deadline:
        time.sleep(0.02)
    os.kill(killed.pid, signal.SIGKILL)
    killed.communicate()
    _, err = whole.communicate(timeout=300)
    assert whole.returncode == 0, err
    return whole_db, killed_db


def test_kill_9_in_the_second_eye_then_resume_continues_at_that_eye_and_trial(tmp_path):
    whole_db, killed_db = run_whole_and_killed(tmp_path, "OU", n_trials=4, kill_after=5)
    before = eye_trials(killed_db)
    k = len(before)
    assert 5 <= k < 8, f"the session was not killed in the second eye ({k} trials stored)"
    with SessionStore(killed_db, readonly=True) as store:
        sid = store.latest_session_id()
        info = store.session(sid)
        assert info.status == "running" and [r.eye for r in info.results] == ["OD"]  # OD's result was stored

    resumed = lensopt("run", "--resume", sid, "--db", killed_db)
    out, err = resumed.communicate(timeout=300)
    assert resumed.returncode == 0, err
    assert f"resuming at eye OS, trial {k - 4 + 1} of 4" in out and "estimate OS, not a prescription: " in out
    # the end names both eyes, OD's (its budget ended it before the resume) from its stored result
    assert "ended before this resume: OD  not enough answers to prescribe; confidence " in out, out
    assert re.search(r"^OS  not enough answers to prescribe; confidence ", out, re.MULTILINE), out
    after, uninterrupted = eye_trials(killed_db), eye_trials(whole_db)
    assert after[:k] == before  # nothing lost
    assert after == uninterrupted  # the same eyes, lenses, letters and answers, to the bit
    with SessionStore(killed_db, readonly=True) as a, SessionStore(whole_db, readonly=True) as b:
        mine, theirs = a.session(sid).results, b.session(b.latest_session_id()).results
    assert [(r.eye, r.prescription) for r in mine] == [(r.eye, r.prescription) for r in theirs]


def test_a_resume_whose_trials_are_below_an_eyes_answers_says_so_and_runs_the_other_eye(tmp_path):
    """Killed in OS with OD's 4 answers stored, resumed with --trials 3: OD gets no more trials —
    said on stderr with the count that would continue it, not ended silently — and OS runs to 3."""
    _, killed_db = run_whole_and_killed(tmp_path, "OU", n_trials=4, kill_after=5)
    k = len(eye_trials(killed_db))
    assert 5 <= k < 7, f"the session was not killed early in the second eye ({k} trials stored)"
    with SessionStore(killed_db, readonly=True) as store:
        sid = store.latest_session_id()
    resumed = lensopt("run", "--resume", sid, "--trials", 3, "--db", killed_db)
    out, err = resumed.communicate(timeout=300)
    assert resumed.returncode == 0, err
    assert (
        f"resuming session {sid}: eye OD already holds 4 answers, more than --trials 3, so it gets no more; "
        "give --trials above 4 to continue it"
    ) in err, err
    assert [t[0] for t in eye_trials(killed_db)] == ["OD"] * 4 + ["OS"] * 3
    assert "ended before this resume: OD  " in out, out  # its end point still closes the session


def test_kill_9_in_a_left_eye_session_then_resume_asks_what_the_uninterrupted_one_asked(tmp_path):
    """``--eye OS`` alone: the left eye's search has its own seed; a resume rebuilds it from the
    session's settings (it once offset that seed twice and asked other lenses than the
    uninterrupted session)."""
    whole_db, killed_db = run_whole_and_killed(tmp_path, "OS", n_trials=5, kill_after=2)
    before = eye_trials(killed_db)
    assert 2 <= len(before) < 5, f"the session was not killed mid-way ({len(before)} trials stored)"
    with SessionStore(killed_db, readonly=True) as store:
        sid = store.latest_session_id()
    resumed = lensopt("run", "--resume", sid, "--db", killed_db)
    out, err = resumed.communicate(timeout=300)
    assert resumed.returncode == 0, err
    after, uninterrupted = eye_trials(killed_db), eye_trials(whole_db)
    assert after[: len(before)] == before and after == uninterrupted
    assert {r[0] for r in after} == {"OS"} and "estimate OS, not a prescription: " in out


def test_an_ou_console_and_log_count_and_list_each_eye_on_its_own(tmp_path, window, console_states):
    """OS trial 1 is "OS trial 1/3" on stdout as on the console, whose last answers and confidence
    are the left eye's only (not OD's, carried over)."""
    lines = []
    protocol = clinic_protocol(tmp_path, **{"stop.min_trials": "1"})
    outcome = run_session(
        RunRequest(db_path=tmp_path / "s.db", protocol_path=protocol, participant="P1", seed=8, trials=3, eye="OU"),
        log=lines.append,
        window=window,
    )
    assert outcome.status == "finished" and outcome.n_trials == 6
    counted = [m.group(0) for m in (re.match(r"O[DS] trial +\d+/\d+", line) for line in lines) if m]
    assert counted == [f"{eye} trial   {k}/3" for eye in ("OD", "OS") for k in (1, 2, 3)]
    assert not [line for line in lines if re.search(r"trial +[4-6]/3", line)]
    assert any(s.eye == "OD" and s.confidence is not None for s in console_states)  # OD had its confidence
    os_states = [s for s in console_states if s.eye == "OS"]
    answered_at = next(k for k, s in enumerate(os_states) if s.answers)
    before_answer, first_answer = os_states[:answered_at], os_states[answered_at]
    assert [s for s in before_answer if s.trial_index == 1 and s.heading.startswith("Letter ")]
    assert all(s.answers == () and s.confidence is None for s in before_answer), before_answer[-1]
    assert len(first_answer.answers) == 1 and first_answer.answers[0].startswith("1: ")
    assert not [s for s in os_states if s.heading.startswith("Eye OD finished")]


def test_a_resumed_session_shows_the_stored_last_answers_of_the_eye_being_tested(tmp_path, window, console_states):
    """Quit at OS trial 2 of an OU session, then ``--resume``: the console lists OS's stored answer
    (and its confidence), not "none yet", and none of OD's."""
    from test_clinician_keys import ClinicKeys

    from lensopt.experiment.keyboard import KeyPress

    class QuitWhenPaused(ClinicKeys):
        def wait_for(self, keys, timeout_s=None):
            return KeyPress("q", 0.1) if "q" in keys else super().wait_for(keys, timeout_s)

    protocol = clinic_protocol(tmp_path, **{"protocol.observer": '"keyboard"', "stop.min_trials": "1"})
    db = tmp_path / "s.db"
    quit_at_os_2 = QuitWhenPaused(letters={2: ["<wrong>"], 4: ["escape"]})
    outcome = run_session(
        RunRequest(db_path=db, protocol_path=protocol, participant="P1", seed=6, trials=2, eye="OU"),
        responses=quit_at_os_2,
        log=lambda line: None,
        window=window,
    )
    assert outcome.status == "aborted" and outcome.n_trials == 3
    with SessionStore(db, readonly=True) as store:
        (os_1,) = [r for r in store.trials(outcome.session_id) if r.eye == "OS"]
    console_states.clear()
    lines = []
    resumed = run_session(
        RunRequest(db_path=db, resume=outcome.session_id), responses=ClinicKeys(), log=lines.append, window=window
    )
    assert resumed.status == "finished" and any("resuming at eye OS, trial 2 of 2" in line for line in lines)
    before_answer = [s for s in console_states if len(s.answers) < 2 and s.heading != "Session finished"]
    expected = (f"1: {os_1.letter}>{os_1.response} {'ok' if os_1.correct else 'x'}",)
    assert before_answer and all(s.answers == expected and s.eye == "OS" for s in before_answer), before_answer[0]
    assert all(s.confidence is not None for s in before_answer)


def test_the_second_eyes_console_opens_with_the_first_eyes_result(tmp_path, window, console_states):
    """Before OS starts the clinician sees what OD ended with (to continue OD later if it fell short)."""
    lines = []
    outcome = run_session(
        RunRequest(
            db_path=tmp_path / "s.db",
            protocol_path=clinic_protocol(tmp_path),
            participant="P1",
            seed=8,
            trials=3,
            eye="OU",
        ),
        log=lines.append,
        window=window,
    )
    od_result = outcome.results[0]
    assert od_result.eye == "OD"
    starts = [s.heading for s in console_states if s.eye == "OS" and "Eye OS:" in s.heading]
    assert starts, [s.heading for s in console_states]
    od_line = next(line for line in lines if line.startswith("OD  "))  # as the log said it
    assert starts[0].startswith(f"{od_line}\n\nEye OS: the left eye")
    assert not [s.heading for s in console_states if s.eye == "OD" and s.heading.startswith("OD  ")]  # OD's own start


def test_an_ou_session_started_from_each_eyes_autorefraction_searches_each_eye_around_its_own(tmp_path, window):
    """``--start 'OD ..., OS ...'``: OS is searched in a box around its own autorefraction (it was
    searched around OD's, which for an anisometropic patient need not hold OS's correction); the
    snapshot and the settings hold both starts, a resume rebuilds OS around its own, and the log names
    each eye's start beside its result."""
    from lensopt.refraction.lens import Lens
    from lensopt.refraction.prescription import SearchBox

    db, lines, warned = tmp_path / "s.db", [], []
    start = "OD -2.25 -0.75 x 180, OS -1.00 -0.50 x 10"
    request = RunRequest(
        db_path=db, protocol_path=clinic_protocol(tmp_path), participant="P1", seed=8, trials=3, eye="OU", start=start
    )
    outcome = run_session(request, log=lines.append, warn=warned.append, window=window)
    assert outcome.status == "finished" and not [w for w in warned if "both eyes" in w]
    with SessionStore(db, readonly=True) as store:
        info, records = store.session(outcome.session_id), store.trials(outcome.session_id)
    assert info.protocol["start"]["refraction"] == start
    assert info.optimizer_settings["start"] == "-2.25 / -0.75 x 180"
    assert info.optimizer_settings["eye_starts"] == {"OD": "-2.25 / -0.75 x 180", "OS": "-1.00 / -0.50 x 010"}
    od, os_ = Lens(-2.25, -0.75, 180.0), Lens(-1.0, -0.5, 10.0)
    for eye, own in (("OD", od), ("OS", os_)):
        rebuilt = MODES["letters"].rebuild_optimizer(info.optimizer_settings, records, eye)
        assert rebuilt.start == own and rebuilt.n_trials == 3
        box = SearchBox(own, 2.0, 1.0)
        assert all(
            box.contains(Lens(r.sphere_d, r.cylinder_d, r.axis_deg).power_vector()) for r in records if r.eye == eye
        )
    assert (
        "full prescription: starting refraction OD -2.25 / -0.75 x 180, OS -1.00 / -0.50 x 010; search box "
        "M ±2 D, J0 and J45 ±1 D" in lines
    )
    assert "OD: started from -2.25 / -0.75 x 180" in lines and "OS: started from -1.00 / -0.50 x 010" in lines
    ended = [line for line in lines if line.startswith("continue with: ")]
    # what the patient read through each eye's lens, or that it was not tried, under its result
    noted = [line for line in lines if line.startswith(("OD: this lens", "OS: this lens", "OD: read", "OS: read"))]
    assert len(noted) == 2, lines
    # a resume (nothing to do) reports each eye's result beside its own start, and, as the session's
    # end did, that each eye (3 letters) is no prescription, what was read through its lens, and the
    # command that gives it more trials
    lines.clear()
    run_session(RunRequest(db_path=db, resume=outcome.session_id), log=lines.append, window=window)
    assert all(line in lines for line in noted), lines
    assert "OD: started from -2.25 / -0.75 x 180" in lines and "OS: started from -1.00 / -0.50 x 010" in lines
    for eye in ("OD", "OS"):
        assert any(line.startswith(f"{eye}  not enough answers to prescribe") for line in lines), lines
    (again,) = [line for line in lines if line.startswith("continue with: ")]
    assert len(ended) == 1 and again.startswith(f"continue with: lensopt run --resume {outcome.session_id} --trials ")
    assert again.split()[6] == ended[0].split()[6] and f"--db {db.resolve()}" in again  # the same budget per eye


def test_the_closing_console_names_each_eyes_start_under_its_result(tmp_path, window, console_states):
    request = RunRequest(
        db_path=tmp_path / "s.db", protocol_path=clinic_protocol(tmp_path), participant="P1", seed=8, trials=2,
        eye="OU", start="OD -2.25 -0.75 x 180, OS -1.00 -0.50 x 10",
    )  # fmt: skip
    run_session(request, window=window, console_window=window)
    (closing,) = [s for s in console_states if s.heading == "Session finished"][-1:]
    lines = closing.keys_text.splitlines()
    assert "OD: started from -2.25 / -0.75 x 180" in lines and "OS: started from -1.00 / -0.50 x 010" in lines
    assert lines.index("OD: started from -2.25 / -0.75 x 180") < lines.index("OS: started from -1.00 / -0.50 x 010")
    # its title is the session's, not OS's last trial ("Trial 2 of 2 · eye OS" over both eyes' results)
    assert (closing.trial_index, closing.eye) == (0, None)
    # the undo it offers takes back OS's last answer, and says so over both eyes' results
    assert closing.message == "SPACE: close   ·   BACKSPACE: undo OS's last answer"


def test_an_ou_session_started_from_one_lens_says_so_in_one_line(tmp_path, window):
    db, lines, warned = tmp_path / "s.db", [], []
    request = RunRequest(
        db_path=db, protocol_path=clinic_protocol(tmp_path), participant="P1", seed=8, trials=2, eye="OU",
        start="-2.25 -0.75 x 180",
    )  # fmt: skip
    outcome = run_session(request, log=lines.append, warn=warned.append, window=window)
    assert outcome.status == "finished"
    assert (
        [w for w in warned if w.startswith("both eyes start from -2.25 / -0.75 x 180 (one lens for OU)")]
        == [w for w in warned if "both eyes" in w]
        != []
    )
    assert "OD: started from -2.25 / -0.75 x 180" in lines and "OS: started from -2.25 / -0.75 x 180" in lines


def test_a_session_of_one_eye_given_each_eyes_start_keeps_its_own(tmp_path, window):
    db, lines = tmp_path / "s.db", []
    request = RunRequest(
        db_path=db, protocol_path=clinic_protocol(tmp_path), participant="P1", seed=8, trials=2, eye="os",
        start="OD -2.25 -0.75 x 180; OS -1.00 -0.50 x 10",
    )  # fmt: skip
    outcome = run_session(request, log=lines.append, window=window)
    with SessionStore(db, readonly=True) as store:
        info = store.session(outcome.session_id)
    assert info.eye == "OS" and info.protocol["start"]["refraction"] == "-1.00 -0.50 x 10"
    assert info.optimizer_settings["start"] == "-1.00 / -0.50 x 010" and "eye_starts" not in info.optimizer_settings
    assert "OS: started from -1.00 / -0.50 x 010" in lines
