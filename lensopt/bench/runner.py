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
"""

from __future__ import annotations

import json
import math
import os
import platform
import sys
import tempfile
import time
import traceback
import uuid
from dataclasses import asdict, dataclass, fields
from datetime import datetime, timezone
from pathlib import Path

import numpy as np

#: Campaign kinds: contextual binary test functions, simulated refraction, and the preferential
#: campaigns of :mod:`lensopt.bench.preferential`, letters against duels (:mod:`lensopt.bench.feedback`)
#: and the held-out robustness campaign against the ideal observer (:mod:`lensopt.bench.robustness`).
CAMPAIGNS = ("functions", "refraction", "duels", "batch-duels", "contextual-duels", "feedback",
             "robustness")

#: Patient seeds from this one on are held out: no tuning (kernels, hyperparameters, β,
#: thresholds) may use them (issue 14). Seeds below it are the tuning split.
HELD_OUT_FIRST_SEED = 100_000

#: Names of the two splits of the patient seeds.
SPLITS = ("tuning", "held-out")


def split_of(seed: int) -> str:
    """``"held-out"`` for patient seeds ``>= HELD_OUT_FIRST_SEED``, ``"tuning"`` below."""
    return "held-out" if seed >= HELD_OUT_FIRST_SEED else "tuning"


def _is_number(value) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value)

#: File name of a campaign's manifest (its settings and command), next to the run records.
MANIFEST_NAME = "campaign.json"

#: Prefix of the Dask task keys (the rest is the run key, unique per campaign).
TASK_PREFIX = "lensopt-run-"

#: Record format tag.
RECORD_FORMAT = "lensopt.bench-run/1"

#: Spawn key of the outcome-noise stream of a function run: distinct from the optimizer's streams
#: and the same for every rule, so rules with the same seed face the same uniform draws.
OUTCOME_STREAM = 0x0C0C


@dataclass(frozen=True)
class RunSpec:
    """One run: a rule on a problem with a seed, for ``n_iterations`` trials."""

    campaign: str
    problem: str
    rule: str
    seed: int
    n_iterations: int
    n_initial: int = 5
    slope: float | None = None  # refraction only
    hyperparameters: str = "fitted"  # functions only: "fitted" (paper) or "default"
    report_every: int = 1  # search the reported optimum after trial 1, every k trials, and the last
    tie_threshold: float | None = None  # feedback only: the patient's δ (utility units)
    beta: float | None = None  # refraction and feedback (letters): β of UCB_Φ (None: the default)
    # robustness only (None elsewhere, so older records load and compare equal):
    lapse: float | None = None  # the patient's lapse rate λ (robustness default 0)
    n_alternatives: int | None = None  # letters to choose from, γ = 1/n (robustness default 26)
    model_lapse: float | None = None  # the optimizer's assumed λ (None: the optimizer's default)
    split: str | None = None  # "held-out" (seed >= HELD_OUT_FIRST_SEED) or "tuning"
    stop_confidence: float | None = None  # StopRule.confidence (robustness default 0.95)
    min_trials: int | None = None  # StopRule.min_trials (robustness default 20, at most n_iterations)

    def reports_after(self, trial: int) -> bool:
        """Whether the reported optimum is searched after ``trial`` (1-based); in between, the
        trajectory holds the last reported value (the search costs as much as a decision)."""
        return trial == 1 or trial == self.n_iterations or trial % self.report_every == 0

    def __post_init__(self):
        if self.campaign not in CAMPAIGNS:
            raise ValueError(f"RunSpec.campaign must be one of {CAMPAIGNS}, got {self.campaign!r}")
        if not isinstance(self.seed, int) or self.seed < 0:
            raise ValueError(f"RunSpec.seed must be an integer >= 0, got {self.seed!r}")
        if not isinstance(self.n_iterations, int) or self.n_iterations < 1:
            raise ValueError(f"RunSpec.n_iterations must be an integer >= 1, got {self.n_iterations!r}")
        if not isinstance(self.n_initial, int) or self.n_initial < 0:
            raise ValueError(f"RunSpec.n_initial must be an integer >= 0, got {self.n_initial!r}")
        if self.campaign in ("refraction", "feedback", "robustness") and self.slope is None:
            raise ValueError(f"RunSpec.slope is required for a {self.campaign} run")
        if self.campaign == "feedback" and not (isinstance(self.tie_threshold, (int, float))
                                                and self.tie_threshold >= 0):
            raise ValueError(f"RunSpec.tie_threshold must be a number >= 0 for a feedback run, "
                             f"got {self.tie_threshold!r}")
        if self.beta is not None and not (isinstance(self.beta, (int, float)) and math.isfinite(self.beta)
                                          and self.beta >= 0):
            raise ValueError(f"RunSpec.beta must be a number >= 0 or None, got {self.beta!r}")
        if not isinstance(self.report_every, int) or self.report_every < 1:
            raise ValueError(f"RunSpec.report_every must be an integer >= 1, got {self.report_every!r}")
        if self.hyperparameters not in ("fitted", "default"):
            raise ValueError("RunSpec.hyperparameters must be 'fitted' or 'default', "
                             f"got {self.hyperparameters!r}")
        if self.campaign == "robustness":
            self._fill_robustness_defaults()
        self._check_robustness_fields()

    def _fill_robustness_defaults(self):
        from lensopt.stopping import DEFAULT_MIN_TRIALS, DEFAULT_STOP_CONFIDENCE

        defaults = {"lapse": 0.0, "n_alternatives": 26, "split": split_of(self.seed),
                    "stop_confidence": DEFAULT_STOP_CONFIDENCE,
                    "min_trials": min(DEFAULT_MIN_TRIALS, self.n_iterations)}
        for name, value in defaults.items():
            if getattr(self, name) is None:
                object.__setattr__(self, name, value)

    def _check_robustness_fields(self):
        n = self.n_alternatives
        if n is not None and (isinstance(n, bool) or not isinstance(n, int) or n < 2):
            raise ValueError(f"RunSpec.n_alternatives must be an integer >= 2, got {n!r}")
        guess = 1.0 / (n or 26)
        if self.lapse is not None and not (_is_number(self.lapse) and 0 <= self.lapse < 1 - guess):
            raise ValueError(f"RunSpec.lapse must be in [0, 1 - 1/n_alternatives), got {self.lapse!r}")
        if self.model_lapse is not None and not (_is_number(self.model_lapse) and 0 <= self.model_lapse < 0.5):
            raise ValueError(f"RunSpec.model_lapse must be in [0, 0.5), got {self.model_lapse!r}")
        if self.split is not None:
            if self.split not in SPLITS:
                raise ValueError(f"RunSpec.split must be one of {SPLITS}, got {self.split!r}")
            if isinstance(self.seed, int) and self.split != split_of(self.seed):
                raise ValueError(f"RunSpec.split of seed {self.seed} is {split_of(self.seed)!r} "
                                 f"(held out from {HELD_OUT_FIRST_SEED:,} on), got {self.split!r}")
        if self.stop_confidence is not None and not (_is_number(self.stop_confidence)
                                                     and 0 < self.stop_confidence < 1):
            raise ValueError(f"RunSpec.stop_confidence must be in (0, 1), got {self.stop_confidence!r}")
        m = self.min_trials
        if m is not None and (isinstance(m, bool) or not isinstance(m, int) or m < 1
                              or (isinstance(self.n_iterations, int) and m > self.n_iterations)):
            raise ValueError(f"RunSpec.min_trials must be an integer from 1 to n_iterations, got {m!r}")

    @property
    def optimizer_options(self) -> dict:
        """Keyword arguments of the refraction optimizer set by this spec: β, the number of
        alternatives and the model's lapse rate, each when given."""
        options = {} if self.beta is None else {"beta": float(self.beta)}
        if self.n_alternatives is not None:
            options["n_alternatives"] = int(self.n_alternatives)
        if self.model_lapse is not None:
            options["lapse"] = float(self.model_lapse)
        return options

    @property
    def key(self) -> str:
        """File-name-safe identifier, unique within a campaign directory."""
        return f"{self.problem}__{self.rule}__seed{self.seed:04d}"

    def to_dict(self) -> dict:
        return asdict(self)

    @classmethod
    def from_dict(cls, data: dict) -> "RunSpec":
        names = {f.name for f in fields(cls)}
        return cls(**{k: v for k, v in data.items() if k in names})


