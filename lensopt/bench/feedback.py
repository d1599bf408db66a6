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
from lensopt.duel_refraction import DuelRefractionOptimizer
from lensopt.refraction import PAPER_LETTER_MODEL, RefractionOptimizer

#: Rules of the feedback benchmark, in the order of the table.
FEEDBACK_RULES = ("letters", "duel-drop-ties", "duel-ties")

#: Defaults: trials per session, patients, slope, tie threshold (utility units; with equal lenses
#: the patient then says "the same" with probability ``1 − 2σ(−δ)`` ≈ 0.46).
FEEDBACK_TRIALS, FEEDBACK_PATIENTS, FEEDBACK_SLOPE, FEEDBACK_TIE_THRESHOLD = 100, 20, 5.0, 1.0

#: Rule of each mode's optimizer.
LETTER_RULE, DUEL_RULE, TIE_RULE = "ucb-ald", "muc-ald", "mpes-ald"


def _optimizer(spec):
    if spec.rule == "letters":
        # the letters row of issue 8's table: the paper's letter model, as when it was run
        return RefractionOptimizer(
            rule=LETTER_RULE,
            seed=spec.seed,
            n_initial=spec.n_initial,
            **{**PAPER_LETTER_MODEL, **spec.optimizer_options},
        )
    if spec.rule == "duel-drop-ties":
        return DuelRefractionOptimizer(rule=DUEL_RULE, seed=spec.seed, n_initial=spec.n_initial)
    if spec.rule == "duel-ties":
        return DuelRefractionOptimizer(rule=TIE_RULE, seed=spec.seed, n_initial=spec.n_initial, model="ties")
    raise ValueError(f"unknown feedback rule {spec.rule!r}; choose from: {', '.join(FEEDBACK_RULES)}")


def run_feedback(spec) -> dict:
    """Run one feedback benchmark task (``spec`` a :class:`lensopt.bench.spec.RunSpec`)."""
    patient = RefractionProblem(slope=float(spec.slope), n_trials=spec.n_iterations).patient(spec.seed)
    answers = []

    def answer(trial):
        if spec.rule == "letters":
            return bool(patient.respond(trial.letter_logmar, trial.sphere_d, trial.cylinder_d))
        answers.append(
            patient.duel_answer(
                trial.letter_logmar, trial.first_lens_d, trial.second_lens_d, tie_threshold=spec.tie_threshold
            )
        )
        return answers[-1]

    record = refraction_loop(spec, patient, _optimizer(spec), answer)
    record["n_same_answers"] = answers.count("same")
    return record
