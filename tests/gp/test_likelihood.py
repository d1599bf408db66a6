"""Probit likelihood: derivatives against finite differences, tilted moments against quadrature."""

import numpy as np
import pytest
from scipy.integrate import quad
from scipy.stats import norm

from lensopt.gp.likelihood import (
    MILLS_SERIES_THRESHOLD,
    _z_plus_inverse_mills,
    inverse_mills,
    log_likelihood,
    log_likelihood_derivatives,
    tilted_moments,
)

F = np.array([-30.0, -8.0, -2.5, -0.3, 0.0, 0.7, 3.0, 9.0, 30.0])


@pytest.mark.parametrize("label", [0.0, 1.0])
def test_log_likelihood_matches_log_normal_cdf(label):
    f = np.array([-3.0, -0.5, 0.0, 1.2, 4.0])
    expected = np.log(norm.cdf(f) if label == 1 else norm.cdf(-f))
    np.testing.assert_allclose(log_likelihood(f, np.full(5, label)), expected, rtol=1e-12)


@pytest.mark.parametrize("label", [0.0, 1.0])
def test_log_likelihood_derivatives_match_finite_differences(label):
    f = F[np.abs(F) <= 10]  # finite differences lose the third derivative further out
    y = np.full(f.size, label)
    eps = 1e-5
    _, d1, d2, d3 = log_likelihood_derivatives(f, y)
    lp_plus, d1_plus, d2_plus, _ = log_likelihood_derivatives(f + eps, y)
    lp_minus, d1_minus, d2_minus, _ = log_likelihood_derivatives(f - eps, y)
    np.testing.assert_allclose(d1, (lp_plus - lp_minus) / (2 * eps), rtol=1e-6, atol=1e-8)
    np.testing.assert_allclose(d2, (d1_plus - d1_minus) / (2 * eps), rtol=1e-5, atol=1e-8)
    np.testing.assert_allclose(d3, (d2_plus - d2_minus) / (2 * eps), rtol=1e-4, atol=1e-7)


def test_log_likelihood_is_finite_and_concave_far_in_the_tails():
    y = np.ones(F.size)
    lp, d1, d2, d3 = log_likelihood_derivatives(F, y)
    assert np.all(np.isfinite(lp)) and np.all(np.isfinite(d1 + d2 + d3))
    assert np.all(d2 < 0)
    # Far in the wrong tail log Φ(f) ≈ −f²/2 − log(−f √(2π)), slope ≈ −f
    assert lp[0] == pytest.approx(-450.0 - np.log(30.0 * np.sqrt(2 * np.pi)), rel=1e-3)
    assert d1[0] == pytest.approx(30.0, rel=1e-2)
    # Asymptotics of the inverse Mills ratio: ∇² log Φ ≈ −1 + 1/z², ∇³ log Φ ≈ −2/z³
    assert d2[0] == pytest.approx(-1.0 + 1.0 / 900.0, rel=1e-5)
    assert d3[0] == pytest.approx(2.0 / 27000.0, rel=0.05)


def test_inverse_mills_ratio_matches_direct_ratio_and_asymptote():
    z = np.linspace(-5, 5, 11)
    np.testing.assert_allclose(inverse_mills(z), norm.pdf(z) / norm.cdf(z), rtol=1e-10)
    assert inverse_mills(-50.0) == pytest.approx(50.0 + 1.0 / 50.0, rel=1e-4)


def _z_plus_mills_by_quadrature(z):
    """``z + φ(z)/Φ(z) = E[z − X | X < z]``: with ``u = z − X`` and ``x = −z`` the ratio of
    ``∫ u e^{−xu − u²/2} du`` to ``∫ e^{−xu − u²/2} du`` over ``u ≥ 0``, well conditioned for any ``z``."""
    x = -z
    top = quad(lambda u: u * np.exp(-x * u - 0.5 * u * u), 0, np.inf, epsabs=0, epsrel=1e-12)[0]
    bottom = quad(lambda u: np.exp(-x * u - 0.5 * u * u), 0, np.inf, epsabs=0, epsrel=1e-12)[0]
    return top / bottom


def test_z_plus_inverse_mills_matches_quadrature_on_both_sides_of_the_series_threshold():
    # one array holding latents far in the wrong tail (the series) and ordinary ones (the direct form)
    z = np.array([-5000.0, -400.0, -1.5 * MILLS_SERIES_THRESHOLD, -0.5 * MILLS_SERIES_THRESHOLD, -20.0, -3.0, 0.0, 2.0])
    together = _z_plus_inverse_mills(z, inverse_mills(z))
    expected = np.array([_z_plus_mills_by_quadrature(v) for v in z])
    np.testing.assert_allclose(together, expected, rtol=1e-7)
    alone = [float(_z_plus_inverse_mills(np.array([v]), inverse_mills(np.array([v])))[0]) for v in z]
    assert together.tolist() == alone  # an element's value does not depend on its neighbours


@pytest.mark.parametrize(
    "label, cavity_mean, cavity_var",
    [(1.0, 0.0, 1.0), (0.0, 0.8, 0.3), (1.0, -2.5, 4.0), (0.0, -1.0, 0.05), (1.0, 3.0, 10.0)],
)
def test_tilted_moments_match_quadrature(label, cavity_mean, cavity_var):
    sign = 2 * label - 1
    sd = np.sqrt(cavity_var)

    def moment(k):
        integrand = lambda f: f**k * norm.cdf(sign * f) * norm.pdf(f, cavity_mean, sd)  # noqa: E731
        return quad(integrand, cavity_mean - 12 * sd, cavity_mean + 12 * sd, epsabs=1e-13, limit=200)[0]

    z0, z1, z2 = moment(0), moment(1), moment(2)
    log_z, mean, var = tilted_moments(np.array([label]), np.array([cavity_mean]), np.array([cavity_var]))
    assert log_z[0] == pytest.approx(np.log(z0), rel=1e-8)
    assert mean[0] == pytest.approx(z1 / z0, rel=1e-7, abs=1e-10)
    assert var[0] == pytest.approx(z2 / z0 - (z1 / z0) ** 2, rel=1e-6)


@pytest.mark.parametrize(("guess_rate", "label", "sign"), [(0.0, 1.0, 1.0), (1 / 26, 0.0, -1.0)])
def test_the_third_derivative_far_in_the_wrong_tail_is_the_derivative_of_the_second(guess_rate, label, sign):
    """Below z = −100 the third derivative is a series, 2t/|z|³ (plain, and floored for an answer
    without a floor: a wrong one with no lapse); checked against central differences of the second
    derivative, exact there, and continuous across the switch (a sign flipped in it passed every test)."""
    z = np.array([-1000.0, -150.0, -100.5, -99.5])
    f, y, h = sign * z, np.full(z.size, label), 0.25
    _, _, _, d3 = log_likelihood_derivatives(f, y, guess_rate, 0.0)
    _, _, d2_plus, _ = log_likelihood_derivatives(f + h, y, guess_rate, 0.0)
    _, _, d2_minus, _ = log_likelihood_derivatives(f - h, y, guess_rate, 0.0)
    np.testing.assert_allclose(d3, (d2_plus - d2_minus) / (2 * h), rtol=2e-3)
    assert d3[2] == pytest.approx(d3[3], rel=0.05)  # either side of −100: no jump
