"""The tables of an experiment protocol, one frozen dataclass each, and their field validators.

Every section validates its own fields in ``__post_init__`` and raises ``ValueError`` with a
one-line message naming the field and the allowed values; :mod:`lensopt.experiment.protocol`
reads the TOML file, builds the sections, adds the file name to the message and checks the
fields that depend on each other.
"""

from __future__ import annotations

import dataclasses
import math
import re
from dataclasses import dataclass

from lensopt.binary.settings import ALL_RULES
from lensopt.experiment.optotypes import ALPHABET
from lensopt.preference import CONTEXTUAL_RULES
from lensopt.refraction.acuity_law import ACUITY_LAW_RULE
from lensopt.refraction.duels import TIE_RULES
from lensopt.refraction.lens import Lens, parse_lens
from lensopt.refraction.letters import DEFAULT_MODEL_LAPSE, DEFAULT_N_INITIAL
from lensopt.refraction.prescription import START_J_HALF_WIDTH_D, START_M_HALF_WIDTH_D
from lensopt.refraction.prescription_letters import MIN_MAX_STEP_D, PRESCRIPTION_RULES
from lensopt.refraction.rankings import RANKING_RULES
from lensopt.refraction.trial import DUEL_ANSWERS
from lensopt.stopping import DEFAULT_MIN_TRIALS, DEFAULT_STOP_CONFIDENCE

MAX_TRIALS = 5000
"""Largest ``[optimizer] trials`` (and ``--trials``)."""

OBSERVERS = ("keyboard", "simulated")
"""Who answers: a person at the keyboard, or a simulated patient."""

INFERENCES = ("laplace", "ep")
"""Approximate inference of the GP classifier."""

FEEDBACK_MODES = ("letters", "duel", "ranking")
"""What the patient answers: name one letter (``letters``), which of two lenses makes a line of
letters clearer, "one or two — or the same?" (``duel``), or the order of three or four lenses,
clearest first (``ranking``)."""

RANKING_LENSES = (3, 4)
"""How many lenses a ranking trial may compare (``[ranking] lenses``)."""

MAX_LENS_KEYS = RANKING_LENSES[-1]
"""``[keys] lenses`` names at most one key per lens of the largest ranking."""

DUEL_ANSWER_KEYS = DUEL_ANSWERS
"""The ``[keys]`` fields answering a duel: one per duel answer (``lensopt.refraction.trial.DUEL_ANSWERS``)."""

_KEY_NAME = re.compile(r"^[a-z0-9_]{1,20}$")


def _rules() -> tuple[str, ...]:
    """The letter rules: the GP optimizer's (``lensopt.binary.settings.ALL_RULES``) and the acuity-law
    optimizer's (:data:`lensopt.refraction.acuity_law.ACUITY_LAW_RULE`)."""
    return (*ALL_RULES, ACUITY_LAW_RULE)


def _prescription_rules() -> tuple[str, ...]:
    """The full prescription's rule names (``bracket-ald``, its default, and the letter rules)."""
    return tuple(PRESCRIPTION_RULES)


def _duel_rules(model: str | None = None) -> tuple[str, ...]:
    """The duel rules of ``model`` (``"probit"``: ``lensopt.preference.CONTEXTUAL_RULES``;
    ``"ties"``: ``lensopt.refraction.duels.TIE_RULES``); of both when ``model`` is None."""
    rules = {"probit": tuple(CONTEXTUAL_RULES), "ties": tuple(TIE_RULES)}
    if model is None:
        return rules["probit"] + tuple(r for r in rules["ties"] if r not in rules["probit"])
    return rules[model]


def _ranking_rules() -> tuple[str, ...]:
    """The ranking rules (``lensopt.refraction.rankings.RANKING_RULES``)."""
    return tuple(RANKING_RULES)


