"""The ask/tell contract every lensopt optimizer satisfies, and the one loop that drives it offline.

An optimizer proposes a query (:meth:`AskTellOptimizer.ask`), is told the answer
(:meth:`AskTellOptimizer.tell`) and reports its current optimum (:meth:`AskTellOptimizer.best`).
Its next decision is a function of its settings and its history only (the randomness of a decision
is drawn from ``(seed, n_trials)``), so :meth:`~AskTellOptimizer.to_state` — plain JSON — and
:meth:`~AskTellOptimizer.from_state` rebuild an optimizer that makes the same next decision (to
the tolerance of a fit that the original warm-started and the rebuilt one starts from the prior:
about 1e-9 D in a proposed lens, up to about 1e-6 D in the full prescription's reported one; lenses
rounded to the phoropter's steps are the same).

The optimizers, their query → answer, and what ``best()`` reports:

- :class:`lensopt.refraction.RefractionOptimizer`: ``Trial`` → correct (bool); the lens
  ``(sphere_d, cylinder_d)``;
- :class:`lensopt.refraction.AcuityLawOptimizer`: the same (grid Bayes under the blur–acuity law);
- :class:`lensopt.refraction.duels.DuelRefractionOptimizer`: ``DuelTrial`` → ``"first"``,
  ``"second"`` or ``"same"``; the lens;
- :class:`lensopt.refraction.rankings.RankingRefractionOptimizer`: ``RankingTrial`` → lens indices,
  clearest first; the lens;
- :class:`lensopt.binary.optimizer.ContextualOptimizer`: ``Query`` → 0/1; the system point ``(n_system,)``;
- :class:`lensopt.preference.PreferenceOptimizer`: ``DuelQuery`` → 0/1 (a batch: one per pair); the
  system point;
- :class:`lensopt.preference.copeland.CopelandOptimizer`: ``DuelQuery`` → 0/1; the Condorcet winner;
- :class:`lensopt.ranking.RankingOptimizer`: ``RankingQuery`` → an ordering or ``"same"``; the
  system point.

The PsychoPy trial loops (:mod:`lensopt.experiment`) own their loop and call ``ask``/``tell``
themselves; everything that answers by computation (the simulated patient, a user's script) runs
:func:`run_session`. Like trieste's ``AskTellOptimizer`` and emukit's outer loop, driven from outside.
"""

from __future__ import annotations

import math
import numbers
from collections.abc import Callable
from dataclasses import dataclass, fields
from typing import Any, Protocol, Self, SupportsIndex, TypeVar, runtime_checkable

QueryT = TypeVar("QueryT")
"""What an optimizer asks (a lens trial, a duel, a set of members...)."""
AnswerT_contra = TypeVar("AnswerT_contra", contravariant=True)
"""What it is told back about a query."""

NO_DECISION_MS = math.nan
"""``last_decision_ms`` before an optimizer's first decision."""


@runtime_checkable
class AskTellOptimizer(Protocol[QueryT, AnswerT_contra]):
    """An optimizer driven from outside: ``ask()``, ``tell(query, answer)``, ``best()``.

    ``n_trials`` is the length of the history the next decision is a function of: the answers told
    (for :class:`lensopt.preference.PreferenceOptimizer`, the duels: a batch answer adds one per
    compared pair). ``last_decision_ms`` is the duration of the last :meth:`ask` (NaN before the
    first). ``to_state()`` is JSON-able, with a ``"format"`` tag; ``from_state(state)`` rebuilds an
    optimizer whose next :meth:`ask` equals this one's.
    """

    @property
    def n_trials(self) -> int: ...

    @property
    def last_decision_ms(self) -> float: ...

    def ask(self) -> QueryT:
        """The next query."""
        ...

    def tell(self, query: QueryT, answer: AnswerT_contra) -> None:
        """Record the ``answer`` to ``query`` (a query returned by :meth:`ask`, or an equal one)."""
        ...

    def best(self) -> Any:
        """The reported optimum, by the optimizer's own rule: the GP optimizers' argmax of the posterior
        mean at the reference context, the acuity law's lens of least expected acuity loss, the full
        prescription's most-plus lens of best acuity."""
        ...

    def to_state(self) -> dict[str, Any]: ...

    @classmethod
    def from_state(cls, state: dict[str, Any]) -> Self: ...


@runtime_checkable
class StoppableOptimizer(AskTellOptimizer[QueryT, AnswerT_contra], Protocol[QueryT, AnswerT_contra]):
    """An optimizer with a stopping rule: ``confidence()`` in its :meth:`best`, ``should_stop()``."""

    def confidence(self) -> float:
        """Posterior probability that :meth:`best` is good enough (the stopping rule's criterion)."""
        ...

    def should_stop(self) -> bool:
        """Whether the session may stop now (never without a stopping rule)."""
        ...


#: What the states of the model-family optimizers (binary, preference, Copeland, ranking) hold.
SETTINGS_AND_HISTORY: dict[str, type] = {"settings": dict, "history": list}


