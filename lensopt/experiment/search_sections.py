"""The protocol tables that configure the search.

The search's tables: ``[optimizer]`` (rule, trials, bounds, inference, the model's lapse rate),
``[stop]`` (when a letter session may stop early), ``[start]`` (the starting refraction of a
full-prescription search), ``[lens]`` (the phoropter), ``[letters]`` (the alphabet), ``[duel]`` and
``[ranking]`` (the line and model of those feedback modes), with their allowed values (the rule
names, :data:`MAX_TRIALS`, :data:`RANKING_LENSES`, ...) and :func:`show_two_parameter_lens`; their fields are
checked by :mod:`lensopt.experiment.protocol_fields`. :mod:`lensopt.experiment.protocol_sections`
holds the other tables and re-exports these, so every table can be imported from there.
"""

from __future__ import annotations

import dataclasses
import math
import re
from dataclasses import dataclass

from lensopt.binary.settings import ALL_RULES
from lensopt.experiment.optotypes import ALPHABET
from lensopt.experiment.protocol_fields import _choice, _flag, _interval, _number, _rate_below_half
from lensopt.preference import CONTEXTUAL_RULES
from lensopt.refraction.acuity_law_settings import ACUITY_LAW_RULE, accommodation_amplitudes
from lensopt.refraction.duels import TIE_RULES
from lensopt.refraction.lens import Lens, diopter_text, parse_lens, two_parameter_lens_text
from lensopt.refraction.letters import DEFAULT_MODEL_LAPSE, DEFAULT_N_INITIAL
from lensopt.refraction.prescription import PHOROPTER_MAX_POWER_D, START_J_HALF_WIDTH_D, START_M_HALF_WIDTH_D
from lensopt.refraction.prescription_letters import MIN_MAX_STEP_D, PRESCRIPTION_RULES
from lensopt.refraction.rankings import RANKING_RULES
from lensopt.refraction.steps import DEFAULT_AXIS_STEP_DEG, is_whole_axis_step
from lensopt.stopping import DEFAULT_MIN_TRIALS, DEFAULT_STOP_CONFIDENCE, MAX_CHECK_LETTERS

MAX_TRIALS = 5000
"""Largest ``[optimizer] trials`` (and ``--trials``)."""

INFERENCES = ("laplace", "ep")
"""Approximate inference of the GP classifier."""

RANKING_LENSES = (3, 4)
"""How many lenses a ranking trial may compare (``[ranking] lenses``)."""


def _rules() -> tuple[str, ...]:
    """The letter rules: the GP optimizer's (``lensopt.binary.settings.ALL_RULES``) and the acuity-law
    optimizer's (:data:`lensopt.refraction.acuity_law_settings.ACUITY_LAW_RULE`)."""
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
    #: The acuity-law optimizer's prior amplitudes of accommodation (D): ``[0]``, the law alone, said
    #: (an eye that does not accommodate), or several, for eyes that may (it then ends at the most-plus
    #: lens); None, left out: the law alone, not said.
    accommodation_d: tuple[float, ...] | None = None

    def __post_init__(self):
        # every mode's rules; the feedback mode narrows this down (Protocol.__post_init__)
        if self.rule not in _rules() + _prescription_rules() + _duel_rules() + _ranking_rules():
            groups = (
                ("letters", _rules()),
                ("letters with [start]", _prescription_rules()),
                ("duels", _duel_rules()),
                ("rankings", _ranking_rules()),
            )
            known = "; ".join(f"{mode}: {', '.join(map(repr, rules))}" for mode, rules in groups)
            raise ValueError(f"rule {self.rule!r} is not a lensopt rule; by protocol.feedback — {known}")
        _number(self, "trials", 1, MAX_TRIALS, integer=True)
        _number(self, "n_initial", 0, MAX_TRIALS, integer=True)
        _interval(self, "sphere_bounds_d", -20.0, 20.0)
        _interval(self, "cylinder_bounds_d", -10.0, 10.0)
        _interval(self, "letter_bounds_logmar", -1.0, 2.0)
        _choice(self, "inference", INFERENCES)
        _rate_below_half(self, "lapse")
        if self.accommodation_d is not None:
            object.__setattr__(self, "accommodation_d", accommodation_amplitudes(self.accommodation_d))


