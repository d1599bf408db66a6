"""Phoropter rounding: the nearest multiple of the step inside the bounds, against brute force and hand values."""

import math

import numpy as np
import pytest

from lensopt.refraction.grid_posterior import rounded_lenses
from lensopt.refraction.phoropter import round_to_step, round_to_step_array
from lensopt.refraction.prescription import checked_lens_steps
from lensopt.refraction.steps import is_whole_axis_step

BOUNDS_D = (-4.0, 4.0)


def _nearest_multiple_inside(value, step_d, bounds_d):
    """Brute force: the multiple ``k·step`` inside the bounds nearest to ``value`` in steps, ties to even ``k``."""
    ks = np.arange(math.ceil(bounds_d[0] / step_d), math.floor(bounds_d[1] / step_d) + 1)
    distances = np.abs(value / step_d - ks)
    ties = ks[distances == distances.min()]
    k = ties[0] if len(ties) == 1 else ties[ties % 2 == 0][0]
    return float(k) * step_d + 0.0


@pytest.mark.parametrize("step_d", [0.25, 0.5, 0.3])
def test_rounding_inside_the_bounds_gives_the_nearest_multiple_of_the_step_halves_to_even(step_d):
    rng = np.random.default_rng(0)
    halves = np.arange(-3.875, 4.0, 0.125)  # exact half-steps of 0.25 (and whole steps of 0.5)
    values = np.concatenate([rng.uniform(-3.9, 3.9, 2000), halves, [-0.1, -0.0, 0.0, 0.1, 3.99, -3.99]])
    expected = [_nearest_multiple_inside(v, step_d, BOUNDS_D) for v in values]
    np.testing.assert_allclose(round_to_step_array(values, step_d, BOUNDS_D), expected, rtol=0, atol=1e-12)
    assert [round_to_step(v, step_d, BOUNDS_D) for v in values] == round_to_step_array(
        values, step_d, BOUNDS_D
    ).tolist()
    # a lens is never shown as "-0.00 D"
    assert all(math.copysign(1.0, r) > 0 for r in round_to_step_array(values, step_d, BOUNDS_D) if r == 0)


def test_rounding_by_hand():
    assert round_to_step_array([-0.13, -0.12, 0.9, -1.0, 0.125, 0.375, 0.625], 0.25, BOUNDS_D).tolist() == [
        -0.25,
        0.0,
        1.0,
        -1.0,
        0.0,  # 0.5 step: to the even multiple 0
        0.5,  # 1.5 steps: to 2
        0.5,  # 2.5 steps: to 2
    ]
    assert round_to_step(0.37, None, BOUNDS_D) == 0.37  # no step: only clipped
    assert round_to_step(7.0, None, BOUNDS_D) == 4.0
    assert round_to_step(4.1, 0.25, BOUNDS_D) == 4.0


def test_a_step_not_exact_in_binary_gives_the_multiples_as_written():
    """lens_step_d = 0.3 gave lenses of 3.5999999999999996 and -2.6999999999999997 D in a CSV."""
    rounded = round_to_step_array([3.61, -2.71, 0.31, -0.29], 0.3, (-20.0, 20.0)).tolist()
    assert rounded == [3.6, -2.7, 0.3, -0.3]  # the decimal literals, compared exactly
    assert round_to_step(1.23, 0.1, (-5.0, 5.0)) == 1.2


def test_a_bound_off_the_step_is_kept_and_rounding_stays_inside():
    bounds = (-3.9, 3.9)
    # 3.88 and 3.95 round to 4.00, over the bound: one step back, 3.75; 5.0 is clipped to the bound
    # first, 3.9, which rounds to 4.00: one step back, 3.75 (it was left at the bound, 3.9, a lens
    # no phoropter sets)
    assert round_to_step_array([-3.95, -3.88, 3.88, 3.95, 3.76, 5.0, -9.0], 0.25, bounds).tolist() == [
        -3.75,
        -3.75,
        3.75,
        3.75,
        3.75,
        3.75,
        -3.75,
    ]


@pytest.mark.parametrize("bounds_d", [(-0.1, 0.1), (-0.4, 0.4), (0.05, 0.3), (-3.9, 3.9), (-1.13, -0.6)])
def test_every_value_far_or_near_rounds_to_a_phoropter_lens_inside_bounds_off_the_step(bounds_d):
    """Bounds that are not multiples of the step (±0.1 D) and values more than a step outside them:
    every result is a multiple of 0.25 D inside the bounds, the multiple nearest the value's clipped
    position (checked against the multiples inside the bounds, listed by hand from a fine grid)."""
    lo, hi = bounds_d
    inside = [k * 0.25 for k in range(-40, 41) if lo - 1e-12 <= k * 0.25 <= hi + 1e-12]
    values = np.concatenate([np.linspace(lo - 5.0, hi + 5.0, 401), [lo, hi]])
    rounded = round_to_step_array(values, 0.25, bounds_d)
    for value, result in zip(values, rounded):
        assert result in inside, (value, result)
        nearest = min(abs(k - min(max(value, lo), hi)) for k in inside)
        assert abs(result - min(max(value, lo), hi)) == pytest.approx(nearest, abs=1e-12), (value, result)


