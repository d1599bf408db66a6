import numpy as np
import pytest
from scipy.stats import qmc

from lensopt.optimize.candidates import first_primes, scrambled_halton


def test_first_primes_are_the_hand_list():
    assert first_primes(10) == [2, 3, 5, 7, 11, 13, 17, 19, 23, 29]
    assert first_primes(0) == []


@pytest.mark.parametrize("n_dims", [1, 2, 3, 9])
@pytest.mark.parametrize("n_points", [1, 2, 17, 128, 1000, 5000])  # 5000: past the kept tables
def test_scrambled_halton_is_scipys_halton_to_the_bit_and_leaves_the_stream_as_scipy_does(n_dims, n_points):
    box = np.column_stack([np.linspace(-4.0, 0.0, n_dims), np.linspace(1.0, 3.0, n_dims)])
    for seed in range(5):
        ours_rng, scipy_rng = np.random.default_rng(seed), np.random.default_rng(seed)
        ours = scrambled_halton(box, n_points, ours_rng)
        unit = qmc.Halton(d=n_dims, scramble=True, seed=scipy_rng).random(n_points)
        np.testing.assert_array_equal(ours, box[:, 0] + unit * (box[:, 1] - box[:, 0]))
        assert ours_rng.random() == scipy_rng.random()  # the parent's stream goes on alike


def test_scrambled_halton_points_fill_the_box_evenly():
    points = scrambled_halton([(0.0, 1.0), (0.0, 1.0)], 1024, np.random.default_rng(7))
    counts, _, _ = np.histogram2d(points[:, 0], points[:, 1], bins=4, range=[[0, 1], [0, 1]])
    assert counts.min() >= 60 and counts.max() <= 68  # 64 a cell; uniform draws would spread ±16
    assert np.all(points >= 0.0) and np.all(points < 1.0)


def test_a_degenerate_dimension_stays_at_its_value():
    points = scrambled_halton([(0.5, 0.5), (-1.0, 1.0)], 16, np.random.default_rng(0))
    assert np.all(points[:, 0] == 0.5)
