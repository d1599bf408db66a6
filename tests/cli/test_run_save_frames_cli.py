"""``lensopt run --save-frames DIR`` where no folder can be made or written (issue 19).

Before, the folder was made by the trial loop, after the window had opened and the session row had
been created: ``/proc/f``, an existing file or a folder under a file gave a traceback (exit 1) and left
an ``aborted`` session with no trial. Now the folder is checked first: one line naming
``--save-frames``, exit 2, no database created, and a resumed session left as it was. The commands
run as a person would (``python -m lensopt run``), with the display the suite has (under xvfb-run the
old code reached the loop; without one it stopped at the display check, which does not name the
folder either).
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
DEMO = REPO / "protocols" / "demo-simulated.toml"


def lensopt_run(*args) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "lensopt", "run", *map(str, args)],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=120,
    )


def assert_one_line(result, *fragments) -> None:
    assert result.returncode == 2, (result.returncode, result.stderr[-2000:])
    assert "Traceback" not in result.stderr
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1, result.stderr
    assert lines[0].startswith("lensopt run: error: --save-frames "), lines[0]
    for fragment in fragments:
        assert fragment in lines[0], lines[0]


def _a_file(tmp_path: Path) -> tuple[Path, str]:
    target = tmp_path / "frames"
    target.write_text("not a folder")
    return target, "is a file; give a folder"


def _under_a_file(tmp_path: Path) -> tuple[Path, str]:
    (tmp_path / "plain").write_text("not a folder")
    return tmp_path / "plain" / "frames", "is a file, not a folder"


def _in_proc(tmp_path: Path) -> tuple[Path, str]:
    return Path("/proc/lensopt-frames"), "cannot write in /proc"


@pytest.mark.parametrize("target", [_in_proc, _a_file, _under_a_file], ids=["proc", "a-file", "under-a-file"])
def test_a_frames_folder_that_cannot_be_made_is_one_line_and_no_session_is_created(tmp_path, target):
    frames, said = target(tmp_path)
    db = tmp_path / "sessions.db"
    result = lensopt_run("--protocol", DEMO, "--participant", "p", "--trials", 2, "--db", db, "--save-frames", frames)
    assert_one_line(result, said)
    assert not db.exists()
    assert not Path("/proc/lensopt-frames").exists()


def test_resuming_with_a_frames_folder_that_cannot_be_made_leaves_the_session_as_it_was(tmp_path):
    from lensopt.experiment.modes import mode_for
    from lensopt.experiment.protocol import load_protocol
    from lensopt.experiment.session import calibration_from_protocol
    from lensopt.store import SessionStore

    protocol = load_protocol(DEMO)
    optimizer = mode_for(protocol).new_optimizer(protocol, 1, protocol.optimizer.letter_bounds_logmar)
    db = tmp_path / "sessions.db"
    with SessionStore(db) as store:
        sid = store.create_session(
            "p", protocol.to_dict(), calibration_from_protocol(protocol).to_dict(), optimizer.settings_dict(), 1
        )
        store.set_status(sid, "aborted")
    before = db.read_bytes()
    frames, said = _a_file(tmp_path)
    assert_one_line(lensopt_run("--resume", sid, "--db", db, "--save-frames", frames), said)
    assert db.read_bytes() == before
    with SessionStore(db, readonly=True) as store:
        assert store.session(sid).status == "aborted"


def test_a_new_session_into_a_folder_holding_another_sessions_frames_is_one_line_and_they_are_kept(tmp_path):
    """Its trial-001.png on were written over the other session's, without a word."""
    frames = tmp_path / "frames"
    frames.mkdir()
    for name in ("trial-001.png", "trial-002.png", "trial-002-console.png"):
        (frames / name).write_bytes(b"the other session's frame")
    db = tmp_path / "sessions.db"
    result = lensopt_run("--protocol", DEMO, "--participant", "p", "--trials", 2, "--db", db, "--save-frames", frames)
    assert_one_line(
        result,
        f"--save-frames {frames} already holds another session's frames (trial-001.png, 3 in all)",
        "give an empty or new folder",
    )
    assert not db.exists()
    assert all(path.read_bytes() == b"the other session's frame" for path in frames.iterdir())


def test_a_resume_may_save_frames_into_a_folder_holding_its_own(tmp_path, monkeypatch, capsys):
    """A resumed session goes on from its next trial, so its earlier frames stay; a folder holding
    other files than frames is no other session's either."""
    from lensopt.cli import main
    from lensopt.cli.handlers import run as handler
    from lensopt.experiment.session import SessionOutcome

    frames = tmp_path / "frames"
    frames.mkdir()
    (frames / "trial-001.png").write_bytes(b"its own frame")
    (tmp_path / "notes").mkdir()
    (tmp_path / "notes" / "end-console.png").write_bytes(b"not a trial's frame")
    requests = []

    def run_session(request, log, warn):
        requests.append(request)
        return SessionOutcome(3, "finished", 2, None, None, None, ())

    monkeypatch.setattr(handler, "run_session", run_session)
    assert main(["run", "--resume", "3", "--db", str(tmp_path / "s.db"), "--save-frames", str(frames)]) == 0
    assert main(["run", "--protocol", str(DEMO), "--participant", "p", "--save-frames", str(tmp_path / "notes")]) == 0
    assert [request.frames_dir for request in requests] == [frames, tmp_path / "notes"]
    capsys.readouterr()
