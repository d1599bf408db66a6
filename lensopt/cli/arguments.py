"""Command-line value types shared by the ``lensopt`` commands, and :class:`Handler`.

Each turns text into a value or raises ``argparse.ArgumentTypeError`` with a message that names
the problem; argparse prints it as one line and exits with code 2. ``check_output_file`` and
``check_output_folder`` check, in a handler and before any work, that an output can be written
(a one-line ``ValueError`` otherwise).
"""

from __future__ import annotations

import argparse
import contextlib
import importlib
import math
import os
import re
from dataclasses import dataclass
from pathlib import Path

from lensopt.stopping import MAX_CHECK_LETTERS

#: The largest whole number an option takes (2**32 - 1: numpy's largest legacy seed); a count
#: anywhere near it is a typo (issue 19: ``--trials 1000000000000``).
MAX_WHOLE_NUMBER = 2**32 - 1

#: The largest magnitude of a number an option takes: no diopter, logMAR, slope, rate or time
#: lensopt uses comes near it, and a larger one would overflow or stall the computation.
MAX_MAGNITUDE = 1e6

#: The help of every ``--db`` option: where the sessions are when it is not given.
DB_HELP = "session database (default: $LENSOPT_DB, else $XDG_DATA_HOME/lensopt/sessions.db, ~/.local/share/lensopt/sessions.db when XDG_DATA_HOME is unset)"


@dataclass(frozen=True)
class Handler:
    """A command's handler named by ``"module:function"`` and imported when the command runs: the
    parsers (``lensopt.cli.<command>``) name their handlers (``lensopt.cli.handlers.<command>``)
    without importing them, so ``lensopt --help`` imports no optimizer, numpy, Qt or PsychoPy,
    while a handler module imports what it uses at its top."""

    target: str

    def __call__(self, args) -> int:
        module, _, name = self.target.partition(":")
        return getattr(importlib.import_module(module), name)(args)


def _number(text, kind):
    written = (
        str(text).strip().replace("\u2212", "-")
    )  # the minus sign of typeset text (−1.5), as lensopt's docs print it
    try:
        value = kind(written)
    except ValueError:
        what = "a whole number" if kind is int else "a number"
        point = written.replace(",", ".")
        if kind is float and "," in written and _is_float(point):  # a decimal comma (de_DE, fr_FR)
            raise argparse.ArgumentTypeError(f"expected {what}, got {text!r}: write a decimal point, {point}") from None
        raise argparse.ArgumentTypeError(f"expected {what}, got {text!r}") from None
    limit = MAX_WHOLE_NUMBER if kind is int else MAX_MAGNITUDE
    if math.isfinite(value) and abs(value) > limit:  # nan and inf pass here and are refused by finite_float
        raise argparse.ArgumentTypeError(f"must be at most {limit} in size, got {text}")
    return value


def point_at_null_device(stream) -> None:
    """``stream`` (``sys.stdout``) pointed at the null device, once it can no longer be written (a
    closed pipe, a full disk): Python's own flush of it at exit must not fail again."""
    with contextlib.suppress(OSError, ValueError):
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, stream.fileno())
        os.close(devnull)


def _is_float(text: str) -> bool:
    try:
        float(text)
    except ValueError:
        return False
    return True


def positive_int(text) -> int:
    value = _number(text, int)
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be at least 1, got {value}")
    return value


def check_letters(text) -> int:
    """A stopping rule's ``check_letters``: 0 (no check) to :data:`lensopt.stopping.MAX_CHECK_LETTERS`."""
    value = _number(text, int)
    if not 0 <= value <= MAX_CHECK_LETTERS:
        raise argparse.ArgumentTypeError(
            f"must be a whole number of letters from 0 (no check) to {MAX_CHECK_LETTERS} (a chart line has 5), got {value}"
        )
    return value


#: The most trials (iterations, runs) one option of a benchmark takes (:func:`bench_count`).
MAX_BENCH_COUNT = 10_000


def bench_count(text) -> int:
    """A benchmark's trials, iterations or runs: a whole number from 1 to :data:`MAX_BENCH_COUNT` (a
    typo of 4294967295 ran for ever instead of being refused)."""
    value = positive_int(text)
    if value > MAX_BENCH_COUNT:
        raise argparse.ArgumentTypeError(f"must be at most {MAX_BENCH_COUNT}, got {value}")
    return value


def non_negative_int(text) -> int:
    value = _number(text, int)
    if value < 0:
        raise argparse.ArgumentTypeError(f"must be 0 or more, got {value}")
    return value


