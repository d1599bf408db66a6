"""docs/examples/varied_patients.py: its patients, its table and a short run of its command."""

import importlib.util
from pathlib import Path

import numpy as np
import pytest

from lensopt.observer import draw_patients

EXAMPLE = Path(__file__).resolve().parents[1] / "docs" / "examples" / "varied_patients.py"


@pytest.fixture(scope="module")
def example():
    spec = importlib.util.spec_from_file_location("varied_patients", EXAMPLE)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_a_varied_patient_keeps_the_correction_of_its_seed_and_draws_its_slope_and_acuity_in_range(example):
    fixed = draw_patients(1, 100_003, slope=5.0)[0]
    varied = example.varied_patient(100_003, slopes=(2.0, 8.0), va_best_logmar=(-0.1, 0.3))
    assert (varied.sphere_d, varied.cylinder_d) == (fixed.sphere_d, fixed.cylinder_d)
    assert 2.0 <= varied.slope <= 8.0 and -0.1 <= varied.best_acuity_logmar <= 0.3
    again = example.varied_patient(100_003, slopes=(2.0, 8.0), va_best_logmar=(-0.1, 0.3))
    assert (again.slope, again.best_acuity_logmar) == (varied.slope, varied.best_acuity_logmar)


def test_slopes_are_log_uniform_and_best_acuities_uniform_over_many_patients(example):
    patients = [example.varied_patient(s, slopes=(2.0, 8.0), va_best_logmar=(-0.1, 0.3)) for s in range(3000)]
    slopes = np.array([p.slope for p in patients])
    va = np.array([p.best_acuity_logmar for p in patients])
    # log-uniform on [2, 8]: P(a < 4) = 1/2, P(a < 2√2) = 1/4 (binomial SD <= 0.009 with 3000 patients)
    assert np.mean(slopes < 4.0) == pytest.approx(0.5, abs=0.035)
    assert np.mean(slopes < 2.0 * np.sqrt(2.0)) == pytest.approx(0.25, abs=0.035)
    # uniform on [-0.1, 0.3]: mean 0.1, P(VA0 < 0) = 1/4
    assert va.mean() == pytest.approx(0.1, abs=0.01)
    assert np.mean(va < 0.0) == pytest.approx(0.25, abs=0.035)


def test_a_table_row_counts_stops_their_accuracy_trials_and_lost_sessions(example):
    sessions = [
        {"slope": 5.0, "stopped_at": 40, "error_at_stop": 0.01, "error_at_end": 0.0},
        {"slope": 5.0, "stopped_at": 60, "error_at_stop": 0.03, "error_at_end": 0.02},
        {"slope": 5.0, "stopped_at": None, "error_at_stop": None, "error_at_end": 0.15},
    ]
    fields = example.table_row("x", sessions).split()
    assert fields[1:] == ["3", "2", "50.0", "%", "50.0", "1"]


def test_the_command_prints_every_rule_and_the_slope_bands_it_met(example, capsys):
    example.main(["--patients", "2", "--trials", "22", "--rules", "acuity-law", "--first-seed", "100000"])
    rows = capsys.readouterr().out.strip().splitlines()[1:]
    assert rows[0].startswith("acuity-law, all") and rows[0].split()[2] == "2"
    slopes = [example.varied_patient(s).slope for s in (100_000, 100_001)]
    expected = {label for label, low, high in example.SLOPE_BANDS if any(low <= a < high for a in slopes)}
    assert {row.split(",")[1].split("  ")[0].strip() for row in rows[1:]} == expected


def test_inverted_ranges_are_refused_in_one_line(example, capsys):
    with pytest.raises(SystemExit) as exit_info:
        example.main(["--slopes", "8", "2"])
    assert exit_info.value.code == 2
    assert "--slopes needs 0 < LO <= HI" in capsys.readouterr().err
