"""Answers a failing database refused, kept and recovered.

Every answer is committed before the next trial is chosen; when the store refuses one (a locked or
failing database), :func:`recorder` keeps it in a JSON-lines rescue file beside the database
(private to its user, as the database is) and stops the session in one line saying where. When
that folder refuses it too (a full disk, a folder gone read-only), the answer goes to the same file
name in a folder of this user's in the system's temporary folder (:func:`rescue_paths`), and failing that it is
written out on the error line itself, so that it can still be typed back. ``lensopt run --resume``
then stores the rescued answers of both places first (:func:`recover_rescued`), so no answer is
ever asked twice or lost.
"""

from __future__ import annotations

import contextlib
import dataclasses
import hashlib
import json
import math
import os
import re
import stat
import tempfile
from collections.abc import Callable, Sequence
from pathlib import Path

from lensopt.errors import StoreError
from lensopt.store import resume_command

#: Where answers go when the database's folder refuses them too: a folder of the temporary folder.
FALLBACK_FOLDER = "lensopt-rescue"


def recorder(store, session_id: int, rescue_files: Sequence[Path], append: Callable | None = None) -> Callable:
    """``record(TrialRecord)``: append to the store (``append(store, session_id, record)``, default
    ``store.append_trial``); if that fails, keep the answer in the first of ``rescue_files`` that
    takes it (:func:`rescue_paths`) and stop with a one-line StoreError saying where it is — or, none
    taking it, holding the answer itself."""
    append = append or (lambda store, session_id, record: store.append_trial(session_id, record))

    def record(trial_record) -> None:
        try:
            append(store, session_id, trial_record)
        except StoreError as exc:
            line = json.dumps(dataclasses.asdict(trial_record))
            problem = str(exc).splitlines()[0]
            refused = []
            for path in rescue_files:
                try:
                    _append_line(path, line)
                except OSError as failed:
                    refused.append(f"{path}: {failed.strerror or failed}")
                    continue
                raise StoreError(f"{problem} (trial {trial_record.index} was saved to {path})") from None
            raise StoreError(
                f"{problem}; trial {trial_record.index} could not be saved to a rescue file either "
                f"({'; '.join(refused)}): keep this answer, free space and put it, as one line, in "
                f"{rescue_files[0]}, then resume: {line}"
            ) from None

    return record


def _append_line(path: Path, line: str) -> None:
    """Append ``line`` to ``path`` and flush it to disk; the file made private to this user, as the
    database is: it holds a patient's answers. A folder of the fallback's (in the temporary folder,
    which other users share) must be this user's own and writable by no one else, and the file is
    not followed through a link (another user could plant one where the answers would go)."""
    path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
    if path.parent.name.startswith(FALLBACK_FOLDER):
        _check_own_private_folder(path.parent)
    fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT | getattr(os, "O_NOFOLLOW", 0), 0o600)
    try:
        data = (line + "\n").encode("utf-8")
        if os.write(fd, data) != len(data):
            raise OSError(f"short write to {path}")
        os.fsync(fd)
    except OSError:
        if os.fstat(fd).st_size == 0:  # made here, and nothing in it: not left behind, empty
            with contextlib.suppress(OSError):
                path.unlink()
        raise
    finally:
        os.close(fd)


def _check_own_private_folder(folder: Path) -> None:
    """An OSError unless ``folder`` is a folder (not a link) of this user that no one else can write."""
    info = os.lstat(folder)
    if not stat.S_ISDIR(info.st_mode):
        raise OSError(f"{folder} is not a folder")
    if hasattr(os, "getuid") and info.st_uid != os.getuid():
        raise OSError(f"{folder} belongs to another user")
    if info.st_mode & (stat.S_IWGRP | stat.S_IWOTH):
        raise OSError(f"{folder} can be written by other users")


def rescue_path(db_path, session_id: int) -> Path:
    """The rescue file of session ``session_id`` beside its database: the answers the store refused
    (:func:`recorder`)."""
    return Path(f"{db_path}.session-{session_id}.unsaved.jsonl")


