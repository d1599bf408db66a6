"""``lensopt sessions`` and ``lensopt export``'s handlers: the stored sessions listed, or written
as CSV, PsychoPy's CSV or JSON (their options and what they show: :mod:`lensopt.cli.sessions`).

A session another program changed so that it cannot be read (:class:`~lensopt.store.DamagedSession`)
keeps neither from reading the others: ``lensopt sessions`` lists it ``damaged`` and says on stderr,
in one line, which session, what is wrong and what to do; ``lensopt export --all`` exports nothing
and names it, and the command that exports the others (a partial export is too easily taken for
the whole)."""

from __future__ import annotations

import difflib
import json
import os
import shlex
import stat
import sys
import time
import unicodedata

from lensopt.cli.arguments import check_database_not_a_folder, check_session_id
from lensopt.dashboard.prescription_text import build_record
from lensopt.dashboard.record_text import record_lines
from lensopt.errors import LensoptError, StoreError
from lensopt.experiment.rescue import sessions_with_rescue_files, unsaved_warning
from lensopt.stopping import confidence_text, enough_to_prescribe, threshold_text
from lensopt.store import (
    DamagedSession,
    DamagedSessionError,
    SessionStore,
    check_not_the_database,
    db_option,
    default_db_path,
    stored_confidence_target,
    stored_fixed_design,
    stored_withheld_reason,
)
from lensopt.store.claim import session_status
from lensopt.store.export import (
    FORMATS,
    damaged_document,
    export_text,
    info_document,
    read_sessions,
    write_export,
)
from lensopt.store.records import DUEL_KIND, RANKING_KIND
from lensopt.store.session_records import DAMAGED, undone_suffix, unreadable_events_text
from lensopt.store.tidy import session_rule
from lensopt.store.verdict import NO_AXIS_REASON, trial_noun

#: Columns of the ``lensopt sessions`` table.
TABLE_COLUMNS = ("id", "participant", "kind", "eye", "status", "trials", "created (local)", "rule", "prescription")
"""``created``: this computer's local time, as the clinic's clock reads it (the exports give UTC beside
unix seconds)."""


def _open_readonly(db):
    check_database_not_a_folder(db, default_db_path())
    return SessionStore(db if db else default_db_path(), readonly=True)


def _rule(info) -> str:
    return session_rule(info) or "-"


def _created(unix_s: float | None) -> str:
    if unix_s is None:
        return "?"
    try:
        return time.strftime("%Y-%m-%d %H:%M", time.localtime(unix_s))
    except (OverflowError, OSError, ValueError):  # a time no calendar holds: shown, not fatal
        return "?"


def _prescriptions(info) -> str:
    """The stored prescription(s): ``-1.25 / -0.75 x 170``, or per eye ``OD -1.25 / ... ; OS ...``. A
    result whose confidence fell short of the session's target (its protocol's ``[stop] confidence``)
    is no prescription, as the closing screen, the dashboard and the printed record say: ``not
    enough answers (confidence 0.62 < 0.95)``, without the lens; in a session without a stopping rule
    (a study's fixed number of trials, target 0.95) the lens is the study's result: ``-1.25 / -0.75 x
    170 (estimate, confidence 0.62 < 0.95)``."""
    if not info.results:
        # a two-parameter comparison (not "search": "prescription", lensopt.refraction.prescription.PRESCRIPTION_SEARCH)
        comparison = info.kind in (DUEL_KIND, RANKING_KIND) and info.optimizer_settings.get("search") != "prescription"
        if comparison and info.n_answers:  # its best lens was printed, not stored: it is no prescription
            return "- (comparisons without a start: no prescription)"
        return "-"
    target = stored_confidence_target(info)
    fixed_design = stored_fixed_design(info)

    def text(r) -> str:
        eye = f"{r.eye} " if r.eye else ""
        reason = stored_withheld_reason(info, r)  # the printed record's rule
        if reason is None:
            return eye + r.prescription
        shortfall = (
            None
            if r.confidence is None
            else f"confidence {confidence_text(r.confidence, target)} < {threshold_text(target)}"
        )
        if reason == NO_AXIS_REASON:  # its sphere and cylinder are a study's result, not a prescription
            short = "" if shortfall is None or enough_to_prescribe(r.confidence, target) else f", {shortfall}"
            return f"{eye}{r.prescription} (estimate: a cylinder without an axis{short})"
        if shortfall is None:  # duels, rankings: fewer than the comparisons measured
            return f"{eye}not enough answers (only {r.n_trials} {trial_noun(info.kind)})"
        if fixed_design:
            return f"{eye}{r.prescription} (estimate, {shortfall})"
        return f"{eye}not enough answers ({shortfall})"

    return "; ".join(text(r) for r in info.results)


