"""The acuity-law optimizer's stopping rule with a denser grid of assumed slopes, on patients whose
slope and best acuity vary.

The optimizer marginalizes the patient's psychometric slope over a few values (2, 4 and 8 per
logMAR by default); a Bayesian confidence is calibrated on average over patients drawn from its own
prior, and the campaign's ``varied`` patients draw their slope log-uniformly on 2–8 per logMAR
(:func:`lensopt.observer.varied_patient`). This runs the optimizer with the default slopes and with
``--slopes`` on the same patients, stopping at a confidence of 0.95 from trial 20 within
``--trials``, and prints per grid the sessions stopped by confidence, how many of them were truly
within 0.025 logMAR, the median trial of the stops, the sessions above 0.1 logMAR at their end (the
stop, or the last trial), the mean error there and the decision time (ask + tell, median and p95; two processes share the
cores)::

    .venv/bin/python docs/examples/slope_grid.py --first-seed 100000 --patients 800 \
        --slopes 2 2.52 3.175 4 5.04 6.35 8

Patients from seed 100,000 on are held out (no tuning has seen them); below it, the tuning split.
"""

from __future__ import annotations

import time
from multiprocessing import Pool

import numpy as np
import threadpoolctl
from tqdm import tqdm

from lensopt.cli import OneLineParser
from lensopt.cli.arguments import non_negative_int, positive_float, positive_int, processes
from lensopt.observer import varied_patient
from lensopt.refraction import AcuityLawOptimizer
from lensopt.refraction.acuity_law_settings import SLOPES_PER_LOGMAR
from lensopt.stopping import StopRule

CONFIDENCE, MIN_TRIALS, TOLERANCE_LOGMAR, LOST_LOGMAR = 0.95, 20, 0.025, 0.1


def run_session(args: tuple) -> dict:
    """One varied patient's session, ``args`` = ``(slopes, seed, n_trials)``: the acuity-law
    optimizer assuming those slopes (per logMAR), where it stopped, its error then and its decision
    times (ms)."""
    slopes, seed, n_trials = args
    with threadpoolctl.threadpool_limits(1):
        patient = varied_patient(seed, lapse=0.0, n_alternatives=26)
        opt = AcuityLawOptimizer(
            seed=seed, stop=StopRule(CONFIDENCE, MIN_TRIALS, n_trials), slopes_per_logmar=tuple(slopes)
        )
        decision_ms = []
        for trial_count in range(1, n_trials + 1):
            start = time.perf_counter()
            trial = opt.ask()
            opt.tell(trial, bool(patient.respond(trial.letter_logmar, trial.sphere_d, trial.cylinder_d)))
            decision_ms.append(1e3 * (time.perf_counter() - start))
            if trial_count >= MIN_TRIALS and opt.should_stop():
                break
        error = float(patient.visual_acuity(*opt.best()) - patient.best_acuity_logmar)
        stopped = opt.stop_reason() == "confidence"
    return {"seed": seed, "trials": trial_count, "stopped": stopped, "error": error, "decision_ms": decision_ms}


def summary_row(name: str, sessions: list[dict], width: int) -> str:
    stops = [s for s in sessions if s["stopped"]]
    right = sum(s["error"] <= TOLERANCE_LOGMAR for s in stops)
    share = f"{100 * right / len(stops):.1f} %" if stops else "—"
    median_stop = f"{np.median([s['trials'] for s in stops]):g}" if stops else "—"
    lost = sum(s["error"] > LOST_LOGMAR for s in sessions)
    mean_error = np.mean([s["error"] for s in sessions])
    ms = np.concatenate([s["decision_ms"] for s in sessions])
    return (
        f"{name:<{width}} {len(sessions):>8} {len(stops):>7} {right:>5} {share:>7} {median_stop:>9} {lost:>6} "
        f"{mean_error:>10.4f} {np.median(ms):>8.1f} {np.percentile(ms, 95):>7.1f}"
    )


def main(argv=None) -> None:
    parser = OneLineParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--first-seed", type=non_negative_int, default=100_000, help="seed of the first patient")
    parser.add_argument("--patients", type=positive_int, default=200, help="patients (seeds in a row)")
    parser.add_argument(
        "--trials", type=positive_int, default=100, help=f"budget of trials per session, {MIN_TRIALS} or more"
    )
    parser.add_argument(
        "--slopes", type=positive_float, nargs="+", required=True, help="the denser grid of slopes (per logMAR)"
    )
    parser.add_argument("--processes", type=processes, default=2, help="sessions run side by side")
    args = parser.parse_args(argv)
    if args.trials < MIN_TRIALS:  # the stopping rule asks from trial MIN_TRIALS on, within the budget
        parser.error(
            f"argument --trials: must be at least {MIN_TRIALS}, the stopping rule's min_trials, got {args.trials}"
        )
    grids = {"default " + "/".join(f"{s:g}" for s in SLOPES_PER_LOGMAR): SLOPES_PER_LOGMAR}
    grids["--slopes " + "/".join(f"{s:g}" for s in args.slopes)] = tuple(args.slopes)
    seeds = range(args.first_seed, args.first_seed + args.patients)
    jobs = [(slopes, seed, args.trials) for slopes in grids.values() for seed in seeds]
    if args.processes == 1:  # in this process (also when the module is loaded from its path)
        results = [run_session(job) for job in tqdm(jobs, desc="sessions")]
    else:
        with Pool(args.processes) as pool:
            results = list(tqdm(pool.imap(run_session, jobs, chunksize=4), total=len(jobs), desc="sessions"))
    width = max(len(name) for name in grids)
    print(
        f"{'slopes':<{width}} {'patients':>8} {'stopped':>7} {'right':>5} {'share':>7} {'stop med':>9} "
        f"{'> 0.1':>6} {'mean error':>10} {'dec med':>8} {'dec p95':>7}"
    )
    for index, name in enumerate(grids):
        print(summary_row(name, results[index * len(seeds) : (index + 1) * len(seeds)], width))


if __name__ == "__main__":
    main()
