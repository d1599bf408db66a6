"""The simulated patient: acuity, answer probabilities, seeded answers and validation."""

import math

import numpy as np
import pytest
from scipy.special import ndtr

from lensopt.observer import (
    SimulatedPatient,
    acuity_logmar,
    blur_strength_d,
    check_answer_rates,
    draw_patients,
    residual_blur_d,
)
from lensopt.refraction.lens import Lens


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
    with pytest.raises(AttributeError, match="cannot assign to field 'sphere_d'"):
        patient.sphere_d = 1.0


# -- accommodation (issue 16) and the correction as a lens ------------------------------------


def _va(blur_d, va_best=0.0):
    """Independent acuity law: VA_best + log10(1 + b²)."""
    return va_best + math.log10(1.0 + blur_d**2)


@pytest.mark.parametrize("accommodation_d", [0.5, 2.0, 6.0])
def test_accommodation_plateau_without_lens_axis(accommodation_d):
    patient = SimulatedPatient(-1.25, -0.75, va_best_logmar=-0.05, accommodation_d=accommodation_d)
    s, c, a = -1.25, -0.75, accommodation_d
    # A/2 and A D more minus in sphere (hence in M): exactly the correction's acuity.
    assert patient.visual_acuity(s - a / 2, c) == patient.visual_acuity(s, c) == -0.05
    assert patient.visual_acuity(s - a, c) == -0.05
    # A + 0.5 D more minus: 0.5 D of blur left; 0.5 D more plus: not helped, also 0.5 D.
    assert patient.visual_acuity(s - a - 0.5, c) == pytest.approx(_va(0.5, -0.05), abs=1e-13)
    assert patient.visual_acuity(s + 0.5, c) == pytest.approx(_va(0.5, -0.05), abs=1e-13)
    # A cylinder residual r_C = -1 (|J| = 0.5) with r_S = 0.5 - A, so r_M = r_S + r_C/2 = -A: only |J| is left.
    assert patient.visual_acuity(s - a + 0.5, c - 1.0) == pytest.approx(_va(0.5, -0.05), abs=1e-13)
    # ... and a plus residual in M is not offset: r_S = +1, r_C = -1 gives r_M = 0.5, |J| = 0.5.
    assert patient.visual_acuity(s + 1.0, c - 1.0) == pytest.approx(_va(math.sqrt(0.5), -0.05), abs=1e-13)


def test_accommodation_plateau_with_lens_axis():
    patient = SimulatedPatient(0.5, -2.0, axis_deg=30.0, accommodation_d=3.0)
    assert patient.visual_acuity(0.5 - 2.9, -2.0, axis_deg=30.0) == pytest.approx(0.0, abs=1e-14)
    assert patient.visual_acuity(0.5 - 3.5, -2.0, axis_deg=30.0) == pytest.approx(_va(0.5), abs=1e-13)
    assert patient.visual_acuity(0.5 + 0.5, -2.0, axis_deg=30.0) == pytest.approx(_va(0.5), abs=1e-13)
    # Crossed by 90° (|J| = 2 D, M unchanged) and 1 D too minus: accommodation leaves the 2 D of J.
    assert patient.visual_acuity(0.5 - 1.0, -2.0, axis_deg=120.0) == pytest.approx(_va(2.0), abs=1e-12)
    # Without an axis of its own the patient is compared at DEFAULT_PATIENT_AXIS_DEG (0, i.e. 180).
    no_axis = SimulatedPatient(0.0, -1.0, accommodation_d=1.0)
    assert no_axis.visual_acuity(-1.0, -1.0, axis_deg=180.0) == pytest.approx(0.0, abs=1e-15)
    assert no_axis.visual_acuity(-1.0, -1.0, axis_deg=90.0) == pytest.approx(_va(1.0), abs=1e-12)


def test_accommodation_applies_to_letters_p_correct_and_respond():
    kwargs = {"slope": 8.0, "lapse": 0.03, "seed": 77, "accommodation_d": 2.0}
    a, b = SimulatedPatient(-1.0, -0.5, **kwargs), SimulatedPatient(-1.0, -0.5, **kwargs)
    letters = np.linspace(-0.3, 0.6, 10)
    np.testing.assert_array_equal(a.p_correct(letters, -2.5, -0.5), b.p_correct(letters, -1.0, -0.5))
    # Same probabilities and the same generator: the same answers through the plateau lens.
    assert [a.respond(0.1, -2.5, -0.5) for _ in range(200)] == [b.respond(0.1, -1.0, -0.5) for _ in range(200)]
    expected = 1 / 26 + (1 - 1 / 26 - 0.03) * ndtr(8.0 * (letters - _va(0.5)))
    np.testing.assert_allclose(a.p_correct(letters, -3.5, -0.5), expected, rtol=1e-12)


