"""What one benchmark run is: its campaign, its patient seed's split and its settings (:class:`RunSpec`).

Every campaign module (:mod:`lensopt.bench.preferential`, :mod:`lensopt.bench.feedback`,
:mod:`lensopt.bench.robustness`) and the runner that dispatches to them
(:mod:`lensopt.bench.runner`) build on this module; it imports none of them.
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass, field, fields

from lensopt.stopping import DEFAULT_MIN_TRIALS, DEFAULT_STOP_CONFIDENCE, MAX_CHECK_LETTERS

#: Campaign kinds: contextual binary test functions, simulated refraction, and the preferential
#: campaigns of :mod:`lensopt.bench.preferential`, letters against duels (:mod:`lensopt.bench.feedback`)
#: and the held-out robustness campaign against the ideal observer (:mod:`lensopt.bench.robustness`);
#: ``binary``: the test functions without a context (:mod:`lensopt.bench.binary`).
CAMPAIGNS = (
    "functions",
    "refraction",
    "duels",
    "batch-duels",
    "contextual-duels",
    "feedback",
    "robustness",
    "binary",
)

#: Patient seeds from this one on are held out: no tuning (kernels, hyperparameters, β,
#: thresholds) may use them (issue 14). Seeds below it are the tuning split.
HELD_OUT_FIRST_SEED = 100_000

#: Names of the two splits of the patient seeds.
SPLITS = ("tuning", "held-out")

#: The campaigns whose seeds are simulated patients: every run records its seed's split.
PATIENT_CAMPAIGNS = ("refraction", "feedback", "robustness")


def split_of(seed: int) -> str:
    """``"held-out"`` for patient seeds ``>= HELD_OUT_FIRST_SEED``, ``"tuning"`` below."""
    return "held-out" if seed >= HELD_OUT_FIRST_SEED else "tuning"


def split_of_seeds(first_seed: int, last_seed: int) -> str:
    """The split of patient seeds ``first_seed..last_seed``, which must lie on one side of
    :data:`HELD_OUT_FIRST_SEED`: a campaign of both would put tuning and held-out patients in one
    table. One line naming the seeds and the fix otherwise (every campaign of patients refuses it)."""
    if split_of(first_seed) != split_of(last_seed):
        raise ValueError(
            f"patient seeds {first_seed}..{last_seed} straddle the held-out boundary "
            f"{HELD_OUT_FIRST_SEED}; start at {HELD_OUT_FIRST_SEED} (held out) or lower "
            "--first-seed so that all seeds are below it (tuning)"
        )
    return split_of(first_seed)


def _is_number(value) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value)


#: The command-line option that sets each field of a spec, per campaign (a field an option of that
#: command does not set keeps a description: the condition's, or the campaign's own); fields of the
#: run's key (problem, rule, seed, setting) never differ between a record and the run of its key.
_GP_OPTIONS = {
    "n_iterations": "--iterations",
    "n_initial": "--initial",
    "report_every": "--report-every",
    "beta": "--beta",
    "hyperparameters": "--hyperparameters",
}
_OPTIONS_BY_CAMPAIGN = {
    "refraction": {**_GP_OPTIONS, "slope": "--slopes"},
    "feedback": {**_GP_OPTIONS, "slope": "--slope", "tie_threshold": "--tie-threshold", "beta": "the letters' β"},
    "robustness": {
        "n_iterations": "--trials",
        "n_initial": "--initial",
        "stop_confidence": "--stop-confidence",
        "min_trials": "--min-trials",
        "check_letters": "--check-letters",
        "model_lapse": "--model-lapse",
        "kernel": "--hyperparameters",
        "beta": "β",
        "slope": "the condition's slope",
        "lapse": "the condition's lapse",
        "n_alternatives": "the condition's letters",
        "slope_range_per_logmar": "the condition's slopes",
        "va_best_range_logmar": "the condition's best acuities",
    },
    "prescription": {
        "n_trials": "--trials",
        "slope": "--slope",
        "lapse": "--lapse",
        "feedback": "--feedback",
        "stop_confidence": "--stop-confidence",
        "min_trials": "--min-trials",
        "check_letters": "--check-letters",
        "max_step_d": "--max-step",
        "tie_threshold": "--tie-threshold",
        "same_answers": "--same-answers",
        "n_alternatives": "letters",
    },
}


def _option_value(value) -> str:
    """A setting as the command line gives it: ``default`` for one not given (None), numbers to six
    significant digits, a kernel table as such."""
    if value is None:
        return "default"
    if isinstance(value, dict):
        return "a kernel file"
    if isinstance(value, (tuple, list)):
        return "..".join(_option_value(v) for v in value)
    if isinstance(value, float):
        return f"{value:.6g}"
    return str(value)


def spec_differences(recorded, wanted) -> str:
    """What differs between a campaign's recorded run and the one asked for now, in one phrase
    naming the campaign's own options: ``"--iterations 30 there, 40 here"`` (two specs of one
    dataclass; ``default`` for an option not given)."""
    options = _OPTIONS_BY_CAMPAIGN.get(getattr(wanted, "campaign", ""), _GP_OPTIONS)
    said = []
    for f in fields(wanted):
        there, here = getattr(recorded, f.name), getattr(wanted, f.name)
        if there != here:
            shown = _option_value(there), _option_value(here)
            if shown[0] == shown[1]:  # alike once rounded: in full
                shown = repr(there), repr(here)
            said.append(f"{options.get(f.name, f.name)} {shown[0]} there, {shown[1]} here")
    return "; ".join(said)


@dataclass(frozen=True)
class RunSpec:
    """One run: a rule on a problem with a seed, for ``n_iterations`` trials."""

    campaign: str
    problem: str
    rule: str
    seed: int
    n_iterations: int
    n_initial: int = 5
    slope: float | None = None  # refraction only
    hyperparameters: str = "fitted"  # functions only: "fitted" (paper) or "default"
    report_every: int = 1  # search the reported optimum after trial 1, every k trials, and the last
    tie_threshold: float | None = None  # feedback only: the patient's δ (utility units)
    beta: float | None = None  # refraction, feedback (letters), binary: β of UCB_Φ (None: the default)
    # robustness only (None elsewhere, so older records load and compare equal):
    lapse: float | None = None  # the patient's lapse rate λ (robustness default 0)
    n_alternatives: int | None = None  # letters to choose from, γ = 1/n (robustness default 26)
    model_lapse: float | None = None  # the optimizer's assumed λ (None: the optimizer's default)
    split: str | None = None  # "held-out" (seed >= HELD_OUT_FIRST_SEED) or "tuning"; patient campaigns
    stop_confidence: float | None = None  # StopRule.confidence (robustness default 0.95)
    min_trials: int | None = None  # StopRule.min_trials (robustness default 20, at most n_iterations)
    check_letters: int | None = None  # StopRule.check_letters (None: no check, as every run before it)
    # robustness, varied patients (then slope is None): each patient's slope log-uniform on
    # slope_range_per_logmar and best acuity uniform on va_best_range_logmar (lensopt.observer.varied_patient)
    slope_range_per_logmar: tuple[float, float] | None = None
    va_best_range_logmar: tuple[float, float] | None = None
    # robustness, the GP letter rules: their kernel (a ``kernel`` entry as in
    # data/letter-model-hyperparameters.json; None: the shipped one). Not hashed: a dict.
    kernel: dict | None = field(default=None, hash=False)

    def reports_after(self, trial: int) -> bool:
        """Whether the reported optimum is searched after ``trial`` (1-based); in between, the
        trajectory holds the last reported value (the search costs as much as a decision)."""
        return trial == 1 or trial == self.n_iterations or trial % self.report_every == 0

    def __post_init__(self):
        if self.campaign not in CAMPAIGNS:
            raise ValueError(f"RunSpec.campaign must be one of {CAMPAIGNS}, got {self.campaign!r}")
        if not isinstance(self.seed, int) or self.seed < 0:
            raise ValueError(f"RunSpec.seed must be an integer >= 0, got {self.seed!r}")
        if not isinstance(self.n_iterations, int) or self.n_iterations < 1:
            raise ValueError(f"RunSpec.n_iterations must be an integer >= 1, got {self.n_iterations!r}")
        if not isinstance(self.n_initial, int) or self.n_initial < 0:
            raise ValueError(f"RunSpec.n_initial must be an integer >= 0, got {self.n_initial!r}")
        for name in ("slope_range_per_logmar", "va_best_range_logmar"):
            value = getattr(self, name)
            if value is not None:
                if self.campaign != "robustness" or len(value) != 2 or not all(_is_number(v) for v in value):
                    raise ValueError(f"RunSpec.{name} must be (low, high) of a robustness run, got {value!r}")
                object.__setattr__(self, name, tuple(float(v) for v in value))  # a JSON list reads back equal
        varied = self.slope_range_per_logmar is not None
        if varied != (self.va_best_range_logmar is not None):
            raise ValueError("RunSpec.slope_range_per_logmar and va_best_range_logmar come together (varied patients)")
        if varied and self.slope is not None:
            raise ValueError("RunSpec.slope must be None when slope_range_per_logmar draws each patient's slope")
        if self.campaign in ("refraction", "feedback", "robustness") and self.slope is None and not varied:
            raise ValueError(f"RunSpec.slope is required for a {self.campaign} run")
        if self.campaign == "feedback" and not (
            isinstance(self.tie_threshold, (int, float)) and self.tie_threshold >= 0
        ):
            raise ValueError(
                f"RunSpec.tie_threshold must be a number >= 0 for a feedback run, got {self.tie_threshold!r}"
            )
        if self.beta is not None and not (
            isinstance(self.beta, (int, float)) and math.isfinite(self.beta) and self.beta >= 0
        ):
            raise ValueError(f"RunSpec.beta must be a number >= 0 or None, got {self.beta!r}")
        if not isinstance(self.report_every, int) or self.report_every < 1:
            raise ValueError(f"RunSpec.report_every must be an integer >= 1, got {self.report_every!r}")
        if self.hyperparameters not in ("fitted", "default"):
            raise ValueError(f"RunSpec.hyperparameters must be 'fitted' or 'default', got {self.hyperparameters!r}")
        if self.kernel is not None and (self.campaign != "robustness" or not isinstance(self.kernel, dict)):
            raise ValueError(f"RunSpec.kernel must be a kernel table of a robustness run, got {self.kernel!r}")
        if self.campaign in PATIENT_CAMPAIGNS and self.split is None:  # records before it: null, the same run
            object.__setattr__(self, "split", split_of(self.seed))
        if self.campaign == "robustness":
            self._fill_robustness_defaults()
        self._check_robustness_fields()

    def _fill_robustness_defaults(self):
        defaults = {
            "lapse": 0.0,
            "n_alternatives": 26,
            "split": split_of(self.seed),
            "stop_confidence": DEFAULT_STOP_CONFIDENCE,
            "min_trials": min(DEFAULT_MIN_TRIALS, self.n_iterations),
        }
        for name, value in defaults.items():
            if getattr(self, name) is None:
                object.__setattr__(self, name, value)

    def _check_robustness_fields(self):
        n = self.n_alternatives
        if n is not None and (isinstance(n, bool) or not isinstance(n, int) or n < 2):
            raise ValueError(f"RunSpec.n_alternatives must be an integer >= 2, got {n!r}")
        guess = 1.0 / (n or 26)
        if self.lapse is not None and not (_is_number(self.lapse) and 0 <= self.lapse < 1 - guess):
            raise ValueError(f"RunSpec.lapse must be in [0, 1 - 1/n_alternatives), got {self.lapse!r}")
        if self.model_lapse is not None and not (_is_number(self.model_lapse) and 0 <= self.model_lapse < 0.5):
            raise ValueError(f"RunSpec.model_lapse must be in [0, 0.5), got {self.model_lapse!r}")
        if self.split is not None:
            if self.split not in SPLITS:
                raise ValueError(f"RunSpec.split must be one of {SPLITS}, got {self.split!r}")
            if isinstance(self.seed, int) and self.split != split_of(self.seed):
                raise ValueError(
                    f"RunSpec.split of seed {self.seed} is {split_of(self.seed)!r} "
                    f"(held out from {HELD_OUT_FIRST_SEED:,} on), got {self.split!r}"
                )
        if self.stop_confidence is not None and not (_is_number(self.stop_confidence) and 0 < self.stop_confidence < 1):
            raise ValueError(f"RunSpec.stop_confidence must be in (0, 1), got {self.stop_confidence!r}")
        m = self.min_trials
        if m is not None and (
            isinstance(m, bool)
            or not isinstance(m, int)
            or m < 1
            or (isinstance(self.n_iterations, int) and m > self.n_iterations)
        ):
            raise ValueError(f"RunSpec.min_trials must be an integer from 1 to n_iterations, got {m!r}")
        k = self.check_letters
        if k is not None and (isinstance(k, bool) or not isinstance(k, int) or not 1 <= k <= MAX_CHECK_LETTERS):
            raise ValueError(
                f"RunSpec.check_letters must be None or an integer from 1 to {MAX_CHECK_LETTERS}, got {k!r}"
            )

    @property
    def optimizer_options(self) -> dict:
        """Keyword arguments of the refraction optimizer set by this spec: β, the kernel, the number
        of alternatives and the model's lapse rate, each when given."""
        options: dict = {} if self.beta is None else {"beta": float(self.beta)}
        if self.kernel is not None:
            options["hyperparameters"] = self.kernel
        if self.n_alternatives is not None:
            options["n_alternatives"] = int(self.n_alternatives)
        if self.model_lapse is not None:
            options["lapse"] = float(self.model_lapse)
        return options

    @property
    def key(self) -> str:
        """File-name-safe identifier, unique within a campaign directory."""
        return f"{self.problem}__{self.rule}__seed{self.seed:04d}"

    def to_dict(self) -> dict:
        return asdict(self)

    @classmethod
    def from_dict(cls, data: dict) -> RunSpec:
        names = {f.name for f in fields(cls)}
        return cls(**{k: v for k, v in data.items() if k in names})