def _number(obj, name, low, high, *, integer=False, low_open=False):
    value = getattr(obj, name)
    kind = "an integer" if integer else "a number"
    ok = not isinstance(value, bool) and isinstance(value, int if integer else (int, float))
    ok = ok and math.isfinite(value) and (low < value if low_open else low <= value) and value <= high
    if not ok:
        bracket = "(" if low_open else "["
        raise ValueError(f"{name} must be {kind} in {bracket}{low:g}, {high:g}], got {value!r}")
    object.__setattr__(obj, name, int(value) if integer else float(value))


def _interval(obj, name, low, high, *, integer=False):
    value = getattr(obj, name)
    kind = "integers" if integer else "numbers"
    types = int if integer else (int, float)
    if (
        not isinstance(value, (list, tuple))
        or len(value) != 2
        or not all(isinstance(v, types) and not isinstance(v, bool) for v in value)
        or not low <= value[0] < value[1] <= high
    ):
        raise ValueError(f"{name} must be two {kind} [low, high] with {low:g} <= low < high <= {high:g}, got {value!r}")
    object.__setattr__(obj, name, tuple(int(v) if integer else float(v) for v in value))


def _choice(obj, name, allowed):
    value = getattr(obj, name)
    if value not in allowed:
        raise ValueError(f"{name} must be one of {', '.join(map(repr, allowed))}, got {value!r}")


def _rate_below_half(obj, name):
    value = getattr(obj, name)
    if (
        isinstance(value, bool)
        or not isinstance(value, (int, float))
        or not math.isfinite(value)
        or not 0.0 <= value < 0.5
    ):
        raise ValueError(f"{name} must be a rate in [0, 0.5), e.g. 0.02, got {value!r}")
    object.__setattr__(obj, name, float(value))


def _flag(obj, name):
    if not isinstance(getattr(obj, name), bool):
        raise ValueError(f"{name} must be true or false, got {getattr(obj, name)!r}")


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
class OptimizerSection:
    rule: str
    trials: int
    sphere_bounds_d: tuple[float, float]
    cylinder_bounds_d: tuple[float, float]
    letter_bounds_logmar: tuple[float, float]
    #: Random first trials of the GP rules (the letter optimizer's default); the acuity-law rule
    #: starts informative and takes none.
    n_initial: int = DEFAULT_N_INITIAL
    inference: str = "ep"
    lapse: float = DEFAULT_MODEL_LAPSE

    def __post_init__(self):
        # every mode's rules; the feedback mode narrows this down (Protocol.__post_init__)
        _choice(self, "rule", tuple(dict.fromkeys(_rules() + _prescription_rules() + _duel_rules() + _ranking_rules())))
        _number(self, "trials", 1, MAX_TRIALS, integer=True)
        _number(self, "n_initial", 0, MAX_TRIALS, integer=True)
        _interval(self, "sphere_bounds_d", -20.0, 20.0)
        _interval(self, "cylinder_bounds_d", -10.0, 10.0)
        _interval(self, "letter_bounds_logmar", -1.0, 2.0)
        _choice(self, "inference", INFERENCES)
        _rate_below_half(self, "lapse")


@dataclass(frozen=True)
class StopSection:
    """When a letter session may stop before ``[optimizer] trials`` (:class:`lensopt.stopping.StopRule`):
    once the model is ``confidence`` sure that its lens is within 0.025 logMAR of the best lens,
    never before ``min_trials``, and at the latest after ``max_trials`` (0: ``[optimizer] trials``,
    filled in by :class:`Protocol`). A protocol without ``[stop]`` runs all its trials."""

    confidence: float = DEFAULT_STOP_CONFIDENCE
    min_trials: int = DEFAULT_MIN_TRIALS
    max_trials: int = 0

    def __post_init__(self):
        c = self.confidence
        if isinstance(c, bool) or not isinstance(c, (int, float)) or not (math.isfinite(c) and 0.0 < c < 1.0):
            raise ValueError(f"confidence must be a number in (0, 1), e.g. 0.95, got {c!r}")
        object.__setattr__(self, "confidence", float(c))
        _number(self, "min_trials", 1, MAX_TRIALS, integer=True)
        _number(self, "max_trials", 0, MAX_TRIALS, integer=True)
        if self.max_trials and self.min_trials > self.max_trials:
            raise ValueError(f"min_trials ({self.min_trials}) must not exceed max_trials ({self.max_trials})")

    def rule(self) -> dict:
        """The :class:`lensopt.stopping.StopRule` dict (``max_trials`` filled in)."""
        return {"confidence": self.confidence, "min_trials": self.min_trials, "max_trials": self.max_trials}


