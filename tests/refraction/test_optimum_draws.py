"""Draws of where a GP's best lens lies (lensopt.refraction.optimum_draws): against a latent whose
argmax has a known distribution, and the lens bounds."""

from __future__ import annotations

import numpy as np

from lensopt.refraction.optimum_draws import lens_grid, sample_optimum_d, utility_optimum_draws_d


def test_lens_grid_runs_sphere_fastest_and_reports_its_steps():
    lenses, step_s, step_c = lens_grid((-1.0, 1.0), (0.0, 2.0), 3)
    assert lenses.tolist()[:4] == [[-1.0, 0.0], [0.0, 0.0], [1.0, 0.0], [-1.0, 1.0]]
    assert (step_s, step_c) == (1.0, 1.0) and len(lenses) == 9


class _QuadraticPosterior:
    """Latent ``f(x) = −|x|² + 2 x·z`` with ``z ~ N(x0, τ² I)``: a Gaussian process whose argmax is
    exactly ``z``, so the sampled optimum must be ``N(x0, τ² I)``."""

    def __init__(self, x0, tau):
        self.x0, self.tau = np.asarray(x0, float), float(tau)

    def predict_latent(self, X, full_cov=False):
        lens = np.asarray(X, float)[:, 1:]
        mean = -np.sum(lens**2, axis=1) + 2.0 * lens @ self.x0
        cov = 4.0 * self.tau**2 * lens @ lens.T
        return (mean, cov) if full_cov else (mean, np.diag(cov).copy())


def test_sampled_optimum_has_the_known_posterior_spread_of_the_argmax():
    x0, tau = np.array([-1.0, 0.5]), 0.3
    samples, quantization = sample_optimum_d(
        _QuadraticPosterior(x0, tau), (-4.0, 4.0), (-4.0, 4.0), 2.0, np.random.default_rng(3), n_samples=2000
    )
    assert samples.shape == (2000, 2)
    # standard error of the mean tau/sqrt(n) ≈ 0.007 D, of the sd ≈ tau/sqrt(2n) ≈ 0.005 D (+ grid)
    np.testing.assert_allclose(samples.mean(axis=0), x0, atol=0.04)
    np.testing.assert_allclose(np.sqrt(samples.var(axis=0) + quantization), tau, rtol=0.1)
    assert np.all(quantization < (0.2**2) / 12)  # the second grid is finer than 0.2 D


def test_sampled_optimum_stays_inside_the_lens_bounds():
    samples, _ = sample_optimum_d(
        _QuadraticPosterior([3.9, -3.9], 1.0), (-2.0, 2.0), (-1.0, 1.0), 2.0, np.random.default_rng(0), n_samples=200
    )
    assert samples[:, 0].min() >= -2.0 and samples[:, 0].max() <= 2.0
    assert samples[:, 1].min() >= -1.0 and samples[:, 1].max() <= 1.0


class _QuadraticUtility:
    """An optimizer that compares lenses, whose utility at its reference letter size is the latent of
    :class:`_QuadraticPosterior` (a utility at any other size would be an error here)."""

    reference_letter_logmar = 1.5

    def __init__(self, x0, tau):
        self._latent = _QuadraticPosterior(x0, tau)

    def predict_utility(self, letter_logmar, lenses_d, full_cov=False):
        assert letter_logmar == self.reference_letter_logmar
        X = np.column_stack([np.full(len(lenses_d), letter_logmar), lenses_d])
        return self._latent.predict_latent(X, full_cov=full_cov)


def test_a_comparing_optimizers_utility_is_sampled_at_its_reference_letter_size():
    x0, tau = np.array([0.75, -1.0]), 0.25
    samples, quantization = utility_optimum_draws_d(
        _QuadraticUtility(x0, tau), (-4.0, 4.0), (-4.0, 4.0), 2000, np.random.default_rng(5)
    )
    np.testing.assert_allclose(samples.mean(axis=0), x0, atol=0.04)
    np.testing.assert_allclose(np.sqrt(samples.var(axis=0) + quantization), tau, rtol=0.1)


def test_the_duel_and_ranking_optimizers_draw_their_optimum_inside_their_box():
    from lensopt.refraction.duels import DuelRefractionOptimizer, DuelTrial
    from lensopt.refraction.rankings import RankingRefractionOptimizer, RankingTrial

    duel = DuelRefractionOptimizer(seed=1)
    duel.tell(DuelTrial(letter_logmar=0.5, first_lens_d=(0.0, 0.0), second_lens_d=(2.0, -1.0)), "first")
    ranking = RankingRefractionOptimizer(seed=1)
    ranking.tell(RankingTrial(letter_logmar=0.5, lenses_d=((0.0, 0.0), (2.0, -1.0), (-2.0, 1.0))), (0, 2, 1))
    for opt in (duel, ranking):
        samples, quantization = opt.optimum_draws_d(300, np.random.default_rng(0))
        assert samples.shape == (300, 2) and np.all(quantization > 0)
        assert np.all(np.abs(samples) <= 4.0)
