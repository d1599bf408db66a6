"""Full-prescription letter sessions in a PsychoPy window: axes stored, the prescription printed and
stored, kill -9 then --resume continues as the uninterrupted session, and an old session resumes."""

import csv
import io
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest
from PIL import Image

from experiment_helpers import FAST, REPO, needs_display, write_protocol
from lensopt.experiment.protocol_sections import ScreensSection
from lensopt.experiment.session import RunRequest, run_session
from lensopt.modes.registry import get_mode
from lensopt.refraction.lens import Lens
from lensopt.refraction.prescription_letters import PrescriptionOptimizer
from lensopt.store import SessionStore
from lensopt.store.export import export_session

pytestmark = needs_display

OLD_DATA = REPO / "tests" / "store" / "data"

PRESCRIPTION_FIELDS = {
    **FAST,
    "lens.step_d": "0.25",
    "simulated.slope": "14.0",
    "simulated.axis_deg": "170.0",
    "session.eye": '"OD"',  # a prescription names its eye
}


def prescription_protocol(tmp_path: Path, start: str = "-1.00 / -0.50 x 180", **fields) -> Path:
    path = write_protocol(tmp_path / "rx.toml", **{**PRESCRIPTION_FIELDS, **fields})
    path.write_text(path.read_text() + f'\n[start]\nrefraction = "{start}"\n')
    return path


def lens_trials(db, session_id=None):
    """``(sphere_d, cylinder_d, axis_deg, letter_logmar, letter, correct)`` of the latest session's trials."""
    if not Path(db).exists():
        return []
    try:
        with SessionStore(db, readonly=True) as store:
            sid = store.latest_session_id() if session_id is None else session_id
            records = [] if sid is None else store.trials(sid)
    except Exception:  # noqa: BLE001 - the file is being created
        return []
    return [(t.sphere_d, t.cylinder_d, t.axis_deg, t.letter_logmar, t.letter, t.correct) for t in records]


def test_a_prescription_session_stores_every_axis_and_its_prescription(tmp_path, window):
    db, frames, lines = tmp_path / "s.db", tmp_path / "frames", []
    protocol = prescription_protocol(tmp_path, start="-1.50 / +0.50 x 90", **{"lens.prompt": "true"})
    outcome = run_session(
        RunRequest(db_path=db, protocol_path=protocol, participant="rx", seed=4, trials=8, frames_dir=frames),
        log=lines.append,
        window=window,
    )
    assert outcome.status == "finished" and outcome.n_trials == 8
    assert any("starting refraction -1.00 / -0.50 x 180 (written -1.50 / +0.50 x 090, transposed" in x for x in lines)
    with SessionStore(db, readonly=True) as store:
        info, records = store.session(outcome.session_id), store.trials(outcome.session_id)
        document = json.loads(export_session(store, outcome.session_id, "json"))
        rows = list(csv.DictReader(io.StringIO(export_session(store, outcome.session_id, "csv"))))
    # every trial keeps its phoropter lens: minus cylinder, quarter diopters, a whole axis in 1-180
    for t in records:
        assert t.axis_deg is not None and 1 <= t.axis_deg <= 180 and t.axis_deg == round(t.axis_deg)
        assert t.cylinder_d <= 0 and (4 * t.sphere_d) % 1 == 0 and (4 * t.cylinder_d) % 1 == 0
    assert [float(r["axis_deg"]) for r in rows] == [t.axis_deg for t in records]
    assert [t["axis_deg"] for t in document["trials"]] == [t.axis_deg for t in records]
    # the clinician's prompt names each new lens in clinical notation, on the console, saved as a frame
    first = records[0]
    notation = Lens(first.sphere_d, first.cylinder_d, first.axis_deg).format()
    assert f"clinician: set lens {notation}" in lines
    prompt = np.asarray(Image.open(frames / "trial-001-lens.png").convert("L"))
    width_px, height_px = ScreensSection().console_size_px
    assert prompt.shape == (height_px, width_px) and (prompt > 128).any()  # light text on the dark console
    # the prescription is the rebuilt optimizer's, printed and stored with its intervals
    rebuilt = get_mode("letters").rebuild_optimizer(info.optimizer_settings, records)
    assert isinstance(rebuilt, PrescriptionOptimizer)
    rx = rebuilt.prescription()
    assert rx.confidence < 0.95 and f"estimate OD, not a prescription: {rx.text}" in " ".join(lines)  # 8 letters
    assert any(x.startswith("95% intervals: S ") and " axis " in x and " J45 " in x for x in lines)
    assert info.result is not None and info.result.prescription == rx.text == outcome.result.prescription
    assert info.result.n_trials == 8 and set(info.result.intervals) == set(rx.intervals)
    assert document["result"]["prescription"] == rx.text


