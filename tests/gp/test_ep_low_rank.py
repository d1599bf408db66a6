"""Parallel EP on a low-rank prior factor: the marginals and the posterior equal the full computation's."""

import numpy as np
import pytest
from scipy.stats import norm

import lensopt.gp.ep as ep
from lensopt.gp.ep import _low_rank_marginals, low_rank_prior, parallel_ep_posterior

JITTER = 1e-6
GUESS, LAPSE = 1 / 26, 0.02


def smooth_prior(n, lengthscale=3.5, seed=0):
    """A letter-model-like prior: a linear kernel on the letter size plus an SE kernel on two lens
    coordinates in a ±4 D box (numerical rank far below ``n``), with the classifier's jitter."""
    rng = np.random.default_rng(seed)
    size = rng.uniform(-0.3, 1.3, n)
    lens = rng.uniform(-4.0, 4.0, (n, 2))
    d2 = ((lens[:, None, :] - lens[None, :, :]) ** 2).sum(-1)
    K = 15.0 * np.outer(size, size) + 6.6 * np.exp(-0.5 * d2 / lengthscale**2)
    return K + JITTER * np.eye(n), rng


def test_the_factor_reproduces_the_prior_without_its_jitter_to_round_off():
    K, _ = smooth_prior(200)
    phi = low_rank_prior(K, JITTER)
    assert phi is not None and phi.shape[1] <= 100  # rank at most half the sites
    K0 = K - JITTER * np.eye(200)
    assert np.abs(phi @ phi.T - K0).max() < 1e-9 * np.abs(K0).max()


def test_a_prior_of_high_rank_keeps_the_full_computation():
    K, _ = smooth_prior(120, lengthscale=0.05)  # nearly white: rank ~ n
    assert low_rank_prior(K, JITTER) is None


def test_the_low_rank_marginals_equal_the_dense_inverse():
    K, rng = smooth_prior(240)
    tau = rng.uniform(0.0, 3.0, 240)
    tau[::7] = 0.0  # clipped sites: no precision
    nu = rng.normal(0.0, 1.0, 240)
    phi = low_rank_prior(K, JITTER)
    assert phi is not None
    variances, means = _low_rank_marginals(phi, JITTER, tau, nu)
    # Σ = (K⁻¹ + S̃)⁻¹ by dense inverses, independently of the Woodbury forms
    sigma = np.linalg.inv(np.linalg.inv(K) + np.diag(tau))
    assert np.allclose(variances, np.diag(sigma), rtol=0, atol=1e-7)
    assert np.allclose(means, sigma @ nu, rtol=0, atol=1e-6)


def test_the_posterior_on_the_low_rank_path_equals_the_full_computations():
    K, rng = smooth_prior(240, seed=1)
    f = rng.multivariate_normal(np.full(240, -1.0), K)
    p = GUESS + (1 - GUESS - LAPSE) * norm.cdf(f)
    y = (rng.uniform(size=240) < p).astype(float)
    assert low_rank_prior(K, JITTER) is not None  # the path is taken
    floor = dict(guess_rate=GUESS, lapse_rate=LAPSE, prior_mean=-1.0, match_clipped_mean=True, tolerance=1e-10)
    full = parallel_ep_posterior(K, y, **floor)
    low = parallel_ep_posterior(K, y, jitter=JITTER, **floor)
    assert np.allclose(low.site_precision, full.site_precision, rtol=0, atol=1e-8)
    assert np.allclose(low.site_natural_mean, full.site_natural_mean, rtol=0, atol=1e-8)
    assert np.allclose(low.alpha, full.alpha, rtol=0, atol=1e-8)
    assert np.allclose(low.mean, full.mean, rtol=0, atol=1e-8)
    assert low.log_marginal_likelihood == pytest.approx(full.log_marginal_likelihood, abs=1e-8)
    assert np.allclose(low.chol, full.chol, rtol=0, atol=1e-8)


def test_a_long_letter_session_asks_the_same_trials_with_and_without_the_low_rank_path(monkeypatch):
    # 180 trials at slope 2: from about trial 150 the prior's rank is under half the sites
    from lensopt.observer.patient import SimulatedPatient
    from lensopt.refraction.letters import RefractionOptimizer

    calls = []
    low_rank, share = ep._low_rank_marginals, ep.LOW_RANK_SHARE
    monkeypatch.setattr(ep, "_low_rank_marginals", lambda *a: calls.append(1) or low_rank(*a))

    def session(share):
        monkeypatch.setattr(ep, "LOW_RANK_SHARE", share)
        opt = RefractionOptimizer(rule="ucb-ald", seed=7003, n_alternatives=26)
        patient = SimulatedPatient(1.2, -0.8, slope=2.0, seed=7003)
        trials = []
        for _ in range(180):
            t = opt.ask()
            opt.tell(t, patient.respond(t.letter_logmar, t.sphere_d, t.cylinder_d))
            trials.append((t.sphere_d, t.cylinder_d, t.letter_logmar))
        return np.array(trials), opt.best()

    full, full_best = session(0.0)
    assert not calls
    low, low_best = session(share)
    assert calls  # the low-rank path was taken
    assert np.abs(low - full).max() < 1e-8
    assert np.allclose(low_best, full_best, rtol=0, atol=1e-8)
