"""Concurrent starts of ``lensopt run`` on a new database (issue 19, safe concurrent starts).

The store-level race is tested in ``tests/store/test_concurrent_open.py``. Here whole ``lensopt
run`` sessions start at the same moment on a database that does not exist yet (nor its folder), as
two clinicians' consoles or a script's parallel runs would: each process creates or opens the file,
switches it to WAL, checks its layout, opens a PsychoPy window, stores a session and its answers.

So that the processes meet at the database rather than being spread out by their import times (two
seconds or more, which made the probe's collisions rare: 1 of 26 pairs), a pool process imports
lensopt's command line and the experiment (numpy, scipy, the optimizers) once and forks the workers;
each worker imports PsychoPy's ``visual`` (its own X connection) and waits at a barrier, and all are
released at once into ``lensopt.cli.main(["run", ...])``, the function the ``lensopt`` command calls,
with the same arguments as on the command line. Every round is a new database. A last round starts
``python -m lensopt run`` processes cold, as the probe's pairs did.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
DEMO = REPO / "protocols" / "demo-simulated.toml"

#: Processes released together, rounds of them (each on a new database), and trials per session.
N_PROCESSES = 8
N_TRIALS = 2
N_ROUNDS = 3
#: Processes started cold (``python -m lensopt run``) together in the last round, as the probe's pairs.
N_COLD = 2

#: Protocol fields that make a session quick: no waits, a small window, no break.
FAST = {
    "fixation_s": "0.0",
    "feedback_s": "0.0",
    "iti_s": "0.0",
    "simulated_response_s": "0.0",
    "window_size_px": "[320, 240]",
    "every_trials": "0",
}

#: The pool: ``python -c POOL CONFIG_JSON``; prints ``[[round, worker, exit code], ...]`` as JSON.
POOL = r"""
import json, multiprocessing, os, sys, threading, traceback

config = json.loads(sys.argv[1])
from lensopt.cli import main
import lensopt.experiment.session  # noqa: F401 - numpy, scipy and the optimizers, shared by the forks


def worker(k, barrier, results):
    log = os.open(config["logs"][k], os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    os.dup2(log, 1)
    os.dup2(log, 2)
    from psychopy import visual  # noqa: F401 - after the fork: each worker its own X connection

    for r, argvs in enumerate(config["rounds"]):
        try:
            barrier.wait(timeout=300)
        except threading.BrokenBarrierError:
            return
        try:
            code = main(argvs[k])
        except BaseException as exc:  # a traceback or SystemExit: reported, the round goes on
            traceback.print_exc()
            code = repr(exc)
        sys.stdout.flush()
        sys.stderr.flush()
        results.put([r, k, code])


context = multiprocessing.get_context("fork")
barrier = context.Barrier(len(config["logs"]))
results = context.Queue()
workers = [context.Process(target=worker, args=(k, barrier, results)) for k in range(len(config["logs"]))]
for w in workers:
    w.start()
codes = []
try:
    for _ in range(len(config["logs"]) * len(config["rounds"])):
        codes.append(results.get(timeout=300))
finally:
    barrier.abort()
    for w in workers:
        w.join(timeout=60)
print(json.dumps(codes), flush=True)
"""

needs_display = pytest.mark.skipif(
    not os.environ.get("DISPLAY"),
    reason="needs an X display for PsychoPy windows: run under xvfb-run -a -s '-screen 0 1920x1080x24'",
)


def fast_protocol(path: Path) -> Path:
    text = DEMO.read_text()
    for key, value in FAST.items():
        text, n = re.subn(rf"^{key} = .*$", f"{key} = {value}", text, flags=re.M)
        assert n == 1, key
    path.write_text(text)
    return path


def run_argv(protocol: Path, db: Path, participant: str) -> list[str]:
    return [
        "run",
        "--protocol",
        str(protocol),
        "--participant",
        participant,
        "--observer",
        "simulated",
        "--seed",
        "1",
        "--trials",
        str(N_TRIALS),
        "--db",
        str(db),
    ]


def assert_round_stored(db: Path, participants: list[str]) -> None:
    from lensopt.store import SessionStore

    with SessionStore(db, readonly=True) as store:
        infos = store.sessions()
        assert sorted(i.participant for i in infos) == sorted(participants)
        assert all(i.status == "finished" and i.n_trials == N_TRIALS for i in infos), infos
        for info in infos:
            assert [t.index for t in store.trials(info.session_id)] == list(range(1, N_TRIALS + 1))


@needs_display
def test_lensopt_runs_released_together_on_a_new_database_all_finish_and_all_are_stored(tmp_path):
    protocol = fast_protocol(tmp_path / "fast.toml")
    logs = [tmp_path / f"worker-{k}.log" for k in range(N_PROCESSES)]
    dbs = [tmp_path / f"round-{r}" / "sessions.db" for r in range(N_ROUNDS)]  # no file, no folder yet
    participants = [[f"r{r}p{k}" for k in range(N_PROCESSES)] for r in range(N_ROUNDS)]
    config = {
        "logs": [str(log) for log in logs],
        "rounds": [[run_argv(protocol, db, p) for p in names] for db, names in zip(dbs, participants)],
    }
    pool = subprocess.run(
        [sys.executable, "-c", POOL, json.dumps(config)],
        cwd=REPO,
        env={**os.environ, "OPENBLAS_NUM_THREADS": "1", "OMP_NUM_THREADS": "1", "MKL_NUM_THREADS": "1"},
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert pool.returncode == 0, pool.stderr[-3000:]
    codes = json.loads(pool.stdout.strip().splitlines()[-1])
    assert len(codes) == N_PROCESSES * N_ROUNDS
    failed = [(r, k, code) for r, k, code in codes if code != 0]
    said = {k: [line for line in logs[k].read_text().splitlines() if "error" in line.lower()] for _, k, _ in failed}
    assert not failed, (failed, said)
    for db, names in zip(dbs, participants):
        assert_round_stored(db, names)

    db = tmp_path / "cold" / "sessions.db"
    participants = [f"cold{k}" for k in range(N_COLD)]
    cold = [
        subprocess.Popen(
            [sys.executable, "-m", "lensopt", *run_argv(protocol, db, p)],
            cwd=REPO,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for p in participants
    ]
    for process in cold:
        out, err = process.communicate(timeout=120)
        assert process.returncode == 0, err
        assert f"{N_TRIALS} trials stored" in out
    assert_round_stored(db, participants)
