"""Prescription campaign (issue 16, item 8): the full prescription (M, J0, J45) on clinic patients.

Every run is one simulated full refraction (:func:`lensopt.simulation.simulate_prescription`) of
``n_trials`` trials: patient ``seed`` of :func:`lensopt.observer.draw_clinic_patients` (the
campaign's slope and lapse, 26 letters; the same correction for every setting, feedback and rule of
a seed — a paired design) answers a rule. With letters (``feedback="letters"``): ``bracket-ald``,
``ucb-ald`` or ``ts-ald`` (:class:`lensopt.refraction.prescription_letters.PrescriptionOptimizer`)
or ``ideal`` (:class:`lensopt.bench.ideal_prescription.PrescriptionIdealObserver`, told the true
slope, lapse, best acuity and accommodation). With duels (``feedback="duel"``, "one or two, or the
same?"; the patient says "the same" when its Gumbel-noisy utilities differ by less than
``tie_threshold``, 0 by default: never): ``muc-ald`` or ``kss-ald``
(:class:`lensopt.refraction.prescription_duels.PrescriptionDuelOptimizer`); there is no duel ideal
observer and no stopping rule, and a duel run's key names its feedback (``…__duel-muc-ald__…``),
the patient's tie threshold and how the optimizer told "the same" when set
(``…__duel-muc-ald-ties1-same-dropped__…``); the record counts the "same" answers.
With rankings (``feedback="ranking"``, "put these three lenses in order, clearest first"):
``mpes-ald`` (:class:`lensopt.refraction.prescription_rankings.PrescriptionRankingOptimizer`), as
duels (no ideal observer, no stopping rule, ``…__ranking-mpes-ald__…``).

Settings (:data:`lensopt.bench.prescription_spec.SETTINGS`, with the rules, the defaults and the
runs of a campaign, :func:`~lensopt.bench.prescription_spec.prescription_specs`), a grid: with or without a starting refraction (an autorefraction,
:func:`lensopt.observer.autorefraction` with ``np.random.SeedSequence([seed, 1])``: SD 0.4 D in M,
0.2 D in J0 and J45; without one the rule searches the full box) × with or without accommodation
(Hofstetter's average amplitude for the patient's age, or none).

The reported estimate is scored after EVERY trial (``optimizer.best()`` is cached per trial):
the record holds the signed power-vector errors (reported − truth, D) per coordinate and the blur
error (their length) as lists, one value per trial. With a stopping rule (``stop_confidence``), the
session still runs the whole budget; after each trial from ``min_trials`` on the rule
(:class:`lensopt.stopping.StopRule`, ``max_trials`` = the budget) is asked once whether it could
stop, until it first says so: that trial is ``stopped_at`` and the errors there are recorded, so
the same sessions give the fixed-budget and the stopping statistics.

Patient seeds from :data:`lensopt.bench.spec.HELD_OUT_FIRST_SEED` (100,000) on are held out;
every record carries its seed's ``split``. The statistics are in
:mod:`lensopt.bench.prescription_summary`.

Runs go through :func:`run_prescription_campaign`: the runner of :mod:`lensopt.bench.runner`
(Dask, a local cluster by default, a tqdm bar, one JSON record per run written atomically as it
arrives, finished runs skipped), with this campaign's task, :func:`run_prescription`.
"""

from __future__ import annotations

import itertools
import json
import platform
import time
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import numpy as np

from lensopt.bench.ideal_prescription import PrescriptionIdealObserver
from lensopt.bench.prescription_spec import CAMPAIGN, PrescriptionSpec, get_setting
from lensopt.bench.records import optimizer_settings, versions
from lensopt.bench.runner import CampaignSummary, CampaignTask, damaged_record, one_line, run_campaign
from lensopt.bench.spec import spec_differences
from lensopt.observer import autorefraction, draw_clinic_patients
from lensopt.refraction.lens import Lens
from lensopt.refraction.prescription import SearchBox
from lensopt.refraction.prescription_duels import PrescriptionDuelOptimizer
from lensopt.refraction.prescription_letters import PrescriptionOptimizer
from lensopt.refraction.prescription_link import AcuityLinkSearch
from lensopt.refraction.prescription_rankings import PrescriptionRankingOptimizer
from lensopt.simulation import simulate_prescription

