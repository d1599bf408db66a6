"""``lensopt sessions SESSION_ID``: one session's result in the words of its printed record's page 1,
in the terminal, and one-line refusals."""

from __future__ import annotations

import json
import sqlite3
import subprocess
import sys
from dataclasses import replace

import pytest
from test_print_cli import _store_prescription_session

from lensopt.cli import main
from lensopt.dashboard.prescription_text import NO_ACUITY, build_record
from lensopt.store import DUEL_KIND, DuelTrialRecord, ResultRecord, SessionStore
from lensopt.store.claim import claim_session


@pytest.fixture(scope="module")
def db(tmp_path_factory):
    """The stored full prescription of `lensopt print`'s tests (10 letters, short of the target), its
    result given a predicted acuity (one within the letters shown)."""
    path = tmp_path_factory.mktemp("session-view") / "sessions.db"
    sid = _store_prescription_session(path)
    with SessionStore(path) as store:
        store.set_result(sid, replace(store.session(sid).result, predicted_acuity_logmar=0.04))
    return path, sid


def _shown(capsys, *argv) -> list[str]:
    assert main(["sessions", *argv]) == 0
    captured = capsys.readouterr()
    assert captured.err == ""
    return captured.out.splitlines()


def test_a_session_is_shown_in_the_words_of_its_printed_record(db, capsys):
    """Every row of the record's page 1 — the session's rows, the eye's lens (here withheld: 10
    letters, short of the 0.95 target), each value with its interval, acuity, trials, stop reason,
    confidence, start, software — is a line of the view, label and value, and the last line gives
    the command that prints it."""
    path, sid = db
    lines = _shown(capsys, str(sid), "--db", str(path))
    with SessionStore(path, readonly=True) as store:
        record = build_record(store.session(sid), trials=store.trials(sid), db_path=path, verb="shown")
    (eye,) = record.eyes
    assert not eye.prescribed and lines[0] == record.title and lines[1] == record.method
    for label, value in record.session:
        if label != "Shown":  # its minute may have turned between the two
            assert any(line.startswith(label) and line.endswith(value) for line in lines), (label, value)
    assert f"{eye.eye}{' ' * (23 - len(eye.eye))}{eye.withheld_text}" in lines
    assert any(line.strip() == eye.provisional for line in lines)
    for label, value, interval in eye.rows:
        (row,) = [line for line in lines if line.startswith(f"  {label} ")]
        assert row.split()[-len(interval.split()) - len(value.split()) :] == [*value.split(), *interval.split()]
    (acuity,) = [line for line in lines if line.startswith("  Predicted acuity")]
    assert acuity.endswith(f"{eye.acuity} · Snellen {eye.snellen}")
    for label, value in (("Trials", eye.trials), ("Stopped", eye.stop_reason), ("Confidence", eye.confidence)):
        assert f"  {label:<21}{value}" in lines
    assert f"{'Starting refraction':<23}{record.start}" in lines
    assert any(line.startswith("Software") and "shown" in line and "printed" not in line for line in lines)
    assert lines[-1] == f"to print it: lensopt print {sid} --out session-{sid}.pdf --db {path.resolve()}"


def test_a_duel_session_says_why_it_has_no_acuity_and_counts_its_duels(tmp_path, capsys):
    """A full prescription by duels stores no predicted acuity: the view says so and where to measure
    it, as the record does, with no Snellen line."""
    path = tmp_path / "s.db"
    with SessionStore(path) as store:
        sid = store.create_session(
            "D1", {"protocol": {"name": "clinical-prescription-duel"}}, {}, {}, 1, kind=DUEL_KIND
        )
        for i in range(1, 4):
            store.append_duel_trial(
                sid, DuelTrialRecord(i, -1.0, -0.5, -0.75, -0.5, 0.2, "CDHKN", "first", 1.0, 1e9 + i, 1e9 + i + 1)
            )
        result = ResultRecord("-1.00 / -0.50 x 180", -1.0, -0.5, 180.0, None, None, 3, {})
        store.set_result(sid, replace(result, eye="OD"))
        store.set_status(sid, "finished")
    lines = _shown(capsys, str(sid), "--db", str(path))
    assert f"  {'Predicted acuity':<21}{NO_ACUITY}" in lines and not any("Snellen" in line for line in lines)
    assert any(line.strip().startswith("duels say which lens is clearer") for line in lines)
    assert f"  {'Trials':<21}3 duels" in lines and any("ended after 3 duels" in line for line in lines)


