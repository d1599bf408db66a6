"""Benchmark campaigns: one task per (rule, problem, seed), run on Dask, stored as they finish.

A task is the pure function :func:`run_one`: it takes a :class:`RunSpec` (as a dict) and returns
a JSON-able record — the true value of the reported optimum after every iteration, the final
value, per-decision timings (median, p95), the seed and the versions of lensopt, numpy and
scipy. :func:`run_campaign` skips every run whose record already exists in the campaign
directory, submits the rest to a Dask cluster and writes each record as soon as it arrives
(temp file + ``os.replace``, so an interrupted campaign never leaves a half-written record);
running the same command again resumes where it stopped.

Clusters: by default a ``distributed.LocalCluster`` sized to the machine (``os.cpu_count()``
single-threaded worker processes); ``scheduler="tcp://host:8786"`` connects to a running
cluster (e.g. one started with ``dask-jobqueue``'s ``SLURMCluster`` or ``dask scheduler`` /
``dask worker``). Records travel back to the client, which alone writes files, so workers need
lensopt installed but no shared file system. ``local_sync=True`` runs in-process, without Dask.

What a run is (:class:`RunSpec`, :mod:`lensopt.bench.spec`) and the parts of a record and the
record files every campaign shares (:mod:`lensopt.bench.records`) live below the campaign modules
(preferential, feedback, robustness); this module dispatches to those and re-exports the former.
"""

from __future__ import annotations

import importlib.util
import json
import logging
import os
import platform
import sys
import time
import traceback
import uuid
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from tqdm import tqdm

from lensopt.bench.binary import run_binary
from lensopt.bench.feedback import run_feedback
from lensopt.bench.function_session import OUTCOME_STREAM, function_session
from lensopt.bench.interrupts import (
    children_ignoring_interrupts,
    close_unstarted,
    noting_interrupts,
    raise_if_interrupted,
)
from lensopt.bench.preferential import run_duels
from lensopt.bench.problems import RefractionProblem, function_problem
from lensopt.bench.records import (
    LOCK_NAME,
    MANIFEST_NAME,
    RECORD_FORMAT,
    keep_source_diff,
    lens_outcome,
    load_records,
    manifest_commands,
    record_path,
    recorded_campaign,
    recorded_manifest,
    refraction_loop,
    timing_summary,
    versions,
    write_json_atomic,
)
from lensopt.bench.robustness import run_robustness
from lensopt.bench.spec import CAMPAIGNS, HELD_OUT_FIRST_SEED, SPLITS, RunSpec, spec_differences, split_of
from lensopt.binary.optimizer import ContextualOptimizer
from lensopt.refraction.letters import PAPER_LETTER_MODEL, RefractionOptimizer
from lensopt.store.claim import lock_file

#: The public API: this module's own names and, re-exported, those of :mod:`lensopt.bench.spec` and
#: :mod:`lensopt.bench.records` (which every campaign module imports directly).
__all__ = [
    "CAMPAIGNS",
    "HELD_OUT_FIRST_SEED",
    "MANIFEST_NAME",
    "OUTCOME_STREAM",
    "RECORD_FORMAT",
    "SPLITS",
    "TASK_PREFIX",
    "CampaignSummary",
    "RunSpec",
    "lens_outcome",
    "load_records",
    "record_path",
    "refraction_loop",
    "run_campaign",
    "run_one",
    "split_of",
    "timing_summary",
    "versions",
    "write_json_atomic",
]

#: Prefix of the Dask task keys (the rest is the run key, unique per campaign).
TASK_PREFIX = "lensopt-run-"

#: How long (s) to wait for a ``--scheduler`` to answer before giving up in one line (Dask's own
#: default, ``distributed.comm.timeouts.connect``, is 30 s; a scheduler on the network answers in
#: well under a second).
SCHEDULER_CONNECT_TIMEOUT_S = 10.0


def _check_same_split(out_dir: Path, manifest: dict | None) -> None:
    """Refuse, in one line, runs of one patient split (tuning, held-out) into a campaign folder whose
    manifest records the other: its summary would mix them and its manifest name only the last."""
    if manifest is None or "split" not in manifest:
        return
    recorded = (recorded_manifest(out_dir) or {}).get("split")
    if recorded is not None and recorded != manifest["split"]:
        raise ValueError(
            f"{out_dir} holds a campaign of {recorded} patients; run the {manifest['split']} ones into "
            "another --out (a summary of both splits would call them one)"
        )


