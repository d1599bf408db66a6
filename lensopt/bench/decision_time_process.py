"""One process of ``lensopt bench decision-time`` (:mod:`lensopt.bench.decision_time`, which starts
it after its own numpy-first or lensopt-first imports): build the session, say ``ready``, wait for
``go``, time every decision (``ask`` + ``tell``, or a PsychoPy handler's), print one JSON line."""

from __future__ import annotations

import json
import os
import sys
import time
from typing import Any

import numpy as np

from lensopt.allocator import large_blocks_kept
from lensopt.asktell import AskTellOptimizer
from lensopt.modes.registry import get_mode
from lensopt.observer import autorefraction, draw_clinic_patients, draw_patients
from lensopt.psychopy.handler import RefractionHandler
from lensopt.refraction.duels import DuelRefractionOptimizer
from lensopt.refraction.prescription_duels import PrescriptionDuelOptimizer
from lensopt.refraction.prescription_letters import PrescriptionOptimizer
from lensopt.refraction.prescription_rankings import PrescriptionRankingOptimizer
from lensopt.stopping import DEFAULT_MIN_TRIALS, StopRule
from lensopt.threads import (
    blas_threads_now,
    blas_threads_setting,
    is_single_threaded,
    single_threaded,
)

DEFAULT_RULE, DEFAULT_TRIALS, DEFAULT_SEED = "ucb-ald", 100, 0

DUEL_TIES_D = 0.05
"""The simulated patient's tie threshold in duels (``duel_answer``): some answers are "the same"."""

DEFAULT_RESPONSE_MS = 300.0
"""The simulated patient's answer time with the handler, ms: quicker than any patient names a letter
(and a lookahead worker needs two decisions' time: for an instant answer it is the wait)."""

SEARCHES = ("sphere-cylinder", "prescription", "duel", "prescription-duel", "prescription-ranking")
"""What is timed: the two-parameter letter search, the full prescription (issue 16), the
two-parameter duels ("one or two — or the same?", :class:`lensopt.refraction.DuelRefractionOptimizer`),
the full prescription's duels (:class:`lensopt.refraction.prescription_duels.PrescriptionDuelOptimizer`
around an autorefraction of a clinic patient; ``muc-ald`` through the acuity link, its default), or
its rankings of three lenses
(:class:`lensopt.refraction.prescription_rankings.PrescriptionRankingOptimizer`; ``mpes-ald``
through the acuity link, its default)."""

PRESCRIPTION_DUEL_TIES = 1.0
"""The clinic patient's tie threshold (logit units of utility) in the full prescription's duels: the
protocol's simulated patient (``clinical-prescription-duel.toml``) and the held-out duel campaigns'."""


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
    parser.add_argument("--accommodation", type=float, nargs="+")
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
    options: dict[str, Any] = {"stop": stop}
    if args.accommodation is not None:  # the acuity-law optimizer's prior amplitudes
        options["accommodation_d"] = tuple(args.accommodation)
    optimizer = get_mode("letters").new_optimizer(options, rule=args.rule, seed=args.seed)
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


def main(argv) -> int:
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
