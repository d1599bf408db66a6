"""The end of a session: an interrupt while its result is computed or stored leaves it resumable."""

import pytest

from experiment_helpers import needs_display
from lensopt.experiment import session as session_module
from lensopt.experiment.session import RunRequest, run_session
from lensopt.store import SessionStore

pytestmark = needs_display


def test_an_interrupt_while_the_result_is_stored_leaves_the_session_stopped_and_its_resume_stores_it(
    tmp_path, window, fast_protocol, monkeypatch
):
    db, lines = tmp_path / "s.db", []
    stored_report = session_module.report_eye

    def interrupted(*args, **kwargs):  # a SIGTERM as the last answer's result is computed
        raise KeyboardInterrupt

    monkeypatch.setattr(session_module, "report_eye", interrupted)
    request = RunRequest(
        db_path=db, protocol_path=fast_protocol, participant="end", observer="simulated", seed=5, trials=6
    )
    with pytest.raises(KeyboardInterrupt):
        run_session(request, log=lines.append, window=window)
    with SessionStore(db, readonly=True) as store:
        (info,) = store.sessions()
    # every answer is in, no result: the session is not called finished, and the log says how to go on
    assert (info.status, info.n_trials, info.results) == ("aborted", 6, ())
    assert any(line.startswith("stopped after 6 trials; continue with: lensopt run --resume 1") for line in lines)

    monkeypatch.setattr(session_module, "report_eye", stored_report)
    lines.clear()
    again = run_session(RunRequest(db_path=db, resume=info.session_id), log=lines.append, window=window)
    with SessionStore(db, readonly=True) as store:
        info = store.session(info.session_id)
    assert again.status == info.status == "finished" and info.n_trials == 6
    assert len(info.results) == 1 and info.results[0].n_trials == 6  # the result of all six answers, stored now


def test_the_command_that_continues_a_session_run_without_full_screen_carries_no_fullscreen(
    tmp_path, window, fast_protocol, monkeypatch
):
    """On one screen a clinician runs with --no-fullscreen (the console beside the window); the command
    printed when the session stops must carry it, or the same set-up refuses it (console on the chart)."""
    import shlex

    from lensopt.cli import build_parser

    db, lines = tmp_path / "s.db", []

    def interrupted(*args, **kwargs):
        raise KeyboardInterrupt

    monkeypatch.setattr(session_module, "report_eye", interrupted)
    request = RunRequest(
        db_path=db,
        protocol_path=fast_protocol,
        participant="end",
        observer="simulated",
        seed=5,
        trials=6,
        fullscreen=False,
    )
    with pytest.raises(KeyboardInterrupt):
        run_session(request, log=lines.append, window=window)
    (stopped,) = [line for line in lines if line.startswith("stopped after 6 trials; continue with: ")]
    command = stopped.removeprefix("stopped after 6 trials; continue with: ")
    assert command == f"lensopt run --resume 1 --no-fullscreen --db {db}"
    args = build_parser().parse_args(shlex.split(command)[1:])
    assert (args.resume, args.fullscreen, args.db) == (1, False, db)


def test_the_advice_of_a_sessions_end_is_stored_and_given_again_by_a_resume_the_view_and_the_record(
    tmp_path, window, capsys
):
    """An eye short of its target: the log's "continue with" command is stored with the session's end;
    a bare resume (nothing to run) gives the stored number — the closing console's, from the
    confidence's trend, which a rebuilt search no longer has — and ``lensopt sessions SESSION_ID`` and
    the printed record give the same command."""
    import sqlite3

    from test_console import clinic_protocol

    from lensopt.cli import main
    from lensopt.dashboard.model import snapshot_from_store
    from lensopt.dashboard.panels import summary_rows
    from lensopt.dashboard.prescription_text import build_record
    from lensopt.dashboard.record_page import A4_PORTRAIT_IN, MARGIN_IN, draw_record_page

    db, lines = tmp_path / "s.db", []
    request = RunRequest(
        db_path=db, protocol_path=clinic_protocol(tmp_path), participant="P1", seed=8, trials=3, fullscreen=False
    )
    outcome = run_session(request, log=lines.append, window=window)
    sid = outcome.session_id
    (ended,) = [line.removeprefix("continue with: ") for line in lines if line.startswith("continue with: ")]
    assert ended.startswith(f"lensopt run --resume {sid} --trials ") and " --no-fullscreen --db " in ended
    with SessionStore(db, readonly=True) as store:
        record = build_record(store.session(sid), trials=store.trials(sid), db_path=db)
    assert record.continue_with == f"More trials recommended: {ended.replace('  (at most', ' (at most')}"
    page = draw_record_page(record)  # page 1 draws it whole, within the right margin
    page.draw_without_rendering()
    assert record.continue_with in " ".join(t.get_text() for t in page.texts)
    right_px = (A4_PORTRAIT_IN[0] - MARGIN_IN) * page.dpi + 1.0
    assert [t.get_text() for t in page.texts if t.get_window_extent().x1 > right_px] == []
    # as if the closing console had computed 37 from the trend: the resume and the view give 37, not a ceiling
    conn = sqlite3.connect(db)
    with conn:
        conn.execute(
            "UPDATE session_events SET detail = ? WHERE session_id = ? AND event = 'ended'",
            ('{"continue_trials": 37, "at_most": false, "options": " --no-fullscreen"}', sid),
        )
    conn.close()
    lines.clear()
    run_session(RunRequest(db_path=db, resume=sid), log=lines.append, window=window)
    advised = f"lensopt run --resume {sid} --trials 37 --no-fullscreen --db {db.resolve()}"
    assert f"continue with: {advised}" in lines, lines
    capsys.readouterr()
    assert main(["sessions", str(sid), "--db", str(db)]) == 0
    assert f"More trials recommended: {advised}" in capsys.readouterr().out.splitlines()
    with SessionStore(db, readonly=True) as store:  # the dashboard's summary: its "Continue" row
        snap = snapshot_from_store(store, sid)
    assert [row[:2] for row in summary_rows(snap) if row[0] == "Continue"] == [("Continue", advised)]
