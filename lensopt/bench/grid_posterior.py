"""The grid posterior both ideal observers keep (:mod:`lensopt.bench.ideal_observer`, two lens
parameters; :mod:`lensopt.bench.ideal_prescription`, three)."""

from __future__ import annotations

from typing import Any

import numpy as np


class GridPosterior:
    """What the ideal observers share: a log-posterior ``_log_post`` over a grid of hypotheses
    ``_hyp`` (rows), the ``(trial, answer)`` history and a per-trial cache. A subclass sets
    ``settings`` (with ``seed``), ``_hyp``, ``_log_post``, ``_history = []``, ``_cache = {}``."""

    settings: Any
    _hyp: np.ndarray
    _log_post: np.ndarray
    _history: list
    _cache: dict

    @property
    def seed(self) -> int:
        return self.settings.seed

    @property
    def n_trials(self) -> int:
        return len(self._history)

    @property
    def history(self) -> tuple:
        return tuple(self._history)

    @property
    def hypotheses_d(self) -> np.ndarray:
        """The grid of hypotheses, one per row (D)."""
        return self._hyp.copy()

    def posterior(self) -> np.ndarray:
        """Posterior probabilities of :attr:`hypotheses_d`, shape ``(n,)``, summing to 1."""
        return self._cached("posterior", self._posterior)

    def _posterior(self) -> np.ndarray:
        w = np.exp(self._log_post - self._log_post.max())
        return w / w.sum()

    def _cached(self, name, compute):
        key = (name, len(self._history))
        if key not in self._cache:
            if len(self._cache) > 16:
                self._cache.clear()
            self._cache[key] = compute()
        return self._cache[key]