def check_state_format(
    state: object, expected: str, what: str, required: dict[str, type] | None = None
) -> dict[str, Any]:
    """``state`` if it is a saved state (a dict) of format ``expected`` holding each of ``required``'s
    keys with a value of its type; else a one-line ValueError naming ``what`` was expected (e.g.
    ``"duel refraction"``) and what came: every ``from_state`` refuses a foreign state the same way
    (a hand-edited one without its settings or history was a KeyError or TypeError from inside)."""
    if not isinstance(state, dict) or state.get("format") != expected:
        got = state.get("format") if isinstance(state, dict) else type(state).__name__
        raise ValueError(f"not a lensopt {what} state (format {got!r}; expected {expected!r})")
    for key, kind in (required or {}).items():
        if key not in state:
            raise ValueError(f"this lensopt {what} state has no {key!r}; it cannot be read")
        if not isinstance(state[key], kind):
            raise ValueError(
                f"this lensopt {what} state's {key!r} is of type {type(state[key]).__name__}, not {kind.__name__}; it cannot be read"
            )
    return state


class ArrayQuery:
    """Value equality for a frozen dataclass of read-only arrays (the model-family optimizers' queries:
    ``Query``, ``DuelQuery``, ``RankingQuery``): two queries of the same type are equal when every
    field has the same shape and values (``opt.ask() == opt.ask()``, as the refraction trials
    compare), and equal queries hash alike (``0.0`` and ``-0.0`` too; a NaN equals nothing)."""

    def _values(self) -> tuple[Any, ...]:
        return tuple(
            (getattr(self, f.name).shape, tuple(getattr(self, f.name).ravel().tolist()))
            for f in fields(self)  # type: ignore[arg-type]
        )

    def __eq__(self, other: object) -> bool:
        if type(other) is not type(self):
            return NotImplemented
        return self._values() == other._values()

    def __hash__(self) -> int:
        return hash((type(self).__name__, self._values()))


@dataclass(frozen=True)
class SessionRun:
    """What :func:`run_session` did: ``n_trials`` run, whether ``stop`` ended the session (at its last
    trial), the duration of each decision (``optimizer.last_decision_ms`` after each ask), and why it
    stopped: ``stop_reason`` is the optimizer's stopping rule's (``"confidence"``: sure enough;
    ``"max_trials"``: the rule's budget, not sure enough) when its rule ended it, ``"stop"`` when
    another ``stop`` function did, None when every trial ran."""

    n_trials: int
    stopped: bool
    decision_ms: tuple[float, ...]
    stop_reason: str | None = None


class _OwnStopRule:
    def __repr__(self) -> str:
        return "OWN_STOP_RULE"


OWN_STOP_RULE: Any = _OwnStopRule()
""":func:`run_session`'s default ``stop``: the optimizer's own stopping rule, if it has one."""


def _rule_reason(optimizer: Any) -> str | None:
    """Why the optimizer's own stopping rule says stop now: its ``stop_reason()``, else (an optimizer
    with a ``stop`` rule and a ``confidence()`` but no check through the lens, e.g. the benchmarks'
    ideal observers) the rule's ``reason``; None without either."""
    reason = getattr(optimizer, "stop_reason", None)
    if callable(reason):
        said = reason()
        return None if said is None else str(said)
    rule, confidence = getattr(optimizer, "stop", None), getattr(optimizer, "confidence", None)
    if rule is None or not callable(confidence) or not callable(getattr(rule, "reason", None)):
        return None
    return str(rule.reason(int(optimizer.n_trials), float(confidence())))


def run_session(
    optimizer: AskTellOptimizer[QueryT, AnswerT_contra],
    respond: Callable[[QueryT], AnswerT_contra],
    n_trials: SupportsIndex,
    on_trial: Callable[[int, QueryT, AnswerT_contra], None] | None = None,
    stop: Callable[[], bool] | None = OWN_STOP_RULE,
) -> SessionRun:
    """The ask → answer → tell loop: at most ``n_trials`` times ``query = optimizer.ask()``,
    ``answer = respond(query)``, ``optimizer.tell(query, answer)``.

    ``on_trial(t, query, answer)`` is called after each tell (``t`` from 1); ``stop()`` after it:
    the session ends after the first trial at which it returns True. By default ``stop`` is the
    optimizer's own stopping rule (``optimizer.should_stop`` of a :class:`StoppableOptimizer`, e.g.
    an optimizer made with ``stop=StopRule(...)``: its confidence, its ``max_trials``); ``None`` runs
    all ``n_trials`` whatever the optimizer's rule says (a benchmark that scores every trial).
    """
    own_rule = getattr(optimizer, "should_stop", None)  # a StoppableOptimizer's, or a benchmark's ideal observer's
    if stop is OWN_STOP_RULE:
        stop = own_rule if callable(own_rule) else None
    by_rule = stop is not None and stop == own_rule
    if isinstance(n_trials, bool) or not isinstance(n_trials, numbers.Integral) or int(n_trials) < 1:
        raise ValueError(f"the number of trials must be a positive integer, got {n_trials!r}")
    decision_ms: list[float] = []
    stopped, t = False, 0
    for t in range(1, int(n_trials) + 1):
        query = optimizer.ask()
        decision_ms.append(float(optimizer.last_decision_ms))
        answer = respond(query)
        optimizer.tell(query, answer)
        if on_trial is not None:
            on_trial(t, query, answer)
        if stop is not None and stop():
            stopped = True
            break
    reason = ((_rule_reason(optimizer) if by_rule else None) or "stop") if stopped else None
    return SessionRun(n_trials=t, stopped=stopped, decision_ms=tuple(decision_ms), stop_reason=reason)


__all__ = [
    "NO_DECISION_MS",
    "OWN_STOP_RULE",
    "ArrayQuery",
    "AskTellOptimizer",
    "SessionRun",
    "StoppableOptimizer",
    "check_state_format",
    "run_session",
]
