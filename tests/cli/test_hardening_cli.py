"""Issue 19's command-line cases not owned by one command's test module: each refused in one line
naming the problem and the fix, exit 2, no traceback, nothing created and no work done first."""

import os
import subprocess
import sys
from pathlib import Path

import pytest
from one_line import refused


@pytest.mark.parametrize("space", ["sphere-cylinder", "power-vector"])
def test_hyperparameters_into_a_missing_folder_is_refused_before_fitting(capsys, no_fit, space):
    line = refused(capsys, ["hyperparameters", "--space", space, "--output", "/nonexistent/dir/x.json"])
    assert line == (
        "lensopt hyperparameters: error: --output /nonexistent/dir/x.json: its folder does not exist; "
        "create it or choose another path"
    )
    assert not Path("/nonexistent").exists()


def test_hyperparameters_into_proc_is_refused_before_fitting_even_as_root(capsys, no_fit):
    assert "--output /proc/x.json: cannot write in /proc" in refused(
        capsys, ["hyperparameters", "--output", "/proc/x.json"]
    )


def test_hyperparameters_onto_a_folder_is_refused_before_fitting(capsys, no_fit, tmp_path):
    assert "is a folder; give a file name" in refused(capsys, ["hyperparameters", "--output", str(tmp_path)])
    assert list(tmp_path.iterdir()) == []


def test_a_bench_handler_error_names_the_benchmark_command(capsys):
    line = refused(capsys, ["bench", "rescale", "--out", "/nonexistent/x.json"])
    assert line.startswith("lensopt bench rescale: error: --out /nonexistent/x.json")


def test_a_double_dash_as_a_value_is_refused_not_handed_on_as_an_empty_list(capsys, tmp_path):
    # Python 3.11's argparse drops '--' and gave `range([])` a list: a TypeError traceback
    line = refused(capsys, ["bench", "functions", "--seeds=--", "--local-sync", "--out", str(tmp_path / "c")])
    assert "argument --seeds: expected a value, got '--'" in line
    assert not (tmp_path / "c").exists()


@pytest.mark.parametrize("value", ["4294967296", "10000000000000000000000"])
def test_a_whole_number_beyond_any_count_is_refused_by_every_option(capsys, value):
    assert "--seeds: must be at most 4294967295 in size" in refused(capsys, ["bench", "functions", f"--seeds={value}"])


# --- stored data changed by another program: one line naming the session, nothing changed --------


def _stored_session(tmp_path) -> Path:
    """A finished letter session of three trials, written through the store as lensopt run does."""
    from lensopt.experiment.calibration import Calibration
    from lensopt.experiment.protocol import load_protocol
    from lensopt.refraction import RefractionOptimizer
    from lensopt.store import ResultRecord, SessionStore, TrialRecord

    repo = Path(__file__).resolve().parents[2]
    protocol = load_protocol(repo / "protocols" / "demo-simulated.toml")
    calibration = Calibration(screen_width_cm=53.0, screen_width_px=1920, screen_height_px=1080, distance_cm=400.0)
    path = tmp_path / "s.db"
    with SessionStore(path) as store:
        sid = store.create_session(
            "P", protocol.to_dict(), calibration.to_dict(), RefractionOptimizer().settings_dict(), 0
        )
        for i in (1, 2, 3):
            store.append_trial(sid, TrialRecord(i, 0.5, -0.5, 0.3, "K", "K", True, 0.5, 10.0 + i, 10.5 + i))
        store.set_result(sid, ResultRecord("S +0.50 D  C -0.50 D", 0.5, -0.5, None, 0.0, 0.5, 3, {"sphere_d": [0, 1]}))
    return path


def _tamper(path, sql, value):
    import sqlite3

    conn = sqlite3.connect(path)
    with conn:
        conn.execute(sql, (value,))
    conn.close()


def _content(path) -> list[str]:
    """The database's rows and layout as SQL (its bytes move when SQLite checkpoints its log)."""
    import sqlite3

    conn = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
    try:
        return list(conn.iterdump())
    finally:
        conn.close()


@pytest.mark.parametrize(
    "sql, value, argv, message",
    [
        (
            "UPDATE sessions SET calibration = ?",
            '{"foo": 1}',
            ["run", "--resume", "1"],
            "the stored calibration of session 1 cannot be read (unknown calibration field(s) foo",
        ),
        (
            "UPDATE sessions SET optimizer_settings = ?",
            "{}",
            ["run", "--resume", "1"],
            "session 1 stored no optimizer settings, so it cannot be resumed",
        ),
        (
            "UPDATE trials SET extra = ?",
            "{bad",
            ["export", "1"],
            "the extra data of trial 1 of session 1 is not the JSON lensopt wrote",
        ),
        (  # it said "Expecting value: line 1 column 1 (char 0)" for every command, naming nothing
            "UPDATE results SET intervals = ?",
            "",
            ["export", "1"],  # `lensopt sessions` lists it, as damaged (tests/store/test_damaged_rows.py)
            "is damaged: its result's intervals is not the JSON lensopt wrote",
        ),
    ],
)
def test_stored_data_changed_by_another_program_is_one_line_and_leaves_the_file(
    capsys, tmp_path, sql, value, argv, message
):
    path = _stored_session(tmp_path)
    _tamper(path, sql, value)
    before = _content(path)
    line = refused(capsys, [*argv, "--db", str(path)])
    assert message in line, line
    assert _content(path) == before