#: Record format tag of a run of this campaign.
PRESCRIPTION_RECORD_FORMAT = "lensopt.bench-prescription-run/1"

#: Errors (D) of the autorefraction that starts a session: SD in M and in each of J0, J45.
AUTOREFRACTION_SD_D = {"M": 0.4, "J0": 0.2, "J45": 0.2}

#: Blur error (power-vector length, D) of a session that is "there".
CRITERION_D = 0.25

#: Blur error (D) of a session that is lost: "more than 0.5 D off" (README, docs/prescription.md).
FAILURE_D = 0.5

#: Trial counts at which the errors are tabulated (those within the budget; and the budget's end).
CHECKPOINTS = (10, 20, 40, 60, 100)

#: Coordinates of the power vector, in record order.
COORDINATES = ("M", "J0", "J45")

#: Files of the summary, in the campaign directory.
SUMMARY_NAME = "prescription-summary.json"
BLAND_ALTMAN_NAME = "prescription-bland-altman.png"


# ------------------------------------------------------------------------------ one run
def patient_and_start(spec: PrescriptionSpec):
    """The simulated patient of ``spec`` and its starting refraction (None without a start): an
    autorefraction, moved along the sphere by the setting's ``start_m_offset_d`` (old glasses)."""
    patient = draw_clinic_patients(
        1,
        spec.seed,
        accommodation=spec.accommodation,
        slope=float(spec.slope),
        n_alternatives=spec.n_alternatives,
        lapse=float(spec.lapse),
    )[0]
    if not spec.with_start:
        return patient, None
    sd = AUTOREFRACTION_SD_D
    start = autorefraction(patient, np.random.SeedSequence([spec.seed, 1]), m_sd_d=sd["M"], j_sd_d=sd["J0"])
    offset_d = get_setting(spec.setting).start_m_offset_d  # old glasses: the same lens, more minus
    if offset_d:
        start = Lens(start.sphere_d + offset_d, start.cylinder_d, start.axis_deg)
    return patient, start


def optimizer_of(spec: PrescriptionSpec, patient, start, stop=None):
    """The optimizer of run ``spec`` for ``patient``, started at ``start`` (None: the full box), with
    the stopping rule ``stop`` (letter rules; None: none)."""
    steps = {} if spec.axis_step_deg is None else {"axis_step_deg": spec.axis_step_deg}
    if spec.feedback == "duel":
        same = {} if spec.same_answers is None else {"same_answers": spec.same_answers}
        return PrescriptionDuelOptimizer(
            rule=spec.rule, seed=spec.seed, start=start, n_alternatives=spec.n_alternatives, **same, **steps
        )
    if spec.feedback == "ranking":
        return PrescriptionRankingOptimizer(
            rule=spec.rule, seed=spec.seed, start=start, n_alternatives=spec.n_alternatives, **steps
        )
    if spec.rule == "ideal":
        return PrescriptionIdealObserver(
            slope=patient.slope,
            n_alternatives=spec.n_alternatives,
            lapse=patient.lapse,
            va_best_logmar=patient.va_best_logmar,
            accommodation_d=patient.accommodation_d,
            box=SearchBox(start),
            seed=spec.seed,
            stop=stop,
        )
    return PrescriptionOptimizer(
        rule=spec.rule,
        seed=spec.seed,
        start=start,
        n_alternatives=spec.n_alternatives,
        stop=stop,
        max_step_d=spec.max_step_d,
        **steps,
    )


