"""How well a full prescription's duels or rankings place the acuity the dashboard draws.

Through the acuity link (the default of ``clinical-prescription-duel`` and
``clinical-prescription-ranking``) the comparisons' model is the letter task's latent, so it predicts
an acuity threshold through every lens (``acuity_logmar``), which the dashboard and page 2 of the
printed record draw as a letter search's astigmatism plane and defocus curve. The answers say which
lens is clearer, not how well the patient sees, so the level is placed only roughly. This runs
``--trials`` comparisons on clinic patients (slope 14, started from their autorefraction, as
``lensopt bench prescription`` draws them) and prints, at the reported lens (rounded to the
phoropter's steps), the predicted acuity against the patient's own: the median and mean absolute
difference, the worst, the median posterior SD, and how many fall within the 95 % band (±1.96 SD)
and within 0.1 logMAR::

    .venv/bin/python docs/examples/comparison_acuity.py --feedback duel --first-seed 100000 --patients 40
    .venv/bin/python docs/examples/comparison_acuity.py --feedback ranking --first-seed 100000 --patients 40

Patients from seed 100,000 on are held out (no tuning has seen them); below it, the tuning split.
"""

from __future__ import annotations

from multiprocessing import Pool

import numpy as np
import threadpoolctl
from tqdm import tqdm

from lensopt.cli import OneLineParser
from lensopt.cli.arguments import non_negative_int, positive_int, processes
from lensopt.observer import autorefraction, draw_clinic_patients
from lensopt.refraction.prescription_duels import PrescriptionDuelOptimizer
from lensopt.refraction.prescription_rankings import PrescriptionRankingOptimizer
from lensopt.simulation import simulate_prescription

#: The clinic patients' psychometric slope (per logMAR), as the prescription campaign's.
CLINIC_SLOPE = 14.0
#: The duel patients' tie threshold (logit units), as ``clinical-prescription-duel``'s simulated patient.
DUEL_TIES = 1.0
OPTIMIZERS = {"duel": PrescriptionDuelOptimizer, "ranking": PrescriptionRankingOptimizer}


def run_session(args: tuple) -> tuple[float, float, float]:
    """One patient's session, ``args`` = ``(feedback, seed, n_trials)``: (predicted acuity at the
    reported lens, its posterior SD, the patient's own acuity through it), logMAR."""
    feedback, seed, n_trials = args
    with threadpoolctl.threadpool_limits(1):
        patient = draw_clinic_patients(1, seed, slope=CLINIC_SLOPE)[0]
        start = autorefraction(patient, np.random.SeedSequence([seed, 1]))
        opt = OPTIMIZERS[feedback](seed=seed, start=start)
        options = {"tie_threshold": DUEL_TIES} if feedback == "duel" else {}
        simulate_prescription(patient, opt, n_trials, feedback=feedback, **options)
        best = opt.best()
        predicted, sd = opt.acuity_logmar(best.to_array()[None, :])
        lens = opt.prescribed_lens(best)
        true = patient.visual_acuity(lens.sphere_d, lens.cylinder_d, lens.axis_deg)
    return float(predicted[0]), float(sd[0]), float(true)


def summary(results: np.ndarray) -> str:
    """The table's line of ``results`` ``(n, 3)``: predicted, SD, the patient's own (logMAR)."""
    difference = results[:, 0] - results[:, 2]
    within_band = int(np.sum(np.abs(difference) <= 1.96 * results[:, 1]))
    within_line = int(np.sum(np.abs(difference) <= 0.1))
    return (
        f"{len(results):>8} {np.median(difference):>+12.3f} {np.mean(np.abs(difference)):>9.3f} "
        f"{np.max(np.abs(difference)):>6.3f} {np.median(results[:, 1]):>7.3f} {within_band:>7} {within_line:>7}"
    )


def main(argv=None) -> None:
    parser = OneLineParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--feedback", choices=tuple(OPTIMIZERS), default="duel", help="duels or rankings")
    parser.add_argument("--first-seed", type=non_negative_int, default=100_000, help="seed of the first patient")
    parser.add_argument("--patients", type=positive_int, default=40, help="patients (seeds in a row)")
    parser.add_argument("--trials", type=positive_int, default=40, help="comparisons per session")
    parser.add_argument("--processes", type=processes, default=2, help="sessions run side by side")
    args = parser.parse_args(argv)
    jobs = [(args.feedback, seed, args.trials) for seed in range(args.first_seed, args.first_seed + args.patients)]
    if args.processes == 1:  # in this process (also when the module is loaded from its path)
        results = [run_session(job) for job in tqdm(jobs, desc="sessions")]
    else:
        with Pool(args.processes) as pool:
            results = list(tqdm(pool.imap(run_session, jobs), total=len(jobs), desc="sessions"))
    print(f"{'patients':>8} {'median diff':>12} {'mean |d|':>9} {'worst':>6} {'SD med':>7} {'in band':>7} {'≤ 0.1':>7}")
    print(summary(np.array(results)))


if __name__ == "__main__":
    main()
