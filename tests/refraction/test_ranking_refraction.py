"""Ranking refraction by ask/tell: three lenses ordered by a simulated patient."""

import json

import numpy as np
import pytest

from lensopt.observer import SimulatedPatient
from lensopt.refraction.rankings import RankingRefractionOptimizer, RankingTrial
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
    with pytest.raises(ValueError, match="an ordering must not repeat a member"):
        opt.tell(trial, (0, 0, 1))
    with pytest.raises(ValueError, match="unknown ranking rule"):
        RankingRefractionOptimizer(rule="muc-ald")
    with pytest.raises(ValueError, match="lenses_d"):
        RankingTrial(((0.0, 0.0),), 0.0)
    assert opt.n_trials == 0


@pytest.mark.parametrize("n_lenses", [1, 7, True, 2.0])
def test_a_number_of_lenses_outside_two_to_four_is_refused_under_its_own_name(n_lenses):
    with pytest.raises(ValueError, match=rf"^n_lenses must be an integer in 2\.\.4, got {n_lenses!r}$"):
        RankingRefractionOptimizer(seed=0, n_lenses=n_lenses)


def test_a_numpy_number_of_lenses_is_saved_as_a_json_integer():
    state = RankingRefractionOptimizer(seed=0, n_lenses=np.int64(4)).to_state()
    assert json.loads(json.dumps(state))["settings"]["n_lenses"] == 4


@pytest.mark.parametrize(
    ("order", "match"),
    [
        ([1.9, 0.2], "integer member indices"),  # was truncated to (1, 0)
        ([True, False], "integer member indices"),
        ("210", "unknown outcome"),
        ([0], "at least 2 of its 3 lenses"),
        ([0, 3], "0..2"),
        (None, "ordering of indices"),
    ],
)
def test_an_order_that_is_not_lens_indices_is_refused_and_nothing_is_told(order, match):
    opt = RankingRefractionOptimizer(seed=0)
    trial = opt.ask()
    with pytest.raises(ValueError, match=match):
        opt.tell(trial, order)
    two = RankingTrial(trial.lenses_d[:2], trial.letter_logmar)
    with pytest.raises(ValueError, match="has 3 lenses; got 2"):
        opt.tell(two, [0, 1])
    assert opt.n_trials == 0
    opt.tell(trial, [2, 0])  # the last place implied
    assert opt.to_state()["history"][-1]["order"] == [2, 0]


def test_lenses_round_to_the_phoropter_step_and_stay_distinct():
    # a 2 D step on a 4 D box leaves 3 x 3 phoropter lenses: rounding merges proposals often
    opt = RankingRefractionOptimizer(
        seed=4, n_initial=30, sphere_bounds_d=(-2.0, 2.0), cylinder_bounds_d=(-2.0, 2.0), lens_step_d=2.0
    )
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


def test_a_json_state_rebuilds_the_history_and_the_next_trial():
    opt = RankingRefractionOptimizer(seed=5, n_initial=2, n_lenses=4, lens_step_d=0.25)
    patient = SimulatedPatient(0.5, -1.0, seed=5)
    for k in range(4):
        trial = opt.ask()
        order = patient.rank_lenses(trial.letter_logmar, trial.lenses_d)
        opt.tell(trial, order if k % 2 else order[:3])  # the whole order, or the first n_lenses − 1
    state = json.loads(json.dumps(opt.to_state()))
    assert state["format"] == "lensopt.ranking-refraction-state/1" and len(state["history"]) == 4
    rebuilt = RankingRefractionOptimizer.from_state(state)
    assert rebuilt.history == opt.history and rebuilt.settings_dict() == opt.settings_dict()
    assert rebuilt.to_state() == state
    assert rebuilt.ask() == opt.ask() and rebuilt.best() == opt.best()


