"""The 95 % stopping rule on varied patients: each patient's psychometric slope and best acuity drawn
from a range, as in a clinic, instead of one fixed slope per condition.

`lensopt bench robustness` gives every patient of a condition the same slope (2, 5 or 8 per logMAR)
and best acuity 0.0 logMAR. The acuity-law optimizer's confidence is a posterior probability: it is
calibrated on average over patients like its prior (slopes 2–8, best acuities over a range), not
for every fixed slope. Here each patient draws, from its own seed, a slope log-uniformly on
``--slopes LO HI`` and a best acuity uniformly on ``--va-best LO HI``; its correction and answers
are those of ``lensopt.observer.draw_patients`` with that seed (``lensopt.observer.varied_patient``;
the campaign ``lensopt bench robustness --conditions varied`` runs the same patients on Dask). Held-out patients (seeds from
100,000), 100 trials, the stopping rule's defaults (confidence 0.95, from trial 20); prints, per rule and per slope
band, the sessions, the stopped ones, the fraction of those truly within 0.025 logMAR at their stop,
the median trials they used, and the sessions above 0.1 logMAR after the last trial::

    .venv/bin/python docs/examples/varied_patients.py --patients 200 --rules acuity-law ideal

``ideal`` is the ideal observer, told each patient's slope and best acuity.
"""

from __future__ import annotations

import argparse

import numpy as np
from tqdm import tqdm

from lensopt.bench.ideal_observer import IdealObserver
from lensopt.bench.robustness import CRITERION_LOGMAR, FAILURE_LOGMAR
from lensopt.observer import varied_patient
from lensopt.refraction import AcuityLawOptimizer
from lensopt.stopping import DEFAULT_MIN_TRIALS, DEFAULT_STOP_CONFIDENCE

#: Slope bands (per logMAR) the table is split by.
SLOPE_BANDS = (("slope < 3", 0.0, 3.0), ("slope 3-5", 3.0, 5.0), ("slope >= 5", 5.0, np.inf))


def session(rule: str, patient, seed: int, n_trials: int) -> dict:
    """One session to ``n_trials``: where the stopping rule (confidence 0.95, from trial 20) would have
    stopped, the error there and at the end."""
    if rule == "ideal":
        opt = IdealObserver(slope=patient.slope, va_best_logmar=patient.best_acuity_logmar, seed=seed)
    else:
        opt = AcuityLawOptimizer(seed=seed)

    def error() -> float:
        return float(patient.visual_acuity(*opt.best()) - patient.best_acuity_logmar)

    stopped_at, error_at_stop = None, None
    for t in range(1, n_trials + 1):
        trial = opt.ask()
        opt.tell(trial, bool(patient.respond(trial.letter_logmar, trial.sphere_d, trial.cylinder_d)))
        if stopped_at is None and t >= DEFAULT_MIN_TRIALS and opt.confidence() >= DEFAULT_STOP_CONFIDENCE:
            stopped_at, error_at_stop = t, error()
    return {"slope": patient.slope, "stopped_at": stopped_at, "error_at_stop": error_at_stop, "error_at_end": error()}


def table_row(label: str, sessions: list[dict]) -> str:
    stops = [s for s in sessions if s["stopped_at"] is not None]
    within = np.mean([s["error_at_stop"] <= CRITERION_LOGMAR for s in stops]) if stops else np.nan
    trials = np.median([s["stopped_at"] for s in stops]) if stops else np.nan
    lost = sum(s["error_at_end"] > FAILURE_LOGMAR for s in sessions)
    return f"{label:<22} {len(sessions):>4}  {len(stops):>4}  {100 * within:6.1f} %  {trials:6.1f}  {lost:>4}"


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--patients", type=int, default=200)
    parser.add_argument("--first-seed", type=int, default=100_000)
    parser.add_argument("--rules", nargs="+", choices=("acuity-law", "ideal"), default=["acuity-law", "ideal"])
    parser.add_argument("--trials", type=int, default=100)
    parser.add_argument("--slopes", type=float, nargs=2, default=[2.0, 8.0], metavar=("LO", "HI"))
    parser.add_argument("--va-best", type=float, nargs=2, default=[-0.1, 0.3], metavar=("LO", "HI"))
    args = parser.parse_args(argv)
    if not 0 < args.slopes[0] <= args.slopes[1] or args.va_best[0] > args.va_best[1]:
        parser.error("--slopes needs 0 < LO <= HI and --va-best LO <= HI")
    seeds = range(args.first_seed, args.first_seed + args.patients)
    patients = {s: varied_patient(s, args.slopes, args.va_best) for s in seeds}
    print("rule, slopes            runs  stop  within   trials  >0.1")
    for rule in args.rules:
        sessions = [session(rule, patients[s], s, args.trials) for s in tqdm(seeds, desc=rule)]
        print(table_row(f"{rule}, all", sessions))
        for label, low, high in SLOPE_BANDS:
            band = [s for s in sessions if low <= s["slope"] < high]
            if band:
                print(table_row(f"{rule}, {label}", band))


if __name__ == "__main__":
    main()
