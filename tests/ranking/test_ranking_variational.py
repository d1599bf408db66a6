"""The ELBO's pieces: Gauss–Hermite rules, the Cholesky backward pass and the analytic gradient."""

import numpy as np
import pytest

from lensopt.gp.kernels import SquaredExponential
from lensopt.ranking.data import RankingObservation
from lensopt.ranking.variational import ElboProblem, build_groups, cholesky_backward, gauss_hermite
from tests.ranking.conftest import finite_difference


@pytest.mark.parametrize("r", [1, 2, 3])
def test_gauss_hermite_rule_integrates_standard_normal_moments(r):
    nodes, weights = gauss_hermite(r)
    np.testing.assert_allclose(weights.sum(), 1.0, rtol=1e-12)
    np.testing.assert_allclose(weights @ nodes, 0.0, atol=1e-12)
    np.testing.assert_allclose((nodes * weights[:, None]).T @ nodes, np.eye(r), atol=1e-12)
    np.testing.assert_allclose(weights @ nodes[:, 0] ** 4, 3.0, rtol=1e-10)


@pytest.mark.parametrize("batched", [False, True])
def test_cholesky_backward_matches_finite_differences(batched):
    rng = np.random.default_rng(0)
    A = rng.normal(size=(3, 3))
    S, W = A @ A.T + np.eye(3), rng.normal(size=(3, 3))

    def loss(flat):
        sym = flat.reshape(3, 3)
        return np.sum(W * np.linalg.cholesky(0.5 * (sym + sym.T)))

    C = np.linalg.cholesky(S)
    grad = cholesky_backward(C[None], np.tril(W)[None])[0] if batched else cholesky_backward(C, np.tril(W))
    np.testing.assert_allclose(grad, finite_difference(loss, S.ravel()).reshape(3, 3), atol=1e-7)


def _mixed_problem(learn_kernel, learn_delta, prior_mean=False):
    """Ten observations of every kind (pairs and triples, rankings, choices, ties) on six inputs
    (with ``prior_mean``, a random prior mean of ``f`` at them)."""
    rng = np.random.default_rng(3)
    points = rng.uniform(size=(6, 2))
    observations = []
    for t in range(10):
        m = 2 + t % 2
        idx = rng.choice(6, m, replace=False)
        kind = t % 4
        if kind == 0:
            observations.append(RankingObservation(points[idx], tuple(rng.permutation(m)[: m - 1]), False))
        elif kind == 1:
            observations.append(RankingObservation(points[idx], 0, False))
        elif kind == 2:
            observations.append(RankingObservation(points[idx], 1, True))
        else:
            observations.append(RankingObservation(points[idx], "same", True))
    rows = {r.tobytes(): i for i, r in enumerate(points)}
    groups = build_groups(observations, lambda x: rows[np.asarray(x).tobytes()])
    assert {g.kind for g in groups} == {"rank", "choice", "tie"}
    kernel = SquaredExponential([0.3, 0.5], variance=2.0)
    prior_mean_U = rng.normal(size=6) if prior_mean else None
    problem = ElboProblem(points, groups, kernel, 1e-6, 0.4, learn_kernel, learn_delta, prior_mean_U=prior_mean_U)
    mean_w = 0.3 * rng.normal(size=6)
    chol_w = np.tril(0.3 * rng.normal(size=(6, 6)), -1) + np.diag(rng.uniform(0.5, 1.5, 6))
    return problem, problem.pack(mean_w, chol_w)


@pytest.mark.parametrize(
    "learn_kernel, learn_delta, prior_mean", [(False, False, False), (True, True, False), (True, True, True)]
)
def test_elbo_gradient_matches_finite_differences(learn_kernel, learn_delta, prior_mean):
    problem, x = _mixed_problem(learn_kernel, learn_delta, prior_mean)
    assert x.size == 6 + 21 + (3 if learn_kernel else 0) + (1 if learn_delta else 0)
    value, grad = problem(x)
    assert np.isfinite(value)
    np.testing.assert_allclose(grad, finite_difference(lambda v: problem(v)[0], x), rtol=1e-5, atol=1e-6)


def test_a_prior_mean_is_the_flat_bound_with_the_mean_moved_into_the_likelihood():
    """``f_U = m(U) + L_K v``: the expected log-likelihood of the bound with a prior mean at ``μ̃`` is
    the flat bound's at ``μ̃ + L_K⁻¹ m(U)`` (the KL term, of ``v``, stays at ``μ̃``)."""
    problem, x = _mixed_problem(False, False, prior_mean=True)
    flat = ElboProblem(problem.U, problem.groups, problem.kernel, 1e-6, 0.4, False, False)
    mean_w, chol_w, _, _ = problem.unpack(x)
    L_K = np.linalg.cholesky(problem.kernel(problem.U) + 1e-6 * np.eye(6))
    m_U = problem.prior_mean_U
    moved = mean_w + np.linalg.solve(L_K, m_U)
    kl_shift = 0.5 * (moved @ moved - mean_w @ mean_w)
    assert problem.elbo(x) == pytest.approx(flat.elbo(flat.pack(moved, chol_w)) + kl_shift, rel=1e-10, abs=1e-10)


def test_kl_term_vanishes_at_the_prior():
    """With no observation terms the bound is −KL, zero at μ̃ = 0, L̃ = I and negative elsewhere."""
    points = np.random.default_rng(0).uniform(size=(4, 1))
    problem = ElboProblem(points, [], SquaredExponential(0.3), 1e-6, 0.5, False, False)
    assert problem.elbo(problem.pack(np.zeros(4), np.eye(4))) == pytest.approx(0.0, abs=1e-12)
    assert problem.elbo(problem.pack(np.full(4, 0.1), np.eye(4))) == pytest.approx(-0.5 * 4 * 0.01)
