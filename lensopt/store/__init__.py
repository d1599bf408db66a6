"""The session store: SQLite rows and JSON text for sessions and every answered trial.

``SessionStore`` writes and reads the database, ``TrialRecord`` (a letter trial),
``DuelTrialRecord`` (a duel), ``RankingTrialRecord`` (a ranking), ``ResultRecord`` (the prescription a
session reports) and ``SessionInfo`` are the records (``DamagedSession``: a session another program
changed so that it cannot be read, :meth:`SessionStore.listing`),
:mod:`lensopt.store.export` writes sessions as tidy CSV (one column per value,
:mod:`lensopt.store.tidy`), PsychoPy's wide CSV or JSON. sqlite3 from the standard library
only; nothing is ever pickled.
"""

from lensopt.store.budget import StoredBudget, fixed_trials_text, stored_budget
from lensopt.store.connection import DatabaseLockedError, ReadOnlyStoreError
from lensopt.store.database import (
    DEFAULT_TIMEOUT_S,
    DamagedSessionError,
    DuplicateTrialError,
    MissingSessionError,
    SessionStore,
    WrongKindError,
)
from lensopt.store.db_path import check_not_the_database, db_option, default_db_path, resume_command
from lensopt.store.records import (
    DUEL_ANSWERS,
    DUEL_KIND,
    EYES,
    KINDS,
    LETTERS_KIND,
    RANKING_KIND,
    STATUSES,
    DuelTrialRecord,
    RankingTrialRecord,
    TrialRecord,
)
from lensopt.store.schema import (
    SCHEMA_VERSION,
    NewerSchemaError,
    NotALensoptDatabaseError,
    OlderSchemaError,
)
from lensopt.store.session_records import (
    ENDED,
    EVENTS,
    NOTED,
    RESUMED,
    STARTED,
    ContinueAdvice,
    DamagedSession,
    ResultRecord,
    SessionEvent,
    SessionInfo,
    continue_advice,
    resumed_budget,
    run_window_options,
)
from lensopt.store.verdict import (
    stored_confidence_target,
    stored_fixed_design,
    stored_stop_confidence,
    stored_withheld_reason,
)

__all__ = [
    "DEFAULT_TIMEOUT_S",
    "DUEL_ANSWERS",
    "DUEL_KIND",
    "ENDED",
    "EVENTS",
    "EYES",
    "KINDS",
    "LETTERS_KIND",
    "NOTED",
    "RANKING_KIND",
    "RESUMED",
    "SCHEMA_VERSION",
    "STARTED",
    "STATUSES",
    "ContinueAdvice",
    "DamagedSession",
    "DamagedSessionError",
    "DatabaseLockedError",
    "DuelTrialRecord",
    "DuplicateTrialError",
    "MissingSessionError",
    "NewerSchemaError",
    "NotALensoptDatabaseError",
    "OlderSchemaError",
    "RankingTrialRecord",
    "ReadOnlyStoreError",
    "ResultRecord",
    "SessionEvent",
    "SessionInfo",
    "SessionStore",
    "StoredBudget",
    "TrialRecord",
    "WrongKindError",
    "check_not_the_database",
    "continue_advice",
    "db_option",
    "default_db_path",
    "fixed_trials_text",
    "resume_command",
    "resumed_budget",
    "run_window_options",
    "stored_budget",
    "stored_confidence_target",
    "stored_fixed_design",
    "stored_stop_confidence",
    "stored_withheld_reason",
]
