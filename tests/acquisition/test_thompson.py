"""Thompson draws, scaled about the posterior mean (``thompson_scale``)."""

import numpy as np
import pytest

from lensopt.acquisition import ThompsonSample
from lensopt.binary.settings import OptimizerSettings
from tests.acquisition.conftest import finite_difference_gradient

POINTS = np.column_stack([np.linspace(-1.0, 2.0, 7), np.linspace(-2.0, 2.0, 7), np.linspace(1.5, -1.5, 7)])


def test_a_scaled_draw_is_the_posterior_mean_plus_the_scaled_deviation_of_the_same_draw(fitted_model):
    # the same random stream gives the same draw f̃; scaled by c it is μ + c (f̃ − μ)
    plain = ThompsonSample(fitted_model, np.random.default_rng(5))
    mean, _ = fitted_model.predict_latent(POINTS)
    for scale in (0.5, 1.5, 2.0):
        scaled = ThompsonSample(fitted_model, np.random.default_rng(5), scale=scale)
        assert scaled(POINTS) == pytest.approx(mean + scale * (plain(POINTS) - mean), abs=1e-10)


@pytest.mark.parametrize("scale", [0.5, 2.0])
def test_the_gradient_of_a_scaled_draw_matches_finite_differences(fitted_model, scale):
    draw = ThompsonSample(fitted_model, np.random.default_rng(7), scale=scale)
    _, grad = draw.value_and_gradient(POINTS)
    np.testing.assert_allclose(grad, finite_difference_gradient(draw, POINTS), rtol=1e-4, atol=1e-6)


def test_a_scale_of_one_is_the_draw_itself(fitted_model):
    plain = ThompsonSample(fitted_model, np.random.default_rng(5))
    same = ThompsonSample(fitted_model, np.random.default_rng(5), scale=1.0)
    assert np.array_equal(same(POINTS), plain(POINTS))


@pytest.mark.parametrize("bad", [0.0, -1.0, float("nan"), float("inf"), True, "2"])
def test_a_thompson_scale_that_is_not_a_positive_number_is_refused_in_one_line(bad):
    with pytest.raises(ValueError, match="thompson_scale must be a positive number"):
        OptimizerSettings(thompson_scale=bad)


def test_the_default_scale_is_left_out_of_saved_settings_as_before_it_existed():
    assert "thompson_scale" not in OptimizerSettings().to_dict()
    assert OptimizerSettings(thompson_scale=1.5).to_dict()["thompson_scale"] == 1.5
