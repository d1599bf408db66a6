"""``lensopt print``: the prescription record of a stored session, and one-line errors (exit code 2)."""

from __future__ import annotations

import os
import re
import shutil
import sqlite3
import subprocess
import sys

import pytest

from lensopt.cli import build_parser, main
from lensopt.stopping import confidence_text
from lensopt.store.claim import claim_session

N_TRIALS = 10


def _store_prescription_session(path) -> int:
    """A simulated full-prescription session with its stored result; returns its id."""
    from lensopt.observer import SimulatedPatient
    from lensopt.refraction.prescription_letters import PrescriptionOptimizer
    from lensopt.store import ResultRecord, SessionStore, TrialRecord

    opt = PrescriptionOptimizer(start="-1.00 / -0.50 x 180", seed=5)
    patient = SimulatedPatient(-1.25, -0.75, slope=14.0, axis_deg=170.0, seed=5)
    with SessionStore(path) as store:
        stop = {"confidence": 0.95, "min_trials": 20, "max_trials": 80}  # the clinical protocol's [stop]
        sid = store.create_session("P17", {"stop": stop}, {}, opt.settings_dict(), 5)
        for i in range(1, N_TRIALS + 1):
            trial = opt.ask()
            correct = bool(patient.respond(trial.letter_logmar, trial.sphere_d, trial.cylinder_d, trial.axis_deg))
            opt.tell(trial, correct)
            store.append_trial(
                sid,
                TrialRecord(
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
                ),
            )
        rx = opt.prescription()
        store.set_result(
            sid,
            ResultRecord(
                rx.text,
                rx.lens.sphere_d,
                rx.lens.cylinder_d,
                rx.lens.axis_deg,
                None,
                rx.confidence,
                rx.trials,
                {k: list(v) for k, v in rx.intervals.items()},
            ),
        )
        store.set_status(sid, "finished")
    return sid


@pytest.fixture(scope="module")
def db(tmp_path_factory):
    path = tmp_path_factory.mktemp("print-cli") / "sessions.db"
    return path, _store_prescription_session(path)


def _one_line_error(capsys, *fragments) -> None:
    captured = capsys.readouterr()
    err = captured.err
    assert err.count("\n") == 1 and err.startswith("lensopt print: error: "), err
    assert "Traceback" not in err and captured.out == ""
    for fragment in fragments:
        assert fragment in err, err


def test_print_writes_a_three_page_record_of_a_full_prescription_readable_by_its_owner_only(db, tmp_path, capsys):
    path, sid = db
    out = tmp_path / "rx.pdf"
    previous = os.umask(0o022)
    try:
        assert main(["print", str(sid), "--db", str(path), "--out", str(out)]) == 0
    finally:
        os.umask(previous)
    assert (
        capsys.readouterr().out
        == f"prescription record of session {sid} (P17, no prescription: not enough answers) written to {out}\n"
    )
    assert out.stat().st_mode & 0o777 == 0o600
    assert len(re.findall(rb"/Type\s*/Page(?![a-zA-Z])", out.read_bytes())) == 3  # record, curves, the eye's model


def _renamed(path, sid, tmp_path, participant: str):
    """A copy of the database ``path`` whose session ``sid`` is ``participant``'s."""
    copy = tmp_path / "renamed.db"
    shutil.copy(path, copy)
    with sqlite3.connect(copy) as con:
        con.execute("UPDATE sessions SET participant = ? WHERE id = ?", (participant, sid))
    con.close()
    return copy


