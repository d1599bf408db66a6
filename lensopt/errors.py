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


#: The optional parts of lensopt (``pip install 'lensopt[EXTRA]'``) and the top-level modules they bring.
EXTRAS_BY_MODULE = {
    "psychopy": "experiment",
    "pyglet": "experiment",
    "PyQt5": "dashboard",
    "matplotlib": "dashboard",
    "dask": "bench",
    "distributed": "bench",
    "esprima": "builder",
}


def missing_extra(exc: ModuleNotFoundError) -> LensoptError | None:
    """The one-line error for a module of an optional part that is not installed (a plain ``pip
    install lensopt`` has the core only): which part, and the command that installs it; None for a
    module that is no optional part's (a broken installation: its traceback is the report)."""
    module = (exc.name or "").split(".")[0]
    extra = EXTRAS_BY_MODULE.get(module)
    if extra is None:
        return None
    return LensoptError(f"{module} is not installed (lensopt's '{extra}' part): pip install 'lensopt[{extra}]'")
