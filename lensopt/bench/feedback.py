"""Feedback benchmark (issue 8): the same simulated patients refracted with letters or with duels.

=================  =========================================================================
rule               what the patient does, and what the optimizer makes of it
=================  =========================================================================
``letters``        names one letter (26-AFC); UCB-ALD on the binary GP (the letter mode)
``duel-drop-ties`` says which of two lenses is clearer, or "the same"; MUC-ALD on the probit
                   preference GP, which has no tie outcome and drops the "same" answers
``duel-ties``      the same answers; MPES-ALD on the tie model of Nguyen et al. 2021
                   (Gumbel noise, threshold δ learned), which uses every answer
=================  =========================================================================

Duel answers follow the Gumbel-noise model with a tie threshold ``δ`` (``RunSpec.tie_threshold``,
utility units): :meth:`lensopt.observer.SimulatedPatient.duel_answer`. Patient ``seed`` is the
refraction benchmark's patient of that seed, so the three rules face the same patients. The tracked
value is the acuity error of the reported lens (logMAR), as in the refraction benchmark.
"""

from __future__ import annotations

from lensopt.bench.problems import RefractionProblem
from lensopt.bench.records import refraction_loop
from lensopt.modes.registry import get_mode
from lensopt.refraction.letters import PAPER_LETTER_MODEL

#: Rules of the feedback benchmark, in the order of the table.
FEEDBACK_RULES = ("letters", "duel-drop-ties", "duel-ties")

#: Defaults: trials per session, patients, slope, tie threshold (utility units; with equal lenses
#: the patient then says "the same" with probability ``1 − 2σ(−δ)`` ≈ 0.46).
FEEDBACK_TRIALS, FEEDBACK_PATIENTS, FEEDBACK_SLOPE, FEEDBACK_TIE_THRESHOLD = 100, 20, 5.0, 1.0

#: Rule of each mode's optimizer.
LETTER_RULE, DUEL_RULE, TIE_RULE = "ucb-ald", "muc-ald", "mpes-ald"


#: Each rule of the benchmark: the feedback mode (:mod:`lensopt.modes.registry`) and the keywords of
#: its optimizer; the letters row is issue 8's table: the paper's letter model, as when it was run.
FEEDBACK_VARIANTS = {
    "letters": ("letters", {"rule": LETTER_RULE, **PAPER_LETTER_MODEL}),
    "duel-drop-ties": ("duel", {"rule": DUEL_RULE}),
    "duel-ties": ("duel", {"rule": TIE_RULE, "model": "ties"}),
}


def _variant(spec):
    if spec.rule not in FEEDBACK_VARIANTS:
        raise ValueError(f"unknown feedback rule {spec.rule!r}; choose from: {', '.join(FEEDBACK_RULES)}")
    kind, options = FEEDBACK_VARIANTS[spec.rule]
    return get_mode(kind), options


def _optimizer(spec):
    mode, options = _variant(spec)
    extra = spec.optimizer_options if mode.kind == "letters" else {}
    return mode.optimizer_class(seed=spec.seed, n_initial=spec.n_initial, **{**options, **extra})


def run_feedback(spec) -> dict:
    """Run one feedback benchmark task (``spec`` a :class:`lensopt.bench.spec.RunSpec`)."""
    patient = RefractionProblem(slope=float(spec.slope), n_trials=spec.n_iterations).patient(spec.seed)
    mode, _ = _variant(spec)
    answer_options = {"tie_threshold": spec.tie_threshold} if "tie_threshold" in mode.answer_options else {}
    respond = mode.responder(patient, **answer_options)
    answers = []

    def answer(trial):
        answers.append(respond(trial))
        return answers[-1]

    record = refraction_loop(spec, patient, _optimizer(spec), answer)
    record["n_same_answers"] = sum(1 for a in answers if isinstance(a, str) and a == "same")
    return record
