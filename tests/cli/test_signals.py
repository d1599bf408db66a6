"""SIGTERM and SIGHUP end a command as Ctrl-C does (lensopt.cli._terminate_as_interrupt)."""

import signal

import pytest

from lensopt.cli import _terminate_as_interrupt


@pytest.fixture
def restored_signals():
    saved = {s: signal.getsignal(s) for s in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)}
    yield
    for signum, handler in saved.items():
        signal.signal(signum, handler)


def test_sigterm_is_a_keyboard_interrupt_and_a_second_signal_does_not_cut_the_clean_up_short(restored_signals):
    received: list[int] = []
    cleaned = False
    with pytest.raises(KeyboardInterrupt), _terminate_as_interrupt(received):
        try:
            signal.raise_signal(signal.SIGTERM)  # in this thread: the handler raises before it returns
        finally:
            signal.raise_signal(signal.SIGHUP)  # a logout: SIGHUP after SIGTERM, during the clean-up
            cleaned = True
    assert cleaned and received == [signal.SIGTERM]
    assert signal.getsignal(signal.SIGTERM) is not signal.SIG_IGN  # restored afterwards


def test_a_signal_ignored_by_nohup_stays_ignored(restored_signals):
    signal.signal(signal.SIGHUP, signal.SIG_IGN)  # as nohup starts the program
    received: list[int] = []
    with _terminate_as_interrupt(received):
        signal.raise_signal(signal.SIGHUP)  # nothing happens
    assert received == [] and signal.getsignal(signal.SIGHUP) is signal.SIG_IGN


@pytest.mark.parametrize(
    "argv",
    [
        ["sessions", "--db", ""],
        ["export", "1", "-o", ""],
        ["dashboard", "1", "--report="],
        ["run", "--protocol", "demo-simulated", "--participant", "p", "--save-frames", " "],
    ],
)
def test_an_option_given_an_empty_value_is_refused_in_one_line(argv, capsys):
    """An empty path was taken as "not given": --db "" fell back to $LENSOPT_DB, export -o "" wrote
    to the screen, dashboard --report "" opened the window and waited."""
    from lensopt.cli import main

    with pytest.raises(SystemExit) as exited:
        main(argv)
    err = capsys.readouterr().err.strip().splitlines()
    assert exited.value.code == 2 and len(err) == 1 and "was given an empty value" in err[0], err
    assert "leave" in err[0]  # each of these options may be left out


def test_an_empty_value_of_a_required_option_is_not_told_to_leave_it_out(capsys):
    """``lensopt print 1 --out ""`` was told "give one or leave --out out", but print needs --out."""
    from lensopt.cli import main

    with pytest.raises(SystemExit) as exited:
        main(["print", "1", "--out", ""])
    (line,) = capsys.readouterr().err.strip().splitlines()
    assert exited.value.code == 2
    assert line == "lensopt print: error: --out was given an empty value; give one (see `lensopt print --help`)"


def test_a_signal_after_the_grace_interrupts_again_one_within_it_is_ignored(restored_signals, monkeypatch):
    """A Ctrl-C held down is one request (the repeats within REPEAT_GRACE_S of the one before are
    ignored, through the clean-up); a Ctrl-C pressed again later is a new one and interrupts again —
    the first may have been lost where Python drops an exception, and Ctrl-C must still stop it."""
    import lensopt.cli as cli

    clock = [100.0]
    monkeypatch.setattr(cli.time, "monotonic", lambda: clock[0])
    received: list[int] = []
    with cli._terminate_as_interrupt(received):
        with pytest.raises(KeyboardInterrupt):
            signal.raise_signal(signal.SIGINT)
        for step_s in (0.03, 0.03, cli.REPEAT_GRACE_S - 0.01):  # held down: each within the grace of the last
            clock[0] += step_s
            signal.raise_signal(signal.SIGINT)
        clock[0] += cli.REPEAT_GRACE_S + 0.01
        with pytest.raises(KeyboardInterrupt):
            signal.raise_signal(signal.SIGINT)
    assert received == [signal.SIGINT, signal.SIGINT]
    assert signal.getsignal(signal.SIGINT) is signal.default_int_handler  # restored: not the lensopt program


def test_a_ctrl_c_whose_keyboard_interrupt_a_finalizer_dropped_still_ends_the_command_interrupted(
    restored_signals, monkeypatch, capsys, tmp_path
):
    """A Ctrl-C at a campaign's very end, after its cluster closed, raised its KeyboardInterrupt in a
    weakref callback, where Python prints a traceback and drops it: the command then ended as if
    never interrupted, exit 0 (the flaky Ctrl-C test of tests/bench/test_runner.py, traced). It ends
    interrupted (128 + the signal), with its one line and no traceback."""
    import os

    from lensopt.cli import main
    from lensopt.cli.arguments import Handler

    class Dropped:
        def __del__(self):
            os.kill(os.getpid(), signal.SIGINT)
            for _ in range(10_000):  # the handler runs at a loop's next turn, inside this finalizer
                pass

    def finishes_with_a_dropped_interrupt(self, args):
        Dropped()  # its finalizer runs here, and Python prints and drops the KeyboardInterrupt
        return 0

    monkeypatch.setattr(Handler, "__call__", finishes_with_a_dropped_interrupt)
    assert main(["sessions", "--db", str(tmp_path / "none.db")]) == 128 + signal.SIGINT
    err = capsys.readouterr().err
    assert err == "lensopt sessions: interrupted; everything answered so far is saved\n", err
