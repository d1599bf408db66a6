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
from scipy.special import log_ndtr, ndtr, owens_t, xlog1py, xlogy

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


def _owen_a(var):
    """``a = 1 / sqrt(1 + 2σ²)``, Owen's T's second argument."""
    return 1.0 / np.sqrt(1.0 + 2.0 * np.asarray(var, dtype=float))


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
    a = _owen_a(var)
    return 2.0 * owens_t(h, a)


def _epistemic_from(h, a, cdf_h):
    """``Φ(h)Φ(−h) − 2 T(h, a)``, clipped ≥ 0, with ``cdf_h = Φ(h)``."""
    return np.maximum(cdf_h * ndtr(-h) - 2.0 * owens_t(h, a), 0.0)


def _epistemic_grad_from(h, dh_dmu, dh_dvar, a, pdf_h, cdf_h):
    """``(∂V/∂μ, ∂V/∂σ²)`` from ``h``, its gradients, ``a``, ``φ(h)`` and ``Φ(h)`` (see
    :func:`epistemic_variance_grad`)."""
    dV_dh = 2.0 * pdf_h * (ndtr(a * h) - cdf_h)
    dT_da = np.exp(-0.5 * h * h * (1.0 + a * a)) / (2.0 * np.pi * (1.0 + a * a))
    da_dvar = -(a**3)
    return dV_dh * dh_dmu, dV_dh * dh_dvar - 2.0 * dT_da * da_dvar


def epistemic_variance(mu, var):
    """``V[Φ(f)] = μ_c − 2 T(h, a) − μ_c²`` (computed as ``Φ(h)Φ(−h) − 2 T(h, a)``, clipped ≥ 0)."""
    h, _, _ = _h_and_grads(mu, var)
    return _epistemic_from(h, _owen_a(var), ndtr(h))


def epistemic_variance_grad(mu, var) -> tuple[np.ndarray, np.ndarray]:
    """``(∂V/∂μ, ∂V/∂σ²)``.

    Uses ``∂T/∂h = −φ(h)(Φ(a h) − ½)`` and ``∂T/∂a = exp(−½ h² (1 + a²)) / (2π (1 + a²))``, so
    ``∂V/∂h = 2 φ(h) (Φ(a h) − Φ(h))`` and ``∂V/∂a = −2 ∂T/∂a``, ``∂a/∂σ² = −(1 + 2σ²)^(−3/2)``.
    """
    h, dh_dmu, dh_dvar = _h_and_grads(mu, var)
    return _epistemic_grad_from(h, dh_dmu, dh_dvar, _owen_a(var), _pdf(h), ndtr(h))


def probit_mean_and_epistemic_variance_with_grads(mu, var):
    """:func:`probit_mean`, :func:`epistemic_variance` and their gradients
    (:func:`probit_mean_grad`, :func:`epistemic_variance_grad`) at once: the same numbers from one
    ``h``, ``a``, ``Φ(h)`` and ``φ(h)`` instead of four (UCB_Φ evaluates all four per point).

    Returns ``(μ_c, V[Φ(f)], (∂μ_c/∂μ, ∂μ_c/∂σ²), (∂V/∂μ, ∂V/∂σ²))``.
    """
    h, dh_dmu, dh_dvar = _h_and_grads(mu, var)
    a, cdf_h, pdf_h = _owen_a(var), ndtr(h), _pdf(h)
    return (
        cdf_h,
        _epistemic_from(h, a, cdf_h),
        (pdf_h * dh_dmu, pdf_h * dh_dvar),
        _epistemic_grad_from(h, dh_dmu, dh_dvar, a, pdf_h, cdf_h),
    )


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


def bald_bits_grad(mu, var) -> tuple[np.ndarray, np.ndarray]:
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


# ---- the floored likelihood: P(c = 1 | f) = γ + (1 − γ − λ) Φ(f)  (METHOD.md §2b) -------------

#: Gauss–Legendre nodes of the floored BALD's expected-entropy integral (see :func:`_window_nodes`).
FLOORED_QUADRATURE_NODES = 48

#: Half-width (in f) of the window outside which ``H₂(γ + κ Φ(f))`` equals its limits
#: ``H₂(γ)`` / ``H₂(1 − λ)`` to double precision (``Φ(−9) ≈ 1e-19``).
FLOORED_WINDOW = 9.0

#: The Gaussian ``N(μ, σ²)`` is integrated over ``μ ± FLOORED_SPAN σ`` (mass outside: 1e-15).
FLOORED_SPAN = 8.0

_GL_NODES, _GL_WEIGHTS = np.polynomial.legendre.leggauss(FLOORED_QUADRATURE_NODES)


def floored_mean(mu, var, guess_rate, lapse_rate):
    """``E[P(c = 1)] = γ + (1 − γ − λ) Φ(μ / sqrt(1 + σ²))``."""
    return guess_rate + (1.0 - guess_rate - lapse_rate) * probit_mean(mu, var)


def floored_epistemic_variance(mu, var, guess_rate, lapse_rate):
    """``V[γ + κ Φ(f)] = κ² V[Φ(f)]`` (Owen's T, :func:`epistemic_variance`), ``κ = 1 − γ − λ``."""
    return (1.0 - guess_rate - lapse_rate) ** 2 * epistemic_variance(mu, var)


