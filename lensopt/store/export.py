"""Export one stored session as CSV (one row per trial) or JSON (metadata and trials).

Numbers are written with Python's shortest round-trip representation, so a float read back
from either format equals the stored one exactly. In CSV, an empty cell is ``None`` (no
answer, no reaction time, no axis), ``correct`` is ``1``/``0`` and ``extra`` is a JSON object.
A letter trial's ``axis_deg`` is the cylinder axis of a full-prescription session (empty in the
two-parameter search); ``void`` is 1 for an answer the clinician undid (kept, not told to the
optimizer; 0 otherwise) and ``eye`` the eye tested (``OD``/``OS``, empty when the session named
none); ``asked_lens`` and ``note`` repeat, as columns of their own, the clinician's entries kept
in ``extra`` (the lens asked for when the clinician set another, a note); a session that finished with a prescription exports it as ``result`` in
JSON (the fields of :class:`~lensopt.store.records.ResultRecord`, ``null`` without one), and
every result as ``results`` (one per eye of a session of both eyes).

A duel session (``session.kind == "duel"``) exports its duels instead: the two lenses, the
letters shown and their size, and the answer ``first``/``second``/``same`` (:data:`DUEL_CSV_COLUMNS`;
in JSON each trial holds the fields of :class:`~lensopt.store.records.DuelTrialRecord`). A ranking
session (``"ranking"``) exports its rankings: the lenses ``[[S, C], ...]`` and the order given
``[i, j, ...]`` (lens indices from 0, clearest first) as JSON text in CSV
(:data:`RANKING_CSV_COLUMNS`), as lists in JSON (the fields of
:class:`~lensopt.store.records.RankingTrialRecord`).
"""

from __future__ import annotations

import csv
import dataclasses
import io
import json
import os

from lensopt import __version__
from lensopt.store.records import DUEL_KIND, RANKING_KIND, DuelTrialRecord, SessionInfo, TrialRecord

#: Export formats.
FORMATS = ("csv", "json")

#: Identifies the JSON export; bump ``JSON_FORMAT_VERSION`` when its layout changes
#: (2: duel sessions, whose trials are duels; 3: ranking sessions; 4: letter trials' ``axis_deg``
#: and the session's ``result``; 5: letter trials' ``void``; 6: the session's ``eye``, letter
#: trials' ``eye`` and ``results``, one per eye).
JSON_FORMAT = "lensopt-session"
JSON_FORMAT_VERSION = 6

#: Calibration keys every JSON export carries (``null`` when the session stored none).
CALIBRATION_KEYS = ("screen_width_cm", "screen_width_px", "distance_cm")

#: CSV columns, in order.
CSV_COLUMNS = (
    "session_id",
    "participant",
    "index",
    "letter",
    "letter_logmar",
    "sphere_d",
    "cylinder_d",
    "axis_deg",
    "response",
    "correct",
    "rt_s",
    "presented_at",
    "answered_at",
    "extra",
    "void",
    "eye",
    "asked_lens",
    "note",
)

#: Keys of a letter trial's ``extra`` that the CSV also writes as columns of their own (the
#: clinician's: the lens asked for when another was set, a note), empty when absent.
EXTRA_CSV_COLUMNS = ("asked_lens", "note")

#: CSV columns of a duel session, in order.
DUEL_CSV_COLUMNS = (
    "session_id",
    "participant",
    "index",
    "letters",
    "letter_logmar",
    "first_sphere_d",
    "first_cylinder_d",
    "second_sphere_d",
    "second_cylinder_d",
    "answer",
    "rt_s",
    "presented_at",
    "answered_at",
    "extra",
)


#: CSV columns of a ranking session, in order (``lenses_d`` and ``order`` are JSON text).
RANKING_CSV_COLUMNS = (
    "session_id",
    "participant",
    "index",
    "letters",
    "letter_logmar",
    "lenses_d",
    "order",
    "rt_s",
    "presented_at",
    "answered_at",
    "extra",
)


def session_document(info: SessionInfo, trials: list[TrialRecord] | list[DuelTrialRecord]) -> dict:
    """The JSON export of a session as a dict (letter trials or duels, as the session's kind)."""
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
        "result": None if info.result is None else dataclasses.asdict(info.result),
        "results": [dataclasses.asdict(r) for r in info.results],
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
            for t in trials
        ],
    }


def _number(value) -> str:
    return "" if value is None else repr(value)


def _duel_csv_text(info: SessionInfo, duels: list[DuelTrialRecord]) -> str:
    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\n")
    writer.writerow(DUEL_CSV_COLUMNS)
    for d in duels:
        writer.writerow(
            [
                info.session_id,
                info.participant,
                d.index,
                d.letters,
                *(_number(getattr(d, name)) for name in DUEL_CSV_COLUMNS[4:9]),
                d.answer,
                _number(d.rt_s),
                repr(d.presented_at),
                repr(d.answered_at),
                json.dumps(d.extra, allow_nan=False, separators=(",", ":")),
            ]
        )
    return buffer.getvalue()


def _ranking_csv_text(info: SessionInfo, rankings) -> str:
    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\n")
    writer.writerow(RANKING_CSV_COLUMNS)
    for r in rankings:
        writer.writerow(
            [
                info.session_id,
                info.participant,
                r.index,
                r.letters,
                repr(r.letter_logmar),
                r.lenses_json(),
                r.order_json(),
                _number(r.rt_s),
                repr(r.presented_at),
                repr(r.answered_at),
                json.dumps(r.extra, allow_nan=False, separators=(",", ":")),
            ]
        )
    return buffer.getvalue()


def _csv_text(info: SessionInfo, trials: list[TrialRecord]) -> str:
    if info.kind == DUEL_KIND:
        return _duel_csv_text(info, trials)
    if info.kind == RANKING_KIND:
        return _ranking_csv_text(info, trials)
    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\n")
    writer.writerow(CSV_COLUMNS)
    for t in trials:
        writer.writerow(
            [
                info.session_id,
                info.participant,
                t.index,
                t.letter,
                repr(t.letter_logmar),
                repr(t.sphere_d),
                repr(t.cylinder_d),
                _number(t.axis_deg),
                "" if t.response is None else t.response,
                int(t.correct),
                "" if t.rt_s is None else repr(t.rt_s),
                repr(t.presented_at),
                repr(t.answered_at),
                json.dumps(t.extra, allow_nan=False, separators=(",", ":")),
                int(t.void),
                "" if t.eye is None else t.eye,
                *(str(t.extra.get(key, "")) for key in EXTRA_CSV_COLUMNS),
            ]
        )
    return buffer.getvalue()


def export_session(store, session_id: int, fmt: str = "csv", out=None) -> str:
    """Export session ``session_id`` of ``store`` as ``fmt`` (``"csv"`` or ``"json"``).

    ``out``: ``None`` (only return the text), a path (written as UTF-8) or a writable text
    stream. Returns the exported text in every case.
    """
    if fmt not in FORMATS:
        raise ValueError(f"export format must be one of {', '.join(FORMATS)}, got {fmt!r}")
    info = store.session(session_id)
    trials = store.session_trials(session_id)
    if fmt == "json":
        text = json.dumps(session_document(info, trials), indent=2, allow_nan=False) + "\n"
    else:
        text = _csv_text(info, trials)
    if out is None:
        return text
    if hasattr(out, "write"):
        out.write(text)
        return text
    try:
        with open(os.fspath(out), "w", encoding="utf-8", newline="") as handle:
            handle.write(text)
    except OSError as exc:
        raise ValueError(f"cannot write the export to {out} ({exc.strerror}); choose another --output") from None
    return text
