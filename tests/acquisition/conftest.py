import numpy as np
import pytest

from lensopt.binary.settings import KernelSpec
from lensopt.gp import GPClassifier


def refraction_data(n=40, seed=0, threshold=lambda x: 0.3 * np.sum(x**2, axis=1)):
    """Random (s, S, C) with answers from a probit psychometric function of slope 3."""
    rng = np.random.default_rng(seed)
    X = np.column_stack([rng.uniform(-1, 2, n), rng.uniform(-2, 2, (n, 2))])
    p = 0.5 * (1 + np.vectorize(__import__("math").erf)(3 * (X[:, 0] - threshold(X[:, 1:])) / np.sqrt(2)))
    return X, (rng.uniform(size=n) < p).astype(int)


@pytest.fixture(scope="package")
def fitted_model():
    kernel = KernelSpec(structure="psychophysics", lengthscales=(1.5, 1.5), variance=4.0, context_variance=4.0).build(
        1, 2
    )
    X, y = refraction_data()
    return GPClassifier(kernel).fit(X, y)


def finite_difference_gradient(function, X, step=1e-6):
    grad = np.zeros_like(X)
    for k in range(X.shape[1]):
        e = np.zeros(X.shape[1])
        e[k] = step
        grad[:, k] = (function(X + e) - function(X - e)) / (2 * step)
    return grad