def test_a_participant_named_in_chinese_is_printed_in_a_font_that_has_the_name(db, tmp_path, capsys):
    """李小龍 printed as empty boxes on every page of the record (DejaVu Sans has no CJK glyph), with
    a dozen matplotlib warnings; the record now falls back to an installed font (.ci/task installs
    fonts-wqy-microhei): the name is in the PDF's text, drawn in a font that has it, embedded."""
    path, sid = db
    copy = _renamed(path, sid, tmp_path, "Zoë 李小龍")
    out = tmp_path / "rx.pdf"
    command = [sys.executable, "-m", "lensopt", "print", str(sid), "--db", str(copy), "--out", str(out)]
    printed = subprocess.run(command, capture_output=True, text=True, timeout=300)
    assert printed.returncode == 0 and printed.stderr == "", printed.stderr  # no warning, nor log line
    assert "(Zoë 李小龍, " in printed.stdout
    text = subprocess.run(["pdftotext", str(out), "-"], capture_output=True, text=True, check=True).stdout
    assert text.count("李小龍") == 3  # every page names the participant
    fonts = subprocess.run(["pdffonts", str(out)], capture_output=True, text=True, check=True).stdout
    assert "WenQuanYi" in fonts, fonts  # the glyphs drawn are the fallback font's


def test_a_character_no_installed_font_has_is_said_in_one_line_not_a_warning_per_glyph(db, tmp_path, capsys):
    path, sid = db
    copy = _renamed(path, sid, tmp_path, "P 𓀀𓀁")  # Egyptian hieroglyphs: in no font lensopt falls back to
    out = tmp_path / "rx.pdf"
    assert main(["print", str(sid), "--db", str(copy), "--out", str(out)]) == 0
    err = capsys.readouterr().err.splitlines()
    assert err == [
        "note: no installed font has '𓀀𓀁', which print as empty boxes; install a font with them "
        "(Debian: fonts-wqy-microhei or fonts-noto-cjk) and print again"
    ]
    assert out.exists()


def test_print_is_listed_in_the_help():
    assert "print" in build_parser().format_help()


def _bad_inputs(tmp_path, path, sid):
    not_a_db = tmp_path / "notes.db"
    not_a_db.write_text("not a database\n" * 100)
    file_as_folder = tmp_path / "file"
    file_as_folder.write_text("x")
    return {
        "unknown session": ([str(sid + 99), "--db", str(path), "--out", str(tmp_path / "a.pdf")], "no session"),
        "not a lensopt database": (
            [str(sid), "--db", str(not_a_db), "--out", str(tmp_path / "a.pdf")],
            "not a lensopt",
        ),
        "no database": ([str(sid), "--db", str(tmp_path / "none.db"), "--out", str(tmp_path / "a.pdf")], "--db"),
        "missing folder": ([str(sid), "--db", str(path), "--out", str(tmp_path / "no" / "a.pdf")], "does not exist"),
        "a file as the folder": (
            [str(sid), "--db", str(path), "--out", str(file_as_folder / "a.pdf")],
            f"{file_as_folder} is a file, not a folder",
        ),
        "not a pdf": ([str(sid), "--db", str(path), "--out", str(tmp_path / "a.txt")], "must end in .pdf"),
        "a folder": ([str(sid), "--db", str(path), "--out", str(tmp_path / "dir.pdf")], "is a folder"),
        "session 0": (["0", "--db", str(path), "--out", str(tmp_path / "a.pdf")], "positive integer"),
        # a name that is all extension was told it "must end in .pdf", which it does
        "no name before .pdf": ([str(sid), "--db", str(path), "--out", str(tmp_path / ".pdf")], "no name before .pdf"),
    }


@pytest.mark.parametrize(
    "case",
    [
        "unknown session",
        "not a lensopt database",
        "no database",
        "missing folder",
        "a file as the folder",
        "not a pdf",
        "a folder",
        "session 0",
        "no name before .pdf",
    ],
)
def test_bad_input_is_one_line_and_exit_2_and_writes_nothing(db, tmp_path, capsys, case):
    path, sid = db
    (tmp_path / "dir.pdf").mkdir()
    argv, fragment = _bad_inputs(tmp_path, path, sid)[case]
    assert main(["print", *argv]) == 2
    _one_line_error(capsys, fragment)
    assert not list(tmp_path.glob("*.pdf*")) or [p.name for p in tmp_path.glob("*.pdf*")] == ["dir.pdf"]


