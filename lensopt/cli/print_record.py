"""``lensopt print``: a session's printable prescription record (two A4 pages, three for a full prescription; PDF).

    lensopt print SESSION_ID [--db PATH] --out rx.pdf

Page 1 is the prescription a clinician signs (per eye: clinical notation, 95 % intervals,
predicted acuity, trials, stop reason, confidence in words); page 2 the session's curves as the
dashboard draws them (:mod:`lensopt.dashboard.prescription_record`). A session without a stored
prescription gets a page saying so and why. The database is opened read-only (safe while a session
records); the PDF is readable by its owner only (mode 0600: patient data). The handler, which
imports matplotlib and the optimizers: :mod:`lensopt.cli.handlers.print_record`.
"""

from __future__ import annotations

from lensopt.cli.arguments import DB_HELP, Handler


def register(subparsers) -> None:
    """Add the ``print`` subcommand."""
    parser = subparsers.add_parser(
        "print",
        help="write a session's printable prescription record (PDF: the prescription to sign, then the curves)",
        description="Write the prescription record of a stored session as an A4 PDF: page 1 the "
        "prescription per eye in clinical notation with its 95 % credible intervals, predicted acuity, "
        "trials, stop reason, confidence, the clinician's notes, lenses set and answers undone, starting "
        "refraction, software version and a signature line (none for a simulated patient's session); "
        "page 2 the session's curves; page 3, for a full prescription, each eye's model (astigmatism plane, "
        "defocus curve). The file is readable by its owner only (0600).",
    )
    parser.add_argument("session_id", metavar="SESSION_ID", type=int, help="id shown by `lensopt sessions`")
    parser.add_argument("--db", metavar="PATH", help=DB_HELP)
    parser.add_argument(
        "--out", "-o", metavar="FILE.pdf", required=True, help="the PDF to write (replaced if it exists)"
    )
    parser.set_defaults(handler=Handler("lensopt.cli.handlers.print_record:print_command"))
