"""``lensopt print``'s handler: a session's prescription record as a PDF (its options:
:mod:`lensopt.cli.print_record`)."""

from __future__ import annotations

import os
from pathlib import Path

from lensopt.dashboard.prescription_record import write_prescription_record
from lensopt.dashboard.prescription_text import session_results
from lensopt.errors import LensoptError
from lensopt.store import SessionStore, default_db_path


def check_output(path_text: str) -> Path:
    """The ``--out`` path, or a ``LensoptError`` naming what is wrong with it and the fix."""
    path = Path(path_text).expanduser()
    if path.suffix.lower() != ".pdf":
        raise LensoptError(f"--out {path} must end in .pdf (e.g. --out rx.pdf)")
    if path.is_dir():
        raise LensoptError(f"--out {path} is a folder; give a file name ending in .pdf")
    folder = path.parent
    if not folder.is_dir():
        raise LensoptError(f"--out {path}: folder {folder} does not exist; create it first or choose another --out")
    if not os.access(folder, os.W_OK | os.X_OK):
        raise LensoptError(f"--out {path}: folder {folder} is not writable; choose another --out")
    return path


def print_command(args) -> int:
    """Handler of ``lensopt print``."""
    if args.session_id < 1:
        raise LensoptError(
            f"SESSION_ID must be a positive integer, got {args.session_id}; list them with `lensopt sessions`"
        )
    out = check_output(args.out)
    db_path = Path(args.db).expanduser() if args.db else default_db_path()
    with SessionStore(db_path, readonly=True) as store:
        store.session(args.session_id)  # an unknown session is said before anything heavy is imported
        write_prescription_record(store, args.session_id, out)
        info = store.session(args.session_id)
    n_results = len(session_results(info))
    stored = "no prescription stored" if n_results == 0 else "prescription" if n_results == 1 else "prescriptions"
    print(f"prescription record of session {args.session_id} ({info.participant}, {stored}) written to {out}")
    return 0
