"""Probit likelihood ``p(c | f) = Φ(t f)`` with ``t = 2c − 1`` for labels ``c ∈ {0, 1}``, and
its floored form for an n-alternative task (METHOD.md §2b):

    P(c = 1 | f) = γ + (1 − γ − λ) Φ(f),    P(c = 0 | f) = λ + (1 − γ − λ) Φ(−f),

with the guess rate ``γ = 1/n_alternatives`` and the lapse rate ``λ``. Both labels share one form,
``p(c | f) = ε_c + κ Φ(t f)`` with ``κ = 1 − γ − λ``, ``ε_1 = γ`` and ``ε_0 = λ``; ``γ = λ = 0`` is the
plain probit of the papers, computed by exactly the plain formulas (so their benchmarks are
unchanged). Without the floor one lucky guess (probability γ) at a tiny letter reads as proof of
excellent acuity; with it, a correct answer far below threshold costs the model almost nothing.

Log-CDFs (``scipy.special.log_ndtr``), the scaled complementary error function
(``scipy.special.erfcx``) and asymptotic series keep latent values far in either tail finite and
accurate. Derivatives follow Rasmussen & Williams (2006) eq. 3.16;
the tilted moments used by EP follow R&W eq. 3.58.
"""

from __future__ import annotations

import math
import numbers
from dataclasses import dataclass

import numpy as np
from scipy.special import erfcx, log_ndtr, ndtr

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
    direct = z + r
    far = x > MILLS_SERIES_THRESHOLD
    if far.any():  # rare: only then the series (EP evaluates this every iteration)
        with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
            series = 1.0 / x - 2.0 / x**3 + 10.0 / x**5
        direct = np.where(far, series, direct)
    return np.maximum(direct, 0.0)


def checked_answer_model(n_alternatives, lapse) -> tuple[int, float]:
    """A letter optimizer's ``n_alternatives`` (an integer >= 2, a numpy one too) and model ``lapse``
    (a rate in [0, 0.5)) as an int and a float; a one-line ValueError naming the setting otherwise."""
    if isinstance(n_alternatives, bool) or not isinstance(n_alternatives, numbers.Integral) or n_alternatives < 2:
        raise ValueError(f"n_alternatives must be an integer >= 2, got {n_alternatives!r}")
    if (
        isinstance(lapse, bool)
        or not isinstance(lapse, (int, float))
        or not (math.isfinite(lapse) and 0 <= lapse < 0.5)
    ):
        raise ValueError(f"lapse must be a rate in [0, 0.5) (e.g. 0.02), got {lapse!r}")
    return int(n_alternatives), float(lapse)  # below 0.5 the floor 1/n + lapse stays below 1 for any n >= 2


def check_floor(guess_rate: float, lapse_rate: float) -> None:
    """``γ ≥ 0``, ``λ ≥ 0`` and ``γ + λ < 1`` (else the answers would carry no information)."""
    for name, value in (("guess_rate", guess_rate), ("lapse_rate", lapse_rate)):
        if not (np.isfinite(value) and value >= 0.0):
            raise ValueError(f"{name} must be a finite number >= 0, got {value!r}")
    if guess_rate + lapse_rate >= 1.0:
        raise ValueError(f"guess_rate + lapse_rate must be < 1 (got {guess_rate} + {lapse_rate}); lower the lapse rate")


def _floors(y: np.ndarray, guess_rate: float, lapse_rate: float) -> np.ndarray:
    """``ε_c``: the probability of label ``c`` that does not depend on ``f`` (γ for 1, λ for 0)."""
    return np.where(np.asarray(y, dtype=float) > 0.5, guess_rate, lapse_rate)


