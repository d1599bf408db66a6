"""The 34 benchmark functions of the contextual paper's Table S1 (seed paper, supplement H).

Each :class:`TestFunction` holds one function's formula (minimization convention of
Surjanovic & Bingham's library and BoTorch), its domain as in Table S1, its global minimum and
every known minimizer on that domain, and the kernel family the paper assigned to it. Look
functions up by slug in :data:`FUNCTIONS`.

Where the optimum comes from is stated per function (``source``). Values were polished to full
precision with bounded L-BFGS from the published minimizers; ``tests/bench/test_functions.py``
checks every one against the rounded published value (BoTorch ``test_functions/synthetic.py``,
Surjanovic & Bingham, Jamil & Yang 2013) and against a random global search.

Two departures from the printed Table S1, both taken from the authors' MATLAB toolbox
(``BO_toolbox``): the table prints the domains of Six-Hump Camel and Ursem Waves with rows
sorted (``unique(bounds, 'rows')``); their real domains are ``x1 ∈ [-3, 3], x2 ∈ [-2, 2]`` and
``x1 ∈ [-0.9, 1.2], x2 ∈ [-1.2, 1.2]``. Bohachevsky is the library's first Bohachevsky function
(``boha1``), and Perm 0,d,β uses β = 10, Perm d,β uses β = 0.5 (library defaults).
"""

from __future__ import annotations

import math

from lensopt.bench.functions import formulas as _f
from lensopt.bench.functions.base import KERNEL_FAMILIES, TestFunction, cube

__all__ = ["FUNCTIONS", "KERNEL_FAMILIES", "TestFunction", "get_function"]

_SB = "Surjanovic & Bingham library"
_BT = "BoTorch test_functions/synthetic.py"

