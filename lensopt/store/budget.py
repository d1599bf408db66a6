"""The trial budget and the stopping rule a stored session last ran with (:func:`stored_budget`):
its protocol's, or those its last resume given ``--trials`` ran it with, which the store keeps
(:func:`lensopt.store.session_records.resumed_budget`). What the printed record and the dashboard
say of why a session ended, and of where its stopping rule stands, is read against these."""

from __future__ import annotations

import dataclasses
import numbers
from dataclasses import dataclass

from lensopt.stopping import StopRule, rebudgeted_limits
from lensopt.store.session_records import RESUMED, STARTED, resumed_budget


def at_start_text(trials: int) -> str:
    """``--trials 20 at the start``: a session's budget its start's ``--trials`` gave, in every wording."""
    return f"--trials {trials} at the start"


@dataclass(frozen=True)
class StoredBudget:
    """A stored session's trial budget per eye. ``trials``: the one it last ran with (None: not
    stored); ``protocol_trials``: its protocol's ``[optimizer] trials``; ``given``: the ``--trials``
    of its last resume given one, which later resumes keep (None: none was); ``rule``: the stopping
    rule it last ran with (None: none, or one this lensopt cannot read), its ``max_trials`` and
    ``min_trials`` following a resume's ``--trials`` as :meth:`lensopt.experiment.protocol.Protocol.with_trials`
    sets them; ``stored_rule``: the rule as the session stored it. ``known``: whether these are the
    budget it last ran with for certain — every resume of a session started since schema 10 is
    recorded with its budget, so False for one started before (its earlier resumes, with
    ``--trials`` or not, are not recorded) unless a recorded resume was given ``--trials``.
    ``started_with``: the ``--trials`` the session was started with, which its stored protocol holds
    as its ``[optimizer] trials`` (recorded since 4 Dec 2026; None: none, or not recorded);
    ``file_trials``: then the protocol file's."""

    trials: int | None
    protocol_trials: int | None
    given: int | None
    rule: StopRule | None
    stored_rule: StopRule | None
    known: bool
    started_with: int | None = None
    file_trials: int | None = None

    def fixed_trials_text(self, n_trials: int) -> str:
        """:func:`fixed_trials_text` of ``n_trials`` with this budget."""
        return fixed_trials_text(n_trials, self.given, self.protocol_trials, self.started_with, self.file_trials)

    def planned_text(self, planned: int) -> str:
        """The budget ``planned`` before a resume changed it, by where it came from: ``--trials 15 at
        the start`` when the start's ``--trials`` set it, else ``the protocol's 15``."""
        return at_start_text(planned) if planned == self.started_with else f"the protocol's {planned}"

    @property
    def max_trials(self) -> int | None:
        """The trials after which the session stops at the latest: its stopping rule's ``max_trials``,
        else its budget."""
        return self.rule.max_trials if self.rule is not None else self.trials

    @property
    def protocol_max_trials(self) -> int | None:
        """:attr:`max_trials` as its protocol (its stored settings) set it, before any resume's ``--trials``."""
        return self.stored_rule.max_trials if self.stored_rule is not None else self.protocol_trials