def test_a_state_of_another_kind_or_with_a_bad_row_is_refused():
    with pytest.raises(ValueError, match="not a lensopt ranking refraction state"):
        RankingRefractionOptimizer.from_state({"format": "lensopt.duel-refraction-state/1"})
    with pytest.raises(ValueError, match="not a lensopt ranking refraction state"):
        RankingRefractionOptimizer.from_state([])
    state = RankingRefractionOptimizer(seed=0).to_state()
    state["history"] = [{"letter_logmar": 0.3, "lenses_d": [[0.0, 0.0], [1.0, 0.0], [2.0, 0.0]]}]
    with pytest.raises(ValueError, match="needs letter_logmar, lenses_d and order"):
        RankingRefractionOptimizer.from_state(state)


# ---- the posterior utility, for the dashboard's lens map ---------------------------------------
def _grid_lenses(n=9):
    s, c = np.meshgrid(np.linspace(-4.0, 4.0, n), np.linspace(-4.0, 4.0, n))
    return np.column_stack([s.ravel(), c.ravel()])


def test_predict_utility_is_the_ranking_models_prediction_and_peaks_at_the_best_lens():
    opt = RankingRefractionOptimizer(seed=3, n_initial=3)
    patient = SimulatedPatient(-1.25, 0.75, seed=3)
    for _ in range(6):
        trial = opt.ask()
        opt.tell(trial, patient.rank_lenses(trial.letter_logmar, trial.lenses_d))
    lenses, letters = _grid_lenses(), 0.4
    expected = opt._core.model.predict(np.column_stack([np.full(len(lenses), letters), lenses]), full_cov=True)
    mean, cov = opt.predict_utility(letters, lenses, full_cov=True)
    np.testing.assert_allclose(mean, expected[0], rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(cov, expected[1], rtol=1e-12, atol=1e-12)
    _, var = opt.predict_utility(letters, lenses)
    np.testing.assert_allclose(var, np.diag(expected[1]), rtol=1e-9, atol=1e-12)
    reference = opt.reference_letter_logmar
    assert reference == 2.0  # the upper letter bound
    at_best = opt.predict_utility(reference, [opt.best()])[0][0]
    assert at_best >= opt.predict_utility(reference, _grid_lenses(41))[0].max() - 1e-6


def test_predict_utility_before_any_ranking_is_the_prior_and_bad_inputs_are_named():
    from lensopt.refraction.duels import MODEL_LOGIT_SCALE, UTILITY_VARIANCE

    opt = RankingRefractionOptimizer(seed=0, letter_bounds_logmar=(-0.3, 0.9))
    assert opt.reference_letter_logmar == 0.9
    mean, cov = opt.predict_utility(0.0, [[0.0, 0.0], [1.0, -2.0]], full_cov=True)
    np.testing.assert_array_equal(mean, 0.0)
    # σ² of the letter kernel (on the logit scale) times the lens kernel at distance (1, 2) D
    lens_k = np.exp(-0.5 * ((1.0 / 2.5) ** 2 + (2.0 / 3.5) ** 2))
    np.testing.assert_allclose(cov, UTILITY_VARIANCE * MODEL_LOGIT_SCALE**2 * np.array([[1.0, lens_k], [lens_k, 1.0]]))
    with pytest.raises(ValueError, match="lenses_d"):
        opt.predict_utility(0.0, [1.0, 2.0])
    with pytest.raises(ValueError, match="letter_logmar"):
        opt.predict_utility(float("inf"), [[1.0, 2.0]])


def test_a_ranked_lens_outside_the_box_is_refused_naming_the_lens_and_the_setting():
    opt = RankingRefractionOptimizer(seed=0)
    trial = opt.ask()
    with pytest.raises(
        ValueError, match=r"^lens 3: cylinder_d 5\.0 is outside cylinder_bounds_d \(-4\.0, 4\.0\): tell"
    ):
        opt.tell(RankingTrial(trial.lenses_d[:2] + ((0.0, 5.0),), trial.letter_logmar), [0, 1])
    with pytest.raises(ValueError, match=r"^letter_logmar 5\.0 is outside letter_bounds_logmar \(-1\.0, 2\.0\): tell"):
        opt.tell(RankingTrial(trial.lenses_d, 5.0), [0, 1])
    assert opt.n_trials == 0
