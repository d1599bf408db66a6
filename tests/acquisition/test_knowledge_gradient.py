import numpy as np

from lensopt.acquisition import ContextualKnowledgeGradient
from lensopt.gp import GPClassifier, uncertainty


def test_kg_equals_a_brute_force_computation_with_fresh_models(fitted_model):
    inner = np.column_stack([np.full(30, 2.0), np.random.default_rng(0).uniform(-2, 2, (30, 2))])
    kg = ContextualKnowledgeGradient(fitted_model, inner, np.array([2.0]))
    X = np.array([[0.5, 0.0, 0.0], [1.5, 1.0, -1.0]])
    values = kg(X)

    base_best = fitted_model.predict_latent(inner)[0].max()
    mu, var = fitted_model.predict_latent(X)
    p = uncertainty.probit_mean(mu, var)
    for i, x in enumerate(X):
        best = []
        for outcome in (1, 0):
            fresh = GPClassifier(fitted_model.kernel_).fit(
                np.vstack([fitted_model.X_train_, x]), np.append(fitted_model.y_train_, outcome)
            )
            best.append(fresh.predict_latent(inner)[0].max())
        expected = p[i] * best[0] + (1 - p[i]) * best[1] - base_best
        np.testing.assert_allclose(values[i], expected, rtol=1e-6, atol=1e-9)


def test_fantasies_leave_the_model_untouched(fitted_model):
    probe = np.array([[0.3, 0.2, -0.4]])
    before = fitted_model.predict_latent(probe)
    n = fitted_model.X_train_.shape[0]
    ContextualKnowledgeGradient(fitted_model, probe, np.array([2.0]))(probe)
    assert fitted_model.X_train_.shape[0] == n
    np.testing.assert_array_equal(fitted_model.predict_latent(probe), before)
