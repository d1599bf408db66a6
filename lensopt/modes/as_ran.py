"""How a stored comparison session ran where its store does not say, read from what it stored.

Two choices of a duel or ranking session were not stored by the lensopt versions that made them:
the order its lenses were shown in (``[duel] order`` / ``[ranking] order``, stored since 30 Nov 2026)
and, in a full-prescription comparison, its trust region's centre and the report's share of the tilt
(stored since 30 Nov 2026). Resumed by its creation time alone, a session made after those dates by
an older lensopt installed still went on with trials it never ran with (a full-prescription duel
ended 2 D of sphere away). What it stored says more: without the key, it was made by a lensopt from
before the key was stored, so by one from before the change unless it was created in the hours
between them (:func:`stored_order`,
:meth:`lensopt.refraction.trust_centre_history.TrustCentreHistory.centred_by_mean`).

And its trials tell: an optimizer asks the same trial from the same settings and answers, so the
settings it ran with are those whose replay asks each stored trial as it was stored (shown in the
order that choice gives). :func:`as_ran` replays the stored trials under each candidate, the
likeliest first, and keeps the first candidate that asks them all (or, as soon as only one
candidate is left, that one); when none does, the likeliest, and the resume says so.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Callable
from typing import Any

from lensopt.modes.base import answered, eye_records, eye_settings
from lensopt.modes.presentation import presented
from lensopt.modes.registry import get_mode

#: The session kinds whose protocol table of their own name holds the lens order.
ORDER_SECTIONS = ("duel", "ranking")
#: How near a replayed trial's numbers must be to the stored ones (D, logMAR): a letter size found
#: by a numerical search differs in its last digits between a live and a rebuilt optimizer (within
#: 1e-7 relative, tests/test_asktell.py) and between machines; another way of running asks other lenses.
SAME_TRIAL_TOLERANCE = 1e-6


#: When duels and rankings began to show their lenses counterbalanced (commit ae86461, 30 Nov 2026
#: 11:48:19 UTC, unix seconds), and when the protocol began to store ``[duel] order`` (commit
#: e51fe11, 13:38:00 UTC that day).
COUNTERBALANCED_SINCE_S = 1796039299
ORDER_STORED_SINCE_S = 1796045880


def stored_order(created_at: float) -> str:
    """The lens order of a comparison session whose protocol stores none: ``counterbalanced`` when
    it was created in the hours between :data:`COUNTERBALANCED_SINCE_S` and
    :data:`ORDER_STORED_SINCE_S` (by a lensopt of those hours), else ``as-asked`` (the rule's champion
    first), as every lensopt before ran — also one installed still after them, which its protocol,
    without an order, shows made it."""
    return "counterbalanced" if COUNTERBALANCED_SINCE_S <= created_at < ORDER_STORED_SINCE_S else "as-asked"


@dataclasses.dataclass(frozen=True)
class AsRan:
    """What a stored session ran with: its ``protocol`` data and optimizer ``settings``, and a
    ``note`` for the terminal when its trials overrule what its store suggests, or match no way it
    may have run."""

    protocol: dict
    settings: dict
    note: str | None = None


def _numbers(value: Any) -> list[float]:
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return _numbers(dataclasses.astuple(value))
    if isinstance(value, (tuple, list)):
        return [number for item in value for number in _numbers(item)]
    return [float(value)]


def same_trial(shown: Any, stored: Any) -> bool:
    """Whether a replayed trial ``shown`` is the ``stored`` one: the same type, every number within
    :data:`SAME_TRIAL_TOLERANCE`."""
    if type(shown) is not type(stored):
        return False
    a, b = _numbers(shown), _numbers(stored)
    return len(a) == len(b) and all(math.isclose(x, y, rel_tol=0.0, abs_tol=SAME_TRIAL_TOLERANCE) for x, y in zip(a, b))


def _candidates(kind: str, protocol: dict, settings: dict, created_at_s: float, order_guess: str):
    """``(order, settings)`` pairs a session may have run with, the likeliest first."""
    table = protocol.get(kind) if kind in ORDER_SECTIONS else None
    stored = table.get("order") if isinstance(table, dict) else None
    if kind not in ORDER_SECTIONS or stored is not None:
        orders = [stored]
    else:
        orders = [order_guess, "counterbalanced" if order_guess == "as-asked" else "as-asked"]
    cls = get_mode(kind).stored_optimizer_class(settings)
    variants = cls.settings_candidates(settings, created_at_s)
    return [(order, variant) for variant in variants for order in orders]


def _with_order(protocol: dict, kind: str, order: str | None) -> dict:
    if kind not in ORDER_SECTIONS or order is None or not isinstance(protocol.get(kind), dict):
        return protocol
    return {**protocol, kind: {**protocol[kind], "order": order}}


def as_ran(
    kind: str,
    protocol: dict,
    settings: dict,
    created_at_s: float,
    seed: int,
    records: list,
    eye: str | None,
    order_guess: str,
    progress: Callable[[str], None] | None = None,
) -> AsRan:
    """The ``protocol`` data (with its lens order) and optimizer ``settings`` a stored session of
    ``kind`` ran with, of session ``seed`` and stored ``records`` (eye ``eye``'s searched): those
    it stored; where it stored no order (the likeliest ``order_guess``) or trust centre (the
    optimizer's ``settings_candidates``), the candidate whose replay asks its stored trials (module
    docstring). ``progress`` is told once before a replay."""
    candidates = _candidates(kind, protocol, settings, created_at_s, order_guess)
    guess = candidates[0]
    if len(candidates) == 1:
        return AsRan(_with_order(protocol, kind, guess[0]), guess[1])
    mode = get_mode(kind)
    told = answered(eye_records(records, eye))
    if not told:
        return AsRan(_with_order(protocol, kind, guess[0]), guess[1])
    if progress is not None:
        progress(f"replaying its {len(told)} answers to tell how it ran (its store does not say)")
    live = []
    for order, variant in candidates:
        own = eye_settings(variant, eye)
        try:
            live.append(((order, variant), mode.stored_optimizer_class(own).from_settings(own)))
        except ValueError:
            continue
    if not live:  # settings no optimizer is built from: the rebuild that follows says why, in one line
        return AsRan(_with_order(protocol, kind, guess[0]), guess[1])
    for record in told:
        trial, answer = mode.history_pair(record)
        still = []
        for candidate, optimizer in live:
            try:
                asked = presented(optimizer.ask(), seed, record.index, candidate[0] or "counterbalanced")
                if same_trial(asked, trial):
                    optimizer.tell(trial, answer)
                    still.append((candidate, optimizer))
            except ValueError:
                continue
        live = still
        if len(live) <= 1:
            break
    if not live:
        return AsRan(
            _with_order(protocol, kind, guess[0]),
            guess[1],
            "its store does not say how it ran, and its trials are not those of any way it may have run; "
            f"it resumes as its store suggests ({_described(guess)})",
        )
    chosen = live[0][0]
    note = None
    if chosen != guess:
        note = (
            f"its trials show it ran with {_described(chosen)}, not as its store suggests "
            f"({_described(guess)}); it resumes as it ran"
        )
    return AsRan(_with_order(protocol, kind, chosen[0]), chosen[1], note)


def _described(candidate) -> str:
    order, settings = candidate
    parts = [] if order is None else [f"its lenses shown {order.replace('-', ' ')}"]
    if "trust_centre" in settings:
        parts.append(f"its search centred by the {settings['trust_centre']} estimate")
    return " and ".join(parts) or "as stored"


def session_as_ran(info, records: list, progress: Callable[[str], None] | None = None) -> AsRan:
    """:func:`as_ran` of the stored session ``info`` (a :class:`lensopt.store.SessionInfo`) and its
    stored ``records`` (the first of its eyes): what a resume continues it with, and what the
    dashboard and the printed record rebuild it from, so that they show the model a resume of it
    continues (they had guessed by its creation date alone,
    :func:`lensopt.modes.registry.session_settings`, and a full-prescription duel's record drew
    another model than the one its resume went on with)."""
    tested = info.eye.strip().upper() if isinstance(info.eye, str) else None
    eye = "OD" if tested == "OU" else tested  # the first eye searched
    order = stored_order(info.created_at)
    return as_ran(
        info.kind,
        info.protocol,
        info.optimizer_settings,
        info.created_at,
        info.seed,
        records,
        eye,
        order,
        progress=progress,
    )
