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
