"""Robustness campaign (issue 14): the letter optimizers against the ideal observer on held-out patients.

Every run is one simulated session of ``n_iterations`` trials: a patient of
:class:`lensopt.bench.problems.RefractionProblem` (true correction uniform in [−3, 3]² D, the
condition's slope, lapse and number of letters; the same patient for every rule of a seed — a
paired design; in the ``varied`` condition each patient's slope and best acuity are drawn too,
:func:`lensopt.observer.varied_patient`) answers a rule — ``ucb-ald`` or ``ts-ald`` (:class:`lensopt.refraction.RefractionOptimizer`,
told the task: ``n_alternatives`` and its model lapse), ``acuity-law``
(:class:`lensopt.refraction.acuity_law.AcuityLawOptimizer`, told the same; it assumes a slope and
learns the best acuity) or ``ideal``
(:class:`lensopt.bench.ideal_observer.IdealObserver`, told the true slope, best acuity, guess and lapse rates).
The session always runs the full budget; after EVERY trial the reported lens is scored by its
acuity error ``VA(x̂) − VA_best`` (logMAR) and, from ``min_trials`` on, the stopping rule
(:class:`lensopt.stopping.StopRule` with ``max_trials = n_iterations``) is asked whether the
session could stop; the first trial at which it says so is ``stopped_at``.

Patient seeds from :data:`lensopt.bench.spec.HELD_OUT_FIRST_SEED` (100,000) on are held out
from every tuning; every record and the manifest carry the split.

Summary statistics (:func:`lensopt.bench.robustness_summary.summarize`), per condition and rule:

- median and mean error after 30/60/100/260 trials (those within the budget);
- sessions above :data:`FAILURE_LOGMAR` (0.1) after 100 trials and after the last trial; the
  *failures* compared with the ideal observer are those after the last trial;
- trials to criterion: the first trial ``t`` from which the error stays at or under
  :data:`CRITERION_LOGMAR` (0.025) up to the last trial ("reach AND stay"); a session that ends
  above the criterion never reached it and counts as ``budget + 1``;
- the stopping rule: median trials used (``stopped_at``, or the budget if it never said stop),
  the sessions stopped by confidence (``confidence ≥ threshold``; the rest stopped at
  ``max_trials``), the fraction of those truly within the criterion when they stopped, the
  fraction within :data:`HALF_LINE_LOGMAR` (half a chart line) and the worst error at a stop;
- decision time (ask + tell, ms), median and p95 over every decision of the rule, wall-clock and
  the deciding thread's CPU time (which other jobs on the machine do not lengthen);
- ratios to the ideal observer on the seeds both have run: median trials to criterion, failures.
"""

from __future__ import annotations

import dataclasses
import time
from dataclasses import dataclass

from lensopt.bench.ideal_observer import IdealObserver
from lensopt.bench.problems import RefractionProblem
from lensopt.bench.records import (
    lens_outcome,
    optimizer_settings,
    timed_session,
    timing_summary,
)
from lensopt.bench.spec import HELD_OUT_FIRST_SEED, RunSpec, split_of, split_of_seeds
from lensopt.modes.registry import get_mode
from lensopt.observer import varied_patient
from lensopt.observer.population import VARIED_SLOPE_RANGE_PER_LOGMAR, VARIED_VA_BEST_RANGE_LOGMAR
from lensopt.refraction.acuity_law_settings import ACUITY_LAW_RULE
from lensopt.refraction.letters import PAPER_LETTER_MODEL, RefractionOptimizer
from lensopt.stopping import ACUITY_TOLERANCE_LOGMAR, StopRule

#: Rules of the campaign: the two GP letter optimizers, the acuity-law optimizer and the ideal observer.
ROBUSTNESS_RULES = ("ucb-ald", "ts-ald", "acuity-law", "ideal")

#: The rules on the GP letter model whose kernel ``--hyperparameters`` replaces.
GP_RULES = ("ucb-ald", "ts-ald")

