"""What a prescription campaign runs (issue 16, item 8): its grid and the runs it holds.

The settings (:data:`SETTINGS`: with or without a starting autorefraction × with or without
accommodation, by default; and starting from old glasses too minus, :data:`OLD_GLASSES_M_OFFSET_D`), the rules of each feedback (:data:`RULES_BY_FEEDBACK`), the campaign's defaults,
one run (:class:`PrescriptionSpec`, validated, with its file-name key) and the runs of a campaign
(:func:`prescription_specs`, ordered by patient). Running them is :mod:`lensopt.bench.prescription`.
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass, fields

from lensopt.bench.spec import HELD_OUT_FIRST_SEED, SPLITS, split_of, split_of_seeds
from lensopt.refraction.steps import DEFAULT_AXIS_STEP_DEG, is_whole_axis_step
from lensopt.refraction.trial import SAME_ANSWERS
from lensopt.stopping import DEFAULT_MIN_TRIALS, StopRule

CAMPAIGN = "prescription"

#: Rules: the two letter optimizers of the prescription and its ideal observer; the default ones.
PRESCRIPTION_RULES = ("bracket-ald", "ucb-ald", "ts-ald", "ideal")
DEFAULT_PRESCRIPTION_RULES = ("bracket-ald", "ideal")

#: Rules of duel runs (:class:`PrescriptionDuelOptimizer`), and the default one.
PRESCRIPTION_DUEL_RULES = ("muc-ald", "kss-ald")
DEFAULT_PRESCRIPTION_DUEL_RULES = ("muc-ald",)

#: Rules of ranking runs (:class:`PrescriptionRankingOptimizer`), and the default one.
PRESCRIPTION_RANKING_RULES = ("mpes-ald",)
DEFAULT_PRESCRIPTION_RANKING_RULES = ("mpes-ald",)

#: Feedback modes: letters named or not, duels "one or two, or the same?", rankings of three lenses.
PRESCRIPTION_FEEDBACK = ("letters", "duel", "ranking")
#: The rules of each feedback.
RULES_BY_FEEDBACK = {
    "letters": PRESCRIPTION_RULES,
    "duel": PRESCRIPTION_DUEL_RULES,
    "ranking": PRESCRIPTION_RANKING_RULES,
}

#: Campaign defaults: patients, first seed (held out), trials, slope (logMAR⁻¹: human letter
#: acuity is steep), lapse of the patients, letters.
DEFAULT_PATIENTS = 100
DEFAULT_TRIALS = 100
DEFAULT_SLOPE = 14.0  # lensopt.observer.population.CLINIC_SLOPE_PER_LOGMAR (a literal: `--help` imports no numpy)
DEFAULT_LAPSE = 0.0
N_ALTERNATIVES = 26


#: How much more minus (D of M) than an autorefraction the old glasses are that start the
#: ``old-glasses-*`` settings: three phoropter steps, an assumption of ours (a young myope's habitual
#: glasses are often over-minused; a clinician may start from them when there is no autorefraction).
OLD_GLASSES_M_OFFSET_D = -0.75


@dataclass(frozen=True)
class Setting:
    """One cell of the grid: a starting refraction or the full box × accommodation or none. A start
    is an autorefraction, moved ``start_m_offset_d`` D in M (sphere) for old glasses."""

    name: str
    start: bool
    accommodation: bool
    start_m_offset_d: float = 0.0

    def to_dict(self) -> dict:
        return asdict(self)


SETTINGS = (
    Setting("start-accommodation", True, True),
    Setting("start-no-accommodation", True, False),
    Setting("no-start-accommodation", False, True),
    Setting("no-start-no-accommodation", False, False),
    Setting("old-glasses-accommodation", True, True, OLD_GLASSES_M_OFFSET_D),
    Setting("old-glasses-no-accommodation", True, False, OLD_GLASSES_M_OFFSET_D),
)
SETTINGS_BY_NAME = {s.name: s for s in SETTINGS}
#: The settings a campaign runs unless told (the old glasses' are asked for by name).
DEFAULT_SETTINGS = tuple(s.name for s in SETTINGS if not s.start_m_offset_d)


def get_setting(name: str) -> Setting:
    if name not in SETTINGS_BY_NAME:
        raise ValueError(f"unknown prescription setting {name!r}; choose from: {', '.join(SETTINGS_BY_NAME)}")
    return SETTINGS_BY_NAME[name]


@dataclass(frozen=True)
class PrescriptionSpec:
    """One run: a rule on patient ``seed`` in a setting, for ``n_trials`` trials."""

    setting: str
    rule: str
    seed: int
    n_trials: int
    slope: float = DEFAULT_SLOPE
    lapse: float = DEFAULT_LAPSE
    n_alternatives: int = N_ALTERNATIVES
    feedback: str = "letters"
    with_start: bool = True
    accommodation: bool = True
    split: str = ""  # filled from the seed
    stop_confidence: float | None = None  # None: no stopping rule
    min_trials: int | None = None
    max_step_d: float | None = None  # the travel limit of a manual phoropter (letters; None: none)
    tie_threshold: float = 0.0  # duels: the patient says "the same" below this utility difference
    same_answers: str | None = None  # duels: how the optimizer tells "the same" (None: its default)
    campaign: str = CAMPAIGN
    check_letters: int | None = None  # the stopping rule's check through the lens (None: none, as before it)
    axis_step_deg: float | None = None  # a trial frame's axis marks (None: the optimizers' 1°, a phoropter's dial)

    def __post_init__(self):
        if self.campaign != CAMPAIGN:
            raise ValueError(f"PrescriptionSpec.campaign must be {CAMPAIGN!r}, got {self.campaign!r}")
        setting = get_setting(self.setting)
        if (self.with_start, self.accommodation) != (setting.start, setting.accommodation):
            raise ValueError(f"PrescriptionSpec: start/accommodation do not match setting {self.setting!r}")
        if self.feedback not in PRESCRIPTION_FEEDBACK:
            raise ValueError(f"unknown feedback {self.feedback!r}; choose from: {', '.join(PRESCRIPTION_FEEDBACK)}")
        rules = RULES_BY_FEEDBACK[self.feedback]
        if self.rule not in rules:
            raise ValueError(f"unknown rule {self.rule!r} with {self.feedback}; choose from: {', '.join(rules)}")
        if self.feedback != "letters" and self.stop_confidence is not None:
            raise ValueError(
                "--stop-confidence applies to --feedback letters only (duels and rankings have no stopping rule)"
            )
        if self.max_step_d is not None and (self.feedback != "letters" or self.rule == "ideal"):
            raise ValueError(
                "--max-step applies to the letter rules only (not to duels, rankings or the ideal observer)"
            )
        if self.axis_step_deg is not None:
            if self.rule == "ideal":
                raise ValueError("--axis-step applies to the rules, not the ideal observer (the anchor runs at 1°)")
            if not is_whole_axis_step(self.axis_step_deg):
                raise ValueError(
                    f"--axis-step must be whole degrees that divide 180 (e.g. 5), got {self.axis_step_deg!r}"
                )
            if self.axis_step_deg == DEFAULT_AXIS_STEP_DEG:
                raise ValueError(f"PrescriptionSpec.axis_step_deg is None at the default {DEFAULT_AXIS_STEP_DEG:g}°")
        if self.feedback != "duel" and (self.tie_threshold or self.same_answers is not None):
            raise ValueError("--tie-threshold and --same-answers apply to --feedback duel only")
        if not (isinstance(self.tie_threshold, (int, float)) and 0 <= self.tie_threshold <= 20):
            raise ValueError(f"the tie threshold must be in [0, 20] logit units (e.g. 1), got {self.tie_threshold!r}")
        if self.same_answers is not None and self.same_answers not in SAME_ANSWERS:
            raise ValueError(f"unknown --same-answers {self.same_answers!r}; choose from: {', '.join(SAME_ANSWERS)}")
        if isinstance(self.seed, bool) or not isinstance(self.seed, int) or self.seed < 0:
            raise ValueError(f"PrescriptionSpec.seed must be an integer >= 0, got {self.seed!r}")
        if isinstance(self.n_trials, bool) or not isinstance(self.n_trials, int) or self.n_trials < 1:
            raise ValueError(f"the number of trials must be a positive integer, got {self.n_trials!r}")
        if not (isinstance(self.slope, (int, float)) and math.isfinite(self.slope) and self.slope > 0):
            raise ValueError(f"the slope must be a positive number, got {self.slope!r}")
        guess = 1.0 / self.n_alternatives
        if not (isinstance(self.lapse, (int, float)) and 0 <= self.lapse < min(0.5, 1 - guess)):
            raise ValueError(f"the lapse rate must be in [0, 0.5), got {self.lapse!r}")
        if not self.split:
            object.__setattr__(self, "split", split_of(self.seed))
        if self.split not in SPLITS or self.split != split_of(self.seed):
            raise ValueError(f"the split of seed {self.seed} is {split_of(self.seed)!r}, got {self.split!r}")
        if self.check_letters is not None and (self.stop_confidence is None or self.rule == "ideal"):
            raise ValueError(
                "--check-letters needs --stop-confidence and applies to the letter rules, not the ideal observer"
            )
        if self.stop_confidence is None:
            if self.min_trials is not None:
                raise ValueError("--min-trials needs --stop-confidence (the stopping rule to record)")
            return
        StopRule(self.stop_confidence, self.min_trials or 1, self.n_trials, self.check_letters or 0)  # validates
        if self.min_trials is None:
            object.__setattr__(self, "min_trials", min(DEFAULT_MIN_TRIALS, self.n_trials))

    @property
    def key(self) -> str:
        """File-name-safe identifier, unique within a campaign directory (a duel run's rule is
        prefixed by its feedback; letter runs keep the keys they always had)."""
        rule = self.rule if self.feedback == "letters" else f"{self.feedback}-{self.rule}"
        if self.max_step_d is not None:
            rule += f"-step{self.max_step_d:g}"
        if self.tie_threshold:
            rule += f"-ties{self.tie_threshold:g}"
        if self.same_answers is not None:
            rule += f"-same-{self.same_answers}"
        if self.check_letters:
            rule += f"-check{self.check_letters}"
        if self.axis_step_deg is not None:
            rule += f"-axis{self.axis_step_deg:g}"
        return f"{self.setting}__{rule}__seed{self.seed:04d}"

    @property
    def stop_rule(self) -> StopRule | None:
        if self.stop_confidence is None:
            return None
        return StopRule(self.stop_confidence, int(self.min_trials or 1), self.n_trials, self.check_letters or 0)

    def to_dict(self) -> dict:
        return asdict(self)

    @classmethod
    def from_dict(cls, data: dict) -> PrescriptionSpec:
        names = {f.name for f in fields(cls)}
        return cls(**{k: v for k, v in data.items() if k in names})


def prescription_specs(
    settings,
    rules,
    *,
    n_patients=DEFAULT_PATIENTS,
    first_seed=HELD_OUT_FIRST_SEED,
    n_trials=DEFAULT_TRIALS,
    slope=DEFAULT_SLOPE,
    lapse=DEFAULT_LAPSE,
    feedback="letters",
    stop_confidence=None,
    min_trials=None,
    max_step_d=None,
    tie_threshold=0.0,
    same_answers=(None,),
    check_letters=None,
    axis_step_deg=None,
) -> list[PrescriptionSpec]:
    """The runs of a campaign, ordered by patient so that a partial campaign stays balanced.

    Seeds ``first_seed .. first_seed + n_patients − 1``, all on one side of
    :data:`HELD_OUT_FIRST_SEED` (:func:`~lensopt.bench.spec.split_of_seeds`: one table holds tuning or
    held-out patients, never both); each run records its split. ``max_step_d``:
    the letter rules' travel limit (``PrescriptionOptimizer(max_step_d=...)``; the ideal observer,
    the anchor, runs without one). ``tie_threshold``: the duel patients' (they say "the same" below
    it); ``same_answers``: how the duel optimizer tells "the same", one run per value on the same
    patients (``None``: its default). ``check_letters``: the letter rules' stopping rule checks
    its lens (:class:`lensopt.stopping.StopRule`; the ideal observer, the anchor, does not).
    ``axis_step_deg``: the rules round every axis to a trial frame's marks (5°; the ideal observer,
    the anchor, keeps 1°; ``None`` or 1: a phoropter's dial)."""
    settings = [s if isinstance(s, Setting) else get_setting(s) for s in settings]
    if not settings:
        raise ValueError("--settings names no setting")
    if len({s.name for s in settings}) != len(settings):
        raise ValueError("--settings lists a setting twice")
    if feedback not in PRESCRIPTION_FEEDBACK:
        raise ValueError(f"unknown feedback {feedback!r}; choose from: {', '.join(PRESCRIPTION_FEEDBACK)}")
    allowed = RULES_BY_FEEDBACK[feedback]
    unknown = [r for r in rules if r not in allowed]
    if unknown:
        raise ValueError(
            f"unknown rule(s) {', '.join(unknown)} with --feedback {feedback}; choose from: {', '.join(allowed)}"
        )
    if feedback != "letters" and stop_confidence is not None:
        raise ValueError(
            "--stop-confidence applies to --feedback letters only (duels and rankings have no stopping rule)"
        )
    if not rules:
        raise ValueError("--rules names no rule")
    if len(set(rules)) != len(rules):
        raise ValueError("--rules lists a rule twice")
    if isinstance(n_patients, bool) or not isinstance(n_patients, int) or n_patients < 1:
        raise ValueError(f"--patients must be at least 1, got {n_patients!r}")
    if isinstance(first_seed, bool) or not isinstance(first_seed, int) or first_seed < 0:
        raise ValueError(f"--first-seed must be an integer >= 0, got {first_seed!r}")
    split_of_seeds(first_seed, first_seed + n_patients - 1)
    if min_trials is not None and stop_confidence is not None and min_trials > n_trials:
        raise ValueError(f"--min-trials ({min_trials}) must not exceed --trials ({n_trials})")
    return [
        PrescriptionSpec(
            setting=s.name,
            rule=rule,
            seed=seed,
            n_trials=n_trials,
            slope=float(slope),
            lapse=float(lapse),
            feedback=feedback,
            with_start=s.start,
            accommodation=s.accommodation,
            stop_confidence=None if stop_confidence is None else float(stop_confidence),
            min_trials=min_trials,
            max_step_d=None if max_step_d is None or rule == "ideal" else float(max_step_d),
            tie_threshold=float(tie_threshold),
            same_answers=same,
            check_letters=None if rule == "ideal" else check_letters,
            axis_step_deg=None
            if axis_step_deg in (None, DEFAULT_AXIS_STEP_DEG) or rule == "ideal"
            else float(axis_step_deg),
        )
        for seed in range(first_seed, first_seed + n_patients)
        for s in settings
        for rule in rules
        for same in same_answers
    ]
