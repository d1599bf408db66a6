"""Reference data shipped in the repository's ``data/`` folder (JSON, never pickles)."""

from __future__ import annotations

import json
from pathlib import Path

#: The repository's data folder (reference data only; sessions live elsewhere).
DATA_DIR = Path(__file__).resolve().parents[1] / "data"

#: Hyperparameters of the refraction GP, fitted on simulated responses (`lensopt hyperparameters`).
REFRACTION_HYPERPARAMETERS = "refraction-hyperparameters.json"

#: The same for issue 14's letter model (floored likelihood, EP, prior mean; `--model floored`).
LETTER_MODEL_HYPERPARAMETERS = "letter-model-hyperparameters.json"


def load_json(name: str) -> dict:
    path = DATA_DIR / name
    try:
        return json.loads(path.read_text())
    except FileNotFoundError:
        raise FileNotFoundError(
            f"reference data {path} is missing; regenerate it (see data/README.md) or reinstall lensopt"
        ) from None
