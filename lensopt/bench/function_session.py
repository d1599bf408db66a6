"""The session of a binary test-function run, with or without a context (seed paper §4, companion
paper §5.1): ``spec.n_iterations`` times ask, answer ``c ~ Bernoulli(Φ(s · g(x)))``, tell; the
trajectory is ``g(x̂)`` of the reported optimum (every ``spec.report_every`` trials).

The contextual campaign (``functions``, :mod:`lensopt.bench.runner`) and the campaign without a
context (``binary``, :mod:`lensopt.bench.binary`) both run it; it imports neither.
"""

from __future__ import annotations

import time

import numpy as np

from lensopt.bench.problems import FunctionProblem
from lensopt.bench.records import timed_session, timing_summary
from lensopt.bench.spec import RunSpec

#: Spawn key of the outcome-noise stream of a function run: distinct from the optimizer's streams
#: and the same for every rule, so rules with the same seed face the same uniform draws.
OUTCOME_STREAM = 0x0C0C


def outcome_uniforms(seed: int, n_iterations: int) -> np.ndarray:
    """The uniform draws ``(n_iterations,)`` that decide the answers of the run of ``seed``: the
    ``t``-th answer is ``u_t < P(c = 1)``."""
    return np.random.default_rng(np.random.SeedSequence(seed, spawn_key=(OUTCOME_STREAM,))).random(n_iterations)


def function_session(spec: RunSpec, problem: FunctionProblem, opt) -> dict:
    """Run ``opt`` (ask/tell, queries with ``context`` and ``system``) on ``problem`` for
    ``spec.n_iterations`` trials; the body of the run's record: direction, optimal value, final
    point, trajectory of ``g(x̂)``, the answers as a string of ``0``/``1`` and the timings (ms)."""
    uniforms = iter(outcome_uniforms(spec.seed, spec.n_iterations))
    lower, upper = problem.function.lower, problem.function.upper
    trajectory, report_ms, answers = [], [], []
    best, value = None, None

    def respond(query) -> bool:  # the t-th answer takes the t-th uniform draw
        system = np.clip(np.asarray(query.system, dtype=float), lower, upper)[None, :]
        p = problem.probability(np.asarray(query.context, dtype=float)[:1], system)[0]
        return bool(next(uniforms) < p)

    def report(t, _query, answer):
        nonlocal best, value
        answers.append("1" if answer else "0")
        if spec.reports_after(t):
            t1 = time.perf_counter()
            best = np.clip(np.asarray(opt.best(), dtype=float), lower, upper)
            report_ms.append(1e3 * (time.perf_counter() - t1))
            value = float(problem.g(best[None, :])[0])
        trajectory.append(value)

    decision_ms = timed_session(opt, respond, spec.n_iterations, report).wall_ms
    return {
        "direction": problem.direction,
        "optimal_value": problem.optimal_value,
        "final_point": None if best is None else best.tolist(),
        "trajectory": trajectory,
        "answers": "".join(answers),
        "timings_ms": {"decision": timing_summary(decision_ms), "report": timing_summary(report_ms)},
    }
