"""Probit likelihood ``p(c | f) = Φ(t f)`` with ``t = 2c − 1`` for labels ``c ∈ {0, 1}``.

Log-CDFs (``scipy.special.log_ndtr``), the scaled complementary error function
(``scipy.special.erfcx``) and asymptotic series keep latent values far in either tail finite and
accurate. Derivatives follow Rasmussen & Williams (2006) eq. 3.16;
the tilted moments used by EP follow R&W eq. 3.58.
"""

from __future__ import annotations

import numpy as np
from scipy.special import erfcx, log_ndtr

_SQRT_2_OVER_PI = np.sqrt(2.0 / np.pi)

MILLS_SERIES_THRESHOLD = 100.0
"""Below ``z = −MILLS_SERIES_THRESHOLD``, ``z + φ(z)/Φ(z)`` and the third derivative of
``log Φ`` come from their asymptotic series (the direct formulas cancel catastrophically)."""


def signs(y: np.ndarray) -> np.ndarray:
    """Map labels ``{0, 1}`` to signs ``t ∈ {−1, +1}``."""
    return 2.0 * np.asarray(y, dtype=float) - 1.0


def inverse_mills(z: np.ndarray) -> np.ndarray:
    """``φ(z) / Φ(z) = sqrt(2/π) / erfcx(−z/√2)``, accurate for any ``z`` (→ ``−z`` as z → −∞)."""
    z = np.asarray(z, dtype=float)
    with np.errstate(over="ignore"):
        return _SQRT_2_OVER_PI / erfcx(-z / np.sqrt(2.0))


def _z_plus_inverse_mills(z: np.ndarray, r: np.ndarray) -> np.ndarray:
    """``z + φ(z)/Φ(z)`` (always > 0), which cancels catastrophically for large negative ``z``;
    there the asymptotic series ``1/x − 2/x³ + 10/x⁵`` (``x = −z``, from the Mills-ratio expansion
    ``Φ(−x)/φ(x) ≈ 1/x − 1/x³ + 3/x⁵ − 15/x⁷``) is used."""
    x = -np.asarray(z, dtype=float)
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        series = 1.0 / x - 2.0 / x**3 + 10.0 / x**5
    return np.maximum(np.where(x > MILLS_SERIES_THRESHOLD, series, z + r), 0.0)


def log_likelihood(f: np.ndarray, y: np.ndarray) -> np.ndarray:
    """Per-point ``log Φ(t f)``, shape ``(n,)``."""
    return log_ndtr(signs(y) * f)


def log_likelihood_derivatives(
    f: np.ndarray, y: np.ndarray
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """``log p``, and its first, second and third derivatives in ``f`` (R&W eq. 3.16).

    With ``z = t f`` and ``r = φ(z)/Φ(z)``: ``d1 = t r``, ``d2 = −r² − z r`` and
    ``d3 = t r ((z + r)(z + 2r) − 1)`` (using ``dr/dz = −r (z + r)``), which tends to
    ``2t/|z|³`` far in the wrong tail (used below ``z = −MILLS_SERIES_THRESHOLD``, good to 1e-3 there).
    """
    t = signs(y)
    z = t * f
    r = inverse_mills(z)
    z_plus_r = _z_plus_inverse_mills(z, r)
    d1 = t * r
    d2 = -r * z_plus_r
    with np.errstate(divide="ignore", over="ignore"):
        d3 = np.where(
            z < -MILLS_SERIES_THRESHOLD, 2.0 * t / np.abs(z) ** 3, t * r * (z_plus_r * (z_plus_r + r) - 1.0)
        )
    return log_ndtr(z), d1, d2, d3


def tilted_moments(
    y: np.ndarray, cavity_mean: np.ndarray, cavity_var: np.ndarray
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Moments of ``Φ(t f) N(f | μ₋, σ₋²)`` (R&W eq. 3.58).

    Returns ``(log Ẑ, μ̂, σ̂²)``: the log normaliser, mean and variance of the tilted distribution.
    """
    t = signs(y)
    scale = np.sqrt(1.0 + cavity_var)
    z = t * cavity_mean / scale
    r = inverse_mills(z)
    mean = cavity_mean + t * cavity_var * r / scale
    var = cavity_var - cavity_var**2 * r * _z_plus_inverse_mills(z, r) / (1.0 + cavity_var)
    return log_ndtr(z), mean, var
