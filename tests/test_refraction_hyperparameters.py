"""Reference hyperparameters of the refraction GP: what the kernel compares and how the fit is recorded."""

import json

import numpy as np
import pytest

from lensopt.binary.settings import KernelSpec
from lensopt.gp import GPClassifier
from lensopt.observer import SimulatedPatient
from lensopt.refraction.letters import MERIDIAN_MAP, RefractionOptimizer, reference_kernel
from lensopt.refraction_hyperparameters import fit_reference_hyperparameters, simulated_responses


def test_blur_is_round_in_principal_meridian_powers():
    # the patient's acuity depends on the residual lens only through |A r| (A = MERIDIAN_MAP), so
    # residuals of equal meridian norm give equal acuity, whatever their split between S and C
    patient = SimulatedPatient(0.5, -1.0, seed=0)
    A = np.array(MERIDIAN_MAP)
    angles = np.linspace(0.0, 2.0 * np.pi, 7)
    residual_meridians = 0.8 * np.column_stack([np.cos(angles), np.sin(angles)])
    residual_lenses = np.linalg.solve(A, residual_meridians.T).T
    acuities = [patient.visual_acuity(0.5 + rs, -1.0 + rc) for rs, rc in residual_lenses]
    np.testing.assert_allclose(acuities, acuities[0], rtol=1e-12)


def test_meridian_kernel_explains_simulated_answers_better_than_the_lens_kernel():
    # same data, same fitting budget: the kernel that matches the blur geometry has the higher
    # marginal likelihood (Laplace), on random answers of a patient with an oblique blur valley
    patient = SimulatedPatient(1.0, -2.0, slope=5.0, seed=0)
    X, y = simulated_responses(patient, 300, np.random.default_rng(0))
    evidence = {}
    for name, input_map in (("lens", None), ("meridians", MERIDIAN_MAP)):
        spec = KernelSpec(lengthscales=(1.5, 1.5), variance=25.0, context_variance=25.0, input_map=input_map)
        gp = GPClassifier(spec.build(1, 2))
        gp.fit_hyperparameters(X, y, n_restarts=1, seed=0)
        evidence[name] = gp.log_marginal_likelihood()
    assert evidence["meridians"] > evidence["lens"], evidence


@pytest.mark.parametrize("ard, n_lengthscales", [(False, 1), (True, 2)])
def test_fit_records_the_input_map_and_the_command(ard, n_lengthscales):
    result = fit_reference_hyperparameters(
        n_patients=2, n_responses=40, n_restarts=0, design="random", inputs="meridians", ard=ard
    )
    kernel = KernelSpec.from_dict(json.loads(json.dumps(result))["kernel"])
    assert kernel.input_map == MERIDIAN_MAP and len(kernel.lengthscales) == n_lengthscales
    assert len(result["hyperparameter_names"]) == 2 + n_lengthscales
    assert "--inputs meridians" in result["command"] and result["fitted_on"]["inputs"] == "meridians"
    assert ("--ard" in result["command"]) == ard
    opt = RefractionOptimizer(hyperparameters=kernel, seed=1)
    trial = opt.ask()
    assert opt.settings_dict()["hyperparameters"]["input_map"] == [list(r) for r in MERIDIAN_MAP]
    assert RefractionOptimizer.from_settings(opt.settings_dict(), []).ask() == trial


def test_lens_kernel_states_saved_without_an_input_map_still_load():
    spec = KernelSpec(lengthscales=(2.0, 3.0))
    data = spec.to_dict()
    assert "input_map" not in data
    assert KernelSpec.from_dict(data) == spec


def test_unknown_inputs_are_named():
    with pytest.raises(ValueError, match="inputs must be one of"):
        fit_reference_hyperparameters(n_patients=1, n_responses=5, inputs="axes")


def test_one_lengthscale_builds_an_isotropic_kernel_with_one_hyperparameter():
    kernel = KernelSpec(lengthscales=(2.0,), input_map=MERIDIAN_MAP).build(1, 2)
    assert kernel.hyperparameter_names == ["linear.variance", "se.lengthscale", "se.variance"]
    ard = KernelSpec(lengthscales=(2.0, 2.0), input_map=MERIDIAN_MAP).build(1, 2)
    X = np.random.default_rng(0).uniform(-3, 3, size=(6, 3))
    np.testing.assert_allclose(kernel(X), ard(X), rtol=1e-12)


def test_shipped_kernel_builds_for_the_refraction_columns():
    kernel = reference_kernel().build(1, 2)
    X = np.array([[0.0, 1.0, -1.0], [0.3, 0.0, 0.0]])
    assert np.all(np.linalg.eigvalsh(kernel(X)) > 0)