#: What a session whose ``[start]`` has no refraction, and no ``--start``, is told.
MISSING_START_MESSAGE = (
    "this protocol searches around the patient's starting refraction and none was given: add "
    "--start '-1.00 / -0.50 x 180' (their autorefraction or habitual glasses; --start plano if there is none)"
)


@dataclass(frozen=True)
class StartSection:
    """The starting refraction of a letter session (``[start]``, or ``lensopt run --start``): the
    session then searches the full prescription, sphere, cylinder **and axis**, in power vectors
    ``(M, J0, J45)`` in a box centred on it (:class:`lensopt.refraction.prescription_letters.PrescriptionOptimizer`).

    ``refraction`` is clinical notation (``"-1.00 / -0.50 x 180"``, an autorefraction or the
    habitual glasses); one written in plus cylinder is searched in minus cylinder (:attr:`lens`,
    :attr:`transposed`). ``m_half_width_d`` / ``j_half_width_d``: the box's half-widths (D) in M and
    in each of J0 and J45. The protocol's ``sphere_bounds_d`` and ``cylinder_bounds_d`` then do not
    apply. Without ``[start]`` a letter session searches sphere and cylinder only, as before.

    A ``[start]`` table without ``refraction`` (the shipped ``clinical-prescription``) asks for the
    patient's own: ``lensopt run --start`` must give it (:attr:`given` is False until then), so a
    clinician who forgets it is told so instead of searching around a placeholder.
    """

    refraction: str | None = None
    m_half_width_d: float = START_M_HALF_WIDTH_D
    j_half_width_d: float = START_J_HALF_WIDTH_D

    def __post_init__(self):
        if self.refraction is not None:
            if not isinstance(self.refraction, str):
                raise ValueError(
                    "refraction must be a lens in clinical notation such as '-1.00 / -0.50 x 180', "
                    f"got {self.refraction!r}"
                )
            try:
                parse_lens(self.refraction)
            except ValueError as exc:
                raise ValueError(f"refraction: {exc}") from None
        _number(self, "m_half_width_d", 0.0, 10.0, low_open=True)
        _number(self, "j_half_width_d", 0.0, 5.0, low_open=True)

    @property
    def given(self) -> bool:
        """Whether the starting refraction is known (in the table, or from ``--start``)."""
        return self.refraction is not None

    @property
    def written(self) -> Lens:
        """The lens as written (a ValueError naming ``--start`` if none was given)."""
        if self.refraction is None:
            raise ValueError(MISSING_START_MESSAGE)
        return parse_lens(self.refraction)

    @property
    def lens(self) -> Lens:
        """The lens in minus cylinder (transposed if written in plus cylinder)."""
        return self.written.minus_cylinder()

    @property
    def transposed(self) -> bool:
        """Whether the refraction was written in plus cylinder (and is searched transposed)."""
        return self.written.is_plus_cylinder


#: The cylinder conventions a lens can be shown in (``[lens] cylinder``).
CYLINDER_CONVENTIONS = ("minus", "plus")


def show_lens(lens: Lens, convention: str = "minus") -> str:
    """``lens`` in clinical notation in the ``convention`` (``"minus"`` or ``"plus"`` cylinder)."""
    return (lens.plus_cylinder() if convention == "plus" else lens.minus_cylinder()).format()


