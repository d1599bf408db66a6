"""Preferential Bayesian optimization: GP preference learning and the duel rules behind ask/tell.

- :mod:`~lensopt.preference.kernel`: the preference kernel ``k_g`` on duels ``[s, x, x']``;
- :mod:`~lensopt.preference.model`: :class:`PreferenceGP` (probit GP on duels, read back as a
  utility), :mod:`~lensopt.preference.sampling`: posterior utility draws for Thompson sampling;
- :mod:`~lensopt.preference.acquisition` and :mod:`~lensopt.preference.rules`: MUC, KSS and the
  rules the companion paper compares, their batch and contextual (ALD) versions;
- :mod:`~lensopt.preference.optimizer`: :class:`PreferenceOptimizer`, ask/tell with JSON state.

numpy/scipy only, like the rest of the numerical core.
"""

from lensopt.preference.kernel import PreferenceKernel, duel_inputs
from lensopt.preference.model import PreferenceGP
from lensopt.preference.optimizer import STATE_FORMAT, DuelQuery, PreferenceOptimizer
from lensopt.preference.sampling import UtilitySample, sample_utility
from lensopt.preference.settings import (
    BATCH_RULES,
    CONTEXTUAL_RULES,
    DUEL_RULES,
    PreferenceSettings,
    default_kernel,
)

__all__ = [
    "BATCH_RULES",
    "CONTEXTUAL_RULES",
    "DUEL_RULES",
    "STATE_FORMAT",
    "DuelQuery",
    "PreferenceGP",
    "PreferenceKernel",
    "PreferenceOptimizer",
    "PreferenceSettings",
    "UtilitySample",
    "default_kernel",
    "duel_inputs",
    "sample_utility",
]
