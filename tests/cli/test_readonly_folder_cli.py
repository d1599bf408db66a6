"""The read-only commands on a database in a folder the user cannot write (issue 19).

A session database is a WAL file; SQLite reads it through a ``-shm`` index it creates beside it, which
it cannot do in a folder the reader cannot write (a colleague's sessions, a read-only share). These
tests make a real database with the store API, make its folder ``0555`` and the file ``0444``, and run
``lensopt sessions``, ``export``, ``print`` and ``dashboard`` as an unprivileged user (``nobody``
through ``setpriv`` when the tests run as root; the test user itself otherwise):

- a database that holds everything in its file is read, and nothing is written (the file byte for
  byte, the folder's listing unchanged);
- a ``-wal`` beside it holding committed answers but no ``-shm`` (files copied without it) cannot be
  read there without losing those answers: one line saying what to do, exit 2, nothing changed; and
  the advice works;
- a writer's leftover ``-wal`` and ``-shm`` (a killed session) are read as they are, answers included;
- a file changed by another program while it is read is a one-line error, not a mixed read.
"""

from __future__ import annotations

import csv
import hashlib
import io
import json
import os
import shutil
import stat
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
N_LETTER_TRIALS = 12
N_RX_TRIALS = 8
#: The read-only commands (besides ``sessions``) and what each one writes, given an output folder.
COMMANDS = {
    "export-csv": lambda out: ["export", "1", "2"],
    "export-json": lambda out: ["export", "--all", "--format", "json", "-o", str(out / "all.json")],
    "print": lambda out: ["print", "2", "--out", str(out / "rx.pdf")],
    "dashboard-report": lambda out: ["dashboard", "1", "--report", str(out / "report.pdf")],
    "dashboard-replay": lambda out: ["dashboard", "2", "--replay", "--screenshot", str(out / "replay.png")],
}


def _letter_session(store) -> int:
    from letter_answers import store_letter_answers

    from lensopt.observer import SimulatedPatient
    from lensopt.refraction.letters import RefractionOptimizer

    opt = RefractionOptimizer(rule="random", seed=3)
    patient = SimulatedPatient(-0.5, 1.0, slope=5.0, seed=3)
    sid = store.create_session("P03", {}, {}, opt.settings_dict(), 3)
    store_letter_answers(store, sid, opt, patient, N_LETTER_TRIALS)
    store.set_status(sid, "finished")
    return sid


def _prescription_session(store) -> int:
    from lensopt.observer import SimulatedPatient
    from lensopt.refraction.prescription_letters import PrescriptionOptimizer
    from lensopt.store import ResultRecord, TrialRecord

    opt = PrescriptionOptimizer(start="-1.00 / -0.50 x 180", seed=5)
    patient = SimulatedPatient(-1.25, -0.75, slope=14.0, axis_deg=170.0, seed=5)
    sid = store.create_session("P17", {}, {}, opt.settings_dict(), 5)
    for i in range(1, N_RX_TRIALS + 1):
        trial = opt.ask()
        correct = bool(patient.respond(trial.letter_logmar, trial.sphere_d, trial.cylinder_d, trial.axis_deg))
        opt.tell(trial, correct)
        record = TrialRecord(
            i,
            trial.sphere_d,
            trial.cylinder_d,
            trial.letter_logmar,
            "K",
            "K",
            correct,
            1.0,
            10.0 * i,
            10.0 * i + 1,
            axis_deg=trial.axis_deg,
        )
        store.append_trial(sid, record)
    rx = opt.prescription()
    intervals = {k: list(v) for k, v in rx.intervals.items()}
    lens = rx.lens
    result = ResultRecord(
        rx.text, lens.sphere_d, lens.cylinder_d, lens.axis_deg, None, rx.confidence, rx.trials, intervals
    )
    store.set_result(sid, result)
    store.set_status(sid, "finished")
    return sid


def _build_sessions(store) -> None:
    assert _letter_session(store) == 1
    assert _prescription_session(store) == 2


def _digest(folder: Path) -> dict[str, str]:
    """Every file of ``folder`` by name: its SHA-256 and mode."""
    return {
        p.name: f"{hashlib.sha256(p.read_bytes()).hexdigest()} {stat.S_IMODE(p.stat().st_mode):o}"
        for p in sorted(folder.iterdir())
    }


def _freeze(folder: Path) -> None:
    for p in folder.iterdir():
        p.chmod(0o444)
    folder.chmod(0o555)


@pytest.fixture(scope="module")
def frozen_db(user):
    """A real WAL session database (a letter session, a prescription session) in a 0555 folder, 0444."""
    from lensopt.store import SessionStore

    folder = user.base / "clean"
    folder.mkdir()
    db = folder / "sessions.db"
    with SessionStore(db) as store:
        _build_sessions(store)
    assert (db.read_bytes()[18], db.read_bytes()[19]) == (2, 2), "a WAL database"
    assert sorted(p.name for p in folder.iterdir()) == ["sessions.db"]
    _freeze(folder)
    return db


def _assert_one_line_error(result, command, *fragments):
    assert result.returncode == 2, (result.returncode, result.stdout, result.stderr)
    assert "Traceback" not in result.stderr
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1, result.stderr
    assert lines[0].startswith(f"lensopt {command}: error: "), lines[0]
    for fragment in fragments:
        assert fragment in lines[0], lines[0]