#: The highest screen number a command takes (a protocol's ``[screens]`` takes the same).
MAX_SCREEN = 15


def screen_number(text) -> int:
    """A screen: 0 (the first) to :data:`MAX_SCREEN`."""
    value = _number(text, int)
    if not 0 <= value <= MAX_SCREEN:
        raise argparse.ArgumentTypeError(f"must be a screen number from 0 (the first) to {MAX_SCREEN}, got {value}")
    return value


#: The largest side (px) of a window's ``--geometry``: 16384, as ``[display] window_size_px``.
MAX_WINDOW_PX = 16384
#: The largest offset (px) either way of a window's ``--geometry`` on the desktop (a screen left of or
#: above the primary one has negative coordinates on Windows and macOS).
MAX_OFFSET_PX = 32768


def window_geometry(text) -> tuple[int, int, int, int]:
    """A window's size and place as X11 writes it, ``WIDTHxHEIGHT+LEFT+TOP`` (px; an offset may be
    negative, ``+-1920``): ``(width, height, left, top)``."""
    match = re.fullmatch(r"\s*(\d+)x(\d+)\+(-?\d+)\+(-?\d+)\s*", str(text))
    if match is None:
        raise argparse.ArgumentTypeError(f"must be WIDTHxHEIGHT+LEFT+TOP in pixels (e.g. 1000x800+920+0), got {text!r}")
    width, height, left, top = (int(group) for group in match.groups())
    if not (1 <= width <= MAX_WINDOW_PX and 1 <= height <= MAX_WINDOW_PX and max(abs(left), abs(top)) <= MAX_OFFSET_PX):
        raise argparse.ArgumentTypeError(
            f"must have a width and height of 1 to {MAX_WINDOW_PX} px and offsets within ±{MAX_OFFSET_PX} px, got {text!r}"
        )
    return width, height, left, top


def finite_float(text) -> float:
    value = _number(text, float)
    if not math.isfinite(value):
        raise argparse.ArgumentTypeError(f"must be a finite number, got {text}")
    return value


def whole_axis(text) -> float:
    """An axis in whole degrees (a phoropter's), as a float; 1-180 is checked where it is used (its
    one line says 180, not 0). A fractional one was shown rounded and stored as given."""
    value = finite_float(text)
    if value != int(value):
        raise argparse.ArgumentTypeError(
            f"{text} is not a whole number of degrees: give one from 1 to 180, e.g. {max(1, min(180, round(value)))}"
        )
    return value


def positive_float(text) -> float:
    value = finite_float(text)
    if value <= 0:
        raise argparse.ArgumentTypeError(f"must be a positive number, got {text}")
    return value


def non_negative_float(text) -> float:
    value = finite_float(text)
    if value < 0:
        raise argparse.ArgumentTypeError(f"must be 0 or more, got {text}")
    return value


#: The most processes a command starts on this machine (``--workers``, ``--processes``): more would
#: exhaust it long before they helped; a larger cluster is started apart and named by --scheduler.
MAX_PROCESSES = 256


def processes(text) -> int:
    """A number of processes on this machine: a positive integer up to :data:`MAX_PROCESSES`."""
    value = positive_int(text)
    if value > MAX_PROCESSES:
        raise argparse.ArgumentTypeError(
            f"must be at most {MAX_PROCESSES} processes on one machine, got {value} (a bigger cluster: --scheduler)"
        )
    return value


def confidence(text) -> float:
    """A confidence strictly between 0 and 1 (a stopping rule's)."""
    value = finite_float(text)
    if not 0.0 < value < 1.0:
        raise argparse.ArgumentTypeError(f"must be a confidence strictly between 0 and 1 (e.g. 0.95), got {text}")
    return value


def scheduler_address(text) -> str:
    """A Dask scheduler address, not empty (an empty one would silently mean a local cluster)."""
    if not text.strip():
        raise argparse.ArgumentTypeError("expected a scheduler address such as tcp://HOST:8786, got an empty one")
    return text.strip()


def _writable_folder(flag: str, path: str, folder: Path) -> None:
    """Refuse ``folder`` unless a file can be created in it (checked by creating and removing
    one: ``os.access`` says yes to root even in ``/proc``)."""
    import tempfile  # deferred: only the handlers that write need it

    try:
        fd, probe = tempfile.mkstemp(dir=folder, prefix=".lensopt-write-check-")
    except OSError as exc:
        raise ValueError(
            f"{flag} {path}: cannot write in {folder} ({exc.strerror or exc}); choose a writable folder"
        ) from None
    os.close(fd)
    os.unlink(probe)