def lenses_set(history, feedback: str) -> list[Lens]:
    """The lens the clinician sets for each trial of ``history``: a letter's lens, a comparison's
    lens 1 (a duel's first, a ranking's first; the others are handed in turn)."""
    if feedback == "duel":
        return [trial.first_lens for trial, _ in history]
    if feedback == "ranking":
        return [trial.lenses[0] for trial, _ in history]
    return [Lens(trial.sphere_d, trial.cylinder_d, trial.axis_deg) for trial, _ in history]


def lens_changes(lenses: list[Lens]) -> dict[str, int]:
    """How often the lens set changed between consecutive trials (``all``), and how often only by its
    axis (``axis_only``: sphere and cylinder kept, a dial turn)."""
    pairs = list(itertools.pairwise(lenses))
    return {
        "all": sum(a != b for a, b in pairs),
        "axis_only": sum((a.sphere_d, a.cylinder_d) == (b.sphere_d, b.cylinder_d) and a != b for a, b in pairs),
    }


def _rounded(values, digits=6) -> list[float]:
    return [round(float(v), digits) for v in values]


def run_prescription(spec: PrescriptionSpec) -> dict:
    """The body of one run's record (see the module docstring)."""
    patient, start = patient_and_start(spec)
    stop = spec.stop_rule
    opt = optimizer_of(spec, patient, start, stop)
    decision_ms: list[float] = []
    stopped: dict = {
        "stopped_at": None,
        "stop_reason": None,
        "confidence_at_stop": None,
        "letters_through_at_stop": None,
    }

    def after_trial(t):  # the session runs on after the stop, to score the whole budget
        decision_ms.append(float(opt.last_decision_ms))
        if stop is None or stopped["stopped_at"] is not None or t < stop.min_trials:
            return
        if opt.should_stop():
            confidence = float(opt.confidence())
            letters = opt.letters_through_reported() if stop.check_letters else None
            reason = stop.reason(t, confidence, letters)  # a check unfinished at the budget: the budget's
            stopped.update(
                stopped_at=t, stop_reason=reason, confidence_at_stop=confidence, letters_through_at_stop=letters
            )

    answer_options: dict[str, Any] = {"tie_threshold": spec.tie_threshold} if spec.feedback == "duel" else {}
    result = simulate_prescription(
        patient,
        opt,
        spec.n_trials,
        checkpoints=range(1, spec.n_trials + 1),
        progress=after_trial,
        feedback=spec.feedback,
        **answer_options,
    )
    scores = result.checkpoints
    if [s.trials for s in scores] != list(range(1, spec.n_trials + 1)):
        raise RuntimeError("simulate_prescription did not score every trial")
    curves = {"blur_error_d": _rounded(s.blur_error_d for s in scores)}
    for i, name in enumerate(COORDINATES):
        curves[name] = _rounded(s.power_vector_error_d[i] for s in scores)
    error_at_stop = None
    if stopped["stopped_at"] is not None:
        i = stopped["stopped_at"] - 1
        error_at_stop = {"blur_error_d": curves["blur_error_d"][i], **{c: curves[c][i] for c in COORDINATES}}
    final = result.to_dict()
    truth = patient.correction.power_vector()
    return {
        "true_prescription": final["true_prescription"],
        "true_power_vector_d": dict(zip(COORDINATES, (truth.m_d, truth.j0_d, truth.j45_d))),
        "accommodation_d": float(patient.accommodation_d),
        "va_best_logmar": float(patient.va_best_logmar),
        "start": final["start"],
        "start_power_vector_d": None
        if start is None
        else dict(zip(COORDINATES, (float(v) for v in start.power_vector().to_array()))),
        "prescription": final["prescription"],
        "power_vector_d": scores[-1].to_dict()["power_vector_d"],
        "power_vector_error_d": final["power_vector_error_d"],
        "blur_error_d": final["blur_error_d"],
        "va_error_logmar": final["va_error_logmar"],
        "confidence": final["confidence"],
        "estimate": final["estimate"],
        "curves": curves,
        "stop": None if stop is None else stop.to_dict(),
        **stopped,
        "error_at_stop": error_at_stop,
        "latency_ms": final["latency_ms"],
        "decision_ms": [round(v, 4) for v in decision_ms],
        "same_answer_count": sum(answer == "same" for _, answer in opt.history) if spec.feedback == "duel" else None,
        "lens_changes": lens_changes(lenses_set(opt.history, spec.feedback)),
        "optimizer_settings": optimizer_settings(opt),
    }