@dataclass(frozen=True)
class Labels:
    """What the floored likelihood needs of the labels, computed once per fit (EP evaluates the tilted
    moments of the same labels every iteration): the signs ``t``, each label's floor ``ε``, the
    other label's ``ε'``, ``log ε``, and ``κ = 1 − γ − λ`` with its log."""

    signs: np.ndarray
    eps: np.ndarray
    other: np.ndarray
    log_eps: np.ndarray
    kappa: float
    log_kappa: float
    plain: bool  # γ = λ = 0: the plain probit, computed by its own formulas

    @classmethod
    def of(cls, y, guess_rate: float = 0.0, lapse_rate: float = 0.0) -> Labels:
        y = np.asarray(y, dtype=float)
        eps, other = _floors(y, guess_rate, lapse_rate), _floors(1.0 - y, guess_rate, lapse_rate)
        kappa = 1.0 - guess_rate - lapse_rate
        with np.errstate(divide="ignore"):
            log_eps = np.log(eps)
        plain = guess_rate == 0.0 and lapse_rate == 0.0
        return cls(signs(y), eps, other, log_eps, kappa, float(np.log(kappa)), plain)


def _floored_terms(z: np.ndarray, labels: Labels):
    """``log p``, ``g = κ φ(z) / p`` and ``z + g`` for ``p = ε + κ Φ(z)``, stable in both tails.

    With ``ρ = κ Φ(z) / p`` (the share of ``p`` that depends on ``f``) and ``r = φ(z)/Φ(z)``:
    ``g = ρ r`` and ``z + g = (z + r) − (1 − ρ) r``, where ``z + r`` comes from the Mills-ratio
    series far in the wrong tail and ``1 − ρ = ε / p``.
    """
    log_phi = log_ndtr(z)
    log_p = _log_floored(z, labels, log_phi)
    rho = np.exp(labels.log_kappa + log_phi - log_p)
    one_minus_rho = np.exp(labels.log_eps - log_p)
    r = inverse_mills(z)
    g = rho * r
    z_plus_g = _z_plus_inverse_mills(z, r) - one_minus_rho * r
    return log_p, g, z_plus_g


def log_likelihood(f: np.ndarray, y: np.ndarray, guess_rate: float = 0.0, lapse_rate: float = 0.0) -> np.ndarray:
    """Per-point ``log p(c | f)``, shape ``(n,)``: ``log Φ(t f)``, or ``log(ε_c + κ Φ(t f))``."""
    z = signs(y) * f
    if guess_rate == 0.0 and lapse_rate == 0.0:
        return log_ndtr(z)
    return _log_floored(z, Labels.of(y, guess_rate, lapse_rate), log_ndtr(z))


def _log_floored(z, labels: Labels, log_phi):
    """``log(ε + κ Φ(z))`` given ``log Φ(z)``: as a sum of logs, or — where ``p`` is near 1 — as
    ``log1p`` of its complement ``1 − p = ε' + κ Φ(−z)`` (``ε'``: the other label's floor)."""
    with np.errstate(divide="ignore", invalid="ignore"):  # each branch is used only where it is exact
        near_one = np.log1p(-np.minimum(labels.other + labels.kappa * ndtr(-z), 1.0))
        return np.where(z > 0.0, near_one, np.logaddexp(labels.log_eps, labels.log_kappa + log_phi))