def rescue_paths(db_path, session_id: int) -> tuple[Path, Path]:
    """Where :func:`recorder` keeps an answer the store refused, in turn: beside the database
    (:func:`rescue_path`), then in this user's :data:`FALLBACK_FOLDER` (``lensopt-rescue-<uid>``) of
    the temporary folder (``$TMPDIR``: a resume looks in the same one), under the database's name and
    a digest of its full path (two databases of one name do not share it)."""
    resolved = Path(db_path).expanduser().resolve()
    digest = hashlib.sha256(str(resolved).encode()).hexdigest()[:12]
    user = f"-{os.getuid()}" if hasattr(os, "getuid") else ""  # a folder per user: the temporary folder is shared
    folder = Path(tempfile.gettempdir()) / f"{FALLBACK_FOLDER}{user}"
    fallback = folder / f"{resolved.name}-{digest}.session-{session_id}.unsaved.jsonl"
    return rescue_path(db_path, session_id), fallback


def sessions_with_rescue_files(db_path) -> set[int] | None:
    """The ids of the sessions of ``db_path`` with a rescue file in either place of
    :func:`rescue_paths`, from one listing of each folder (a clinic's listing of 4,000 sessions spent
    a second opening 16,000 files that were not there); None when a folder exists that cannot be
    listed (then each session's files are looked for)."""
    ids: set[int] = set()
    for path in rescue_paths(db_path, 0):
        prefix = path.name.removesuffix(".session-0.unsaved.jsonl")
        pattern = re.compile(re.escape(prefix) + r"\.session-(\d+)\.unsaved\.jsonl")
        try:
            names = [entry.name for entry in os.scandir(path.parent)]
        except FileNotFoundError:
            continue
        except OSError:
            return None
        ids.update(int(match.group(1)) for match in map(pattern.fullmatch, names) if match)
    return ids


def _presented_at_times(path: Path) -> list[float]:
    """When each answer of the rescue file ``path`` was presented (``presented_at``, unix seconds; a
    line without one, or that cannot be read, as +inf: counted as its session's). Reads only; a file
    that cannot be read holds none."""
    try:
        lines = [line for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]
    except (OSError, UnicodeDecodeError):
        return []
    times = []
    for line in lines:
        try:
            times.append(float(json.loads(line).get("presented_at", math.inf)))
        except (ValueError, TypeError, AttributeError):
            times.append(math.inf)
    return times


def unsaved_answers(db_path, session_id: int, created_at: float | None = None) -> tuple[int, list[Path]]:
    """The answers of session ``session_id`` waiting in its rescue files (:func:`rescue_paths`) for a
    resume to store them, and the files that hold them: what the database does not show yet. With
    the session's ``created_at``, answers presented before it are not counted (:func:`foreign_answers`).
    Reads only; a file that cannot be read counts as holding none."""
    return _answers_counted(db_path, session_id, lambda t: created_at is None or t >= created_at)


def foreign_answers(db_path, session_id: int, created_at: float) -> tuple[int, list[Path]]:
    """Answers in session ``session_id``'s rescue files presented before the session was created:
    another session's, of an earlier database at this path (deleted or replaced, its rescue file left
    behind) — never stored into this one (:func:`recover_rescued`)."""
    return _answers_counted(db_path, session_id, lambda t: t < created_at)


def _answers_counted(db_path, session_id: int, counted) -> tuple[int, list[Path]]:
    """How many answers of session ``session_id``'s rescue files were presented at a time ``counted``
    accepts, and the files holding them."""
    count, holding = 0, []
    for path in rescue_paths(db_path, session_id):
        n = sum(map(counted, _presented_at_times(path)))
        if n:
            count += n
            holding.append(path)
    return count, holding


def unsaved_warning(db_path, session_id: int, created_at: float | None = None) -> str | None:
    """One line saying that session ``session_id`` has answers in a rescue file that the database does
    not hold yet, with the command that stores them — or (``created_at`` given) that a file of its name
    holds another session's; None when there are none."""
    count, holding = unsaved_answers(db_path, session_id, created_at)
    if count:
        answers = f"{count} answer{'' if count == 1 else 's'}"
        return (
            f"warning: session {session_id} has {answers} in {', '.join(map(str, holding))} that the database does not "
            f"hold yet (it refused them); {resume_command(session_id, db_path)} stores them"
        )
    if created_at is not None:
        count, holding = foreign_answers(db_path, session_id, created_at)
        if count:
            return "warning: " + _foreign_text(count, holding, session_id) + "; move it elsewhere (keep it)"
    return None