def _check_same_campaign(out_dir: Path, manifest: dict | None) -> None:
    """Refuse, in one line and before anything is run or rewritten, a campaign into the folder of
    another kind of campaign (``bench robustness --out`` a prescription campaign's folder): its
    manifest would be replaced, losing that campaign's command, and its summary would read runs of
    two kinds."""
    if manifest is None or "campaign" not in manifest:
        return
    recorded = recorded_campaign(out_dir)
    if recorded is not None and recorded[0] != manifest["campaign"]:
        kind, where = recorded
        raise ValueError(
            f"{out_dir} holds a {kind} campaign ({where}), not a {manifest['campaign']} one; run the "
            f"{manifest['campaign']} campaign into another --out (one folder holds one campaign: its "
            f"summary reads every run there, and {MANIFEST_NAME} keeps its commands)"
        )


def _with_every_command(out_dir: Path, manifest: dict) -> dict:
    """``manifest`` with ``commands``: the commands already run into the folder (its manifest's,
    oldest first; an old manifest's one ``command``), then this one unless it is the last again (a
    resumed campaign). ``command`` stays the last command, whose plan the manifest describes."""
    recorded = recorded_manifest(out_dir)
    earlier = [] if recorded is None else manifest_commands(recorded)
    command = manifest.get("command")
    commands = earlier + ([command] if isinstance(command, str) and earlier[-1:] != [command] else [])
    return {**manifest, "commands": commands} if commands else manifest


def _require_dask() -> None:
    """A one-line ValueError when Dask is not installed (lensopt[bench]), found without importing it."""
    if importlib.util.find_spec("distributed") is None:
        raise ValueError(
            "the benchmark runner needs Dask: pip install 'lensopt[bench]', or pass --local-sync to run without it"
        )


def connect(scheduler: str, timeout_s: float | None = None):
    """A ``distributed.Client`` of the running scheduler at ``scheduler`` (e.g. ``tcp://host:8786``).

    A malformed address or a scheduler that does not answer within ``timeout_s`` (default
    :data:`SCHEDULER_CONNECT_TIMEOUT_S`) is a one-line ValueError naming the address and what to do.
    """
    timeout_s = SCHEDULER_CONNECT_TIMEOUT_S if timeout_s is None else timeout_s
    _require_dask()
    from distributed import Client  # deferred: Dask is optional (lensopt[bench]) and slow to import

    try:
        return Client(scheduler, timeout=timeout_s)
    except (OSError, TimeoutError) as exc:
        reason = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        raise ValueError(
            f"--scheduler {scheduler}: no Dask scheduler answered within {timeout_s:g} s ({reason}); "
            "start one (`dask scheduler`) or leave out --scheduler for a local cluster"
        ) from None
    except ValueError as exc:
        raise ValueError(
            f"--scheduler {scheduler!r} is not a scheduler address ({exc}); give e.g. tcp://HOST:8786"
        ) from None


def _run_function(spec: RunSpec) -> dict:
    problem = function_problem(spec.problem, hyperparameters=spec.hyperparameters)
    opt = ContextualOptimizer(
        problem.system_bounds,
        problem.context_bounds,
        rule=spec.rule,
        seed=spec.seed,
        kernel=problem.kernel(),
        n_initial=spec.n_initial,
    )
    return function_session(spec, problem, opt)


def _run_refraction(spec: RunSpec) -> dict:
    if spec.slope is None:
        raise ValueError(f"refraction run {spec.key} has no slope")
    patient = RefractionProblem(slope=float(spec.slope), n_trials=spec.n_iterations).patient(spec.seed)
    # Table 3 is the paper's experiment: its letter model (plain probit, Laplace), β from the spec
    opt = RefractionOptimizer(
        rule=spec.rule, seed=spec.seed, n_initial=spec.n_initial, **{**PAPER_LETTER_MODEL, **spec.optimizer_options}
    )
    return refraction_loop(
        spec, patient, opt, lambda trial: bool(patient.respond(trial.letter_logmar, trial.sphere_d, trial.cylinder_d))
    )


