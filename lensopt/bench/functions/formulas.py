"""Formulas of the 34 benchmark functions, vectorized: ``(n, d)`` array in, ``(n,)`` out.

Definitions follow Surjanovic & Bingham's virtual library of simulation experiments
(https://www.sfu.ca/~ssurjano/optimization.html), in its minimization convention, except
Ursem Waves (Jamil & Yang 2013, "A literature survey of benchmark functions for global
optimization problems", function 146), which the library does not hold.
"""

from __future__ import annotations

import numpy as np

PI = np.pi


def ackley(X, a=20.0, b=0.2, c=2 * PI):
    d = X.shape[1]
    term1 = -a * np.exp(-b * np.sqrt(np.sum(X**2, axis=1) / d))
    term2 = -np.exp(np.sum(np.cos(c * X), axis=1) / d)
    return term1 + term2 + a + np.e


def beale(X):
    x1, x2 = X[:, 0], X[:, 1]
    return (1.5 - x1 + x1 * x2) ** 2 + (2.25 - x1 + x1 * x2**2) ** 2 + (2.625 - x1 + x1 * x2**3) ** 2


def bohachevsky1(X):
    x1, x2 = X[:, 0], X[:, 1]
    return x1**2 + 2 * x2**2 - 0.3 * np.cos(3 * PI * x1) - 0.4 * np.cos(4 * PI * x2) + 0.7


def three_hump_camel(X):
    x1, x2 = X[:, 0], X[:, 1]
    return 2 * x1**2 - 1.05 * x1**4 + x1**6 / 6 + x1 * x2 + x2**2


def six_hump_camel(X):
    x1, x2 = X[:, 0], X[:, 1]
    return (4 - 2.1 * x1**2 + x1**4 / 3) * x1**2 + x1 * x2 + (-4 + 4 * x2**2) * x2**2


def colville(X):
    x1, x2, x3, x4 = X.T
    return (
        100 * (x1**2 - x2) ** 2
        + (x1 - 1) ** 2
        + (x3 - 1) ** 2
        + 90 * (x3**2 - x4) ** 2
        + 10.1 * ((x2 - 1) ** 2 + (x4 - 1) ** 2)
        + 19.8 * (x2 - 1) * (x4 - 1)
    )


def cross_in_tray(X):
    x1, x2 = X[:, 0], X[:, 1]
    inner = np.abs(np.sin(x1) * np.sin(x2) * np.exp(np.abs(100 - np.sqrt(x1**2 + x2**2) / PI)))
    return -0.0001 * (inner + 1) ** 0.1


def dixon_price(X):
    i = np.arange(2, X.shape[1] + 1)
    return (X[:, 0] - 1) ** 2 + np.sum(i * (2 * X[:, 1:] ** 2 - X[:, :-1]) ** 2, axis=1)


def drop_wave(X):
    r2 = np.sum(X**2, axis=1)
    return -(1 + np.cos(12 * np.sqrt(r2))) / (0.5 * r2 + 2)


def eggholder(X):
    x1, x2 = X[:, 0], X[:, 1]
    return -(x2 + 47) * np.sin(np.sqrt(np.abs(x2 + x1 / 2 + 47))) - x1 * np.sin(np.sqrt(np.abs(x1 - (x2 + 47))))


def forrester(X):
    x = X[:, 0]
    return (6 * x - 2) ** 2 * np.sin(12 * x - 4)


def goldstein_price(X):
    x1, x2 = X[:, 0], X[:, 1]
    a = 1 + (x1 + x2 + 1) ** 2 * (19 - 14 * x1 + 3 * x1**2 - 14 * x2 + 6 * x1 * x2 + 3 * x2**2)
    b = 30 + (2 * x1 - 3 * x2) ** 2 * (18 - 32 * x1 + 12 * x1**2 + 48 * x2 - 36 * x1 * x2 + 27 * x2**2)
    return a * b


def griewank(X):
    i = np.arange(1, X.shape[1] + 1)
    return np.sum(X**2, axis=1) / 4000 - np.prod(np.cos(X / np.sqrt(i)), axis=1) + 1


def gramacy_lee(X):
    x = X[:, 0]
    return np.sin(10 * PI * x) / (2 * x) + (x - 1) ** 4


_HARTMANN_ALPHA = np.array([1.0, 1.2, 3.0, 3.2])
_HARTMANN3_A = np.array([[3.0, 10, 30], [0.1, 10, 35], [3.0, 10, 30], [0.1, 10, 35]])
_HARTMANN3_P = 1e-4 * np.array([[3689, 1170, 2673], [4699, 4387, 7470], [1091, 8732, 5547], [381, 5743, 8828]])
_HARTMANN6_A = np.array(
    [
        [10, 3, 17, 3.5, 1.7, 8],
        [0.05, 10, 17, 0.1, 8, 14],
        [3, 3.5, 1.7, 10, 17, 8],
        [17, 8, 0.05, 10, 0.1, 14],
    ]
)
_HARTMANN6_P = 1e-4 * np.array(
    [
        [1312, 1696, 5569, 124, 8283, 5886],
        [2329, 4135, 8307, 3736, 1004, 9991],
        [2348, 1451, 3522, 2883, 3047, 6650],
        [4047, 8828, 8732, 5743, 1091, 381],
    ]
)


def _hartmann_sum(X, A, P):
    inner = np.sum(A[None] * (X[:, None, :] - P[None]) ** 2, axis=2)  # (n, 4)
    return np.exp(-inner) @ _HARTMANN_ALPHA


def hartmann3(X):
    return -_hartmann_sum(X, _HARTMANN3_A, _HARTMANN3_P)


