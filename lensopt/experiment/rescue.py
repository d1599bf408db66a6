"""Answers a failing database refused, kept and recovered.

Every answer is committed before the next trial is chosen; when the store refuses one (a locked or
failing database), :func:`recorder` keeps it in a JSON-lines rescue file beside the database and
stops the session in one line saying where; ``lensopt run --resume`` then stores the rescued
answers first (:func:`recover_rescued`), so no answer is ever asked twice or lost.
"""

from __future__ import annotations

import dataclasses
import json
import os
from collections.abc import Callable
from pathlib import Path

from lensopt.errors import StoreError


def recorder(store, session_id: int, rescue_path: Path, append: Callable | None = None) -> Callable:
    """``record(TrialRecord)``: append to the store (``append(store, session_id, record)``, default
    ``store.append_trial``); if that fails, keep the answer in a JSON-lines rescue file next to the
    database and stop with a one-line StoreError saying where it is."""
    append = append or (lambda store, session_id, record: store.append_trial(session_id, record))

    def record(trial_record) -> None:
        try:
            append(store, session_id, trial_record)
        except StoreError as exc:
            with open(rescue_path, "a", encoding="utf-8") as fh:
                fh.write(json.dumps(dataclasses.asdict(trial_record)) + "\n")
                fh.flush()
                os.fsync(fh.fileno())
            raise StoreError(
                f"{str(exc).splitlines()[0]} (trial {trial_record.index} was saved to {rescue_path})"
            ) from None

    return record


def rescue_path(db_path, session_id: int) -> Path:
    """The rescue file of session ``session_id``: the answers the store refused (:func:`recorder`)."""
    return Path(f"{db_path}.session-{session_id}.unsaved.jsonl")


def recover_rescued(store, mode, session_id: int, path: Path, log) -> int:
    """Store the answers kept in the rescue file ``path`` (each one refused by a locked or failing
    database while the session ran) and return how many were added. Idempotent: an answer already
    stored (same trial number, same record) is skipped; one that contradicts the stored trial of its
    number, or leaves a gap, is refused in one line and nothing is changed. The file is then renamed
    ``….recovered.jsonl`` (kept: data is never deleted)."""
    if not path.exists():
        return 0
    stored = {record.index: record for record in mode.stored_trials(store, session_id)}
    rescued = []
    for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1):
        if not line.strip():
            continue
        try:
            rescued.append(mode.record_type(**json.loads(line)))
        except (TypeError, ValueError) as exc:
            raise StoreError(
                f"line {n} of the rescue file {path} cannot be read ({exc}); move it aside to resume"
            ) from None
    added = 0
    for record in sorted(rescued, key=lambda r: r.index):
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
    path.rename(path.with_name(path.name.replace(".unsaved.jsonl", ".recovered.jsonl")))
    log(f"recovered {added} answer(s) of session {session_id} from {path} (kept as ….recovered.jsonl)")
    return added
