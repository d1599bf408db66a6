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

``_child_main`` is the code of one process; each process imports this module only after its own
numpy-first or lensopt-first imports, so the order under test is the one it chose.
"""

from __future__ import annotations

import json
import math
import os
import subprocess
import sys
import time
from typing import Any

import numpy as np

from lensopt.allocator import large_blocks_kept
from lensopt.asktell import AskTellOptimizer
from lensopt.binary.settings import ALL_RULES
from lensopt.modes.registry import get_mode
from lensopt.observer import autorefraction, draw_clinic_patients, draw_patients
from lensopt.preference.settings import CONTEXTUAL_RULES
from lensopt.psychopy.handler import RefractionHandler
from lensopt.refraction.acuity_law import ACUITY_LAW_RULE
from lensopt.refraction.duels import DuelRefractionOptimizer
from lensopt.refraction.prescription_duels import PrescriptionDuelOptimizer
from lensopt.refraction.prescription_letters import PRESCRIPTION_RULES, PrescriptionOptimizer
from lensopt.refraction.prescription_rankings import PRESCRIPTION_RANKING_RULES, PrescriptionRankingOptimizer
from lensopt.stopping import DEFAULT_MIN_TRIALS, StopRule
from lensopt.threads import (
    ENV_VAR,
    blas_threads_now,
    blas_threads_setting,
    is_single_threaded,
    single_threaded,
)

FRAME_MS = 1000.0 / 60.0
"""One frame of a 60 Hz display, ms: the budget of a decision's 95th percentile."""

BLAS_ENV = ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS")
"""Thread-count variables removed from the processes' environment (as in a user's shell)."""

DEFAULT_RULE, DEFAULT_PROCESSES, DEFAULT_TRIALS, DEFAULT_SEED = "ucb-ald", 2, 100, 0

DUEL_TIES_D = 0.05
"""The simulated patient's tie threshold in duels (``duel_answer``): some answers are "the same"."""

DEFAULT_RESPONSE_MS = 300.0
"""The simulated patient's answer time with the handler, ms: quicker than any patient names a letter
(and a lookahead worker needs two decisions' time: for an instant answer it is the wait)."""

DECISION_ASK_TELL = "ask + tell"
DECISION_HANDLER = "addResponse -> next trial (tell, stop check, ask)"
"""What one timed decision is, without and with the PsychoPy handler."""

SEARCHES = ("sphere-cylinder", "prescription", "duel", "prescription-duel", "prescription-ranking")
"""What is timed: the two-parameter letter search, the full prescription (issue 16), the
two-parameter duels ("one or two — or the same?", :class:`lensopt.refraction.DuelRefractionOptimizer`),
the full prescription's duels (:class:`lensopt.refraction.prescription_duels.PrescriptionDuelOptimizer`
around an autorefraction of a clinic patient; ``muc-ald`` through the acuity link, its default), or
its rankings of three lenses
(:class:`lensopt.refraction.prescription_rankings.PrescriptionRankingOptimizer`; ``mpes-ald``
through the acuity link, its default)."""

COMPARISONS = ("duel", "prescription-duel", "prescription-ranking")
"""The searches of compared lenses: no stopping rule of their own (``--stop`` is refused)."""

PRESCRIPTION_DUEL_TIES = 1.0
"""The clinic patient's tie threshold (logit units of utility) in the full prescription's duels: the
protocol's simulated patient (``clinical-prescription-duel.toml``) and the held-out duel campaigns'."""

_NUMPY_FIRST = "import numpy, scipy, scipy.linalg, scipy.special, scipy.stats\nimport lensopt\n"
_LENSOPT_FIRST = "import lensopt\nimport numpy, scipy, scipy.linalg, scipy.special, scipy.stats\n"
_RUN_CHILD = "import sys\nfrom lensopt.bench.decision_time import _child_main\nsys.exit(_child_main(sys.argv[1:]))\n"


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
) -> dict:
    """Run the benchmark (see the module docstring) and return its result as a JSON-able dict.
    ``search="prescription"`` times the full prescription instead (issue 16): a
    :class:`~lensopt.refraction.prescription_letters.PrescriptionOptimizer` around an
    autorefraction of a clinic patient (``draw_clinic_patients(1, seed + i, slope=14)``), three
    lens parameters and the letter size. ``handler``, ``stop``, ``min_trials``, ``lookahead`` and
    ``response_ms`` (both with the handler only): see the module docstring."""
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
        f"lensopt bench decision-time: rule {result['rule']}, {result.get('search', 'sphere-cylinder')} search, "
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


