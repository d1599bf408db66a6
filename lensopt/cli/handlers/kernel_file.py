"""A kernel from ``--hyperparameters`` FILE, as ``lensopt hyperparameters --output FILE`` writes it
(``lensopt simulate``, ``lensopt bench robustness``): a light module, so that a command reading a
kernel does not import the fitting code."""

from __future__ import annotations

import json

from lensopt.binary.settings import KernelSpec


def load_kernel(path):
    """The ``kernel`` entry of ``--hyperparameters`` FILE (``lensopt simulate``, ``lensopt bench
    robustness``), checked field by field (a one-line ValueError naming the file and the field
    otherwise)."""
    fix = "give a JSON file with a 'kernel' entry like data/refraction-hyperparameters.json"
    try:
        with open(path, encoding="utf-8") as handle:
            document = json.load(handle)
    except UnicodeDecodeError:
        raise ValueError(f"cannot read hyperparameters from {path} (not a text file); {fix}") from None
    except (OSError, ValueError) as exc:
        raise ValueError(f"cannot read hyperparameters from {path} ({exc}); {fix}") from None
    if not isinstance(document, dict):
        what = "a list" if isinstance(document, list) else f"a {type(document).__name__}"
        raise ValueError(f"cannot read hyperparameters from {path} (it holds {what}, not a JSON object); {fix}")
    if "kernel" not in document:
        raise ValueError(f"cannot read hyperparameters from {path} (no 'kernel' entry); {fix}")
    kernel = document["kernel"]
    if isinstance(document, dict) and "start_kernel" in document:  # lensopt hyperparameters --space power-vector
        raise ValueError(
            f"--hyperparameters {path} holds the full prescription's kernels (power vectors, start_kernel): "
            "the sphere-and-cylinder search needs a fit of its own (lensopt hyperparameters --space sphere-cylinder)"
        )
    try:
        KernelSpec.from_dict(kernel)
    except (ValueError, TypeError) as exc:
        raise ValueError(f"--hyperparameters {path}: bad 'kernel' entry ({exc}); {fix}") from None
    return kernel
