"""Binary Bayesian optimization without a context: the companion paper's Table 1 (§5.1).

Each trial asks for one point ``x`` of a test function's box and gets a 0/1 answer with
``P(c = 1 | x) = Φ(g(x))``, ``g`` the function rescaled to mean 0 and variance 1
(:mod:`lensopt.bench.rescaling`), maximized; the model is the papers' plain probit GP classifier
(no guess floor, no lapse) with the function's Table S1 kernel ``k(x, x')``.

The rules are the x-steps of the contextual rules (:mod:`lensopt.binary.rules`), run by a
:class:`~lensopt.binary.ContextualOptimizer` whose context is pinned at ``s = 1``
(:class:`PinnedContext`): with the benchmark kernel ``s s' k(x, x')`` and every answer at ``s = 1``
the model is the GP classifier of ``k`` alone, ``Φ(1 · g(x)) = Φ(g(x))``, and every x-step and the
reported optimum are evaluated at the reference context ``s₀ = 1``. One optimizer and one rule
table serve both campaigns; the s-step's choice of the contextual rule is discarded. The rules and
the protocol's constants are in :mod:`lensopt.bench.binary_protocol`.

===============  ===================================  ============================
rule             x-step                               contextual rule it runs
===============  ===================================  ============================
``ucb-phi``      UCB_Φ, ``β = Φ⁻¹(0.99)``              ``ucb-random``
``ucb-f``        UCB_f ``μ + σ`` (Tesch 2013, β = 1)   ``ucbf-ald``
``thompson``     argmax of one posterior draw         ``ts-random``
``binary-ei``    binary EI (Tesch 2013)               ``ei-ald``
``random``       uniform                              ``random``
===============  ===================================  ============================
"""

from __future__ import annotations

from dataclasses import replace

import numpy as np

from lensopt.bench.binary_protocol import BINARY_BETA, BINARY_RULES, PINNED_CONTEXT
from lensopt.bench.function_session import function_session
from lensopt.bench.problems import function_problem
from lensopt.bench.spec import RunSpec
from lensopt.binary.optimizer import ContextualOptimizer


class PinnedContext:
    """An ask/tell optimizer without a context over a contextual one: ``ask()`` returns the
    optimizer's query with its context set to ``context`` (the one told back), so the model only
    ever sees answers at that context; ``tell``, ``best`` and the rest are the optimizer's."""

    def __init__(self, optimizer, context):
        self.optimizer = optimizer
        self.context = np.atleast_1d(np.asarray(context, dtype=float))
        if self.context.shape != (optimizer.settings.n_context,):
            raise ValueError(
                f"PinnedContext needs {optimizer.settings.n_context} context value(s), got {self.context.tolist()}"
            )

    def ask(self):
        return replace(self.optimizer.ask(), context=self.context.copy())

    def tell(self, query, outcome) -> None:
        if not np.array_equal(np.asarray(query.context, dtype=float), self.context):
            raise ValueError(f"the context is pinned at {self.context.tolist()}, got {list(query.context)}")
        self.optimizer.tell(query, outcome)

    def __getattr__(self, name):
        return getattr(self.optimizer, name)


def binary_optimizer(spec: RunSpec, problem) -> PinnedContext:
    """The optimizer of a ``binary`` run: the contextual optimizer of ``spec.rule``'s x-step on the
    problem's benchmark kernel (plain probit, Laplace), pinned at ``s = 1``."""
    if spec.rule not in BINARY_RULES:
        raise ValueError(f"unknown binary rule {spec.rule!r}; choose from: {', '.join(BINARY_RULES)}")
    opt = ContextualOptimizer(
        problem.system_bounds,
        problem.context_bounds,
        rule=BINARY_RULES[spec.rule],
        seed=spec.seed,
        kernel=problem.kernel(),
        n_initial=spec.n_initial,
        beta=BINARY_BETA if spec.beta is None else float(spec.beta),
    )
    return PinnedContext(opt, PINNED_CONTEXT)


def run_binary(spec: RunSpec) -> dict:
    """The body of a ``binary`` run's record (:func:`lensopt.bench.function_session.function_session`)."""
    problem = function_problem(spec.problem, hyperparameters=spec.hyperparameters)
    return function_session(spec, problem, binary_optimizer(spec, problem))
