"""Export stored sessions as CSV (one row per trial), PsychoPy's wide CSV, or JSON (everything).

**CSV** (``"csv"``) is a tidy table (:mod:`lensopt.store.tidy`): one row per trial, one column per
value, no JSON in any cell, for every kind of session. Letter trials (:data:`CSV_COLUMNS`), duels
(:data:`DUEL_CSV_COLUMNS`) and rankings (:func:`ranking_csv_columns`: ``lens_k_sphere_d``,
``lens_k_cylinder_d``, ``lens_k_axis_deg`` for each lens of the largest set (the axis of a
ranking of sphere and cylinder: its --axis, else empty), ``rank_k_lens`` the lens number, from 1,
put in place ``k``, clearest first) end with the session's protocol (``protocol``,
``n_alternatives``, ``alphabet``: :data:`~lensopt.store.tidy.PROTOCOL_COLUMNS`) and are followed by one
column per value of the trials' ``extra`` (``letter_height_px``, ``decision_ms``, ``key_rt_s_1``...). ``trial_index`` is the trial's number
from 1; times are ``presented_at_utc``/``answered_at_utc`` (ISO-8601 UTC, to the microsecond) and
``presented_at_s``/``answered_at_s`` (unix seconds, the exact stored float: an ISO time to the
microsecond cannot hold a float of ~1.7e9 s exactly). Numbers are Python's shortest round-trip
``repr``, so a float read back equals the stored one; an empty cell is ``None``; ``correct`` and
``void`` are ``1``/``0``. Several sessions go in one table, ``session_id`` first, the columns
the union of theirs. ``docs/data-dictionary.md`` describes every column.

**PsychoPy** (``"psychopy"``) is the same table in the layout of PsychoPy's
``ExperimentHandler.saveAsWideText``: the trial columns, then ``participant``, ``date``,
``expName``, ``psychopyVersion``, ``frameRate`` (:data:`~lensopt.store.tidy.PSYCHOPY_COLUMNS`).

**JSON** (``"json"``) is the lossless document: the session (its stored ``status`` and
``status_now``, the status shown when exported: ``interrupted`` for one stored as running that no
program runs, :func:`lensopt.store.claim.session_status`), calibration, protocol, optimizer
settings, seed, software version, the session's ``eye``, ``result`` (the fields of
:class:`~lensopt.store.session_records.ResultRecord`, its ``prescription`` in clinical notation; ``null``
without one) and ``results`` (one per eye of a session of both eyes), and every trial with the
fields of its record (``index``, ``extra`` as an object; a ranking's ``lenses_d`` and 0-based
``order`` as lists). Several sessions: a JSON array of these documents. Where a CSV cell cannot say
a value's type (an ``extra`` string that looks like a number, an empty list, ``None`` against a
missing key), the JSON export holds it.

The export only reads: the database is never written.
"""

from __future__ import annotations

import csv
import dataclasses
import io
import json
import os
import stat
from pathlib import Path
from typing import cast

from lensopt import __version__
from lensopt.private_files import private_output
from lensopt.store.claim import session_status
from lensopt.store.records import (
    DUEL_KIND,
    LETTERS_KIND,
    RANKING_KIND,
    DuelTrialRecord,
    RankingTrialRecord,
    TrialRecord,
)
from lensopt.store.session_records import DAMAGED, DamagedSession, SessionInfo
from lensopt.store.tidy import psychopy_table, table_columns, tidy_table
from lensopt.store.verdict import stored_withheld_reason

#: Mode of an export file (owner read/write only, whatever the umask): it holds patient data.
EXPORT_FILE_MODE = 0o600

#: Export formats.
FORMATS = ("csv", "json", "psychopy")

#: Identifies the JSON export; bump ``JSON_FORMAT_VERSION`` when its layout changes
#: (2: duel sessions, whose trials are duels; 3: ranking sessions; 4: letter trials' ``axis_deg``
#: and the session's ``result``; 5: letter trials' ``void``; 6: the session's ``eye``, letter
#: trials' ``eye`` and ``results``, one per eye; 7: duels' ``first_axis_deg`` and ``second_axis_deg``;
#: 8: rankings' ``axes_deg``; 9: each result's ``prescribed`` and ``withheld_reason``; 10: the
#: session's ``status_now``, beside its stored ``status``; 11: the session's ``events``, its start and
#: each resume with the software that ran, and ``status_now`` ``stopped`` for a session stored ``aborted``;
#: 12: ``unreadable_events``, the events another program changed so that they cannot be read, skipped).
JSON_FORMAT = "lensopt-session"
JSON_FORMAT_VERSION = 12