@dataclass(frozen=True)
class StopSection:
    """When a letter session may stop before ``[optimizer] trials`` (:class:`lensopt.stopping.StopRule`):
    once the model is ``confidence`` sure that its lens is within 0.025 logMAR of the best lens,
    never before ``min_trials``, and at the latest after ``max_trials`` (0: ``[optimizer] trials``,
    filled in by :class:`Protocol`); with ``check_letters``, once the patient has read that many
    letters through the lens it reports. A protocol without ``[stop]`` runs all its trials."""

    confidence: float = DEFAULT_STOP_CONFIDENCE
    min_trials: int = DEFAULT_MIN_TRIALS
    max_trials: int = 0
    check_letters: int = 0

    def __post_init__(self):
        c = self.confidence
        if isinstance(c, bool) or not isinstance(c, (int, float)) or not (math.isfinite(c) and 0.0 < c < 1.0):
            raise ValueError(f"confidence must be a number in (0, 1), e.g. 0.95, got {c!r}")
        object.__setattr__(self, "confidence", float(c))
        _number(self, "min_trials", 1, MAX_TRIALS, integer=True)
        _number(self, "max_trials", 0, MAX_TRIALS, integer=True)
        _number(self, "check_letters", 0, MAX_CHECK_LETTERS, integer=True)
        if self.max_trials and self.min_trials > self.max_trials:
            raise ValueError(f"min_trials ({self.min_trials}) must not exceed max_trials ({self.max_trials})")

    def rule(self) -> dict:
        """The :class:`lensopt.stopping.StopRule` dict (``max_trials`` filled in)."""
        rule = {"confidence": self.confidence, "min_trials": self.min_trials, "max_trials": self.max_trials}
        return {**rule, "check_letters": self.check_letters} if self.check_letters else rule


#: What a session whose ``[start]`` has no refraction, and no ``--start``, is told.
MISSING_START_MESSAGE = (
    "this protocol searches around the patient's starting refraction and none was given: add "
    "--start '-1.00 / -0.50 x 180' (their autorefraction or habitual glasses; --start plano if there is none)"
)


#: What a new session that would write a prescription (a ``[start]``, the full prescription) is
#: told when no eye is named: a prescription without its eye cannot be signed.
MISSING_EYE_MESSAGE = (
    "a prescription is written for an eye and none was named: add --eye OD or --eye OS{both}, or set "
    "[session] eye in the protocol"
)


def missing_eye_message(feedback_mode: str) -> str:
    """:data:`MISSING_EYE_MESSAGE` for a session of ``feedback_mode``: both eyes (OU) are offered to
    letter sessions only, which alone run them."""
    return MISSING_EYE_MESSAGE.format(
        both=" (or OU, both eyes one after the other)" if feedback_mode == "letters" else ""
    )


#: The eyes a starting refraction may be written for, one lens each (``"OD -2.25 -0.75 x 180, OS ..."``).
START_EYES = ("OD", "OS")

_EYE_LABEL = re.compile(r"(?<![A-Za-z])(OD|OS)(?![A-Za-z])\s*:?", re.IGNORECASE)
"""An eye's label before its lens in a starting refraction (``OD``, ``os:``; any case)."""

#: How a start of each eye is written, in the messages that ask for it.
PER_EYE_START_EXAMPLE = "'OD -2.25 / -0.75 x 180, OS -1.50 / -0.50 x 010'"


