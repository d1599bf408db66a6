"""Private output files (lensopt.private_files): written whole beside the destination and renamed into
place; where the folder refuses a new file but the destination exists and can be written (a read-only
folder holding an earlier export), written over in place instead.

The folder's refusal is simulated here (``tempfile.mkstemp`` raising as in a ``0555`` folder or on a
read-only mount), so these run as root too; tests/cli/test_readonly_writes_cli.py runs the commands in
a real read-only folder as a user who cannot write it.

The new file a write goes to (``.NAME.XXXXXXXX.part``) is removed when the write stops early; one a
killed write left is removed by the next write to the same file, unless a program is writing it."""

from __future__ import annotations

import errno
import os
import stat
import subprocess
import sys
import time
from pathlib import Path

import pytest

import lensopt.private_files as private_files
from lensopt.errors import LensoptError
from lensopt.private_files import private_output


@pytest.fixture(params=[errno.EACCES, errno.EROFS], ids=["read-only folder", "read-only mount"])
def folder_refuses_new_files(request, monkeypatch):
    def refused(*args, **kwargs):
        raise OSError(request.param, os.strerror(request.param))

    monkeypatch.setattr(private_files.tempfile, "mkstemp", refused)


def test_a_writable_file_in_a_folder_that_refuses_new_files_is_written_over_in_place(
    tmp_path, folder_refuses_new_files
):
    target = tmp_path / "export.csv"
    target.write_bytes(b"an earlier, longer export\n" * 10)
    target.chmod(0o644)
    inode = target.stat().st_ino
    with private_output(target, "--output") as stream:
        stream.write(b"new\n")
    assert target.read_bytes() == b"new\n"
    assert target.stat().st_ino == inode  # the same file, written in place
    assert stat.S_IMODE(target.stat().st_mode) == 0o600  # private: it holds patient data now
    assert sorted(p.name for p in tmp_path.iterdir()) == ["export.csv"]


def test_a_failure_before_the_write_in_place_leaves_the_file_as_it_was(tmp_path, folder_refuses_new_files):
    target = tmp_path / "record.pdf"
    target.write_bytes(b"the earlier record")
    with pytest.raises(RuntimeError, match="drawing failed"), private_output(target, "--out") as stream:
        stream.write(b"half a record")
        raise RuntimeError("drawing failed")
    assert target.read_bytes() == b"the earlier record"


def test_no_file_to_write_over_in_a_folder_that_refuses_new_files_names_the_folder_and_the_fix(
    tmp_path, folder_refuses_new_files
):
    target = tmp_path / "new.csv"
    with pytest.raises(LensoptError) as caught, private_output(target, "--output") as stream:
        stream.write(b"never written")
    message = str(caught.value)
    assert message.startswith(f"cannot write in {tmp_path} (") and "\n" not in message
    fix = "choose another --output in a folder you can write"
    assert message.endswith(fix if "Read-only file system" in message else f"make the folder writable or {fix}")
    assert not target.exists()


def test_a_writable_folder_still_writes_a_new_file_and_renames_it(tmp_path):
    target = tmp_path / "export.csv"
    target.write_bytes(b"old")
    inode = target.stat().st_ino
    with private_output(target, "--output") as stream:
        stream.write(b"new")
    assert target.read_bytes() == b"new" and target.stat().st_ino != inode  # atomic: a new file took the name
    assert sorted(p.name for p in tmp_path.iterdir()) == ["export.csv"]


#: Writes argv[1] through private_output: some bytes, then "ready", then waits for a line on stdin
#: (killed meanwhile, or let finish).
WRITER = """
import sys
from lensopt.private_files import private_output

with private_output(sys.argv[1], "--out") as stream:
    stream.write(b"half a record")
    stream.flush()
    print("ready", flush=True)
    sys.stdin.readline()
    stream.write(b", the rest")
"""


def _writer(target):
    writer = subprocess.Popen(
        [sys.executable, "-c", WRITER, str(target)],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
        env={**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)},
    )
    assert writer.stdout is not None and writer.stdout.readline() == "ready\n"
    return writer


def _parts(folder: Path) -> list[Path]:
    return sorted(p for p in folder.iterdir() if p.name.endswith(".part"))


def _age(path: Path, seconds: float) -> None:
    """Make ``path`` look last written ``seconds`` ago."""
    then = time.time() - seconds
    os.utime(path, (then, then))


def test_a_killed_writes_part_is_removed_by_the_next_write_to_the_same_file(tmp_path):
    target = tmp_path / "rx.pdf"
    target.write_bytes(b"the earlier record")
    writer = _writer(target)
    writer.kill()  # SIGKILL: nothing of it runs again
    writer.wait(timeout=30)
    (stale,) = _parts(tmp_path)
    assert stale.name.startswith(".rx.pdf.") and stat.S_IMODE(stale.stat().st_mode) == 0o600
    assert target.read_bytes() == b"the earlier record"
    _age(stale, 60)
    other = tmp_path / ".other.pdf.abcd1234.part"  # another file's part is not this write's to remove
    other.write_bytes(b"x")
    _age(other, 60)

    with private_output(target, "--out") as stream:
        stream.write(b"the new record")
    assert target.read_bytes() == b"the new record"
    assert _parts(tmp_path) == [other]


def test_a_part_another_program_is_writing_is_left_to_it(tmp_path):
    target = tmp_path / "rx.pdf"
    writer = _writer(target)
    try:
        (live,) = _parts(tmp_path)
        _age(live, 60)  # a slow write: old, but held
        with private_output(target, "--out") as stream:
            stream.write(b"this write's record")
        assert live.exists() and target.read_bytes() == b"this write's record"
        writer.communicate("\n", timeout=30)
    finally:
        if writer.poll() is None:
            writer.kill()
    assert writer.returncode == 0
    assert target.read_bytes() == b"half a record, the rest"  # the other write finished: the last one wins
    assert _parts(tmp_path) == []


@pytest.mark.parametrize("stop", [RuntimeError("drawing failed"), KeyboardInterrupt()], ids=["error", "ctrl-c"])
def test_a_write_that_stops_early_leaves_no_part_and_the_earlier_file(tmp_path, stop):
    target = tmp_path / "rx.pdf"
    target.write_bytes(b"the earlier record")
    with pytest.raises(type(stop)) as raised, private_output(target, "--out") as stream:
        stream.write(b"half a record")
        raise stop
    assert raised.value is stop  # the write's own error, passed on as it was
    assert target.read_bytes() == b"the earlier record"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["rx.pdf"]
