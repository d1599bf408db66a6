"""How often a letter session reports a lens the patient never read through.

The acuity-law optimizer asks its trials where acuity changes fastest and reports the optimum its
law puts between them (docs/never-lost.md, "The acuity-law optimizer"). This script runs it on
held-out patients (seeds from 100,000; slope 5, lenses in 0.25 D steps, stopping at 0.95 from 20
trials, at most 100), and prints per session the trials used, whether it stopped, the reported
lens's acuity error and its dioptric distance from the nearest lens tried, then how many reported
lenses were not tried within a phoropter step (:func:`lensopt.refraction.shown.untried_d`, the rule
the console and the record apply)::

    .venv/bin/python docs/examples/untried_lenses.py --first-seed 100000 --patients 40
"""

from __future__ import annotations

from tqdm import tqdm

from lensopt.cli import OneLineParser
from lensopt.cli.arguments import non_negative_int, positive_int
from lensopt.observer import draw_patients
from lensopt.refraction import AcuityLawOptimizer
from lensopt.refraction.shown import nearest_tried_d, untried_d
from lensopt.stopping import StopRule


def session(seed: int, n_trials: int = 100) -> dict:
    """One stopped (or full) session of patient ``seed``: its trials, whether it stopped, the
    reported lens's error (logMAR) and distance (D) from the nearest lens tried."""
    patient = draw_patients(1, seed, slope=5.0)[0]
    opt = AcuityLawOptimizer(seed=seed, lens_step_d=0.25, stop=StopRule(confidence=0.95, min_trials=20))
    stopped = False
    while opt.n_trials < n_trials and not stopped:
        trial = opt.ask()
        opt.tell(trial, bool(patient.respond(trial.letter_logmar, trial.sphere_d, trial.cylinder_d)))
        stopped = opt.should_stop()
    sphere_d, cylinder_d = opt.best()
    tried = [trial for trial, _ in opt.history]
    return {
        "seed": seed,
        "trials": opt.n_trials,
        "stopped": stopped,
        "error_logmar": float(patient.visual_acuity(sphere_d, cylinder_d) - patient.best_acuity_logmar),
        "nearest_d": nearest_tried_d(sphere_d, cylinder_d, None, tried),
        "untried": untried_d(sphere_d, cylinder_d, None, tried) is not None,
    }


def main(argv=None) -> None:
    parser = OneLineParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--first-seed", type=non_negative_int, default=100_000, help="seed of the first patient (held out: ≥ 100000)"
    )
    parser.add_argument("--patients", type=positive_int, default=40)
    parser.add_argument("--trials", type=positive_int, default=100, help="the budget (stopping at 0.95 before it)")
    args = parser.parse_args(argv)
    rows = [
        session(seed, args.trials)
        for seed in tqdm(range(args.first_seed, args.first_seed + args.patients), desc="sessions", unit="session")
    ]
    print(f"{'seed':>7} {'trials':>6} {'stopped':>7} {'error':>7} {'nearest tried':>13}")
    for r in rows:
        print(
            f"{r['seed']:>7} {r['trials']:>6} {r['stopped']!s:>7} {r['error_logmar']:>7.3f} {r['nearest_d']:>11.2f} D"
        )
    stops = [r for r in rows if r["stopped"]]
    print(
        f"not tried within a phoropter step: {sum(r['untried'] for r in rows)} of {len(rows)} sessions, "
        f"{sum(r['untried'] for r in stops)} of {len(stops)} that stopped"
    )


if __name__ == "__main__":
    main()
