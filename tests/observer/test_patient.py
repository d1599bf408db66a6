"""The simulated patient: acuity, answer probabilities, seeded answers and validation."""

import math

import numpy as np
import pytest
from scipy.special import ndtr

from lensopt.observer import SimulatedPatient, draw_patients


def test_true_correction_gives_best_acuity_and_defocus_costs_log10_two():
    patient = SimulatedPatient(-1.5, -0.75, va_best_logmar=-0.1)
    assert patient.true_correction_d == (-1.5, -0.75)
    assert patient.visual_acuity(-1.5, -0.75) == pytest.approx(-0.1, abs=1e-15)
    assert patient.best_acuity_logmar == -0.1
    # One diopter too much sphere: b = 1 D, 0.301 logMAR worse.
    assert patient.visual_acuity(-0.5, -0.75) == pytest.approx(-0.1 + math.log10(2), abs=1e-15)


def test_visual_acuity_broadcasts_over_a_lens_grid():
    patient = SimulatedPatient(1.0, -2.0)
    sphere = np.linspace(-4, 4, 9)[:, None]
    cylinder = np.linspace(-4, 4, 5)[None, :]
    va = patient.visual_acuity(sphere, cylinder)
    assert va.shape == (9, 5)
    r_s, r_c = sphere - 1.0, cylinder + 2.0
    np.testing.assert_allclose(va, np.log10(1 + 0.5 * (r_s**2 + (r_s + r_c) ** 2)), rtol=1e-13)


def test_lens_axis_none_is_aligned_and_a_crossed_lens_axis_blurs_more():
    patient = SimulatedPatient(0.0, -2.0, axis_deg=30.0)
    assert patient.visual_acuity(0.0, -2.0) == pytest.approx(0.0, abs=1e-15)
    assert patient.visual_acuity(0.0, -2.0, axis_deg=30.0) == pytest.approx(0.0, abs=1e-14)
    # Crossed by 90°: residual J of length 2 D, so VA = log10(1 + 4).
    assert patient.visual_acuity(0.0, -2.0, axis_deg=120.0) == pytest.approx(math.log10(5), abs=1e-12)


def test_p_correct_at_threshold_is_halfway_between_guess_rate_and_one():
    patient = SimulatedPatient(0.5, -1.0, n_alternatives=10, va_best_logmar=0.1)
    va = patient.visual_acuity(1.0, 0.0)
    assert patient.guess_rate == pytest.approx(0.1)
    assert patient.p_correct(va, 1.0, 0.0) == pytest.approx((1 + 0.1) / 2, abs=1e-15)
    assert patient.p_correct(-40.0, 1.0, 0.0) == pytest.approx(0.1, abs=1e-12)
    assert patient.p_correct(40.0, 1.0, 0.0) == pytest.approx(1.0, abs=1e-12)


def test_p_correct_matches_the_psychometric_formula_with_lapses():
    patient = SimulatedPatient(0.0, 0.0, slope=8.0, n_alternatives=26, lapse=0.05)
    s = np.linspace(-0.5, 1.5, 7)
    expected = 1 / 26 + (1 - 1 / 26 - 0.05) * ndtr(8.0 * (s - math.log10(2)))
    np.testing.assert_allclose(patient.p_correct(s, 1.0, 0.0), expected, rtol=1e-13)


@pytest.mark.parametrize("n_trials", [200, 2000, 8000])
@pytest.mark.parametrize("letter_logmar", [0.0, 0.3, 0.5])
def test_proportion_correct_matches_p_correct_within_four_standard_errors(n_trials, letter_logmar):
    patient = SimulatedPatient(-1.0, -1.0, slope=5.0, lapse=0.02, seed=1234 + n_trials)
    p = patient.p_correct(letter_logmar, 0.0, -1.0)
    answers = [patient.respond(letter_logmar, 0.0, -1.0) for _ in range(n_trials)]
    assert all(isinstance(a, bool) for a in answers)
    standard_error = math.sqrt(p * (1 - p) / n_trials)
    assert abs(np.mean(answers) - p) < 4 * standard_error


