import numpy as np
import pytest

from lensopt.optimize import (
    MaximizerSettings,
    TiltedMean,
    maximize_acquisition,
    maximize_posterior_mean,
    scrambled_halton,
)


class Quadratic:
    """-(x - c)ᵀ(x - c) with its gradient."""

    def __init__(self, center):
        self.center = np.asarray(center, float)
        self.calls = 0

    def __call__(self, X):
        return -np.sum((X - self.center) ** 2, axis=1)

    def value_and_gradient(self, X):
        self.calls += 1
        return self(X), -2.0 * (X - self.center)


class ValueOnly:
    def __init__(self, center):
        self.center = np.asarray(center, float)

    def __call__(self, X):
        return -np.sum((X - self.center) ** 2, axis=1)


def test_finds_interior_maximum_to_high_precision():
    x, value = maximize_acquisition(Quadratic([0.3, -1.2]), [(-4, 4), (-4, 4)], np.random.default_rng(0))
    np.testing.assert_allclose(x, [0.3, -1.2], atol=1e-5)
    assert value == pytest.approx(0.0, abs=1e-9)


def test_maximum_outside_the_box_lands_on_the_boundary():
    x, _ = maximize_acquisition(Quadratic([9.0, 0.5]), [(-4, 4), (-4, 4)], np.random.default_rng(1))
    np.testing.assert_allclose(x, [4.0, 0.5], atol=1e-5)


def test_pinned_inputs_stay_pinned_and_the_rest_is_optimized():
    x, _ = maximize_acquisition(
        Quadratic([0.0, 1.0, 2.0]), [(-1, 2), (-4, 4), (-4, 4)], np.random.default_rng(2), fixed_features={0: 1.5}
    )
    assert x[0] == 1.5
    np.testing.assert_allclose(x[1:], [1.0, 2.0], atol=1e-5)


def test_value_only_acquisition_returns_the_best_candidate():
    rng = np.random.default_rng(3)
    x, _ = maximize_acquisition(
        ValueOnly([0.1, 0.2]), [(-1, 1), (-1, 1)], rng, settings=MaximizerSettings(n_candidates=200)
    )
    candidates = scrambled_halton([(-1, 1), (-1, 1)], 200, np.random.default_rng(3))
    brute = candidates[np.argmax(ValueOnly([0.1, 0.2])(candidates))]
    np.testing.assert_allclose(x, brute)


def test_extra_candidates_are_considered():
    x, _ = maximize_acquisition(
        ValueOnly([0.123, 0.456]),
        [(-1, 1), (-1, 1)],
        np.random.default_rng(4),
        settings=MaximizerSettings(n_candidates=4),
        extra_candidates=np.array([[0.123, 0.456]]),
    )
    np.testing.assert_allclose(x, [0.123, 0.456])


def test_same_seed_same_answer():
    a = maximize_acquisition(Quadratic([0.5, 0.5]), [(-4, 4), (-4, 4)], np.random.default_rng(5))
    b = maximize_acquisition(Quadratic([0.5, 0.5]), [(-4, 4), (-4, 4)], np.random.default_rng(5))
    np.testing.assert_array_equal(a[0], b[0])


@pytest.mark.parametrize("bounds, message", [([(1, -1)], "reversed"), ([(0, np.inf)], "finite"), ([1, 2], "pairs")])
def test_bad_bounds_are_named(bounds, message):
    with pytest.raises(ValueError, match=message):
        maximize_acquisition(Quadratic([0.0]), bounds, np.random.default_rng(0))


def test_pinning_a_column_outside_the_box_is_an_error():
    with pytest.raises(ValueError, match="column 5"):
        maximize_acquisition(Quadratic([0.0]), [(-1, 1)], np.random.default_rng(0), fixed_features={5: 0.0})


class Bump:
    """A smooth, non-quadratic maximum (L-BFGS-B needs several iterations): exp(-|x - c|² / 2)."""

    def __init__(self, center):
        self.center = np.asarray(center, float)
        self.calls = 0

    def __call__(self, X):
        return np.exp(-0.5 * np.sum((X - self.center) ** 2, axis=1))

    def value_and_gradient(self, X):
        self.calls += 1
        value = self(X)
        return value, -(X - self.center) * value[:, None]


def test_a_looser_tolerance_stops_sooner_within_that_tolerance():
    tight, loose = Bump([0.7, -1.9]), Bump([0.7, -1.9])
    box = [(-4, 4), (-4, 4)]
    _, v_tight = maximize_acquisition(tight, box, np.random.default_rng(2), settings=MaximizerSettings(n_candidates=16))
    _, v_loose = maximize_acquisition(
        loose, box, np.random.default_rng(2), settings=MaximizerSettings(n_candidates=16, tolerance=1e-3)
    )
    assert loose.calls < tight.calls
    assert v_tight == pytest.approx(1.0, abs=1e-8)  # the true maximum, exp(0)
    assert v_loose == pytest.approx(1.0, abs=3 * 1e-3)


