"""The tables of an experiment protocol, one frozen dataclass each.

Every section validates its own fields in ``__post_init__`` and raises ``ValueError`` with a
one-line message naming the field and the allowed values; :mod:`lensopt.experiment.protocol`
reads the TOML file, builds the sections, adds the file name to the message and checks the
fields that depend on each other.

Here: ``[protocol]`` and the tables that set up the screen and the person at the keys
(``[calibration]``, ``[display]``, ``[session]``, ``[screens]``, ``[timing]``, ``[feedback]``,
``[breaks]``, ``[keys]``, ``[simulated]``), with the checks only they use (``_pixel_pair``,
``_shared_key``; the others are in :mod:`lensopt.experiment.protocol_fields`). The tables that
configure the search (``[optimizer]``, ``[stop]``, ``[start]``, ``[lens]``, ``[letters]``,
``[duel]``, ``[ranking]``) are in :mod:`lensopt.experiment.search_sections`; its tables and allowed
values are re-exported here, so every table can be imported from this module.
"""

from __future__ import annotations

import dataclasses
import re
from dataclasses import dataclass

from lensopt.experiment.key_names import PSYCHOPY_KEY_NAMES, key_name_problem
from lensopt.experiment.protocol_fields import _choice, _flag, _number, _rate_below_half
from lensopt.experiment.search_sections import (
    CYLINDER_CONVENTIONS,
    INFERENCES,
    MAX_TRIALS,
    MISSING_START_MESSAGE,
    RANKING_LENSES,
    DuelSection,
    LensSection,
    LettersSection,
    OptimizerSection,
    RankingSection,
    StartSection,
    StopSection,
    show_two_parameter_lens,
)
from lensopt.observer.patient import DEFAULT_PATIENT_AXIS_DEG
from lensopt.refraction.acuity_text import logmar_text
from lensopt.refraction.lens import Lens, show_lens, two_parameter_lens_text
from lensopt.refraction.trial import DUEL_ANSWERS

# the search's tables and values, re-exported: every table can be imported from here
__all__ = [
    "CYLINDER_CONVENTIONS",
    "DUEL_ANSWER_KEYS",
    "FEEDBACK_MODES",
    "INFERENCES",
    "MAX_LENS_KEYS",
    "MAX_TRIALS",
    "MISSING_START_MESSAGE",
    "OBSERVERS",
    "RANKING_LENSES",
    "SESSION_EYES",
    "BreaksSection",
    "CalibrationSection",
    "DisplaySection",
    "DuelSection",
    "FeedbackSection",
    "KeysSection",
    "LensSection",
    "LettersSection",
    "OptimizerSection",
    "ProtocolSection",
    "RankingSection",
    "ScreensSection",
    "SessionSection",
    "SimulatedSection",
    "StartSection",
    "StopSection",
    "TimingSection",
    "show_lens",
    "show_two_parameter_lens",
]

OBSERVERS = ("keyboard", "simulated")
"""Who answers: a person at the keyboard, or a simulated patient."""

FEEDBACK_MODES = ("letters", "duel", "ranking")
"""What the patient answers: name one letter (``letters``), which of two lenses makes a line of
letters clearer, "one or two — or the same?" (``duel``), or the order of three or four lenses,
clearest first (``ranking``)."""

MAX_LENS_KEYS = RANKING_LENSES[-1]
"""``[keys] lenses`` names at most one key per lens of the largest ranking."""

DUEL_ANSWER_KEYS = DUEL_ANSWERS
"""The ``[keys]`` fields answering a duel: one per duel answer (``lensopt.refraction.trial.DUEL_ANSWERS``)."""

#: The shape of a key name, checked wherever ``[keys]`` is built (a stored session's protocol too);
#: the names themselves are checked where a protocol file is read (:meth:`KeysSection.unknown_key_problem`).
_KEY_NAME = re.compile(r"^[a-z0-9_]{1,20}$")
#: The ``[keys]`` fields holding one key each (``lenses`` holds several).
KEY_FIELDS = ("pass_key", "pause", "confirm", "quit", "undo", "lens_set", "note", *DUEL_ANSWER_KEYS)


@dataclass(frozen=True)
class ProtocolSection:
    name: str
    observer: str
    description: str = ""
    feedback: str = "letters"

    def __post_init__(self):
        if not isinstance(self.name, str) or not self.name.strip():
            raise ValueError(f"name must be a non-empty string, got {self.name!r}")
        if not isinstance(self.description, str):
            raise ValueError(f"description must be text, got {self.description!r}")
        _choice(self, "observer", OBSERVERS)
        _choice(self, "feedback", FEEDBACK_MODES)


