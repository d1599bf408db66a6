"""SIGTERM and SIGHUP end a command as Ctrl-C does (lensopt.cli._terminate_as_interrupt)."""

import signal

import pytest

from lensopt.cli import _terminate_as_interrupt


@pytest.fixture
def restored_signals():
    saved = {s: signal.getsignal(s) for s in (signal.SIGTERM, signal.SIGHUP)}
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
