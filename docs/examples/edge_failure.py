"""How a UCB-ALD session ends on the edge of the lens box: one patient's session, trial by trial.

Replays the session of ``lensopt bench robustness --conditions slope-5 --rules ucb-ald`` for one
patient (the same patient, optimizer and answers: seed ``S`` is the campaign's patient ``S``), prints
every trial with the probability that this patient names that letter through that lens, and, after
the last trial, how the model ranks the reported lens against the patient's true correction: the
posterior latent's mean and sd at the reference letter (the model's threshold at the reported lens)
and both upper bounds, UCB_Φ (the rule's) and the latent ``μ + βσ``. The failures traced in
docs/never-lost.md are held-out seeds, replayed for diagnosis only:

    .venv/bin/python docs/examples/edge_failure.py --seed 100064 --trials 60
    .venv/bin/python docs/examples/edge_failure.py --seed 100044 --trials 60

Those failures were of commit ffe8e14; since the model is told of the box's edges (302d130) the
same seeds end near the truth, and the script shows the mended sessions.
"""

from __future__ import annotations

import sys

import numpy as np

from lensopt.acquisition.ucb import LatentUCB, ProbitUCB
from lensopt.bench.robustness import EXTRA_RULES, GP_RULES, robustness_specs, spec_optimizer, spec_patient
from lensopt.cli import OneLineParser
from lensopt.cli.arguments import non_negative_int, positive_int

#: The campaign's rules on the GP letter model (the paper's UCB-ALD among them): :func:`ranking` reads
#: their posterior, which the acuity-law optimizer and the ideal observer do not have.
RULES = (*GP_RULES, *EXTRA_RULES)


def replay(seed: int, n_trials: int, rule: str = "ucb-ald"):
    """The campaign's patient ``seed`` and its optimizer after ``n_trials``, with the trials:
    ``(trial, p_correct, correct)`` each. The run is the campaign's own (its slope-5 condition,
    patient and optimizer), without the stopping rule, which changes no trial."""
    (spec,) = robustness_specs(["slope-5"], [rule], first_seed=seed, max_patients=1)
    patient = spec_patient(spec)
    optimizer = spec_optimizer(spec, patient)
    trials = []
    for _ in range(n_trials):
        trial = optimizer.ask()
        p = float(patient.p_correct(trial.letter_logmar, trial.sphere_d, trial.cylinder_d))
        correct = bool(patient.respond(trial.letter_logmar, trial.sphere_d, trial.cylinder_d))
        optimizer.tell(trial, correct)
        trials.append((trial, p, correct))
    return patient, optimizer, trials


def ranking(optimizer, lenses_d) -> dict[str, np.ndarray]:
    """Mean, sd, UCB_Φ and latent UCB of the posterior at ``lenses_d`` (rows ``(sphere_d, cylinder_d)``)
    and at the reference letter: the model's threshold at its reported lens, within the letter sizes
    (the largest while the model has no threshold yet)."""
    low, high = optimizer.settings.context_bounds[0]
    threshold = float(optimizer.predicted_acuity_logmar(*optimizer.best())[0])
    letter_logmar = float(np.clip(threshold, low, high)) if np.isfinite(threshold) else high
    lenses_d = np.atleast_2d(np.asarray(lenses_d, float))
    X = np.column_stack([np.full(len(lenses_d), letter_logmar), lenses_d])
    mean, var = optimizer.model.predict_latent(X)
    beta = optimizer.settings.beta
    return {
        "letter_logmar": np.full(len(lenses_d), letter_logmar),
        "mean": mean,
        "sd": np.sqrt(var),
        "ucb_phi": ProbitUCB(optimizer.model, beta=beta)(X),
        "ucb_latent": LatentUCB(optimizer.model, beta=beta)(X),
    }


def main(argv=None) -> int:
    parser = OneLineParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--seed", type=non_negative_int, default=100064, help="the campaign's patient seed")
    parser.add_argument("--trials", type=positive_int, default=60)
    parser.add_argument("--rule", choices=RULES, default="ucb-ald")
    args = parser.parse_args(argv)
    patient, optimizer, trials = replay(args.seed, args.trials, args.rule)
    print(f"patient {args.seed}: correction S {patient.sphere_d:+.2f} D  C {patient.cylinder_d:+.2f} D")
    for i, (trial, p, correct) in enumerate(trials, 1):
        print(
            f"{i:3d}  S {trial.sphere_d:+.2f} C {trial.cylinder_d:+.2f}  letter {trial.letter_logmar:+.2f}"
            f"  P(correct) {p:.2f}  {'right' if correct else 'WRONG'}"
        )
    reported = optimizer.best()
    error = patient.visual_acuity(*reported) - patient.best_acuity_logmar
    print(f"reported S {reported[0]:+.2f} C {reported[1]:+.2f}: {error:.3f} logMAR from the best")
    rows = ranking(optimizer, [reported, patient.true_correction_d])
    print(f"at letter {rows['letter_logmar'][0]:+.2f}  mean    sd  UCB_Phi  latent UCB")
    for name, i in (("reported lens", 0), ("true correction", 1)):
        print(
            f"  {name:15s} {rows['mean'][i]:+6.2f} {rows['sd'][i]:5.2f}"
            f"  {rows['ucb_phi'][i]:7.2f}  {rows['ucb_latent'][i]:10.2f}"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
