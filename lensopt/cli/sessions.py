"""``lensopt sessions`` lists the stored sessions; ``lensopt export`` writes some as CSV, PsychoPy's CSV or JSON.

A session that finished with a prescription (a full-prescription session, or a two-parameter letter
session's best lens, :mod:`lensopt.experiment.results`) shows it in clinical notation in the ``prescription`` column (one per eye, ``OD ...; OS ...``, for a session of both eyes),
and in ``--json`` as ``result`` and ``results`` (their fields, 95 % intervals included). The ``eye``
column is the eye tested (OD, OS, OU; ``-`` when the session named none).

``lensopt sessions SESSION_ID`` shows one session's result in the words of its printed record's page 1
(:mod:`lensopt.dashboard.record_text`), and the command that prints the record.

``--participant ID`` keeps the sessions of one participant (as given to ``lensopt run``) in either;
``lensopt sessions --last N`` the N most recent (a clinic's database holds thousands).
``lensopt export`` takes one session id, several, ``--participant ID`` or ``--all``, in one file (CSV: the rows of every
session, ``session_id`` first; JSON: one session's document, or an array of them); every session is
read before anything is written, so an unknown id writes nothing.

Both open the database read-only, so they are safe to run while an experiment is recording, and also
read a database in a folder the user cannot write, or on a full disk (:mod:`lensopt.store.readonly`),
writing nothing there. A session whose stored row another program changed is listed as ``damaged``
(a one-line warning names it and the field); ``export --all`` then refuses, naming it.
"""

from __future__ import annotations

from lensopt.cli.arguments import DB_HELP, Handler, positive_int
from lensopt.store.export import FORMATS


def register(subparsers) -> None:
    """Add the ``sessions`` and ``export`` subcommands."""
    listing = subparsers.add_parser(
        "sessions",
        help="list the stored sessions, or show one",
        description="List the sessions stored in the database (opened read-only); with SESSION_ID, show "
        "that session's result as its printed record's page 1 says it (per eye: the lens in clinical "
        "notation, 95 %% intervals, predicted acuity, trials, why it stopped, confidence).",
    )
    listing.add_argument(
        "session_id",
        metavar="SESSION_ID",
        type=int,
        nargs="?",
        help="show this session (id shown by `lensopt sessions`); with --json its stored document",
    )
    listing.add_argument("--db", metavar="PATH", help=DB_HELP)
    listing.add_argument("--json", action="store_true", help="print the sessions as JSON")
    listing.add_argument(
        "--participant", metavar="ID", help="only the sessions of participant ID (as given to `lensopt run`)"
    )
    listing.add_argument(
        "--last",
        type=positive_int,
        metavar="N",
        help="only the N most recent sessions (of the participant, with --participant), oldest first",
    )
    listing.set_defaults(handler=Handler("lensopt.cli.handlers.sessions:list_sessions"))

    export = subparsers.add_parser(
        "export",
        help="export sessions' trials as CSV, PsychoPy's CSV or JSON",
        description="Export stored sessions in one file: CSV has one row per trial and one column per "
        "value (the data dictionary: docs/data-dictionary.md in the source); psychopy is the same in PsychoPy's wide layout; JSON holds "
        "everything (session, calibration, protocol, optimizer settings, seed, software version, "
        "prescription per eye). Several sessions: their rows, session_id first (JSON: an array).",
    )
    export.add_argument(
        "session_ids", metavar="SESSION_ID", type=int, nargs="*", help="ids shown by `lensopt sessions`"
    )
    export.add_argument("--all", action="store_true", help="export every stored session, oldest first")
    export.add_argument(
        "--participant",
        metavar="ID",
        help="export every session of participant ID (as given to `lensopt run`), oldest first",
    )
    export.add_argument(
        "--format",
        dest="fmt",
        metavar="|".join(FORMATS),
        help="export format (default: json for an -o FILE.json, else csv; a format the file name contradicts is refused)",
    )
    export.add_argument("--db", metavar="PATH", help="session database (default: as for `lensopt sessions`)")
    export.add_argument("--output", "-o", metavar="FILE", help="write to FILE instead of standard output")
    export.set_defaults(handler=Handler("lensopt.cli.handlers.sessions:export_command"))
