"""The feedback modes by session kind: ``registry`` and ``get_mode(kind)``.

Adding a mode is one module beside :mod:`lensopt.modes.letters` declaring its
:class:`~lensopt.modes.base.FeedbackMode`, and its line in :data:`registry`; then the store's table
for its records and the user interface parts (docs/feedback-modes.md, "Adding a feedback mode").
"""

from __future__ import annotations

import reprlib
from types import MappingProxyType

from lensopt.asktell import AskTellOptimizer
from lensopt.binary import optimizer as binary_optimizer
from lensopt.modes import duels, letters, rankings
from lensopt.modes.base import FeedbackMode
from lensopt.preference import copeland
from lensopt.preference import optimizer as preference_optimizer
from lensopt.ranking import optimizer as ranking_optimizer
from lensopt.refraction import acuity_law, prescription_duels, prescription_letters, prescription_rankings
from lensopt.refraction import duels as duel_search
from lensopt.refraction import rankings as ranking_search
from lensopt.refraction.letters import RefractionOptimizer

registry: MappingProxyType[str, FeedbackMode] = MappingProxyType(
    {mode.kind: mode for mode in (letters.MODE, duels.MODE, rankings.MODE)}
)
"""Session kind -> its feedback mode, in the order ``lensopt sessions`` documents the kinds."""

#: The kinds of the registry, in order.
KINDS = tuple(registry)


def get_mode(kind: str) -> FeedbackMode:
    """The feedback mode of session kind ``kind``; an unknown kind is a one-line ValueError."""
    try:
        return registry[kind]
    except (KeyError, TypeError):
        raise ValueError(f"unknown feedback mode {kind!r}; the known kinds are {', '.join(KINDS)}") from None


def session_settings(info) -> dict:
    """The optimizer settings the stored session ``info`` (a :class:`lensopt.store.SessionInfo`: its
    ``kind``, ``optimizer_settings`` and ``created_at``) ran with: those it stored, with what it ran
    with but did not store, which its creation time tells (a full-prescription comparison's trust
    centre: :meth:`lensopt.refraction.prescription_comparisons.PrescriptionComparisons.settings_as_ran`).
    Every rebuild of a stored session's optimizer starts from these; where they are a guess (two
    ways it may have run), a resume, the dashboard and the record let its trials choose
    (:func:`lensopt.modes.as_ran.session_as_ran`)."""
    settings = info.optimizer_settings
    return get_mode(info.kind).stored_optimizer_class(settings).settings_as_ran(settings, info.created_at)


#: lensopt's optimizers by the ``"format"`` of the states they save (``to_state()``): the refraction
#: optimizers, then the model families' own (the contextual binary optimizer on any box, the
#: benchmark-level duel, Copeland and ranking optimizers).
STATE_CLASSES: MappingProxyType[str, type[AskTellOptimizer]] = MappingProxyType(
    {
        "lensopt.refraction-state/1": RefractionOptimizer,
        acuity_law.STATE_FORMAT: acuity_law.AcuityLawOptimizer,
        prescription_letters.STATE_FORMAT: prescription_letters.PrescriptionOptimizer,
        duel_search.STATE_FORMAT: duel_search.DuelRefractionOptimizer,
        prescription_duels.STATE_FORMAT: prescription_duels.PrescriptionDuelOptimizer,
        ranking_search.STATE_FORMAT: ranking_search.RankingRefractionOptimizer,
        prescription_rankings.STATE_FORMAT: prescription_rankings.PrescriptionRankingOptimizer,
        binary_optimizer.STATE_FORMAT: binary_optimizer.ContextualOptimizer,
        preference_optimizer.STATE_FORMAT: preference_optimizer.PreferenceOptimizer,
        copeland.STATE_FORMAT: copeland.CopelandOptimizer,
        ranking_optimizer.STATE_FORMAT: ranking_optimizer.RankingOptimizer,
    }
)


def feedback_kind(optimizer) -> str | None:
    """The session kind of a refraction ``optimizer`` (``"letters"``, ``"duel"``, ``"ranking"``): the
    mode that would rebuild an optimizer of its class from its settings; None for an optimizer that
    is not one of lensopt's refractions (a benchmark function's, one without ``settings_dict()``)."""
    settings_dict = getattr(optimizer, "settings_dict", None)
    settings = settings_dict() if callable(settings_dict) else None
    if not isinstance(settings, dict):
        return None
    return next((m.kind for m in registry.values() if isinstance(optimizer, m.stored_optimizer_class(settings))), None)


def load_state(state: dict) -> AskTellOptimizer:
    """Any of lensopt's optimizers rebuilt from the state it saved (its ``to_state()``, read back from
    JSON), whichever class wrote it: the state's ``"format"`` names it (:data:`STATE_CLASSES`), and
    that class's ``from_state`` checks the rest. Another format is a one-line ValueError."""
    found = state.get("format") if isinstance(state, dict) else None
    cls = STATE_CLASSES.get(found) if isinstance(found, str) else None
    if cls is None:
        raise ValueError(
            f"not a saved lensopt optimizer state (format {reprlib.repr(found)}); the formats are "
            f"{', '.join(STATE_CLASSES)} (each optimizer's to_state())"
        )
    return cls.from_state(state)
