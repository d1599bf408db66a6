"""Uncertainty of a probit-GP prediction, as pure functions of the latent ``(μ, σ²)``.

With ``f ~ N(μ, σ²)`` and ``P(c = 1 | f) = Φ(f)``:

- ``μ_c = E[Φ(f)] = Φ(h)``, ``h = μ / sqrt(1 + σ²)`` (R&W eq. 3.82);
- ``E[Φ(f)²] = Φ(h) − 2 T(h, a)``, ``a = 1 / sqrt(1 + 2σ²)``, with Owen's T function, so the
  epistemic variance is ``V[Φ(f)] = μ_c − 2 T(h, a) − μ_c²`` and the aleatoric part
  ``E[Φ(f)(1 − Φ(f))] = 2 T(h, a)`` (Fauvel & Chalk, companion paper eq. 9, supplement B);
- BALD (Houlsby et al. 2011), in bits: ``H₂(μ_c) − C / sqrt(σ² + C²) exp(−μ² / (2 (σ² + C²)))``
  with ``C² = π ln 2 / 2``. Both terms are in bits: ``exp(−x² / (π ln 2))`` approximates the
  binary entropy of ``Φ(x)`` *in bits* (it equals 1 at 0).

Every function accepts broadcastable arrays; the ``*_grad`` functions return the partial
derivatives ``(∂/∂μ, ∂/∂σ²)`` used by acquisition functions for chain-rule gradients.
"""

from __future__ import annotations

import numpy as np
from scipy.special import log_ndtr, ndtr, owens_t

BALD_C2 = np.pi * np.log(2.0) / 2.0
"""``C²`` of Houlsby et al.'s approximation ``H₂(Φ(x)) ≈ exp(−x² / (2 C²))`` (bits)."""

_INV_SQRT_2PI = 1.0 / np.sqrt(2.0 * np.pi)
_LN2 = np.log(2.0)


def _pdf(x):
    return _INV_SQRT_2PI * np.exp(-0.5 * x * x)


def _h_and_grads(mu, var):
    """``h = μ / sqrt(1 + σ²)`` with ``∂h/∂μ`` and ``∂h/∂σ²``."""
    mu = np.asarray(mu, dtype=float)
    var = np.asarray(var, dtype=float)
    inv_scale = 1.0 / np.sqrt(1.0 + var)
    h = mu * inv_scale
    return h, inv_scale, -0.5 * h / (1.0 + var)


def probit_mean(mu, var):
    """``μ_c = Φ(μ / sqrt(1 + σ²))``, the predictive probability of a correct answer."""
    h, _, _ = _h_and_grads(mu, var)
    return ndtr(h)


def probit_mean_grad(mu, var):
    """``(∂μ_c/∂μ, ∂μ_c/∂σ²)``."""
    h, dh_dmu, dh_dvar = _h_and_grads(mu, var)
    p = _pdf(h)
    return p * dh_dmu, p * dh_dvar


def aleatoric_variance(mu, var):
    """``E[Φ(f)(1 − Φ(f))] = 2 T(h, a)``: outcome variance left if ``f`` were known."""
    h, _, _ = _h_and_grads(mu, var)
    a = 1.0 / np.sqrt(1.0 + 2.0 * np.asarray(var, dtype=float))
    return 2.0 * owens_t(h, a)


def epistemic_variance(mu, var):
    """``V[Φ(f)] = μ_c − 2 T(h, a) − μ_c²`` (computed as ``Φ(h)Φ(−h) − 2 T(h, a)``, clipped ≥ 0)."""
    h, _, _ = _h_and_grads(mu, var)
    a = 1.0 / np.sqrt(1.0 + 2.0 * np.asarray(var, dtype=float))
    return np.maximum(ndtr(h) * ndtr(-h) - 2.0 * owens_t(h, a), 0.0)


def epistemic_variance_grad(mu, var):
    """``(∂V/∂μ, ∂V/∂σ²)``.

    Uses ``∂T/∂h = −φ(h)(Φ(a h) − ½)`` and ``∂T/∂a = exp(−½ h² (1 + a²)) / (2π (1 + a²))``, so
    ``∂V/∂h = 2 φ(h) (Φ(a h) − Φ(h))`` and ``∂V/∂a = −2 ∂T/∂a``, ``∂a/∂σ² = −(1 + 2σ²)^(−3/2)``.
    """
    h, dh_dmu, dh_dvar = _h_and_grads(mu, var)
    var = np.asarray(var, dtype=float)
    a = 1.0 / np.sqrt(1.0 + 2.0 * var)
    dV_dh = 2.0 * _pdf(h) * (ndtr(a * h) - ndtr(h))
    dT_da = np.exp(-0.5 * h * h * (1.0 + a * a)) / (2.0 * np.pi * (1.0 + a * a))
    da_dvar = -(a**3)
    return dV_dh * dh_dmu, dV_dh * dh_dvar - 2.0 * dT_da * da_dvar


def _binary_entropy_bits_of_phi(h):
    """``H₂(Φ(h))`` in bits, from log-CDFs so that it stays accurate in both tails."""
    log_p, log_q = log_ndtr(h), log_ndtr(-h)
    return -(np.exp(log_p) * log_p + np.exp(log_q) * log_q) / _LN2


def bald_bits(mu, var):
    """BALD mutual information between the outcome and ``f``, in bits (Houlsby et al. 2011)."""
    mu = np.asarray(mu, dtype=float)
    var = np.asarray(var, dtype=float)
    h, _, _ = _h_and_grads(mu, var)
    s2 = var + BALD_C2
    expected_entropy = np.sqrt(BALD_C2 / s2) * np.exp(-0.5 * mu * mu / s2)
    return np.maximum(_binary_entropy_bits_of_phi(h) - expected_entropy, 0.0)


def bald_bits_grad(mu, var):
    """``(∂I/∂μ, ∂I/∂σ²)`` of :func:`bald_bits` (where it is not clipped at 0).

    ``dH₂(Φ(h))/dh = φ(h) log₂(Φ(−h)/Φ(h))``; the second term ``E = sqrt(C²/s²) exp(−μ²/(2s²))``,
    ``s² = σ² + C²``, has ``∂E/∂μ = −E μ / s²`` and ``∂E/∂σ² = E (μ²/s² − 1) / (2 s²)``.
    """
    mu = np.asarray(mu, dtype=float)
    var = np.asarray(var, dtype=float)
    h, dh_dmu, dh_dvar = _h_and_grads(mu, var)
    dH_dh = _pdf(h) * (log_ndtr(-h) - log_ndtr(h)) / _LN2
    s2 = var + BALD_C2
    E = np.sqrt(BALD_C2 / s2) * np.exp(-0.5 * mu * mu / s2)
    dE_dmu = -E * mu / s2
    dE_dvar = E * (mu * mu / s2 - 1.0) / (2.0 * s2)
    return dH_dh * dh_dmu - dE_dmu, dH_dh * dh_dvar - dE_dvar
