"""A JSON file a command writes whole, over the one already there (``lensopt hyperparameters
--output``, ``lensopt bench rescale --out``): refused before the work when writing it would lose
something — the session database, or a file that is not of the command's own kind."""

from __future__ import annotations

import json
from pathlib import Path

from lensopt.cli.arguments import check_output_file
from lensopt.store import check_not_the_database, default_db_path

#: The first bytes of an SQLite file (a session database, a campaign's): never a command's JSON output.
SQLITE_HEADER = b"SQLite format 3\x00"


def check_replaced_json_output(flag: str, output, what: str, replaced_by: str, key: str | None = None) -> dict | None:
    """Refuse, in one line and before any work, an output that cannot be written, that is the
    session database (or one of its files, or a link to it), or that holds anything but a JSON object
    of the command's own kind (``what``, e.g. "hyperparameters"; with the entry ``key`` if given):
    ``replaced_by`` (e.g. "the fit") replaces the file, and a database written over loses every
    session it held. Returns the JSON object already in the file (None: no file, or an empty one)."""
    check_output_file(flag, output)
    check_not_the_database(flag, output, default_db_path())
    path = Path(output)
    if not path.is_file():
        return None
    try:
        raw = path.read_bytes()
    except OSError as exc:
        raise ValueError(f"{flag} {output}: cannot read it ({exc.strerror or exc}); choose another file name") from None
    if not raw.strip():
        return None
    fix = f"{replaced_by} would replace it; choose another file name (a .json file of its own)"
    if raw.startswith(SQLITE_HEADER):
        raise ValueError(f"{flag} {output} is an SQLite database (a session database?), not a {what} JSON file; {fix}")
    try:
        document = json.loads(raw.decode("utf-8-sig"))
    except (UnicodeDecodeError, ValueError):
        document = None
    if not isinstance(document, dict):
        raise ValueError(f"{flag} {output} is not a {what} JSON file (no JSON object in it); {fix}")
    if key is not None and key not in document:
        raise ValueError(f"{flag} {output} is not a {what} JSON file (no {key!r} entry in it); {fix}")
    return document
