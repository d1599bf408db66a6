"""Reference hyperparameters of the refraction GP: what the kernel compares and how the fit is recorded."""

import json
import math

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


# --- the full prescription (--space power-vector) --------------------------------------------


def test_power_vector_refit_is_the_log_median_of_the_per_patient_fits():
    from lensopt.refraction.prescription_letters import PrescriptionOptimizer
    from lensopt.refraction_hyperparameters import fit_prescription_hyperparameters

    result = fit_prescription_hyperparameters(n_patients=2, n_responses=15, n_restarts=0, seed=3)
    result = json.loads(json.dumps(result))  # what the file holds
    fields = {
        "bowl.slope_variance": "context_variance",
        "linear.variance": "context_variance",
        "bowl.shift_variance": "shift_variance",
        "se.variance": "variance",
    }
    for key, structure in (("start_kernel", "acuity-bowl"), ("kernel", "psychophysics")):
        kernel = KernelSpec.from_dict(result[key])
        assert kernel.structure == structure and kernel.family == "se" and len(kernel.lengthscales) == 1
        values = [kernel.context_variance, kernel.variance, kernel.lengthscales[0]]
        values += [kernel.shift_variance] if structure == "acuity-bowl" else []
        assert all(np.isfinite(v) and v > 0 for v in values), values
        fits = result["fits"][key]
        patients = fits["per_patient"]
        assert [p["seed"] for p in patients] == [3, 4]
        assert patients[0]["accommodation_d"] == 0 and patients[1]["accommodation_d"] > 0  # every other one
        assert (patients[0]["start"] is None) == (key == "kernel")
        expected_names = (
            ["bowl.slope_variance", "bowl.shift_variance"] if key == "start_kernel" else ["linear.variance"]
        )
        assert fits["hyperparameter_names"] == [*expected_names, "se.lengthscale", "se.variance"]
        for name in fits["hyperparameter_names"]:
            a, b = (p["hyperparameters"][name] for p in patients)
            hand = math.sqrt(a * b)  # median of two logs: their mean, i.e. the geometric mean
            got = kernel.lengthscales[0] if name == "se.lengthscale" else getattr(kernel, fields[name])
            assert got == pytest.approx(hand, rel=1e-12), name
    assert result["fitted_on"]["seeds"] == [3, 4] and "--space power-vector" in result["command"]
    # the fitted kernels drive the optimizer
    start = result["fits"]["start_kernel"]["per_patient"][0]["start"]
    PrescriptionOptimizer(seed=0, start=start, hyperparameters=result["start_kernel"]).ask()
    PrescriptionOptimizer(seed=0, hyperparameters=result["kernel"]).ask()


def test_log_median_kernel_by_hand():
    from lensopt.refraction_hyperparameters import log_median_kernel

    pilot = KernelSpec(structure="acuity-bowl", lengthscales=(2.0,), variance=2.0, context_variance=15.0)
    fits = [
        {"bowl.slope_variance": 1.0, "bowl.shift_variance": 4.0, "se.lengthscale": 0.5, "se.variance": 3.0},
        {"bowl.slope_variance": 1000.0, "bowl.shift_variance": 0.5, "se.lengthscale": 16.0, "se.variance": 3.0},
        {"bowl.slope_variance": 10.0, "bowl.shift_variance": 1.0, "se.lengthscale": 2.0, "se.variance": 30.0},
    ]
    kernel = log_median_kernel(pilot, fits)  # medians, not the geometric means (21.5, 1.26, 2.52, 6.46)
    assert kernel.structure == "acuity-bowl"
    assert kernel.context_variance == pytest.approx(10.0) and kernel.shift_variance == pytest.approx(1.0)
    assert kernel.lengthscales == pytest.approx((2.0,)) and kernel.variance == pytest.approx(3.0)
    with pytest.raises(ValueError, match="no KernelSpec field"):
        log_median_kernel(pilot, [{"rq.alpha": 1.0}])


def _fake_fit():
    spec = KernelSpec(structure="acuity-bowl", lengthscales=(0.5,), variance=3.0, context_variance=99.0)
    return {
        "start_kernel": spec.to_dict(),
        "kernel": KernelSpec(lengthscales=(0.7,), variance=5.0, context_variance=50.0).to_dict(),
        "fits": {},
        "fitted_on": {"n_responses": 15, "seeds": [0, 1], "slope": 14.0, "accommodation": "half"},
        "command": "lensopt hyperparameters --space power-vector",
    }


def test_a_fit_not_adopted_goes_beside_the_shipped_kernels():
    from lensopt.refraction.prescription_letters import prescription_kernel
    from lensopt.refraction_hyperparameters import prescription_hyperparameters_file

    previous = {"kernel": {"k": 1}, "start_kernel": {"s": 2}, "source": "tuned by hand."}
    fit = _fake_fit()
    kept = prescription_hyperparameters_file(fit, previous)
    assert kept["kernel"] == {"k": 1} and kept["start_kernel"] == {"s": 2}
    assert kept["fitted_kernel"] == fit["kernel"] and kept["fitted_start_kernel"] == fit["start_kernel"]
    assert kept["source"].startswith("tuned by hand; fitted_start_kernel, fitted_kernel: not adopted")
    assert prescription_hyperparameters_file(fit, kept)["source"] == kept["source"]  # a refit replaces its note
    adopted = prescription_hyperparameters_file(fit, previous, adopt=True)
    assert adopted["kernel"] == fit["kernel"] and adopted["start_kernel"] == fit["start_kernel"]
    assert "fitted_kernel" not in adopted and adopted["command"].endswith(" --adopt")
    fresh = prescription_hyperparameters_file(fit, None)  # no file yet: the shipped kernels are kept
    assert fresh["start_kernel"] == prescription_kernel(True).to_dict()


