"""Errors a person can act on.

Front ends (the CLI, the experiment, the dashboard) catch :class:`LensoptError` and show its
message as one line, without a traceback. The message names the problem and how to fix it.
"""


class LensoptError(Exception):
    """A problem with the user's input or environment, explained in one line."""

    exit_code = 2


class ProtocolError(LensoptError):
    """A protocol file is missing, unreadable or invalid."""


class StoreError(LensoptError):
    """The session database cannot be used (locked, corrupt, newer schema, missing session)."""


class CalibrationError(LensoptError):
    """The screen set-up cannot render the requested letter sizes faithfully."""


#: The optional parts of lensopt (``pip install 'lensopt[EXTRA]'``, pyproject.toml's
#: [project.optional-dependencies]) that bring each top-level module, the one named by default first.
EXTRAS_BY_MODULE: dict[str, tuple[str, ...]] = {
    "psychopy": ("experiment", "builder"),
    "pyglet": ("experiment", "builder"),
    "PyQt5": ("dashboard",),
    "matplotlib": ("dashboard", "bench"),
    "dask": ("bench",),
    "distributed": ("bench",),
    "esprima": ("builder",),
}


def missing_extra(exc: ModuleNotFoundError, command: str | None = None) -> LensoptError | None:
    """The one-line error for a module of an optional part that is not installed (a plain ``pip
    install lensopt`` has the core only): which part, and the command that installs it; None for a
    module that is no optional part's (a broken installation: its traceback is the report).

    The part named is the command's own (``lensopt bench ...``: 'bench') when it brings the module,
    so that ``bench report`` asks for matplotlib through [bench], not through [dashboard] (PyQt5)."""
    module = (exc.name or "").split(".")[0]
    extras = EXTRAS_BY_MODULE.get(module)
    if not extras:
        return None
    extra = command if command in extras else extras[0]
    return LensoptError(f"{module} is not installed (lensopt's '{extra}' part): pip install 'lensopt[{extra}]'")
