"""Answers that depend only on the trials answered so far, computed once per trial count.

An optimizer is asked several things between two answers (``best()``, ``confidence()``, the next
``ask()``); each is computed at most once per trial count and dropped when an answer comes::

    self._cache = TrialCache()
    ...
    def best(self):
        return self._cache.get(self.n_trials, "best", self._compute_best)
"""

from __future__ import annotations

from collections.abc import Callable, Hashable
from typing import Any


class TrialCache:
    """Values keyed by name, valid for one trial count: a call at another count drops them all at
    once (so no value of the current count is dropped while its trial is decided)."""

    __slots__ = ("_n_trials", "_values")

    def __init__(self) -> None:
        self._n_trials: int | None = None
        self._values: dict[Hashable, Any] = {}

    def get(self, n_trials: int, key: Hashable, compute: Callable[[], Any]) -> Any:
        """The value of ``key`` at ``n_trials`` answered trials, ``compute()`` on the first call."""
        self._at(n_trials)
        if key not in self._values:
            self._values[key] = compute()
        return self._values[key]

    def peek(self, n_trials: int, key: Hashable) -> Any:
        """The value of ``key`` if already computed at ``n_trials``, else None (computes nothing)."""
        return self._values.get(key) if n_trials == self._n_trials else None

    def setdefault(self, n_trials: int, key: Hashable, value: Any) -> None:
        """Keep ``value`` for ``key`` at ``n_trials`` unless one is there: a value found on the way
        by another computation, from the same numbers."""
        self._at(n_trials)
        self._values.setdefault(key, value)

    def clear(self) -> None:
        self._n_trials, self._values = None, {}

    def _at(self, n_trials: int) -> None:
        if n_trials != self._n_trials:
            self._n_trials, self._values = n_trials, {}
