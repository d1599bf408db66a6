"""``lensopt simulate --rule acuity-law --accommodation A [--model-accommodation ...]``: the
two-parameter search of an eye that accommodates, with the acuity-law optimizer told (or not) that
it may — the patient and the prior recorded in the JSON, the session ending at the most-plus lens
with the amplitudes and too minus without (bad amplitudes: tests/cli/test_simulate_cli.py)."""

import json

from lensopt.cli import main

AMPLITUDES = ["0", "0.5", "1", "2", "4", "8"]


def _simulate(capsys, *args):
    assert main(["simulate", "--json", "--rule", "acuity-law", "--seed", "506", "--trials", "60", *args]) == 0
    return json.loads(capsys.readouterr().out)


def _m_error_d(result):
    (sphere_d, cylinder_d), (true_sphere_d, true_cylinder_d) = result["best_lens_d"], result["true_correction_d"]
    return (sphere_d + cylinder_d / 2) - (true_sphere_d + true_cylinder_d / 2)


def test_an_accommodating_eye_ends_at_the_most_plus_lens_when_the_optimizer_is_told_it_may(capsys):
    told = _simulate(capsys, "--accommodation", "4", "--model-accommodation", *AMPLITUDES)
    assert told["patient_model"]["accommodation_d"] == 4.0
    assert told["optimizer_settings"]["accommodation_d"] == [float(a) for a in AMPLITUDES]
    assert told["rule"] == "acuity-law" and len(told["best_lens_d"]) == 2  # the two-parameter search
    assert abs(_m_error_d(told)) < 0.25
    untold = _simulate(capsys, "--accommodation", "4")
    assert "accommodation_d" not in untold["optimizer_settings"] and _m_error_d(untold) < -0.75


def test_an_eye_without_accommodation_is_recorded_as_such(capsys):
    result = _simulate(capsys, "--trials", "5", "--model-accommodation", "0", "4")
    assert result["patient_model"]["accommodation_d"] == 0.0
    assert result["optimizer_settings"]["accommodation_d"] == [0.0, 4.0]