def _damaged_row(d: DamagedSession) -> tuple[str, ...]:
    """A damaged session's line: what of it could be read, ``?`` for the rest, status ``damaged``."""
    n_trials = "?" if d.n_trials is None else str(d.n_trials)
    return (
        str(d.session_id),
        d.participant or "?",
        d.kind or "?",
        "-",
        DAMAGED,
        n_trials,
        _created(d.created_at),
        "-",
        "-",
    )


def format_table(infos, db_path=None) -> str:
    """The sessions as an aligned text table (one line per session); with ``db_path`` a running
    session that no program runs is shown ``interrupted`` (:func:`lensopt.store.claim.session_status`);
    a :class:`~lensopt.store.DamagedSession` is shown ``damaged``."""
    rows = [TABLE_COLUMNS] + [
        _damaged_row(i)
        if isinstance(i, DamagedSession)
        else (
            str(i.session_id),
            i.participant,
            i.kind,
            i.eye or "-",
            session_status(db_path, i.session_id, i.status),
            f"{i.n_answers}{undone_suffix(i.n_undone)}",
            _created(i.created_at),
            _rule(i),
            _prescriptions(i),
        )
        for i in infos
    ]
    widths = [max(cells_wide(row[k]) for row in rows) for k in range(len(TABLE_COLUMNS))]
    right_aligned = {0, 5}

    def padded(k: int, cell: str, width: int) -> str:
        room = " " * (width - cells_wide(cell))
        return room + cell if k in right_aligned else cell + room

    lines = ["  ".join(padded(k, cell, w) for k, (cell, w) in enumerate(zip(row, widths))).rstrip() for row in rows]
    return "\n".join(lines)


def cells_wide(text: str) -> int:
    """How many terminal cells ``text`` takes: two for a wide character (李, 김: Unicode's East Asian
    Wide and Fullwidth), none for a combining mark, one for the rest. A participant named in Chinese
    pushed the rest of their row out of its columns."""
    return sum(
        0 if unicodedata.combining(c) else 2 if unicodedata.east_asian_width(c) in ("W", "F") else 1 for c in text
    )


def _warn_if_readable_by_others(path) -> None:
    """One stderr line when the database can be read by its group or everyone (it holds patient data)."""
    try:
        info = os.stat(path)
    except OSError:
        return
    mode = stat.S_IMODE(info.st_mode)
    if mode & (stat.S_IRGRP | stat.S_IROTH):
        fix = f"make it private with `chmod 600 {path}`"
        if hasattr(os, "geteuid") and info.st_uid != os.geteuid():  # only its owner (or root) can change it
            fix = f"ask its owner (user id {info.st_uid}) to make it private (`chmod 600 {path}`)"
        print(f"warning: {path} is readable by other users (mode {mode:04o}); {fix}", file=sys.stderr)


def _warn_of_unsaved_answers(db_path, infos) -> None:
    """One stderr line per session with answers its database refused, kept in a rescue file until a
    resume stores them (the listing and an export count only what the database holds) — or with a
    rescue file of its name holding answers from before it began (an earlier database's)."""
    with_files = sessions_with_rescue_files(db_path)  # one listing, not two files looked for per session
    for info in infos:
        if with_files is not None and info.session_id not in with_files:
            continue
        warning = unsaved_warning(db_path, info.session_id, info.created_at)
        if warning is not None:
            print(warning, file=sys.stderr)


def _warn_of_unreadable_events(db_path, infos) -> None:
    """One stderr line per session with events another program changed so that they cannot be read
    (skipped: its answers and results are read all the same)."""
    for info in infos:
        text = None if isinstance(info, DamagedSession) else unreadable_events_text(info, db_path)
        if text is not None:
            print(f"warning: {text}", file=sys.stderr)


def _of_participant(infos, participant: str) -> list:
    """The sessions of ``infos`` of ``participant`` (as given to ``lensopt run``, which stores it
    stripped), a damaged one whose participant cannot be read among them: it may be theirs."""
    wanted = participant.strip()
    return [i for i in infos if i.participant == wanted or (isinstance(i, DamagedSession) and i.participant is None)]


