"""Private output files (lensopt.private_files): written whole beside the destination and renamed into
place; where the folder refuses a new file but the destination exists and can be written (a read-only
folder holding an earlier export), written over in place instead.

The folder's refusal is simulated here (``tempfile.mkstemp`` raising as in a ``0555`` folder or on a
read-only mount), so these run as root too; tests/cli/test_readonly_writes_cli.py runs the commands in
a real read-only folder as a user who cannot write it."""

from __future__ import annotations

import errno
import os
import stat

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
    assert "make the folder writable or choose another --output in a folder you can write" in message
    assert not target.exists()


def test_a_writable_folder_still_writes_a_new_file_and_renames_it(tmp_path):
    target = tmp_path / "export.csv"
    target.write_bytes(b"old")
    inode = target.stat().st_ino
    with private_output(target, "--output") as stream:
        stream.write(b"new")
    assert target.read_bytes() == b"new" and target.stat().st_ino != inode  # atomic: a new file took the name
    assert sorted(p.name for p in tmp_path.iterdir()) == ["export.csv"]