@dataclass(frozen=True)
class CalibrationSection:
    """The screen: its numbers, or a PsychoPy Monitor Center ``monitor`` (``lensopt calibrate``),
    whose viewing distance is used unless ``distance_cm`` is given (0: the monitor's)."""

    distance_cm: float = 0.0
    monitor: str = ""
    screen_width_cm: float = 0.0
    screen_width_px: int = 0
    screen_height_px: int = 0
    min_stroke_px: float = 1.0

    def __post_init__(self):
        if not self.monitor and isinstance(self.distance_cm, (int, float)) and self.distance_cm == 0:
            raise ValueError(
                "distance_cm must be the viewing distance in cm (e.g. 300); 0 means the monitor's own, "
                "which needs monitor = NAME (lensopt calibrate)"
            )
        if not (self.monitor and isinstance(self.monitor, str) and self.distance_cm == 0):
            _number(self, "distance_cm", 5.0, 100_000.0)
        _number(self, "min_stroke_px", 0.1, 100.0)
        if not isinstance(self.monitor, str):
            raise ValueError(f"monitor must be a PsychoPy Monitor Center name, got {self.monitor!r}")
        if not self.monitor:
            for name, what in (
                ("screen_width_cm", "the screen's visible width in cm (e.g. 52.7)"),
                ("screen_width_px", "its width in pixels (e.g. 1920)"),
                ("screen_height_px", "its height in pixels (e.g. 1080)"),
            ):  # 0 is what a key left out reads as: said as missing, not as "got 0.0"
                if getattr(self, name) == 0 and not isinstance(getattr(self, name), bool):
                    raise ValueError(f"{name} is missing (or 0): give {what}, or monitor = NAME (lensopt calibrate)")
            _number(self, "screen_width_cm", 1.0, 10_000.0)
            _number(self, "screen_width_px", 16, 100_000, integer=True)
            _number(self, "screen_height_px", 16, 100_000, integer=True)


@dataclass(frozen=True)
class DisplaySection:
    """The patient's window. ``mirror``: flipped left–right, for a lane whose patient reads the
    screen in a mirror (FrACT's mirror mode); the clinician's console is never mirrored."""

    fullscreen: bool = False
    window_size_px: tuple[int, int] = (1280, 720)
    mirror: bool = False

    def __post_init__(self):
        _flag(self, "fullscreen")
        _flag(self, "mirror")
        v = self.window_size_px
        if (
            not isinstance(v, (list, tuple))
            or len(v) != 2
            or not all(isinstance(x, int) and not isinstance(x, bool) and 64 <= x <= 16384 for x in v)
        ):
            raise ValueError(f"window_size_px must be [width, height], whole pixels in [64, 16384], got {v!r}")
        object.__setattr__(self, "window_size_px", tuple(v))


def _pixel_pair(obj, name, low, high, *, optional=False):
    value = getattr(obj, name)
    if optional and value is None:
        return
    if (
        not isinstance(value, (list, tuple))
        or len(value) != 2
        or not all(isinstance(x, int) and not isinstance(x, bool) and low <= x <= high for x in value)
    ):
        raise ValueError(f"{name} must be [x, y], whole pixels in [{low}, {high}], got {value!r}")
    object.__setattr__(obj, name, tuple(value))


SESSION_EYES = ("OD", "OS", "OU")
"""What ``[session] eye`` (``--eye``) may name: the right eye, the left eye, or both (OD then OS)."""


@dataclass(frozen=True)
class SessionSection:
    """What the session tests: ``eye`` ``"OD"``, ``"OS"`` or ``"OU"`` (both: OD, then OS, each its
    own search; in any case, stored in capitals), or left out (no eye named, as before eyes were stored)."""

    eye: str | None = None

    def __post_init__(self):
        if isinstance(self.eye, str):  # "od" is OD
            object.__setattr__(self, "eye", self.eye.strip().upper())
        if self.eye is not None and self.eye not in SESSION_EYES:
            raise ValueError(f"eye must be one of {', '.join(map(repr, SESSION_EYES))}, got {self.eye!r}")

    @property
    def eyes(self) -> tuple[str | None, ...]:
        """The eyes searched one after the other: ``("OD", "OS")`` for OU, ``(None,)`` without an eye."""
        return ("OD", "OS") if self.eye == "OU" else (self.eye,)


