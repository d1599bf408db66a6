"""Decision time in a user's own script, several at once: ``lensopt bench decision-time``.

Issue 14, item 7: a decision (``ask`` plus ``tell``, the model update included) must take at most
one 60 Hz frame (16.7 ms) at the 95th percentile, also in a script that imports numpy before
lensopt (as every PsychoPy script does) while another such process runs on the same machine.

:func:`run_decision_time` starts ``processes`` separate Python processes at the same moment. Each
imports numpy and scipy *before* lensopt (``numpy_first=True``, the default; or lensopt first),
with ``OPENBLAS_NUM_THREADS``, ``OMP_NUM_THREADS`` and ``MKL_NUM_THREADS`` removed from its
environment (other ``OPENBLAS_*`` variables are kept), so its BLAS libraries start with one thread
per core, as in a user's script. Each then runs a simulated refraction session —
``RefractionOptimizer(rule, seed=seed + i)`` answered by ``draw_patients(1, seed + i)[0]`` — and
times ``ask()`` plus ``tell()`` of every trial with ``time.perf_counter`` (the patient's answer
is not timed), and with ``time.thread_time`` the CPU time the deciding thread spent meanwhile (on a
machine busy with other work the wall-clock time also holds the waits for a core; the CPU time does
not). The processes wait for each other after their imports and set-up, so the timed
sessions overlap.

The per-call BLAS limit (:mod:`lensopt.threads`) is what a user's script gets from the
optimizer's decorated methods. While ``RefractionOptimizer``'s ``ask``/``tell`` (or those of the
``ContextualOptimizer`` inside it) are not decorated, the benchmark applies the same decorator to
them itself and says so (``limit_applied_by``). ``limit=False`` sets ``LENSOPT_BLAS_THREADS=0``
in the processes (no limit) and reproduces the slow case. Each process also reports the BLAS
thread counts (``threadpoolctl.threadpool_info()``) read inside a limited call, as the timed
calls run, and outside one: the proof that the limit took effect.

``handler=True`` times the decisions of a PsychoPy script instead (issue 18): the optimizer is
driven by :class:`lensopt.psychopy.RefractionHandler`, and a decision is ``handler.addResponse(answer)``
up to ``next(handler)`` returning the next trial — ``tell``, the stopping rule's check between
trials and ``ask`` — every decision timed, the first trial's and the final one that ends the loop
included. ``stop=P`` gives the optimizer a stopping rule ``StopRule(confidence=P,
min_trials=min_trials)``, checked at every decision from ``min_trials`` answers on (with
``handler=False`` the check is timed after ``tell`` as well).

With the handler the next trial is decided ahead by default, for both answers, in a worker
process while the patient looks at the letter (:mod:`lensopt.psychopy.lookahead`): the decision
then waits only for what the worker has not finished when the answer comes. So the simulated
patient takes ``response_ms`` to answer (default :data:`DEFAULT_RESPONSE_MS`; untimed, as the
answer itself is), and ``lookahead=False`` times the handler deciding in its own process.

:mod:`lensopt.bench.decision_time_process` is the code of one process; each process imports it
only after its own numpy-first or lensopt-first imports, so the order under test is the one it chose.
"""

from __future__ import annotations

import json
import math
import os
import subprocess
import sys

from lensopt.bench.decision_time_process import (
    DEFAULT_RESPONSE_MS,
    DEFAULT_RULE,
    DEFAULT_SEED,
    DEFAULT_TRIALS,
    SEARCHES,
)
from lensopt.binary.settings import ALL_RULES
from lensopt.preference.settings import CONTEXTUAL_RULES
from lensopt.refraction.acuity_law_settings import ACUITY_LAW_RULE, accommodation_amplitudes
from lensopt.refraction.prescription_letters import PRESCRIPTION_RULES
from lensopt.refraction.prescription_rankings import PRESCRIPTION_RANKING_RULES
from lensopt.stopping import DEFAULT_MIN_TRIALS, StopRule
from lensopt.threads import ENV_VAR, blas_threads_setting

FRAME_MS = 1000.0 / 60.0
"""One frame of a 60 Hz display, ms: the budget of a decision's 95th percentile."""

BLAS_ENV = ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS")
"""Thread-count variables removed from the processes' environment (as in a user's shell)."""

DEFAULT_PROCESSES = 2

DECISION_ASK_TELL = "ask + tell"
DECISION_HANDLER = "addResponse -> next trial (tell, stop check, ask)"
"""What one timed decision is, without and with the PsychoPy handler."""

