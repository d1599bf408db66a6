import numpy as np
import pytest

from lensopt.optimize import MaximizerSettings, maximize_acquisition, maximize_posterior_mean, scrambled_halton


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


@pytest.mark.parametrize("seed", range(12))
def test_the_direct_lbfgsb_loop_stops_where_scipy_minimize_stops_bit_for_bit(seed, monkeypatch):
    """Run on every scipy with the routine's 1.15 interface, inside DIRECT_LBFGSB_SCIPY or not:
    what to check before widening that range for a new scipy."""
    import scipy
    from scipy.optimize import minimize

    import lensopt.optimize.maximize as maximize
    from lensopt.optimize.maximize import _lbfgsb_minimize

    if maximize._lbfgsb is None or tuple(int(p) for p in scipy.__version__.split(".")[:2]) < (1, 15):
        pytest.skip("a scipy before the setulb interface of 1.15: minimize() is used")
    monkeypatch.setattr(maximize, "DIRECT_LBFGSB", True)

    rng = np.random.default_rng(seed)
    n = int(rng.integers(1, 9))
    A, center, w = rng.standard_normal((n, n)), 3.0 * rng.standard_normal(n), rng.uniform(0.5, 3.0, n)

    def objective(x):  # a bumpy quadratic with a few local minima
        r = A @ (x - center)
        return float(np.sum(np.sin(w * x)) + 0.1 * r @ r), w * np.cos(w * x) + 0.2 * A.T @ r

    low = rng.uniform(-3.0, 0.0, n)
    high = low + rng.uniform(0.0, 4.0, n)
    if seed % 3 == 0:
        high[0] = low[0]  # one pinned variable
    if seed == 11:
        high = low.copy()  # every variable pinned: minimize answers without iterating
    bounds = np.column_stack([low, high])
    x0 = rng.uniform(low - 0.5, high + 0.5)  # some starts outside the box, clipped into it
    for max_iterations, ftol in ((30, 2.2204460492503131e-09), (4, 1e-4), (30, 1e-6)):
        expected = minimize(
            objective, x0, jac=True, method="L-BFGS-B", bounds=bounds, options={"maxiter": max_iterations, "ftol": ftol}
        ).x
        assert _lbfgsb_minimize(objective, x0, bounds, max_iterations, ftol).tobytes() == expected.tobytes()


@pytest.mark.parametrize("n_dims", [1, 2, 3, 7, 30])
def test_scrambled_halton_is_scipys_halton_from_the_same_generator(n_dims):
    from scipy.stats import qmc

    box = np.column_stack([-1.0 - np.arange(n_dims), 0.5 * np.arange(n_dims) + 1.0])
    box[n_dims // 2] = (0.25, 0.25)  # a pinned dimension
    for seed in range(8):
        ours, theirs = np.random.default_rng([seed, 19]), np.random.default_rng([seed, 19])
        for n_points in (1, 2, 9, 128, 300):
            unit = qmc.Halton(d=n_dims, scramble=True, seed=theirs).random(n_points)
            expected = box[:, 0] + unit * (box[:, 1] - box[:, 0])
            assert scrambled_halton(box, n_points, ours).tobytes() == expected.tobytes()
        # the caller's generator is left as scipy's sampler leaves it (its draws and its children)
        assert ours.random() == theirs.random()
        assert ours.spawn(1)[0].random() == theirs.spawn(1)[0].random()


def test_scipy_outside_the_checked_range_takes_minimize(monkeypatch):
    """A scipy whose private routine was never checked is driven through ``minimize`` (the same
    point: what the direct loop reproduces)."""
    import lensopt.optimize.maximize as maximize

    calls = []
    real = maximize.minimize
    monkeypatch.setattr(maximize, "DIRECT_LBFGSB", False)
    monkeypatch.setattr(maximize, "minimize", lambda *a, **k: calls.append(1) or real(*a, **k))
    x = maximize._lbfgsb_minimize(
        lambda x: (float(np.sum((x - 0.3) ** 2)), 2 * (x - 0.3)), np.zeros(2), np.array([[-1.0, 1.0]] * 2), 30, 1e-9
    )
    assert calls and np.allclose(x, 0.3, atol=1e-6)
