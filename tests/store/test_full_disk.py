"""The read-only commands on a database whose disk is full, on a real full file system.

A session database is a WAL file; SQLite reads it through a ``-shm`` index it creates beside it and
gives 32 KiB at once, which it cannot on a full disk ("disk I/O error"). The read-only commands then
read the file ``immutable`` as in a folder the reader cannot write (:mod:`lensopt.store.readonly`),
when everything is in the file; answers left in a ``-wal`` without its index are refused in one line
saying the disk is full; a writer's failure says the disk is full, not "disk I/O error".

Each test mounts a small tmpfs in a private mount namespace (``unshare --map-root-user --mount``: no
privilege needed, the mount vanishes with the namespace), fills it, and runs the commands there
(:data:`DRIVER`); it is skipped where user namespaces are not allowed.
"""

from __future__ import annotations

import csv
import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

PROJECT_ROOT = Path(__file__).resolve().parents[2]

#: Run inside the namespace: ``DRIVER DISK OUT SCENARIO``. Mounts a 256 KiB tmpfs on DISK, makes the
#: databases there with the store API, fills the disk, runs the commands (their output to OUT, on
#: another disk) and writes what happened to OUT/report.json.
DRIVER = r"""
import hashlib, json, os, signal, subprocess, sys
from pathlib import Path
sys.path.insert(0, sys.argv[4])
disk, out, scenario = Path(sys.argv[1]), Path(sys.argv[2]), sys.argv[3]
subprocess.run(["mount", "-t", "tmpfs", "-o", "size=256k", "tmpfs", str(disk)], check=True)
from lensopt.store import SessionStore, TrialRecord

def trial(i):
    return TrialRecord(i, 0.25 * i, -0.5, 0.3, "K", "K", i % 2 == 1, 0.9, 1.7e9 + i, 1.7e9 + i + 0.9)

db = disk / "f.db"
if scenario == "answers-in-the-wal":  # a writer killed: its answers in the -wal; the -shm not copied
    child = os.fork()
    if child == 0:
        store = SessionStore(db)
        sid = store.create_session("P001", {}, {}, {}, 3)
        for i in range(1, 4):
            store.append_trial(sid, trial(i))
        os.kill(os.getpid(), signal.SIGKILL)
    os.waitpid(child, 0)
    os.remove(f"{db}-shm")
else:
    with SessionStore(db) as store:
        sid = store.create_session("P001", {"rule": "ucb-ald"}, {}, {}, 3)
        for i in range(1, 5):
            store.append_trial(sid, trial(i))
        store.set_status(sid, "finished")
with open(disk / "filler", "wb", buffering=0) as filler:  # the disk full
    try:
        while True:
            filler.write(b"\0" * 1024)
    except OSError:
        pass
stat = os.statvfs(disk)

def files():
    return {p.name: hashlib.sha256(p.read_bytes()).hexdigest() for p in sorted(disk.iterdir()) if p.name != "filler"}

before = files()
runs = {}
commands = {
    "sessions": ["sessions", "--db", str(db)],
    "sessions-json": ["sessions", "--json", "--db", str(db)],
    "export": ["export", "1", "--db", str(db), "-o", str(out / "one.csv")],
    "print": ["print", "1", "--db", str(db), "--out", str(out / "record.pdf")],
}
for name, argv in commands.items():
    done = subprocess.run([sys.executable, "-m", "lensopt", *argv], capture_output=True, text=True, timeout=300)
    runs[name] = [done.returncode, done.stdout, done.stderr]
after = files()
try:
    with SessionStore(db) as store:
        store.create_session("P002", {}, {}, {}, 4)
    writer = "written"
except Exception as exc:
    writer = f"{type(exc).__name__}: {exc}"
report = {"free": stat.f_bavail * stat.f_frsize, "before": before, "after": after, "runs": runs, "writer": writer}
(out / "report.json").write_text(json.dumps(report))
"""


def full_disk(tmp_path, scenario: str) -> dict:
    """What :data:`DRIVER` saw on a full disk in ``scenario``; skipped where it cannot mount one."""
    unshare = shutil.which("unshare")
    if unshare is None:
        pytest.skip("unshare (util-linux) is not installed")
    probe = subprocess.run([unshare, "--map-root-user", "--mount", "true"], capture_output=True, text=True)
    if probe.returncode != 0:
        pytest.skip(f"user and mount namespaces are not allowed here: {probe.stderr.strip()}")
    disk, out = tmp_path / "disk", tmp_path / "out"
    disk.mkdir()
    out.mkdir()
    done = subprocess.run(
        [
            unshare,
            "--map-root-user",
            "--mount",
            sys.executable,
            "-c",
            DRIVER,
            str(disk),
            str(out),
            scenario,
            str(PROJECT_ROOT),
        ],
        capture_output=True,
        text=True,
        timeout=900,
    )
    if done.returncode != 0 and "mount:" in done.stderr:  # mount's own complaint
        pytest.skip(f"a tmpfs cannot be mounted here: {done.stderr.strip()[-300:]}")
    assert done.returncode == 0, done.stderr
    report = json.loads((out / "report.json").read_text())
    assert report["free"] < 32 * 1024, "the disk was full"
    return report


def one_line_error(run, command: str) -> str:
    code, _, err = run
    assert code == 2 and "Traceback" not in err and err.count("\n") == 1, run
    assert err.startswith(f"lensopt {command}: error: ")
    return err


def test_the_read_only_commands_read_a_database_on_a_full_disk_and_change_nothing(tmp_path):
    report = full_disk(tmp_path, "complete")
    runs = report["runs"]
    for name, (code, _, err) in runs.items():
        assert code == 0, (name, err)
    rows = runs["sessions"][1].splitlines()
    assert rows[0].split()[:2] == ["id", "participant"] and rows[1].split()[:6] == [
        "1",
        "P001",
        "letters",
        "-",
        "finished",
        "4",
    ]
    assert [s["n_trials"] for s in json.loads(runs["sessions-json"][1])] == [4]
    exported = list(csv.DictReader((tmp_path / "out" / "one.csv").open()))
    assert [row["trial_index"] for row in exported] == ["1", "2", "3", "4"]
    assert (tmp_path / "out" / "record.pdf").read_bytes().startswith(b"%PDF")
    assert report["after"]["f.db"] == report["before"]["f.db"]  # the database byte for byte


def test_a_writer_on_a_full_disk_is_told_the_disk_is_full(tmp_path):
    writer = full_disk(tmp_path, "complete")["writer"]
    assert writer.startswith("StoreError: the disk holding ") and " is full" in writer, writer
    assert "free space" in writer and "I/O error;" not in writer


def test_answers_in_a_wal_without_its_index_on_a_full_disk_are_refused_in_one_line(tmp_path):
    """Read ``immutable``, the answers in the -wal would be silently missing: refused, saying the disk
    is full and what to do, and nothing changed."""
    report = full_disk(tmp_path, "answers-in-the-wal")
    for name, command in (("sessions", "sessions"), ("export", "export"), ("print", "print")):
        err = one_line_error(report["runs"][name], command)
        assert "f.db-wal holds answers" in err and "is full" in err and "free space" in err, err
    assert not (tmp_path / "out" / "one.csv").exists()
    assert report["after"]["f.db"] == report["before"]["f.db"]
    assert report["after"]["f.db-wal"] == report["before"]["f.db-wal"]