def test_an_interrupted_session_is_shown_with_the_command_that_continues_it(db, tmp_path, capsys):
    """Stored as running, run by no program: the view says it is not finished and how to continue it,
    as the record and `lensopt sessions` do."""
    path, sid = db
    copy = tmp_path / "copy.db"
    copy.write_bytes(path.read_bytes())
    copy.chmod(0o600)  # patient data: private, as lensopt makes its own
    with SessionStore(copy) as store:
        store.set_status(sid, "running")
    lines = _shown(capsys, str(sid), "--db", str(copy))
    assert any("interrupted" in line and f"lensopt run --resume {sid}" in line for line in lines[:3]), lines[:3]
    with claim_session(copy, sid):  # a program runs it: still running
        lines = _shown(capsys, str(sid), "--db", str(copy))
    assert any("still running" in line for line in lines[:3]), lines[:3]


def test_a_session_as_json_is_its_document_in_the_listing(db, capsys):
    path, sid = db
    assert main(["sessions", "--db", str(path), "--json"]) == 0
    (listed,) = json.loads(capsys.readouterr().out)
    assert json.loads("\n".join(_shown(capsys, str(sid), "--db", str(path), "--json"))) == listed


@pytest.mark.parametrize(
    ("argv", "fragment"),
    [
        (["99"], "no session 99"),
        (["0"], "positive integer"),
        (["1", "--participant", "P17"], "not both"),
        (["one"], "invalid int value"),
    ],
)
def test_a_bad_session_id_is_one_line_and_exit_2(db, capsys, argv, fragment):
    path, _ = db
    try:  # a refusal of the parser exits; one of the handler returns the code
        code = main(["sessions", *argv, "--db", str(path)])
    except SystemExit as exc:
        code = exc.code
    assert code == 2
    captured = capsys.readouterr()
    assert captured.err.count("\n") == 1 and fragment in captured.err and "Traceback" not in captured.err
    assert captured.out == ""


def test_a_session_is_shown_by_the_core_install_without_matplotlib_qt_or_psychopy(db, tmp_path):
    """A plain ``pip install lensopt`` (no optional part) shows a session: the view imports no UI."""
    path, sid = db
    code = (
        "import sys\n"
        "for name in ('matplotlib', 'PyQt5', 'psychopy'):\n"
        "    sys.modules[name] = None  # as if not installed: importing it raises ModuleNotFoundError\n"
        "from lensopt.cli import main\n"
        "sys.exit(main(['sessions', sys.argv[2], '--db', sys.argv[1]]))\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", code, str(path), str(sid)], capture_output=True, text=True, cwd=tmp_path, timeout=120
    )
    assert done.returncode == 0 and done.stderr == "", done.stderr
    assert "95 % credible interval" in done.stdout and f"lensopt print {sid}" in done.stdout


def test_a_damaged_session_is_one_line_naming_it_and_exit_2(db, tmp_path, capsys):
    """A session whose stored row another program changed: named, with the field and the fix."""
    path, sid = db
    copy = tmp_path / "damaged.db"
    copy.write_bytes(path.read_bytes())
    with sqlite3.connect(copy) as conn:
        conn.execute("UPDATE sessions SET status = 'weird' WHERE id = ?", (sid,))
    conn.close()
    assert main(["sessions", str(sid), "--db", str(copy)]) == 2
    captured = capsys.readouterr()
    assert captured.out == "" and captured.err.count("\n") == 1 and "Traceback" not in captured.err
    assert f"session {sid}" in captured.err and "'weird'" in captured.err and "restore it from a copy" in captured.err
