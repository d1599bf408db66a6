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