@dataclass(frozen=True)
class ScreensSection:
    """Where the patient's window and the clinician's console go (:mod:`lensopt.experiment.console`).

    ``patient`` and ``console``: screen numbers (0 the first). ``patient_pos_px``: the patient
    window's top-left corner on its screen (a windowed display; default centred, or the top left when
    the console shares the screen). ``console_pos_px``: the console's (default: right of the patient
    window on a shared screen, else the top left of its own); ``console_size_px`` its size. A
    console opens when the protocol prompts the clinician (``[lens] prompt = true``)."""

    patient: int = 0
    console: int = 0
    patient_pos_px: tuple[int, int] | None = None
    console_pos_px: tuple[int, int] | None = None
    console_size_px: tuple[int, int] = (900, 640)

    def __post_init__(self):
        _number(self, "patient", 0, 15, integer=True)
        _number(self, "console", 0, 15, integer=True)
        _pixel_pair(self, "patient_pos_px", 0, 32768, optional=True)
        _pixel_pair(self, "console_pos_px", 0, 32768, optional=True)
        _pixel_pair(self, "console_size_px", 320, 16384)


#: The longest each ``[timing]`` field may ask, in seconds, in a protocol file: a fixation cross,
#: a feedback screen, a pause between trials or a simulated look of minutes is a typo
#: (``feedback_s = 500``), and a letter shown or awaited for more than two minutes is one too.
MAX_TIMING_S = {
    "fixation_s": 10.0,
    "letter_s": 120.0,
    "response_timeout_s": 120.0,
    "feedback_s": 10.0,
    "iti_s": 10.0,
    "simulated_response_s": 10.0,
}


@dataclass(frozen=True)
class TimingSection:
    fixation_s: float
    letter_s: float
    response_timeout_s: float
    feedback_s: float
    iti_s: float
    simulated_response_s: float = 0.3

    def __post_init__(self):
        for name, high in MAX_TIMING_S.items():
            try:  # up to 600 s here: a session stored before the file's bounds keeps resuming
                _number(self, name, 0.0, 600.0)
            except ValueError:  # a negative, NaN or infinite value: the file's range, not 600 s
                value = getattr(self, name)
                raise ValueError(f"{name} must be a number of seconds in [0, {high:g}], got {value!r}") from None

    def range_problem(self) -> str | None:
        """The one-line problem of a field longer than :data:`MAX_TIMING_S` allows, else None.
        Checked where a protocol file is read (:func:`lensopt.experiment.protocol.load_protocol`),
        not here: a session stored before these bounds (up to 600 s) keeps resuming as it ran."""
        for name, high in MAX_TIMING_S.items():
            value = getattr(self, name)
            if value > high:
                return f"timing.{name} must be a number of seconds in [0, {high:g}], got {value:g}"
        return None


@dataclass(frozen=True)
class FeedbackSection:
    enabled: bool

    def __post_init__(self):
        _flag(self, "enabled")


@dataclass(frozen=True)
class BreaksSection:
    every_trials: int

    def __post_init__(self):
        _number(self, "every_trials", 0, 5000, integer=True)


def _shared_key(keys, names, may_share=(), prefix="") -> str | None:
    """The one-line problem if two of the ``names`` fields of ``keys`` have the same key, else None."""
    users: dict[object, list[str]] = {}
    for name in names:
        users.setdefault(getattr(keys, name), []).append(prefix + name)
    for key, sharing in users.items():
        if len(sharing) > 1 and {u.removeprefix(prefix) for u in sharing} not in may_share:
            return f"{' and '.join(sharing)} cannot share the key {key!r}"
    return None