COMPARISONS = ("duel", "prescription-duel", "prescription-ranking")
"""The searches of compared lenses: no stopping rule of their own (``--stop`` is refused)."""

_NUMPY_FIRST = "import numpy, scipy, scipy.linalg, scipy.special, scipy.stats\nimport lensopt\n"
_LENSOPT_FIRST = "import lensopt\nimport numpy, scipy, scipy.linalg, scipy.special, scipy.stats\n"
_RUN_CHILD = "import sys\nfrom lensopt.bench.decision_time_process import main\nsys.exit(main(sys.argv[1:]))\n"


def child_environment(limit: bool = True, base=None) -> dict:
    """The environment of a benchmark process: ``base`` (default ``os.environ``) without the BLAS
    thread-count variables; ``LENSOPT_BLAS_THREADS=0`` when ``limit`` is false."""
    env = dict(os.environ if base is None else base)
    for name in BLAS_ENV:
        env.pop(name, None)
    if not limit:
        env[ENV_VAR] = "0"
    return env


def summarize_ms(values) -> dict:
    """Median, 95th percentile and maximum of decision times (ms), and p95 in 60 Hz frames."""
    ordered = sorted(float(v) for v in values)
    if not ordered:
        return {"n": 0, "median_ms": None, "p95_ms": None, "max_ms": None, "p95_frames": None}
    median, p95 = _percentile(ordered, 50), _percentile(ordered, 95)
    return {"n": len(ordered), "median_ms": median, "p95_ms": p95, "max_ms": ordered[-1], "p95_frames": p95 / FRAME_MS}


def _percentile(ordered, q):
    """Linear-interpolation percentile (numpy's default) of a sorted list."""
    position = (len(ordered) - 1) * q / 100.0
    low = math.floor(position)
    high = min(low + 1, len(ordered) - 1)
    return ordered[low] + (ordered[high] - ordered[low]) * (position - low)


