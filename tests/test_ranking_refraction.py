"""Ranking refraction by ask/tell: three lenses ordered by a simulated patient."""

import numpy as np
import pytest

from lensopt.observer import SimulatedPatient
from lensopt.ranking_refraction import RankingRefractionOptimizer, RankingTrial
from lensopt.simulation import simulate_ranking_session


def test_trials_offer_three_distinct_lenses_in_the_bounds():
    opt = RankingRefractionOptimizer(seed=1, n_initial=2, sphere_bounds_d=(-2.0, 2.0))
    patient = SimulatedPatient(1.0, -0.5, seed=1)
    for _ in range(5):
        trial = opt.ask()
        assert len(set(trial.lenses_d)) == 3 and -1.0 <= trial.letter_logmar <= 2.0
        assert all(-2.0 <= S <= 2.0 and -4.0 <= C <= 4.0 for S, C in trial.lenses_d)
        opt.tell(trial, patient.rank_lenses(trial.letter_logmar, trial.lenses_d))
    assert opt.n_trials == 5


def test_rankings_find_a_better_lens_than_random_sets():
    errors = {}
    for rule in ("mpes-ald", "random"):
        errors[rule] = []
        for seed in range(3):
            patient = SimulatedPatient(1.0, -1.5, seed=seed)
            result = simulate_ranking_session(patient, RankingRefractionOptimizer(rule=rule, seed=seed), 15)
            errors[rule].append(result.final.va_error_logmar)
    assert np.median(errors["mpes-ald"]) < np.median(errors["random"])


def test_bad_orders_and_rules_are_refused():
    opt = RankingRefractionOptimizer(seed=0)
    trial = opt.ask()
    with pytest.raises(ValueError):
        opt.tell(trial, (0, 0, 1))
    with pytest.raises(ValueError, match="unknown ranking rule"):
        RankingRefractionOptimizer(rule="muc-ald")
    with pytest.raises(ValueError, match="lenses_d"):
        RankingTrial(((0.0, 0.0),), 0.0)
    assert opt.n_trials == 0


def test_lenses_round_to_the_phoropter_step_and_stay_distinct():
    # a 2 D step on a 4 D box leaves 3 x 3 phoropter lenses: rounding merges proposals often
    opt = RankingRefractionOptimizer(seed=4, n_initial=30, sphere_bounds_d=(-2.0, 2.0),
                                     cylinder_bounds_d=(-2.0, 2.0), lens_step_d=2.0)
    patient = SimulatedPatient(1.0, -0.5, seed=1)
    for _ in range(12):
        trial = opt.ask()
        assert len(set(trial.lenses_d)) == 3
        assert all(S in (-2.0, 0.0, 2.0) and C in (-2.0, 0.0, 2.0) for S, C in trial.lenses_d)
        opt.tell(trial, patient.rank_lenses(trial.letter_logmar, trial.lenses_d))
    with pytest.raises(ValueError, match="lens_step_d must be a positive number"):
        RankingRefractionOptimizer(lens_step_d=0.0)


def test_the_same_settings_and_history_rebuild_the_same_next_trial():
    opt = RankingRefractionOptimizer(seed=2, n_initial=2, lens_step_d=0.25)
    patient = SimulatedPatient(-1.0, 0.5, seed=3)
    for _ in range(3):
        trial = opt.ask()
        opt.tell(trial, patient.rank_lenses(trial.letter_logmar, trial.lenses_d))
    rebuilt = RankingRefractionOptimizer.from_settings(opt.settings_dict(), opt.history)
    assert rebuilt.n_trials == 3 and rebuilt.ask() == opt.ask()