def run_one_prescription(spec: dict) -> dict:
    """Run one task of the campaign and return its JSON-able record (a pure function of ``spec``)."""
    run = PrescriptionSpec.from_dict(spec)
    started = datetime.now(UTC)
    t0 = time.perf_counter()
    body = run_prescription(run)
    return {
        "format": PRESCRIPTION_RECORD_FORMAT,
        "key": run.key,
        **run.to_dict(),
        **body,
        "wall_time_s": time.perf_counter() - t0,
        "started_at": started.isoformat(),
        "finished_at": datetime.now(UTC).isoformat(),
        "host": platform.node(),
        "versions": versions(),
    }


# ------------------------------------------------------------------------------ the campaign
def prescription_record_path(out_dir, spec: PrescriptionSpec) -> Path:
    return Path(out_dir) / "runs" / f"{spec.key}.json"


def _finished(out_dir: Path, spec: PrescriptionSpec) -> bool:
    path = prescription_record_path(out_dir, spec)
    if not path.exists():
        return False
    try:
        record = json.loads(path.read_text())
    except ValueError:  # not JSON (cut short), or not text
        return False  # unreadable: run it again
    try:
        recorded = PrescriptionSpec.from_dict(record)
    except (AttributeError, TypeError, ValueError) as exc:  # not an object, a setting missing or out of range
        raise damaged_record(path, f"its settings do not read: {one_line(exc)}") from None
    if recorded.key != path.stem:  # lensopt names a record after its run: its settings were altered
        raise damaged_record(path, f"its settings are those of run {recorded.key}, not of the run it is named after")
    if recorded != spec:
        raise ValueError(
            f"{path} was run with other settings ({spec_differences(recorded, spec)}); "
            "use another --out directory or the settings of that campaign"
        )
    recorded_link = (record.get("optimizer_settings") or {}).get("clarity_link", "linear")
    comparisons: dict[str, type[AcuityLinkSearch]] = {
        "duel": PrescriptionDuelOptimizer,
        "ranking": PrescriptionRankingOptimizer,
    }
    comparison = comparisons.get(spec.feedback)
    if comparison is not None and recorded_link != comparison.default_clarity_link(spec.rule):
        raise ValueError(
            f"{path} was run with the {recorded_link} {spec.feedback} model (before the acuity link became the "
            "default); use another --out directory, so that one campaign holds one model"
        )
    return True


#: The campaign's runs, for :func:`lensopt.bench.runner.run_campaign`.
PRESCRIPTION_TASK = CampaignTask(CAMPAIGN, run_one_prescription, prescription_record_path, _finished)


def run_prescription_campaign(
    specs,
    out_dir,
    *,
    manifest: dict | None = None,
    scheduler: str | None = None,
    n_workers: int | None = None,
    local_sync: bool = False,
    progress: bool = True,
    client=None,
    on_plan=None,
) -> CampaignSummary:
    """Run every spec without a record in ``out_dir``; store each record as it finishes: the
    benchmark runner (:func:`lensopt.bench.runner.run_campaign`) with this campaign's task."""
    return run_campaign(
        specs,
        out_dir,
        manifest=manifest,
        scheduler=scheduler,
        n_workers=n_workers,
        local_sync=local_sync,
        progress=progress,
        client=client,
        task=PRESCRIPTION_TASK,
        on_plan=on_plan,
    )
