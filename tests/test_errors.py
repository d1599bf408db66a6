"""lensopt/errors.py: the optional part named for a module that is not installed."""

import re
import tomllib
from pathlib import Path

import pytest

from lensopt.errors import EXTRAS_BY_MODULE, missing_extra

REPO = Path(__file__).resolve().parents[1]

#: The requirement (pyproject.toml) that brings each module; pyglet comes with psychopy-lib.
REQUIREMENT_OF_MODULE = {
    "psychopy": "psychopy-lib",
    "pyglet": "psychopy-lib",
    "PyQt5": "PyQt5",
    "matplotlib": "matplotlib",
    "dask": "dask[distributed]",
    "distributed": "dask[distributed]",
    "esprima": "esprima",
}


def _message(module: str, command: str | None) -> str:
    return str(missing_extra(ModuleNotFoundError(f"No module named {module!r}", name=module), command))


def test_each_modules_parts_are_the_extras_of_pyproject_that_bring_it():
    extras = tomllib.loads((REPO / "pyproject.toml").read_text())["project"]["optional-dependencies"]
    assert set(EXTRAS_BY_MODULE) == set(REQUIREMENT_OF_MODULE)
    for module, parts in EXTRAS_BY_MODULE.items():
        bringing = {
            extra
            for extra, requirements in extras.items()
            if extra != "all"
            and any(re.split(r"[<>=!~;\s]", r)[0] == REQUIREMENT_OF_MODULE[module] for r in requirements)
        }
        assert set(parts) == bringing, module


@pytest.mark.parametrize(
    ("module", "command", "extra"),
    [
        ("matplotlib", "bench", "bench"),  # bench report: [bench] brings it without PyQt5
        ("matplotlib", "dashboard", "dashboard"),
        ("matplotlib", "print", "dashboard"),
        ("matplotlib", None, "dashboard"),
        ("PyQt5", "bench", "dashboard"),  # [bench] does not bring it
        ("dask", "bench", "bench"),
        ("psychopy", "run", "experiment"),
    ],
)
def test_the_part_named_is_the_commands_own_when_it_brings_the_module(module, command, extra):
    assert _message(module, command) == (
        f"{module} is not installed (lensopt's '{extra}' part): pip install 'lensopt[{extra}]'"
    )
