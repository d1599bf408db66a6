"""Optics of the simulated patient against hand values and independent formulas."""

import math

import numpy as np
import pytest
from scipy.special import ndtr

from lensopt.observer.optics import (
    acuity_logmar,
    blur_strength_d,
    normal_cdf,
    power_vector,
    psychometric_p_correct,
    residual_blur_d,
)


def test_one_diopter_of_pure_defocus_costs_log10_two():
    # Sphere-only residual of 1 D: b² = ½ (1 + 1) = 1, so VA = log10(2) ≈ 0.301 logMAR.
    blur = blur_strength_d(1.0, 0.0)
    assert blur == pytest.approx(1.0, abs=1e-15)
    assert acuity_logmar(blur) == pytest.approx(math.log10(2.0), abs=1e-15)
    assert acuity_logmar(blur_strength_d(-1.0, 0.0)) == pytest.approx(0.30103, abs=1e-5)


def test_one_diopter_of_cylinder_alone_costs_log10_one_and_a_half():
    # r_S = 0, r_C = 1: b² = ½ (0 + 1) = ½; with power vectors M = ½, |J| = ½, b² = ¼ + ¼.
    assert blur_strength_d(0.0, 1.0) ** 2 == pytest.approx(0.5, abs=1e-15)
    assert acuity_logmar(blur_strength_d(0.0, -1.0), va_best_logmar=-0.1) == pytest.approx(
        -0.1 + math.log10(1.5), abs=1e-15
    )


def test_raasch_formula_equals_power_vector_formula_with_aligned_axes():
    rng = np.random.default_rng(0)
    lens_s, lens_c, corr_s, corr_c = rng.uniform(-4, 4, size=(4, 500))
    axis_deg = rng.uniform(0, 180, size=500)
    raasch = blur_strength_d(lens_s - corr_s, lens_c - corr_c)
    vector = residual_blur_d(lens_s, lens_c, axis_deg, corr_s, corr_c, axis_deg)
    np.testing.assert_allclose(vector, raasch, rtol=1e-12, atol=1e-12)
    # And the expanded M² + (r_C/2)² form of the method notes.
    r_s, r_c = lens_s - corr_s, lens_c - corr_c
    np.testing.assert_allclose(raasch**2, (r_s + r_c / 2) ** 2 + (r_c / 2) ** 2, rtol=1e-12)


def test_power_vector_of_hand_example():
    # −1.00 / −2.00 × 45: M = −2, J0 = −(−1) cos 90° = 0, J45 = −(−1) sin 90° = 1.
    m, j0, j45 = power_vector(-1.0, -2.0, 45.0)
    assert (m, j0, j45) == pytest.approx((-2.0, 0.0, 1.0), abs=1e-15)


def test_crossed_cylinders_blur_more_than_aligned_ones():
    # Same sphere and cylinder powers at axes 90° apart leave a residual J of magnitude |C|.
    aligned = residual_blur_d(0.0, -2.0, 10.0, 0.0, -2.0, 10.0)
    crossed = residual_blur_d(0.0, -2.0, 100.0, 0.0, -2.0, 10.0)
    assert aligned == pytest.approx(0.0, abs=1e-15)
    assert crossed == pytest.approx(2.0, abs=1e-12)


def test_normal_cdf_matches_scipy_including_tails():
    x = np.concatenate([np.linspace(-30, 8, 2001), [0.0]])
    np.testing.assert_allclose(normal_cdf(x), ndtr(x), rtol=1e-12, atol=0)


def test_psychometric_function_at_threshold_and_limits():
    gamma, lapse = 1 / 26, 0.04
    # At s = VA: P = γ + (1 − γ)/2 = (1 + γ)/2 without lapses.
    assert psychometric_p_correct(0.3, 0.3, 5.0, gamma) == pytest.approx((1 + gamma) / 2, abs=1e-15)
    # Far below and above threshold: the guess rate and 1 − λ.
    assert psychometric_p_correct(-50.0, 0.3, 5.0, gamma, lapse) == pytest.approx(gamma, abs=1e-12)
    assert psychometric_p_correct(50.0, 0.3, 5.0, gamma, lapse) == pytest.approx(1 - lapse, abs=1e-12)


def test_psychometric_function_broadcasts_and_increases_with_letter_size():
    s = np.linspace(-1, 2, 31)[:, None]
    va = np.array([0.0, 0.5])[None, :]
    p = psychometric_p_correct(s, va, 5.0, 0.1)
    assert p.shape == (31, 2)
    assert np.all(np.diff(p, axis=0) >= 0) and np.all(p[-1] > p[0])
    np.testing.assert_allclose(p, 0.1 + 0.9 * ndtr(5.0 * (s - va)), rtol=1e-13)


def dioptric_power_matrix(sphere_d, cylinder_d, axis_deg):
    """Long's dioptric power matrix of S / C × α, an independent route to the blur strength."""
    a = np.deg2rad(axis_deg)
    s, c = np.sin(a), np.cos(a)
    return np.array(
        [[sphere_d + cylinder_d * s**2, -cylinder_d * s * c], [-cylinder_d * s * c, sphere_d + cylinder_d * c**2]]
    )


def test_power_vector_blur_equals_half_the_squared_norm_of_the_power_matrix_difference():
    rng = np.random.default_rng(1)
    for _ in range(200):
        lens = (*rng.uniform(-4, 4, 2), rng.uniform(0, 180))
        correction = (*rng.uniform(-4, 4, 2), rng.uniform(0, 180))
        difference = dioptric_power_matrix(*lens) - dioptric_power_matrix(*correction)
        expected = 0.5 * np.sum(difference**2)
        assert residual_blur_d(*lens, *correction) ** 2 == pytest.approx(expected, rel=1e-12, abs=1e-12)