def _no_sessions_of(participant: str, infos, db_path) -> str:
    """One line: no session of ``participant`` in ``db_path``, with the participants it holds whose
    name is close (another case, a part of it, a typo), or how to list them."""
    names = sorted({i.participant for i in infos if i.participant})
    typed = participant.strip().casefold()
    same = [name for name in names if name.casefold() == typed]
    part = [name for name in names if typed and typed in name.casefold()][:3]  # "maria" for "Maria Rossi"
    close = same or part or difflib.get_close_matches(participant.strip(), names, n=3, cutoff=0.6)
    hint = f"did you mean {' or '.join(map(repr, close))}?" if close else "`lensopt sessions` lists the participants"
    return f"no session of participant {participant!r} in {db_path}; {hint}"


def show_session(args) -> int:
    """Handler of ``lensopt sessions SESSION_ID``: the session's result as its printed record's page 1
    says it (:func:`lensopt.dashboard.record_text.record_lines`), then the command that prints the
    record; with ``--json`` its stored document, as in the listing."""
    session_id = args.session_id
    if args.participant is not None:
        raise LensoptError(
            f"give SESSION_ID or --participant ID, not both: `lensopt sessions {session_id}` shows that session, "
            f"`lensopt sessions --participant {shlex.quote(args.participant)}` lists the participant's"
        )
    if getattr(args, "last", None) is not None:
        raise LensoptError(
            f"give SESSION_ID or --last N, not both: `lensopt sessions {session_id}` shows that session, "
            f"`lensopt sessions --last {args.last}` lists the {args.last} most recent"
        )
    check_session_id(session_id)
    with _open_readonly(args.db) as store:
        info = store.session(session_id)
        trials = store.trials(session_id)
        path = store.path
    _warn_if_readable_by_others(path)
    _warn_of_unreadable_events(path, [info])
    _warn_of_unsaved_answers(path, [info])
    if args.json:
        print(json.dumps(info_document(info, path), indent=2))
        return 0
    status = session_status(path, session_id, info.status)  # interrupted, where no program runs it
    print("\n".join(record_lines(build_record(info, status=status, trials=trials, db_path=path, verb="shown"))))
    print(f"\nto print it: lensopt print {session_id} --out session-{session_id}.pdf{db_option(args.db)}")
    return 0


def list_sessions(args) -> int:
    """Handler of ``lensopt sessions``: every session (``--participant``: of that participant;
    ``--last N``: the N most recent of them), a damaged one shown ``damaged`` and said on stderr; with
    a SESSION_ID, that one (:func:`show_session`)."""
    if args.session_id is not None:
        return show_session(args)
    with _open_readonly(args.db) as store:
        infos = store.listing()
        path = store.path
    if args.participant is not None:
        every, infos = infos, _of_participant(infos, args.participant)
        if not any(i.participant == args.participant.strip() for i in infos) and not args.json:
            print(_no_sessions_of(args.participant, every, path))
            return 0
    _warn_if_readable_by_others(path)
    for damaged in infos:
        if isinstance(damaged, DamagedSession):
            print(
                f"warning: {DamagedSessionError(path, damaged)} (the other sessions are listed as stored)",
                file=sys.stderr,
            )
    _warn_of_unreadable_events(path, infos)
    # of every session, also those --last leaves out: answers only a resume stores must not go unsaid
    _warn_of_unsaved_answers(path, infos)
    if getattr(args, "last", None) is not None:
        infos = infos[-args.last :]
    if args.json:
        documents = [damaged_document(i) if isinstance(i, DamagedSession) else info_document(i, path) for i in infos]
        print(json.dumps(documents, indent=2))
    elif not infos:
        print(f"no sessions in {path}")
    else:
        print(format_table(infos, path))
    return 0


#: The largest session id SQLite can hold (a signed 64-bit integer); a larger one is no session.
MAX_SESSION_ID = 2**63 - 1


