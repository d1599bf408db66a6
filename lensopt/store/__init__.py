"""The session store: SQLite rows and JSON text for sessions and every answered trial.

``SessionStore`` writes and reads the database, ``TrialRecord``/``SessionInfo`` are the records,
:mod:`lensopt.store.export` writes a session as CSV or JSON. sqlite3 from the standard library
only; nothing is ever pickled.
"""

from lensopt.store.database import (
    DEFAULT_TIMEOUT_S,
    DatabaseLockedError,
    DuplicateTrialError,
    MissingSessionError,
    ReadOnlyStoreError,
    SessionStore,
    default_db_path,
)
from lensopt.store.records import LETTERS_KIND, STATUSES, SessionInfo, TrialRecord
from lensopt.store.schema import (
    SCHEMA_VERSION,
    NewerSchemaError,
    NotALensoptDatabaseError,
    OlderSchemaError,
)

__all__ = [
    "SessionStore",
    "TrialRecord",
    "SessionInfo",
    "default_db_path",
    "DEFAULT_TIMEOUT_S",
    "LETTERS_KIND",
    "STATUSES",
    "SCHEMA_VERSION",
    "DatabaseLockedError",
    "DuplicateTrialError",
    "MissingSessionError",
    "ReadOnlyStoreError",
    "NewerSchemaError",
    "NotALensoptDatabaseError",
    "OlderSchemaError",
]