def hartmann4(X):
    """The library's 4-D version: the first four columns of the 6-D constants, rescaled."""
    return (1.1 - _hartmann_sum(X, _HARTMANN6_A[:, :4], _HARTMANN6_P[:, :4])) / 0.839


def hartmann6(X):
    return -_hartmann_sum(X, _HARTMANN6_A, _HARTMANN6_P)


def holder_table(X):
    x1, x2 = X[:, 0], X[:, 1]
    return -np.abs(np.sin(x1) * np.cos(x2) * np.exp(np.abs(1 - np.sqrt(x1**2 + x2**2) / PI)))


_LANGERMANN_C = np.array([1.0, 2, 5, 2, 3])
_LANGERMANN_A = np.array([[3.0, 5], [5, 2], [2, 1], [1, 4], [7, 9]])


def langermann(X):
    inner = np.sum((X[:, None, :] - _LANGERMANN_A[None, :, : X.shape[1]]) ** 2, axis=2)
    return np.sum(_LANGERMANN_C * np.exp(-inner / PI) * np.cos(PI * inner), axis=1)


def levy(X):
    w = 1 + (X - 1) / 4
    head = np.sin(PI * w[:, 0]) ** 2
    middle = np.sum((w[:, :-1] - 1) ** 2 * (1 + 10 * np.sin(PI * w[:, :-1] + 1) ** 2), axis=1)
    tail = (w[:, -1] - 1) ** 2 * (1 + np.sin(2 * PI * w[:, -1]) ** 2)
    return head + middle + tail


def levy13(X):
    x1, x2 = X[:, 0], X[:, 1]
    return (
        np.sin(3 * PI * x1) ** 2
        + (x1 - 1) ** 2 * (1 + np.sin(3 * PI * x2) ** 2)
        + (x2 - 1) ** 2 * (1 + np.sin(2 * PI * x2) ** 2)
    )


def perm0(X, beta=10.0):
    """Perm function 0, d, beta (library default beta = 10)."""
    d = X.shape[1]
    j = np.arange(1, d + 1)
    total = np.zeros(X.shape[0])
    for i in range(1, d + 1):
        total += np.sum((j + beta) * (X**i - 1.0 / j**i), axis=1) ** 2
    return total


def perm(X, beta=0.5):
    """Perm function d, beta (library default beta = 0.5)."""
    d = X.shape[1]
    j = np.arange(1, d + 1)
    total = np.zeros(X.shape[0])
    for i in range(1, d + 1):
        total += np.sum((j**i + beta) * ((X / j) ** i - 1), axis=1) ** 2
    return total


def powell(X):
    total = np.zeros(X.shape[0])
    for k in range(X.shape[1] // 4):
        a, b, c, e = (X[:, 4 * k + m] for m in range(4))
        total += (a + 10 * b) ** 2 + 5 * (c - e) ** 2 + (b - 2 * c) ** 4 + 10 * (a - e) ** 4
    return total


def rosenbrock(X):
    return np.sum(100 * (X[:, 1:] - X[:, :-1] ** 2) ** 2 + (X[:, :-1] - 1) ** 2, axis=1)


def rotated_hyper_ellipsoid(X):
    return np.sum(np.cumsum(X**2, axis=1), axis=1)


def schaffer4(X):
    x1, x2 = X[:, 0], X[:, 1]
    num = np.cos(np.sin(np.abs(x1**2 - x2**2))) ** 2 - 0.5
    return 0.5 + num / (1 + 0.001 * (x1**2 + x2**2)) ** 2


def schwefel(X):
    return 418.9829 * X.shape[1] - np.sum(X * np.sin(np.sqrt(np.abs(X))), axis=1)


_SHEKEL_BETA = 0.1 * np.array([1.0, 2, 2, 4, 4, 6, 3, 7, 5, 5])
_SHEKEL_C = np.array(
    [
        [4.0, 1, 8, 6, 3, 2, 5, 8, 6, 7],
        [4.0, 1, 8, 6, 7, 9, 3, 1, 2, 3.6],
        [4.0, 1, 8, 6, 3, 2, 5, 8, 6, 7],
        [4.0, 1, 8, 6, 7, 9, 3, 1, 2, 3.6],
    ]
)


def shekel(X):
    """Shekel with m = 10 terms."""
    sq = np.sum((X[:, :, None] - _SHEKEL_C[None]) ** 2, axis=1)  # (n, 10)
    return -np.sum(1.0 / (sq + _SHEKEL_BETA), axis=1)


def shubert(X):
    j = np.arange(1, 6)
    factors = np.sum(j * np.cos((j + 1) * X[:, :, None] + j), axis=2)  # (n, d)
    return np.prod(factors, axis=1)


def sphere(X):
    return np.sum(X**2, axis=1)


def sum_squares(X):
    return np.sum(np.arange(1, X.shape[1] + 1) * X**2, axis=1)


def trid(X):
    return np.sum((X - 1) ** 2, axis=1) - np.sum(X[:, 1:] * X[:, :-1], axis=1)


def ursem_waves(X):
    """Ursem Waves as published by Jamil & Yang (2013), minimum -8.5536 at (1.2, 1.2).

    The paper's MATLAB toolbox (BO_toolbox, ``Ursem_waves.m``) writes the first term
    ``-(0.3 x1)^3`` instead of ``-0.9 x1^2``; we keep the published form, whose optimum can be
    checked, and note the difference here.
    """
    x1, x2 = X[:, 0], X[:, 1]
    return (
        -0.9 * x1**2 + (x2**2 - 4.5 * x2**2) * x1 * x2 + 4.7 * np.cos(3 * x1 - x2**2 * (2 + x1)) * np.sin(2.5 * PI * x1)
    )
