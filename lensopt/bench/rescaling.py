"""The authors' rescaling of the benchmark functions (seed paper §4.1; METHOD.md §6).

For each function: draw 50,000 points uniformly on the domain; if the variance of the values
exceeds 100 and every value is positive, take the log; standardize the (log-)values to mean 0 and
variance 1; negate, so that the benchmark *maximizes* ``g(x) = -(T(f(x)) - mean) / std``.

The constants are reference data, ``data/benchmark-rescaling.json``, written by
``lensopt bench rescale`` (:func:`compute_rescaling_table` then :func:`write_rescaling_table`)
with the seed recorded, so they can be regenerated bit for bit.
"""

from __future__ import annotations

import json
import math
import os
import tempfile
import zlib
from dataclasses import asdict, dataclass
from pathlib import Path

import numpy as np

from lensopt.bench.functions import FUNCTIONS, TestFunction
from lensopt.reference_data import DATA_DIR

#: Uniform samples per function (seed paper §4.1).
N_SAMPLES = 50_000

#: The log is taken when the sample variance exceeds this and all values are positive.
LOG_VARIANCE_THRESHOLD = 100.0

#: Seed of the reference table shipped in ``data/``.
DEFAULT_SEED = 0

#: Values are floored here before the log, so a function whose minimum is exactly 0 (Rosenbrock,
#: Sphere, ...) keeps a finite rescaled optimum; it only matters within 1e-12 of the minimum.
LOG_FLOOR = 1e-12

#: The command that regenerates the reference table.
REGENERATE_COMMAND = "lensopt bench rescale"

#: Where the reference table lives: the package data ``lensopt.data`` (``data/`` of a checkout).
DEFAULT_TABLE_PATH = DATA_DIR / "benchmark-rescaling.json"

TABLE_FORMAT_VERSION = 1


@dataclass(frozen=True)
class Rescaling:
    """Constants turning one raw function ``f`` into the maximized, standardized ``g``."""

    take_log: bool
    mean: float
    std: float

    def __post_init__(self):
        if not (math.isfinite(self.mean) and math.isfinite(self.std) and self.std > 0):
            raise ValueError(f"Rescaling.mean must be finite and Rescaling.std > 0, got {self}")

    def transform(self, raw: np.ndarray) -> np.ndarray:
        """``g = -(T(raw) - mean) / std``, ``T`` = log (floored at LOG_FLOOR) or identity."""
        raw = np.asarray(raw, dtype=float)
        values = np.log(np.maximum(raw, LOG_FLOOR)) if self.take_log else raw
        return -(values - self.mean) / self.std


def _function_rng(seed: int, slug: str) -> np.random.Generator:
    # One stream per function, independent of the registry's order: SeedSequence keyed by the
    # base seed and a stable hash of the slug.
    return np.random.default_rng(np.random.SeedSequence([seed, zlib.crc32(slug.encode())]))


def compute_rescaling(function: TestFunction, seed: int = DEFAULT_SEED,
                      n_samples: int = N_SAMPLES) -> tuple[Rescaling, dict]:
    """The rescaling of one function and a summary of its raw sample (for the record)."""
    X = function.sample_uniform(n_samples, _function_rng(seed, function.slug))
    raw = function(X)
    raw_variance = float(np.var(raw, ddof=1))
    take_log = bool(raw_variance > LOG_VARIANCE_THRESHOLD and np.all(raw > 0))
    values = np.log(np.maximum(raw, LOG_FLOOR)) if take_log else raw
    rescaling = Rescaling(take_log, float(np.mean(values)), float(np.std(values, ddof=1)))
    summary = {"raw_variance": raw_variance, "raw_min": float(raw.min()),
               "raw_max": float(raw.max())}
    return rescaling, summary


def compute_rescaling_table(seed: int = DEFAULT_SEED, n_samples: int = N_SAMPLES,
                            slugs=None, fit_kernels: bool = False, progress=None) -> dict:
    """The JSON-able reference table for ``slugs`` (all functions by default).

    ``fit_kernels`` also fits each function's base-kernel hyperparameters
    (:mod:`lensopt.bench.hyperparameters`; minutes per function). ``progress(slug)`` is called
    before each function.
    """
    from lensopt import __version__

    entries = {}
    for slug in slugs or FUNCTIONS:
        if progress is not None:
            progress(slug)
        rescaling, summary = compute_rescaling(FUNCTIONS[slug], seed, n_samples)
        entries[slug] = {**asdict(rescaling), **summary}
        if fit_kernels:
            from lensopt.bench.hyperparameters import fit_base_kernel

            entries[slug]["kernel"] = fit_base_kernel(FUNCTIONS[slug], rescaling, seed=seed)
    command = f"{REGENERATE_COMMAND} --seed {seed} --samples {n_samples}"
    return {
        "format_version": TABLE_FORMAT_VERSION,
        "description": "Rescaling of the benchmark functions: g = -(T(f) - mean) / std, "
                       "T = log if take_log else identity (seed paper section 4.1); 'kernel': "
                       "maximum-likelihood base-kernel hyperparameters on g (section 4)",
        "command": command + (" --fit-kernels" if fit_kernels else ""),
        "seed": seed,
        "n_samples": n_samples,
        "log_variance_threshold": LOG_VARIANCE_THRESHOLD,
        "log_floor": LOG_FLOOR,
        "variance_ddof": 1,
        "numpy_version": np.__version__,
        "lensopt_version": __version__,
        "functions": entries,
    }


def write_rescaling_table(table: dict, path: Path = DEFAULT_TABLE_PATH) -> Path:
    """Write ``table`` as JSON atomically (temp file + os.replace)."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=".rescaling-", suffix=".json")
    with os.fdopen(fd, "w") as handle:
        json.dump(table, handle, indent=2)
        handle.write("\n")
    os.replace(tmp, path)
    return path


def _read_table(path: Path) -> dict:
    path = Path(path)
    try:
        return json.loads(path.read_text())
    except FileNotFoundError:
        raise ValueError(f"rescaling table {path} is missing; regenerate it with "
                         f"`{REGENERATE_COMMAND}`") from None


def load_kernel_hyperparameters(path: Path = DEFAULT_TABLE_PATH) -> dict[str, dict]:
    """The fitted base-kernel hyperparameters of the reference table, keyed by slug."""
    table = _read_table(path)
    return {slug: e["kernel"] for slug, e in table["functions"].items() if "kernel" in e}


def load_rescaling_table(path: Path = DEFAULT_TABLE_PATH) -> dict[str, Rescaling]:
    """The rescalings of the reference table, keyed by slug."""
    table = _read_table(path)
    return {
        slug: Rescaling(bool(e["take_log"]), float(e["mean"]), float(e["std"]))
        for slug, e in table["functions"].items()
    }