def _foreign_text(count: int, holding: Sequence[Path], session_id: int) -> str:
    answers = f"{count} answer{'' if count == 1 else 's'}"
    return (
        f"{', '.join(map(str, holding))} hold{'s' if len(holding) == 1 else ''} {answers} from before session "
        f"{session_id} began: another session's, of an earlier database at this path, not this one's"
    )


def set_aside_foreign(db_path, session_id: int, log) -> None:
    """A new session's rescue files must be its own: a file already at its name (left by a session of
    an earlier database at this path, whose answers it kept) is renamed ``….orphaned.jsonl`` (kept:
    data is never deleted), so that neither session's answers are mixed with the other's."""
    for path in rescue_paths(db_path, session_id):
        if path.exists():
            kept = _kept_name(path, "orphaned")
            path.rename(kept)
            log(
                f"{path} was left by an earlier database's session {session_id} (this one is new): "
                f"kept as {kept}, not this session's answers"
            )


def _kept_name(path: Path, how: str = "recovered") -> Path:
    """The name a recovered (or set aside) rescue file is kept under: ``….recovered.jsonl``, numbered
    when an earlier recovery's file has it (``….recovered-2.jsonl``): data is never deleted."""
    base = path.name.replace(".unsaved.jsonl", "")
    kept, n = path.with_name(f"{base}.{how}.jsonl"), 1
    while kept.exists():
        n += 1
        kept = path.with_name(f"{base}.{how}-{n}.jsonl")
    return kept


def _read_rescued(path: Path, record_type, log) -> list:
    """The answers of the rescue file ``path``. A last line cut short (no line end: the program was
    killed while writing it) is left out — that answer is asked again, and the file keeps it; any
    other line that cannot be read is refused in one line."""
    text = path.read_text(encoding="utf-8")
    lines = text.split("\n")
    rescued = []
    for n, line in enumerate(lines, start=1):
        if not line.strip():
            continue
        try:
            rescued.append(record_type(**json.loads(line)))
        except (TypeError, ValueError) as exc:
            if n == len(lines):  # the last, without its line end: a write cut short
                log(
                    f"the last line of {path} was cut short (its program was killed while writing it): that answer is asked again"
                )
                continue
            raise StoreError(
                f"line {n} of the rescue file {path} cannot be read ({exc}); correct or delete that line "
                "(its other lines are answers to keep), then resume"
            ) from None
    return rescued


def recover_rescued(store, mode, session_id: int, paths: Sequence[Path], log, created_at: float | None = None) -> int:
    """Store the answers kept in the rescue files ``paths`` (:func:`rescue_paths`: each answer one
    refused by a locked or failing database while the session ran) and return how many were added.
    Idempotent: an answer already stored (same trial number, same record) is skipped; one that
    contradicts the stored trial of its number, or leaves a gap, is refused in one line and nothing
    is changed. An answer presented before the session's ``created_at`` is another session's (of an
    earlier database at this path) and is not stored; the log says so. Each file is then renamed
    ``….recovered.jsonl`` (kept: data is never deleted)."""
    found = [path for path in paths if path.exists()]
    if not found:
        return 0
    stored = {record.index: record for record in mode.stored_trials(store, session_id)}
    rescued = [(record, path) for path in found for record in _read_rescued(path, mode.record_type, log)]
    foreign = [(r, p) for r, p in rescued if created_at is not None and r.presented_at < created_at]
    added = 0
    for record, path in sorted(rescued, key=lambda pair: pair[0].index):
        if (record, path) in foreign:
            continue
        if record.index in stored:
            if stored[record.index] != record:
                raise StoreError(
                    f"the rescue file {path} holds another answer for trial {record.index} than the database; "
                    "check which is right and move the file aside to resume"
                )
            continue
        if record.index != len(stored) + 1:
            raise StoreError(
                f"the rescue file {path} holds trial {record.index} but the database ends at trial {len(stored)}; "
                "move the file aside to resume"
            )
        mode.append(store, session_id, record)
        stored[record.index] = record
        added += 1
    kept = []
    for path in found:
        kept.append(_kept_name(path))
        path.rename(kept[-1])
    sources = " and ".join(str(path) for path in found)
    log(
        f"recovered {added} answer(s) of session {session_id} from {sources} (kept as {', '.join(k.name for k in kept)})"
    )
    if foreign:
        holding = list(dict.fromkeys(p for _, p in foreign))
        log(f"not stored: {_foreign_text(len(foreign), holding, session_id)} (kept in the files above)")
    return added