def run_decision_time(
    rule: str = DEFAULT_RULE,
    processes: int = DEFAULT_PROCESSES,
    trials: int = DEFAULT_TRIALS,
    seed: int = DEFAULT_SEED,
    numpy_first: bool = True,
    limit: bool = True,
    timeout_s: float | None = 600.0,
    search: str = "sphere-cylinder",
    handler: bool = False,
    stop: float | None = None,
    min_trials: int = DEFAULT_MIN_TRIALS,
    lookahead: bool = True,
    response_ms: float = DEFAULT_RESPONSE_MS,
    accommodation_d: tuple[float, ...] | None = None,
) -> dict:
    """Run the benchmark (see the module docstring) and return its result as a JSON-able dict.
    ``search="prescription"`` times the full prescription instead (issue 16): a
    :class:`~lensopt.refraction.prescription_letters.PrescriptionOptimizer` around an
    autorefraction of a clinic patient (``draw_clinic_patients(1, seed + i, slope=14)``), three
    lens parameters and the letter size. ``handler``, ``stop``, ``min_trials``, ``lookahead`` and
    ``response_ms`` (both with the handler only): see the module docstring. ``accommodation_d``: the
    acuity-law optimizer's prior amplitudes of accommodation (``[optimizer] accommodation_d``; that
    rule and search only)."""
    if search not in SEARCHES:
        raise ValueError(f"unknown search {search!r}; choose from: {', '.join(SEARCHES)}")
    rules = {
        "prescription": PRESCRIPTION_RULES,
        "duel": CONTEXTUAL_RULES,
        "prescription-duel": CONTEXTUAL_RULES,
        "prescription-ranking": PRESCRIPTION_RANKING_RULES,
    }.get(search, (*ALL_RULES, ACUITY_LAW_RULE))
    if rule not in rules:
        raise ValueError(f"unknown rule {rule!r}; choose from: {', '.join(rules)}")
    for name, value, low in (
        ("processes", processes, 1),
        ("trials", trials, 1),
        ("seed", seed, 0),
        ("min_trials", min_trials, 1),
    ):
        if isinstance(value, bool) or not isinstance(value, int) or value < low:
            raise ValueError(f"decision-time: {name} must be an integer ≥ {low}, got {value!r}")
    if isinstance(response_ms, bool) or not isinstance(response_ms, (int, float)) or not 0 <= response_ms <= 10_000:
        raise ValueError(
            f"decision-time: the answer time (--response-ms) must be from 0 to 10000 ms (e.g. 300), got {response_ms!r}"
        )
    if accommodation_d is not None:
        if rule != ACUITY_LAW_RULE or search != "sphere-cylinder":
            raise ValueError(
                f"decision-time: --accommodation sets the {ACUITY_LAW_RULE} optimizer's prior amplitudes; "
                f"add --rule {ACUITY_LAW_RULE} (sphere-cylinder search) or leave it out"
            )
        accommodation_d = accommodation_amplitudes(accommodation_d)  # one-line errors
    if stop is not None and search in COMPARISONS:
        what = "rankings" if search == "prescription-ranking" else "duels"
        raise ValueError(f"decision-time: {what} have no stopping rule: leave out --stop with --search {search}")
    if stop is not None:
        StopRule(confidence=stop, min_trials=min_trials, max_trials=max(trials, min_trials))  # one-line errors
        if min_trials > trials:
            raise ValueError(
                f"decision-time: the stopping rule's min_trials ({min_trials}) exceeds trials ({trials}), so it "
                "would never be checked: lower --min-trials or raise --trials"
            )
    env = child_environment(limit)
    setting = blas_threads_setting() if limit else 0  # a bad LENSOPT_BLAS_THREADS fails here, once
    code = (_NUMPY_FIRST if numpy_first else _LENSOPT_FIRST) + _RUN_CHILD
    children = []
    try:
        for i in range(processes):
            argv = [sys.executable, "-c", code, "--rule", rule, "--trials", str(trials), "--seed", str(seed + i)]
            argv += ["--search", search]
            if handler:
                argv += ["--handler", "--response-ms", repr(float(response_ms))]
                if not lookahead:
                    argv += ["--no-lookahead"]
            if stop is not None:
                argv += ["--stop", repr(float(stop)), "--min-trials", str(min_trials)]
            if accommodation_d is not None:
                argv += ["--accommodation", *map(repr, accommodation_d)]
            children.append(
                subprocess.Popen(
                    argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env
                )
            )
        for child in children:  # every process has imported and built its optimizer
            assert child.stdout is not None  # Popen(stdout=PIPE)
            line = child.stdout.readline()
            if line.strip() != "ready":
                raise RuntimeError(_failure(child, line))
        for child in children:  # ... then all start their sessions together
            assert child.stdin is not None  # Popen(stdin=PIPE)
            child.stdin.write("go\n")
            child.stdin.flush()
        outputs = []
        for child in children:
            out, err = child.communicate(timeout=timeout_s)
            if child.returncode != 0:
                raise RuntimeError(_failure(child, out, err))
            outputs.append(json.loads(out.strip().splitlines()[-1]))
    finally:
        for child in children:
            if child.poll() is None:
                child.kill()
                child.wait()

    per_process = []
    pooled, pooled_cpu = [], []
    for i, out in enumerate(outputs):
        decision, cpu = out.pop("decision_ms"), out.pop("cpu_ms")
        pooled.extend(decision)
        pooled_cpu.extend(cpu)
        cpu_summary = summarize_ms(cpu)
        per_process.append(
            {
                "process": i + 1,
                **out,
                **summarize_ms(decision),
                "cpu_median_ms": cpu_summary["median_ms"],
                "cpu_p95_ms": cpu_summary["p95_ms"],
            }
        )
    applied = {p["limit_applied_by"] for p in per_process}
    summary = summarize_ms(pooled)
    return {
        "rule": rule,
        "search": search,
        "handler": bool(handler),
        "lookahead": bool(handler and lookahead),
        "response_ms": float(response_ms) if handler else None,
        "stop": None if stop is None else {"confidence": float(stop), "min_trials": min_trials},
        "accommodation_d": None if accommodation_d is None else list(accommodation_d),
        "decision": DECISION_HANDLER if handler else DECISION_ASK_TELL,
        "processes": processes,
        "trials": trials,
        "seed": seed,
        "import_order": "numpy-first" if numpy_first else "lensopt-first",
        "blas_threads_setting": setting,
        "limit": bool(limit and setting),
        "limit_applied_by": applied.pop() if len(applied) == 1 else sorted(applied),
        "env_removed": list(BLAS_ENV),
        "env_lensopt_blas_threads": env.get(ENV_VAR),
        "cpu_count": os.cpu_count(),
        "frame_ms": FRAME_MS,
        "per_process": per_process,
        "pooled": summary,
        "pooled_cpu": summarize_ms(pooled_cpu),
        "within_frame": summary["p95_ms"] <= FRAME_MS,
    }


