"""Sessions run by ``lensopt run`` with different letter sets, exported together: every row says
which protocol and how many letters (the guess rate's 1/n) it had (acceptance)."""

import csv
import io
import subprocess
import sys

from experiment_helpers import FAST, REPO, needs_display, write_protocol

pytestmark = needs_display


def lensopt(*args):
    return subprocess.run(
        [sys.executable, "-m", "lensopt", *map(str, args)], cwd=REPO, capture_output=True, text=True, timeout=300
    )


def test_a_26_letter_and_a_sloan_session_run_then_exported_together_name_their_alternatives(tmp_path):
    db = tmp_path / "s.db"
    for name, alphabet, participant in (
        ("all26", "ABCDEFGHIJKLMNOPQRSTUVWXYZ", "S01"),
        ("sloan10", "CDHKNORSVZ", "S02"),
    ):
        protocol = write_protocol(
            tmp_path / f"{name}.toml", **FAST, **{"protocol.name": f'"{name}"', "letters.alphabet": f'"{alphabet}"'}
        )
        run = lensopt(
            "run", "--protocol", protocol, "--participant", participant, "--observer", "simulated",
            "--seed", 5, "--trials", 3, "--db", db,
        )  # fmt: skip
        assert run.returncode == 0, run.stderr[-2000:]

    for fmt in ("csv", "psychopy"):
        export = lensopt("export", "--all", "--format", fmt, "--db", db)
        assert export.returncode == 0, export.stderr[-2000:]
        rows = list(csv.DictReader(io.StringIO(export.stdout)))
        assert [(r["protocol"], r["n_alternatives"], r["alphabet"]) for r in rows] == [
            ("all26", "26", "ABCDEFGHIJKLMNOPQRSTUVWXYZ")
        ] * 3 + [("sloan10", "10", "CDHKNORSVZ")] * 3
        assert {r["letter"] for r in rows[3:]} <= set("CDHKNORSVZ")