def versions() -> dict:
    """Versions recorded with every run."""
    import scipy

    from lensopt import __version__

    return {"lensopt": __version__, "numpy": np.__version__, "scipy": scipy.__version__,
            "python": platform.python_version()}


def timing_summary(samples_ms: list[float]) -> dict:
    a = np.asarray(samples_ms, dtype=float)
    return {"median": float(np.median(a)), "p95": float(np.percentile(a, 95)), "n": int(a.size)}


def _run_function(spec: RunSpec) -> dict:
    from lensopt.bench.problems import function_problem
    from lensopt.optimizer import ContextualOptimizer

    problem = function_problem(spec.problem, hyperparameters=spec.hyperparameters)
    opt = ContextualOptimizer(problem.system_bounds, problem.context_bounds, rule=spec.rule,
                              seed=spec.seed, kernel=problem.kernel(), n_initial=spec.n_initial)
    uniforms = np.random.default_rng(
        np.random.SeedSequence(spec.seed, spawn_key=(OUTCOME_STREAM,))
    ).random(spec.n_iterations)
    lower, upper = problem.function.lower, problem.function.upper
    trajectory, decision_ms, report_ms = [], [], []
    best = None
    for t in range(spec.n_iterations):
        t0 = time.perf_counter()
        query = opt.ask()
        system = np.clip(np.asarray(query.system, dtype=float), lower, upper)[None, :]
        p = problem.probability(np.asarray(query.context, dtype=float)[:1], system)[0]
        opt.tell(query, bool(uniforms[t] < p))
        t1 = time.perf_counter()
        decision_ms.append(1e3 * (t1 - t0))
        if spec.reports_after(t + 1):
            best = np.clip(np.asarray(opt.best_system(), dtype=float), lower, upper)
            report_ms.append(1e3 * (time.perf_counter() - t1))
            value = float(problem.g(best[None, :])[0])
        trajectory.append(value)
    return {
        "direction": problem.direction,
        "optimal_value": problem.optimal_value,
        "final_point": best.tolist(),
        "trajectory": trajectory,
        "timings_ms": {"decision": timing_summary(decision_ms), "report": timing_summary(report_ms)},
    }


