"""Commands that write, where the user cannot: real folders and files made read-only with ``chmod``,
the commands run as a user who cannot write them (``user``, tests/cli/conftest.py: ``nobody`` when
the tests run as root).

- ``lensopt export -o FILE`` and ``lensopt print --out FILE`` in a read-only folder: an existing FILE
  the user can write is written over in place (the folder refuses the new file an atomic write
  renames); a new FILE is one line naming the folder and what to do, exit 2;
- ``lensopt run`` on a database that is read-only, or in a read-only folder: one line saying which is
  read-only and what to do, exit 2, no traceback, the database unchanged.
"""

from __future__ import annotations

import csv
import hashlib
import io
import os
import shutil
import stat
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
N_TRIALS = 4


def _database(folder: Path) -> Path:
    """A real database in ``folder`` (made now): one letter session of the shipped demo protocol, quit
    after :data:`N_TRIALS` of its trials (a resume would continue it)."""
    from letter_answers import store_letter_answers

    from lensopt.experiment.protocol import load_protocol
    from lensopt.experiment.windows import calibration_from_protocol
    from lensopt.observer import SimulatedPatient
    from lensopt.refraction.letters import RefractionOptimizer
    from lensopt.store import SessionStore

    protocol = load_protocol(REPO / "protocols" / "demo-simulated.toml")
    optimizer = RefractionOptimizer(rule="random", seed=5)
    patient = SimulatedPatient(-0.5, 1.0, slope=5.0, seed=5)
    db = folder / "sessions.db"
    with SessionStore(db) as store:
        sid = store.create_session(
            "P05", protocol.to_dict(), calibration_from_protocol(protocol).to_dict(), optimizer.settings_dict(), 5
        )
        store_letter_answers(store, sid, optimizer, patient, N_TRIALS)
        store.set_status(sid, "aborted")
    return db


def _owned(user, path: Path, mode: int) -> Path:
    """``path`` given to the test's user, with ``mode``."""
    if os.geteuid() == 0:
        os.chown(path, user.uid, user.gid)
    path.chmod(mode)
    return path


def _digest(folder: Path) -> dict[str, str]:
    return {
        p.name: f"{hashlib.sha256(p.read_bytes()).hexdigest()} {stat.S_IMODE(p.stat().st_mode):o}"
        for p in sorted(folder.iterdir())
    }


def _assert_one_line_error(result, command, *fragments):
    assert result.returncode == 2, (result.returncode, result.stdout, result.stderr)
    assert "Traceback" not in result.stderr
    lines = [line for line in result.stderr.strip().splitlines() if "WARNING" not in line]  # PsychoPy's own
    assert len(lines) == 1, result.stderr
    assert lines[0].startswith(f"lensopt {command}: error: "), lines[0]
    for fragment in fragments:
        assert fragment in lines[0], lines[0]
    return lines[0]


@pytest.fixture(scope="module")
def db(user):
    folder = user.folder("db")
    return _owned(user, _database(folder), 0o600)


def test_an_export_over_a_writable_file_in_a_read_only_folder_is_written_in_place(user, db):
    out = user.folder("exports")
    earlier = out / "p05.csv"
    earlier.write_text("an earlier export, longer than the new one\n" * 50)
    _owned(user, earlier, 0o644)
    out.chmod(0o555)

    result = user.lensopt("export", "1", "--db", db, "-o", earlier)
    assert result.returncode == 0, result.stderr
    assert "Traceback" not in result.stderr
    rows = list(csv.DictReader(io.StringIO(earlier.read_text())))
    assert [int(r["trial_index"]) for r in rows] == list(range(1, N_TRIALS + 1))
    assert stat.S_IMODE(earlier.stat().st_mode) == 0o600  # private now: it holds the session
    assert [p.name for p in out.iterdir()] == ["p05.csv"]  # no temporary file left behind

    # a new file there cannot be made: one line naming the folder and what to do
    error = _assert_one_line_error(user.lensopt("export", "1", "--db", db, "-o", out / "new.csv"), "export")
    assert f"cannot write in {out} (Permission denied)" in error
    assert "make the folder writable or choose another --output in a folder you can write" in error
    assert [p.name for p in out.iterdir()] == ["p05.csv"]


