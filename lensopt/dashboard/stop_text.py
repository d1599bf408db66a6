"""The printed record's words on how sure a result is and why its session ended: the confidence in
plain words (:func:`confidence_statement`, a comparison's :func:`comparison_confidence_text`) and
the stop (:func:`stop_reason`, from the stopping rule and the trial budget the session last ran with,
and its status)."""

from __future__ import annotations

from lensopt.dashboard.series import count_text
from lensopt.refraction.lens import diopter_text
from lensopt.stopping import (
    ACUITY_TOLERANCE_LOGMAR,
    confidence_percent_text,
    confidence_text,
    enough_to_prescribe,
    prescription_target,
    threshold_text,
)
from lensopt.store.budget import StoredBudget, at_start_text, fixed_trials_text, stored_budget
from lensopt.store.records import LETTERS_KIND
from lensopt.store.verdict import one_trial_noun

#: Blur (D) that costs about :data:`lensopt.stopping.ACUITY_TOLERANCE_LOGMAR` of acuity,
#: ``log10(1 + 0.25²) = 0.026``: how the confidence statement says the tolerance in diopters.
TOLERANCE_BLUR_D = 0.25


def confidence_statement(
    confidence: float | None,
    stop_confidence: float | None,
    n_trials: int | None = None,
    ran: StoredBudget | None = None,
) -> str:
    """The confidence in plain words: sure enough (at or above the protocol's ``[stop]`` confidence,
    else lensopt's default 0.95: :func:`lensopt.stopping.enough_to_prescribe`), or how far below, with
    more trials recommended — or, without a ``[stop]`` (a study's fixed number of trials, whose result
    is its estimate), the result's ``n_trials`` and the budget the session ran with (``ran``,
    :func:`lensopt.store.budget.stored_budget`: the protocol's, or a resume's ``--trials``) as the
    closing console names them (:func:`lensopt.store.budget.fixed_trials_text`)."""
    target = prescription_target(stop_confidence)
    if confidence is None:
        return "confidence not computed; more trials recommended before prescribing"
    if enough_to_prescribe(confidence, target):
        return (
            f"{confidence_percent_text(confidence)} sure this lens gives acuity within {ACUITY_TOLERANCE_LOGMAR:g} logMAR "
            f"of the best lens (about {diopter_text(TOLERANCE_BLUR_D, signed=False)} D of blur)"
        )
    if stop_confidence is None:
        if n_trials is None:
            ran_trials = "the protocol's fixed number of trials (no [stop])"
        else:
            ran_trials = fixed_trials_text(n_trials, None, None) if ran is None else ran.fixed_trials_text(n_trials)
        return f"confidence {confidence_text(confidence, target)} — below lensopt's default {threshold_text(target)} after {ran_trials}"
    return f"confidence {confidence_text(confidence, target)} — below the protocol's {threshold_text(target)}; more trials recommended"


def stop_reason(info, result, letters_through: int | None = None) -> str:
    """Why the session ended where the result was computed: a stored ``stop_reason`` when the
    result has one, else read from the stopping rule (with ``letters_through``, the letters read
    through the lens, for its check), the trial budget and the session's status. The rule and the
    budget are those the session last ran with (:func:`lensopt.store.budget.stored_budget`): a
    resume's ``--trials`` counts, not its protocol's."""
    stored = getattr(result, "stop_reason", None)
    if isinstance(stored, str) and stored.strip():
        return stored
    n = result.n_trials
    ran = stored_budget(info)
    rule, budget, planned = ran.rule, ran.max_trials, ran.protocol_max_trials
    confidence = result.confidence
    # "after 1 trial", "after 40 trials"; a comparison's by its name, as its trials row: "after 40 duels"
    trials = count_text(n, "trial" if info.kind == LETTERS_KIND else one_trial_noun(info.kind))
    if rule is not None and rule.reason(n, confidence, letters_through) == "confidence":
        checked = f", the lens read through {rule.check_letters} letters" if rule.check_letters else ""
        return f"stopping rule: confidence {confidence_text(confidence, rule.confidence)} ≥ {threshold_text(rule.confidence)} after {trials}{checked}"
    no_rule = "" if rule is not None else "; no stopping rule"
    if isinstance(budget, int) and n > budget:
        if ran.given is None:  # resumed with --trials beyond the stored budget before resumes were stored
            return f"trial budget reached ({n}, extended from the protocol's {budget} on resuming){no_rule}"
        # a later resume was given fewer trials than the session had answered (it found nothing to do)
        return f"trial budget reached ({n}, more than the {budget} its last resume was given){no_rule}"
    if isinstance(budget, int) and n == budget:
        changed = ""
        if isinstance(planned, int) and planned != budget:  # a resume's --trials
            changed = f", {'extended' if budget > planned else 'lowered'} from {ran.planned_text(planned)} on resuming"
        elif budget == ran.started_with and ran.file_trials is not None and ran.file_trials != budget:
            changed = f", {at_start_text(budget)}; the protocol's {ran.file_trials}"
        return f"trial budget reached ({n} of {budget}{changed}){no_rule}"
    unmet = ", before the stopping rule was met" if rule is not None else " (no stopping rule)"
    if info.status == "aborted":
        return f"stopped by the clinician after {trials}{unmet}"
    return f"ended after {trials}{unmet}"


#: A comparison's prescription has no confidence: the comparisons have no stopping rule (the probit
#: utility has no acuity scale; the acuity link's level of acuity is only roughly placed, page 2's band).
NO_CONFIDENCE_FOR_COMPARISONS = (
    "not computed for {noun} (they have no stopping rule); the 95 % intervals above say how sure it is"
)


def comparison_confidence_text(noun: str) -> str:
    """The record's confidence row of a duel or ranking prescription: no confidence (no stopping
    rule), the intervals instead (a lens from fewer comparisons than lensopt's accuracy was measured
    after is withheld: :func:`lensopt.store.verdict.stored_withheld_reason`)."""
    return NO_CONFIDENCE_FOR_COMPARISONS.format(noun=noun)
