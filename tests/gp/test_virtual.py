"""Virtual sign observations (Siivola et al. 2018): the sites' geometry, the classifier conditioned on
them against a brute-force MAP over the joint latent, derivatives against finite differences, and
what they are for: the posterior mean's maximum stays inside the box."""

import numpy as np
import pytest
from scipy.optimize import minimize
from scipy.stats import norm

from lensopt.gp import GPClassifier, SquaredExponential, psychophysics_kernel
from lensopt.gp.virtual import SignObservations, box_edge_signs
from tests.acquisition.conftest import finite_difference_gradient
from tests.ranking.conftest import finite_difference

GUESS, LAPSE = 1.0 / 26.0, 0.02
BOX = ((-4.0, 4.0), (-3.0, 2.0))


def _data(n=30, seed=0):
    rng = np.random.default_rng(seed)
    X = np.column_stack([rng.uniform(-1, 2, n), rng.uniform(-4, 4, n), rng.uniform(-3, 2, n)])
    return X, (rng.uniform(size=n) < 0.5).astype(float)


def _classifier(virtual, inference="ep", **options):
    kernel = psychophysics_kernel(2.0, 2.5, 1.5)
    return GPClassifier(
        kernel, inference=inference, guess_rate=GUESS, lapse_rate=LAPSE, prior_mean=-1.0, virtual=virtual, **options
    )


def test_box_edge_signs_pair_each_face_point_with_one_just_outside():
    signs = box_edge_signs(1, BOX, noise=0.3, points_per_edge=5, step=0.1)
    assert signs.n_sites == 4 * 5  # two faces per lens power, five points on each
    assert signs.scale == pytest.approx(0.03)
    np.testing.assert_array_equal(signs.inner[:, 0], 0.0)  # the context column
    np.testing.assert_array_equal(signs.outer[:, 0], 0.0)
    lows, highs = np.array([b[0] for b in BOX]), np.array([b[1] for b in BOX])
    for inner, outer in zip(signs.inner[:, 1:], signs.outer[:, 1:]):
        assert np.all((inner >= lows) & (inner <= highs))  # on the box
        moved = np.nonzero(outer != inner)[0]
        assert moved.size == 1  # one coordinate, by the step, outward
        j = moved[0]
        assert inner[j] in (lows[j], highs[j])
        assert outer[j] == pytest.approx(inner[j] + (0.1 if inner[j] == highs[j] else -0.1))
    # the sphere faces' points run over the cylinder bounds, corners included
    sphere_low = signs.inner[(signs.inner[:, 1] == -4.0) & (signs.outer[:, 1] < -4.0)]
    np.testing.assert_allclose(np.sort(sphere_low[:, 2]), np.linspace(-3.0, 2.0, 5))


def test_sign_site_covariances_are_those_of_the_finite_difference():
    kernel = SquaredExponential([1.2, 0.7], variance=1.3)
    signs = SignObservations([[0.0, 1.0], [2.0, -1.0]], [[0.1, 1.0], [2.0, -1.2]], scale=0.05)
    X = np.array([[0.3, 0.2], [1.5, -0.5], [-1.0, 2.0]])
    by_hand = np.array(
        [
            [(kernel([a], [x])[0, 0] - kernel([b], [x])[0, 0]) / 0.05 for x in X]
            for a, b in zip(signs.inner, signs.outer)
        ]
    )
    np.testing.assert_allclose(signs.cross(kernel, X), by_hand, rtol=1e-12)
    G = signs.gradient_x(kernel, X)
    for j in range(signs.n_sites):
        fd = finite_difference_gradient(lambda Z, j=j: signs.cross(kernel, Z)[j], X)
        np.testing.assert_allclose(G[:, j, :], fd, rtol=1e-6, atol=1e-8)


def _joint_map(gp, X_test):
    """The mode of ``f`` at ``[virtual points; X_train; X_test]`` by direct optimization: the prior
    ``N(m, K)`` over all those points and the floored likelihood of the answers and of the signs."""
    v = gp.virtual
    points = np.vstack([v.points, gp.X_train_, X_test])
    K = gp.kernel_(points) + 1e-6 * np.eye(len(points))
    m = gp.prior_mean_at(points)
    L = np.linalg.cholesky(K)
    n_v, n = 2 * v.n_sites, gp.X_train_.shape[0]
    labels = np.concatenate([np.ones(v.n_sites), gp.y_train_])
    t = 2.0 * labels - 1.0
    eps = np.where(labels > 0.5, GUESS, LAPSE)
    kappa = 1.0 - GUESS - LAPSE

    def negative_log_posterior(z):  # f = m + L z
        f = m + L @ z
        sites = np.concatenate([v.combine(f[:n_v]), f[n_v : n_v + n]])
        return 0.5 * z @ z - np.sum(np.log(eps + kappa * norm.cdf(t * sites)))

    z = minimize(
        negative_log_posterior, np.zeros(len(points)), method="L-BFGS-B", options=dict(gtol=1e-10, maxiter=20000)
    ).x
    return (m + L @ z)[n_v + n :]


