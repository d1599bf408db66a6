"""Every benchmark function checked the same way (as BoTorch's test mixin does).

Published optima below are quoted from (a) BoTorch ``botorch/test_functions/synthetic.py``
(``_optimal_value`` / ``_optimizers``), (b) Surjanovic & Bingham's virtual library
(sfu.ca/~ssurjano), (c) Jamil & Yang 2013, (d) Stripinis' MATLAB collection (Langermann),
(e) Forrester, Sobester & Keane 2008 — each quoted to the precision it was published with.
"""

import re

import numpy as np
import pytest
from scipy.optimize import minimize

from lensopt.bench.functions import FUNCTIONS, get_function

# slug: (published minimum, one published minimizer, absolute tolerance of the published digits, source)
PUBLISHED = {
    "ackley": (0.0, (0.0, 0.0), 1e-12, "BoTorch Ackley"),
    "beale": (0.0, (3.0, 0.5), 1e-12, "BoTorch Beale"),
    "bohachevsky": (0.0, (0.0, 0.0), 1e-12, "S&B Bohachevsky 1"),
    "three-hump-camel": (0.0, (0.0, 0.0), 1e-12, "BoTorch ThreeHumpCamel"),
    "six-hump-camel": (-1.0316, (0.0898, -0.7126), 1e-4, "BoTorch SixHumpCamel"),
    "colville": (0.0, (1.0, 1.0, 1.0, 1.0), 1e-12, "S&B Colville"),
    "cross-in-tray": (-2.06261, (1.3491, -1.3491), 1e-5, "S&B Cross-in-Tray"),
    "dixon-price": (0.0, (1.0, 2**-0.5), 1e-12, "BoTorch DixonPrice optimizers"),
    "drop-wave": (-1.0, (0.0, 0.0), 1e-12, "BoTorch DropWave"),
    "eggholder": (-959.6407, (512.0, 404.2319), 1e-4, "BoTorch EggHolder"),
    "forrester": (-6.0207, (0.7572,), 1e-4, "Forrester et al. 2008"),
    "goldstein-price": (3.0, (0.0, -1.0), 1e-12, "S&B Goldstein-Price"),
    "griewank": (0.0, (0.0, 0.0), 1e-12, "BoTorch Griewank"),
    "gramacy-lee": (-0.869011, (0.548563,), 1e-6, "Gramacy & Lee 2012 (commonly quoted)"),
    "hartmann3": (-3.86278, (0.114614, 0.555649, 0.852547), 1e-5, "BoTorch Hartmann dim=3"),
    "hartmann4": (-3.13449, (0.1874, 0.1942, 0.5579, 0.2648), 1e-4, "computed (no published value)"),
    "hartmann6": (-3.32237, (0.20169, 0.150011, 0.476874, 0.275332, 0.311652, 0.6573), 1e-5, "BoTorch Hartmann dim=6"),
    "holder-table": (-19.2085, (-8.05502, 9.66459), 1e-4, "BoTorch HolderTable"),
    "langermann": (-4.1558092918, (2.79340196434474, 1.59723280665210), 1e-9, "Stripinis"),
    "levy": (0.0, (1.0, 1.0), 1e-12, "BoTorch Levy"),
    "levy13": (0.0, (1.0, 1.0), 1e-12, "S&B Levy N.13"),
    "perm0": (0.0, (1.0, 0.5), 1e-12, "S&B Perm 0,d,beta"),
    "perm": (0.0, (1.0, 2.0), 1e-12, "S&B Perm d,beta"),
    "powell": (0.0, (0.0, 0.0, 0.0, 0.0), 1e-12, "BoTorch Powell"),
    "rosenbrock": (0.0, (1.0, 1.0), 1e-12, "BoTorch Rosenbrock"),
    "rotated-hyper-ellipsoid": (0.0, (0.0, 0.0), 1e-12, "S&B Rotated Hyper-Ellipsoid"),
    "schaffer4": (0.292579, (0.0, 1.25313), 1e-6, "Jamil & Yang 2013"),
    "schwefel": (0.0, (420.9687, 420.9687), 1e-4, "S&B Schwefel"),
    "shekel": (-10.536443, (4.000747, 3.99951, 4.00075, 3.99951), 1e-6, "BoTorch Shekel m=10"),
    "shubert": (-186.7309, (4.8580, 5.4828), 1e-3, "S&B Shubert"),
    "sphere": (0.0, (0.0, 0.0), 1e-12, "S&B Sphere"),
    "sum-squares": (0.0, (0.0, 0.0), 1e-12, "S&B Sum Squares"),
    "trid": (-2.0, (2.0, 2.0), 1e-12, "S&B Trid, -d(d+4)(d-1)/6"),
    "ursem-waves": (-8.5536, (1.2, 1.2), 1e-4, "Jamil & Yang 2013"),
}