def test_array_responses_match_p_correct_within_four_standard_errors():
    patient = SimulatedPatient(2.0, 0.0, seed=7)
    s = np.full(50000, 0.2)
    answers = patient.respond(s, 2.5, 0.0)
    p = patient.p_correct(0.2, 2.5, 0.0)
    assert answers.dtype == bool and answers.shape == s.shape
    assert abs(answers.mean() - p) < 4 * math.sqrt(p * (1 - p) / s.size)


def test_same_seed_gives_same_responses_and_different_seeds_differ():
    def answers(seed):
        patient = SimulatedPatient(0.0, 0.0, seed=seed)
        return [patient.respond(s, 0.0, 0.0) for s in np.linspace(-0.3, 0.3, 200)]

    assert answers(5) == answers(5)
    assert answers(5) != answers(6)


def test_draw_patients_is_reproducible_prefix_stable_and_within_ranges():
    first = draw_patients(20, seed=3, sphere_range_d=(-2, 1), cylinder_range_d=(-3, 0), slope=9.0)
    again = draw_patients(20, seed=3, sphere_range_d=(-2, 1), cylinder_range_d=(-3, 0), slope=9.0)
    assert first == again
    assert draw_patients(5, seed=3, sphere_range_d=(-2, 1), cylinder_range_d=(-3, 0), slope=9.0) == first[:5]
    spheres = np.array([p.sphere_d for p in first])
    cylinders = np.array([p.cylinder_d for p in first])
    assert np.all((spheres >= -2) & (spheres <= 1)) and np.all((cylinders >= -3) & (cylinders <= 0))
    assert len({p.seed for p in first}) == 20 and all(p.slope == 9.0 for p in first)
    assert draw_patients(3, seed=4) != draw_patients(3, seed=3)


def test_draw_patients_gives_each_patient_an_independent_answer_stream():
    a, b = draw_patients(2, seed=0, sphere_range_d=(0, 0), cylinder_range_d=(0, 0))
    assert a.true_correction_d == b.true_correction_d == (0.0, 0.0)
    answers_a = [a.respond(0.0, 0.0, 0.0) for _ in range(100)]
    answers_b = [b.respond(0.0, 0.0, 0.0) for _ in range(100)]
    assert answers_a != answers_b


@pytest.mark.parametrize(
    "kwargs, field",
    [
        ({"slope": 0.0}, "slope"),
        ({"slope": -2.0}, "slope"),
        ({"n_alternatives": 1}, "n_alternatives"),
        ({"n_alternatives": 2.5}, "n_alternatives"),
        ({"lapse": -0.01}, "lapse"),
        ({"lapse": 1 - 1 / 26}, "lapse"),
        ({"va_best_logmar": float("nan")}, "va_best_logmar"),
        ({"sphere_d": float("inf")}, "sphere_d"),
        ({"cylinder_d": "1"}, "cylinder_d"),
        ({"axis_deg": float("nan")}, "axis_deg"),
        ({"seed": -1}, "seed"),
    ],
)
def test_bad_values_raise_value_error_naming_the_field(kwargs, field):
    arguments = {"sphere_d": 0.0, "cylinder_d": 0.0, **kwargs}
    with pytest.raises(ValueError, match=field):
        SimulatedPatient(**arguments)


def test_draw_patients_rejects_bad_arguments():
    with pytest.raises(ValueError, match="sphere_range_d"):
        draw_patients(2, seed=0, sphere_range_d=(1, -1))
    with pytest.raises(ValueError, match="n must be"):
        draw_patients(-1, seed=0)
    with pytest.raises(ValueError, match="seed"):
        draw_patients(2, seed=None)


def test_patient_is_frozen():
    patient = SimulatedPatient(0.0, 0.0)
    with pytest.raises(AttributeError):
        patient.sphere_d = 1.0