def test_an_unwritable_folder_is_one_line_and_exit_2(db, tmp_path, capsys):
    path, sid = db
    folder = tmp_path / "locked"
    folder.mkdir()
    folder.chmod(0o500)
    try:
        if os.access(folder, os.W_OK):  # root writes anyway: a folder no one can create files in
            folder = "/proc"
        assert main(["print", str(sid), "--db", str(path), "--out", f"{folder}/rx.pdf"]) == 2
    finally:
        (tmp_path / "locked").chmod(0o700)
    _one_line_error(capsys, "--out")


def test_print_of_a_running_session_short_of_the_target_prints_no_prescription_to_sign(db, tmp_path, capsys):
    """The QA report: a session still running (its program holds its claim), its result at a
    confidence far below 0.95 after 10 letters. The PDF says "No prescription: not enough answers
    (confidence ... < 0.95 after 10 letters)", shows the lens only as a provisional estimate, says
    the session is not finished, and has no signature line; once its program is gone, that the
    session was interrupted and how to continue it."""
    import shutil
    import subprocess

    from lensopt.store import SessionStore

    path, sid = db
    copy = tmp_path / "running.db"
    copy.write_bytes(path.read_bytes())
    with SessionStore(copy) as store:
        store.set_status(sid, "running")
        result = store.session(sid).result
    assert result.confidence < 0.95
    out = tmp_path / "rx.pdf"
    with claim_session(copy, sid):  # as lensopt run holds the session it runs
        assert main(["print", str(sid), "--db", str(copy), "--out", str(out)]) == 0
    killed = tmp_path / "killed.pdf"  # the same session once its program is gone
    assert main(["print", str(sid), "--db", str(copy), "--out", str(killed)]) == 0
    capsys.readouterr()
    tool = shutil.which("pdftotext")
    if tool is None:
        pytest.skip("pdftotext (poppler-utils) is not installed")
    text, killed_text = (
        " ".join(subprocess.run([tool, str(pdf), "-"], capture_output=True, text=True, check=True).stdout.split())
        for pdf in (out, killed)
    )
    assert f"Session not finished: interrupted after {N_TRIALS} trials" in killed_text
    assert f"lensopt run --resume {sid} --db {copy} continues it" in killed_text and "still running" not in killed_text
    assert "interrupted" not in text
    assert (
        f"No prescription: not enough answers (confidence {confidence_text(result.confidence)} < 0.95 after {N_TRIALS} letters)"
        in text
    )
    assert f"provisional estimate {result.prescription}, not for prescribing" in text
    assert "Session not finished: still running" in text and "Refraction record: no prescription" in text
    assert "Signature" not in text


def test_print_says_what_the_record_holds_as_its_first_page_does():
    """The line `lensopt print` writes names the record's contents by the page's own rule
    (lensopt.stopping.enough_to_prescribe): a prescription, eyes short of the target, or a study's
    estimate (a protocol without [stop])."""
    import types

    from lensopt.cli.handlers.print_record import _contents
    from lensopt.store import ResultRecord

    def info(stop, *confidences):
        results = tuple(
            ResultRecord("-1.25 / -0.50 x 170", -1.25, -0.5, 170.0, 0.0, c, 40, {}, eye=eye)
            for eye, c in zip(("OD", "OS"), confidences)
        )
        protocol = {} if stop is None else {"stop": {"confidence": stop, "min_trials": 20, "max_trials": 80}}
        return types.SimpleNamespace(
            kind="letters", status="finished", protocol=protocol, optimizer_settings={}, results=results, result=None
        )

    assert _contents(info(0.95, 0.97)) == "prescription"
    assert _contents(info(0.95, 0.97, 0.96)) == "2 prescriptions"
    assert _contents(info(0.95, 0.97, 0.40)) == "1 of 2 eyes prescribed"
    assert _contents(info(0.95, 0.40)) == "no prescription: not enough answers"
    assert _contents(info(None, 0.40)) == "no prescription: the study's estimate"
    assert _contents(info(None, 0.97)) == "prescription"  # sure enough by lensopt's default 0.95
    assert _contents(info(0.95)) == "no prescription stored"
    # a cylinder found without an axis: page 1's heading, whatever the confidence or the design
    no_axis = ResultRecord("S -0.25 D  C -1.25 D", -0.25, -1.25, None, 0.3, 0.06, 12, {})
    for stop in (0.95, None):
        assert _contents(types.SimpleNamespace(**{**vars(info(stop)), "results": (no_axis,)})) == (
            "no prescription: a cylinder without an axis"
        )


