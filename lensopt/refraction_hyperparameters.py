"""The refraction GP's reference hyperparameters, fitted on simulated responses.

The psychophysics kernel ``θ s s' + k_SE(x, x')`` is fitted by maximizing the Laplace
marginal likelihood on simulated responses, for several simulated patients (corrections uniform in
[−3, 3]² D); the median of each log-hyperparameter is kept, so the result does not hinge on one
patient. Two designs of the simulated responses:

- ``"random"`` — the seed paper's (§5.2): random letter sizes and lenses over the whole box.
  Most such responses fall on the flat periphery of the acuity surface (blur of several
  diopters), so the fit chooses lengthscales of 4–5 D that cannot resolve the sharp minimum
  of ``log10(1 + b²)``, and the optimizer then fails to converge.
- ``"sessions"`` (default) — the responses lensopt itself collects: UCB-ALD sessions run with
  a pilot kernel, re-fitted, and run again with the fitted kernel (``n_passes``). These data
  concentrate where the optimizer works, near the optimum, which is where the model must be right.

What the SE part compares (``inputs``): by default the lenses' principal-meridian powers
``(S, S + C)`` (:data:`lensopt.refraction.MERIDIAN_MAP`) with one lengthscale for both, since the
patient's blur ``rs² + (rs + rc)²`` is round in them; ``inputs="lens"`` is the paper's kernel on
``(S, C)``, and ``ard=True`` fits one lengthscale per coordinate. On the session data the ARD fits
scatter (0.8 to 100 D between patients), the single lengthscale does not (3.6–5.2 D); with the ARD
kernel on ``(S, C)`` UCB-ALD stalled in the tilted blur valley, often at the edge of the box.

The output goes to ``data/refraction-hyperparameters.json`` with the command that made it.
"""

from __future__ import annotations

from dataclasses import replace

import numpy as np

from lensopt.asktell import run_session
from lensopt.binary.settings import KernelSpec
from lensopt.gp import GPClassifier
from lensopt.observer import draw_patients
from lensopt.refraction.letters import (
    CYLINDER_BOUNDS_D,
    DEFAULT_MODEL_LAPSE,
    DEFAULT_PRIOR_MEAN,
    LETTER_BOUNDS_LOGMAR,
    MERIDIAN_MAP,
    PAPER_LETTER_MODEL,
    SPHERE_BOUNDS_D,
    RefractionOptimizer,
)

#: Starting point of the fit (multi-start adds seeded random restarts inside the bounds).
INITIAL_KERNEL = KernelSpec(
    structure="psychophysics", family="se", lengthscales=(1.5, 1.5), variance=25.0, context_variance=25.0
)


def simulated_responses(patient, n_responses, rng):
    """Random (letter, sphere, cylinder) inputs in the paper's box and the patient's answers."""
    bounds = np.array([LETTER_BOUNDS_LOGMAR, SPHERE_BOUNDS_D, CYLINDER_BOUNDS_D])
    X = rng.uniform(bounds[:, 0], bounds[:, 1], size=(n_responses, 3))
    y = np.array([patient.respond(*row) for row in X], dtype=int)
    return X, y


#: Pilot kernel of the "sessions" design (its lengthscale is re-fitted on the sessions' data).
PILOT_KERNEL = KernelSpec(
    structure="psychophysics", family="se", lengthscales=(1.5, 1.5), variance=4.0, context_variance=4.0
)
DESIGNS = ("sessions", "random")

#: What the stationary kernel compares: the lens columns ``(S, C)`` themselves (the paper's
#: ARD kernel) or the principal-meridian powers ``(S, S + C)`` (:data:`MERIDIAN_MAP`).
INPUT_MAPS = {"meridians": MERIDIAN_MAP, "lens": None}


#: The answer models a fit is for: issue 14's letter model (floored likelihood, EP, prior mean) or
#: the paper's (plain probit, Laplace, zero mean).
MODELS = ("floored", "probit")


def _model_options(model: str) -> dict:
    return dict(PAPER_LETTER_MODEL) if model == "probit" else {}