def fixed_trials_text(
    n_trials: int,
    given: int | None,
    protocol_trials: int | None,
    started_with: int | None = None,
    file_trials: int | None = None,
) -> str:
    """A fixed design's (no ``[stop]``) trials, the closing console's words and the printed record's:
    ``the protocol's 260 trials (no [stop]: a fixed number)``; a resume's ``--trials`` having given
    its budget (:attr:`StoredBudget.given`), ``9 trials, the budget of --trials 9 on resuming (the
    protocol's 6; no [stop]: a fixed number)``; a session ended before its budget (the clinician
    closed it), ``7 of the protocol's 260 trials (no [stop]: a fixed number; ended early)`` or ``7 of
    the 9 trials of --trials 9 on resuming (…; ended early)``. ``protocol_trials`` None: not known,
    the trials taken as the protocol's. Started with ``--trials`` (``started_with``; the protocol
    file's ``file_trials``): ``the 20 trials of --trials 20 at the start (the protocol's 260; no
    [stop]: a fixed number)`` — not "the protocol's 20"."""
    if started_with is not None and protocol_trials == started_with:
        file_planned = "" if file_trials is None else f"the protocol's {file_trials}; "
        if given is None:
            start = f"{started_with} trials of {at_start_text(started_with)} ({file_planned}no [stop]: a fixed number"
            return f"the {start})" if n_trials >= started_with else f"{n_trials} of the {start}; ended early)"
        planned = f"{at_start_text(started_with)}, {file_planned}"
    elif given is None:
        if protocol_trials is None or n_trials >= protocol_trials:
            return f"the protocol's {n_trials} trials (no [stop]: a fixed number)"
        return f"{n_trials} of the protocol's {protocol_trials} trials (no [stop]: a fixed number; ended early)"
    else:
        planned = "" if protocol_trials is None else f"the protocol's {protocol_trials}; "
    if n_trials >= given:
        return f"{n_trials} trials, the budget of --trials {given} on resuming ({planned}no [stop]: a fixed number)"
    return (
        f"{n_trials} of the {given} trials of --trials {given} on resuming "
        f"({planned}no [stop]: a fixed number; ended early)"
    )


def _count(value) -> int | None:
    """A positive whole number as stored, else None."""
    if isinstance(value, bool) or not isinstance(value, numbers.Integral):
        return None
    return int(value) if int(value) > 0 else None


def _table(value) -> dict:
    return value if isinstance(value, dict) else {}


def _rule(data) -> StopRule | None:
    try:
        return StopRule.from_dict(data)
    except (TypeError, ValueError):
        return None


def stored_budget(info) -> StoredBudget:
    """The trial budget and stopping rule stored session ``info`` (a :class:`lensopt.store.SessionInfo`,
    or any object with its ``protocol``, ``optimizer_settings`` and ``events``) last ran with: those of
    its protocol and stored settings, or, once a resume was given ``--trials``, that budget (kept by
    every later resume) and the stopping rule the resume ran with (:func:`lensopt.experiment.resume.resumed_settings`)."""
    protocol = _table(getattr(info, "protocol", None))
    optimizer, settings = _table(protocol.get("optimizer")), _table(getattr(info, "optimizer_settings", None))
    events = tuple(getattr(info, "events", None) or ())
    planned, given = _count(optimizer.get("trials")), resumed_budget(events)
    stored_rule = _rule(settings.get("stop"))
    rule = stored_rule
    # a resume given --trials runs the stored protocol's [stop] with that budget
    if rule is not None and given is not None and planned is not None and isinstance(protocol.get("stop"), dict):
        min_trials, max_trials = rebudgeted_limits(rule.min_trials, rule.max_trials, planned, given)
        rule = dataclasses.replace(rule, min_trials=min_trials, max_trials=max_trials)
    # every resume recorded, each with the budget it ran with: a session started since schema 10
    recorded = any(getattr(e, "event", None) == STARTED for e in events) and all(
        _count(_table(getattr(e, "detail", None)).get("trials")) is not None
        for e in events
        if getattr(e, "event", None) == RESUMED
    )
    # the start's --trials (recorded since 4 Dec 2026), which the stored protocol holds
    start = next((_table(getattr(e, "detail", None)) for e in events if getattr(e, "event", None) == STARTED), {})
    started_with = _count(start.get("trials_given"))
    from_start = started_with is not None and started_with == planned
    return StoredBudget(
        trials=given if given is not None else planned,
        protocol_trials=planned,
        given=given,
        rule=rule,
        stored_rule=stored_rule,
        known=given is not None or recorded,
        started_with=started_with if from_start else None,
        file_trials=_count(start.get("protocol_trials")) if from_start else None,
    )