#: Rules run on request (``--rules``): ``ucb-ald-paper`` is UCB-ALD with the seed paper's letter
#: model (:data:`lensopt.refraction.PAPER_LETTER_MODEL`: plain probit, Laplace) — lensopt before
#: issue 14, measured on the same patients.
EXTRA_RULES = ("ucb-ald-paper",)
ALL_ROBUSTNESS_RULES = ROBUSTNESS_RULES + EXTRA_RULES

#: Acuity error (logMAR) of a session that is "there" (a quarter of a chart line: the stopping
#: rule's tolerance, :data:`lensopt.stopping.ACUITY_TOLERANCE_LOGMAR`) and of a failure.
CRITERION_LOGMAR = ACUITY_TOLERANCE_LOGMAR
FAILURE_LOGMAR = 0.1

#: Half a chart line (logMAR): how far off a stop may be before a clinician would see it on the
#: chart; the summary reports the stops within it beside those within the criterion.
HALF_LINE_LOGMAR = 0.05

#: Trial counts at which the errors are tabulated (those within the budget).
CHECKPOINTS = (30, 60, 100, 260)

#: File of the JSON summary, in the campaign directory.
SUMMARY_NAME = "robustness-summary.json"


@dataclass(frozen=True)
class Condition:
    """One kind of patient: slope ``a`` (logMAR⁻¹), lapse ``λ``, letters ``n`` (γ = 1/n); or, with
    ``slope`` None, patients whose slope (log-uniform on ``slope_range_per_logmar``) and best acuity
    (uniform on ``va_best_range_logmar``) vary (:func:`lensopt.observer.varied_patient`)."""

    name: str
    slope: float | None
    lapse: float = 0.0
    n_alternatives: int = 26
    n_patients: int = 100
    n_trials: int = 100
    slope_range_per_logmar: tuple[float, float] | None = None
    va_best_range_logmar: tuple[float, float] | None = None

    def to_dict(self) -> dict:
        return {
            "name": self.name,
            "slope": self.slope,
            "lapse": self.lapse,
            "n_alternatives": self.n_alternatives,
            "n_patients": self.n_patients,
            "n_trials": self.n_trials,
            "slope_range_per_logmar": self.slope_range_per_logmar,
            "va_best_range_logmar": self.va_best_range_logmar,
        }


#: The issue's conditions: 200 patients at slope 5; 100 at slope 2 (260 trials), slope 8, lapse
#: 0.05 and Sloan letters (10 alternatives); 100 trials except at slope 2.
CONDITIONS = (
    Condition("slope-5", 5.0, n_patients=200),
    Condition("slope-2", 2.0, n_trials=260),
    Condition("slope-8", 8.0),
    Condition("slope-5-lapse-0.05", 5.0, lapse=0.05),
    Condition("slope-5-sloan", 5.0, n_alternatives=10),
)
#: Conditions run on request (``--conditions``): ``varied``, 200 patients whose slope (2–8 per logMAR,
#: log-uniform) and best acuity (−0.1 to 0.3 logMAR) vary as patients' do — the population over which
#: a posterior probability (the stopping rule's confidence) is calibrated, not one fixed slope.
EXTRA_CONDITIONS = (
    Condition(
        "varied",
        None,
        n_patients=200,
        slope_range_per_logmar=VARIED_SLOPE_RANGE_PER_LOGMAR,
        va_best_range_logmar=VARIED_VA_BEST_RANGE_LOGMAR,
    ),
)
CONDITIONS_BY_NAME = {c.name: c for c in CONDITIONS + EXTRA_CONDITIONS}


def condition_as_run(name: str | Condition, max_patients: int | None, n_trials: int | None) -> Condition:
    """Condition ``name`` as a campaign runs it: its patients capped by ``max_patients`` and its
    trials replaced by ``n_trials`` (None: its own)."""
    condition = name if isinstance(name, Condition) else get_condition(name)
    n_patients = condition.n_patients if max_patients is None else min(condition.n_patients, max_patients)
    return dataclasses.replace(condition, n_patients=n_patients, n_trials=n_trials or condition.n_trials)