def export_command(args) -> int:
    """Handler of ``lensopt export``: every session is read and the text made before anything is written."""
    args.fmt = _export_format(args.fmt, args.output)
    chosen = [bool(args.session_ids), bool(args.all), args.participant is not None]
    if sum(chosen) > 1:
        raise ValueError(
            "give one of SESSION_IDs, --participant ID or --all, not several (--all exports every session, "
            "--participant every session of one participant)"
        )
    if not any(chosen):
        raise ValueError("give the sessions to export: one or more SESSION_IDs, --participant ID, or --all")
    if args.output:
        check_not_the_database("--output", args.output, args.db if args.db else default_db_path())
    with _open_readonly(args.db) as store:
        if args.all or args.participant is not None:
            every = store.listing()
            listed = every if args.all else _of_participant(every, args.participant)
            damaged = [info for info in listed if isinstance(info, DamagedSession)]
            if args.participant is not None and len(damaged) == len(listed):  # none that is surely theirs
                raise ValueError(_no_sessions_of(args.participant, every, store.path))
            if damaged:
                raise StoreError(_damaged_refusal(args, store.path, damaged, listed))
            session_ids = [info.session_id for info in listed]
            if not session_ids:
                raise ValueError(f"no sessions in {store.path} to export")
        else:
            session_ids = list(dict.fromkeys(args.session_ids))
            for sid in session_ids:
                check_session_id(sid)  # 0, negative: as sessions, print and dashboard say it
                if sid > MAX_SESSION_ID:
                    raise ValueError(f"no session {sid} in {store.path}; list them with `lensopt sessions`")
        sessions = read_sessions(store, session_ids)
        db_path = store.path
    _warn_of_unreadable_events(db_path, [info for info, _ in sessions])
    _warn_of_unsaved_answers(db_path, [info for info, _ in sessions])
    several = args.all or args.participant is not None or len(args.session_ids) > 1  # JSON: an array
    text = export_text(sessions, args.fmt, several=several, db_path=db_path)
    write_export(text, args.output or sys.stdout)
    if args.output:
        n_trials = sum(len(trials) for _, trials in sessions)
        what = f"session {session_ids[0]}" if len(sessions) == 1 else f"{len(sessions)} sessions"
        print(f"wrote {what} ({n_trials} trial{'' if n_trials == 1 else 's'}) to {args.output}", file=sys.stderr)
    return 0


#: The format an export's file name says (its suffix, any case), and the formats it allows.
SUFFIX_FORMATS = {".json": ("json",), ".csv": ("csv", "psychopy")}


def _export_format(fmt: str | None, output: str | None) -> str:
    """The export's format: ``--format`` if given (a one-line refusal unless one of :data:`FORMATS`,
    or when the ``-o`` file's suffix says another), else the suffix's (``.json``: json), else csv. A
    file ``out.json`` holding CSV was written without a word."""
    suffix = "" if output is None else os.path.splitext(output)[1].lower()
    allowed = SUFFIX_FORMATS.get(suffix)
    if fmt is None:
        return allowed[0] if allowed else "csv"
    if fmt not in FORMATS:
        raise ValueError(f"--format must be one of {', '.join(FORMATS)}, got {fmt!r}")
    if allowed and fmt not in allowed:
        raise ValueError(
            f"--format {fmt} contradicts -o {output} (a {suffix} file holds {' or '.join(allowed)}); "
            f"give -o a name ending in {'.json' if fmt == 'json' else '.csv'}, or leave --format out"
        )
    return fmt


#: Most session ids an error message lists in the command that exports the others.
MAX_IDS_SUGGESTED = 20


def _damaged_refusal(args, db_path, damaged: list[DamagedSession], listed) -> str:
    """``lensopt export --all``'s (or ``--participant``'s) one line when sessions are damaged: which and what is wrong, that
    nothing was exported, and how to export the others (their ids, with the options given)."""
    if len(damaged) == 1:
        what = f"session {damaged[0].session_id} in {db_path} is damaged: {damaged[0].problem}"
    else:
        ids = ", ".join(str(d.session_id) for d in damaged)
        what = (
            f"sessions {ids} in {db_path} are damaged ("
            + "; ".join(f"session {d.session_id}: {d.problem}" for d in damaged)
            + ")"
        )
    others = [str(i.session_id) for i in listed if not isinstance(i, DamagedSession)]
    advice = "restore the database from a copy"
    if len(others) > MAX_IDS_SUGGESTED:
        advice += f", or export the other {len(others)} sessions by id (`lensopt sessions` lists them)"
    elif others:
        options = [] if not args.db else ["--db", shlex.quote(str(args.db))]
        options += [] if args.fmt == "csv" else ["--format", args.fmt]
        options += [] if not args.output else ["-o", shlex.quote(str(args.output))]
        advice += f", or export the others by id: `lensopt export {' '.join(others + options)}`"
    return f"{what}; the database was changed by another program, so nothing was exported: {advice}"