#: Calibration keys every JSON export carries (``null`` when the session stored none).
CALIBRATION_KEYS = ("screen_width_cm", "screen_width_px", "distance_cm")

#: CSV columns of a letter session, in order, before the columns of its trials' other ``extra`` values.
CSV_COLUMNS = table_columns([LETTERS_KIND])

#: CSV columns of a duel session, in order, before the columns of its duels' ``extra`` values.
DUEL_CSV_COLUMNS = table_columns([DUEL_KIND])


def ranking_csv_columns(n_lenses: int) -> tuple[str, ...]:
    """CSV columns of a ranking session whose largest set has ``n_lenses`` lenses, before ``extra``'s."""
    return table_columns([RANKING_KIND], n_lenses)


def _result_document(info: SessionInfo, result) -> dict:
    """A stored result as the JSON export writes it: its fields, and whether it is a prescription
    (``prescribed``; else ``withheld_reason`` says why: the printed record's and the sessions list's
    rule, :func:`lensopt.store.verdict.stored_withheld_reason`)."""
    reason = stored_withheld_reason(info, result)
    return {**dataclasses.asdict(result), "prescribed": reason is None, "withheld_reason": reason}


def info_document(info: SessionInfo, db_path=None) -> dict:
    """A stored session's description without its trials, as ``lensopt sessions --json`` lists it:
    its fields (``status`` as stored), ``status_now`` (the status shown for it, read with the claims
    beside the database ``db_path``: :func:`lensopt.store.claim.session_status`; without
    ``db_path``, the stored one), each result with ``prescribed`` and ``withheld_reason``
    (:func:`_result_document`)."""
    return {
        **dataclasses.asdict(info),
        "status_now": session_status(db_path, info.session_id, info.status),
        "result": None if info.result is None else _result_document(info, info.result),
        "results": [_result_document(info, r) for r in info.results],
    }


def damaged_document(damaged: DamagedSession) -> dict:
    """A session another program changed so that it cannot be read, as ``lensopt sessions --json``
    lists it: its id, what of it could be read (``status`` as stored, None where unreadable),
    ``status_now`` ``"damaged"`` and ``problem`` (what is wrong)."""
    return {
        "session_id": damaged.session_id,
        "participant": damaged.participant,
        "kind": damaged.kind,
        "status": damaged.status,
        "status_now": DAMAGED,
        "created_at": damaged.created_at,
        "n_trials": damaged.n_trials,
        "problem": damaged.problem,
    }


def session_document(
    info: SessionInfo, trials: list[TrialRecord] | list[DuelTrialRecord] | list[RankingTrialRecord], db_path=None
) -> dict:
    """The JSON export of a session as a dict (letter trials or duels, as the session's kind); its
    ``status_now`` as :func:`info_document`'s."""
    calibration = dict(info.calibration)
    for key in CALIBRATION_KEYS:
        calibration.setdefault(key, None)
    return {
        "format": JSON_FORMAT,
        "format_version": JSON_FORMAT_VERSION,
        "exported_by": f"lensopt {__version__}",
        "session": {
            "session_id": info.session_id,
            "participant": info.participant,
            "kind": info.kind,
            "status": info.status,
            "status_now": session_status(db_path, info.session_id, info.status),
            "created_at": info.created_at,
            "updated_at": info.updated_at,
            "n_trials": info.n_trials,
        },
        "calibration": calibration,
        "protocol": info.protocol,
        "optimizer_settings": info.optimizer_settings,
        "seed": info.seed,
        "software_version": info.software_version,
        "eye": info.eye,
        "result": None if info.result is None else _result_document(info, info.result),
        "results": [_result_document(info, r) for r in info.results],
        "events": [event.to_dict() for event in info.events],
        "unreadable_events": list(info.unreadable_events),
        "trials": [dataclasses.asdict(t) for t in trials]
        if info.kind in (DUEL_KIND, RANKING_KIND)
        else [
            {
                "index": t.index,
                "letter": t.letter,
                "letter_logmar": t.letter_logmar,
                "sphere_d": t.sphere_d,
                "cylinder_d": t.cylinder_d,
                "axis_deg": t.axis_deg,
                "response": t.response,
                "correct": t.correct,
                "rt_s": t.rt_s,
                "presented_at": t.presented_at,
                "answered_at": t.answered_at,
                "extra": t.extra,
                "void": t.void,
                "eye": t.eye,
            }
            for t in cast(list[TrialRecord], trials)  # a letter session's trials
        ],
    }


