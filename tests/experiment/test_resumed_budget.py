"""A session resumed with ``--trials``: the printed record and the dashboard say why it ended, and
where its stopping rule stands, against the budget it last ran with (the one the store keeps from
the resume), not its protocol's."""

import re

from test_clinician_keys import ClinicKeys, run
from test_console import clinic_protocol

from experiment_helpers import FAST, needs_display, write_protocol
from lensopt.dashboard.model import SessionModel
from lensopt.dashboard.panels import summary_rows
from lensopt.dashboard.prescription_text import build_record
from lensopt.experiment.session import RunRequest, run_session
from lensopt.store import SessionStore, stored_budget

pytestmark = needs_display


def test_a_session_quit_and_resumed_with_fewer_trials_reached_that_budget(tmp_path, window):
    """Started with 6 trials (its [stop] following them), quit after 2, resumed with --trials 4: its 4
    answers are the budget it ran with reached, not a session that "ended after 4 trials"."""
    quit_at_3 = ClinicKeys(screens=["space", "escape", "space", "q"], letters={3: ["escape"]})
    first, *_ = run(tmp_path, window, quit_at_3, trials=6)
    assert first.status == "aborted"
    resume = RunRequest(db_path=tmp_path / "s.db", resume=first.session_id, trials=4)
    outcome = run_session(resume, responses=ClinicKeys(), log=lambda line: None, window=window)
    with SessionStore(tmp_path / "s.db", readonly=True) as store:
        info, records = store.session(first.session_id), store.trials(first.session_id)
    assert outcome.status == "finished" and info.result.n_trials == 4
    ran = stored_budget(info)
    assert (ran.trials, ran.protocol_trials, ran.rule.max_trials, ran.known) == (4, 6, 4, True)
    (eye,) = build_record(info, printed_at=1.9e9, trials=records).eyes
    # started with --trials 6: the budget it lowered was the start's (the stored protocol holds it)
    assert eye.stop_reason == "trial budget reached (4 of 4, lowered from --trials 6 at the start on resuming)"


def test_a_session_resumed_with_more_trials_reached_the_new_budget_on_the_record_and_the_dashboard(tmp_path, window):
    """Ended by its budget of 6, resumed with --trials 9 and again without: the record says the budget
    of 9 was reached; the dashboard's stopping rule runs to 9 trials and has reached them (it read "6
    (more on resuming): not yet", a budget it did not know)."""
    protocol = write_protocol(tmp_path / "stop.toml", **FAST)
    protocol.write_text(protocol.read_text() + "\n[stop]\nconfidence = 0.999\nmin_trials = 4\n")
    db = tmp_path / "s.db"
    request = RunRequest(db_path=db, protocol_path=protocol, participant="sim", observer="simulated", seed=7, trials=6)
    first = run_session(request, log=lambda line: None, window=window)
    for trials in (9, None):  # the second resume keeps the budget given to the first
        again = run_session(
            RunRequest(db_path=db, resume=first.session_id, trials=trials), log=lambda line: None, window=window
        )
        assert again.status == "finished" and again.n_trials == 9
    with SessionStore(db, readonly=True) as store:
        info, records = store.session(first.session_id), store.trials(first.session_id)
    assert info.result is not None and info.result.n_trials == 9 and info.result.confidence < 0.999
    (eye,) = build_record(info, printed_at=1.9e9, trials=records).eyes
    assert eye.stop_reason == "trial budget reached (9 of 9, extended from --trials 6 at the start on resuming)"
    snap = SessionModel(info).update(info, records)
    assert snap.certainty.max_trials == 9 and snap.certainty.budget_known
    (stops_at,) = {row[0]: row[1:] for row in summary_rows(snap)}["Stops at"]
    assert stops_at == "confidence 0.999, trials 4–9: max trials reached"


def _without_stop(path):
    """The protocol at ``path`` without its [stop] table: a fixed number of trials, a study's design."""
    text = path.read_text()
    path.write_text(re.sub(r"^\[stop\]\n.*?(?=^\[|\Z)", "", text, flags=re.S | re.M))
    return path


def test_a_fixed_design_resumed_with_more_trials_names_that_budget_on_the_closing_console(
    tmp_path, window, console_states
):
    """A study's session without [stop] (its protocol's 100 trials), run with --trials 2 and resumed
    with --trials 3: the closing console's advice said "after the protocol's 3 trials"; it names the
    budget the session ran with, the resume's --trials 3, beside the protocol's."""
    protocol = _without_stop(clinic_protocol(tmp_path, **{"optimizer.trials": "100"}))
    db = tmp_path / "s.db"
    request = RunRequest(db_path=db, protocol_path=protocol, participant="P1", seed=8, trials=2)
    first = run_session(request, log=lambda line: None, window=window)
    assert first.status == "finished"
    console_states.clear()
    resume = RunRequest(db_path=db, resume=first.session_id, trials=3)
    outcome = run_session(resume, log=lambda line: None, window=window, console_window=window)
    assert outcome.status == "finished" and outcome.n_trials == 3
    (closing,) = [s for s in console_states if s.heading == "Session finished"][-1:]
    shown = closing.body + "\n" + closing.keys_text
    with SessionStore(db, readonly=True) as store:
        ran = stored_budget(store.session(first.session_id))
    assert (ran.given, ran.protocol_trials) == (3, 2)  # the stored protocol is the one the session began with
    assert "protocol's 3" not in shown
    assert (
        "after 3 trials, the budget of --trials 3 on resuming (--trials 2 at the start, the protocol's 100; "
        "no [stop]: a fixed number)"
    ) in shown.replace("\n", " ")


