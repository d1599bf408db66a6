"""The parts of a run record that every campaign shares, and the record files of a campaign.

:func:`timed_session` runs the ask, answer, tell loop of a run (:func:`lensopt.asktell.run_session`)
and times its decisions; :func:`refraction_loop` is the loop of a refraction-like run and
:func:`lens_outcome` its lens fields; :func:`timing_summary` summarizes decision times and
:func:`versions` names the software. A campaign directory holds its manifest (:data:`MANIFEST_NAME`)
and one JSON record per run under ``runs/``, written atomically (:func:`write_json_atomic`).
"""

from __future__ import annotations

import json
import os
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from lensopt.asktell import run_session
from lensopt.bench.spec import RunSpec
from lensopt.provenance import software

#: File name of a campaign's manifest (its settings and command), next to the run records.
MANIFEST_NAME = "campaign.json"

#: Record format tag.
RECORD_FORMAT = "lensopt.bench-run/1"


def versions() -> dict:
    """The software recorded with every run (:func:`lensopt.provenance.software`: versions, the git
    commit of a checkout, the BLAS library, the platform)."""
    return software()


def timing_summary(samples_ms: list[float]) -> dict:
    a = np.asarray(samples_ms, dtype=float)
    return {"median": float(np.median(a)), "p95": float(np.percentile(a, 95)), "n": int(a.size)}


@dataclass(frozen=True)
class DecisionTimes:
    """The duration (ms) of each decision of a session — ask + answer + tell — on the wall clock and
    in CPU time of the deciding thread (the wall-clock time less the time spent waiting for a core,
    which other jobs on the machine lengthen)."""

    wall_ms: list[float]
    cpu_ms: list[float]


def timed_session(opt, respond: Callable, n_trials: int, after_trial: Callable) -> DecisionTimes:
    """:func:`lensopt.asktell.run_session` of ``opt`` for ``n_trials`` with ``respond``, calling
    ``after_trial(t, query, answer)`` after each tell; returns the times of each decision (ask +
    ``respond`` + tell, without ``after_trial``, which reports and checks, outside the timing)."""
    times = DecisionTimes([], [])
    mark, cpu_mark = time.perf_counter(), time.thread_time()

    def on_trial(t, query, answer):
        nonlocal mark, cpu_mark
        times.wall_ms.append(1e3 * (time.perf_counter() - mark))
        times.cpu_ms.append(1e3 * (time.thread_time() - cpu_mark))
        after_trial(t, query, answer)
        mark, cpu_mark = time.perf_counter(), time.thread_time()

    run_session(opt, respond, n_trials, on_trial=on_trial, stop=None)  # every trial, scored; the stop is recorded
    return times


def refraction_loop(spec: RunSpec, patient, opt, answer) -> dict:
    """The body of a refraction-like run: ``spec.n_iterations`` times ask, ``answer(trial)``, tell;
    the trajectory is the acuity error (logMAR) of ``opt.best()`` (every ``report_every``)."""
    trajectory, report_ms = [], []
    lens, value = None, None

    def report(t, _trial, _answer):
        nonlocal lens, value
        if spec.reports_after(t):
            t1 = time.perf_counter()
            lens = tuple(float(v) for v in opt.best())
            report_ms.append(1e3 * (time.perf_counter() - t1))
            value = float(patient.visual_acuity(*lens) - patient.best_acuity_logmar)
        trajectory.append(value)

    decision_ms = timed_session(opt, answer, spec.n_iterations, report).wall_ms
    return {
        **lens_outcome(patient, lens),
        "trajectory": trajectory,
        "timings_ms": {"decision": timing_summary(decision_ms), "report": timing_summary(report_ms)},
    }


def lens_outcome(patient, lens) -> dict:
    """The record fields of a refraction-like run that reported ``lens`` for ``patient``."""
    true_sphere, true_cylinder = (float(v) for v in patient.true_correction_d)
    return {
        "direction": "min",
        "optimal_value": 0.0,
        "final_point": list(lens),
        "true_correction_d": [true_sphere, true_cylinder],
        "sphere_error_d": abs(lens[0] - true_sphere),
        "cylinder_error_d": abs(lens[1] - true_cylinder),
    }


def write_json_atomic(path: Path, data: dict) -> None:
    """Write ``data`` to ``path`` via a temp file in the same directory and ``os.replace``."""
    path = Path(path)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.stem}-", suffix=".tmp")
    try:
        with os.fdopen(fd, "w") as handle:
            json.dump(data, handle, indent=1)
            handle.write("\n")
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def record_path(out_dir: Path, spec: RunSpec) -> Path:
    return Path(out_dir) / "runs" / f"{spec.key}.json"


def load_records(out_dir: Path, command: str = "lensopt bench functions|refraction") -> list[dict]:
    """Every finished run record of a campaign directory (sorted by key). ``command``: the campaign
    that writes such a directory, named in the error when there is none."""
    runs = Path(out_dir) / "runs"
    if not runs.is_dir():
        raise ValueError(
            f"{out_dir} holds no benchmark runs (no 'runs/' directory); run `{command} --out DIR` first, "
            "or give the folder it wrote"
        )
    return [json.loads(p.read_text()) for p in sorted(runs.glob("*.json"))]


def partial_line(campaign_dir, planned_keys) -> str | None:
    """A line saying that a campaign is unfinished — ``"2 of 18 runs of campaign.json finished: a
    partial summary"`` — when fewer of the runs its manifest planned (``planned_keys``, the run keys
    of its last command) have a record than were planned; None when all have (or nothing is known)."""
    if not planned_keys:
        return None
    runs = Path(campaign_dir) / "runs"
    finished = sum((runs / f"{key}.json").is_file() for key in planned_keys)
    if finished >= len(planned_keys):
        return None
    return f"{finished} of {len(planned_keys)} runs of {MANIFEST_NAME} finished: a partial summary"
