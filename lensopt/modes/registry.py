"""The feedback modes by session kind: ``registry`` and ``get_mode(kind)``.

Adding a mode is one module beside :mod:`lensopt.modes.letters` declaring its
:class:`~lensopt.modes.base.FeedbackMode`, and its line in :data:`registry`; then the store's table
for its records and the user interface parts (docs/feedback-modes.md, "Adding a feedback mode").
"""

from __future__ import annotations

from types import MappingProxyType

from lensopt.modes import duels, letters, rankings
from lensopt.modes.base import FeedbackMode

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
    Every rebuild of a stored session's optimizer starts from these: a resume, the dashboard, the record."""
    settings = info.optimizer_settings
    return get_mode(info.kind).stored_optimizer_class(settings).settings_as_ran(settings, info.created_at)