def check_output_file(flag: str, path) -> None:
    """Refuse, in one line and before any work, an output file that cannot be written: a folder,
    a file in a folder that does not exist, or one that cannot be written. Creates nothing."""
    target = Path(path)
    folder = target.absolute().parent
    if str(path).endswith(("/", os.sep)) and not target.is_dir():  # Path drops the slash: it would write a file
        raise ValueError(f"{flag} {path} ends in a slash, which names a folder; give a file name")
    if target.is_dir():
        raise ValueError(f"{flag} {path} is a folder; give a file name")
    if folder.exists() and not folder.is_dir():
        raise ValueError(f"{flag} {path}: {folder} is a file, not a folder; choose another path")
    if not folder.is_dir():
        raise ValueError(f"{flag} {path}: its folder does not exist; create it or choose another path")
    if target.exists() and not os.access(target, os.W_OK):
        raise ValueError(f"{flag} {path}: not writable; choose another path")
    _writable_folder(flag, path, folder)


def check_output_folder(flag: str, path) -> None:
    """Refuse, in one line and before any work, an output folder that cannot be created or
    written: an existing file, or one under a file or an unwritable folder. Creates nothing."""
    target = Path(path).absolute()
    if target.exists() and not target.is_dir():
        raise ValueError(f"{flag} {path} is a file; give a folder")
    existing = target
    while not existing.exists():
        existing = existing.parent
    if not existing.is_dir():
        raise ValueError(f"{flag} {path}: {existing} is a file, not a folder; choose another path")
    _writable_folder(flag, path, existing)


def check_session_id(session_id: int) -> None:
    """Refuse, in one line, a ``SESSION_ID`` that no session can have (0, negative)."""
    if session_id < 1:
        raise ValueError(f"SESSION_ID must be a positive integer, got {session_id}; list them with `lensopt sessions`")


def check_database_not_a_folder(db, default) -> None:
    """Refuse, in one line, a session database (``--db DB``, else ``default``: ``$LENSOPT_DB`` or the
    default path) that is a folder: the store would say there is no database there."""
    path = Path(db if db else default).expanduser()
    given = f"--db {db}" if db else f"the default session database {path} ($LENSOPT_DB, else the data folder)"
    written = str(db) if db else os.environ.get("LENSOPT_DB", "")  # as typed: Path drops a final "/"
    if path.is_dir() or written.endswith(("/", os.sep)):  # a name ending in "/" made a file of the folder's name
        raise ValueError(
            f"{given} is a folder, not a session database file; give the file (e.g. --db {path / 'sessions.db'})"
        )
    try:
        path.resolve()
    except RuntimeError:  # a loop of symbolic links (Python 3.11 raises this, not an OSError)
        raise ValueError(f"{given} is a loop of symbolic links; give the database file itself") from None


def note_option_defaults(parser: argparse.ArgumentParser) -> None:
    """Record in ``parser``'s namespace (``option_defaults``) each of its options' flag and default, for
    :func:`options_given`; called once every option is added."""
    defaults = {}
    for action in parser._actions:  # argparse has no public list of a parser's options
        if not action.option_strings or action.default is argparse.SUPPRESS:
            continue
        default = action.default
        if isinstance(default, str) and callable(action.type):  # as argparse converts a text default
            default = action.type(default)
        defaults[action.dest] = (max(action.option_strings, key=len), default)
    parser.set_defaults(option_defaults=defaults)


def options_given(args, *besides: str) -> list[str]:
    """The flags of the options that ``args`` holds at other than their defaults
    (:func:`note_option_defaults`), the options named ``besides`` (their dests) left out."""
    defaults = getattr(args, "option_defaults", None) or {}
    return [
        flag
        for dest, (flag, default) in defaults.items()
        if dest not in besides and getattr(args, dest, default) != default
    ]


def refuse_options_besides_summary(args) -> None:
    """Refuse, in one line, options given with ``--summary DIR``, which only reads (and writes the
    summary of) the campaign in DIR: every other option would be ignored."""
    given = options_given(args, "summary")
    if given:
        raise ValueError(
            f"--summary {args.summary} only summarizes the campaign already in that folder, and "
            f"{', '.join(given)} would be ignored; leave {'it' if len(given) == 1 else 'them'} out, "
            "or leave out --summary to run the campaign"
        )