def run_one(spec: dict) -> dict:
    """Run one benchmark task and return its JSON-able record (a pure function of ``spec``).

    ``decision`` timings cover ask + simulated answer + tell; ``report`` timings the search for
    the reported optimum (``best()``).
    """
    run = RunSpec.from_dict(spec)
    started = datetime.now(UTC)
    t0 = time.perf_counter()
    if run.campaign == "functions":
        body = _run_function(run)
    elif run.campaign == "refraction":
        body = _run_refraction(run)
    elif run.campaign == "feedback":
        body = run_feedback(run)
    elif run.campaign == "robustness":
        body = run_robustness(run)
    elif run.campaign == "binary":
        body = run_binary(run)
    else:
        body = run_duels(run)
    return {
        "format": RECORD_FORMAT,
        "key": run.key,
        **run.to_dict(),
        **body,
        "final_value": body["trajectory"][-1],
        "wall_time_s": time.perf_counter() - t0,
        "started_at": started.isoformat(),
        "finished_at": datetime.now(UTC).isoformat(),
        "host": platform.node(),
        "versions": versions(),
    }


def _finished(out_dir: Path, spec: RunSpec) -> bool:
    path = record_path(out_dir, spec)
    if not path.exists():
        return False
    try:
        record = json.loads(path.read_text())
    except ValueError:  # not JSON (cut short), or not text
        return False  # unreadable: run it again
    try:
        recorded = RunSpec.from_dict(record)
    except (AttributeError, TypeError, ValueError) as exc:  # not an object, a setting missing or wrong
        raise damaged_record(path, f"its settings do not read: {one_line(exc)}") from None
    if recorded != spec:
        raise ValueError(
            f"{path} was run with other settings ({spec_differences(recorded, spec)}); "
            "use another --out directory or the settings of that campaign"
        )
    return True


@dataclass(frozen=True)
class CampaignSummary:
    """What a call to :func:`run_campaign` did."""

    n_total: int
    n_skipped: int
    n_submitted: int
    n_done: int
    failures: tuple[tuple[str, str], ...]  # (run key, one-line error)
    wall_time_s: float


@dataclass(frozen=True)
class CampaignTask:
    """What one kind of campaign runs: ``run(spec_dict) -> record`` (a pure function, shipped to
    Dask workers), where a spec's record lives (``record_path(out_dir, spec)``), and whether it is
    already there (``finished(out_dir, spec)``, raising ValueError if it was run with other
    settings). The specs have a ``key`` and ``to_dict()``."""

    name: str
    run: Callable[[dict], dict]
    record_path: Callable[[Path, Any], Path]
    finished: Callable[[Path, Any], bool]


def damaged_record(path: Path, why: str) -> ValueError:
    """The one-line refusal of a run record that does not read as lensopt wrote it (``why``), with the fix."""
    return ValueError(
        f"{path} is a damaged run record ({why}); delete it, then run this command again, which redoes it"
    )


def one_line(exc: BaseException) -> str:
    """``exc`` in one line: its type and its message's first line."""
    text = f"{type(exc).__name__}: {exc}".strip()
    return text.splitlines()[0] if text else type(exc).__name__


def _progress(total: int, enabled: bool, desc: str):
    return tqdm(total=total, desc=desc, unit="run", disable=not enabled, dynamic_ncols=True, smoothing=0.05)


def run_campaign(
    specs,
    out_dir,
    *,
    manifest: dict | None = None,
    scheduler: str | None = None,
    n_workers: int | None = None,
    local_sync: bool = False,
    progress: bool = True,
    client=None,
    task: CampaignTask | None = None,
    on_plan: Callable[[int, int], None] | None = None,
) -> CampaignSummary:
    """Run every spec without a record in ``out_dir``; store each record as it finishes.

    ``client``: an existing ``distributed.Client`` to use (tests); otherwise ``scheduler`` (an
    address) or a new ``LocalCluster`` of ``n_workers`` (default ``os.cpu_count()``) processes.
    A failing run is reported in ``failures`` and leaves no record, so a re-run retries it.
    ``task``: what a run is (:class:`CampaignTask`); by default the :class:`RunSpec` campaigns'
    :func:`run_one`. ``on_plan(n_runs, n_already_done)``: called once what is to run is known,
    before any run (the progress bar says it too; without one, a log does not).
    """
    task = BENCHMARK_TASK if task is None else task
    out_dir = Path(out_dir)
    own_client = False
    _check_same_campaign(out_dir, manifest)
    _check_same_split(out_dir, manifest)
    if client is None and not local_sync:
        _require_dask()  # before anything is created: no campaign folder left without Dask
    if client is None and scheduler and not local_sync:
        # before anything is created: an unreachable scheduler leaves no campaign folder
        client, own_client = connect(scheduler), True
    try:
        return _run_campaign(
            specs, out_dir, manifest, scheduler, n_workers, local_sync, progress, client, task, on_plan
        )
    finally:
        if own_client:
            client.close()