def _run_refraction(spec: RunSpec) -> dict:
    from lensopt.bench.problems import RefractionProblem
    from lensopt.refraction import PAPER_LETTER_MODEL, RefractionOptimizer

    patient = RefractionProblem(slope=float(spec.slope), n_trials=spec.n_iterations).patient(spec.seed)
    # Table 3 is the paper's experiment: its letter model (plain probit, Laplace), β from the spec
    opt = RefractionOptimizer(rule=spec.rule, seed=spec.seed, n_initial=spec.n_initial,
                              **{**PAPER_LETTER_MODEL, **spec.optimizer_options})
    return refraction_loop(spec, patient, opt, lambda trial: bool(
        patient.respond(trial.letter_logmar, trial.sphere_d, trial.cylinder_d)))


def refraction_loop(spec: RunSpec, patient, opt, answer) -> dict:
    """The body of a refraction-like run: ``spec.n_iterations`` times ask, ``answer(trial)``, tell;
    the trajectory is the acuity error (logMAR) of ``opt.best_lens()`` (every ``report_every``)."""
    trajectory, decision_ms, report_ms = [], [], []
    lens, value = None, None
    for t in range(spec.n_iterations):
        t0 = time.perf_counter()
        trial = opt.ask()
        opt.tell(trial, answer(trial))
        t1 = time.perf_counter()
        decision_ms.append(1e3 * (t1 - t0))
        if spec.reports_after(t + 1):
            lens = tuple(float(v) for v in opt.best_lens())
            report_ms.append(1e3 * (time.perf_counter() - t1))
            value = float(patient.visual_acuity(*lens) - patient.best_acuity_logmar)
        trajectory.append(value)
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