def test_a_reader_that_goes_away_is_not_a_traceback(tmp_path):
    """``lensopt sessions --json | head -c 1``: the pipe closes early; no BrokenPipeError, exit 0."""
    import subprocess
    import sys

    path = _stored_session(tmp_path)
    lensopt = [sys.executable, "-m", "lensopt", "sessions", "--json", "--db", str(path)]
    reader = subprocess.Popen(["head", "-c", "1"], stdin=subprocess.PIPE, stdout=subprocess.DEVNULL)
    done = subprocess.run(lensopt, stdout=reader.stdin, stderr=subprocess.PIPE, text=True, timeout=120)
    reader.stdin.close()
    reader.wait(timeout=30)
    assert "Traceback" not in done.stderr and "BrokenPipe" not in done.stderr, done.stderr
    assert done.returncode == 0


@pytest.mark.parametrize(
    "blocked, argv, extra",
    [
        ("matplotlib", ["print", "1", "--out", "x.pdf"], "dashboard"),
        ("PyQt5", ["dashboard", "1"], "dashboard"),
    ],
)
def test_a_command_whose_optional_part_is_not_installed_says_which_in_one_line(tmp_path, blocked, argv, extra):
    """A plain ``pip install lensopt`` has the core only: a command that needs an optional part names
    it and the command that installs it, in one line, exit 2 (it was a traceback)."""
    from lensopt.store import SessionStore

    db = tmp_path / "s.db"
    with SessionStore(db) as store:
        store.create_session("P1", {}, {}, {}, 1)
    code = (
        "import sys\n"
        f"sys.modules[{blocked!r}] = None  # as if not installed: importing it raises ModuleNotFoundError\n"
        "from lensopt.cli import main\n"
        f"sys.exit(main({argv!r} + ['--db', sys.argv[1]]))\n"
    )
    env = {**os.environ, "DISPLAY": os.environ.get("DISPLAY", ":0"), "QT_QPA_PLATFORM": "offscreen"}
    result = subprocess.run(
        [sys.executable, "-c", code, str(db)], capture_output=True, text=True, cwd=tmp_path, env=env, timeout=120
    )
    assert result.returncode == 2 and "Traceback" not in result.stderr, result.stderr
    assert result.stderr.count("\n") == 1
    assert f"{blocked} is not installed" in result.stderr and f"pip install 'lensopt[{extra}]'" in result.stderr


def test_bench_report_without_matplotlib_names_the_bench_part_not_the_dashboards(tmp_path):
    """``bench report`` of a core-only install asked for lensopt[dashboard] (PyQt5 too) where
    lensopt[bench] brings matplotlib, as ``bench robustness --summary`` says."""
    from lensopt.bench.records import MANIFEST_NAME, write_json_atomic

    (tmp_path / "runs").mkdir()
    for rule in ("ucb-ald", "random"):
        for seed in range(3):
            key = f"p1__{rule}__seed{seed:04d}"
            record = {"key": key, "campaign": "functions", "problem": "p1", "rule": rule, "seed": seed}
            record |= {"direction": "max", "optimal_value": 3.0, "trajectory": [0.0, 1.0, 2.0], "final_value": 2.0}
            record |= {"n_iterations": 3, "n_initial": 1, "slope": None, "wall_time_s": 1.0}
            record |= {"started_at": "2026-01-01T00:00:00+00:00", "finished_at": "2026-01-01T00:01:00+00:00"}
            record |= {"host": "test", "versions": {"lensopt": "0"}}
            write_json_atomic(tmp_path / "runs" / f"{key}.json", record)
    write_json_atomic(tmp_path / MANIFEST_NAME, {"rules": ["ucb-ald", "random"], "problems": ["p1"]})
    code = (
        "import sys\n"
        "sys.modules['matplotlib'] = None  # as if not installed: importing it raises ModuleNotFoundError\n"
        "from lensopt.cli import main\n"
        "sys.exit(main(['bench', 'report', sys.argv[1], '--out', sys.argv[2]]))\n"
    )
    result = subprocess.run(
        [sys.executable, "-c", code, str(tmp_path), str(tmp_path / "report")],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert result.returncode == 2 and "Traceback" not in result.stderr, result.stderr
    assert result.stderr == (
        "lensopt bench report: error: matplotlib is not installed (lensopt's 'bench' part): "
        "pip install 'lensopt[bench]'\n"
    )


def test_a_missing_module_of_no_optional_part_is_not_dressed_up_as_one():
    from lensopt.errors import missing_extra

    assert missing_extra(ModuleNotFoundError("No module named 'numpy'", name="numpy")) is None
    error = missing_extra(ModuleNotFoundError("No module named 'psychopy.visual'", name="psychopy.visual"))
    assert str(error) == "psychopy is not installed (lensopt's 'experiment' part): pip install 'lensopt[experiment]'"
