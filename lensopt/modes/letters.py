"""Letters: one letter through one lens, named or not.

Two searches share this mode (and the store's ``trials`` table): the two-parameter search of
sphere and cylinder (:class:`lensopt.refraction.RefractionOptimizer`, the default) and the full
prescription from a starting refraction, sphere, cylinder and axis
(:class:`lensopt.refraction.prescription_letters.PrescriptionOptimizer`), whose stored settings
carry ``"search": "prescription"`` (:func:`optimizer_class_for`) and whose trials carry an axis.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from lensopt.modes.base import FeedbackMode
from lensopt.refraction.acuity_law import AcuityLawOptimizer
from lensopt.refraction.acuity_law_settings import ACUITY_LAW_OPTIONS, ACUITY_LAW_RULE
from lensopt.refraction.letters import RefractionOptimizer
from lensopt.refraction.prescription_letters import PRESCRIPTION_SEARCH, PrescriptionOptimizer
from lensopt.refraction.trial import Trial, TrialHistory

#: A letter is named correctly or not.
LETTER_ANSWERS = (True, False)


def is_prescription(settings: dict) -> bool:
    """Whether stored optimizer ``settings`` are the full prescription's (``"search": "prescription"``)."""
    return settings.get("search") == PRESCRIPTION_SEARCH


def optimizer_class_for(settings: dict) -> type[TrialHistory]:
    """The letter optimizer that wrote ``settings``: ``PrescriptionOptimizer``, ``AcuityLawOptimizer``
    (rule ``"acuity-law"``) or ``RefractionOptimizer``."""
    if is_prescription(settings):
        return PrescriptionOptimizer
    return AcuityLawOptimizer if settings.get("rule") == ACUITY_LAW_RULE else RefractionOptimizer


def _valid(query, answer) -> bool:
    return isinstance(answer, (bool, np.bool_))


def _respond(patient, trial: Trial) -> bool:
    return bool(patient.respond(trial.letter_logmar, trial.sphere_d, trial.cylinder_d, trial.axis_deg))


def _history_pair(record) -> tuple:
    axis_deg = getattr(record, "axis_deg", None)
    return Trial(record.sphere_d, record.cylinder_d, record.letter_logmar, axis_deg), bool(record.correct)


@dataclass(frozen=True)
class LetterMode(FeedbackMode):
    """The letters mode: rebuilds the optimizer that wrote the stored settings (either search)."""

    def new_optimizer(self, options=None, **common):
        """A new letter optimizer: the acuity-law optimizer for ``rule="acuity-law"`` (given the options it
        takes; a GP option set to anything but its default is an error), else the GP optimizer."""
        if common.get("rule") != ACUITY_LAW_RULE:
            return super().new_optimizer(options, **common)
        options = dict(options or {})
        given = sorted(k for k in ("hyperparameters", "beta") if options.get(k) is not None)
        if given:
            raise ValueError(
                f"{' and '.join(given)} {'set' if len(given) > 1 else 'sets'} the GP letter rules only, not {ACUITY_LAW_RULE}; leave "
                f"{'them' if len(given) > 1 else 'it'} out or choose a GP rule (e.g. ucb-ald)"
            )
        common.pop("n_initial", None)  # no random start: its first trial is already the most informative
        return AcuityLawOptimizer(**common, **{k: options[k] for k in ACUITY_LAW_OPTIONS if k in options})

    def stored_optimizer_class(self, settings: dict) -> type[TrialHistory]:
        """Two-parameter or full prescription, GP or acuity law, as the settings say (:func:`optimizer_class_for`)."""
        return optimizer_class_for(settings)


MODE = LetterMode(
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