def eye_lens_texts(refraction: str) -> dict[str | None, str]:
    """The lens text of each eye a starting refraction names: ``{"OD": "-2.25 / -0.75 x 180", "OS":
    "-1.50 / -0.50 x 010"}`` for ``"OD -2.25 / -0.75 x 180, OS -1.50 / -0.50 x 010"`` (a comma, a
    semicolon or nothing between them; ``OD:`` too), ``{None: text}`` for a lens without an eye. A
    one-line ValueError for text before the first eye, an eye named twice, or an eye without a lens."""
    labels = list(_EYE_LABEL.finditer(refraction))
    if not labels:
        return {None: refraction}
    before = refraction[: labels[0].start()].strip()
    if before:
        raise ValueError(
            f"{refraction!r} has {before!r} before its first eye: write each eye and its lens, e.g. {PER_EYE_START_EXAMPLE}"
        )
    texts: dict[str | None, str] = {}
    for label, after in zip(labels, [*labels[1:], None]):
        eye = label.group(1).upper()
        text = refraction[label.end() : None if after is None else after.start()].strip().rstrip(",;").strip()
        if eye in texts:
            raise ValueError(f"{refraction!r} names {eye} twice: write each eye once, e.g. {PER_EYE_START_EXAMPLE}")
        if not text:
            raise ValueError(f"{refraction!r} names {eye} without its lens: write e.g. {PER_EYE_START_EXAMPLE}")
        texts[eye] = text
    return texts


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

    A session of both eyes starts each eye from its own autorefraction: ``refraction`` then names
    each eye, ``"OD -2.25 / -0.75 x 180, OS -1.50 / -0.50 x 010"`` (:func:`eye_lens_texts`,
    :attr:`eyes`); :meth:`for_eye` is the start of one eye, and :attr:`written`, :attr:`lens` and
    :attr:`transposed` are those of a start of one lens (one eye named, or none).
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
                texts = eye_lens_texts(self.refraction)
            except ValueError as exc:
                raise ValueError(f"refraction: {exc}") from None
            for eye, text in texts.items():
                whose = "" if eye is None else f"{eye}: "
                try:
                    lens = parse_lens(text)
                except ValueError as exc:
                    raise ValueError(f"refraction: {whose}{exc}") from None
                meridians = (lens.sphere_d, lens.sphere_d + lens.cylinder_d)
                if max(abs(power) for power in meridians) > PHOROPTER_MAX_POWER_D:
                    raise ValueError(
                        f"refraction: {whose}{text!r} has a meridian of {diopter_text(max(meridians, key=abs))} D, "
                        f"beyond a phoropter's ±{PHOROPTER_MAX_POWER_D:g} D; refract this eye with trial lenses"
                    )
        _number(self, "m_half_width_d", 0.0, 10.0, low_open=True)
        _number(self, "j_half_width_d", 0.0, 5.0, low_open=True)

    @property
    def given(self) -> bool:
        """Whether the starting refraction is known (in the table, or from ``--start``)."""
        return self.refraction is not None

    @property
    def eyes(self) -> tuple[str, ...]:
        """The eyes the refraction names, OD first (``()`` for a lens without an eye, or none given)."""
        if self.refraction is None:
            return ()
        return tuple(eye for eye in START_EYES if eye in eye_lens_texts(self.refraction))

    def for_eye(self, eye: str | None) -> StartSection:
        """The start of eye ``eye``: its own lens when the refraction names each eye's, else this one
        (a lens without an eye is every eye's). A one-line ValueError when it names others only."""
        if not self.eyes or (eye is None and len(self.eyes) == 1):
            return self
        assert self.refraction is not None  # it names eyes
        texts = eye_lens_texts(self.refraction)
        if eye not in texts:
            named = " and ".join(self.eyes)
            raise ValueError(
                f"the starting refraction {self.refraction!r} names {named} only, and the session tests "
                f"{eye or 'no eye'}: give {eye or 'the eye'}'s, e.g. {PER_EYE_START_EXAMPLE}"
            )
        return dataclasses.replace(self, refraction=texts[eye])

    @property
    def written(self) -> Lens:
        """The lens as written (a ValueError naming ``--start`` if none was given; one naming
        :meth:`for_eye` for a start of each eye)."""
        if self.refraction is None:
            raise ValueError(MISSING_START_MESSAGE)
        texts = eye_lens_texts(self.refraction)
        if len(texts) > 1:
            raise ValueError(f"{self.refraction!r} is a start of each eye: take one eye's with for_eye")
        return parse_lens(next(iter(texts.values())))

    @property
    def lens(self) -> Lens:
        """The lens in minus cylinder (transposed if written in plus cylinder), to the 0.01 D and whole
        degrees the session stores it in: a start of ``-1.125`` is searched around the ``-1.13`` that
        a resume reads back (it was searched around -1.125 and resumed around -1.13, another box)."""
        return parse_lens(self.written.minus_cylinder().format())

    @property
    def transposed(self) -> bool:
        """Whether the refraction was written in plus cylinder (and is searched transposed)."""
        return self.written.is_plus_cylinder


#: The cylinder conventions a lens can be shown in (``[lens] cylinder``).
CYLINDER_CONVENTIONS = ("minus", "plus")


def show_two_parameter_lens(sphere_d: float, cylinder_d: float, lens: LensSection, gap: str = "  ") -> str:
    """A lens of a two-parameter search as the clinician sees it: in clinical notation at the
    protocol's ``[lens] axis_deg`` in its cylinder convention, or ``S -0.50 D  C +1.00 D`` without
    an axis (:func:`lensopt.refraction.lens.two_parameter_lens_text`)."""
    return two_parameter_lens_text(sphere_d, cylinder_d, lens.axis_deg, lens.cylinder, gap)