# The paper's Table S1 as printed (name, D, kernel), in order.
TABLE_S1 = [
    ("Ackley", 2, "matern32"),
    ("Beale", 2, "se-ard"),
    ("Bohachevsky", 2, "se-ard"),
    ("Three-Hump Camel", 2, "matern52"),
    ("Six-Hump Camel", 2, "se-ard"),
    ("Colville", 4, "matern52"),
    ("Cross-in-Tray", 2, "matern52"),
    ("Dixon-Price", 2, "matern52"),
    ("Drop-Wave", 2, "matern32"),
    ("Eggholder", 2, "se-ard"),
    ("Forrester et al (2008)", 1, "se-ard"),
    ("Goldstein-Price", 2, "se-ard"),
    ("Griewank", 2, "se-ard"),
    ("Gramacy and Lee (2012)", 1, "se-ard"),
    ("Hartmann 3-D", 3, "se-ard"),
    ("Hartmann 4D", 4, "se-ard"),
    ("Hartmann 6D", 6, "se-ard"),
    ("Holder", 2, "se-ard"),
    ("Langer", 2, "matern32"),
    ("Levy", 2, "se-ard"),
    ("Levy N.13", 2, "matern52"),
    ("Perm 0,d,β", 2, "se-ard"),
    ("Perm d,β", 2, "se-ard"),
    ("Powell", 4, "se-ard"),
    ("Rosenbrock", 2, "se-ard"),
    ("Rotated Hyper-Ellipsoid", 2, "matern32"),
    ("Schaffer n4", 2, "matern32"),
    ("Schwefel", 2, "se-ard"),
    ("Shekel", 4, "se-ard"),
    ("Schubert", 2, "matern32"),
    ("Sphere", 2, "se-ard"),
    ("Sum Squares", 2, "se-ard"),
    ("Trid", 2, "se-ard"),
    ("Ursem Waves", 2, "se-ard"),
]

ALL = list(FUNCTIONS.values())


def test_registry_matches_table_s1_names_dimensions_and_kernels():
    assert [(f.name, f.dim, f.kernel_family) for f in ALL] == TABLE_S1
    assert set(PUBLISHED) == set(FUNCTIONS)


@pytest.mark.parametrize("fn", ALL, ids=lambda f: f.slug)
def test_optimal_value_agrees_with_published_value(fn):
    value, point, tol, _source = PUBLISHED[fn.slug]
    assert fn.optimal_value == pytest.approx(value, abs=tol)
    assert fn(np.array(point)) == pytest.approx(value, abs=max(tol, 1e-4 * max(1, abs(value))))


@pytest.mark.parametrize("fn", ALL, ids=lambda f: f.slug)
def test_value_at_every_optimizer_equals_optimal_value(fn):
    values = fn(np.array(fn.optimizers))
    np.testing.assert_allclose(values, fn.optimal_value, rtol=1e-9, atol=1e-9)


@pytest.mark.parametrize("fn", ALL, ids=lambda f: f.slug)
def test_no_point_found_below_the_optimum(fn):
    # Random search plus L-BFGS-B from the best samples: nothing beats the stated minimum.
    rng = np.random.default_rng(1)
    X = fn.sample_uniform(20_000, rng)
    values = fn(X)
    assert values.min() >= fn.optimal_value - 1e-9
    for x0 in X[np.argsort(values)[:3]]:
        res = minimize(lambda x: fn(np.clip(x, fn.lower, fn.upper)), x0, bounds=fn.bounds, method="L-BFGS-B")
        assert res.fun >= fn.optimal_value - 1e-7


@pytest.mark.parametrize("fn", ALL, ids=lambda f: f.slug)
def test_input_outside_the_domain_raises_naming_function_and_bound(fn):
    for col in range(fn.dim):
        for side, sign in ((fn.upper, 1), (fn.lower, -1)):
            x = np.array(fn.optimizers[0], dtype=float)
            x[col] = side[col] + sign * 0.01 * (fn.upper[col] - fn.lower[col])
            low, high = fn.bounds[col]
            pattern = rf"{re.escape(fn.name)}.*x\[{col}\].*outside its domain \[{low:g}, {high:g}\]"
            with pytest.raises(ValueError, match=pattern):
                fn(x)


@pytest.mark.parametrize("fn", ALL, ids=lambda f: f.slug)
def test_shapes_batch_single_and_wrong_dimension(fn):
    X = fn.sample_uniform(5, np.random.default_rng(0))
    out = fn(X)
    assert out.shape == (5,)
    assert isinstance(fn(X[0]), float) and fn(X[0]) == pytest.approx(out[0])
    with pytest.raises(ValueError, match="shape"):
        fn(np.zeros((3, fn.dim + 1)))


def test_ursem_waves_domain_is_the_authors_not_the_sorted_table():
    fn = get_function("ursem-waves")
    assert fn.bounds == ((-0.9, 1.2), (-1.2, 1.2))


def test_unknown_slug_lists_the_choices():
    with pytest.raises(ValueError, match="ackley"):
        get_function("branin")


def test_nan_input_raises():
    with pytest.raises(ValueError, match="finite"):
        get_function("sphere")(np.array([np.nan, 0.0]))