def _csv_text(columns, rows) -> str:
    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\n")
    writer.writerow(columns)
    writer.writerows([row.get(name, "") for name in columns] for row in rows)
    return buffer.getvalue()


def export_text(sessions, fmt: str, *, several: bool = False, db_path=None) -> str:
    """The export of ``sessions`` (``(SessionInfo, trials)`` pairs, in order) as ``fmt``.

    ``several``: JSON is an array of session documents even for one session (``lensopt export
    --all``); otherwise it is one session's document and ``sessions`` must hold exactly one.
    ``db_path``: the database they were read from, for JSON's ``status_now`` (:func:`session_document`).
    """
    if fmt not in FORMATS:
        raise ValueError(f"export format must be one of {', '.join(FORMATS)}, got {fmt!r}")
    if fmt == "json":
        documents = [session_document(info, trials, db_path) for info, trials in sessions]
        if not several and len(documents) != 1:
            raise ValueError(f"a JSON export of one session needs one session, got {len(documents)}")
        return json.dumps(documents if several else documents[0], indent=2, allow_nan=False) + "\n"
    return _csv_text(*(psychopy_table if fmt == "psychopy" else tidy_table)(sessions))


def write_export(text: str, out) -> None:
    """Write ``text`` to ``out``: a path (UTF-8; a one-line error naming it if it cannot be written) or
    a writable text stream. A file is written whole or not at all — into a new file beside it (0600),
    renamed into place (:func:`lensopt.private_files.private_output`) — so a full disk never leaves an
    earlier export cut short; an existing file in a folder where no new file can be made (read-only)
    is written over in place instead; a link (``/dev/stdout``) or a path that is no regular file (a pipe) is
    written through."""
    if hasattr(out, "write"):
        out.write(text)
        return
    target = Path(os.fspath(out))
    if not target.is_symlink() and (not target.exists() or target.is_file()):  # a link is written through
        with private_output(target, "--output") as stream:
            stream.write(text.encode("utf-8"))
        return
    try:
        fd = os.open(os.fspath(out), os.O_WRONLY | os.O_CREAT | os.O_TRUNC, EXPORT_FILE_MODE)
        with open(fd, "w", encoding="utf-8", newline="") as handle:
            if stat.S_ISREG(os.fstat(fd).st_mode):  # never a terminal or a pipe given as the output
                os.fchmod(fd, EXPORT_FILE_MODE)
            handle.write(text)
    except OSError as exc:
        raise ValueError(f"cannot write the export to {out} ({exc.strerror}); choose another --output") from None


def read_sessions(store, session_ids) -> list[tuple[SessionInfo, list]]:
    """``(SessionInfo, trials)`` of each of ``session_ids`` (in order; a MissingSessionError for
    the first that is not stored), read before anything is written."""
    return [(store.session(sid), store.session_trials(sid)) for sid in session_ids]


def export_sessions(store, session_ids, fmt: str = "csv", out=None) -> str:
    """Export the sessions ``session_ids`` of ``store`` in one file as ``fmt`` (:data:`FORMATS`;
    JSON: an array of session documents). ``out`` as for :func:`export_session`."""
    if fmt not in FORMATS:
        raise ValueError(f"export format must be one of {', '.join(FORMATS)}, got {fmt!r}")
    text = export_text(read_sessions(store, session_ids), fmt, several=True, db_path=store.path)
    if out is not None:
        write_export(text, out)
    return text


def export_session(store, session_id: int, fmt: str = "csv", out=None) -> str:
    """Export session ``session_id`` of ``store`` as ``fmt`` (``"csv"``, ``"psychopy"`` or ``"json"``).

    ``out``: ``None`` (only return the text), a path (written as UTF-8) or a writable text
    stream. Returns the exported text in every case.
    """
    if fmt not in FORMATS:
        raise ValueError(f"export format must be one of {', '.join(FORMATS)}, got {fmt!r}")
    text = export_text(read_sessions(store, [session_id]), fmt, db_path=store.path)
    if out is not None:
        write_export(text, out)
    return text
