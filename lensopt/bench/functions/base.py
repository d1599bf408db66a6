"""The frozen definition every benchmark function shares, with its domain check.

A :class:`TestFunction` is evaluated in the convention of Surjanovic & Bingham's virtual library
and BoTorch's ``test_functions/synthetic.py``: the raw function is *minimized*, and
``optimal_value`` is its global minimum on the domain. The contextual benchmark maximizes the
rescaled, negated function instead (:mod:`lensopt.bench.rescaling`).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np

#: Kernel families of the paper's Table S1 (seed paper, supplement H).
KERNEL_FAMILIES = ("se-ard", "matern32", "matern52")

#: Inputs this far outside a bound (relative to the domain's width) are still accepted, so that a
#: point produced by rounding at the boundary (e.g. ``low + width * 1.0``) does not raise.
DOMAIN_TOLERANCE = 1e-9


@dataclass(frozen=True)
class TestFunction:
    """One benchmark function of Table S1: its formula, domain, optimum and kernel family.

    ``evaluate`` maps an ``(n, dim)`` array to ``(n,)`` raw values (minimization convention).
    ``optimizers`` lists every known global minimizer inside ``bounds``; ``source`` says where the
    optimum and its locations were published.
    """

    __test__ = False  # not a pytest test class, despite the name

    slug: str
    name: str
    bounds: tuple[tuple[float, float], ...]
    optimal_value: float
    optimizers: tuple[tuple[float, ...], ...]
    kernel_family: str
    evaluate: Callable[[np.ndarray], np.ndarray] = field(repr=False, compare=False)
    source: str = ""

    def __post_init__(self):
        bounds = tuple((float(low), float(high)) for low, high in self.bounds)
        object.__setattr__(self, "bounds", bounds)
        if not bounds:
            raise ValueError(f"{self.slug}: bounds must list at least one (low, high) pair")
        for k, (low, high) in enumerate(bounds):
            if not (math.isfinite(low) and math.isfinite(high) and low < high):
                raise ValueError(f"{self.slug}: bounds[{k}] must satisfy low < high, got {low, high}")
        if self.kernel_family not in KERNEL_FAMILIES:
            raise ValueError(f"{self.slug}: kernel_family must be one of {KERNEL_FAMILIES}, got {self.kernel_family!r}")
        optimizers = tuple(tuple(float(v) for v in point) for point in self.optimizers)
        object.__setattr__(self, "optimizers", optimizers)
        if not optimizers:
            raise ValueError(f"{self.slug}: optimizers must list at least one point")
        for point in optimizers:
            if len(point) != len(bounds):
                raise ValueError(f"{self.slug}: optimizer {point} has {len(point)} coordinates, expected {len(bounds)}")
            self.check_domain(np.asarray(point)[None, :])

    @property
    def dim(self) -> int:
        """Number of input dimensions."""
        return len(self.bounds)

    @property
    def lower(self) -> np.ndarray:
        return np.array([low for low, _ in self.bounds])

    @property
    def upper(self) -> np.ndarray:
        return np.array([high for _, high in self.bounds])

    def check_domain(self, X: np.ndarray) -> None:
        """Raise ValueError naming the function and the bound if a row of ``X`` leaves the domain."""
        width = self.upper - self.lower
        slack = DOMAIN_TOLERANCE * width
        below = X < self.lower - slack
        above = X > self.upper + slack
        if below.any() or above.any():
            row, col = np.argwhere(below | above)[0]
            low, high = self.bounds[col]
            raise ValueError(
                f"{self.name}: x[{col}] = {X[row, col]:g} is outside its domain [{low:g}, {high:g}]; "
                "clip the input to the bounds"
            )

    def __call__(self, X) -> np.ndarray | float:
        """Raw value at ``X``: shape ``(n, dim)`` gives ``(n,)``; shape ``(dim,)`` gives a float."""
        X = np.asarray(X, dtype=float)
        single = X.ndim == 1
        X2 = X[None, :] if single else X
        if X2.ndim != 2 or X2.shape[1] != self.dim:
            raise ValueError(f"{self.name}: expected an array of shape (n, {self.dim}) or ({self.dim},), got {X.shape}")
        if not np.all(np.isfinite(X2)):
            raise ValueError(f"{self.name}: inputs must be finite")
        self.check_domain(X2)
        values = np.asarray(self.evaluate(X2), dtype=float).reshape(X2.shape[0])
        return float(values[0]) if single else values

    def sample_uniform(self, n: int, rng: np.random.Generator) -> np.ndarray:
        """``n`` points drawn uniformly on the domain, shape ``(n, dim)``."""
        return self.lower + (self.upper - self.lower) * rng.random((n, self.dim))


def cube(low: float, high: float, dim: int) -> tuple[tuple[float, float], ...]:
    """The bounds of ``[low, high]^dim``."""
    return tuple((low, high) for _ in range(dim))