@dataclass(frozen=True)
class LensSection:
    """The phoropter: ``step_d`` its power step (0: none), ``prompt`` whether the clinician is asked
    to set each lens, ``max_step_d`` the largest change of M, J0 and J45 between consecutive trials
    a manual phoropter allows (0: no limit, a motorized phoropter; the full prescription only),
    ``cylinder`` the convention lenses are shown in to the clinician (``"minus"``, the default, or
    ``"plus"``; the store keeps minus cylinder), ``axis_deg`` the axis (1–180°) the phoropter's
    cylinder is set to in a two-parameter search — the patient's, from the autorefraction or
    keratometry, along which that search varies a signed cylinder — so that its lenses are shown in
    clinical notation (0, the default: not given; the lenses are shown as sphere and signed cylinder),
    ``axis_step_deg`` the step the full prescription's axes are rounded to (1°, the default: a
    phoropter's dial; 5°: a trial frame's marks; with ``step_d`` only, which rounds the powers)."""

    step_d: float = 0.0
    prompt: bool = False
    max_step_d: float = 0.0
    cylinder: str = "minus"
    axis_deg: float = 0.0
    axis_step_deg: float = DEFAULT_AXIS_STEP_DEG

    def __post_init__(self):
        _number(self, "step_d", 0.0, 1.0)
        _number(self, "axis_deg", 0.0, 180.0)
        if 0.0 < self.axis_deg < 1.0:
            raise ValueError(
                f"lens.axis_deg must be 0 (not given) or 1-180 degrees, got {self.axis_deg:g}: give e.g. 180"
            )
        _flag(self, "prompt")
        _choice(self, "cylinder", CYLINDER_CONVENTIONS)
        _number(self, "max_step_d", 0.0, 4.0)
        if 0.0 < self.max_step_d < MIN_MAX_STEP_D:
            raise ValueError(
                f"lens.max_step_d must be 0 (no limit) or at least one phoropter step, {MIN_MAX_STEP_D:g} D, "
                f"got {self.max_step_d:g}"
            )
        _number(self, "axis_step_deg", 1.0, 90.0)
        if not is_whole_axis_step(self.axis_step_deg):
            raise ValueError(
                f"lens.axis_step_deg must be whole degrees that divide 180 (1: a phoropter's dial, 5: a trial "
                f"frame's marks), got {self.axis_step_deg:g}"
            )
        if self.axis_step_deg != DEFAULT_AXIS_STEP_DEG and not self.step_d:
            raise ValueError(
                "lens.axis_step_deg rounds the axes of lenses rounded to lens.step_d, and lens.step_d = 0 "
                "(continuous powers) rounds none; set lens.step_d (e.g. 0.25) or remove lens.axis_step_deg"
            )

    @property
    def instrument(self) -> str:
        """Where the clinician sets a lens, in the prompts' words: ``"in the trial frame"`` when the
        axes are rounded to more than a phoropter dial's 1° (a trial frame's marks), else ``"on the
        phoropter"``."""
        return "in the trial frame" if self.axis_step_deg > DEFAULT_AXIS_STEP_DEG else "on the phoropter"

    def full_prescription_only(self) -> list[str]:
        """The keys set here that only the full prescription (a ``[start]``) uses, each named with
        what it is and followed by its fix: ``"lens.max_step_d (the travel limit) …; … set
        lens.max_step_d = 0"``."""
        keys = {
            "max_step_d": ("the travel limit", "set lens.max_step_d = 0"),
            "axis_step_deg": ("the axis step", "remove lens.axis_step_deg"),
        }
        return [
            f"lens.{key} ({what}) applies to the full prescription only; add a [start] table (or --start) or {fix}"
            for key, (what, fix) in keys.items()
            if getattr(self, key) != getattr(LensSection, key)
        ]


@dataclass(frozen=True)
class LettersSection:
    alphabet: str

    def __post_init__(self):
        a = self.alphabet
        if not isinstance(a, str) or len(a) < 2 or len(set(a)) != len(a) or set(a) - set(ALPHABET):
            raise ValueError(f"alphabet must be 2 to 26 distinct capital letters A-Z, got {a!r}")


#: How a duel's or ranking's lenses are ordered on screen (:attr:`DuelSection.order`).
COMPARISON_ORDERS = ("counterbalanced", "as-asked")


@dataclass(frozen=True)
class DuelSection:
    """Duel feedback: how many letters the line shows (spaced one letter width apart), and the model
    of the answers: ``ties`` (Nguyen et al. 2021, every answer used, "the same" included; default)
    or ``probit`` (GP preference learning; "the same" is stored but not modelled in the two-parameter
    search, told as the duel answered once each way in the full prescription's)."""

    letters_per_line: int = 5
    model: str = "ties"
    #: The lenses' order on screen: ``counterbalanced`` (drawn from the seed and the trial, so that
    #: the rule's champion is lens 1 no more often than lens 2), or ``as-asked`` (the champion first:
    #: sessions created before 30 Nov 2026 11:48 UTC, which resume so).
    order: str = "counterbalanced"

    def __post_init__(self):
        _number(self, "letters_per_line", 1, 10, integer=True)
        _choice(self, "model", ("ties", "probit"))
        _choice(self, "order", COMPARISON_ORDERS)


@dataclass(frozen=True)
class RankingSection:
    """Ranking feedback: how many lenses each trial compares (the patient orders them, clearest
    first) and how many letters the line shows (spaced one letter width apart)."""

    lenses: int = 3
    letters_per_line: int = 5
    #: The lenses' order on screen, as :attr:`DuelSection.order`.
    order: str = "counterbalanced"

    def __post_init__(self):
        _number(self, "lenses", RANKING_LENSES[0], RANKING_LENSES[-1], integer=True)
        _number(self, "letters_per_line", 1, 10, integer=True)
        _choice(self, "order", COMPARISON_ORDERS)
