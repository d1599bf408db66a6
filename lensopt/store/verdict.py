"""Whether a stored result is a prescription: the one rule the closing console, the log, the
sessions list, the dashboard, the JSON export and the printed record apply to a stored session's
results (:func:`stored_withheld_reason`), with the target it holds them to
(:func:`stored_confidence_target`) and the words it counts their trials in (:func:`trial_noun`).
"""

from __future__ import annotations

import numbers

from lensopt.stopping import (
    comparisons_shortfall,
    confidence_text,
    enough_to_prescribe,
    prescription_target,
    threshold_text,
)
from lensopt.store.records import DUEL_KIND, LETTERS_KIND, RANKING_KIND


def stored_stop_confidence(info) -> float | None:
    """The ``[stop] confidence`` stored session ``info`` (a :class:`SessionInfo`, or any object with
    its ``protocol`` and ``optimizer_settings``) holds its results to: its protocol's ``[stop]``
    table as stored with it (the one its closing console used), else its optimizer settings'
    ``stop``; None when it has no stopping rule."""
    for owner in (getattr(info, "protocol", None), getattr(info, "optimizer_settings", None)):
        table = owner.get("stop") if isinstance(owner, dict) else None
        value = table.get("confidence") if isinstance(table, dict) else None
        if isinstance(value, numbers.Real) and not isinstance(value, bool) and 0.0 < float(value) < 1.0:
            return float(value)
    return None


def stored_fixed_design(info) -> bool:
    """Whether stored session ``info`` ran a fixed number of trials (no stopping rule: a study's
    design), whose result short of its target is its estimate rather than a call for more trials."""
    return stored_stop_confidence(info) is None


def stored_confidence_target(info) -> float:
    """The confidence each result of stored session ``info`` must reach to be shown as a prescription:
    :func:`stored_stop_confidence`, else 0.95 (:func:`lensopt.stopping.prescription_target`)."""
    return prescription_target(stored_stop_confidence(info))


#: What the trials of each kind of session are called in the words shown to a clinician (:func:`trial_noun`).
_TRIAL_NOUNS = {LETTERS_KIND: "letters", DUEL_KIND: "duels", RANKING_KIND: "rankings"}


def trial_noun(kind: str) -> str:
    """What the trials of a session of ``kind`` are called in the words shown to a clinician
    (``8 letters``, ``only 12 rankings``): ``letters``, ``duels`` or ``rankings``; ``trials`` for a
    kind this version does not know. The one place every verdict, record and message takes it from."""
    return _TRIAL_NOUNS.get(kind, "trials")


def one_trial_noun(kind: str) -> str:
    """:func:`trial_noun` in the singular, for :func:`count_text`-style counts (``1 duel``, ``8 duels``)."""
    return trial_noun(kind).removesuffix("s")


def answer_noun(kind: str) -> str:
    """What one answer of a session of ``kind`` is counted as when it stops or is interrupted:
    ``trial`` of a letter session (as its console counts them), ``duel`` or ``ranking`` of a
    comparison session (an interrupted duel session said "interrupted after 3 trials")."""
    return "trial" if kind == LETTERS_KIND else one_trial_noun(kind)


#: Why a two-parameter result with a cylinder is no prescription when its session had no axis
#: (no ``[lens] axis_deg``, no ``--axis``): a cylinder cannot be dispensed, nor transposed, without one.
NO_AXIS_REASON = (
    "the cylinder's axis was not given: start a new session with --axis (or [lens] axis_deg), or search "
    "the axis too (clinical-prescription --start RX)"
)


def cylinder_without_axis(cylinder_d: float, axis_deg: float | None) -> bool:
    """Whether a lens has a cylinder (to the phoropter's hundredth) but no axis: a two-parameter
    search's sphere and signed cylinder, run without ``--axis``."""
    return axis_deg is None and round(float(cylinder_d), 2) != 0.0


def withheld_reason(result, target: float, noun: str, comparison: bool) -> str | None:
    """Why ``result`` (a :class:`ResultRecord`) is no prescription — the one rule the closing
    console, the log, the sessions list, the dashboard, the JSON export and the printed record apply
    (:func:`lensopt.stopping.enough_to_prescribe`): a cylinder whose axis the session was not given
    (:data:`NO_AXIS_REASON`); a ``comparison`` (duels, rankings: no confidence) from fewer comparisons
    than lensopt's accuracy was measured after (``only 12 rankings; …``); a confidence short of
    ``target`` (``confidence 0.11 < 0.95 after 8 letters``). None when it may be shown as one."""
    if cylinder_without_axis(result.cylinder_d, result.axis_deg):
        return NO_AXIS_REASON
    n_comparisons = int(result.n_trials) if comparison else None
    if enough_to_prescribe(result.confidence, target, n_comparisons):
        return None
    if result.confidence is None:
        return comparisons_shortfall(int(result.n_trials), noun)
    return f"confidence {confidence_text(result.confidence, target)} < {threshold_text(target)} after {result.n_trials} {noun}"


def stored_withheld_reason(info, result) -> str | None:
    """:func:`withheld_reason` of stored ``result`` of session ``info``: its target and its kind's."""
    return withheld_reason(result, stored_confidence_target(info), trial_noun(info.kind), info.kind != LETTERS_KIND)
