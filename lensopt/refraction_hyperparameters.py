"""The refraction GP's reference hyperparameters, fitted on simulated responses.

As in the seed paper (§5.2): simulate the responses to random letter sizes and lenses, and fit
the psychophysics kernel ``θ s s' + k_SE((S, C), (S', C'))`` by maximizing the Laplace marginal
likelihood. lensopt repeats this for several simulated patients (corrections uniform in [−3, 3]²
D) and keeps the median of each log-hyperparameter, so the result does not hinge on one patient.
The output goes to ``data/refraction-hyperparameters.json`` with the command that made it.
"""

from __future__ import annotations

import numpy as np

from lensopt.observer import draw_patients
from lensopt.refraction import CYLINDER_BOUNDS_D, LETTER_BOUNDS_LOGMAR, SPHERE_BOUNDS_D
from lensopt.settings import KernelSpec

#: Starting point of the fit (multi-start adds seeded random restarts inside the bounds).
INITIAL_KERNEL = KernelSpec(structure="psychophysics", family="se", lengthscales=(1.5, 1.5),
                            variance=25.0, context_variance=25.0)


def simulated_responses(patient, n_responses, rng):
    """Random (letter, sphere, cylinder) inputs in the paper's box and the patient's answers."""
    bounds = np.array([LETTER_BOUNDS_LOGMAR, SPHERE_BOUNDS_D, CYLINDER_BOUNDS_D])
    X = rng.uniform(bounds[:, 0], bounds[:, 1], size=(n_responses, 3))
    y = np.array([patient.respond(*row) for row in X], dtype=int)
    return X, y


def fit_reference_hyperparameters(slope=5.0, n_patients=8, n_responses=1000, seed=0, n_restarts=3,
                                   progress=None) -> dict:
    """Fit per patient and return ``{"kernel": KernelSpec dict, "per_patient": [...], ...}``."""
    from lensopt.gp import GPClassifier

    patients = draw_patients(n_patients, seed, slope=slope)
    fits = []
    for i, patient in enumerate(patients):
        rng = np.random.default_rng([seed, i])
        X, y = simulated_responses(patient, n_responses, rng)
        gp = GPClassifier(INITIAL_KERNEL.build(1, 2))
        gp.fit_hyperparameters(X, y, n_restarts=n_restarts, seed=seed + i)
        fits.append(dict(zip(gp.kernel_.hyperparameter_names, np.exp(gp.kernel_.theta).tolist())))
        if progress is not None:
            progress(i + 1)
    names = list(fits[0])
    median = {name: float(np.exp(np.median(np.log([f[name] for f in fits])))) for name in names}
    values = list(median.values())
    # hyperparameter order of the psychophysics kernel: θ, then SE lengthscales, then SE variance
    kernel = KernelSpec(structure="psychophysics", family="se", context_variance=values[0],
                        lengthscales=tuple(values[1:3]), variance=values[3])
    return {
        "kernel": kernel.to_dict(),
        "hyperparameter_names": names,
        "per_patient": fits,
        "fitted_on": {"slope": slope, "n_patients": n_patients, "n_responses": n_responses,
                      "seed": seed, "n_restarts": n_restarts,
                      "true_corrections_d": [list(p.true_correction_d) for p in patients]},
        "command": (f"lensopt hyperparameters --slope {slope:g} --patients {n_patients} "
                    f"--responses {n_responses} --seed {seed}"),
    }
