"""Issue 19's command-line cases not owned by one command's test module: each refused in one line
naming the problem and the fix, exit 2, no traceback, nothing created and no work done first."""

from pathlib import Path

import pytest

from lensopt.cli import main


def _refused(capsys, argv) -> str:
    """Run ``lensopt ARGV`` in this process; assert exit 2, one stderr line, no traceback; the line."""
    try:
        code = main(argv)
    except SystemExit as exc:  # argparse's refusals
        code = exc.code
    captured = capsys.readouterr()
    lines = captured.err.strip().splitlines()
    assert code == 2, captured.err
    assert len(lines) == 1 and "Traceback" not in captured.err, captured.err
    return lines[0]


@pytest.fixture
def no_fit(monkeypatch):
    """Make any hyperparameter fit fail the test: a bad --output must be refused before fitting."""
    import lensopt.refraction_hyperparameters as fits

    def forbidden(*args, **kwargs):
        raise AssertionError("the fit ran before --output was checked")

    monkeypatch.setattr(fits, "fit_reference_hyperparameters", forbidden)
    monkeypatch.setattr(fits, "fit_prescription_hyperparameters", forbidden)


@pytest.mark.parametrize("space", ["sphere-cylinder", "power-vector"])
def test_hyperparameters_into_a_missing_folder_is_refused_before_fitting(capsys, no_fit, space):
    line = _refused(capsys, ["hyperparameters", "--space", space, "--output", "/nonexistent/dir/x.json"])
    assert line == (
        "lensopt hyperparameters: error: --output /nonexistent/dir/x.json: its folder does not exist; "
        "create it or choose another path"
    )
    assert not Path("/nonexistent").exists()


def test_hyperparameters_into_proc_is_refused_before_fitting_even_as_root(capsys, no_fit):
    assert "--output /proc/x.json: cannot write in /proc" in _refused(
        capsys, ["hyperparameters", "--output", "/proc/x.json"]
    )


def test_hyperparameters_onto_a_folder_is_refused_before_fitting(capsys, no_fit, tmp_path):
    assert "is a folder; give a file name" in _refused(capsys, ["hyperparameters", "--output", str(tmp_path)])
    assert list(tmp_path.iterdir()) == []


def test_a_bench_handler_error_names_the_benchmark_command(capsys):
    line = _refused(capsys, ["bench", "rescale", "--out", "/nonexistent/x.json"])
    assert line.startswith("lensopt bench rescale: error: --out /nonexistent/x.json")


def test_a_double_dash_as_a_value_is_refused_not_handed_on_as_an_empty_list(capsys, tmp_path):
    # Python 3.11's argparse drops '--' and gave `range([])` a list: a TypeError traceback
    line = _refused(capsys, ["bench", "functions", "--seeds=--", "--local-sync", "--out", str(tmp_path / "c")])
    assert "argument --seeds: expected a value, got '--'" in line
    assert not (tmp_path / "c").exists()


@pytest.mark.parametrize("value", ["4294967296", "10000000000000000000000"])
def test_a_whole_number_beyond_any_count_is_refused_by_every_option(capsys, value):
    assert "--seeds: must be at most 4294967295 in size" in _refused(capsys, ["bench", "functions", f"--seeds={value}"])