@dataclass(frozen=True)
class KeysSection:
    """Response keys. ``pass_key`` answers letter trials; ``first``/``second``/``same`` answer
    duels (checked against the other keys only in a duel protocol); ``lenses`` name the lenses of a
    ranking, lens 1 first (the first ``[ranking] lenses`` of them are used, and checked against the
    other keys, only in a ranking protocol). In a letter session ``undo`` (while a letter is shown
    or at the lens prompt) voids the last answer; at the lens prompt ``lens_set`` lets the clinician
    type the lens actually set and ``note`` a note (they may be letter keys: no letter is shown then)."""

    pass_key: str = "space"
    pause: str = "escape"
    confirm: str = "space"
    quit: str = "q"
    first: str = "1"
    second: str = "2"
    same: str = "s"
    lenses: tuple[str, ...] = ("1", "2", "3", "4")
    undo: str = "backspace"
    lens_set: str = "l"
    note: str = "n"

    def __post_init__(self):
        for name in KEY_FIELDS:
            value = getattr(self, name)
            if not isinstance(value, str) or not _KEY_NAME.match(value):
                raise ValueError(key_name_problem(name, value))
            if name in ("pass_key", "pause", "undo") and len(value) == 1 and value.isalpha():
                raise ValueError(
                    f"{name} is active while a letter is shown, so it cannot be a letter key, got {value!r}"
                )
        problem = _shared_key(
            self, ("pass_key", "pause", "confirm", "quit"), may_share=({"pass_key", "confirm"},)
        )  # pass and confirm never compete
        problem = problem or _shared_key(self, ("pass_key", "pause", "undo"))  # while a letter is shown
        problem = problem or _shared_key(self, ("confirm", "pause", "undo", "lens_set", "note"))  # at the lens prompt
        if problem:
            raise ValueError(problem)
        lenses = self.lenses
        if (
            not isinstance(lenses, (list, tuple))
            or not 2 <= len(lenses) <= MAX_LENS_KEYS
            or not all(isinstance(k, str) and _KEY_NAME.match(k) for k in lenses)
        ):
            raise ValueError(
                f"lenses must be 2 to {MAX_LENS_KEYS} PsychoPy key names, one per lens "
                f'(lens 1 first), such as ["1", "2", "3"], got {lenses!r}'
            )
        repeated = next((k for i, k in enumerate(lenses) if k in lenses[:i]), None)
        if repeated is not None:
            raise ValueError(f"lenses names the key {repeated!r} twice; each lens needs a key of its own")
        object.__setattr__(self, "lenses", tuple(lenses))

    def unknown_key_problem(self) -> str | None:
        """The one-line problem of a key no keyboard reports (``quit = "notakey"`` left the clinician
        no quit key), else None. Checked where a protocol file is read
        (:func:`lensopt.experiment.protocol.load_protocol`), not here: a session stored before the
        names were checked keeps resuming with the protocol it ran (its other keys still work)."""
        for name in KEY_FIELDS:
            problem = key_name_problem(f"keys.{name}", getattr(self, name))
            if problem:
                return problem
        unknown = [k for k in self.lenses if k not in PSYCHOPY_KEY_NAMES]
        if unknown:
            return (
                f"keys.lenses must be 2 to {MAX_LENS_KEYS} PsychoPy key names, one per lens (lens 1 first), "
                f'such as ["1", "2", "3"], got {list(self.lenses)!r} ({unknown[0]!r} is no PsychoPy key name)'
            )
        return None


@dataclass(frozen=True)
class SimulatedSection:
    sphere_d: float = -1.25
    cylinder_d: float = -0.75
    slope: float = 5.0
    lapse: float = 0.0
    va_best_logmar: float = 0.0
    tie_threshold: float = 0.0
    axis_deg: float = 0.0
    accommodation_d: float = 0.0

    def __post_init__(self):
        _number(self, "sphere_d", -20.0, 20.0)
        _number(self, "cylinder_d", -10.0, 10.0)
        _number(self, "axis_deg", 0.0, 180.0)  # 0: no axis (the two-parameter patient, aligned lenses)
        _number(self, "accommodation_d", 0.0, 20.0)
        _number(self, "slope", 0.1, 100.0)
        _rate_below_half(self, "lapse")  # as lensopt simulate --lapse: a patient lapsing half the time answers nothing
        _number(self, "va_best_logmar", -0.5, 1.5)
        _number(self, "tie_threshold", 0.0, 20.0)  # duels: "same" below this utility difference

    def patient_settings(self) -> dict:
        """Keyword arguments of :class:`lensopt.observer.SimulatedPatient` (not ``tie_threshold``,
        which is an argument of its ``duel_answer``; ``axis_deg`` 0 is the patient without an axis,
        whose correction lies along the lens's cylinder in the two-parameter search)."""
        settings = dataclasses.asdict(self)
        del settings["tie_threshold"]
        settings["axis_deg"] = settings["axis_deg"] or None
        return settings

    def describe(self, lens=None, full_prescription: bool = False) -> str:
        """``simulated patient: correction -1.25 / -0.75 x 170, slope 14 per logMAR, lapse 0, best
        acuity +0.00 logMAR`` — the truth a simulated session is scored against, for the log: in the
        clinical notation and cylinder convention of the protocol's ``lens`` (a :class:`LensSection`;
        a patient without an axis at its ``axis_deg``, as the lenses are shown; in a
        ``full_prescription``, at the axis such a patient is simulated with, 180)."""
        convention = "minus" if lens is None else lens.cylinder
        if self.axis_deg or full_prescription:
            axis_deg = self.axis_deg or DEFAULT_PATIENT_AXIS_DEG  # 0: read as 180
            correction = show_lens(Lens(self.sphere_d, self.cylinder_d, axis_deg), convention)
        else:  # at the lenses' axis, or sphere and signed cylinder without one
            axis_deg = 0.0 if lens is None else lens.axis_deg
            correction = two_parameter_lens_text(self.sphere_d, self.cylinder_d, axis_deg, convention)
        extra = f", accommodation {self.accommodation_d:g} D" if self.accommodation_d else ""
        return (
            f"simulated patient: correction {correction}, slope {self.slope:g} per logMAR, lapse {self.lapse:g}, "
            f"best acuity {logmar_text(self.va_best_logmar)}{extra}"
        )
