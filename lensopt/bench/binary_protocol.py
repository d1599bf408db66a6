"""The companion paper's binary benchmark without a context (§5.1, Table 1): its rules and protocol.

Standard library only, so that the ``lensopt bench binary`` parser can show them without importing
numpy (``lensopt --help`` must stay fast); the campaign itself is :mod:`lensopt.bench.binary`.
"""

from __future__ import annotations

from statistics import NormalDist

#: The rules of the companion paper's Table 1, in its order, and the contextual rule
#: (:mod:`lensopt.binary.rules`) whose x-step each one is.
BINARY_RULES = {
    "ucb-phi": "ucb-random",
    "ucb-f": "ucbf-ald",
    "thompson": "ts-random",
    "binary-ei": "ei-ald",
    "random": "random",
}

#: Display names of the rules, as in the companion paper's Table 1.
BINARY_RULE_LABELS = {
    "ucb-phi": "UCB_Φ",
    "ucb-f": "UCB_f (Tesch 2013)",
    "thompson": "Thompson sampling",
    "binary-ei": "Binary EI (Tesch 2013)",
    "random": "Random",
}

#: β of UCB_Φ in the companion paper's binary benchmark: Φ⁻¹(0.99) (UCB_f keeps Tesch's β = 1).
BINARY_BETA = NormalDist().inv_cdf(0.99)

#: The companion paper's protocol (§5.1): 100 iterations, 60 repetitions, 2 initial random samples.
BINARY_ITERATIONS, BINARY_SEEDS, BINARY_INITIAL = 100, 60, 2

#: The context at which the binary campaign pins every query: the upper bound of the benchmark
#: context ``s ∈ [0, 1]``, where the answers follow ``Φ(g(x))``.
PINNED_CONTEXT = 1.0