def test_rounded_lenses_rounds_each_column_in_its_own_bounds_and_keeps_first_occurrences():
    lenses = [[0.1, -3.9], [0.12, -3.95], [1.3, 2.2], [-0.1, -3.8]]
    rounded = rounded_lenses(lenses, 0.25, (-4.0, 4.0), (-3.5, 3.5))
    assert rounded.tolist() == [[0.0, -3.5], [1.25, 2.25]]


@pytest.mark.parametrize("step", [1, 2, 3, 5, 10, 15, 45, 90, 5.0])
def test_whole_degrees_that_divide_180_are_axis_steps_a_protocol_accepts(step):
    assert is_whole_axis_step(step)
    assert checked_lens_steps(0.25, step) == (0.25, float(step))  # and the optimizers take them


@pytest.mark.parametrize("step", [0, 0.5, 2.5, 7, 8, 100, 180, -5, math.nan, True, "5"])
def test_fractions_non_divisors_and_non_numbers_are_not_axis_steps_a_protocol_accepts(step):
    assert not is_whole_axis_step(step)


@pytest.mark.parametrize(
    "bounds_d",
    [((-4.0, 4.0), (-0.2, 0.0)), ((-0.3, 0.3), (-0.3, 0.0)), ((-1.1, 1.1), (-0.6, 0.0)), ((0.0, 0.2), (-4.0, 0.0))],
)
def test_distinct_lenses_stay_inside_bounds_narrower_than_a_step(bounds_d):
    """A cylinder kept within (-0.2, 0.0) D and two proposals that round onto one lens: the step away
    went to C +0.25 D, outside the bounds, and the duel's own tell refused its ask (a review of 7 Dec
    2026). Every lens stays inside, on the step, and the lenses differ."""
    from lensopt.refraction.phoropter import distinct_phoropter_lenses

    rng = np.random.default_rng(3)
    (slo, shi), (clo, chi) = bounds_d
    for _ in range(300):
        proposals = np.column_stack([rng.uniform(slo, shi, 3), rng.uniform(clo, chi, 3)])
        proposals[1] = proposals[0] + rng.normal(0, 0.05, 2)  # the second rounds onto the first, mostly
        lenses = distinct_phoropter_lenses(np.clip(proposals, [slo, clo], [shi, chi]), 0.25, bounds_d)
        assert len(set(lenses)) == 3
        for sphere_d, cylinder_d in lenses:
            assert slo <= sphere_d <= shi and clo <= cylinder_d <= chi


@pytest.mark.parametrize(
    ("sphere_bounds_d", "cylinder_bounds_d"),
    [((0.1, 0.35), (-0.1, 0.0)), ((0.0, 0.25), (-0.2, 0.0)), ((0.0, 0.5), (-0.25, 0.0)), ((-0.6, 0.1), (0.0, 0.1))],
)
def test_a_box_that_holds_too_few_phoropter_lenses_is_refused_when_made_counted_by_rounding_a_fine_grid(
    sphere_bounds_d, cylinder_bounds_d
):
    """The lenses a box holds, counted independently: every point of a fine grid over it rounded to
    the phoropter. Fewer than a duel's 2 (a ranking's 3): refused when the optimizer is made, in one
    line, not at its first trial."""
    from lensopt.refraction.duels import DuelRefractionOptimizer
    from lensopt.refraction.rankings import RankingRefractionOptimizer

    grid = [
        (round_to_step(s, 0.25, sphere_bounds_d), round_to_step(c, 0.25, cylinder_bounds_d))
        for s in np.linspace(*sphere_bounds_d, 201)
        for c in np.linspace(*cylinder_bounds_d, 201)
    ]
    room = len(set(grid))
    options = {"sphere_bounds_d": sphere_bounds_d, "cylinder_bounds_d": cylinder_bounds_d, "lens_step_d": 0.25}
    for make, n_lenses in (
        (lambda: DuelRefractionOptimizer(**options), 2),
        (lambda: RankingRefractionOptimizer(**options), 3),
    ):
        if room >= n_lenses:
            make()
        else:
            with pytest.raises(
                ValueError, match=rf"hold {room} phoropter lens(es)? on a 0.25 D step, .* {n_lenses} different"
            ):
                make()


@pytest.mark.parametrize("optimizer", ["ucb-ald", "acuity-law"])
@pytest.mark.parametrize("sphere_bounds_d", [(0.05, 0.2), (-0.1, -0.05)])
def test_a_letter_search_refuses_a_box_holding_no_phoropter_lens(optimizer, sphere_bounds_d):
    """A letter trial shows one lens: a box with no multiple of the step in its sphere range asked
    the clinician for S +0.20 D, "on the phoropter (0.25 D steps)"; refused when made, in one line."""
    from lensopt.refraction.acuity_law import AcuityLawOptimizer
    from lensopt.refraction.letters import RefractionOptimizer

    make = AcuityLawOptimizer if optimizer == "acuity-law" else RefractionOptimizer
    lo, hi = sphere_bounds_d
    with pytest.raises(
        ValueError,
        match=rf"^sphere_bounds_d \({lo:g}, {hi:g}\) by cylinder_bounds_d \(-4, 4\) hold no phoropter lens on a 0.25 D step: widen the bounds$",
    ):
        make(sphere_bounds_d=sphere_bounds_d, cylinder_bounds_d=(-4.0, 4.0), lens_step_d=0.25)
    make(sphere_bounds_d=sphere_bounds_d, cylinder_bounds_d=(-4.0, 4.0))  # without a step every lens fits