def log_likelihood_derivatives(
    f: np.ndarray, y: np.ndarray, guess_rate: float = 0.0, lapse_rate: float = 0.0
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """``log p``, and its first, second and third derivatives in ``f`` (R&W eq. 3.16).

    With ``z = t f`` and ``r = φ(z)/Φ(z)``: ``d1 = t r``, ``d2 = −r² − z r`` and
    ``d3 = t r ((z + r)(z + 2r) − 1)`` (using ``dr/dz = −r (z + r)``), which tends to
    ``2t/|z|³`` far in the wrong tail (used below ``z = −MILLS_SERIES_THRESHOLD``, good to 1e-3 there).

    Floored (``γ`` or ``λ`` > 0): the same formulas with ``r`` replaced by ``g = κ φ(z)/p``, since
    ``dg/dz = −g (z + g)``: ``d1 = t g``, ``d2 = −g (z + g)``, ``d3 = t g ((z + g)(z + 2g) − 1)``.
    ``d2`` is positive where ``z + g < 0`` (an answer far on the floor's side): the floored
    likelihood is not log-concave there, and Laplace clips its curvature
    (:func:`lensopt.gp.laplace.laplace_posterior`).
    """
    if guess_rate != 0.0 or lapse_rate != 0.0:
        return _floored_derivatives(f, y, guess_rate, lapse_rate)
    t = signs(y)
    z = t * f
    r = inverse_mills(z)
    z_plus_r = _z_plus_inverse_mills(z, r)
    d1 = t * r
    d2 = -r * z_plus_r
    with np.errstate(divide="ignore", over="ignore"):
        d3 = np.where(z < -MILLS_SERIES_THRESHOLD, 2.0 * t / np.abs(z) ** 3, t * r * (z_plus_r * (z_plus_r + r) - 1.0))
    return log_ndtr(z), d1, d2, d3


def _floored_derivatives(f, y, guess_rate, lapse_rate):
    labels = Labels.of(y, guess_rate, lapse_rate)
    t, eps = labels.signs, labels.eps
    z = t * np.asarray(f, dtype=float)
    log_p, g, z_plus_g = _floored_terms(z, labels)
    with np.errstate(divide="ignore", over="ignore"):
        # a label without a floor (ε = 0) far in the wrong tail: the plain series (see above)
        d3 = np.where(
            (eps == 0.0) & (z < -MILLS_SERIES_THRESHOLD),
            2.0 * t / np.abs(z) ** 3,
            t * g * (z_plus_g * (z_plus_g + g) - 1.0),
        )
    return log_p, t * g, -g * z_plus_g, d3


def tilted_moments(
    y: np.ndarray,
    cavity_mean: np.ndarray,
    cavity_var: np.ndarray,
    guess_rate: float = 0.0,
    lapse_rate: float = 0.0,
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Moments of ``p(c | f) N(f | μ₋, σ₋²)`` (R&W eq. 3.58 for the plain probit).

    Returns ``(log Ẑ, μ̂, σ̂²)``: the log normaliser, mean and variance of the tilted distribution.
    Floored: ``Ẑ = ε_c + κ Φ(z)``, ``z = t μ₋ / sqrt(1 + σ₋²)`` (METHOD.md §2b); its log-derivatives
    in ``μ₋`` are ``t g / s`` and ``−g (z + g) / s²`` (``s² = 1 + σ₋²``, ``g = κ φ(z)/Ẑ``), so
    ``μ̂ = μ₋ + σ₋² t g / s`` and ``σ̂² = σ₋² − σ₋⁴ g (z + g) / s²``: the plain formulas with ``r → g``.
    ``σ̂²`` may exceed ``σ₋²`` (the floored likelihood is not log-concave); EP then clips the
    site precision at 0 (:mod:`lensopt.gp.ep`).
    """
    return labelled_tilted_moments(Labels.of(y, guess_rate, lapse_rate), cavity_mean, cavity_var)


def labelled_tilted_moments(
    labels: Labels, cavity_mean: np.ndarray, cavity_var: np.ndarray
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """:func:`tilted_moments` of labels prepared once (:meth:`Labels.of`), as EP's iterations use it."""
    t = labels.signs
    scale = np.sqrt(1.0 + cavity_var)
    z = t * cavity_mean / scale
    if labels.plain:
        r = inverse_mills(z)
        log_z, z_plus_r = log_ndtr(z), _z_plus_inverse_mills(z, r)
    else:
        log_z, r, z_plus_r = _floored_terms(z, labels)
    mean = cavity_mean + t * cavity_var * r / scale
    var = cavity_var - cavity_var**2 * r * z_plus_r / (1.0 + cavity_var)
    return log_z, mean, var