@pytest.mark.parametrize("tolerance", [0.0, 1.0, -1e-6])
def test_a_tolerance_outside_zero_one_is_refused(tolerance):
    with pytest.raises(ValueError, match="tolerance"):
        MaximizerSettings(tolerance=tolerance)


class _ShiftedPeak:
    """``μ(s, x) = −Σ (x − s·c)²`` on full inputs ``[s, x]``: its argmax over ``x`` is ``s·c``."""

    def __init__(self, centre):
        self.centre = np.asarray(centre, dtype=float)

    def value_and_gradient(self, X):
        s, x = X[:, :1], X[:, 1:]
        diff = x - s * self.centre
        gradient = np.hstack([2 * np.sum(diff * self.centre, axis=1, keepdims=True), -2 * diff])
        return -np.sum(diff**2, axis=1), gradient

    def __call__(self, X):
        return self.value_and_gradient(X)[0]


def test_the_posterior_mean_maximizer_pins_the_context_and_returns_the_system_point():
    mean = _ShiftedPeak([0.3, -0.2])
    point = maximize_posterior_mean(mean, [2.0], [(-1, 1), (-1, 1)], np.random.default_rng(0))
    assert point.shape == (2,)
    np.testing.assert_allclose(point, [0.6, -0.4], atol=1e-5)
    # without refinement: the best candidate, among them the extra system points offered
    point = maximize_posterior_mean(
        mean, [2.0], [(-1, 1), (-1, 1)], np.random.default_rng(0), extra_candidates=[[0.6, -0.4]], refine=False
    )
    np.testing.assert_array_equal(point, [0.6, -0.4])


def test_the_posterior_mean_maximizer_is_the_pinned_acquisition_search():
    mean, rng_seed = _ShiftedPeak([0.5, 0.5]), 3
    expected, _ = maximize_acquisition(
        mean,
        [(0, 1), (-1, 1), (-1, 1)],
        np.random.default_rng(rng_seed),
        fixed_features={0: 0.7},
        settings=MaximizerSettings(n_candidates=128, n_starts=2),
    )
    point = maximize_posterior_mean(mean, [0.7], [(-1, 1), (-1, 1)], np.random.default_rng(rng_seed))
    np.testing.assert_array_equal(point, expected[1:])


@pytest.mark.parametrize("seed", [0, 5, 11])
def test_a_refined_search_reports_the_candidate_the_unrefined_search_returns(seed):
    """``best_candidate`` of a refined search is, to the bit, the unrefined search's answer from
    the same random stream: a caller needing both pays for the candidates once."""
    mean = _ShiftedPeak([0.35, -0.6])
    candidate: list = []
    refined = maximize_posterior_mean(
        mean, [1.0], [(-1, 1), (-1, 1)], np.random.default_rng(seed), [[0.2, 0.1]], best_candidate=candidate
    )
    unrefined = maximize_posterior_mean(
        mean, [1.0], [(-1, 1), (-1, 1)], np.random.default_rng(seed), [[0.2, 0.1]], refine=False
    )
    np.testing.assert_array_equal(candidate[0], unrefined)
    np.testing.assert_allclose(refined, [0.35, -0.6], atol=1e-5)
    assert np.sum((refined - [0.35, -0.6]) ** 2) < np.sum((candidate[0] - [0.35, -0.6]) ** 2)


def _bowl(X):
    """μ(s, x) = s − (x₁ − 0.2)² − 2 (x₂ + 0.1)², with its gradient."""
    X = np.asarray(X, dtype=float)
    mean = X[:, 0] - (X[:, 1] - 0.2) ** 2 - 2 * (X[:, 2] + 0.1) ** 2
    grad = np.column_stack([np.ones(len(X)), -2 * (X[:, 1] - 0.2), -4 * (X[:, 2] + 0.1)])
    return mean, grad


def test_a_tilted_mean_is_the_mean_plus_the_tilt_and_its_gradient_matches_finite_differences():
    objective = TiltedMean(lambda X: _bowl(X)[0], _bowl, [0.0, 0.3, 0.0])
    X = np.array([[0.5, 0.1, -0.4], [-1.0, 0.7, 0.2]])
    value, grad = objective.value_and_gradient(X)
    np.testing.assert_allclose(value, _bowl(X)[0] + 0.3 * X[:, 1], rtol=0, atol=1e-15)
    np.testing.assert_array_equal(objective(X), value)
    h = 1e-6
    for j in range(3):
        step = np.zeros(3)
        step[j] = h
        np.testing.assert_allclose(grad[:, j], (objective(X + step) - objective(X - step)) / (2 * h), atol=1e-8)


def test_the_tilt_moves_the_maximum_of_the_mean_by_tilt_over_twice_the_curvature():
    # argmax of −(x₁ − 0.2)² + 0.3 x₁ is 0.2 + 0.3 / 2 = 0.35 (by hand); x₂ stays at −0.1
    objective = TiltedMean(lambda X: _bowl(X)[0], _bowl, [0.0, 0.3, 0.0])
    best = maximize_posterior_mean(objective, [0.0], [(-1.0, 1.0), (-1.0, 1.0)], np.random.default_rng(0))
    np.testing.assert_allclose(best, [0.35, -0.1], atol=1e-5)
