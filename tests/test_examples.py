"""The scripts of docs/examples: their patients, their tables and short runs of their commands."""

import importlib.util
from pathlib import Path

import numpy as np
import pytest

from lensopt.observer import draw_patients, varied_patient

EXAMPLES = Path(__file__).resolve().parents[1] / "docs" / "examples"


def load_example(name: str):
    """The module of ``docs/examples/<name>.py`` (not a package: loaded from its path)."""
    spec = importlib.util.spec_from_file_location(name, EXAMPLES / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.fixture(scope="module")
def example():
    return load_example("law_misspecified")


@pytest.fixture(scope="module")
def varied():
    return load_example("varied_patients")


def test_a_blur_gain_scales_the_patients_blur_and_keeps_the_best_lens(example):
    plain = draw_patients(1, 7, slope=5.0)[0]
    scaled = example.with_blur_gain(draw_patients(1, 7, slope=5.0)[0], 1.6)
    lenses = (np.array([0.0, 1.0, -2.0]), np.array([0.0, -0.5, 1.0]))
    np.testing.assert_allclose(scaled.blur_d(*lenses), 1.6 * plain.blur_d(*lenses))
    assert scaled.visual_acuity(scaled.sphere_d, scaled.cylinder_d) == pytest.approx(scaled.best_acuity_logmar)


def test_trials_to_criterion_is_the_first_trial_from_which_the_error_stays_low(example):
    assert example.trials_to_criterion([0.2, 0.01, 0.03, 0.02, 0.01]) == 4
    assert example.trials_to_criterion([0.01, 0.02]) == 1
    assert example.trials_to_criterion([0.01, 0.2]) == 3  # never: one past the budget


def test_patients_off_the_va_grid_keep_their_correction_and_the_command_prints_a_row_per_case(example, capsys):
    plain, off = draw_patients(1, 100_000, slope=5.0)[0], draw_patients(1, 100_000, slope=5.0, va_best_logmar=0.13)[0]
    assert (off.sphere_d, off.cylinder_d, off.best_acuity_logmar) == (plain.sphere_d, plain.cylinder_d, 0.13)
    example.main(
        ["--patients", "1", "--trials", "30", "--gains", "1.0", "--va-best", "0.13", "--rules", "acuity-law", "ideal"]
    )
    rows = capsys.readouterr().out.strip().splitlines()[1:]
    assert [row.split()[:3] for row in rows] == [["acuity-law", "1.00", "+0.13"], ["ideal", "1.00", "+0.13"]]


# docs/examples/varied_patients.py


def test_a_table_row_counts_stops_their_accuracy_trials_and_lost_sessions(varied):
    sessions = [
        {"slope": 5.0, "stopped_at": 40, "error_at_stop": 0.01, "error_at_end": 0.0},
        {"slope": 5.0, "stopped_at": 60, "error_at_stop": 0.03, "error_at_end": 0.02},
        {"slope": 5.0, "stopped_at": None, "error_at_stop": None, "error_at_end": 0.15},
    ]
    fields = varied.table_row("x", sessions).split()
    assert fields[1:] == ["3", "2", "50.0", "%", "50.0", "1"]


def test_the_command_prints_every_rule_and_the_slope_bands_it_met(varied, capsys):
    varied.main(["--patients", "2", "--trials", "22", "--rules", "acuity-law", "--first-seed", "100000"])
    rows = capsys.readouterr().out.strip().splitlines()[1:]
    assert rows[0].startswith("acuity-law, all") and rows[0].split()[2] == "2"
    slopes = [varied_patient(s).slope for s in (100_000, 100_001)]
    expected = {label for label, low, high in varied.SLOPE_BANDS if any(low <= a < high for a in slopes)}
    assert {row.split(",")[1].split("  ")[0].strip() for row in rows[1:]} == expected


def test_inverted_ranges_are_refused_in_one_line(varied, capsys):
    with pytest.raises(SystemExit) as exit_info:
        varied.main(["--slopes", "8", "2"])
    assert exit_info.value.code == 2
    assert "--slopes needs 0 < LO <= HI" in capsys.readouterr().err
