"""Where the session database lives and how a command names it: :func:`default_db_path`
(``$LENSOPT_DB``, else the XDG data folder), the ``--db`` of a printed command (:func:`db_option`,
:func:`resume_command`), and the refusal of an output file that is the database itself
(:func:`check_not_the_database`)."""

from __future__ import annotations

import os
import shlex
from pathlib import Path

from lensopt.errors import StoreError


def default_db_path() -> Path:
    """``$LENSOPT_DB``, else ``$XDG_DATA_HOME/lensopt/sessions.db`` (``~/.local/share/...``)."""
    explicit = os.environ.get("LENSOPT_DB")
    if explicit:
        return Path(explicit).expanduser()
    data_home = os.environ.get("XDG_DATA_HOME", "")
    if not os.path.isabs(os.path.expanduser(data_home)):  # unset, empty or relative: ignored, as the XDG
        data_home = os.path.join("~", ".local", "share")  # spec says (a relative one moved with the folder)
    return Path(data_home).expanduser() / "lensopt" / "sessions.db"


def db_option(db_path) -> str:
    """`` --db /absolute/path`` for any database a command names, ``""`` for None: what a printed or
    shown command names, absolute (and quoted for a shell) because it is read far from where the path
    was typed — on paper, in another folder, in a shell without the ``$LENSOPT_DB`` it ran with (which
    would resume another database's session of that number)."""
    if db_path is None:
        return ""
    return f" --db {shlex.quote(os.path.abspath(Path(db_path).expanduser()))}"


def resume_command(session_id: int, db_path=None, options: str = "") -> str:
    """``lensopt run --resume 7 --db /absolute/path`` (:func:`db_option`; without ``--db`` when no
    database is named): the command that continues a session, as the run, the console, the dashboard
    and the record give it. ``options`` (`` --no-fullscreen``) are the window options the run that
    prints it was given, which the same set-up needs again (a console beside a window, not on a chart)."""
    return f"lensopt run --resume {session_id}{options}{db_option(db_path)}"


def check_not_the_database(option: str, out_path, db_path) -> None:
    """A one-line ``StoreError`` when ``out_path`` (what ``option`` writes: an export, a record, a
    report) is the session database ``db_path`` or one of its companions (``-wal``, ``-shm``,
    ``-journal``, a session's rescue file): writing it would destroy every stored session."""
    out, db = Path(out_path).expanduser(), Path(db_path).expanduser()
    for path, what in ((out, f"{option} {out_path}"), (db, f"the session database {db}")):
        try:
            path.resolve()
        except RuntimeError:  # a loop of symbolic links (Python 3.11 raises this, not an OSError)
            raise StoreError(f"{what} is a loop of symbolic links; give a file itself") from None
    companions = [Path(f"{db}{suffix}") for suffix in ("", "-wal", "-shm", "-journal")]
    same = any(
        out.resolve() == c.resolve() or (out.exists() and c.exists() and os.path.samefile(out, c)) for c in companions
    )
    rescue = (
        out.resolve().name.startswith(f"{db.resolve().name}.session-") and out.resolve().parent == db.resolve().parent
    )
    if same or rescue:
        raise StoreError(
            f"{option} {out_path} is the session database {db} (or one of its files): writing it would destroy "
            "every stored session; choose another file name"
        )
