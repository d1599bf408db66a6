"""Owen's-T variances and BALD (bits) against Monte Carlo; their gradients against finite differences."""

import numpy as np
import pytest
from scipy.stats import norm

from lensopt.gp.uncertainty import (
    aleatoric_variance,
    bald_bits,
    bald_bits_grad,
    epistemic_variance,
    epistemic_variance_grad,
    probit_mean,
    probit_mean_and_epistemic_variance_with_grads,
    probit_mean_grad,
)

N_SAMPLES = 200_000
MOMENTS = [
    (0.0, 1.0),
    (2.0, 0.5),
    (-3.0, 4.0),
    (0.0, 100.0),
    (-5.0, 25.0),
    (1.0, 1e-4),
    (8.0, 0.01),
    (-0.5, 1e3),
    (3.0, 10.0),
]


def binary_entropy_bits(p):
    p = np.clip(p, 1e-300, 1 - 1e-16)
    return -(p * np.log2(p) + (1 - p) * np.log2(1 - p))


def monte_carlo(mu, var, seed=0):
    f = mu + np.sqrt(var) * np.random.default_rng(seed).standard_normal(N_SAMPLES)
    return norm.cdf(f)


@pytest.mark.parametrize("mu, var", MOMENTS)
def test_probit_mean_and_variances_match_monte_carlo(mu, var):
    p = monte_carlo(mu, var)
    se = lambda values: values.std() / np.sqrt(N_SAMPLES)  # noqa: E731
    assert abs(probit_mean(mu, var) - p.mean()) < 5 * se(p) + 1e-12
    centred = (p - p.mean()) ** 2
    assert abs(epistemic_variance(mu, var) - p.var()) < 5 * se(centred) + 1e-10
    aleatoric = p * (1 - p)
    assert abs(aleatoric_variance(mu, var) - aleatoric.mean()) < 5 * se(aleatoric) + 1e-12
    # The two parts add up to the outcome variance μ_c (1 − μ_c)
    total = probit_mean(mu, var) * (1 - probit_mean(mu, var))
    assert epistemic_variance(mu, var) + aleatoric_variance(mu, var) == pytest.approx(total, abs=1e-12)


@pytest.mark.parametrize("mu, var", MOMENTS)
def test_bald_in_bits_matches_monte_carlo_mutual_information(mu, var):
    p = monte_carlo(mu, var, seed=1)
    mutual_information = binary_entropy_bits(p.mean()) - binary_entropy_bits(p).mean()
    se = binary_entropy_bits(p).std() / np.sqrt(N_SAMPLES)
    # Houlsby et al.'s Gaussian approximation of H₂(Φ(x)) is good to a few 1e-3 bits
    assert abs(bald_bits(mu, var) - mutual_information) < 5e-3 + 5 * se


def test_bald_is_measured_in_bits():
    # Under total uncertainty about f at μ = 0 the outcome carries one full bit (not ln 2 nats)
    assert bald_bits(0.0, 1e10) == pytest.approx(1.0, abs=1e-4)
    assert bald_bits(0.0, 1e-12) == pytest.approx(0.0, abs=1e-5)


def test_uncertainty_functions_broadcast_and_stay_finite_in_the_tails():
    mu = np.array([-40.0, -8.0, 0.0, 8.0, 40.0])
    var = np.array([1e-8, 1e4, 1.0, 1e-8, 1e6])
    for fn in (probit_mean, epistemic_variance, aleatoric_variance, bald_bits):
        values = fn(mu, var)
        assert values.shape == (5,) and np.all(np.isfinite(values)) and np.all(values >= 0)
    for grad in (probit_mean_grad, epistemic_variance_grad, bald_bits_grad):
        assert all(np.all(np.isfinite(g)) for g in grad(mu, var))


@pytest.mark.parametrize(
    "fn, grad",
    [(probit_mean, probit_mean_grad), (epistemic_variance, epistemic_variance_grad), (bald_bits, bald_bits_grad)],
)
def test_uncertainty_gradients_match_finite_differences(fn, grad):
    mu = np.array([-3.0, -0.7, 0.0, 0.4, 1.5, 4.0, 0.2])
    var = np.array([0.3, 2.0, 1.0, 0.05, 7.0, 3.0, 50.0])
    d_mu, d_var = grad(mu, var)
    eps = 1e-6
    np.testing.assert_allclose(d_mu, (fn(mu + eps, var) - fn(mu - eps, var)) / (2 * eps), rtol=1e-5, atol=1e-9)
    np.testing.assert_allclose(d_var, (fn(mu, var + eps) - fn(mu, var - eps)) / (2 * eps), rtol=1e-5, atol=1e-9)


def test_the_joint_probit_mean_and_epistemic_variance_are_the_separate_functions_bit_for_bit():
    rng = np.random.default_rng(4)
    mu = np.concatenate([rng.normal(0.0, 3.0, 200), [0.0, -40.0, 40.0]])
    var = np.concatenate([rng.uniform(0.0, 5.0, 200), [0.0, 1e-12, 30.0]])
    mean, epistemic, mean_grad, epistemic_grad = probit_mean_and_epistemic_variance_with_grads(mu, var)
    expected = (
        probit_mean(mu, var),
        epistemic_variance(mu, var),
        *probit_mean_grad(mu, var),
        *epistemic_variance_grad(mu, var),
    )
    for got, want in zip((mean, epistemic, *mean_grad, *epistemic_grad), expected, strict=True):
        assert got.tobytes() == want.tobytes()