@pytest.mark.parametrize("stop", [RuntimeError("a page failed"), KeyboardInterrupt()], ids=["error", "ctrl-c"])
def test_a_print_stopped_mid_record_leaves_the_earlier_record_and_no_part_file(db, tmp_path, capsys, monkeypatch, stop):
    from matplotlib.backends.backend_pdf import PdfPages

    path, sid = db
    out = tmp_path / "rx.pdf"
    out.write_bytes(b"%PDF the earlier record")
    pages = []

    def savefig(self, figure=None, **kwargs):
        if pages:  # the first page written, the second fails
            raise stop
        pages.append(figure)
        return original(self, figure, **kwargs)

    original = PdfPages.savefig
    monkeypatch.setattr(PdfPages, "savefig", savefig)
    if isinstance(stop, KeyboardInterrupt):
        assert main(["print", str(sid), "--db", str(path), "--out", str(out)]) == 130
        assert capsys.readouterr().err == (
            "lensopt print: interrupted; no record was written (a file of that name is as it was)\n"
        )
    else:
        with pytest.raises(RuntimeError, match="a page failed"):
            main(["print", str(sid), "--db", str(path), "--out", str(out)])
    assert pages and out.read_bytes() == b"%PDF the earlier record"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["rx.pdf"]  # no hidden .rx.pdf.*.part


def test_a_print_after_a_killed_one_removes_its_part_file(db, tmp_path, capsys):
    path, sid = db
    out = tmp_path / "rx.pdf"
    stale = tmp_path / ".rx.pdf.k1ll3d00.part"  # what a print killed mid-record (SIGKILL) leaves
    stale.write_bytes(b"%PDF half a record")
    stale.chmod(0o600)
    os.utime(stale, (1e9, 1e9))
    assert main(["print", str(sid), "--db", str(path), "--out", str(out)]) == 0
    assert out.read_bytes().startswith(b"%PDF") and sorted(p.name for p in tmp_path.iterdir()) == ["rx.pdf"]


@pytest.mark.parametrize(
    ("sql", "said"),
    [
        ("UPDATE sessions SET optimizer_settings = json_set(optimizer_settings, '$.rule', 5)", "unknown rule 5"),
        ("UPDATE trials SET sphere_d = 1e308 WHERE idx = 2", "(the lens S +1e+308 C "),
    ],
)
def test_a_session_another_program_changed_so_its_optimizer_refuses_it_is_said_so(db, tmp_path, capsys, sql, said):
    """A rule of 5 said "unknown rule 5; choose one of: ...", and a sphere of 1e308 "tell a trial
    within the bounds the optimizer was made with": the optimizer's words, read as a typing error."""
    path, sid = db
    changed = tmp_path / "changed.db"
    shutil.copy(path, changed)
    conn = sqlite3.connect(changed)
    conn.execute(sql)
    conn.commit()
    conn.close()
    assert main(["print", str(sid), "--db", str(changed), "--out", str(tmp_path / "a.pdf")]) == 2
    _one_line_error(
        capsys,
        "the session's stored settings and answers do not rebuild its optimizer (",
        said,
        "; if another program changed the database, restore it from a copy",
    )
    assert not (tmp_path / "a.pdf").exists()