def lensopt(*args):
    return subprocess.Popen(
        [sys.executable, "-m", "lensopt", *map(str, args)],
        cwd=REPO,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


def test_kill_9_then_resume_continues_a_prescription_session_as_the_uninterrupted_one(tmp_path):
    protocol = prescription_protocol(tmp_path, **{"timing.simulated_response_s": "0.2"})
    common = ("--protocol", protocol, "--participant", "k9", "--observer", "simulated", "--seed", 5, "--trials", 10)
    whole_db, killed_db = tmp_path / "whole.db", tmp_path / "killed.db"
    whole = lensopt("run", *common, "--db", whole_db, "--start", "-1.25 / -0.50 x 175")
    killed = lensopt("run", *common, "--db", killed_db, "--start", "-1.25 / -0.50 x 175")
    deadline = time.time() + 120
    while len(lens_trials(killed_db)) < 3 and killed.poll() is None and time.time() < deadline:
        time.sleep(0.05)
    os.kill(killed.pid, signal.SIGKILL)
    killed.communicate()
    out, err = whole.communicate(timeout=240)
    assert whole.returncode == 0, err
    before = lens_trials(killed_db)
    k = len(before)
    assert 3 <= k < 10, f"the session was not killed mid-way ({k} trials stored)"
    with SessionStore(killed_db, readonly=True) as store:
        sid = store.latest_session_id()
        assert store.session(sid).status == "running" and store.session(sid).result is None

    resumed = lensopt("run", "--resume", sid, "--db", killed_db)
    out, err = resumed.communicate(timeout=240)
    assert resumed.returncode == 0, err
    assert f"resuming at eye OD, trial {k + 1} of 10" in out and "estimate OD, not a prescription: " in out
    after, uninterrupted = lens_trials(killed_db), lens_trials(whole_db)
    assert after[:k] == before  # trials 1..k intact
    assert all(t[2] is not None for t in after)
    assert after == uninterrupted  # the same lenses, letters and answers, to the bit
    with SessionStore(killed_db, readonly=True) as a, SessionStore(whole_db, readonly=True) as b:
        assert a.session(sid).result.prescription == b.session(b.latest_session_id()).result.prescription
        header = export_session(a, sid, "csv").splitlines()[0].split(",")
    assert "axis_deg" in header


def test_a_session_stored_before_schema_5_resumes_as_its_optimizer_asks(tmp_path, window, make_schema_4_database):
    db = tmp_path / "old.db"
    make_schema_4_database(db)
    expected = json.loads((OLD_DATA / "schema-4-letters-next.json").read_text())
    lines = []
    outcome = run_session(RunRequest(db_path=db, resume=1, trials=13), log=lines.append, window=window)
    assert outcome.status == "finished" and outcome.n_trials == 13
    assert outcome.result.n_trials == 13 and outcome.result.axis_deg is None  # its best lens, stored now
    assert "resuming at trial 13 of 13" in " ".join(lines)
    with SessionStore(db, readonly=True) as store:
        trials = store.trials(1)
    assert [t.index for t in trials] == list(range(1, 14)) and trials[-1].axis_deg is None
    assert [trials[-1].sphere_d, trials[-1].cylinder_d, trials[-1].letter_logmar] == pytest.approx(
        expected["next_trial"], abs=1e-9
    )
    assert any(x.startswith("best lens: S ") for x in lines)