# ------------------------------------------------------------------ one benchmark process
def _parse_child(argv):
    import argparse

    parser = argparse.ArgumentParser(prog="lensopt.bench.decision_time (child)")
    parser.add_argument("--rule", default=DEFAULT_RULE)
    parser.add_argument("--trials", type=int, default=DEFAULT_TRIALS)
    parser.add_argument("--seed", type=int, default=DEFAULT_SEED)
    parser.add_argument("--search", choices=SEARCHES, default="sphere-cylinder")
    parser.add_argument("--handler", action="store_true")
    parser.add_argument("--stop", type=float)
    parser.add_argument("--min-trials", type=int, default=DEFAULT_MIN_TRIALS)
    parser.add_argument("--response-ms", type=float, default=DEFAULT_RESPONSE_MS)
    parser.add_argument("--no-lookahead", action="store_true")
    return parser.parse_args(argv)


def _session(args):
    """The optimizer and the patient's answer ``respond(trial)`` of one process."""
    optimizer: AskTellOptimizer[Any, Any]
    stop = None
    if args.stop is not None:
        stop = StopRule(confidence=args.stop, min_trials=args.min_trials, max_trials=max(args.trials, args.min_trials))
    if args.search.startswith("prescription"):
        patient = draw_clinic_patients(1, args.seed, slope=14.0)[0]
        start = autorefraction(patient, np.random.SeedSequence([args.seed, 1]))
        if args.search == "prescription-duel":
            optimizer = PrescriptionDuelOptimizer(rule=args.rule, seed=args.seed, start=start)
            return optimizer, get_mode("duel").responder(patient, tie_threshold=PRESCRIPTION_DUEL_TIES)
        if args.search == "prescription-ranking":
            optimizer = PrescriptionRankingOptimizer(rule=args.rule, seed=args.seed, start=start)
            return optimizer, get_mode("ranking").responder(patient)
        optimizer = PrescriptionOptimizer(rule=args.rule, seed=args.seed, start=start, stop=stop)
        return optimizer, lambda t: patient.respond(t.letter_logmar, t.sphere_d, t.cylinder_d, t.axis_deg)
    patient = draw_patients(1, args.seed)[0]
    if args.search == "duel":  # no stopping rule of its own: --stop is refused for duels
        optimizer = DuelRefractionOptimizer(rule=args.rule, seed=args.seed)
        return optimizer, lambda t: patient.duel_answer(t.letter_logmar, t.first_lens_d, t.second_lens_d, DUEL_TIES_D)
    optimizer = get_mode("letters").new_optimizer({"stop": stop}, rule=args.rule, seed=args.seed)
    return optimizer, lambda t: patient.respond(t.letter_logmar, t.sphere_d, t.cylinder_d)


def _time_ask_tell(optimizer, ask, tell, respond, trials, threads_in_call):
    """ask + tell (+ the stopping rule's check after tell, when there is one) of every trial, ms;
    the trials run; the BLAS thread counts seen inside a limited call."""
    decision_ms, cpu_ms, inside = [], [], set()
    check = optimizer.should_stop if getattr(optimizer, "stop", None) is not None else None
    for t in range(trials):
        start, start_cpu = time.perf_counter(), time.thread_time()
        trial = ask()
        asked, asked_cpu = time.perf_counter(), time.thread_time()
        correct = respond(trial)
        told, told_cpu = time.perf_counter(), time.thread_time()
        tell(trial, correct)
        stopped = check is not None and check()
        end, end_cpu = time.perf_counter(), time.thread_time()
        decision_ms.append(((asked - start) + (end - told)) * 1e3)
        cpu_ms.append(((asked_cpu - start_cpu) + (end_cpu - told_cpu)) * 1e3)
        if t == 0 or t == trials - 1 or stopped:  # untimed: what a limited call sees
            inside.add(tuple(info["num_threads"] for info in threads_in_call()))
        if stopped:
            return decision_ms, cpu_ms, t + 1, inside
    return decision_ms, cpu_ms, trials, inside


