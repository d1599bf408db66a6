"""Files that hold patient data, written readable by their owner only.

Session databases and exports are created 0600 by the store; the pictures and records made from a
session (the dashboard's report and screenshot, the printed prescription record) are written
through :func:`private_output`: into a new file beside the destination, created 0600 whatever the
umask (:func:`tempfile.mkstemp`), then renamed into place — so a failure leaves no half-written
file, and the file is never readable by others, not even for a moment.

A file that exists and can be written in a folder that cannot (a read-only folder holding an export
made before) is written in place instead, as it was before writes were atomic: the bytes are made
whole first, then the file is truncated, written and fsynced (:func:`_write_in_place`).

The new file is hidden, ``.NAME.XXXXXXXX.part``, and removed whatever ends the write early (an error,
Ctrl-C, a SIGTERM, which lensopt turns into Ctrl-C). Only a killed process (SIGKILL, a power cut)
leaves it behind; its writer holds a lock on it (``flock``) for as long as it writes, so the next
write to the same ``NAME`` removes the parts of ``NAME`` that no program holds
(:func:`_remove_stale_parts`), and never a part another program is writing.
"""

from __future__ import annotations

import contextlib
import errno
import io
import os
import stat
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path
from typing import BinaryIO

from lensopt.errors import LensoptError

try:
    import fcntl
except ImportError:  # pragma: no cover - Windows
    fcntl = None  # type: ignore[assignment]

#: Mode of a file written by :func:`private_output` (what ``tempfile.mkstemp`` creates).
PRIVATE_FILE_MODE = 0o600

#: Why a new file cannot be made in a folder that may hold a file that can be written all the same:
#: the folder is not writable for this user, or the file system is mounted read-only (a file on
#: another mount, bound over it, may not be).
FOLDER_REFUSED = frozenset({errno.EACCES, errno.EPERM, errno.EROFS})

#: Suffix of the new file a write goes to before it takes its name (``.NAME.XXXXXXXX.part``).
PART_SUFFIX = ".part"

#: Seconds a part no program holds is left alone after it was last written: its writer may have made
#: it and not yet locked it (two calls apart).
STALE_PART_AGE_S = 1.0


def _part_prefix(path: Path) -> str:
    return f".{path.name}."


def _remove_stale_parts(path: Path, own: str) -> None:
    """Remove the parts of ``path`` (``.NAME.*.part`` beside it) that a killed write left: those no
    program holds a lock on, last written :data:`STALE_PART_AGE_S` or more ago; never ``own`` (the
    part being written). Where locks cannot be told (no ``fcntl``), none is removed; whatever fails
    leaves the part where it is (it keeps no write from working)."""
    if fcntl is None:  # pragma: no cover - Windows
        return
    prefix = _part_prefix(path)
    try:
        names = [n for n in os.listdir(path.parent) if n.startswith(prefix) and n.endswith(PART_SUFFIX)]
    except OSError:
        return
    for name in names:
        part = path.parent / name
        if os.path.abspath(part) == os.path.abspath(own):
            continue
        try:
            fd = os.open(part, os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 0))
        except OSError:  # gone meanwhile, a link, or another user's
            continue
        try:
            info = os.fstat(fd)
            if not stat.S_ISREG(info.st_mode) or time.time() - info.st_mtime < STALE_PART_AGE_S:
                continue
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except OSError:  # a write in progress holds it (or the file system has no locks)
                continue
            now = os.stat(part, follow_symlinks=False)
            if (now.st_dev, now.st_ino) == (info.st_dev, info.st_ino):  # still the file that was locked
                os.unlink(part)
        except OSError:
            continue
        finally:
            os.close(fd)


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
        fd, temporary = tempfile.mkstemp(prefix=_part_prefix(path), suffix=PART_SUFFIX, dir=path.parent)
    except OSError as exc:
        if exc.errno not in FOLDER_REFUSED or not writable_in_place(path):
            fix = "" if exc.errno == errno.EROFS else "make the folder writable or "  # a mount: not by chmod
            raise LensoptError(
                f"cannot write in {path.parent} ({exc.strerror}); {fix}choose another {option} in a folder you can write"
            ) from None
        buffer = io.BytesIO()
        yield buffer
        _write_in_place(path, buffer.getvalue(), option)
        return
    try:
        # held until it has taken its name: no later write takes it for a killed one's (_remove_stale_parts)
        stream = os.fdopen(fd, "wb")
        try:
            if fcntl is not None:
                with contextlib.suppress(OSError):  # a file system without locks: nothing to hold
                    fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            _remove_stale_parts(path, temporary)
            yield stream
            stream.flush()
            os.fsync(stream.fileno())  # on disk before it takes the name: whole even after a power loss
            os.replace(temporary, path)
        except BaseException:  # an error, Ctrl-C: removed while still held
            with contextlib.suppress(FileNotFoundError):
                os.unlink(temporary)
            raise
        finally:
            stream.close()
    except OSError as exc:
        raise LensoptError(f"cannot write {path} ({exc.strerror}); choose another {option}") from None