def get_condition(name: str) -> Condition:
    if name not in CONDITIONS_BY_NAME:
        raise ValueError(f"unknown robustness condition {name!r}; choose from: {', '.join(CONDITIONS_BY_NAME)}")
    return CONDITIONS_BY_NAME[name]


def robustness_specs(
    conditions,
    rules,
    *,
    first_seed=HELD_OUT_FIRST_SEED,
    max_patients=None,
    n_trials=None,
    n_initial=5,
    stop_confidence=0.95,
    min_trials=20,
    model_lapse=None,
    beta=None,
    kernel=None,
    check_letters=None,
) -> list:
    """The runs of a campaign, ordered by patient so a partial campaign stays balanced.

    ``max_patients`` caps each condition's patients; ``n_trials`` overrides every condition's
    budget; ``min_trials`` is capped at the budget. Seeds ``first_seed, first_seed + 1, ...``
    must all lie on one side of :data:`HELD_OUT_FIRST_SEED`. ``model_lapse`` and ``beta`` of the
    letter optimizers: None keeps :class:`lensopt.refraction.RefractionOptimizer`'s defaults;
    ``kernel`` (a ``kernel`` table as in data/letter-model-hyperparameters.json) replaces the GP
    rules' shipped kernel (ucb-ald and ts-ald; not the paper's model, which keeps its own).
    ``check_letters``: the stopping rule's check through the reported lens (None: none), for the
    letter rules (the ideal observer has no stopping rule's check).
    """
    conditions = [c if isinstance(c, Condition) else get_condition(c) for c in conditions]
    if len({c.name for c in conditions}) != len(conditions):
        raise ValueError("--conditions lists a condition twice")
    unknown = [r for r in rules if r not in ALL_ROBUSTNESS_RULES]
    if unknown:
        raise ValueError(f"unknown rule(s) {', '.join(unknown)}; choose from: {', '.join(ALL_ROBUSTNESS_RULES)}")
    if len(set(rules)) != len(rules):
        raise ValueError("--rules lists a rule twice")
    counts = {c.name: condition_as_run(c, max_patients, None).n_patients for c in conditions}
    split_of_seeds(first_seed, first_seed + max(counts.values(), default=1) - 1)  # one side of the boundary
    specs = []
    for i in range(max(counts.values(), default=0)):
        seed = first_seed + i
        for c in conditions:
            if i >= counts[c.name]:
                continue
            budget = n_trials or c.n_trials
            for rule in rules:
                ideal = rule == "ideal"
                specs.append(
                    RunSpec(
                        "robustness",
                        c.name,
                        rule,
                        seed,
                        budget,
                        n_initial,
                        slope=c.slope,
                        report_every=1,
                        beta=None if ideal or rule == ACUITY_LAW_RULE else beta,  # β: the GP rules
                        lapse=c.lapse,
                        n_alternatives=c.n_alternatives,
                        model_lapse=None if ideal else model_lapse,
                        split=split_of(seed),
                        stop_confidence=stop_confidence,
                        min_trials=min(min_trials, budget),
                        check_letters=None if ideal else check_letters,
                        slope_range_per_logmar=c.slope_range_per_logmar,
                        va_best_range_logmar=c.va_best_range_logmar,
                        kernel=kernel if rule in GP_RULES else None,
                    )
                )
    return specs