_DEFINITIONS = (
    TestFunction(
        "ackley", "Ackley", cube(-32.768, 32.768, 2), 0.0, ((0.0, 0.0),), "matern32", _f.ackley, f"{_BT}; {_SB}"
    ),
    TestFunction("beale", "Beale", cube(-4.5, 4.5, 2), 0.0, ((3.0, 0.5),), "se-ard", _f.beale, f"{_BT}; {_SB}"),
    TestFunction(
        "bohachevsky",
        "Bohachevsky",
        cube(-100, 100, 2),
        0.0,
        ((0.0, 0.0),),
        "se-ard",
        _f.bohachevsky1,
        f"{_SB} (Bohachevsky function 1)",
    ),
    TestFunction(
        "three-hump-camel",
        "Three-Hump Camel",
        cube(-5, 5, 2),
        0.0,
        ((0.0, 0.0),),
        "matern52",
        _f.three_hump_camel,
        f"{_BT}; {_SB}",
    ),
    TestFunction(
        "six-hump-camel",
        "Six-Hump Camel",
        ((-3, 3), (-2, 2)),
        -1.0316284534898774,
        ((0.08984201, -0.7126564), (-0.08984201, 0.7126564)),
        "se-ard",
        _f.six_hump_camel,
        f"{_BT} (-1.0316 at ±(0.0898, -0.7126)); {_SB}",
    ),
    TestFunction("colville", "Colville", cube(-10, 10, 4), 0.0, ((1.0, 1.0, 1.0, 1.0),), "matern52", _f.colville, _SB),
    TestFunction(
        "cross-in-tray",
        "Cross-in-Tray",
        cube(-10, 10, 2),
        -2.062611870822739,
        tuple((a * 1.349406608602, b * 1.349406608602) for a in (1, -1) for b in (1, -1)),
        "matern52",
        _f.cross_in_tray,
        f"{_SB} (-2.06261 at (±1.3491, ±1.3491))",
    ),
    TestFunction(
        "dixon-price",
        "Dixon-Price",
        cube(-5, 5, 2),
        0.0,
        ((1.0, 2**-0.5), (1.0, -(2**-0.5))),
        "matern52",
        _f.dixon_price,
        f"{_BT}; {_SB} (x_i = ±2^-((2^i - 2)/2^i))",
    ),
    TestFunction(
        "drop-wave", "Drop-Wave", cube(-5.12, 5.12, 2), -1.0, ((0.0, 0.0),), "matern32", _f.drop_wave, f"{_BT}; {_SB}"
    ),
    TestFunction(
        "eggholder",
        "Eggholder",
        cube(-512, 512, 2),
        -959.6406627208507,
        ((512.0, 404.2318050),),
        "se-ard",
        _f.eggholder,
        f"{_BT} (-959.6407 at (512, 404.2319)); {_SB}",
    ),
    TestFunction(
        "forrester",
        "Forrester et al (2008)",
        ((0, 1),),
        -6.020740055767083,
        ((0.7572487144081974,),),
        "se-ard",
        _f.forrester,
        "Forrester, Sobester & Keane 2008 (-6.0207 at x = 0.7572); formula from " + _SB,
    ),
    TestFunction(
        "goldstein-price", "Goldstein-Price", cube(-2, 2, 2), 3.0, ((0.0, -1.0),), "se-ard", _f.goldstein_price, _SB
    ),
    TestFunction(
        "griewank", "Griewank", cube(-600, 600, 2), 0.0, ((0.0, 0.0),), "se-ard", _f.griewank, f"{_BT}; {_SB}"
    ),
    TestFunction(
        "gramacy-lee",
        "Gramacy and Lee (2012)",
        ((0.5, 2.5),),
        -0.8690111349894998,
        ((0.5485634404905,),),
        "se-ard",
        _f.gramacy_lee,
        "Gramacy & Lee 2012; -0.869011 at x = 0.548563 (polished here); formula " + _SB,
    ),
    TestFunction(
        "hartmann3",
        "Hartmann 3-D",
        cube(0, 1, 3),
        -3.862779787332663,
        ((0.1145888, 0.5556489, 0.8525470),),
        "se-ard",
        _f.hartmann3,
        f"{_BT} (-3.86278 at (0.114614, 0.555649, 0.852547))",
    ),
    TestFunction(
        "hartmann4",
        "Hartmann 4D",
        cube(0, 1, 4),
        -3.1344941412224,
        ((0.18739527, 0.19415153, 0.55791777, 0.26477962),),
        "se-ard",
        _f.hartmann4,
        f"{_SB} gives the formula but no optimum (BoTorch: not implemented); "
        "found here by 500-start L-BFGS-B, checked by the tests' global search",
    ),
    TestFunction(
        "hartmann6",
        "Hartmann 6D",
        cube(0, 1, 6),
        -3.3223680114155147,
        ((0.20168951, 0.15001069, 0.47687397, 0.27533243, 0.31165162, 0.65730053),),
        "se-ard",
        _f.hartmann6,
        f"{_BT} (-3.32237); {_SB}",
    ),
    TestFunction(
        "holder-table",
        "Holder",
        cube(-10, 10, 2),
        -19.208502567886754,
        tuple((a * 8.05502347, b * 9.66459002) for a in (1, -1) for b in (1, -1)),
        "se-ard",
        _f.holder_table,
        f"{_BT} (-19.2085 at (±8.05502, ±9.66459)); {_SB}",
    ),
    TestFunction(
        "langermann",
        "Langer",
        cube(0, 10, 2),
        -4.155809291843469,
        ((2.79340196434474, 1.59723280665210),),
        "matern32",
        _f.langermann,
        "Stripinis' MATLAB set of the library's Langermann (-4.1558092918)",
    ),
    TestFunction("levy", "Levy", cube(-10, 10, 2), 0.0, ((1.0, 1.0),), "se-ard", _f.levy, f"{_BT}; {_SB}"),
    TestFunction("levy13", "Levy N.13", cube(-10, 10, 2), 0.0, ((1.0, 1.0),), "matern52", _f.levy13, _SB),
    TestFunction(
        "perm0", "Perm 0,d,β", cube(-2, 2, 2), 0.0, ((1.0, 0.5),), "se-ard", _f.perm0, f"{_SB} (β = 10, x_i = 1/i)"
    ),
    TestFunction(
        "perm", "Perm d,β", cube(-2, 2, 2), 0.0, ((1.0, 2.0),), "se-ard", _f.perm, f"{_SB} (β = 0.5, x_i = i)"
    ),
    TestFunction(
        "powell", "Powell", cube(-4, 5, 4), 0.0, ((0.0, 0.0, 0.0, 0.0),), "se-ard", _f.powell, f"{_BT}; {_SB}"
    ),
    TestFunction(
        "rosenbrock", "Rosenbrock", cube(-2.048, 2.048, 2), 0.0, ((1.0, 1.0),), "se-ard", _f.rosenbrock, f"{_BT}; {_SB}"
    ),
    TestFunction(
        "rotated-hyper-ellipsoid",
        "Rotated Hyper-Ellipsoid",
        cube(-65.536, 65.536, 2),
        0.0,
        ((0.0, 0.0),),
        "matern32",
        _f.rotated_hyper_ellipsoid,
        _SB,
    ),
    TestFunction(
        "schaffer4",
        "Schaffer n4",
        cube(-100, 100, 2),
        0.29257863203598033,
        ((0.0, 1.253131828792882), (0.0, -1.253131828792882), (1.253131828792882, 0.0), (-1.253131828792882, 0.0)),
        "matern32",
        _f.schaffer4,
        "Jamil & Yang 2013 (0.292579 at (0, ±1.25313))",
    ),
    TestFunction(
        "schwefel",
        "Schwefel",
        cube(-500, 500, 2),
        2.5455132345086895e-05,
        ((420.96874636, 420.96874636),),
        "se-ard",
        _f.schwefel,
        f"{_SB} (0 at x_i = 420.9687; the constant 418.9829 leaves 2.5e-5)",
    ),
    TestFunction(
        "shekel",
        "Shekel",
        cube(0, 10, 4),
        -10.53644315348353,
        ((4.00074687, 3.99950948, 4.00074687, 3.99950948),),
        "se-ard",
        _f.shekel,
        f"{_BT} (m = 10: -10.536443 at (4.000747, 3.99951, ...))",
    ),
    TestFunction(
        "shubert",
        "Schubert",
        cube(0, 10, 2),
        -186.7309088310239,
        ((4.85805688, 5.48286421), (5.48286421, 4.85805688)),
        "matern32",
        _f.shubert,
        f"{_SB} (-186.7309, 18 minimizers on [-10, 10]^2; the 2 inside [0, 10]^2)",
    ),
    TestFunction("sphere", "Sphere", cube(-5.12, 5.12, 2), 0.0, ((0.0, 0.0),), "se-ard", _f.sphere, _SB),
    TestFunction("sum-squares", "Sum Squares", cube(-10, 10, 2), 0.0, ((0.0, 0.0),), "se-ard", _f.sum_squares, _SB),
    TestFunction(
        "trid",
        "Trid",
        cube(-4, 4, 2),
        -2.0,
        ((2.0, 2.0),),
        "se-ard",
        _f.trid,
        f"{_SB} (-d(d+4)(d-1)/6 at x_i = i(d+1-i))",
    ),
    TestFunction(
        "ursem-waves",
        "Ursem Waves",
        ((-0.9, 1.2), (-1.2, 1.2)),
        -8.5536,
        ((1.2, 1.2),),
        "se-ard",
        _f.ursem_waves,
        "Jamil & Yang 2013 (-8.5536 at (1.2, 1.2))",
    ),
)

#: Every benchmark function of Table S1, keyed by slug, in the table's order.
FUNCTIONS: dict[str, TestFunction] = {fn.slug: fn for fn in _DEFINITIONS}

assert len(FUNCTIONS) == 34 and not math.isnan(sum(fn.optimal_value for fn in _DEFINITIONS))


def get_function(slug: str) -> TestFunction:
    """The function registered under ``slug``; ValueError listing the slugs otherwise."""
    try:
        return FUNCTIONS[slug]
    except KeyError:
        raise ValueError(f"unknown benchmark function {slug!r}; choose from: {', '.join(FUNCTIONS)}") from None
