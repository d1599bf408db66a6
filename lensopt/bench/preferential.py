"""Preferential benchmark runs: duels on the rescaled test functions (issue 7).

Three campaigns share one run function, :func:`run_duels`:

==================  ==========================================  =====================================
campaign            protocol (paper defaults)                   response of a duel ``(s, x, x')``
==================  ==========================================  =====================================
``duels``           companion Table 2: 80 iterations, 40 seeds  ``Φ(g(x) − g(x'))``
``batch-duels``     companion Table 3: batch of 3, 30 iter.,    every pair of the batch, independently
                    30 seeds
``contextual-duels`` seed Table 2: 60 iterations, 40 seeds      ``Φ(s (g(x) − g(x')))``, ``s ∈ [0, 1]``
==================  ==========================================  =====================================

``g`` is the rescaled, maximized function of :mod:`lensopt.bench.rescaling`; the surrogate is the
preference GP on the function's Table S1 base kernel (with the contextual product ``s s' k`` for
``contextual-duels``). The tracked value is ``g(x̂)`` of the reported optimum (the argmax of the
posterior mean utility), as in the binary benchmark. Outcome draws come from one uniform stream
per seed, shared by every rule (each pair of a batch takes the next draw).
"""

from __future__ import annotations

import itertools
import time

import numpy as np

from lensopt.bench.problems import CONTEXT_BOUNDS, function_problem
from lensopt.bench.records import timed_session, timing_summary
from lensopt.gp.kernels import benchmark_context_kernel
from lensopt.preference import PreferenceOptimizer

#: Campaign names of the preferential benchmarks and their batch sizes.
DUEL_CAMPAIGNS = {"duels": 2, "batch-duels": 3, "contextual-duels": 2}

#: Paper defaults per campaign: (iterations, seeds, initial random queries, rules).
DUEL_DEFAULTS = {
    "duels": (
        80,
        40,
        5,
        ("muc", "dueling-ucb", "bivariate-ei", "duel-ts", "dueling-ts", "kss", "eiig", "ei", "random"),
    ),
    "batch-duels": (30, 30, 5, ("muc", "kss", "random")),
    # the seed paper's Table 2 compares these five ("KSS" there: KSS with a random context)
    "contextual-duels": (60, 40, 5, ("muc-ald", "kss-ald", "kss-random", "bald", "random")),
}

#: Spawn key of the outcome stream (as the binary benchmark's, distinct from the optimizer's).
DUEL_OUTCOME_STREAM = 0x0D0E


def run_duels(spec) -> dict:
    """Run one preferential benchmark task (``spec`` a :class:`lensopt.bench.spec.RunSpec`)."""
    problem = function_problem(spec.problem, hyperparameters=spec.hyperparameters)
    contextual = spec.campaign == "contextual-duels"
    batch_size = DUEL_CAMPAIGNS[spec.campaign]
    kernel = problem.base_kernel(first_column=1) if contextual else problem.base_kernel()
    if contextual:
        kernel = benchmark_context_kernel(kernel, context_dims=(0,))
    opt = PreferenceOptimizer(
        problem.system_bounds,
        CONTEXT_BOUNDS if contextual else (),
        rule=spec.rule,
        seed=spec.seed,
        kernel=kernel,
        batch_size=batch_size,
        n_initial=spec.n_initial,
    )
    n_pairs = batch_size * (batch_size - 1) // 2
    uniforms = iter(
        np.random.default_rng(np.random.SeedSequence(spec.seed, spawn_key=(DUEL_OUTCOME_STREAM,))).random(
            (spec.n_iterations, n_pairs)
        )
    )
    lower, upper = problem.function.lower, problem.function.upper
    trajectory, report_ms = [], []
    value, best = None, None

    def respond(query):  # the t-th answer takes the t-th row of draws, one per pair of the batch
        draws = next(uniforms)
        members = np.clip(np.asarray(query.members, dtype=float), lower, upper)
        s = float(query.context[0]) if contextual else 1.0
        outcomes = []
        for k, (i, j) in enumerate(itertools.combinations(range(batch_size), 2)):
            p = problem.duel_probability(s, members[i : i + 1], members[j : j + 1])[0]
            outcomes.append(((i, j), int(draws[k] < p)))
        return outcomes[0][1] if batch_size == 2 else outcomes

    def report(t, _query, _answer):
        nonlocal best, value
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
        "batch_size": batch_size,
        "trajectory": trajectory,
        "timings_ms": {"decision": timing_summary(decision_ms), "report": timing_summary(report_ms)},
    }