def test_accommodation_applies_to_duels_and_rankings():
    patient = SimulatedPatient(-1.0, -0.5, slope=10.0, accommodation_d=1.5, seed=3)
    plain = SimulatedPatient(-1.0, -0.5, slope=10.0, seed=3)
    correction, too_minus, too_plus = (-1.0, -0.5), (-2.0, -0.5), (0.0, -0.5)
    for axis_deg in (None, 180.0):
        # Within the plateau a too-minus lens ties with the correction; a too-plus one loses.
        assert patient.p_prefer_first(0.1, too_minus, correction, axis_deg) == 0.5
        assert patient.p_prefer_first(0.1, too_plus, correction, axis_deg) < 0.5
        assert plain.p_prefer_first(0.1, too_minus, correction, axis_deg) < 0.5
        u = patient.ranking_utility(0.1, [too_minus, correction, too_plus], axis_deg)
        assert u[0] == pytest.approx(u[1], abs=1e-12) and u[2] < u[1]
        p = patient.p_choice_outcomes(0.1, [too_minus, correction], 0.3, axis_deg)
        assert p[0] == pytest.approx(p[1], abs=1e-12)
    # 2.5 D too minus (1 D beyond the plateau) is as blurred as 1 D too plus.
    assert patient.p_prefer_first(0.2, (-3.5, -0.5), (0.0, -0.5)) == pytest.approx(0.5, abs=1e-12)


def test_zero_accommodation_is_bit_identical_to_the_unaccommodated_formulas():
    rng = np.random.default_rng(2024)
    for _ in range(20):
        s_star, c_star = rng.uniform(-4, 4, size=2)
        patient_axis = float(rng.uniform(0, 180))
        default = SimulatedPatient(s_star, c_star, axis_deg=patient_axis, va_best_logmar=0.1)
        explicit = SimulatedPatient(s_star, c_star, axis_deg=patient_axis, va_best_logmar=0.1, accommodation_d=0.0)
        s, c, axis = rng.uniform(-6, 6, size=50), rng.uniform(-4, 4, size=50), rng.uniform(0, 180, size=50)
        aligned = blur_strength_d(s - s_star, c - c_star)
        crossed = residual_blur_d(s, c, axis, s_star, c_star, patient_axis)
        for patient in (default, explicit):
            assert np.array_equal(patient.blur_d(s, c), aligned)
            assert np.array_equal(patient.blur_d(s, c, axis), crossed)
            assert np.array_equal(patient.visual_acuity(s, c), acuity_logmar(aligned, 0.1))
            assert np.array_equal(patient.visual_acuity(s, c, axis), acuity_logmar(crossed, 0.1))
        letters = rng.uniform(-0.3, 1.0, size=50)
        assert np.array_equal(default.duel_utility(letters, s, c, axis), explicit.duel_utility(letters, s, c, axis))


def test_accommodation_is_validated_and_follows_axis_deg_positionally():
    patient = SimulatedPatient(0.0, -1.0, 5.0, 26, 0.0, 0.0, None, 90.0, 2.5)
    assert (patient.axis_deg, patient.accommodation_d) == (90.0, 2.5)
    assert SimulatedPatient(0.0, 0.0).accommodation_d == 0.0
    for bad in (-0.25, float("nan"), float("inf"), "1", True):
        with pytest.raises(ValueError, match="accommodation_d") as error:
            SimulatedPatient(0.0, 0.0, accommodation_d=bad)
        assert "\n" not in str(error.value)


def test_correction_is_the_truth_in_minus_cylinder_and_round_trips_through_power_vectors():
    rng = np.random.default_rng(5)
    for _ in range(50):
        s, c = rng.uniform(-4, 4, size=2)
        axis = float(rng.integers(1, 181))
        lens = SimulatedPatient(s, c, axis_deg=axis).correction
        assert isinstance(lens, Lens) and lens.cylinder_d <= 0.0 and 0.0 < lens.axis_deg <= 180.0
        # Independent power vector of the truth (Thibos 1997), in radians.
        two_alpha = math.radians(2 * axis)
        expected = (s + c / 2, -c / 2 * math.cos(two_alpha), -c / 2 * math.sin(two_alpha))
        np.testing.assert_allclose(lens.power_vector().to_array(), expected, atol=1e-12)
        assert Lens.from_power_vector(lens.power_vector()).is_equivalent(lens)
    # Plus cylinder is transposed; no axis (and axis 0) is read as 180.
    assert SimulatedPatient(-1.0, 0.5, axis_deg=90.0).correction == Lens(-0.5, -0.5, 180.0)
    assert SimulatedPatient(-1.0, -0.5).correction == Lens(-1.0, -0.5, 180.0)
    assert SimulatedPatient(-1.0, -0.5, axis_deg=0.0).correction == Lens(-1.0, -0.5, 180.0)


def test_answer_rates_allow_any_lapse_below_one_minus_the_guess_rate_and_name_the_bound():
    assert check_answer_rates("", 26, 0.96) == (26, 0.96)  # 0.96 < 1 − 1/26 = 0.9615…
    assert check_answer_rates("", np.int64(10), 0) == (10, 0.0)
    for n, lapse, words in [
        (26, 25 / 26, r"^lapse must be in \[0, 1 - 1/n_alternatives\) = \[0, 0\.9615\), got"),
        (10, 0.9, r"= \[0, 0\.9\), got 0\.9$"),
        (10, float("nan"), "lapse"),
        (10, True, "lapse"),
        (1, 0.0, r"^Owner\.n_alternatives must be an integer >= 2, got 1$"),
        (2.0, 0.0, "n_alternatives"),
    ]:
        owner = "Owner" if n == 1 else ""
        with pytest.raises(ValueError, match=words) as error:
            check_answer_rates(owner, n, lapse)
        assert "\n" not in str(error.value)
