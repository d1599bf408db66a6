"""When the blur–acuity law is wrong: the acuity-law optimizer and UCB-ALD on patients whose acuity
falls with blur faster or slower than the law the acuity-law optimizer assumes — or whose best
acuity lies between the points of its ``VA₀`` grid (0.05 logMAR apart; lensopt's simulated patients
all have ``VA₀ = 0``, a grid point).

The patient sees ``VA = VA₀ + log10(1 + (k b)²)`` through a lens with residual blur ``b``: ``k = 1``
is the law (and lensopt's simulated patient), ``k = 0.6`` an eye that tolerates blur (a small
pupil), ``k = 1.6`` one that does not (a large pupil). The best lens is still the true correction.
Held-out patients (seeds from 100,000), slope 5, 100 trials; prints, per rule and ``k``, the median
and mean error after 30 trials and at the end (after ``--trials``; a session of 30 trials or fewer
has only the end's column), the sessions above 0.1 logMAR at the end and the median trials to reach
and stay at or under 0.025 logMAR::

    .venv/bin/python docs/examples/law_misspecified.py --patients 30 --gains 0.6 1.0 1.6
    .venv/bin/python docs/examples/law_misspecified.py --patients 40 --gains 1.0 --va-best -0.08 0.13 0.37 \
        --rules acuity-law ideal

``ideal`` is the ideal observer (it knows the patient's slope, best acuity and law).
"""

from __future__ import annotations

import numpy as np
from tqdm import tqdm

from lensopt.bench.ideal_observer import IdealObserver
from lensopt.bench.robustness_summary import trials_to_criterion
from lensopt.binary.settings import ALL_RULES
from lensopt.cli import OneLineParser
from lensopt.cli.arguments import finite_float, non_negative_int, positive_float, positive_int
from lensopt.observer import draw_patients
from lensopt.refraction import AcuityLawOptimizer, RefractionOptimizer
from lensopt.refraction.acuity_law_settings import ACUITY_LAW_RULE

EARLY_TRIAL = 30
"""The trial after which the table reports the error besides the end's (the acuity-law optimizer's
early lead shows there)."""

#: The rules :func:`new_optimizer` runs: the GP letter optimizer's, the acuity law's and the ideal observer.
RULES = (*ALL_RULES, ACUITY_LAW_RULE, IdealObserver.rule)


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


def reported_trials(n_trials: int) -> list[int]:
    """The trial counts the table reports: :data:`EARLY_TRIAL` when the sessions run past it, and the last."""
    return [n for n in (EARLY_TRIAL,) if n < n_trials] + [n_trials]


def main(argv=None) -> None:
    parser = OneLineParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--patients", type=positive_int, default=30)
    parser.add_argument("--first-seed", type=non_negative_int, default=100_000)
    parser.add_argument(
        "--gains", type=positive_float, nargs="+", default=[0.6, 1.0, 1.6], help="blur gains k, each above 0"
    )
    parser.add_argument("--rules", nargs="+", choices=RULES, default=["acuity-law", "ucb-ald"])
    parser.add_argument("--trials", type=positive_int, default=100)
    parser.add_argument(
        "--va-best", type=finite_float, nargs="+", default=[0.0], help="the patients' best acuity (logMAR)"
    )
    args = parser.parse_args(argv)
    seeds = range(args.first_seed, args.first_seed + args.patients)
    reported = reported_trials(args.trials)
    columns = [f"err{n} med (mean)" for n in reported]
    print("rule        gain    VA0  " + "  ".join(columns) + "  >0.1  trials to criterion")
    for rule in args.rules:
        for gain in args.gains:
            for va_best in args.va_best:
                errors = np.array(
                    [
                        session_errors(rule, gain, s, args.trials, va_best)
                        for s in tqdm(seeds, desc=f"{rule} k={gain:g} VA0={va_best:g}")
                    ]
                )
                cells = []
                for column, n in zip(columns, reported):
                    after_n = errors[:, n - 1]
                    cells.append(f"{np.median(after_n):.3f} ({after_n.mean():.3f})".ljust(len(column)))
                end = errors[:, -1]
                ttc = np.median([trials_to_criterion(e) for e in errors])
                print(
                    f"{rule:<10} {gain:5.2f}  {va_best:+.2f}  "
                    + "  ".join(cells)
                    + f"   {int((end > 0.1).sum()):>3}  {ttc:g}"
                )


if __name__ == "__main__":
    main()
