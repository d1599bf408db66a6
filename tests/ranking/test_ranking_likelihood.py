"""Closed forms of rankings and ties (Nguyen et al. 2021 eqs. 1–4) against the Gumbel noise model."""

import itertools

import numpy as np
import pytest
from scipy.special import expit

from lensopt.ranking.likelihood import (
    TIE,
    all_outcomes,
    log_choice_canonical,
    log_likelihood,
    log_tie,
    log_top_k_canonical,
    outcome_probabilities,
)
from tests.ranking.conftest import finite_difference

LATENTS = np.array([[0.0, 0.0, 0.0], [0.3, -0.2, 0.1], [2.0, -1.0, 0.5], [8.0, -6.0, 1.0], [-30.0, 0.0, 25.0]])


@pytest.mark.parametrize("top_k", [1, 2, 3])
def test_top_k_probabilities_over_every_ordering_sum_to_one(top_k):
    outcomes = all_outcomes(3, top_k)
    assert len(outcomes) == {1: 3, 2: 6, 3: 6}[top_k]
    total = sum(np.exp(log_likelihood(LATENTS, o)) for o in outcomes)
    np.testing.assert_allclose(total, 1.0, atol=1e-12)


@pytest.mark.parametrize("delta", [0.05, 0.5, 2.0])
def test_top1_and_tie_probabilities_sum_to_one(delta):
    outcomes = all_outcomes(3, 1, ties=True)
    assert outcomes[-1] == TIE and len(outcomes) == 4
    total = sum(np.exp(log_likelihood(LATENTS, o, delta, ties_allowed=True)) for o in outcomes)
    np.testing.assert_allclose(total, 1.0, atol=1e-12)


@pytest.mark.parametrize("f, delta", [([0.3, -0.2, 0.1], 0.5), ([1.0, 0.0], 0.8), ([0.0, 0.4, -0.3, 0.2], 0.3)])
def test_tie_and_top1_probabilities_match_monte_carlo_of_gumbel_noise(f, delta):
    """Draw u = f + Gumbel and apply the paper's rule: i is chosen iff u_i − max_{j≠i} u_j ≥ δ."""
    f = np.array(f)
    rng = np.random.default_rng(0)
    n = 400_000
    u = f + rng.gumbel(size=(n, f.size))
    ranked = np.sort(u, axis=1)
    tie = ranked[:, -1] - ranked[:, -2] < delta
    winner = np.argmax(u, axis=1)
    empirical = [np.mean(~tie & (winner == i)) for i in range(f.size)] + [np.mean(tie)]
    closed = outcome_probabilities(f, all_outcomes(f.size, 1, ties=True), delta, ties_allowed=True)
    np.testing.assert_allclose(closed, empirical, atol=4 * np.sqrt(0.25 / n))


def test_top_k_orderings_match_monte_carlo_of_gumbel_noise():
    """Plackett–Luce (eq. 3) is the law of the order of Gumbel-perturbed utilities."""
    f = np.array([0.5, -0.3, 0.2])
    rng = np.random.default_rng(1)
    n = 300_000
    order = np.argsort(-(f + rng.gumbel(size=(n, 3))), axis=1)
    for o in all_outcomes(3, 2):
        empirical = np.mean(np.all(order[:, :2] == o, axis=1))
        assert abs(np.exp(log_likelihood(f, o)) - empirical) < 4 * np.sqrt(0.25 / n)


def test_pair_tie_has_the_logistic_closed_form():
    d = np.linspace(-6, 6, 13)
    delta = 0.7
    f = np.stack([d, np.zeros_like(d)], axis=1)
    np.testing.assert_allclose(np.exp(log_tie(f, delta)[0]), expit(delta - d) - expit(-delta - d), rtol=1e-12)
    np.testing.assert_allclose(np.exp(log_likelihood(f, (0,), delta, True)), expit(d - delta), rtol=1e-12)


def test_improbable_tie_keeps_its_relative_accuracy():
    """A pair far apart: p(tie) = σ(δ − d) − σ(−δ − d) ≈ e^{−d} 2 sinh δ (a naive 1 − Σp gives 0)."""
    d, delta = 50.0, 0.5
    value = log_tie(np.array([d, 0.0]), delta)[0]
    np.testing.assert_allclose(value, -d + np.log(2 * np.sinh(delta)), rtol=1e-10)


def test_choice_without_threshold_is_the_plackett_luce_top1():
    f = LATENTS[2]
    for i in range(3):
        np.testing.assert_allclose(log_likelihood(f, (i,), 0.0, ties_allowed=True), log_likelihood(f, (i,)), atol=1e-14)


@pytest.mark.parametrize("k", [1, 2, 3])
def test_top_k_gradient_matches_finite_differences(k):
    f = np.array([0.4, -1.1, 0.9])
    grad = log_top_k_canonical(f, k)[1]
    np.testing.assert_allclose(grad, finite_difference(lambda x: log_top_k_canonical(x, k)[0], f), atol=1e-8)


@pytest.mark.parametrize("function", [log_choice_canonical, log_tie])
@pytest.mark.parametrize("f", [[0.4, -1.1, 0.9], [3.0, -2.0], [0.1, 0.0, 0.2, -0.3]])
def test_choice_and_tie_gradients_match_finite_differences(function, f):
    f, delta = np.array(f), 0.6
    _, grad_f, grad_delta = function(f, delta)
    np.testing.assert_allclose(grad_f, finite_difference(lambda x: function(x, delta)[0], f), rtol=1e-6, atol=1e-8)
    fd_delta = (function(f, delta + 1e-6)[0] - function(f, delta - 1e-6)[0]) / 2e-6
    np.testing.assert_allclose(grad_delta, fd_delta, rtol=1e-6, atol=1e-8)


@pytest.mark.parametrize("top_k, ties", [(1, False), (2, False), (3, False), (1, True)])
def test_fast_outcome_probabilities_equal_the_log_space_forms(top_k, ties):
    outcomes = all_outcomes(3, top_k, ties)
    fast = outcome_probabilities(LATENTS, outcomes, 0.4, ties)
    exact = np.stack([np.exp(log_likelihood(LATENTS, o, 0.4, ties)) for o in outcomes], axis=-1)
    np.testing.assert_allclose(fast, exact, atol=1e-13)


def test_probabilities_depend_only_on_differences():
    shifted = LATENTS + 17.0
    for o in all_outcomes(3, 1, ties=True):
        expected = log_likelihood(LATENTS, o, 0.5, True)
        np.testing.assert_allclose(log_likelihood(shifted, o, 0.5, True), expected, atol=1e-10)


def test_rankings_with_ties_are_rejected():
    with pytest.raises(ValueError, match="Remark 1"):
        all_outcomes(3, 2, ties=True)
    with pytest.raises(ValueError, match="Remark 1"):
        log_likelihood(LATENTS, (0, 1), 0.5, ties_allowed=True)
    with pytest.raises(ValueError, match="ties_allowed"):
        log_likelihood(LATENTS, TIE, 0.5, ties_allowed=False)


def test_every_permutation_is_an_outcome_of_a_full_ranking():
    assert set(all_outcomes(3, 3)) == set(itertools.permutations(range(3)))
