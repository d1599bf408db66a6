"""Contextual binary Bayesian optimization: a 0/1 answer per trial, behind ask/tell.

Beside :mod:`lensopt.preference` (duels) and :mod:`lensopt.ranking` (rankings), the third model
family: a GP classifier on ``[system, context]`` inputs, answered correct or wrong.

- :mod:`~lensopt.binary.settings`: :class:`OptimizerSettings`, :class:`KernelSpec` and the rule
  names (:data:`RULES`, :data:`EXTRA_RULES`, :data:`ALL_RULES`);
- :mod:`~lensopt.binary.rules`: the acquisition rules (UCB, Thompson sampling, CBKG, BALD, random,
  in their sequential system-then-context forms);
- :mod:`~lensopt.binary.optimizer`: :class:`ContextualOptimizer` and its :class:`Query`, ask/tell
  with JSON state.

numpy/scipy only, like the rest of the numerical core.
"""

from lensopt.binary.optimizer import STATE_FORMAT, ContextualOptimizer, Query
from lensopt.binary.settings import (
    ALL_RULES,
    EXTRA_RULES,
    INFERENCE_METHODS,
    KERNEL_FAMILIES,
    KERNEL_STRUCTURES,
    PAPER_BETA,
    RULES,
    KernelSpec,
    OptimizerSettings,
)

__all__ = [
    "ALL_RULES",
    "EXTRA_RULES",
    "INFERENCE_METHODS",
    "KERNEL_FAMILIES",
    "KERNEL_STRUCTURES",
    "PAPER_BETA",
    "RULES",
    "STATE_FORMAT",
    "ContextualOptimizer",
    "KernelSpec",
    "OptimizerSettings",
    "Query",
]
