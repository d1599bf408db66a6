"""Issue 14's reproducible failure, replayed: a patient who needs almost no correction, whom
UCB-ALD on the paper's letter model lost after a lucky guess at a tiny letter."""

import json

import numpy as np
import pytest

from lensopt.cli import main
from lensopt.refraction.letters import PAPER_LETTER_MODEL, RefractionOptimizer
from lensopt.simulation import make_patient, simulate_session

SEED, TRUE_CORRECTION_D = 306, (-0.12, -0.03)


@pytest.mark.parametrize("rule", ["ucb-ald", "acuity-law"])
def test_the_seed_306_patient_is_found_within_0_05_logmar_by_the_command(capsys, rule):
    code = main(
        [
            "simulate",
            "--rule",
            rule,
            "--trials",
            "100",
            "--seed",
            str(SEED),
            "--true-sphere",
            str(TRUE_CORRECTION_D[0]),
            "--true-cylinder",
            str(TRUE_CORRECTION_D[1]),
            "--json",
        ]
    )
    assert code == 0
    result = json.loads(capsys.readouterr().out)
    assert result["va_error_logmar"] <= 0.05
    assert all(c["va_error_logmar"] <= 0.05 for c in result["checkpoints"] if c["trials"] >= 60)


def test_the_papers_model_loses_the_seed_306_patient_and_the_default_model_does_not():
    def error_after_100(**options):
        patient = make_patient(SEED, slope=5.0, true_correction_d=TRUE_CORRECTION_D)
        opt = RefractionOptimizer(rule="ucb-ald", seed=SEED, **options)
        return simulate_session(patient, opt, 100).final.va_error_logmar

    assert error_after_100(**PAPER_LETTER_MODEL) > 0.3  # the stall the issue traced
    assert error_after_100() <= 0.05


def test_no_trial_repeats_a_letter_the_patient_is_sure_to_read():
    """The stall's signature: the same lens and a 2.0 logMAR letter, trial after trial. Every trial
    of the default model must carry information by its own account."""
    patient = make_patient(SEED, slope=5.0, true_correction_d=TRUE_CORRECTION_D)
    opt = RefractionOptimizer(rule="ucb-ald", seed=SEED)
    sure = 0
    for t in range(60):
        trial = opt.ask()
        if t >= opt.settings.n_initial:
            x = np.array([[trial.letter_logmar, trial.sphere_d, trial.cylinder_d]])
            p_correct = float(opt.model.predict_proba(x)[0])
            sure += p_correct > 0.99 or p_correct < 0.01 + opt.model.guess_rate
        opt.tell(trial, patient.respond(trial.letter_logmar, trial.sphere_d, trial.cylinder_d))
    assert sure <= 3


def test_a_gp_setting_given_to_the_acuity_law_rule_is_one_line_and_exit_2(capsys):
    code = main(["simulate", "--rule", "acuity-law", "--beta", "2", "--trials", "5"])
    err = capsys.readouterr().err.strip()
    assert code == 2
    assert err.count("\n") == 0 and "beta sets the GP letter rules only, not acuity-law" in err
