"""Helpers shared by the experiment tests (protocol files, display check)."""

import dataclasses
import os
import re
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from lensopt.experiment.protocol import load_protocol

REPO = Path(__file__).resolve().parents[2]
DEMO_PROTOCOL = REPO / "protocols" / "demo-simulated.toml"
CLINICAL_PROTOCOL = REPO / "protocols" / "clinical-prescription.toml"

needs_display = pytest.mark.skipif(
    not os.environ.get("DISPLAY"),
    reason="needs an X display for a PsychoPy window: run under xvfb-run -a -s '-screen 0 1920x1080x24'",
)


def clinical_protocol(**screens):
    """The shipped clinical prescription protocol with its ``[screens]`` replaced by ``screens``."""
    protocol = load_protocol(CLINICAL_PROTOCOL)
    return dataclasses.replace(protocol, screens=dataclasses.replace(protocol.screens, **screens))


def write_protocol(path: Path, source: Path = DEMO_PROTOCOL, **fields) -> Path:
    """Copy ``source`` to ``path`` with ``fields`` (``"section.key": toml_value_text``) replaced (a
    table ``source`` lacks is added)."""
    text = source.read_text()
    for dotted, value in fields.items():
        section, key = dotted.split(".")
        if value is not None and not re.search(rf"^\[{section}\]\n", text, flags=re.M):
            text = text.rstrip("\n") + f"\n\n[{section}]\n"
        block = re.search(rf"^\[{section}\]\n(.*?)(?=^\[|\Z)", text, flags=re.S | re.M)
        assert block, f"no [{section}] in {source}"
        body = block.group(1)
        if value is None:
            new_body = re.sub(rf"^{key} = .*\n", "", body, flags=re.M)
        elif re.search(rf"^{key} = ", body, flags=re.M):
            new_body = re.sub(rf"^{key} = .*$", f"{key} = {value}", body, flags=re.M)
        else:
            new_body = f"{key} = {value}\n" + body
        text = text[: block.start(1)] + new_body + text[block.end(1) :]
    path.write_text(text)
    return path


FAST = {
    "timing.fixation_s": "0.0",
    "timing.feedback_s": "0.0",
    "timing.iti_s": "0.0",
    "timing.simulated_response_s": "0.0",
    "display.window_size_px": "[400, 300]",
    "breaks.every_trials": "0",
}
"""Protocol fields that make a window session fast (no waits, a small window)."""


def run_lensopt(*args, timeout_s: float = 300) -> subprocess.CompletedProcess:
    """``lensopt ARGS`` run to its end from the repository, its output captured."""
    argv = [sys.executable, "-m", "lensopt", *map(str, args)]
    return subprocess.run(argv, cwd=REPO, capture_output=True, text=True, timeout=timeout_s, env=os.environ)


def kill_mid_way_and_resume(db: Path, protocol: Path, read_trials, extra_args=(), n_trials=8, kill_after=3):
    """``lensopt run`` of ``protocol`` (``n_trials`` trials, seed 5, ``extra_args`` such as
    ``--start``) killed (SIGKILL) once ``read_trials(store, session_id)`` holds ``kill_after`` trials,
    then ``lensopt run --resume``. Returns ``(session_id, info, before, after, resumed)``: the
    session as stored before the resume, its trials before and after, and the resume's process."""
    from lensopt.store import SessionStore

    argv = [sys.executable, "-m", "lensopt", "run", "--protocol", str(protocol), "--participant", "K"]
    argv += ["--seed", "5", "--trials", str(n_trials), "--db", str(db), *extra_args]
    proc = subprocess.Popen(argv, cwd=REPO, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)

    def stored():
        try:
            with SessionStore(db, readonly=True) as store:
                sid = store.latest_session_id()
                return [] if sid is None else read_trials(store, sid)
        except Exception:  # noqa: BLE001 - the file is being created
            return []

    deadline = time.time() + 120
    while len(stored()) < kill_after and proc.poll() is None and time.time() < deadline:
        time.sleep(0.05)
    os.kill(proc.pid, signal.SIGKILL)
    proc.communicate()
    before = stored()
    assert kill_after <= len(before) < n_trials, f"the session was not killed mid-way ({len(before)} trials stored)"
    with SessionStore(db, readonly=True) as store:
        sid = store.latest_session_id()
        info = store.session(sid)
    resumed = run_lensopt("run", "--resume", sid, "--db", db)
    assert resumed.returncode == 0, resumed.stderr
    return sid, info, before, stored(), resumed


def assert_resumed_as_the_rebuilt_acuity_law_optimizer(info, before, after) -> None:
    """The first trial a resumed acuity-law session asked (``after[len(before)]``) is the one its
    optimizer, rebuilt from the stored settings and the answers stored before the kill, asks."""
    from lensopt.refraction.acuity_law import AcuityLawOptimizer
    from lensopt.refraction.trial import Trial

    k = len(before)
    history = [(Trial(t.sphere_d, t.cylinder_d, t.letter_logmar), t.correct) for t in before]
    proposal = AcuityLawOptimizer.from_settings(info.optimizer_settings, history).ask()
    assert (after[k].sphere_d, after[k].cylinder_d, after[k].letter_logmar) == (
        proposal.sphere_d,
        proposal.cylinder_d,
        proposal.letter_logmar,
    )
