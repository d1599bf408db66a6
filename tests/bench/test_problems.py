"""Benchmark problems: P(c=1) = Φ(s g(x)), the context kernel s s' k(x, x'), refraction patients."""

import numpy as np
import pytest
from scipy.stats import norm

from lensopt.bench.functions import get_function
from lensopt.bench.hyperparameters import (
    _negative_log_likelihood,
    base_kernel,
    fit_base_kernel,
    fit_kernel_on_samples,
)
from lensopt.bench.problems import (
    PAPER_SLOPES,
    FunctionProblem,
    RefractionProblem,
    function_problem,
)
from lensopt.bench.reference_table import load_rescaling_table
from lensopt.bench.rescaling import Rescaling


def test_probability_is_phi_of_s_times_rescaled_value():
    problem = function_problem("hartmann3", hyperparameters="default")
    rng = np.random.default_rng(0)
    X = problem.function.sample_uniform(5, rng)
    s = rng.random(5)
    r = load_rescaling_table()["hartmann3"]
    g_by_hand = -(problem.function(X) - r.mean) / r.std  # Hartmann 3 is not log-transformed
    np.testing.assert_allclose(problem.g(X), g_by_hand)
    np.testing.assert_allclose(problem.probability(s, X), norm.cdf(s * g_by_hand))
    np.testing.assert_allclose(problem.probability(np.zeros(5), X), 0.5)
    with pytest.raises(ValueError, match="context"):
        problem.probability(np.full(5, 1.5), X)


def test_optimal_value_is_g_at_the_known_optimizer_and_bounds_every_sample():
    problem = function_problem("six-hump-camel", hyperparameters="default")
    X = problem.function.sample_uniform(20_000, np.random.default_rng(1))
    assert problem.optimal_value >= problem.g(X).max()


def test_context_kernel_is_s_times_s_prime_times_the_base_kernel():
    problem = function_problem("ackley", hyperparameters="default")
    k = problem.kernel()
    rng = np.random.default_rng(2)
    Z = np.column_stack([rng.random(4), problem.function.sample_uniform(4, rng)])
    ell = 0.2 * 2 * 32.768
    r = np.sqrt(((Z[:, None, 1:] - Z[None, :, 1:]) ** 2).sum(-1)) / ell
    matern32 = (1 + np.sqrt(3) * r) * np.exp(-np.sqrt(3) * r)  # R&W eq. 4.17
    np.testing.assert_allclose(k(Z), np.outer(Z[:, 0], Z[:, 0]) * matern32, atol=1e-12)


def test_fitted_hyperparameters_are_used_when_asked():
    fn, r = get_function("sphere"), Rescaling(True, 2.5, 1.0)
    problem = FunctionProblem(fn, r, lengthscales=(1.5, 2.5), kernel_variance=0.7)
    base = problem.kernel()
    Z = np.array([[1.0, 0.0, 0.0], [1.0, 1.5, 0.0]])
    assert base(Z)[0, 1] == pytest.approx(0.7 * np.exp(-0.5))  # SE-ARD, one lengthscale apart
    with pytest.raises(ValueError, match="lengthscales"):
        FunctionProblem(fn, r, lengthscales=(1.0,))


def test_likelihood_gradient_matches_finite_differences():
    fn = get_function("forrester")
    rng = np.random.default_rng(3)
    X = fn.sample_uniform(25, rng)
    y = load_rescaling_table()["forrester"].transform(fn(X))
    kernel = base_kernel("matern52", [0.3], 1.0, None, [1.0])
    params = np.array([np.log(0.3), np.log(1.2), np.log(0.05)])
    _, grad = _negative_log_likelihood(params, kernel, X, y)
    eps = 1e-6
    numeric = [
        (
            _negative_log_likelihood(params + eps * e, kernel, X, y)[0]
            - _negative_log_likelihood(params - eps * e, kernel, X, y)[0]
        )
        / (2 * eps)
        for e in np.eye(3)
    ]
    np.testing.assert_allclose(grad, numeric, rtol=1e-5, atol=1e-6)


def test_fit_recovers_the_lengthscale_of_a_gp_sample():
    # y drawn from a GP with an SE kernel of lengthscale 0.15 (variance 1, noise 1e-4).
    rng = np.random.default_rng(5)
    X = rng.random((150, 1))
    true = base_kernel("se-ard", [0.15], 1.0, None, [1.0])
    K = true(X) + 1e-4 * np.eye(150)
    y = np.linalg.cholesky(K) @ rng.standard_normal(150)
    fit = fit_kernel_on_samples("se-ard", X, y, [1.0], np.random.default_rng(0), n_restarts=1)
    assert fit["lengthscales"][0] == pytest.approx(0.15, rel=0.3)
    assert fit["log_marginal_likelihood"] >= fit["start_log_marginal_likelihood"]


def test_fit_of_a_benchmark_function_reports_its_family_and_stays_in_bounds():
    fit = fit_base_kernel(get_function("forrester"), load_rescaling_table()["forrester"], n_samples=60, n_restarts=0)
    assert fit["family"] == "se-ard" and fit["n_samples"] == 60
    assert 1e-3 <= fit["lengthscales"][0] <= 10.0
    assert 1e-6 <= fit["noise_variance"] <= 1.0


def test_refraction_patient_depends_on_the_seed_only():
    a = RefractionProblem(slope=5.0).patient(3)
    b = RefractionProblem(slope=5.0).patient(3)
    c = RefractionProblem(slope=5.0).patient(4)
    assert a.true_correction_d == b.true_correction_d != c.true_correction_d
    assert RefractionProblem(slope=2.0).name == "slope-2"
    assert PAPER_SLOPES == (1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0)


def test_bad_problem_values_raise():
    with pytest.raises(ValueError, match="slope"):
        RefractionProblem(slope=0.0)
    with pytest.raises(ValueError, match="hyperparameters"):
        function_problem("sphere", hyperparameters="guess")