def binary_entropy_bits(p, q=None):
    """``H₂(p) = −p log₂ p − (1 − p) log₂ (1 − p)`` in bits (0 at ``p ∈ {0, 1}``); ``q`` is ``1 − p``
    when it is known more accurately than by subtraction (else ``log(1 − p)`` comes from ``log1p``)."""
    p = np.asarray(p, dtype=float)
    if q is None:
        return -(xlogy(p, p) + xlog1py(1.0 - p, -p)) / _LN2
    return -(xlogy(p, p) + xlogy(q, q)) / _LN2


def _entropy_derivative_bits(p):
    """``dH₂/dp = log₂((1 − p)/p)``."""
    with np.errstate(divide="ignore"):
        return (np.log1p(-p) - np.log(p)) / _LN2


def _window_nodes(mu, sd):
    """Nodes ``f`` ``(n, m)`` and weights ``w`` of ``∫ · N(f | μ, σ²) df`` over the window where
    the floored entropy varies, ``[μ − 8σ, μ + 8σ] ∩ [−9, 9]``, and the Gaussian mass below and
    above it. Gauss–Hermite in ``(f − μ)/σ`` alone would miss the entropy's step of width 1 when
    ``σ`` is large (prior variance here is ~60): Gauss–Legendre on the intersection resolves both
    the Gaussian (width ``σ``) and the step (width 1)."""
    lo = np.clip(mu - FLOORED_SPAN * sd, -FLOORED_WINDOW, FLOORED_WINDOW)
    hi = np.clip(mu + FLOORED_SPAN * sd, -FLOORED_WINDOW, FLOORED_WINDOW)
    half = 0.5 * (hi - lo)
    f = (0.5 * (hi + lo))[..., None] + half[..., None] * _GL_NODES
    u = (f - mu[..., None]) / sd[..., None]
    w = half[..., None] * _GL_WEIGHTS * _pdf(u) / sd[..., None]
    below = ndtr((lo - mu) / sd)
    above = ndtr((mu - hi) / sd)
    return f, w, below, above


def _expected_floored_entropy(mu, var, guess_rate, lapse_rate, gradient=False):
    """``E_f[H₂(γ + κ Φ(f))]`` for ``f ~ N(μ, σ²)`` (bits), by quadrature; with ``gradient``, also
    ``∂/∂μ = E[h'(f)]`` and ``∂/∂σ² = ½ E[h''(f)]`` (Stein's lemma / the heat equation)."""
    kappa = 1.0 - guess_rate - lapse_rate
    mu, var = np.broadcast_arrays(np.asarray(mu, dtype=float), np.asarray(var, dtype=float))
    sd = np.sqrt(np.maximum(var, 1e-24))
    f, w, below, above = _window_nodes(mu, sd)
    p = guess_rate + kappa * ndtr(f)
    value = np.sum(w * binary_entropy_bits(p), axis=-1)
    value = (
        value
        + below * binary_entropy_bits(np.float64(guess_rate))
        + above * binary_entropy_bits(np.float64(1.0 - lapse_rate))
    )
    if not gradient:
        return value
    dp = kappa * _pdf(f)
    dH = _entropy_derivative_bits(p)
    h1 = dp * dH
    # h'' = κφ'(f) H' + (κφ)² H'',  φ' = −f φ,  H''(p) = −1 / (ln 2 · p (1 − p))
    h2 = -f * dp * dH - dp * dp / (_LN2 * p * (1.0 - p))
    return value, np.sum(w * h1, axis=-1), 0.5 * np.sum(w * h2, axis=-1)


def floored_bald_bits(mu, var, guess_rate, lapse_rate):
    """BALD of the floored likelihood, bits: ``H₂(E[P]) − E_f[H₂(γ + κ Φ(f))]`` (METHOD.md §2b).

    The second term has no closed form with a floor; it is integrated by quadrature
    (:func:`_window_nodes`, checked against Monte Carlo in the tests). ``γ = λ = 0`` reduces to
    the exact mutual information of the probit (:func:`bald_bits` is Houlsby's approximation of it).
    """
    mean = floored_mean(mu, var, guess_rate, lapse_rate)
    return np.maximum(binary_entropy_bits(mean) - _expected_floored_entropy(mu, var, guess_rate, lapse_rate), 0.0)


def floored_bald_bits_grad(mu, var, guess_rate, lapse_rate):
    """``(∂I/∂μ, ∂I/∂σ²)`` of :func:`floored_bald_bits` (where it is not clipped at 0)."""
    kappa = 1.0 - guess_rate - lapse_rate
    mean = floored_mean(mu, var, guess_rate, lapse_rate)
    m_mu, m_var = probit_mean_grad(mu, var)
    dH = _entropy_derivative_bits(mean)
    _, e_mu, e_var = _expected_floored_entropy(mu, var, guess_rate, lapse_rate, gradient=True)
    return kappa * dH * m_mu - e_mu, kappa * dH * m_var - e_var
