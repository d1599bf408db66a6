"""Files shipped with lensopt: reference data (JSON, never pickles), stimuli and protocols.

In the repository they live in the top-level folders ``data/``, ``stimuli/`` and ``protocols/``;
pyproject.toml maps those folders onto the packages ``lensopt.data``, ``lensopt.stimuli`` and
``lensopt.protocols``, so a wheel carries them and :mod:`importlib.resources` finds them: in the
repository's own folders with an editable install (``pip install -e .``), inside the installed
package otherwise.
"""

from __future__ import annotations

import json
from importlib import resources
from pathlib import Path

DATA_PACKAGE = "lensopt.data"
STIMULI_PACKAGE = "lensopt.stimuli"
PROTOCOLS_PACKAGE = "lensopt.protocols"


def package_folder(package: str) -> Path:
    """The folder of one of the packages above (lensopt is installed as files, never zipped)."""
    folder = resources.files(package)
    return folder if isinstance(folder, Path) else Path(str(folder))


#: The reference data folder (reference data only; sessions live elsewhere): the repository's
#: ``data/`` with an editable install, ``site-packages/lensopt/data`` with a regular one.
DATA_DIR = package_folder(DATA_PACKAGE)

#: The stimuli folder (the letter geometry), the repository's ``stimuli/`` or the installed copy.
STIMULI_DIR = package_folder(STIMULI_PACKAGE)

#: The shipped protocols (``*.toml``), the repository's ``protocols/`` or the installed copy.
PROTOCOLS_DIR = package_folder(PROTOCOLS_PACKAGE)

#: Hyperparameters of the refraction GP, fitted on simulated responses (`lensopt hyperparameters`).
REFRACTION_HYPERPARAMETERS = "refraction-hyperparameters.json"

#: The same for issue 14's letter model (floored likelihood, EP, prior mean; `--model floored`).
LETTER_MODEL_HYPERPARAMETERS = "letter-model-hyperparameters.json"

#: The full-prescription search's kernel on power vectors (M, J0, J45) (issue 16).
PRESCRIPTION_HYPERPARAMETERS = "prescription-hyperparameters.json"


def source_data_dir() -> Path | None:
    """``DATA_DIR`` when it is a source checkout's ``data/`` folder (to be regenerated and committed),
    else None: an installed package's files are not to be rewritten in place."""
    checkout = DATA_DIR.parent
    return DATA_DIR if (checkout / "pyproject.toml").is_file() and (checkout / "lensopt").is_dir() else None


def rewritable_data_file(name: str, option: str) -> Path:
    """The source checkout's ``data/<name>``, the default output of a command that regenerates it; a
    one-line ValueError naming ``option`` when this lensopt is installed (its shipped files are not
    rewritten in place: a pip-installed file rewritten no longer matches its record, and a partial
    table would break the commands that read it)."""
    folder = source_data_dir()
    if folder is None:
        raise ValueError(
            f"give {option} FILE: this lensopt is installed, not a source checkout, and its "
            f"shipped {DATA_DIR / name} is not rewritten"
        )
    return folder / name


def load_json(name: str) -> dict:
    path = DATA_DIR / name
    try:
        return json.loads(path.read_text())
    except FileNotFoundError:
        raise FileNotFoundError(
            f"reference data {path} is missing; regenerate it (see {DATA_DIR / 'README.md'}) or reinstall lensopt"
        ) from None
