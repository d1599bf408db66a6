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

The full prescription (:func:`fit_prescription_hyperparameters`, ``lensopt hyperparameters
--space power-vector``): the same sessions design for the power-vector search
(:class:`lensopt.refraction.PrescriptionOptimizer`, columns ``[letter, M, J0, J45]``, issue 14's
floored likelihood with EP and the optimizer's prior mean), on clinic patients
(:func:`lensopt.observer.draw_clinic_patients`, one per seed, every other one accommodating), for
its two kernels: ``start_kernel`` (the acuity-bowl kernel, sessions around an autorefraction) and
``kernel`` (the psychophysics kernel, sessions in the full box without a start). The pilot of the
first pass is the shipped kernel; each session's classifier (``opt.model``) is re-fitted by type-II
ML and the median of the log-hyperparameters kept. :func:`prescription_hyperparameters_file` writes
the fit beside the shipped kernels (``fitted_kernel``/``fitted_start_kernel``) unless it is adopted.
"""

from __future__ import annotations

from dataclasses import replace

import numpy as np

from lensopt.asktell import run_session
from lensopt.binary.settings import KernelSpec
from lensopt.gp import GPClassifier
from lensopt.observer import autorefraction, draw_clinic_patients, draw_patients
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
from lensopt.refraction.prescription_letters import PrescriptionOptimizer, prescription_kernel

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


# ------------------------------------------------------------------------ the full prescription
#: Defaults of the power-vector refit: the prescription campaign's slope and a session length
#: that keeps the command to a few minutes.
PRESCRIPTION_SLOPE = 14.0
PRESCRIPTION_TRIALS = 60

#: Which of the clinic patients accommodate (Hofstetter's average amplitude for their age):
#: ``"half"`` every other one (odd indices), ``"all"`` or ``"none"``.
ACCOMMODATION_CHOICES = ("half", "all", "none")

#: The two kernels of :class:`PrescriptionOptimizer` in ``data/prescription-hyperparameters.json``:
#: key -> whether its sessions start from an autorefraction.
PRESCRIPTION_KERNELS = {"start_kernel": True, "kernel": False}

#: Where each fitted hyperparameter goes in a :class:`KernelSpec`.
_SPEC_FIELDS = {
    "linear.variance": "context_variance",
    "bowl.slope_variance": "context_variance",
    "bowl.shift_variance": "shift_variance",
    "se.lengthscale": "lengthscales",
    "se.variance": "variance",
}


def _accommodates(index: int, accommodation: str) -> bool:
    return accommodation == "all" or (accommodation == "half" and index % 2 == 1)


def log_median_kernel(pilot: KernelSpec, fits: list[dict]) -> KernelSpec:
    """``pilot`` with every fitted hyperparameter replaced by its median in log space over ``fits``
    (one ``{hyperparameter name: value}`` per patient, the names of the pilot's built kernel)."""
    names = list(fits[0])
    unknown = sorted(set(names) - set(_SPEC_FIELDS))
    if unknown:
        raise ValueError(f"no KernelSpec field for the hyperparameter(s) {', '.join(unknown)}")
    fields: dict = {}
    for name in names:
        value = float(np.exp(np.median(np.log([f[name] for f in fits]))))
        fields[_SPEC_FIELDS[name]] = (value,) if _SPEC_FIELDS[name] == "lengthscales" else value
    return replace(pilot, **fields)


def prescription_session(patient, start, n_trials: int, seed: int, kernel: KernelSpec | None = None):
    """A UCB-ALD :class:`PrescriptionOptimizer` session of ``n_trials`` letters on ``patient``
    (``start``: the starting refraction or ``None``; ``kernel``: ``None`` for the shipped one)."""
    opt = PrescriptionOptimizer(rule="ucb-ald", seed=seed, start=start, hyperparameters=kernel)
    run_session(
        opt,
        lambda trial: patient.respond(trial.letter_logmar, trial.sphere_d, trial.cylinder_d, trial.axis_deg),
        n_trials,
    )
    return opt


def fit_prescription_hyperparameters(
    slope=PRESCRIPTION_SLOPE,
    n_patients=8,
    n_responses=PRESCRIPTION_TRIALS,
    seed=0,
    n_restarts=3,
    progress=None,
    n_passes=1,
    accommodation="half",
    kernels=tuple(PRESCRIPTION_KERNELS),
) -> dict:
    """Fit the full-prescription kernels (``kernels``: keys of :data:`PRESCRIPTION_KERNELS`) on
    simulated sessions of the clinic patients of seeds ``seed … seed + n_patients − 1``.

    Returns ``{key: KernelSpec dict, ..., "fits": {key: {"hyperparameter_names", "per_patient",
    "passes", "pilot"}}, "fitted_on": {...}, "command": ...}``; ``progress`` is called with the
    number of fits done (``n_patients`` per pass and kernel).
    """
    if accommodation not in ACCOMMODATION_CHOICES:
        raise ValueError(f"accommodation must be one of {ACCOMMODATION_CHOICES}, got {accommodation!r}")
    unknown = [k for k in kernels if k not in PRESCRIPTION_KERNELS]
    if unknown or not kernels:
        raise ValueError(f"kernels must name some of {tuple(PRESCRIPTION_KERNELS)}, got {tuple(kernels)!r}")
    seeds = [seed + i for i in range(n_patients)]

    def patient(i):  # drawn afresh for every session: its answers do not depend on earlier sessions
        return draw_clinic_patients(1, seeds[i], accommodation=_accommodates(i, accommodation), slope=slope)[0]

    result: dict = {}
    fits_record: dict = {}
    done = 0
    for key in kernels:
        started = PRESCRIPTION_KERNELS[key]
        pilot = kernel = prescription_kernel(started)
        history = []
        for pass_index in range(n_passes):
            fits, per_patient = [], []
            for i, patient_seed in enumerate(seeds):
                p = patient(i)
                start = autorefraction(p, np.random.SeedSequence([patient_seed, 1])) if started else None
                opt = prescription_session(p, start, n_responses, patient_seed, None if pass_index == 0 else kernel)
                gp = opt.model
                gp.fit_hyperparameters(gp.X_train_, gp.y_train_, n_restarts=n_restarts, seed=patient_seed)
                values = dict(zip(gp.kernel_.hyperparameter_names, np.exp(gp.kernel_.theta).tolist()))
                fits.append(values)
                per_patient.append(
                    {
                        "seed": patient_seed,
                        "accommodation_d": p.accommodation_d,
                        "truth": p.correction.format(),
                        "start": None if start is None else start.format(),
                        "hyperparameters": values,
                        "log_marginal_likelihood": float(gp.log_marginal_likelihood()),
                    }
                )
                done += 1
                if progress is not None:
                    progress(done)
            kernel = log_median_kernel(pilot, fits)
            history.append(kernel.to_dict())
        result[key] = kernel.to_dict()
        fits_record[key] = {
            "pilot": pilot.to_dict(),
            "hyperparameter_names": list(fits[0]),
            "per_patient": per_patient,
            "passes": history,
        }
    result["fits"] = fits_record
    result["fitted_on"] = {
        "space": "power-vector",
        "model": "floored",
        "design": "sessions",
        "rule": "ucb-ald",
        "slope": slope,
        "n_patients": n_patients,
        "n_responses": n_responses,
        "seeds": seeds,
        "accommodation": accommodation,
        "n_restarts": n_restarts,
        "n_passes": n_passes,
    }
    result["command"] = (
        f"lensopt hyperparameters --space power-vector --slope {slope:g} --patients {n_patients} "
        f"--responses {n_responses} --seed {seed} --restarts {n_restarts} --passes {n_passes} "
        f"--accommodation {accommodation}"
    )
    return result


def prescription_hyperparameters_file(fit: dict, previous: dict | None, adopt: bool = False) -> dict:
    """The contents of ``data/prescription-hyperparameters.json`` after ``fit``
    (:func:`fit_prescription_hyperparameters`).

    ``adopt``: the fitted kernels become the optimizer's (``kernel``, ``start_kernel``); otherwise
    those two keys and their ``source`` note stay as in ``previous`` (the file being rewritten, or
    the shipped kernels) and the fit goes to ``fitted_kernel``/``fitted_start_kernel``.
    """
    previous = dict(previous or {})
    fitted = [key for key in PRESCRIPTION_KERNELS if key in fit]
    how = (
        f"fitted by type-II maximum likelihood (EP, the floored likelihood) on simulated UCB-ALD "
        f"PrescriptionOptimizer sessions ({fit['fitted_on']['n_responses']} trials) of clinic patients "
        f"(seeds {fit['fitted_on']['seeds'][0]}-{fit['fitted_on']['seeds'][-1]}, slope "
        f"{fit['fitted_on']['slope']:g}, accommodation: {fit['fitted_on']['accommodation']}), the shipped "
        f"kernels as pilot; median of the per-patient log-hyperparameters ('fits'; the 'command' field)."
    )
    out: dict = {}
    if adopt:
        for key in PRESCRIPTION_KERNELS:
            out[key] = (
                fit[key] if key in fit else previous.get(key, prescription_kernel(PRESCRIPTION_KERNELS[key]).to_dict())
            )
        out["source"] = f"{', '.join(fitted)}: {how}"
    else:
        for key in PRESCRIPTION_KERNELS:
            out[key] = previous.get(key, prescription_kernel(PRESCRIPTION_KERNELS[key]).to_dict())
        for key in fitted:
            out[f"fitted_{key}"] = fit[key]
        old = previous.get("source", "the shipped kernels")
        if "; fitted_" in old:  # the note of an earlier fit is replaced
            old = old[: old.index("; fitted_")]
        old = old.rstrip(". ")
        out["source"] = (
            f"{old}; {', '.join(f'fitted_{k}' for k in fitted)}: not adopted (the optimizer reads kernel "
            f"and start_kernel, tuned with the values above): {how}"
        )
    out["fits"] = fit["fits"]
    out["fitted_on"] = fit["fitted_on"]
    out["command"] = fit["command"] + (" --adopt" if adopt else "")
    return out
