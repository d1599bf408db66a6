"""Files that hold patient data, written readable by their owner only.

Session databases and exports are created 0600 by the store; the pictures and records made from a
session (the dashboard's report and screenshot, the printed prescription record) are written
through :func:`private_output`: into a new file beside the destination, created 0600 whatever the
umask (:func:`tempfile.mkstemp`), then renamed into place — so a failure leaves no half-written
file, and the file is never readable by others, not even for a moment.

A file that exists and can be written in a folder that cannot (a read-only folder holding an export
made before) is written in place instead, as it was before writes were atomic: the bytes are made
whole first, then the file is truncated, written and fsynced (:func:`_write_in_place`).
"""

from __future__ import annotations

import contextlib
import errno
import io
import os
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import BinaryIO

from lensopt.errors import LensoptError

#: Mode of a file written by :func:`private_output` (what ``tempfile.mkstemp`` creates).
PRIVATE_FILE_MODE = 0o600

#: Why a new file cannot be made in a folder that may hold a file that can be written all the same:
#: the folder is not writable for this user, or the file system is mounted read-only (a file on
#: another mount, bound over it, may not be).
FOLDER_REFUSED = frozenset({errno.EACCES, errno.EPERM, errno.EROFS})


def writable_in_place(path: Path) -> bool:
    """Whether ``path`` is a regular file this user may write (in a folder where no new file can be made)."""
    return path.is_file() and os.access(path, os.W_OK)


def _write_in_place(path: Path, data: bytes, option: str) -> None:
    """Truncate the existing file ``path``, write ``data`` and fsync it; made private (0600) when this
    user owns it. An ``OSError`` is a one-line :class:`~lensopt.errors.LensoptError` saying the file may
    now be incomplete."""
    try:
        fd = os.open(path, os.O_WRONLY | os.O_TRUNC)
    except OSError as exc:
        raise LensoptError(f"cannot write {path} ({exc.strerror}); choose another {option}") from None
    try:
        with os.fdopen(fd, "wb") as stream:
            with contextlib.suppress(OSError):  # another user's file, writable to this one: its owner chose its mode
                os.fchmod(stream.fileno(), PRIVATE_FILE_MODE)
            stream.write(data)
            stream.flush()
            os.fsync(stream.fileno())
    except OSError as exc:
        raise LensoptError(
            f"cannot write {path} ({exc.strerror}); it may be incomplete now: choose another {option}"
        ) from None


@contextlib.contextmanager
def private_output(path, option: str) -> Iterator[BinaryIO]:
    """A binary stream whose bytes become the file ``path`` (mode 0600) when the block ends without
    an error; an ``OSError`` on the way is a one-line :class:`~lensopt.errors.LensoptError` naming
    ``path`` and the command-line ``option`` to change.

    Where no file can be made beside ``path`` (a read-only folder) but ``path`` exists and can be
    written, the bytes are kept until the block ends, then written over it in place (the file is left
    as it was if the block fails); otherwise the error names the folder and what to do."""
    path = Path(path)
    try:
        fd, temporary = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".part", dir=path.parent)
    except OSError as exc:
        if exc.errno not in FOLDER_REFUSED or not writable_in_place(path):
            raise LensoptError(
                f"cannot write in {path.parent} ({exc.strerror}); make the folder writable or choose another "
                f"{option} in a folder you can write"
            ) from None
        buffer = io.BytesIO()
        yield buffer
        _write_in_place(path, buffer.getvalue(), option)
        return
    try:
        with os.fdopen(fd, "wb") as stream:
            yield stream
            stream.flush()
            os.fsync(stream.fileno())  # on disk before it takes the name: whole even after a power loss
        os.replace(temporary, path)
    except OSError as exc:
        raise LensoptError(f"cannot write {path} ({exc.strerror}); choose another {option}") from None
    finally:
        if os.path.exists(temporary):
            os.unlink(temporary)
