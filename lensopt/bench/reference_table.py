"""The reference table of the benchmark functions, ``data/benchmark-rescaling.json``.

For every function it holds the authors' rescaling (:mod:`lensopt.bench.rescaling`) and, with
``--fit-kernels``, the maximum-likelihood hyperparameters of its base kernel on the rescaled ``g``
(:mod:`lensopt.bench.hyperparameters`), with the seed and the command that regenerate it:
``lensopt bench rescale`` (:func:`compute_rescaling_table` then :func:`write_rescaling_table`).
It sits above both: the kernel fit reads the rescaling, and the table holds the two.
"""

from __future__ import annotations

import json
import os
import tempfile
from dataclasses import asdict
from pathlib import Path

import numpy as np

from lensopt import __version__
from lensopt.bench.functions import FUNCTIONS
from lensopt.bench.hyperparameters import fit_base_kernel
from lensopt.bench.rescaling import (
    DEFAULT_SEED,
    LOG_FLOOR,
    LOG_VARIANCE_THRESHOLD,
    N_SAMPLES,
    Rescaling,
    compute_rescaling,
)
from lensopt.reference_data import DATA_DIR

#: The command that regenerates the reference table.
REGENERATE_COMMAND = "lensopt bench rescale"

#: Where the reference table lives: the package data ``lensopt.data`` (``data/`` of a checkout).
DEFAULT_TABLE_PATH = DATA_DIR / "benchmark-rescaling.json"

TABLE_FORMAT_VERSION = 1


def compute_rescaling_table(
    seed: int = DEFAULT_SEED, n_samples: int = N_SAMPLES, slugs=None, fit_kernels: bool = False, progress=None
) -> dict:
    """The JSON-able reference table for ``slugs`` (all functions by default).

    ``fit_kernels`` also fits each function's base-kernel hyperparameters
    (:mod:`lensopt.bench.hyperparameters`; minutes per function). ``progress(slug)`` is called
    before each function.
    """
    entries = {}
    for slug in slugs or FUNCTIONS:
        if progress is not None:
            progress(slug)
        rescaling, summary = compute_rescaling(FUNCTIONS[slug], seed, n_samples)
        entries[slug] = {**asdict(rescaling), **summary}
        if fit_kernels:
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
        raise ValueError(f"rescaling table {path} is missing; regenerate it with `{REGENERATE_COMMAND}`") from None


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