def test_laplace_with_signs_is_the_map_of_the_joint_latent():
    X, y = _data()
    gp = _classifier(box_edge_signs(1, BOX, noise=0.5, points_per_edge=3), inference="laplace").fit(X, y)
    X_test = np.array([[0.5, 3.9, 1.9], [0.0, 0.0, 0.0], [1.0, -3.5, -2.5]])
    np.testing.assert_allclose(gp.predict_latent(X_test)[0], _joint_map(gp, X_test), atol=2e-4)


@pytest.mark.parametrize("inference", ["laplace", "ep"])
def test_warm_started_fit_with_signs_matches_a_cold_one(inference):
    X, y = _data(40, seed=3)
    signs = box_edge_signs(1, BOX, noise=0.3)
    warm = _classifier(signs, inference).fit(X[:25], y[:25]).fit(X, y)
    cold = _classifier(signs, inference).fit(X, y)
    X_test = _data(6, seed=4)[0]
    for a, b in zip(warm.predict_latent(X_test), cold.predict_latent(X_test)):
        np.testing.assert_allclose(a, b, rtol=1e-6, atol=1e-7)


def test_prediction_gradients_with_signs_match_finite_differences():
    X, y = _data(25, seed=5)
    gp = _classifier(box_edge_signs(1, BOX, noise=0.3)).fit(X, y)
    X_test = _data(4, seed=6)[0]
    mean, _, dmean, dvar = gp.predict_latent_with_gradient(X_test)
    mean_only, dmean_only = gp.predict_latent_mean_with_gradient(X_test)
    np.testing.assert_allclose(mean_only, mean, rtol=1e-12)
    np.testing.assert_allclose(dmean_only, dmean, rtol=1e-10, atol=1e-12)
    fd_mean = finite_difference_gradient(lambda Z: gp.predict_latent(Z)[0], X_test)
    fd_var = finite_difference_gradient(lambda Z: gp.predict_latent(Z)[1], X_test)
    np.testing.assert_allclose(dmean, fd_mean, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(dvar, fd_var, rtol=1e-5, atol=1e-6)


def test_laplace_marginal_likelihood_gradient_with_signs_matches_finite_differences():
    X, y = _data(25, seed=7)
    gp = _classifier(box_edge_signs(1, BOX, noise=0.3, points_per_edge=3), inference="laplace").fit(X, y)
    theta = gp.kernel_.theta
    _, gradient = gp.log_marginal_likelihood(theta, eval_gradient=True)
    fd = finite_difference(gp.log_marginal_likelihood, theta, step=1e-5)
    np.testing.assert_allclose(gradient, fd, rtol=1e-4, atol=1e-6)


def test_signs_keep_the_posterior_mean_maximum_off_an_edge():
    # Answers that improve towards the sphere's upper edge, none beyond 3.5 D: without the signs the
    # posterior mean rises to the edge (the GP extrapolates the slope); with them it turns inside.
    rng = np.random.default_rng(8)
    sphere = rng.uniform(-4.0, 3.5, 120)
    letters = rng.uniform(-0.5, 1.5, 120)
    X = np.column_stack([letters, sphere, np.zeros(120)])
    y = (rng.uniform(size=120) < GUESS + (1 - GUESS - LAPSE) * norm.cdf(2.0 * (letters - 0.8 + 0.25 * sphere))).astype(
        float
    )
    grid = np.column_stack([np.zeros(161), np.linspace(-4.0, 4.0, 161), np.zeros(161)])
    plain = _classifier(None).fit(X, y).predict_latent_mean(grid)
    signed = _classifier(box_edge_signs(1, ((-4.0, 4.0), (-4.0, 4.0)), noise=0.3)).fit(X, y).predict_latent_mean(grid)
    assert grid[np.argmax(plain), 1] == 4.0
    assert grid[np.argmax(signed), 1] < 4.0
    assert signed[-1] < signed[-2]  # falling outward at the edge


def test_bad_sign_observations_are_refused():
    with pytest.raises(ValueError, match="scale must be a positive number"):
        SignObservations([[0.0]], [[0.1]], scale=0.0)
    with pytest.raises(ValueError, match="one shape"):
        SignObservations([[0.0, 1.0]], [[0.1]], scale=1.0)
    with pytest.raises(ValueError, match="noise must be a positive number"):
        box_edge_signs(1, BOX, noise=-1.0)
    with pytest.raises(ValueError, match="points_per_edge"):
        box_edge_signs(1, BOX, noise=0.3, points_per_edge=1)
    with pytest.raises(ValueError, match="virtual must be None"):
        _classifier("edges")
