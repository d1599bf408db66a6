"""The authors' rescaling of the benchmark functions (seed paper §4.1; METHOD.md §6).

For each function: draw 50,000 points uniformly on the domain; if the variance of the values
exceeds 100 and every value is positive, take the log; standardize the (log-)values to mean 0 and
variance 1; negate, so that the benchmark *maximizes* ``g(x) = -(T(f(x)) - mean) / std``.

The constants are reference data, ``data/benchmark-rescaling.json``, written and read by
:mod:`lensopt.bench.reference_table` with the seed recorded, so they can be regenerated bit for bit.
"""

from __future__ import annotations

import math
import zlib
from dataclasses import dataclass

import numpy as np

from lensopt.bench.functions import TestFunction

#: Uniform samples per function (seed paper §4.1).
N_SAMPLES = 50_000

#: The log is taken when the sample variance exceeds this and all values are positive.
LOG_VARIANCE_THRESHOLD = 100.0

#: Seed of the reference table shipped in ``data/`` (:mod:`lensopt.bench.reference_table`).
DEFAULT_SEED = 0

#: Values are floored here before the log, so a function whose minimum is exactly 0 (Rosenbrock,
#: Sphere, ...) keeps a finite rescaled optimum; it only matters within 1e-12 of the minimum.
LOG_FLOOR = 1e-12


@dataclass(frozen=True)
class Rescaling:
    """Constants turning one raw function ``f`` into the maximized, standardized ``g``."""

    take_log: bool
    mean: float
    std: float

    def __post_init__(self):
        if not (math.isfinite(self.mean) and math.isfinite(self.std) and self.std > 0):
            raise ValueError(f"Rescaling.mean must be finite and Rescaling.std > 0, got {self}")

    def transform(self, raw: np.ndarray | float) -> np.ndarray:
        """``g = -(T(raw) - mean) / std``, ``T`` = log (floored at LOG_FLOOR) or identity."""
        raw = np.asarray(raw, dtype=float)
        values = np.log(np.maximum(raw, LOG_FLOOR)) if self.take_log else raw
        return -(values - self.mean) / self.std


def _function_rng(seed: int, slug: str) -> np.random.Generator:
    # One stream per function, independent of the registry's order: SeedSequence keyed by the
    # base seed and a stable hash of the slug.
    return np.random.default_rng(np.random.SeedSequence([seed, zlib.crc32(slug.encode())]))


def compute_rescaling(
    function: TestFunction, seed: int = DEFAULT_SEED, n_samples: int = N_SAMPLES
) -> tuple[Rescaling, dict]:
    """The rescaling of one function and a summary of its raw sample (for the record)."""
    X = function.sample_uniform(n_samples, _function_rng(seed, function.slug))
    raw = np.asarray(function(X), dtype=float)
    raw_variance = float(np.var(raw, ddof=1))
    take_log = bool(raw_variance > LOG_VARIANCE_THRESHOLD and np.all(raw > 0))
    values = np.log(np.maximum(raw, LOG_FLOOR)) if take_log else raw
    rescaling = Rescaling(take_log, float(np.mean(values)), float(np.std(values, ddof=1)))
    summary = {"raw_variance": raw_variance, "raw_min": float(raw.min()), "raw_max": float(raw.max())}
    return rescaling, summary