def spec_optimizer(spec, patient, stop=None):
    """The optimizer of a run for its patient (:func:`spec_patient`), with the stopping rule ``stop``."""
    if spec.rule == "ideal":
        return IdealObserver(
            slope=patient.slope,
            n_alternatives=spec.n_alternatives,
            lapse=float(spec.lapse),
            va_best_logmar=patient.best_acuity_logmar,
            seed=spec.seed,
            stop=stop,
        )
    if spec.rule == "ucb-ald-paper":
        return RefractionOptimizer(
            rule="ucb-ald",
            seed=spec.seed,
            n_initial=spec.n_initial,
            stop=stop,
            **{**PAPER_LETTER_MODEL, **spec.optimizer_options},
        )
    # ucb-ald, ts-ald, acuity-law: the letter optimizer the letters mode builds for the rule
    return get_mode("letters").new_optimizer(
        {**spec.optimizer_options, "stop": stop}, rule=spec.rule, seed=spec.seed, n_initial=spec.n_initial
    )


def spec_patient(spec):
    """The patient of a run: its seed's, with the run's slope (or one drawn from its range), lapse and letters."""
    if spec.slope_range_per_logmar is not None:
        return varied_patient(
            spec.seed,
            spec.slope_range_per_logmar,
            spec.va_best_range_logmar,
            lapse=float(spec.lapse),
            n_alternatives=spec.n_alternatives,
        )
    return RefractionProblem(
        slope=float(spec.slope), n_trials=spec.n_iterations, lapse=float(spec.lapse), n_alternatives=spec.n_alternatives
    ).patient(spec.seed)


def run_robustness(spec) -> dict:
    """One session of the campaign (``spec`` a :class:`lensopt.bench.spec.RunSpec`)."""
    patient = spec_patient(spec)
    stop = StopRule(
        confidence=spec.stop_confidence,
        min_trials=spec.min_trials,
        max_trials=spec.n_iterations,
        check_letters=spec.check_letters or 0,
    )
    opt = spec_optimizer(spec, patient, stop)
    trajectory, report_ms, stop_ms = [], [], []
    stopped: dict[str, object] = {
        "stopped_at": None,
        "stop_reason": None,
        "confidence_at_stop": None,
        "error_at_stop": None,
        "lens_at_stop": None,
        "letters_through_at_stop": None,
    }
    lens = None

    def report(t, _trial, _answer):  # the session runs on after the stop, to score the whole budget
        nonlocal lens
        t1 = time.perf_counter()
        lens = tuple(float(v) for v in opt.best())
        t2 = time.perf_counter()
        report_ms.append(1e3 * (t2 - t1))
        error = float(patient.visual_acuity(*lens) - patient.best_acuity_logmar)
        trajectory.append(error)
        if stopped["stopped_at"] is None and t >= stop.min_trials:
            if opt.should_stop():
                confidence = float(opt.confidence())
                letters = opt.letters_through_reported() if stop.check_letters else None
                stopped.update(
                    stopped_at=t,
                    confidence_at_stop=confidence,
                    error_at_stop=error,
                    lens_at_stop=list(lens),
                    stop_reason=stop.reason(t, confidence, letters),
                    letters_through_at_stop=letters,
                )
            stop_ms.append(1e3 * (time.perf_counter() - t2))

    decisions = timed_session(
        opt,
        lambda trial: bool(patient.respond(trial.letter_logmar, trial.sphere_d, trial.cylinder_d)),
        spec.n_iterations,
        report,
    )
    timings = {"decision": timing_summary(decisions.wall_ms), "report": timing_summary(report_ms)}
    if stop_ms:
        timings["stop_check"] = timing_summary(stop_ms)
    return {
        **lens_outcome(patient, lens),
        "patient_slope": patient.slope,
        "patient_va_best_logmar": patient.best_acuity_logmar,
        "trajectory": trajectory,
        "max_trials": spec.n_iterations,
        **stopped,
        "decision_ms": [round(v, 4) for v in decisions.wall_ms],
        "decision_cpu_ms": [round(v, 4) for v in decisions.cpu_ms],
        "timings_ms": timings,
        "optimizer_settings": optimizer_settings(opt),
    }


# ------------------------------------------------------------------------------ summary