def _time_handler(optimizer, respond, trials, threads_in_call, lookahead=True, response_s=0.0):
    """Every decision of a :class:`~lensopt.psychopy.RefractionHandler` loop, ms: ``addResponse``
    up to the next trial (or the end of the loop); the trials run; the BLAS thread counts seen
    inside a limited call. The patient answers after ``response_s`` (untimed)."""
    handler = RefractionHandler(optimizer, n_trials=trials, lookahead=lookahead)
    decision_ms, cpu_ms, inside, answer = [], [], set(), None
    while True:
        start, start_cpu = time.perf_counter(), time.thread_time()
        if answer is not None:
            handler.addResponse(answer)
        try:
            next(handler)
            ended = False
        except StopIteration:
            ended = True
        decision_ms.append((time.perf_counter() - start) * 1e3)
        cpu_ms.append((time.thread_time() - start_cpu) * 1e3)
        if ended:
            break
        if handler.thisTrialN == 0:  # untimed: what a limited call sees
            inside.add(tuple(info["num_threads"] for info in threads_in_call()))
        answer = respond(handler.query)  # the patient's answer is not timed
        time.sleep(response_s)
    inside.add(tuple(info["num_threads"] for info in threads_in_call()))
    return decision_ms, cpu_ms, handler.thisTrialN + 1, inside


def _methods_limited(optimizer) -> bool:
    """Whether ``ask`` and ``tell`` run under :func:`lensopt.threads.single_threaded` already."""
    owners = [type(optimizer)]
    core = getattr(optimizer, "_core", None)
    if core is not None:
        owners.append(type(core))
    return all(any(is_single_threaded(getattr(owner, name, None)) for owner in owners) for name in ("ask", "tell"))


def _child_main(argv) -> int:
    """One process: build the session, say ``ready``, wait for ``go``, time every decision."""
    args = _parse_child(argv)
    optimizer, respond = _session(args)
    setting = blas_threads_setting()
    by_optimizer = _methods_limited(optimizer)
    ask, tell = optimizer.ask, optimizer.tell
    if not by_optimizer:
        ask, tell = single_threaded(ask), single_threaded(tell)
        optimizer.ask, optimizer.tell = ask, tell  # what the handler calls
    threads_in_call = single_threaded(blas_threads_now)  # the same limit as the timed calls
    outside = [info["num_threads"] for info in blas_threads_now()]

    print("ready", flush=True)
    sys.stdin.readline()
    if args.handler:
        decision_ms, cpu_ms, n_run, inside = _time_handler(
            optimizer, respond, args.trials, threads_in_call, not args.no_lookahead, args.response_ms / 1e3
        )
    else:
        timed = _time_ask_tell(optimizer, ask, tell, respond, args.trials, threads_in_call)
        decision_ms, cpu_ms, n_run, inside = timed
    inside_counts = sorted(inside)[-1] if inside else ()
    print(
        json.dumps(
            {
                "seed": args.seed,
                "pid": os.getpid(),
                "blas_threads_setting": setting,
                "limit_applied_by": "none" if not setting else "optimizer" if by_optimizer else "benchmark",
                "blas_threads_inside": list(inside_counts),
                "blas_threads_inside_varied": len(inside) > 1,
                "blas_threads_outside": outside,
                "blas_libraries": [info.get("filepath", "") for info in blas_threads_now()],
                "large_blocks_kept": large_blocks_kept(),
                "trials_run": n_run,
                "stopped_at": n_run if args.stop is not None and n_run < args.trials else None,
                "decision_ms": decision_ms,
                "cpu_ms": cpu_ms,
            }
        ),
        flush=True,
    )
    return 0