def run_one(spec: dict) -> dict:
    """Run one benchmark task and return its JSON-able record (a pure function of ``spec``).

    ``decision`` timings cover ask + simulated answer + tell; ``report`` timings the search for
    the reported optimum (``best_system`` / ``best_lens``).
    """
    run = RunSpec.from_dict(spec)
    started = datetime.now(timezone.utc)
    t0 = time.perf_counter()
    if run.campaign == "functions":
        body = _run_function(run)
    elif run.campaign == "refraction":
        body = _run_refraction(run)
    elif run.campaign == "feedback":
        from lensopt.bench.feedback import run_feedback

        body = run_feedback(run)
    elif run.campaign == "robustness":
        from lensopt.bench.robustness import run_robustness

        body = run_robustness(run)
    else:
        from lensopt.bench.preferential import run_duels

        body = run_duels(run)
    return {
        "format": RECORD_FORMAT,
        "key": run.key,
        **run.to_dict(),
        **body,
        "final_value": body["trajectory"][-1],
        "wall_time_s": time.perf_counter() - t0,
        "started_at": started.isoformat(),
        "finished_at": datetime.now(timezone.utc).isoformat(),
        "host": platform.node(),
        "versions": versions(),
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


def load_records(out_dir: Path) -> list[dict]:
    """Every finished run record of a campaign directory (sorted by key)."""
    runs = Path(out_dir) / "runs"
    if not runs.is_dir():
        raise ValueError(f"{out_dir} holds no benchmark runs (no 'runs/' directory); "
                         "run `lensopt bench functions|refraction --out DIR` first")
    return [json.loads(p.read_text()) for p in sorted(runs.glob("*.json"))]


def _finished(out_dir: Path, spec: RunSpec) -> bool:
    path = record_path(out_dir, spec)
    if not path.exists():
        return False
    try:
        record = json.loads(path.read_text())
    except json.JSONDecodeError:
        return False  # unreadable: run it again
    if RunSpec.from_dict(record) != spec:
        raise ValueError(
            f"{path} was run with other settings ({RunSpec.from_dict(record)}); "
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


def _one_line(exc: BaseException) -> str:
    text = f"{type(exc).__name__}: {exc}".strip()
    return text.splitlines()[0] if text else type(exc).__name__


def _progress(total: int, enabled: bool, desc: str):
    from tqdm import tqdm

    return tqdm(total=total, desc=desc, unit="run", disable=not enabled, dynamic_ncols=True,
                smoothing=0.05)


def run_campaign(specs, out_dir, *, manifest: dict | None = None, scheduler: str | None = None,
                 n_workers: int | None = None, local_sync: bool = False, progress: bool = True,
                 client=None) -> CampaignSummary:
    """Run every spec without a record in ``out_dir``; store each record as it finishes.

    ``client``: an existing ``distributed.Client`` to use (tests); otherwise ``scheduler`` (an
    address) or a new ``LocalCluster`` of ``n_workers`` (default ``os.cpu_count()``) processes.
    A failing run is reported in ``failures`` and leaves no record, so a re-run retries it.
    """
    out_dir = Path(out_dir)
    (out_dir / "runs").mkdir(parents=True, exist_ok=True)
    specs = list(specs)
    if len({s.key for s in specs}) != len(specs):
        raise ValueError("duplicate runs in the campaign (same problem, rule and seed)")
    if n_workers is not None and n_workers < 1:
        raise ValueError(f"--workers must be >= 1, got {n_workers}")
    todo = [s for s in specs if not _finished(out_dir, s)]
    if manifest is not None:
        write_json_atomic(out_dir / MANIFEST_NAME, manifest)
    failures: list[tuple[str, str]] = []
    t0 = time.perf_counter()
    desc = f"{out_dir.name}: {len(specs) - len(todo)} already done"
    with _progress(len(todo), progress and bool(todo), desc) as bar:
        if todo and local_sync:
            for spec in todo:
                try:
                    write_json_atomic(record_path(out_dir, spec), run_one(spec.to_dict()))
                except Exception as exc:  # noqa: BLE001 - reported, run retried next time
                    failures.append((spec.key, _one_line(exc)))
                    if os.environ.get("LENSOPT_DEBUG"):
                        traceback.print_exc(file=sys.stderr)
                bar.update()
        elif todo:
            _run_on_dask(todo, out_dir, bar, failures, scheduler, n_workers, client)
    n_done = len(todo) - len(failures)
    return CampaignSummary(len(specs), len(specs) - len(todo), len(todo), n_done,
                           tuple(failures), time.perf_counter() - t0)


def _run_on_dask(todo, out_dir, bar, failures, scheduler, n_workers, client) -> None:
    try:
        from distributed import Client, LocalCluster, as_completed
    except ImportError:  # pragma: no cover - depends on the installation
        raise ValueError("the benchmark runner needs Dask: pip install 'lensopt[bench]', "
                         "or pass --local-sync to run without it") from None
    own_client = client is None
    cluster = None
    if own_client:
        if scheduler:
            client = Client(scheduler)
        else:
            cluster = LocalCluster(n_workers=n_workers or os.cpu_count() or 1,
                                   threads_per_worker=1, processes=True, dashboard_address=None)
            client = Client(cluster)
    try:
        # Keys unique to this invocation, so two campaigns sharing a scheduler never share a task.
        token = uuid.uuid4().hex[:12]
        futures, specs_by_future = [], {}
        for spec in todo:
            future = client.submit(run_one, spec.to_dict(), key=f"{TASK_PREFIX}{token}-{spec.key}")
            futures.append(future)
            specs_by_future[future.key] = spec
        for future in as_completed(futures):
            spec = specs_by_future[future.key]
            try:
                write_json_atomic(record_path(out_dir, spec), future.result())
            except Exception as exc:  # noqa: BLE001 - reported, run retried next time
                failures.append((spec.key, _one_line(exc)))
                if os.environ.get("LENSOPT_DEBUG"):
                    traceback.print_exc(file=sys.stderr)
            bar.update()
            future.release()
    finally:
        if own_client:
            client.close()
            if cluster is not None:
                cluster.close()
