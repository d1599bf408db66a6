"""``lensopt print``: a session's printable prescription record (two A4 pages, PDF).

    lensopt print SESSION_ID [--db PATH] --out rx.pdf

Page 1 is the prescription a clinician signs (per eye: clinical notation, 95 % intervals,
predicted acuity, trials, stop reason, confidence in words); page 2 the session's curves as the
dashboard draws them (:mod:`lensopt.dashboard.prescription_record`). A session without a stored
prescription gets a page saying so and why. The database is opened read-only (safe while a session
records); the PDF is readable by its owner only (mode 0600: patient data). matplotlib and the
optimizers are imported inside the handler, so ``lensopt --help`` stays fast.
"""

from __future__ import annotations

import os
from pathlib import Path

from lensopt.errors import LensoptError
from lensopt.store import SessionStore, default_db_path


def register(subparsers) -> None:
    """Add the ``print`` subcommand."""
    parser = subparsers.add_parser(
        "print",
        help="write a session's printable prescription record (PDF: the prescription to sign, then the curves)",
        description="Write the prescription record of a stored session as a two-page A4 PDF: page 1 the "
        "prescription per eye in clinical notation with its 95 % credible intervals, predicted acuity, "
        "trials, stop reason, confidence, starting refraction, software version and a signature line; "
        "page 2 the session's curves. The file is readable by its owner only (0600).",
    )
    parser.add_argument("session_id", metavar="SESSION_ID", type=int, help="id shown by `lensopt sessions`")
    parser.add_argument(
        "--db", metavar="PATH", help="session database (default: $LENSOPT_DB or ~/.local/share/lensopt/sessions.db)"
    )
    parser.add_argument(
        "--out", "-o", metavar="FILE.pdf", required=True, help="the PDF to write (replaced if it exists)"
    )
    parser.set_defaults(handler=print_command)


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
        # deferred: matplotlib, and the optimizers page 2 rebuilds (`lensopt --help` must not load them)
        from lensopt.dashboard.prescription_record import write_prescription_record
        from lensopt.dashboard.prescription_text import session_results

        write_prescription_record(store, args.session_id, out)
        info = store.session(args.session_id)
    n_results = len(session_results(info))
    stored = "no prescription stored" if n_results == 0 else "prescription" if n_results == 1 else "prescriptions"
    print(f"prescription record of session {args.session_id} ({info.participant}, {stored}) written to {out}")
    return 0
