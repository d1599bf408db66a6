import math

import pytest

from lensopt.observer import SimulatedPatient
from lensopt.refraction import RefractionOptimizer
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