def _classifier(kernel: KernelSpec, model: str, n_alternatives: int = 26):
    """The GP classifier whose marginal likelihood the fit maximizes, with the model's likelihood."""
    if model == "probit":
        return GPClassifier(kernel.build(1, 2))
    return GPClassifier(
        kernel.build(1, 2),
        inference="ep",
        guess_rate=1.0 / n_alternatives,
        lapse_rate=DEFAULT_MODEL_LAPSE,
        prior_mean=DEFAULT_PRIOR_MEAN,
    )


def session_responses(patient, n_responses, seed, kernel: KernelSpec, model: str = "probit"):
    """The trials of a UCB-ALD session run with ``kernel`` (and the answer ``model``) on ``patient``."""
    opt = RefractionOptimizer(rule="ucb-ald", seed=seed, hyperparameters=kernel, **_model_options(model))
    run_session(opt, lambda trial: patient.respond(trial.letter_logmar, trial.sphere_d, trial.cylinder_d), n_responses)
    X = np.array([[t.letter_logmar, t.sphere_d, t.cylinder_d] for t, _ in opt.history])
    return X, np.array([int(c) for _, c in opt.history])


def _median_kernel(fits, input_map) -> KernelSpec:
    names = list(fits[0])
    median = [float(np.exp(np.median(np.log([f[name] for f in fits])))) for name in names]
    # hyperparameter order of the psychophysics kernel: θ, then the SE lengthscale(s), then SE variance
    return KernelSpec(
        structure="psychophysics",
        family="se",
        context_variance=median[0],
        lengthscales=tuple(median[1:-1]),
        variance=median[-1],
        input_map=input_map,
    )


def fit_reference_hyperparameters(
    slope=5.0,
    n_patients=8,
    n_responses=1000,
    seed=0,
    n_restarts=3,
    progress=None,
    design="sessions",
    n_passes=2,
    inputs="meridians",
    ard=False,
    model="probit",
) -> dict:
    """Fit per patient and return ``{"kernel": KernelSpec dict, "per_patient": [...], ...}``.

    ``progress`` is called with the number of fits done (``n_patients`` per pass).
    """
    if model not in MODELS:
        raise ValueError(f"model must be one of {MODELS}, got {model!r}")
    if design not in DESIGNS:
        raise ValueError(f"design must be one of {DESIGNS}, got {design!r}")
    if inputs not in INPUT_MAPS:
        raise ValueError(f"inputs must be one of {tuple(INPUT_MAPS)}, got {inputs!r}")
    input_map = INPUT_MAPS[inputs]
    shape = dict(input_map=input_map) if ard else dict(input_map=input_map, lengthscales=(1.5,))
    patients = draw_patients(n_patients, seed, slope=slope)
    passes = 1 if design == "random" else n_passes
    kernel, done, history = replace(PILOT_KERNEL, **shape), 0, []
    for pass_index in range(passes):
        fits = []
        for i, patient in enumerate(patients):
            if design == "random":
                X, y = simulated_responses(patient, n_responses, np.random.default_rng([seed, i]))
                start = replace(INITIAL_KERNEL, **shape)
            else:
                X, y = session_responses(patient, n_responses, seed + 1000 * pass_index + i, kernel, model)
                start = kernel
            gp = _classifier(start, model)
            gp.fit_hyperparameters(X, y, n_restarts=n_restarts, seed=seed + i)
            fits.append(dict(zip(gp.kernel_.hyperparameter_names, np.exp(gp.kernel_.theta).tolist())))
            done += 1
            if progress is not None:
                progress(done)
        kernel = _median_kernel(fits, input_map)
        history.append(kernel.to_dict())
    names = list(fits[0])
    return {
        "kernel": kernel.to_dict(),
        "hyperparameter_names": names,
        "per_patient": fits,
        "passes": history,
        "fitted_on": {
            "model": model,
            "design": design,
            "inputs": inputs,
            "ard": ard,
            "slope": slope,
            "n_patients": n_patients,
            "n_responses": n_responses,
            "seed": seed,
            "n_restarts": n_restarts,
            "true_corrections_d": [list(p.true_correction_d) for p in patients],
        },
        "command": (
            f"lensopt hyperparameters --design {design} --slope {slope:g} "
            f"--patients {n_patients} --responses {n_responses} --seed {seed} "
            f"--restarts {n_restarts} --inputs {inputs}"
            + (" --ard" if ard else "")
            + (f" --passes {n_passes}" if design == "sessions" else "")
            + f" --model {model}"
        ),
    }
