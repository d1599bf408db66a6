"""Letters: one letter through one lens, named or not (:class:`lensopt.refraction.RefractionOptimizer`)."""

from __future__ import annotations

import numpy as np

from lensopt.modes.base import FeedbackMode
from lensopt.refraction.letters import RefractionOptimizer
from lensopt.refraction.trial import Trial

#: A letter is named correctly or not.
LETTER_ANSWERS = (True, False)


def _valid(query, answer) -> bool:
    return isinstance(answer, (bool, np.bool_))


def _respond(patient, trial: Trial) -> bool:
    return bool(patient.respond(trial.letter_logmar, trial.sphere_d, trial.cylinder_d, trial.axis_deg))


def _history_pair(record) -> tuple:
    return Trial(record.sphere_d, record.cylinder_d, record.letter_logmar), bool(record.correct)


MODE = FeedbackMode(
    kind="letters",
    title="refraction",
    optimizer_class=RefractionOptimizer,
    option_names=(
        "inference",
        "n_alternatives",
        "lapse",
        "stop",
        "reference_context",
        "hyperparameters",
        "beta",
    ),
    query_type=Trial,
    answers=LETTER_ANSWERS,
    valid_answer=_valid,
    respond=_respond,
    answer_options=(),
    history_pair=_history_pair,
    comparison=False,
    certainty=True,
)