def test_the_read_only_commands_read_a_database_in_a_read_only_folder_and_write_nothing(user, frozen_db):
    before = _digest(frozen_db.parent)
    out = user.folder("out")

    listing = user.lensopt("sessions", "--db", frozen_db)
    assert listing.returncode == 0, listing.stderr
    rows = listing.stdout.splitlines()
    assert rows[0].split()[:2] == ["id", "participant"] and len(rows) == 3
    assert "P03" in rows[1] and str(N_LETTER_TRIALS) in rows[1].split()
    assert "P17" in rows[2] and " / " in rows[2]  # the stored prescription
    as_json = user.lensopt("sessions", "--db", frozen_db, "--json")
    assert as_json.returncode == 0, as_json.stderr
    assert [s["n_trials"] for s in json.loads(as_json.stdout)] == [N_LETTER_TRIALS, N_RX_TRIALS]

    results = {name: user.lensopt(*argv(out), "--db", frozen_db) for name, argv in COMMANDS.items()}
    for name, result in results.items():
        assert result.returncode == 0, (name, result.stderr)
        assert "Traceback" not in result.stderr, (name, result.stderr)
    rows = list(csv.DictReader(io.StringIO(results["export-csv"].stdout)))
    assert [int(r["session_id"]) for r in rows] == [1] * N_LETTER_TRIALS + [2] * N_RX_TRIALS
    documents = json.loads((out / "all.json").read_text())
    assert [len(d["trials"]) for d in documents] == [N_LETTER_TRIALS, N_RX_TRIALS]
    for name in ("rx.pdf", "report.pdf"):
        assert (out / name).read_bytes().startswith(b"%PDF"), name
    assert (out / "replay.png").read_bytes().startswith(b"\x89PNG")

    assert _digest(frozen_db.parent) == before  # no -shm, no -wal, the file byte for byte


def _copy_while_writing(user, name: str, suffixes) -> Path:
    """A writer's files copied while it is open, its answers in its ``-wal`` (not yet checkpointed):
    the database and the ``suffixes`` files, into a new read-only folder."""
    from lensopt.store import SessionStore

    live = user.base / f"{name}-live"
    live.mkdir()
    copy = user.base / name
    copy.mkdir()
    with SessionStore(live / "sessions.db") as store:
        _build_sessions(store)
        for suffix in ("", *suffixes):
            shutil.copyfile(live / f"sessions.db{suffix}", copy / f"sessions.db{suffix}")
    assert (copy / "sessions.db-wal").stat().st_size > 32  # the answers are in the log
    _freeze(copy)
    return copy / "sessions.db"


def test_a_wal_with_answers_but_no_shm_is_refused_in_one_line_and_nothing_changes(user):
    db = _copy_while_writing(user, "wal-without-shm", ["-wal"])
    before = _digest(db.parent)
    out = user.folder("out-wal")

    _assert_one_line_error(user.lensopt("sessions", "--db", db), "sessions", "sessions.db-wal", "copy", "--db")
    for argv in COMMANDS.values():
        command = argv(out)[0]
        _assert_one_line_error(user.lensopt(*argv(out), "--db", db), command, "sessions.db-wal", "copy")
    assert list(out.iterdir()) == []
    assert _digest(db.parent) == before

    # the advice: both files copied together into a folder the user can write, every answer is there
    mine = user.folder("mine")
    for suffix in ("", "-wal"):
        shutil.copyfile(db.parent / f"sessions.db{suffix}", mine / f"sessions.db{suffix}")
    as_json = user.lensopt("sessions", "--db", mine / "sessions.db", "--json")
    assert as_json.returncode == 0, as_json.stderr
    assert [s["n_trials"] for s in json.loads(as_json.stdout)] == [N_LETTER_TRIALS, N_RX_TRIALS]


def test_a_killed_writers_wal_and_shm_are_read_as_they_are(user):
    db = _copy_while_writing(user, "wal-and-shm", ["-wal", "-shm"])
    before = _digest(db.parent)

    as_json = user.lensopt("sessions", "--db", db, "--json")
    assert as_json.returncode == 0, as_json.stderr
    assert [s["n_trials"] for s in json.loads(as_json.stdout)] == [N_LETTER_TRIALS, N_RX_TRIALS]
    exported = user.lensopt("export", "2", "--db", db)
    assert exported.returncode == 0, exported.stderr
    assert len(list(csv.DictReader(io.StringIO(exported.stdout)))) == N_RX_TRIALS
    assert _digest(db.parent) == before


READ_TWICE = """
import sys
from lensopt.errors import StoreError
from lensopt.store import SessionStore

store = SessionStore(sys.argv[1], readonly=True)
print(store.immutable, len(store.sessions()), flush=True)
sys.stdin.readline()  # the test changes the file meanwhile
for read in (store.sessions, store.data_version):
    try:
        read()
        print("read")
    except StoreError as exc:
        print("error:", exc)
"""


def test_a_file_changed_while_it_is_read_immutable_is_a_one_line_error(user):
    from lensopt.store import SessionStore

    folder = user.base / "changing"
    folder.mkdir()
    db = folder / "sessions.db"
    with SessionStore(db) as store:
        _letter_session(store)
    _freeze(folder)

    reader = subprocess.Popen(
        [*user.prefix, sys.executable, "-c", READ_TWICE, str(db)],
        cwd=REPO,
        env=user.env,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        assert reader.stdout is not None and reader.stdin is not None
        assert reader.stdout.readline().split() == ["True", "1"]
        if os.geteuid() == 0:  # root writes where the reader cannot
            with SessionStore(db) as store:
                store.set_status(1, "aborted")
        else:
            folder.chmod(0o755)
            with SessionStore(db) as store:
                store.set_status(1, "aborted")
        out, err = reader.communicate("\n", timeout=60)
    finally:
        if reader.poll() is None:
            reader.kill()
    lines = out.splitlines()
    assert len(lines) == 2 and all(line.startswith("error: ") for line in lines), (out, err)
    assert "was changed by another program while lensopt read it" in lines[0]
    assert "run the command again" in lines[0]