def _in_use(out_dir: Path) -> Callable[[str], ValueError]:
    """The one-line refusal of a campaign folder another command runs into (holds its lock)."""

    def refusal(holder: str) -> ValueError:
        return ValueError(
            f"--out {out_dir} is in use by process {holder} (another lensopt bench command running into it); "
            "wait for it to end, or choose another --out"
        )

    return refusal


def _run_campaign(specs, out_dir, manifest, scheduler, n_workers, local_sync, progress, client, task, on_plan):
    try:
        (out_dir / "runs").mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise ValueError(
            f"--out {out_dir}: cannot create the campaign folder ({exc.strerror}); choose a writable folder"
        ) from None
    # one command at a time runs into a folder: two would both run every run and race to write them
    with lock_file(out_dir / LOCK_NAME, _in_use(out_dir)):
        _check_same_campaign(out_dir, manifest)  # again: a command that held the lock may have written it
        _check_same_split(out_dir, manifest)
        return _run_locked(specs, out_dir, manifest, scheduler, n_workers, local_sync, progress, client, task, on_plan)


def _run_locked(specs, out_dir, manifest, scheduler, n_workers, local_sync, progress, client, task, on_plan):
    specs = list(specs)
    if len({s.key for s in specs}) != len(specs):
        raise ValueError("duplicate runs in the campaign (the same run twice: problem or setting, rule and seed)")
    if n_workers is not None and n_workers < 1:
        raise ValueError(f"--workers must be >= 1, got {n_workers}")
    todo = [s for s in specs if not task.finished(out_dir, s)]
    if manifest is not None:
        write_json_atomic(out_dir / MANIFEST_NAME, _with_every_command(out_dir, manifest))
    keep_source_diff(out_dir)  # a modified checkout's changes, named by the runs it makes
    if on_plan is not None:
        on_plan(len(specs), len(specs) - len(todo))
    failures: list[tuple[str, str]] = []
    t0 = time.perf_counter()
    desc = f"{out_dir.name}: {len(specs) - len(todo)} already done"
    with _progress(len(todo), progress and bool(todo), desc) as bar:
        if todo and local_sync:
            for spec in todo:
                try:
                    write_json_atomic(task.record_path(out_dir, spec), task.run(spec.to_dict()))
                except Exception as exc:  # noqa: BLE001 - reported, run retried next time
                    failures.append((spec.key, one_line(exc)))
                    if os.environ.get("LENSOPT_DEBUG"):
                        traceback.print_exc(file=sys.stderr)
                bar.update()
        elif todo:
            _run_on_dask(todo, out_dir, bar, failures, scheduler, n_workers, client, task)
    n_done = len(todo) - len(failures)
    return CampaignSummary(
        len(specs), len(specs) - len(todo), len(todo), n_done, tuple(failures), time.perf_counter() - t0
    )


#: Dask's default environment for a worker process that lensopt's local cluster leaves out: glibc's
#: trim threshold of 64 kB (distributed.nanny.pre-spawn-environ), which returns every freed large
#: block to the kernel — the acuity-law optimizer's and the ideal observer's decisions then take
#: about four times as long (page faults on every temporary; lensopt.allocator sets the thresholds
#: itself, unless this variable is set).
DASK_ENVIRONMENT_LEFT_OUT = ("MALLOC_TRIM_THRESHOLD_",)


