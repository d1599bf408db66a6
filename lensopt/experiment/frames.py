"""A ``--save-frames`` folder and the session whose frames it holds.

A session saving its frames (``trial-007.png``, ``trial-007-console.png``… named by the stored trial
index, ``end-console.png``) writes :data:`FRAMES_OWNER_FILE` into the folder, naming its database
and session (:func:`claim_frames_folder`). A new session is refused a folder that holds frames
(:func:`refuse_another_sessions_frames`, before the database is opened); a resume writes on from its next
trial into its own folder, and is refused one that holds another session's frames, which it would
overwrite (:func:`resumed_frames_problem`): one whose owner file names another session, or, in a
folder from before the owner file, frames of trials the session has not reached.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

from lensopt.private_files import private_output

#: The file in a ``--save-frames`` folder naming the session whose frames it holds.
FRAMES_OWNER_FILE = "lensopt-session.json"

#: A trial's frame: ``trial-007.png``, ``trial-007-console.png``, ``trial-007-lens.png``.
_TRIAL_FRAME = re.compile(r"^trial-(\d+)(?:-[a-z]+)?\.png$")


def _identity(session_id, created_at) -> tuple[int, float]:
    """What names a session wherever its database lies (a database copied or moved keeps it): its id
    and the time it was created."""
    return int(session_id), float(created_at)


def claim_frames_folder(folder, db_path, info) -> None:
    """Write :data:`FRAMES_OWNER_FILE` into ``folder`` (made if need be): its frames are those of
    session ``info`` (a :class:`lensopt.store.SessionInfo`) of database ``db_path``."""
    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    owner = {
        "database": str(Path(db_path).resolve()),
        "session_id": int(info.session_id),
        "participant": info.participant,
        "created_at": float(info.created_at),
    }
    with private_output(folder / FRAMES_OWNER_FILE, "--save-frames") as out:
        out.write(json.dumps(owner, indent=1).encode())


def _stored_owner(folder: Path) -> dict | None:
    """What a folder's owner file says; None without one, or one that does not read."""
    try:
        data = json.loads((folder / FRAMES_OWNER_FILE).read_text(encoding="utf-8"))
        _identity(data["session_id"], data["created_at"])
        return data
    except (OSError, ValueError, TypeError, KeyError):
        return None


def refuse_another_sessions_frames(folder) -> None:
    """Refuse, in one line, a new session's ``--save-frames`` folder that already holds frames
    (``trial-NNN.png``…): its ``trial-001.png`` on would be written over another session's. A
    ``--resume`` is not asked this: it goes on writing into its own folder, from its next trial, and
    is refused another session's once its stored trials are read (:func:`resumed_frames_problem`)."""
    held = sorted(Path(folder).glob("trial-*.png")) if Path(folder).is_dir() else []
    if held:
        raise ValueError(
            f"--save-frames {folder} already holds another session's frames ({held[0].name}, {len(held)} in all), "
            "which this session's would overwrite; give an empty or new folder"
        )


def resumed_frames_problem(folder, info, next_index: int) -> str | None:
    """One line when resumed session ``info`` (a :class:`lensopt.store.SessionInfo`), whose next trial
    is stored trial ``next_index``, would write its frames over another session's in ``folder``;
    None otherwise (an empty or new folder, its own, wherever its database now lies)."""
    folder = Path(folder)
    if not folder.is_dir():
        return None
    fix = f"give session {info.session_id}'s own --save-frames folder, or an empty or new one"
    owner = _stored_owner(folder)
    if owner is not None:
        if _identity(owner["session_id"], owner["created_at"]) == _identity(info.session_id, info.created_at):
            return None
        return (
            f"--save-frames {folder} holds the frames of session {owner['session_id']} "
            f"({owner.get('participant', '?')}) of {owner.get('database', '?')}, which this session's would "
            f"overwrite; {fix}"
        )
    ahead = sorted(
        path.name
        for path in folder.iterdir()
        if (match := _TRIAL_FRAME.match(path.name)) is not None and int(match.group(1)) > next_index
    )
    if ahead:
        return (
            f"--save-frames {folder} holds frames of trials session {info.session_id} has not reached "
            f"({ahead[0]}, {len(ahead)} in all): another session's, which this session's would overwrite; {fix}"
        )
    return None
