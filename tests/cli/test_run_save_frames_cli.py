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
    from lensopt.experiment.windows import calibration_from_protocol
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


def _session_with_frames(db: Path, frames: Path, participant: str) -> None:
    result = lensopt_run(
        "--protocol", DEMO, "--participant", participant, "--trials", 2, "--seed", 4, "--db", db,
        "--save-frames", frames, "--no-fullscreen",
    )  # fmt: skip
    assert result.returncode == 0, result.stderr[-2000:]


def _frames(folder: Path) -> dict[str, bytes]:
    return {path.name: path.read_bytes() for path in sorted(folder.iterdir())}


def test_a_session_saving_frames_names_itself_in_the_folder_and_its_resume_writes_on(tmp_path):
    """The folder says whose frames it holds; the session resumed into it, even from its database
    copied elsewhere, adds its next trial's frames and leaves the earlier ones as they were."""
    import json

    from lensopt.store import SessionStore

    db, frames = tmp_path / "sessions.db", tmp_path / "frames"
    _session_with_frames(db, frames, "p")
    owner = json.loads((frames / "lensopt-session.json").read_text())
    with SessionStore(db, readonly=True) as store:
        info = store.session(1)
    assert owner == {"database": str(db.resolve()), "session_id": 1, "participant": "p", "created_at": info.created_at}
    assert {"trial-001.png", "trial-002.png"} <= set(_frames(frames)) and "trial-003.png" not in _frames(frames)
    before = _frames(frames)
    moved = tmp_path / "elsewhere" / "copy.db"
    moved.parent.mkdir()
    moved.write_bytes(db.read_bytes())
    result = lensopt_run("--resume", 1, "--trials", 3, "--db", moved, "--save-frames", frames, "--no-fullscreen")
    assert result.returncode == 0, result.stderr[-2000:]
    after = _frames(frames)
    assert "trial-003.png" in after
    assert all(after[name] == data for name, data in before.items() if name.startswith("trial-"))


def test_a_resume_into_another_sessions_frames_folder_is_one_line_and_they_are_kept(tmp_path):
    """Its next trials' frames were written over the other session's, without a word (a new session
    was refused such a folder; a resume was not asked)."""
    from lensopt.store import SessionStore

    db = tmp_path / "sessions.db"
    first, second = tmp_path / "first", tmp_path / "second"
    _session_with_frames(db, first, "p1")
    _session_with_frames(db, second, "p2")
    kept, before = _frames(first), db.read_bytes()
    result = lensopt_run("--resume", 2, "--trials", 4, "--db", db, "--save-frames", first, "--no-fullscreen")
    assert_one_line(
        result,
        f"--save-frames {first} holds the frames of session 1 (p1) of {db.resolve()}, which this session's "
        "would overwrite; give session 2's own --save-frames folder, or an empty or new one",
    )
    assert _frames(first) == kept and db.read_bytes() == before
    with SessionStore(db, readonly=True) as store:
        assert store.session(2).n_answers == 2 and store.session(2).status == "finished"


def test_a_resume_into_a_folder_of_frames_from_before_the_owner_file_is_checked_by_their_trials(tmp_path):
    """A folder without the owner file (frames saved by an older lensopt): frames of trials the
    session has not reached are another session's; its own (up to its next trial) are not."""
    db, frames = tmp_path / "sessions.db", tmp_path / "frames"
    _session_with_frames(db, frames, "p")
    (frames / "lensopt-session.json").unlink()
    (frames / "trial-005-console.png").write_bytes(b"another session's frame")
    result = lensopt_run("--resume", 1, "--trials", 3, "--db", db, "--save-frames", frames, "--no-fullscreen")
    assert_one_line(result, "holds frames of trials session 1 has not reached (trial-005-console.png, 1 in all)")
    assert (frames / "trial-005-console.png").read_bytes() == b"another session's frame"
    (frames / "trial-005-console.png").unlink()
    result = lensopt_run("--resume", 1, "--trials", 3, "--db", db, "--save-frames", frames, "--no-fullscreen")
    assert result.returncode == 0, result.stderr[-2000:]
    assert (frames / "trial-003.png").exists() and (frames / "lensopt-session.json").exists()
