"""Whether a two-parameter search's lens is the most-plus one, said under it on the closing console,
in the log and in a PsychoPy script's result (:func:`accommodation_note`) and on the dashboard's
summary (:data:`MAY_BE_TOO_MINUS`, :func:`dashboard_advice`) — beside :mod:`lensopt.refraction.shown`,
whose warnings the console and the dashboard share the same way.

An eye that accommodates sees as well through every lens up to its amplitude more minus than its
correction, so its acuity has a plateau on the minus side and the lens to prescribe is the
plateau's most-plus end. The full prescription ends there (its rules lean to plus,
docs/prescription.md), and so does the acuity-law optimizer told the amplitudes the eye may have
(``[optimizer] accommodation_d``: its lens is the relaxed eye's). Every other two-parameter search
— the GP letter rules, the acuity law alone, the duels and rankings without a start — takes the lens
of best acuity, which for such an eye lies anywhere on the plateau: on held-out eyes with 1–6 D of
accommodation they ended a median of 0.5–1.9 D too minus (docs/never-lost.md, "When the eye
accommodates"). :func:`accommodation_note` says which of the two a session's lens is.
"""

from __future__ import annotations

from lensopt.refraction.acuity_law_settings import (
    ACUITY_LAW_RULE,
    RELAXED_LENS,
    accommodation_phrase,
    modelled_accommodation_d,
    said_not_to_accommodate,
)

#: The dashboard summary's row for a sphere-and-cylinder search whose model has no accommodation
#: (:func:`dashboard_advice`): what it may be, and what to do.
MAY_BE_TOO_MINUS = "the lens may be too minus if the eye accommodates"
CLEAREST_NOT_MOST_PLUS = "it takes the clearest lens, not the most plus"
MOST_PLUS_ADVICE = f"{CLEAREST_NOT_MOST_PLUS}: push plus on the chart, or search from a start"
#: The acuity law's own remedy: the amplitudes the eye may have, in its protocol.
ACUITY_LAW_REMEDY = "[optimizer] accommodation_d"
#: What the console says of the acuity law told ``accommodation_d = [0]`` (cycloplegia, presbyopia).
TOLD_NO_ACCOMMODATION = "the model was told the eye does not accommodate (accommodation_d = [0])"

#: The shipped protocol that searches the full prescription from a start, by feedback mode.
PRESCRIPTION_PROTOCOLS = {
    "letters": "clinical-prescription",
    "duel": "clinical-prescription-duel",
    "ranking": "clinical-prescription-ranking",
}


def accommodation_note(optimizer, feedback_mode: str) -> str | None:
    """What the lens of a two-parameter search (``optimizer``, of feedback ``feedback_mode``) is for an
    eye that accommodates (:func:`settings_note` of its ``settings_dict()``); None for an optimizer
    that does not give its settings."""
    settings_dict = getattr(optimizer, "settings_dict", None)
    settings = settings_dict() if callable(settings_dict) else None
    return settings_note(settings, feedback_mode) if isinstance(settings, dict) else None


def _two_parameter(settings) -> bool:
    """Whether optimizer ``settings`` are a search of sphere and cylinder (lensopt's letter, duel and
    ranking refractions; not the full prescription, not a benchmark function's optimizer)."""
    return isinstance(settings, dict) and "sphere_bounds_d" in settings and settings.get("search") != "prescription"


def settings_note(settings: dict, feedback_mode: str) -> str | None:
    """What the lens of a two-parameter search of optimizer settings ``settings`` (feedback
    ``feedback_mode``) is for an eye that accommodates: the relaxed eye's, when its model allowed for
    accommodation; else a warning that it need not be the most-plus lens, and what to do. None for
    the full prescription (``settings["search"] == "prescription"``), which ends at the most-plus
    lens, and for settings that are not a refraction's (no ``sphere_bounds_d``). Told the eye does
    not accommodate (``accommodation_d = [0]`` written, :func:`said_not_to_accommodate`), that its
    lens of best acuity is its most-plus one."""
    if not _two_parameter(settings):
        return None
    amplitudes_d = modelled_accommodation_d(settings)
    if amplitudes_d is not None:  # the lens is not the most minus one the eye reads as well through
        return f"the model allowed for {accommodation_phrase(amplitudes_d)}: this is the relaxed eye's lens, {RELAXED_LENS}"
    if said_not_to_accommodate(settings):
        return f"{TOLD_NO_ACCOMMODATION}: its lens of best acuity is its most-plus lens"
    remedy = (
        f"tell the model the eye may accommodate ({ACUITY_LAW_REMEDY}, as clinical-refraction does)"
        if settings.get("rule") == ACUITY_LAW_RULE
        else "search the full prescription from a start "
        f"({PRESCRIPTION_PROTOCOLS.get(feedback_mode, 'clinical-prescription')} --start RX)"
    )
    return (
        "may not be the most-plus lens: an eye that accommodates sees as well through more minus lenses, and this "
        f"search takes the lens of best acuity; push plus on the chart, or {remedy}"
    )


def dashboard_advice(settings: dict) -> str | None:
    """The note under the dashboard summary's "Accommodation" row (:data:`MAY_BE_TOO_MINUS`) of a
    two-parameter search whose model has no accommodation, shorter than :func:`settings_note`; None
    when the session's lens is the most-plus one (the full prescription, the acuity law told the
    amplitudes, or told the eye does not accommodate) or the settings are not a refraction's."""
    told = modelled_accommodation_d(settings) is not None or said_not_to_accommodate(settings)
    if not _two_parameter(settings) or told:  # told: the protocol said what the eye does, no warning
        return None
    if settings.get("rule") == ACUITY_LAW_RULE:
        return f"{CLEAREST_NOT_MOST_PLUS}: push plus on the chart, or set {ACUITY_LAW_REMEDY}"
    return MOST_PLUS_ADVICE