def _failure(child, out="", err=None) -> str:
    if err is None:
        try:
            child.kill()
            out2, err = child.communicate(timeout=30)
            out = (out or "") + (out2 or "")
        except Exception:  # noqa: BLE001  # pragma: no cover - best effort for the message
            err = ""
    lines = [ln for ln in (err or "").strip().splitlines() if ln.strip()]
    last = lines[-1] if lines else (out or "").strip()[-200:] or "no output"
    return f"a benchmark process failed (exit code {child.returncode}): {last}"


def _handler_text(result: dict) -> str:
    ahead = "deciding ahead in a worker" if result.get("lookahead") else "deciding in-process (no lookahead)"
    answer = result.get("response_ms")
    return f" through RefractionHandler, {ahead}" + ("" if answer is None else f", answers after {answer:g} ms")


def _amplitudes_text(result: dict) -> str:
    return ", ".join(f"{a:g}" for a in result["accommodation_d"])


def format_report(result: dict) -> str:
    """The human-readable table of :func:`run_decision_time`'s result."""
    setting = result["blas_threads_setting"]
    if not result["limit"]:
        how = "no BLAS limit (LENSOPT_BLAS_THREADS=0)"
    else:
        by = result["limit_applied_by"]
        by = {
            "optimizer": "by the optimizer's methods",
            "benchmark": "by the benchmark (RefractionOptimizer's ask/tell are not decorated yet)",
        }.get(by, f"by {by}")
        how = f"BLAS limited to {setting} thread{'s' if setting != 1 else ''} per call, {by}"
    stop = result.get("stop")
    rule_text = (
        "no stopping rule"
        if stop is None
        else f"stopping rule: confidence {stop['confidence']:g} from {stop['min_trials']} trials, checked every decision"
    )
    lines = [
        f"lensopt bench decision-time: rule {result['rule']}"
        + (f" (amplitudes of accommodation {_amplitudes_text(result)} D)" if result.get("accommodation_d") else "")
        + f", {result.get('search', 'sphere-cylinder')} search, "
        + (f"{result['processes']} processes side by side" if result["processes"] > 1 else "1 process")
        + f" on {result['cpu_count']} CPUs, "
        f"{result['trials']} trials each, {result['import_order']}; {how}",
        f"decision = {result.get('decision', DECISION_ASK_TELL)}"
        + (_handler_text(result) if result.get("handler") else "")
        + f"; {rule_text}; one 60 Hz frame = {result['frame_ms']:.1f} ms",
        "",
        f"{'process':>8} {'seed':>5} {'median ms':>10} {'p95 ms':>8} {'max ms':>8} {'p95/frame':>10}"
        "  BLAS threads inside a call (outside)",
    ]
    for p in result["per_process"]:
        inside = ",".join(str(n) for n in p["blas_threads_inside"]) or "-"
        outside = ",".join(str(n) for n in p["blas_threads_outside"]) or "-"
        ended = ""
        if p.get("stopped_at") is not None:
            ended = f"  stopped by the rule after {p['stopped_at']} trials"
        lines.append(
            f"{p['process']:>8} {p['seed']:>5} {p['median_ms']:>10.1f} {p['p95_ms']:>8.1f} "
            f"{p['max_ms']:>8.1f} {p['p95_frames']:>10.2f}  {inside} ({outside}){ended}"
        )
    q = result["pooled"]
    lines.append(
        f"{'pooled':>8} {'':>5} {q['median_ms']:>10.1f} {q['p95_ms']:>8.1f} {q['max_ms']:>8.1f} "
        f"{q['p95_frames']:>10.2f}"
    )
    verdict = "within" if result["within_frame"] else "OVER"
    lines.append(f"pooled p95 {q['p95_ms']:.1f} ms: {verdict} one 60 Hz frame")
    kept = {p.get("large_blocks_kept") for p in result["per_process"]}
    if kept == {True}:
        lines.append("large numpy temporaries on warm heap pages (glibc malloc thresholds, lensopt.allocator)")
    c = result.get("pooled_cpu")
    if c and c["n"]:
        lines.append(
            f"CPU time of the same decisions (the deciding thread's; wall-clock minus waiting for a core): "
            f"median {c['median_ms']:.1f} ms, p95 {c['p95_ms']:.1f} ms"
        )
    return "\n".join(lines)
