"""MPES and the context information against brute-force Monte Carlo of the Gumbel noise model."""

import numpy as np
import pytest

from lensopt.gp.kernels import SquaredExponential
from lensopt.ranking.acquisition import MPES, context_information, sample_maximizers
from lensopt.ranking.data import RankingObservation
from lensopt.ranking.likelihood import all_outcomes, log_likelihood
from lensopt.ranking.model import RankingGP
from tests.ranking.conftest import bump, gumbel_answer


def _tiny_model(delta=0.4):
    observations = [
        RankingObservation([[0.2], [0.7]], 0, True),
        RankingObservation([[0.5], [0.9]], "same", True),
        RankingObservation([[0.2], [0.5]], 1, True),
    ]
    return RankingGP(SquaredExponential(0.25, variance=1.0), tie_threshold=delta).fit(observations)


def _plug_in_mutual_information(a, b):
    """Mutual information (nats) of two discrete samples from their empirical joint."""
    joint = np.zeros((a.max() + 1, b.max() + 1))
    np.add.at(joint, (a, b), 1.0)
    joint /= a.size
    outer = joint.sum(axis=1, keepdims=True) * joint.sum(axis=0, keepdims=True)
    nonzero = joint > 0
    return float(np.sum(joint[nonzero] * np.log(joint[nonzero] / outer[nonzero])))


def _gumbel_outcome_codes(f, rng, outcomes, delta=0.0, top_k=1):
    """Index in ``outcomes`` of the simulated answer for each row of ``f``: ``u = f + Gumbel``, "same"
    when the best ``u`` is less than ``delta`` ahead of the second, else the ``top_k`` best, best first."""
    u = f + rng.gumbel(size=f.shape)
    order = np.argsort(-u, axis=1)
    codes = np.empty(len(f), dtype=int)
    for i, o in enumerate(outcomes):
        if isinstance(o, str):
            continue
        codes[np.all(order[:, :top_k] == o, axis=1)] = i
    if delta > 0:
        best = np.take_along_axis(u, order[:, :2], axis=1)
        codes[best[:, 0] - best[:, 1] < delta] = outcomes.index("same")
    return codes


def _brute_force_mpes(model, C, X_star, rng, n, delta=0.0, top_k=1):
    """Draw f jointly at C ∪ X*, take x* = argmax over X*, simulate the answer with Gumbel noise."""
    f = model.sample_joint(np.vstack([C, X_star]), n, rng)
    winner = np.argmax(f[:, len(C) :], axis=1)
    answers = _gumbel_outcome_codes(f[:, : len(C)], rng, all_outcomes(len(C), top_k, delta > 0), delta, top_k)
    return _plug_in_mutual_information(answers, winner)


def test_mpes_of_a_pair_with_ties_matches_brute_force_monte_carlo():
    model = _tiny_model(delta=0.4)
    X_star = np.array([[0.1], [0.35], [0.55], [0.8]])
    C = np.array([[0.3], [0.6]])
    mpes = MPES(model, X_star, all_outcomes(2, 1, ties=True), True, rng=1, n_samples=60_000)(C[None])[0]
    brute = _brute_force_mpes(model, C, X_star, np.random.default_rng(2), 150_000, delta=0.4)
    assert mpes > 0.01
    assert mpes == pytest.approx(brute, abs=0.004)


def test_mpes_of_a_triple_ranked_top_two_matches_brute_force_monte_carlo():
    model = RankingGP(SquaredExponential(0.25, variance=1.0)).fit(
        [
            RankingObservation([[0.2], [0.7], [0.45]], (0, 2), False),
            RankingObservation([[0.5], [0.9], [0.1]], (2, 0), False),
        ]
    )
    X_star = np.array([[0.05], [0.3], [0.6], [0.85]])
    C = np.array([[0.25], [0.5], [0.8]])
    mpes = MPES(model, X_star, all_outcomes(3, 2), False, rng=3, n_samples=60_000)(C[None])[0]
    brute = _brute_force_mpes(model, C, X_star, np.random.default_rng(4), 150_000, top_k=2)
    assert mpes == pytest.approx(brute, abs=0.006)


def test_mpes_is_symmetric_in_the_members_of_a_set():
    model = _tiny_model()
    X_star = np.array([[0.1], [0.35], [0.55], [0.8]])
    mpes = MPES(model, X_star, all_outcomes(2, 1, True), True, rng=5, n_samples=40_000)
    values = mpes(np.array([[[0.3], [0.6]], [[0.6], [0.3]]]))
    assert values[0] == pytest.approx(values[1], abs=0.003)


def test_mpes_is_unchanged_by_a_repeated_maximizer():
    """A repeated row makes Σ(X*, X*) singular; it never wins the argmax, so the information is the same."""
    model = _tiny_model()
    X_star = np.array([[0.1], [0.35], [0.55], [0.8]])
    C = np.array([[[0.3], [0.6]]])
    outcomes = all_outcomes(2, 1, True)
    single = MPES(model, X_star, outcomes, True, rng=7, n_samples=40_000)(C)[0]
    repeated = MPES(model, np.vstack([X_star, X_star[1:2]]), outcomes, True, rng=8, n_samples=40_000)(C)[0]
    assert np.isfinite(repeated) and repeated == pytest.approx(single, abs=0.003)


def test_context_information_matches_nested_monte_carlo():
    """I(o; f) = H[p(o)] − E_f H[p(o | f)]: p(o) by simulating Gumbel answers, p(o | f) by the log-space forms."""
    model = _tiny_model(delta=0.4)
    C = np.array([[0.3], [0.6]])
    outcomes = all_outcomes(2, 1, ties=True)
    value = context_information(model, C[None], outcomes, True, rng=0, n_samples=100_000)[0]
    rng = np.random.default_rng(6)
    f = model.sample_joint(C, 100_000, rng)
    answers = _gumbel_outcome_codes(f, rng, outcomes, 0.4)
    p = np.bincount(answers, minlength=3) / answers.size
    conditional = np.stack([np.exp(log_likelihood(f, o, 0.4, True)) for o in outcomes], axis=1)
    expected_entropy = -np.mean(np.sum(conditional * np.log(conditional), axis=1))
    assert value == pytest.approx(-np.sum(p * np.log(p)) - expected_entropy, abs=0.005)


def test_sampled_maximizers_carry_the_context_and_concentrate_at_the_optimum():
    rng = np.random.default_rng(7)
    observations = []
    for _ in range(40):
        X = rng.uniform(size=(2, 1))
        inputs = np.hstack([np.ones((2, 1)), X])
        observations.append(RankingObservation(inputs, gumbel_answer(bump(X), rng), False))
    kernel = SquaredExponential(0.15, variance=2.0, active_dims=(1,))
    model = RankingGP(kernel).fit(observations)
    X_star = sample_maximizers(model, [(0.0, 1.0)], rng, n_maximizers=30, fixed_columns=[1.0])
    assert X_star.shape[1] == 2 and np.all(X_star[:, 0] == 1.0)
    assert len(np.unique(X_star[:, 1])) == len(X_star)
    assert np.all((X_star[:, 1] >= 0) & (X_star[:, 1] <= 1))
    assert abs(np.median(X_star[:, 1]) - 0.3) < 0.1