def test_a_record_printed_over_a_writable_pdf_in_a_read_only_folder_is_written_in_place(user, db):
    out = user.folder("records")
    earlier = out / "rx.pdf"
    earlier.write_bytes(b"not yet a record")
    _owned(user, earlier, 0o600)
    out.chmod(0o555)

    result = user.lensopt("print", "1", "--db", db, "--out", earlier)
    assert result.returncode == 0, result.stderr
    assert earlier.read_bytes().startswith(b"%PDF")
    assert [p.name for p in out.iterdir()] == ["rx.pdf"]

    error = _assert_one_line_error(user.lensopt("print", "1", "--db", db, "--out", out / "new.pdf"), "print")
    assert f"folder {out} is not writable; make it writable or choose another --out" in error


def _resume(user, db: Path):
    """``lensopt run --resume 1``: refused before a window opens (no display needed)."""
    return user.lensopt("run", "--resume", "1", "--db", db, unset=("DISPLAY", "WAYLAND_DISPLAY"))


def test_run_on_a_read_only_database_file_says_so_and_how_to_make_it_writable(user):
    folder = user.folder("readonly-file")
    db = _owned(user, _database(folder), 0o444)
    before = _digest(folder)
    error = _assert_one_line_error(_resume(user, db), "run")
    assert f"database {db} cannot be written: the database file is read-only for this user (mode 0444)" in error
    assert f"make it writable with `chmod u+w {db}`" in error
    assert "or use --db to choose a database in a folder you can write" in error
    # nothing beside it: SQLite's -wal and -shm were created (read-only, like the file) and left there,
    # and once the file was made writable the next run was refused on its -shm
    assert _digest(folder) == before
    _owned(user, db, 0o644)
    assert _digest(folder).keys() == before.keys()
    _assert_writes(user, db)


#: A writer's first steps on the database: the lock taken, a status written.
_WRITE = (
    "import sys; from lensopt.store import SessionStore\n"
    "with SessionStore(sys.argv[1], create=False) as store:\n"
    "    store.check_writable(); store.set_status(1, 'aborted')\n"
    "print('written')"
)


def _assert_writes(user, db: Path) -> None:
    """The user's writer takes the lock on ``db`` and writes a status (:data:`_WRITE`)."""
    written = user.run([sys.executable, "-c", _WRITE, str(db)])
    assert written.returncode == 0 and written.stdout.strip() == "written", written.stderr


def test_run_on_a_database_in_a_read_only_folder_says_the_folder_is_read_only(user):
    folder = user.folder("readonly-folder")
    db = _owned(user, _database(folder), 0o600)
    folder.chmod(0o555)
    before = _digest(folder)
    error = _assert_one_line_error(_resume(user, db), "run")
    assert f"its folder {folder} is read-only for this user (mode 0555" in error
    assert "SQLite writes sessions.db-wal and sessions.db-shm beside the database" in error
    assert f"make it writable with `chmod u+w {folder}`" in error
    assert "use --db to choose a database in a folder you can write" in error
    assert _digest(folder) == before


@pytest.mark.skipif(not os.environ.get("DISPLAY"), reason="a new session opens its window first: run under xvfb-run")
def test_a_new_session_in_a_read_only_folder_says_the_database_cannot_be_created_there(user):
    xauthority = os.environ.get("XAUTHORITY")
    if xauthority and os.path.isfile(xauthority):  # xvfb-run's, which the user may not read: a copy of their own
        user.env["XAUTHORITY"] = str(_owned(user, Path(shutil.copy(xauthority, user.home / "Xauthority")), 0o600))
    folder = user.folder("readonly-empty")
    folder.chmod(0o555)
    db = folder / "sessions.db"
    result = user.lensopt("run", "--protocol", "demo-simulated", "--participant", "X", "--trials", "2", "--db", db)
    error = _assert_one_line_error(result, "run")
    assert f"its folder {folder} is read-only for this user (mode 0555" in error
    assert "the database cannot be created in it" in error and "--db" in error
    assert list(folder.iterdir()) == []
