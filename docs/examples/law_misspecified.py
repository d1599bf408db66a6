"""When the blur–acuity law is wrong: the acuity-law optimizer and UCB-ALD on patients whose acuity
falls with blur faster or slower than the law the acuity-law optimizer assumes — or whose best
acuity lies between the points of its ``VA₀`` grid (0.05 logMAR apart; lensopt's simulated patients
all have ``VA₀ = 0``, a grid point).

The patient sees ``VA = VA₀ + log10(1 + (k b)²)`` through a lens with residual blur ``b``: ``k = 1``
is the law (and lensopt's simulated patient), ``k = 0.6`` an eye that tolerates blur (a small
pupil), ``k = 1.6`` one that does not (a large pupil). The best lens is still the true correction.
Held-out patients (seeds from 100,000), slope 5, 100 trials; prints, per rule and ``k``, the median
and mean error after 30 and 100 trials, the sessions above 0.1 logMAR and the median trials to
reach and stay at or under 0.025 logMAR::

    .venv/bin/python docs/examples/law_misspecified.py --patients 30 --gains 0.6 1.0 1.6
    .venv/bin/python docs/examples/law_misspecified.py --patients 40 --gains 1.0 --va-best -0.08 0.13 0.37 \
        --rules acuity-law ideal

``ideal`` is the ideal observer (it knows the patient's slope, best acuity and law).
"""

from __future__ import annotations

import argparse

import numpy as np
from tqdm import tqdm

from lensopt.bench.ideal_observer import IdealObserver
from lensopt.bench.robustness_summary import trials_to_criterion
from lensopt.observer import draw_patients
from lensopt.refraction import AcuityLawOptimizer, RefractionOptimizer


def with_blur_gain(patient, gain: float):
    """``patient`` whose blur is ``gain`` times the law's (its answers and its acuity both)."""
    blur = patient.blur_d
    object.__setattr__(patient, "blur_d", lambda *args, **kwargs: gain * np.asarray(blur(*args, **kwargs)))
    return patient


def new_optimizer(rule: str, seed: int, va_best_logmar: float):
    if rule == "ideal":
        return IdealObserver(slope=5.0, va_best_logmar=va_best_logmar, seed=seed)
    if rule == "acuity-law":
        return AcuityLawOptimizer(seed=seed)
    return RefractionOptimizer(rule=rule, seed=seed)


def session_errors(rule: str, gain: float, seed: int, n_trials: int, va_best_logmar: float = 0.0) -> list[float]:
    patient = with_blur_gain(draw_patients(1, seed, slope=5.0, va_best_logmar=va_best_logmar)[0], gain)
    opt = new_optimizer(rule, seed, va_best_logmar)
    errors = []
    for _ in range(n_trials):
        trial = opt.ask()
        opt.tell(trial, bool(patient.respond(trial.letter_logmar, trial.sphere_d, trial.cylinder_d)))
        errors.append(float(patient.visual_acuity(*opt.best()) - patient.best_acuity_logmar))
    return errors


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--patients", type=int, default=30)
    parser.add_argument("--first-seed", type=int, default=100_000)
    parser.add_argument("--gains", type=float, nargs="+", default=[0.6, 1.0, 1.6])
    parser.add_argument("--rules", nargs="+", default=["acuity-law", "ucb-ald"])
    parser.add_argument("--trials", type=int, default=100)
    parser.add_argument("--va-best", type=float, nargs="+", default=[0.0], help="the patients' best acuity (logMAR)")
    args = parser.parse_args(argv)
    seeds = range(args.first_seed, args.first_seed + args.patients)
    print("rule        gain    VA0  err30 med (mean)  err100 med (mean)  >0.1  trials to criterion")
    for rule in args.rules:
        for gain in args.gains:
            for va_best in args.va_best:
                errors = np.array(
                    [
                        session_errors(rule, gain, s, args.trials, va_best)
                        for s in tqdm(seeds, desc=f"{rule} k={gain:g} VA0={va_best:g}")
                    ]
                )
                e30, end = errors[:, 29], errors[:, -1]
                ttc = np.median([trials_to_criterion(e) for e in errors])
                print(
                    f"{rule:<10} {gain:5.2f}  {va_best:+.2f}  {np.median(e30):.3f} ({e30.mean():.3f})    "
                    f"{np.median(end):.3f} ({end.mean():.3f})     {int((end > 0.1).sum()):>3}  {ttc:g}"
                )


if __name__ == "__main__":
    main()