@dataclass(frozen=True)
class LensSection:
    """The phoropter: ``step_d`` its power step (0: none), ``prompt`` whether the clinician is asked
    to set each lens, ``max_step_d`` the largest change of M, J0 and J45 between consecutive trials
    a manual phoropter allows (0: no limit, a motorized phoropter; the full prescription only),
    ``cylinder`` the convention lenses are shown in to the clinician (``"minus"``, the default, or
    ``"plus"``; the store keeps minus cylinder)."""

    step_d: float = 0.0
    prompt: bool = False
    max_step_d: float = 0.0
    cylinder: str = "minus"

    def __post_init__(self):
        _number(self, "step_d", 0.0, 1.0)
        _flag(self, "prompt")
        _choice(self, "cylinder", CYLINDER_CONVENTIONS)
        _number(self, "max_step_d", 0.0, 4.0)
        if 0.0 < self.max_step_d < MIN_MAX_STEP_D:
            raise ValueError(
                f"lens.max_step_d must be 0 (no limit) or at least one phoropter step, {MIN_MAX_STEP_D:g} D, "
                f"got {self.max_step_d:g}"
            )


@dataclass(frozen=True)
class LettersSection:
    alphabet: str

    def __post_init__(self):
        a = self.alphabet
        if not isinstance(a, str) or len(a) < 2 or len(set(a)) != len(a) or set(a) - set(ALPHABET):
            raise ValueError(f"alphabet must be 2 to 26 distinct capital letters A-Z, got {a!r}")


@dataclass(frozen=True)
class DuelSection:
    """Duel feedback: how many letters the line shows (spaced one letter width apart), and the model
    of the answers: ``ties`` (Nguyen et al. 2021, every answer used, "the same" included; default)
    or ``probit`` (GP preference learning; "the same" answers are stored but not modelled)."""

    letters_per_line: int = 5
    model: str = "ties"

    def __post_init__(self):
        _number(self, "letters_per_line", 1, 10, integer=True)
        _choice(self, "model", ("ties", "probit"))


@dataclass(frozen=True)
class RankingSection:
    """Ranking feedback: how many lenses each trial compares (the patient orders them, clearest
    first) and how many letters the line shows (spaced one letter width apart)."""

    lenses: int = 3
    letters_per_line: int = 5

    def __post_init__(self):
        _number(self, "lenses", RANKING_LENSES[0], RANKING_LENSES[-1], integer=True)
        _number(self, "letters_per_line", 1, 10, integer=True)


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
            raise ValueError("distance_cm is required unless the protocol names a monitor (lensopt calibrate)")
        if not (self.monitor and isinstance(self.monitor, str) and self.distance_cm == 0):
            _number(self, "distance_cm", 5.0, 100_000.0)
        _number(self, "min_stroke_px", 0.1, 100.0)
        if not isinstance(self.monitor, str):
            raise ValueError(f"monitor must be a PsychoPy Monitor Center name, got {self.monitor!r}")
        if not self.monitor:
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
    own search), or left out (no eye named, as before eyes were stored)."""

    eye: str | None = None

    def __post_init__(self):
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


@dataclass(frozen=True)
class TimingSection:
    fixation_s: float
    letter_s: float
    response_timeout_s: float
    feedback_s: float
    iti_s: float
    simulated_response_s: float = 0.3

    def __post_init__(self):
        for name in ("fixation_s", "letter_s", "response_timeout_s", "feedback_s", "iti_s", "simulated_response_s"):
            _number(self, name, 0.0, 600.0)


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
    users = {}
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
        for name in ("pass_key", "pause", "confirm", "quit", "undo", "lens_set", "note", *DUEL_ANSWER_KEYS):
            value = getattr(self, name)
            if not isinstance(value, str) or not _KEY_NAME.match(value):
                raise ValueError(f"{name} must be a PsychoPy key name such as 'space', 'slash' or 'q', got {value!r}")
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
        _number(self, "lapse", 0.0, 0.5)
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
