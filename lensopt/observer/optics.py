"""Optics of the simulated patient: residual blur, the acuity law and the psychometric function.

All functions take numpy arrays (or scalars) that broadcast against each other and return
float arrays of the broadcast shape (0-d for scalar input). Powers are in diopters, angles in
degrees, acuity and letter sizes in logMAR.

References (the corrected forms are summarized in the project's method notes, §1):

- Raasch 1995, blur strength of a sphero-cylindrical residual with the axes aligned:
  ``b = sqrt(½ (r_S² + (r_S + r_C)²))``.
- Thibos, Wheeler & Horner 1997, power vectors: ``M = S + C/2``, ``J0 = −(C/2) cos 2α``,
  ``J45 = −(C/2) sin 2α`` (:func:`lensopt.refraction.lens.power_vector_arrays`, re-exported here as
  ``power_vector``); the blur strength of a residual is its length, ``b² = M² + J0² + J45²``.
- Blendowske 2015, minimum angle of resolution grows as ``1 + b²``:
  ``VA = VA_best + log10(1 + b²)`` logMAR.
- Fauvel & Chalk (contextual binary BO, eq. 13), psychometric function of an n-alternative
  letter task: ``P = γ + (1 − γ − λ) Φ(a (s − VA))`` with ``γ = 1/n``.
"""

from __future__ import annotations

import math

import numpy as np

# The power-vector math lives with the lens type (lensopt.refraction.lens, the lowest layer); the patient uses
# it and re-exports it under its old name, ``power_vector(sphere_d, cylinder_d, axis_deg) -> (M, J0, J45)``.
from lensopt.refraction.lens import power_vector_arrays as power_vector

#: 1/sqrt(2), for the normal CDF written with the complementary error function.
_INV_SQRT2 = 1.0 / math.sqrt(2.0)

#: Elementwise complementary error function (numpy has none; the observer stays scipy-free).
_erfc = np.frompyfunc(math.erfc, 1, 1)


def normal_cdf(x):
    """Standard normal CDF ``Φ(x) = ½ erfc(−x/√2)``, exact to double precision in both tails."""
    x = np.asarray(x, dtype=float)
    return 0.5 * np.asarray(_erfc(-x * _INV_SQRT2), dtype=float)


def blur_strength_d(residual_sphere_d, residual_cylinder_d):
    """Raasch blur strength ``b`` (D) of a residual whose cylinder axis matches the correction's."""
    r_s = np.asarray(residual_sphere_d, dtype=float)
    r_c = np.asarray(residual_cylinder_d, dtype=float)
    return np.sqrt(0.5 * (r_s**2 + (r_s + r_c) ** 2))


def residual_blur_d(
    lens_sphere_d, lens_cylinder_d, lens_axis_deg, correction_sphere_d, correction_cylinder_d, correction_axis_deg
):
    """Blur strength ``b`` (D) of ``lens − correction``, subtracted as Thibos power vectors.

    With equal axes this equals :func:`blur_strength_d` of the sphere and cylinder differences.
    """
    lens = power_vector(lens_sphere_d, lens_cylinder_d, lens_axis_deg)
    correction = power_vector(correction_sphere_d, correction_cylinder_d, correction_axis_deg)
    return np.sqrt(sum((a - b) ** 2 for a, b in zip(lens, correction)))


def accommodated_residual_m_d(residual_m_d, accommodation_d):
    """The spherical-equivalent residual ``r_M = M_lens − M_correction`` (D) left after the eye
    accommodates: a lens too minus (``r_M < 0``) is offset by up to ``A = accommodation_d`` D of the
    eye's own plus power, ``r_M + clip(−r_M, 0, A)``; a lens too plus cannot be (accommodation only
    adds plus). So every lens up to ``A`` D more minus than the correction looks as sharp as it.
    """
    r_m = np.asarray(residual_m_d, dtype=float)
    return r_m + np.clip(-r_m, 0.0, np.asarray(accommodation_d, dtype=float))


def accommodated_blur_d(residual_m_d, residual_j0_d, residual_j45_d, accommodation_d=0.0):
    """Blur strength ``b`` (D) of a power-vector residual ``(r_M, r_J0, r_J45)`` seen by an eye with
    ``accommodation_d`` D of accommodation: ``√(r_M'² + r_J0² + r_J45²)`` with ``r_M'`` from
    :func:`accommodated_residual_m_d` (astigmatism is not changed by accommodating)."""
    r_m = accommodated_residual_m_d(residual_m_d, accommodation_d)
    return np.sqrt(r_m**2 + np.asarray(residual_j0_d, float) ** 2 + np.asarray(residual_j45_d, float) ** 2)


def acuity_logmar(blur_d, va_best_logmar=0.0):
    """Visual acuity (logMAR) through residual blur ``b``: ``VA_best + log10(1 + b²)``."""
    blur_d = np.asarray(blur_d, dtype=float)
    return np.asarray(va_best_logmar, dtype=float) + np.log10(1.0 + blur_d**2)


def psychometric_p_correct(letter_logmar, va_logmar, slope, guess_rate, lapse=0.0):
    """Probability of naming a letter of size ``s`` (logMAR) correctly with acuity ``VA``.

    ``P = γ + (1 − γ − λ) Φ(a (s − VA))``: ``γ`` at tiny letters, ``1 − λ`` at huge ones and
    ``(1 + γ − λ)/2`` at threshold ``s = VA``.
    """
    s = np.asarray(letter_logmar, dtype=float)
    va = np.asarray(va_logmar, dtype=float)
    return guess_rate + (1.0 - guess_rate - lapse) * normal_cdf(slope * (s - va))
