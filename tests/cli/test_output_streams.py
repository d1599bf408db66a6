"""A command whose output cannot be written as it is (a closed pipe, a full disk, a terminal without
UTF-8): found by a user audit in odd environments. `run` goes on (its answers are in the database,
not in its log); the others say so in one line, exit 2; characters a terminal cannot show are
written escaped, not a failure after the work."""

import os
import struct
import subprocess
import sys
from pathlib import Path

import pytest

from lensopt.store import SessionStore

REPO = Path(__file__).resolve().parents[2]
DEMO = REPO / "protocols" / "demo-simulated.toml"
FAST = {"fixation_s = 0.15": "fixation_s = 0.0", "feedback_s = 0.25": "feedback_s = 0.0"}
FAST |= {"simulated_response_s = 0.3": "simulated_response_s = 0.0", "iti_s = 0.05": "iti_s = 0.0"}


def lensopt(*args, stdout=subprocess.PIPE, env=None, encoding="utf-8") -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "lensopt", *map(str, args)],
        stdout=stdout,
        stderr=subprocess.PIPE,
        encoding=encoding,
        env={**os.environ, **(env or {})},
        timeout=180,
    )


@pytest.fixture
def db(tmp_path) -> Path:
    """A database with one session of a participant named with an accent."""
    path = tmp_path / "s.db"
    with SessionStore(path) as store:
        store.create_session("P-é", {}, {"screen_width_cm": 50.0, "screen_width_px": 1920, "distance_cm": 300.0}, {}, 1)
    return path


@pytest.mark.skipif(not os.path.exists("/dev/full"), reason="needs /dev/full")
@pytest.mark.parametrize("argv", [["sessions"], ["sessions", "1"], ["sessions", "--json"], ["export", "1"]])
def test_output_to_a_full_disk_is_one_line_and_exit_2(db, argv):
    with open("/dev/full", "w") as full:
        done = lensopt(*argv, "--db", db, stdout=full)
    assert done.returncode == 2 and "Traceback" not in done.stderr, done.stderr
    command = " ".join(argv[:1])
    assert done.stderr.strip() == f"lensopt {command}: error: cannot write its output (No space left on device)"


@pytest.mark.parametrize("encoding", ["ascii", "latin-1"])
def test_a_terminal_without_utf8_gets_the_characters_it_cannot_show_escaped(db, encoding):
    shown = lensopt("sessions", "1", "--db", db, env={"PYTHONIOENCODING": encoding}, encoding=encoding)
    assert shown.returncode == 0, shown.stderr
    if encoding == "ascii":  # "Session 1 · letters · …" and the name, escaped
        assert "1 \\xb7 letters" in shown.stdout and "P-\\xe9" in shown.stdout
    else:
        assert "1 · letters" in shown.stdout and "P-é" in shown.stdout
    helped = lensopt("simulate", "--help", env={"PYTHONIOENCODING": encoding}, encoding=encoding)
    assert helped.returncode == 0 and "Traceback" not in helped.stderr, helped.stderr


def _fast_demo(tmp_path) -> Path:
    text = DEMO.read_text()
    for old, new in FAST.items():
        assert old in text
        text = text.replace(old, new)
    path = tmp_path / "fast.toml"
    path.write_text(text)
    return path


@pytest.mark.skipif(not os.environ.get("DISPLAY"), reason="needs an X display: run under xvfb-run")
@pytest.mark.parametrize("reader", ["closed pipe", "full disk"])
def test_a_session_whose_log_cannot_be_written_goes_on_to_its_end(tmp_path, reader):
    """`lensopt run … | head -n 2` stopped the session after its trial, exit 0, no resume command;
    `> /dev/full` with a traceback. Its answers are in the database: the session goes on."""
    if reader == "full disk" and not os.path.exists("/dev/full"):
        pytest.skip("needs /dev/full")
    db = tmp_path / "s.db"
    argv = [sys.executable, "-m", "lensopt", "run", "--protocol", _fast_demo(tmp_path), "--trials", "6"]
    argv += ["--participant", "p", "--db", db]
    if reader == "closed pipe":
        run = subprocess.Popen(list(map(str, argv)), stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        run.stdout.readline()  # its first line, then the reader goes away
        run.stdout.close()
        err = run.stderr.read()
        code = run.wait(timeout=180)
    else:
        with open("/dev/full", "w") as full:
            done = subprocess.run(list(map(str, argv)), stdout=full, stderr=subprocess.PIPE, text=True, timeout=180)
        err, code = done.stderr, done.returncode
    assert code == 0 and "Traceback" not in err, err
    assert "its log can no longer be written to standard output" in err
    with SessionStore(db, readonly=True) as store:
        (info,) = store.sessions()
        assert info.status == "finished" and len(store.trials(info.session_id)) == 6


@pytest.mark.parametrize("command", [["print", "1", "--out"], ["export", "1", "-o"]])
def test_a_file_name_too_long_is_one_line_naming_it(db, tmp_path, command):
    """Found by a user audit: a name of more than 255 bytes gave a traceback (OSError: [Errno 36])."""
    long_name = tmp_path / ("x" * 260 + ".pdf")
    done = lensopt(*command, long_name, "--db", db)
    assert done.returncode == 2 and "Traceback" not in done.stderr, done.stderr
    assert done.stderr.strip() == f"lensopt {command[0]}: error: File name too long: {long_name}; choose a shorter name"


def _simulate(stderr) -> subprocess.CompletedProcess:
    argv = [
        "simulate",
        "--rule",
        "ucb-ald",
        "--trials",
        "6",
        "--seed",
        "3",
        "--true-sphere",
        "-1",
        "--true-cylinder",
        "0",
    ]
    return subprocess.run(
        [sys.executable, "-m", "lensopt", *argv], stdout=subprocess.PIPE, stderr=stderr, text=True, timeout=180
    )


def test_a_simulated_sessions_progress_bar_goes_to_a_terminal_not_into_a_redirected_stderr(tmp_path):
    log = tmp_path / "stderr.txt"
    with log.open("w") as redirected:
        done = _simulate(redirected)
    assert done.returncode == 0 and "best lens" in done.stdout.lower(), done.stdout
    assert log.read_text() == ""  # no line of carriage returns in a log of stderr
    pty, fcntl, termios = (pytest.importorskip(name) for name in ("pty", "fcntl", "termios"))
    main, terminal = pty.openpty()
    fcntl.ioctl(terminal, termios.TIOCSWINSZ, struct.pack("HHHH", 24, 100, 0, 0))  # 100 columns, not 0
    try:
        done = _simulate(terminal)
        os.close(terminal)
        shown = b""
        while chunk := _read_or_nothing(main):
            shown += chunk
    finally:
        os.close(main)
    assert done.returncode == 0 and b"ucb-ald trials: 100%" in shown and b"6/6" in shown


def _read_or_nothing(fd: int) -> bytes:
    try:
        return os.read(fd, 65536)
    except OSError:  # the terminal's other end closed: all was read
        return b""
