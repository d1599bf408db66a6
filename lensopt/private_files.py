"""Files that hold patient data, written readable by their owner only.

Session databases and exports are created 0600 by the store; the pictures and records made from a
session (the dashboard's report and screenshot, the printed prescription record) are written
through :func:`private_output`: into a new file beside the destination, created 0600 whatever the
umask (:func:`tempfile.mkstemp`), then renamed into place — so a failure leaves no half-written
file, and the file is never readable by others, not even for a moment.
"""

from __future__ import annotations

import os
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import BinaryIO

from lensopt.errors import LensoptError

#: Mode of a file written by :func:`private_output` (what ``tempfile.mkstemp`` creates).
PRIVATE_FILE_MODE = 0o600


@contextmanager
def private_output(path, option: str) -> Iterator[BinaryIO]:
    """A binary stream whose bytes become the file ``path`` (mode 0600) when the block ends without
    an error; an ``OSError`` on the way is a one-line :class:`~lensopt.errors.LensoptError` naming
    ``path`` and the command-line ``option`` to change."""
    path = Path(path)
    try:
        fd, temporary = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".part", dir=path.parent)
    except OSError as exc:
        raise LensoptError(f"cannot write in {path.parent} ({exc.strerror}); choose another {option}") from None
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