def test_the_shipped_prescription_file_keeps_the_optimizer_keys_and_its_command():
    from lensopt.reference_data import PRESCRIPTION_HYPERPARAMETERS, load_json

    data = load_json(PRESCRIPTION_HYPERPARAMETERS)
    assert KernelSpec.from_dict(data["start_kernel"]).structure == "acuity-bowl"
    assert KernelSpec.from_dict(data["kernel"]).structure == "psychophysics"
    assert data["command"].startswith("lensopt hyperparameters --space power-vector")
    assert max(data["fitted_on"]["seeds"]) < 100_000
    for key in ("start_kernel", "kernel"):
        fitted = data.get(f"fitted_{key}", data[key])
        assert len(data["fits"][key]["per_patient"]) == data["fitted_on"]["n_patients"]
        names = data["fits"][key]["hyperparameter_names"]
        logs = np.log([[p["hyperparameters"][n] for n in names] for p in data["fits"][key]["per_patient"]])
        assert fitted["variance"] == pytest.approx(math.exp(np.median(logs[:, -1])), rel=1e-12)


def _no_fit(*args, **kwargs):
    raise AssertionError("the fit ran")


@pytest.mark.parametrize(
    "args, message",
    [
        (["--seed", "99999", "--patients", "2"], "held out"),
        (["--seed", "100000"], "held out"),
        (["--model", "probit"], "does not apply to --space power-vector"),
    ],
)
def test_power_vector_cli_refuses_in_one_line_before_fitting(monkeypatch, capsys, tmp_path, args, message):
    import lensopt.cli.handlers.hyperparameters as module  # the handler's own names for the fits
    from lensopt.cli import main

    monkeypatch.setattr(module, "fit_prescription_hyperparameters", _no_fit)
    output = tmp_path / "p.json"
    assert main(["hyperparameters", "--space", "power-vector", *args, "--output", str(output)]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and message in err[0], err
    assert not output.exists()


@pytest.mark.parametrize("args", [["--seed", "100000", "--patients", "2"], ["--seed", "99999", "--patients", "2"]])
def test_the_two_parameter_fit_refuses_held_out_patients_too(monkeypatch, capsys, tmp_path, args):
    """The patient of seed N is the benchmarks' patient of seed N: a sphere-cylinder fit reaching
    seed 100,000 would tune on held-out patients (it ran, and the campaign called itself held-out)."""
    import lensopt.cli.handlers.hyperparameters as module
    from lensopt.cli import main

    monkeypatch.setattr(module, "fit_reference_hyperparameters", _no_fit)
    output = tmp_path / "h.json"
    assert main(["hyperparameters", "--space", "sphere-cylinder", *args, "--output", str(output)]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "held out for the benchmarks; fit on tuning seeds only" in err[0], err
    assert not output.exists()


@pytest.mark.parametrize("space", ["power-vector", "sphere-cylinder"])
def test_an_unwritable_output_is_refused_before_fitting(monkeypatch, capsys, tmp_path, space):
    import lensopt.cli.handlers.hyperparameters as module  # the handler's own names for the fits
    from lensopt.cli import main

    monkeypatch.setattr(module, "fit_prescription_hyperparameters", _no_fit)
    monkeypatch.setattr(module, "fit_reference_hyperparameters", _no_fit)
    for output, message in ((tmp_path / "missing" / "p.json", "folder does not exist"), (tmp_path, "is a folder")):
        assert main(["hyperparameters", "--space", space, "--output", str(output)]) == 2
        err = capsys.readouterr().err.strip().splitlines()
        assert len(err) == 1 and message in err[0], err


def test_power_vector_cli_writes_the_fit_beside_the_kernels_it_updates(capsys, tmp_path):
    from lensopt.cli import main

    output = tmp_path / "p.json"
    kernel = KernelSpec(lengthscales=(1.0,)).to_dict()
    output.write_text(json.dumps({"kernel": kernel, "start_kernel": {"s": 2}, "source": "by hand"}))
    args = ["hyperparameters", "--space", "power-vector", "--patients", "1", "--responses", "8", "--restarts", "0"]
    assert main([*args, "--seed", "7", "--output", str(output)]) == 0
    data = json.loads(output.read_text())
    assert data["kernel"] == kernel and data["start_kernel"] == {"s": 2}
    assert KernelSpec.from_dict(data["fitted_start_kernel"]).structure == "acuity-bowl"
    assert data["fitted_on"]["seeds"] == [7] and "--seed 7" in data["command"]
    printed = capsys.readouterr().out
    assert "fitted_kernel" in printed and "before theta 1, lengthscale 1 D, variance 1" in printed


def test_the_parser_defaults_of_the_power_vector_fit_are_the_module_s():
    from lensopt.cli.hyperparameters import SPACE_DEFAULTS
    from lensopt.refraction_hyperparameters import PRESCRIPTION_SLOPE, PRESCRIPTION_TRIALS

    assert SPACE_DEFAULTS["power-vector"]["slope"] == PRESCRIPTION_SLOPE
    assert SPACE_DEFAULTS["power-vector"]["responses"] == PRESCRIPTION_TRIALS
