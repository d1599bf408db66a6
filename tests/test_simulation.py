import math

import pytest

from lensopt.observer import SimulatedPatient
from lensopt.refraction.letters import RefractionOptimizer
from lensopt.simulation import latency_summary, make_patient, score_lens, simulate_session


def test_the_true_correction_scores_zero_error():
    patient = SimulatedPatient(1.0, -0.5)
    score = score_lens(patient, (1.0, -0.5), trials=1)
    assert score.va_error_logmar == pytest.approx(0.0)
    assert score.sphere_error_d == score.cylinder_error_d == 0.0


def test_one_diopter_of_pure_defocus_costs_three_chart_lines():
    # 1 D of sphere with the cylinder right: b² = ½(1² + 1²) = 1, VA error = log10(2)
    score = score_lens(SimulatedPatient(0.0, 0.0), (1.0, 0.0), trials=1)
    assert score.va_error_logmar == pytest.approx(math.log10(2.0))


def test_latency_summary_hand_values():
    summary = latency_summary([1.0, 2.0, 3.0, 4.0, 100.0])
    assert summary == {"median": 3.0, "p95": pytest.approx(80.8), "max": 100.0}


def test_a_session_scores_its_checkpoints_and_is_reproducible():
    def run():
        patient = make_patient(4, true_correction_d=(0.5, -1.0))
        return simulate_session(patient, RefractionOptimizer(rule="random", seed=4), 12, checkpoints=(5, 10))

    a, b = run(), run()
    assert [c.trials for c in a.checkpoints] == [5, 10, 12]
    assert a.to_dict() | {"latency_ms": None} == b.to_dict() | {"latency_ms": None}


def test_non_positive_trial_counts_are_refused():
    with pytest.raises(ValueError, match="positive"):
        simulate_session(make_patient(0), RefractionOptimizer(rule="random"), 0)


def _stopping_optimizer(confidence, min_trials, max_trials, seed=1):
    return RefractionOptimizer(
        rule="ucb-ald",
        seed=seed,
        letter_bounds_logmar=(-0.3, 1.0),
        stop={"confidence": confidence, "min_trials": min_trials, "max_trials": max_trials},
    )


def test_use_stop_ends_the_session_at_the_first_trial_the_rule_says_stop():
    optimizer = _stopping_optimizer(0.02, 12, 30)
    result = simulate_session(make_patient(1, true_correction_d=(-1.25, -0.75)), optimizer, 40, use_stop=True)
    assert 12 <= result.stopped_at <= 30
    assert result.trials == result.stopped_at == optimizer.n_trials == result.final.trials
    assert optimizer.should_stop()
    if result.stopped_at > 12:  # the trial before did not satisfy the rule
        earlier = RefractionOptimizer.from_settings(optimizer.settings_dict(), optimizer.history[:-1])
        assert not earlier.should_stop()
    if result.stopped_at < 30:
        assert result.certainty["confidence"] >= 0.02
    out = result.to_dict()
    assert out["stopped_at"] == result.stopped_at and out["confidence"] == result.certainty["confidence"]
    assert out["stop"] == {"confidence": 0.02, "min_trials": 12, "max_trials": 30}


def test_use_stop_stops_at_max_trials_when_never_confident_enough():
    result = simulate_session(make_patient(2), _stopping_optimizer(0.999, 5, 9, seed=2), 20, use_stop=True)
    assert result.stopped_at == result.trials == 9


def test_without_use_stop_every_trial_runs_and_the_confidence_is_still_reported():
    optimizer = _stopping_optimizer(0.02, 3, 8)  # a rule the session does not use
    result = simulate_session(make_patient(3), optimizer, 10)
    out = result.to_dict()
    assert result.trials == 10 and out["stopped_at"] is None and out["stop"] is None
    assert out["confidence"] == optimizer.confidence() and 0.0 <= out["confidence"] <= 1.0
    certainty = optimizer.certainty()
    assert out["lens_interval_d"] == {
        "sphere": list(certainty.sphere_interval_d),
        "cylinder": list(certainty.cylinder_interval_d),
    }
    for low, high in out["lens_interval_d"].values():
        assert -4.0 <= low <= high <= 4.0


def test_use_stop_without_a_stopping_rule_is_refused():
    with pytest.raises(ValueError, match="stopping rule"):
        simulate_session(make_patient(0), RefractionOptimizer(rule="random"), 5, use_stop=True)


def test_a_prescription_is_scored_before_and_after_rounding_to_the_phoropter():
    from lensopt.refraction.lens import Lens, PowerVector, parse_lens
    from lensopt.simulation import score_prescription

    patient = SimulatedPatient(-1.25, -0.75, axis_deg=170.0, slope=14.0, seed=1)
    truth = patient.correction.power_vector()
    estimate = PowerVector(truth.m_d + 0.06, truth.j0_d - 0.04, truth.j45_d + 0.02)
    score = score_prescription(patient, estimate, 30)
    assert score.power_vector_error_d == pytest.approx((0.06, -0.04, 0.02))
    worn = parse_lens(score.prescription)  # the lens as written: 0.25 D steps, whole degrees
    assert worn == Lens(-1.25, -0.75, worn.axis_deg) and worn.axis_deg == round(worn.axis_deg)
    by_hand = worn.power_vector() - truth
    assert score.lens_error_d == pytest.approx((by_hand.m_d, by_hand.j0_d, by_hand.j45_d))
    assert score.lens_blur_error_d == pytest.approx(math.sqrt(sum(e**2 for e in score.lens_error_d)))
    assert score.lens_blur_error_d != pytest.approx(score.blur_error_d)  # rounding moved it
