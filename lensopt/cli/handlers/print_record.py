"""``lensopt print``'s handler: a session's prescription record as a PDF (its options:
:mod:`lensopt.cli.print_record`)."""

from __future__ import annotations

import os
import sys
from pathlib import Path

from lensopt.cli.arguments import check_database_not_a_folder, check_session_id
from lensopt.dashboard.prescription_record import write_prescription_record
from lensopt.dashboard.prescription_text import NO_AXIS_HEADING, eye_record, session_results
from lensopt.errors import LensoptError
from lensopt.private_files import writable_in_place
from lensopt.store import SessionStore, check_not_the_database, default_db_path


def check_output(path_text: str) -> Path:
    """The ``--out`` path, or a ``LensoptError`` naming what is wrong with it and the fix."""
    path = Path(path_text).expanduser()
    if path_text.endswith(("/", os.sep)):  # Path drops the slash: adir.pdf/ would be written as a file adir.pdf
        raise LensoptError(f"--out {path_text} ends in a slash, which names a folder; give a file name ending in .pdf")
    if path.name.lower() == ".pdf":  # a name that is all extension: Path reads it as a hidden file, no suffix
        raise LensoptError(f"--out {path} has no name before .pdf; give one (e.g. --out rx.pdf)")
    if path.suffix.lower() != ".pdf":
        raise LensoptError(f"--out {path} must end in .pdf (e.g. --out rx.pdf)")
    if path.is_dir():
        raise LensoptError(f"--out {path} is a folder; give a file name ending in .pdf")
    folder = path.parent
    if folder.exists() and not folder.is_dir():
        raise LensoptError(f"--out {path}: {folder} is a file, not a folder; choose another --out")
    if not folder.is_dir():
        raise LensoptError(f"--out {path}: folder {folder} does not exist; create it first or choose another --out")
    if not os.access(folder, os.W_OK | os.X_OK) and not writable_in_place(path):  # else written over in place
        raise LensoptError(
            f"--out {path}: folder {folder} is not writable; make it writable or choose another --out in a "
            "folder you can write"
        )
    return path


def print_command(args) -> int:
    """Handler of ``lensopt print``."""
    check_session_id(args.session_id)
    out = check_output(args.out)
    check_database_not_a_folder(args.db, default_db_path())
    db_path = Path(args.db).expanduser() if args.db else default_db_path()
    check_not_the_database("--out", out, db_path)
    with SessionStore(db_path, readonly=True) as store:
        store.session(args.session_id)  # an unknown session is said before anything heavy is imported
        write_prescription_record(
            store, args.session_id, out, warn=lambda note: print(f"note: {note}", file=sys.stderr)
        )
        info = store.session(args.session_id)
    print(f"prescription record of session {args.session_id} ({info.participant}, {_contents(info)}) written to {out}")
    return 0


def _contents(info) -> str:
    """What the record holds, as its page 1 says it: ``prescription``, ``2 prescriptions``, ``no
    prescription: not enough answers``, ``no prescription: a cylinder without an axis`` (a
    two-parameter search without ``--axis``), ``no prescription: the study's estimate`` (a protocol
    without ``[stop]``), ``1 of 2 eyes prescribed``, or ``no prescription stored``."""
    eyes = [eye_record(info, result) for result in session_results(info)]
    prescribed = sum(eye.prescribed for eye in eyes)
    if not eyes:
        return "no prescription stored"
    if prescribed == len(eyes):
        return "prescription" if prescribed == 1 else f"{prescribed} prescriptions"
    if prescribed:
        return f"{prescribed} of {len(eyes)} eyes prescribed"
    if eyes[0].withheld_heading == NO_AXIS_HEADING:  # page 1's heading: more answers would not make it one
        return "no prescription: a cylinder without an axis"
    return "no prescription: " + ("the study's estimate" if eyes[0].fixed_design else "not enough answers")