def local_cluster(cluster_class, n_workers: int):
    """A local cluster of ``n_workers`` single-threaded worker processes, without the environment
    variables of :data:`DASK_ENVIRONMENT_LEFT_OUT` (a user's own, in this process's environment, are
    inherited as usual). Its workers log only what is critical: a run that fails is one line of the
    campaign's summary, not a worker's "Compute Failed" traceback under the progress bar
    (``LENSOPT_DEBUG=1`` lets them log as Dask does, and prints the tracebacks)."""
    import dask  # deferred with the rest of Dask
    from distributed.deploy.spec import SpecCluster

    left_out = {f"distributed.nanny.pre-spawn-environ.{name}": None for name in DASK_ENVIRONMENT_LEFT_OUT}
    silence = logging.WARNING if os.environ.get("LENSOPT_DEBUG") else logging.CRITICAL
    earlier = set(SpecCluster._instances)  # a caller's own clusters (Dask's registry of them)
    try:
        with (
            dask.config.set({**left_out, "distributed.worker.preload": [WORKER_PRELOAD]}),
            children_ignoring_interrupts(),
        ):
            return cluster_class(
                n_workers=n_workers, threads_per_worker=1, processes=True, dashboard_address=None, silence_logs=silence
            )
    except BaseException:  # a Ctrl-C while it started: closed here, quietly, not by Dask at exit
        unstarted = set(SpecCluster._instances) - earlier  # whose close there printed a traceback
        close_unstarted(unstarted)
        SpecCluster._instances.difference_update(unstarted)
        raise


#: The module each local worker runs as it starts (:mod:`lensopt.bench.worker_start`): it ignores
#: Ctrl-C, which the terminal sends to every process of its group, so that the campaign here
#: handles it (its clean-up shuts the workers down) instead of each worker dying with a traceback
#: — also a worker its nanny restarts. The workers the cluster starts ignore it from their first
#: instruction, before the preload (:func:`lensopt.bench.interrupts.children_ignoring_interrupts`).
#: This process keeps its own Ctrl-C throughout, even while the cluster starts (ignoring it here
#: for the workers to inherit lost a Ctrl-C of those seconds).
WORKER_PRELOAD = "lensopt.bench.worker_start"


def _run_on_dask(todo, out_dir, bar, failures, scheduler, n_workers, client, task: CampaignTask) -> None:
    _require_dask()
    from distributed import Client, LocalCluster, as_completed  # deferred: optional and slow to import

    own_client = client is None  # a scheduler's client is made (and closed) by run_campaign
    cluster = None
    interrupted: list[int] = []
    # noted for the whole run, not only while the cluster starts: a KeyboardInterrupt raised inside a
    # finalizer (a weakref callback under load) is printed and dropped by Python, and the campaign ran
    # to its end, exit 0; noted, it is raised again at the next check
    with noting_interrupts(interrupted):
        if own_client:
            if scheduler:  # pragma: no cover - run_campaign connects first
                client = connect(scheduler)
            else:
                cluster = local_cluster(LocalCluster, n_workers or os.cpu_count() or 1)
                client = Client(cluster)
        try:
            raise_if_interrupted(interrupted)  # a Ctrl-C while the cluster started that Dask's start-up swallowed
            # Keys unique to this invocation, so two campaigns sharing a scheduler never share a task.
            token = uuid.uuid4().hex[:12]
            futures, specs_by_future = [], {}
            for spec in todo:
                future = client.submit(task.run, spec.to_dict(), key=f"{TASK_PREFIX}{token}-{spec.key}")
                futures.append(future)
                specs_by_future[future.key] = spec
            for future in as_completed(futures):
                raise_if_interrupted(interrupted)
                spec = specs_by_future[future.key]
                try:
                    write_json_atomic(task.record_path(out_dir, spec), future.result())
                except Exception as exc:  # noqa: BLE001 - reported, run retried next time
                    failures.append((spec.key, one_line(exc)))
                    if os.environ.get("LENSOPT_DEBUG"):
                        traceback.print_exc(file=sys.stderr)
                bar.update()
                future.release()
            raise_if_interrupted(interrupted)
        finally:
            if own_client:
                client.close()
                if cluster is not None:
                    cluster.close()


#: The :class:`RunSpec` campaigns (functions, refraction, duels, feedback, robustness).
BENCHMARK_TASK = CampaignTask("benchmark", run_one, record_path, _finished)