def test_a_session_started_with_trials_names_them_not_the_protocol_file_it_ran(tmp_path, window, console_states):
    """The stored protocol of a session started with --trials holds them: a fixed design's record and
    closing console said "the protocol's 2 trials" of a 100-trial protocol; they name the --trials
    and the file's 100. With a [stop], the record's stop reason names them beside the file's 80."""
    fixed = _without_stop(clinic_protocol(tmp_path, **{"optimizer.trials": "100"}))
    db = tmp_path / "s.db"
    first = run_session(
        RunRequest(db_path=db, protocol_path=fixed, participant="P1", seed=8, trials=2),
        log=lambda line: None,
        window=window,
        console_window=window,
    )
    (closing,) = [s for s in console_states if s.heading == "Session finished"][-1:]
    words = "the 2 trials of --trials 2 at the start (the protocol's 100; no [stop]: a fixed number)"
    assert words in (closing.body + "\n" + closing.keys_text).replace("\n", " ")
    with SessionStore(db, readonly=True) as store:
        info = store.session(first.session_id)
        (eye,) = build_record(info, printed_at=1.9e9, trials=store.trials(first.session_id)).eyes
    assert (stored_budget(info).started_with, stored_budget(info).file_trials) == (2, 100)
    assert eye.confidence.endswith(f"after {words}") and "protocol's 2" not in eye.confidence
    stop = run_session(
        RunRequest(
            db_path=db,
            protocol_path=clinic_protocol(tmp_path, **{"optimizer.trials": "80", "stop.max_trials": "80"}),
            participant="P1",
            seed=8,
            trials=3,
        ),
        log=lambda line: None,
        window=window,
    )
    with SessionStore(db, readonly=True) as store:
        (eye,) = build_record(store.session(stop.session_id), 1.9e9, trials=store.trials(stop.session_id)).eyes
    assert eye.stop_reason == "trial budget reached (3 of 3, --trials 3 at the start; the protocol's 80)"


def test_a_session_quit_in_a_window_is_continued_by_a_command_that_opens_one_again(tmp_path, window):
    """Run with --no-fullscreen (one screen: the console beside the chart) and quit: the record's
    and the dashboard's command that continues it carries --no-fullscreen (without it the console
    would open on the chart, a command refused on that set-up); a resume given no window option,
    quit again, is continued by a command without one."""
    from lensopt.dashboard.unfinished_text import continue_row
    from lensopt.store.claim import session_status

    db = tmp_path / "s.db"
    protocol = clinic_protocol(tmp_path, **{"protocol.observer": '"keyboard"'})
    quit_at_3 = ClinicKeys(screens=["space", "escape", "space", "q"], letters={3: ["escape"]})
    request = RunRequest(db_path=db, protocol_path=protocol, participant="P1", seed=6, trials=6, fullscreen=False)
    first = run_session(request, responses=quit_at_3, log=lambda line: None, window=window)
    assert first.status == "aborted"

    def commands():
        with SessionStore(db, readonly=True) as store:
            info, records = store.session(first.session_id), store.trials(first.session_id)
        record = build_record(info, printed_at=1.9e9, db_path=db, trials=records)
        unfinished = record.unfinished or record.missing  # "not finished …", or "no prescription is stored …"
        model = SessionModel(info)
        model.db_path = db
        shown = session_status(db, first.session_id, info.status)  # "stopped", as the dashboard shows it
        (_, row_command, _) = continue_row(model.update(info, records, status=shown).header)
        return unfinished, row_command

    unfinished, row_command = commands()
    command = f"lensopt run --resume {first.session_id} --no-fullscreen --db {db}"
    assert command in unfinished and row_command == command
    again = ClinicKeys(screens=["space", "escape", "space", "q"], letters={4: ["escape"]})
    resumed = run_session(
        RunRequest(db_path=db, resume=first.session_id), responses=again, log=lambda line: None, window=window
    )
    assert resumed.status == "aborted"
    unfinished, row_command = commands()
    assert f"lensopt run --resume {first.session_id} --db {db}" in unfinished
    assert "fullscreen" not in row_command
