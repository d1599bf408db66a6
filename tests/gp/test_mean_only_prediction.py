"""GPClassifier.predict_latent_mean(_with_gradient): the mean of predict_latent(_with_gradient), bit for bit."""

import numpy as np
import pytest

from lensopt.gp import GPClassifier
from lensopt.gp.kernels import psychophysics_kernel
from lensopt.gp.kernels.bowl import AcuityBowl
from lensopt.gp.kernels.stationary import SquaredExponential
from lensopt.gp.mean import BowlMean


def _model(prior_mean, n=30):
    rng = np.random.default_rng(4)
    X = np.column_stack([rng.uniform(-0.3, 1.0, n), rng.normal(scale=0.7, size=(n, 3))])
    y = (X[:, 0] > 0.3 * np.sum(X[:, 1:] ** 2, axis=1)).astype(float)
    kernel = AcuityBowl(30.0, 2.0, centre=(0.1, 0.0, -0.1), active_dims=(0, 1, 2, 3)) + SquaredExponential(
        0.8, variance=2.0, active_dims=(1, 2, 3)
    )
    model = GPClassifier(kernel, inference="ep", guess_rate=1 / 26, lapse_rate=0.02, prior_mean=prior_mean)
    return model.fit(X, y)


@pytest.mark.parametrize("prior_mean", [0.0, -1.5, BowlMean(0.5, 2.0, (0.1, 0.0, -0.1), (1, 2, 3))])
def test_the_mean_alone_is_the_full_predictions_mean(prior_mean):
    model = _model(prior_mean)
    X = np.column_stack([np.full(7, 0.4), np.random.default_rng(1).normal(size=(7, 3))])
    assert np.array_equal(model.predict_latent_mean(X), model.predict_latent(X)[0])
    mean, dmean = model.predict_latent_mean_with_gradient(X)
    full_mean, _, full_dmean, _ = model.predict_latent_with_gradient(X)
    assert np.array_equal(mean, full_mean)
    assert np.array_equal(dmean, full_dmean)


def test_before_any_data_the_mean_alone_is_the_prior_mean():
    model = GPClassifier(psychophysics_kernel(2.0, [1.0, 1.0]), prior_mean=-3.0).fit(np.zeros((0, 3)), np.zeros(0))
    X = np.ones((4, 3))
    assert np.array_equal(model.predict_latent_mean(X), np.full(4, -3.0))
    mean, dmean = model.predict_latent_mean_with_gradient(X)
    assert np.array_equal(mean, np.full(4, -3.0)) and np.array_equal(dmean, np.zeros((4, 3)))
