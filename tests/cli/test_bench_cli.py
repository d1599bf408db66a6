import subprocess
import sys
from pathlib import Path

import pytest
from one_line import refused

from lensopt.cli import main


def test_bench_without_a_command_names_the_commands_in_one_line_and_exits_2():
    proc = subprocess.run([sys.executable, "-m", "lensopt", "bench"], capture_output=True, text=True, timeout=120)
    assert proc.returncode == 2
    assert proc.stdout == ""
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1
    assert "name a benchmark command" in lines[0] and "robustness" in lines[0] and "decision-time" in lines[0]


def test_an_output_folder_that_cannot_exist_is_one_line_before_any_work(tmp_path):
    blocker = tmp_path / "a-file"
    blocker.write_text("not a folder")
    for args in (
        [
            "bench",
            "robustness",
            "--patients",
            "1",
            "--conditions",
            "slope-5",
            "--rules",
            "ideal",
            "--local-sync",
            "--no-progress",
            "--out",
            str(blocker / "campaign"),
        ],
        ["bench", "rescale", "--out", str(tmp_path / "missing" / "x.json")],
    ):
        proc = subprocess.run([sys.executable, "-m", "lensopt", *args], capture_output=True, text=True, timeout=120)
        assert proc.returncode == 2, proc.stderr
        lines = proc.stderr.strip().splitlines()
        assert len(lines) == 1 and "--out" in lines[0], proc.stderr
    assert not (tmp_path / "missing").exists()


def test_bench_binary_runs_the_campaign_records_its_exact_command_and_reports_the_papers_rule_names(tmp_path):
    import json

    out = tmp_path / "binary"
    args = ["bench", "binary", "--problems", "forrester", "--seeds", "1", "--iterations", "4"]
    args += ["--rules", "ucb-phi", "random", "--local-sync", "--no-progress", "--out", str(out)]
    proc = subprocess.run([sys.executable, "-m", "lensopt", *args], capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr
    assert "2 runs: 0 already done, 2 run now" in proc.stdout
    manifest = json.loads((out / "campaign.json").read_text())
    assert manifest["campaign"] == "binary" and manifest["n_initial"] == 2
    # the recorded command reruns the same campaign: every run is found done
    again = subprocess.run(
        [sys.executable, "-m", "lensopt", *manifest["command"].split()[1:], "--local-sync", "--no-progress"],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert again.returncode == 0, again.stderr
    assert "2 runs: 2 already done, 0 run now" in again.stdout
    report = subprocess.run(
        [sys.executable, "-m", "lensopt", "bench", "report", str(out)], capture_output=True, text=True, timeout=300
    )
    assert report.returncode == 0, report.stderr
    assert "| UCB_Φ |" in report.stdout and "| Random |" in report.stdout


def test_bench_binary_bad_rule_or_seeds_is_one_line_and_exit_2(tmp_path):
    for bad in (["--rules", "ucb-ald"], ["--seeds", "0"], ["--rules", "random", "random"]):
        proc = subprocess.run(
            [sys.executable, "-m", "lensopt", "bench", "binary", *bad, "--out", str(tmp_path / "b"), "--local-sync"],
            capture_output=True,
            text=True,
            timeout=120,
        )
        assert proc.returncode == 2, proc.stderr
        lines = proc.stderr.strip().splitlines()
        assert len(lines) == 1, proc.stderr
    assert not (tmp_path / "b").exists()


TINY = ["--problems", "forrester", "--seeds", "1", "--iterations", "6", "--rules", "random", "--no-progress"]


def test_a_scheduler_that_does_not_answer_is_one_line_within_the_timeout_and_creates_nothing(
    capsys, tmp_path, monkeypatch
):
    import time

    from lensopt.bench import runner

    monkeypatch.setattr(runner, "SCHEDULER_CONNECT_TIMEOUT_S", 1.0)
    out = tmp_path / "campaign"
    t0 = time.perf_counter()
    line = refused(capsys, ["bench", "functions", *TINY, "--scheduler", "tcp://127.0.0.1:9", "--out", str(out)])
    assert time.perf_counter() - t0 < 10
    assert line.startswith("lensopt bench functions: error: --scheduler tcp://127.0.0.1:9: no Dask scheduler")
    assert "within 1 s" in line and "leave out --scheduler" in line
    assert not out.exists()


@pytest.mark.parametrize(
    "address, message",
    [
        ("garbage", "is not a scheduler address"),
        ("", "--scheduler was given an empty value"),
        ("foo://x:1", "unknown address scheme"),
    ],
)
def test_a_malformed_scheduler_address_is_one_line(capsys, tmp_path, address, message):
    out = tmp_path / "campaign"
    assert message in refused(capsys, ["bench", "functions", *TINY, "--scheduler", address, "--out", str(out)])
    assert not out.exists()


def test_an_out_folder_in_proc_is_one_line_with_local_sync(capsys):
    line = refused(capsys, ["bench", "functions", *TINY, "--local-sync", "--out", "/proc/lensopt-bench"])
    assert "--out /proc/lensopt-bench: cannot write in /proc" in line
    assert not Path("/proc/lensopt-bench").exists()


def test_an_existing_file_as_the_campaign_folder_is_one_line(capsys, tmp_path):
    blocker = tmp_path / "a-file"
    blocker.write_text("x")
    assert "is a file; give a folder" in refused(
        capsys, ["bench", "functions", *TINY, "--local-sync", "--out", str(blocker)]
    )
    assert blocker.read_text() == "x"


def test_rescale_into_a_missing_folder_does_not_create_it(capsys):
    assert "its folder does not exist" in refused(capsys, ["bench", "rescale", "--out", "/nonexistent/x.json"])
    assert not Path("/nonexistent").exists()


def test_an_output_under_a_file_says_the_file_is_not_a_folder(capsys, tmp_path):
    plain = tmp_path / "plain"
    plain.write_text("x")
    message = refused(capsys, ["bench", "rescale", "--out", str(plain / "x.json")])
    assert f"{plain} is a file, not a folder" in message and plain.read_text() == "x"


def test_rescale_onto_the_session_database_or_another_file_is_refused_and_leaves_it(capsys, tmp_path, monkeypatch):
    """``bench rescale --out sessions.db`` wrote its table over the database (every session lost)
    and said "wrote"; a file that is not a rescaling table is refused too, before the sampling."""
    from lensopt.store import SessionStore

    db = tmp_path / "sessions.db"
    with SessionStore(db) as store:
        store.create_session("P1", {}, {}, {}, 1)
    monkeypatch.setenv("LENSOPT_DB", str(db))
    before = db.read_bytes()
    assert "is the session database" in refused(capsys, ["bench", "rescale", "--out", str(db), "--samples", "10"])
    assert db.read_bytes() == before
    notes = tmp_path / "notes.txt"
    notes.write_text("my notes")
    message = refused(capsys, ["bench", "rescale", "--out", str(notes), "--samples", "10"])
    assert "is not a rescaling table JSON file (no JSON object in it)" in message and notes.read_text() == "my notes"
    other = tmp_path / "fit.json"  # JSON of another kind: a hyperparameters fit
    other.write_text('{"kernel": {}}')
    message = refused(capsys, ["bench", "rescale", "--out", str(other), "--samples", "10"])
    assert "is not a rescaling table JSON file (no 'functions' entry in it)" in message
    assert other.read_text() == '{"kernel": {}}'
    with SessionStore(db) as store:  # the sessions are all there
        assert [info.participant for info in store.sessions()] == ["P1"]


def test_rescale_replaces_a_rescaling_table_it_wrote(capsys, tmp_path):
    out = tmp_path / "rescaling.json"
    assert main(["bench", "rescale", "--out", str(out), "--samples", "10"]) == 0
    first = out.read_text()
    assert main(["bench", "rescale", "--out", str(out), "--samples", "10", "--seed", "1"]) == 0
    assert out.read_text() != first and '"functions"' in out.read_text()


def test_rescale_onto_a_folder_is_one_line_and_leaves_no_temporary_file(capsys, tmp_path):
    before = sorted(tmp_path.parent.iterdir())
    assert "is a folder; give a file name" in refused(capsys, ["bench", "rescale", "--out", str(tmp_path)])
    assert sorted(tmp_path.parent.iterdir()) == before and list(tmp_path.iterdir()) == []


@pytest.mark.parametrize("where", ["/proc/lensopt-report", "a-file"])
def test_a_report_folder_that_cannot_be_written_is_one_line_before_reading_the_runs(capsys, tmp_path, where):
    campaign = tmp_path / "campaign"
    (campaign / "runs").mkdir(parents=True)
    (tmp_path / "a-file").write_text("x")
    out = where if where.startswith("/") else str(tmp_path / where)
    assert f"--out {out}" in refused(capsys, ["bench", "report", str(campaign), "--out", out])
    assert sorted(p.name for p in tmp_path.iterdir()) == ["a-file", "campaign"]


@pytest.mark.parametrize(
    "argv", [["bench", "functions", "--workers", "1000000"], ["bench", "decision-time", "--processes", "1000000"]]
)
def test_more_processes_than_one_machine_holds_is_one_line_before_any_start(capsys, argv):
    assert "must be at most 256 processes on one machine, got 1000000" in refused(capsys, argv)


@pytest.mark.parametrize(
    "argv",
    [
        ["bench", "robustness", "--trials", "4294967295", "--patients", "1"],
        ["bench", "prescription", "--trials", "10001"],
        ["bench", "functions", "--iterations", "99999"],
        ["bench", "decision-time", "--trials", "20000"],
        ["bench", "cli-startup", "--runs", "4294967295"],
    ],
)
def test_a_campaign_count_beyond_ten_thousand_is_refused_in_one_line(argv, capsys):
    """A typo of 4294967295 trials ran a campaign for ever (its workers orphaned when it was killed)."""
    with pytest.raises(SystemExit) as exited:
        main(argv)
    assert exited.value.code == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "must be at most 10000, got" in err[0], err


ROBUSTNESS_TINY = ["--conditions", "slope-5", "--patients", "1", "--trials", "6", "--min-trials", "3", "--no-progress"]


@pytest.mark.parametrize(
    "where, said",
    [
        (
            ["--workers", "2", "--local-sync"],
            "--workers 2 sizes a local Dask cluster and --local-sync runs without one",
        ),
        (["--scheduler", "tcp://127.0.0.1:9", "--local-sync"], "--scheduler tcp://127.0.0.1:9 runs on a Dask cluster"),
        (["--scheduler", "tcp://127.0.0.1:9", "--workers", "2"], "uses a running one, whose workers are started"),
    ],
)
@pytest.mark.parametrize("campaign", [["functions", *TINY], ["robustness", *ROBUSTNESS_TINY]], ids=lambda c: c[0])
def test_where_to_run_options_that_one_another_ignore_are_one_line_before_any_work(
    capsys, tmp_path, where, said, campaign
):
    """``--workers`` with ``--local-sync`` ran in this process, one run after the other (``--workers``
    silently ignored); ``--scheduler`` with either of them ignored the other too."""
    out = tmp_path / "campaign"
    line = refused(capsys, ["bench", *campaign, *where, "--out", str(out)])
    assert said in line and "leave out" in line, line
    assert not out.exists()


@pytest.mark.parametrize(
    "argv",
    [
        ["functions", "--problems", "forrester", "--seeds", "1", "--iterations", "6", "--initial", "6"],
        ["binary", "--problems", "forrester", "--seeds", "1", "--iterations", "5", "--initial", "9"],
        ["duels", "--problems", "forrester", "--seeds", "1", "--iterations", "4", "--initial", "4"],
        ["refraction", "--slopes", "5", "--seeds", "1", "--iterations", "5", "--initial", "5"],
        ["feedback", "--seeds", "1", "--iterations", "5", "--initial", "7"],
    ],
    ids=lambda argv: argv[0],
)
def test_initial_at_or_above_the_iterations_is_one_line_before_any_work(capsys, tmp_path, argv):
    """Every trial would have been one of the random first ones: no rule tested, and nothing said."""
    out = tmp_path / "campaign"
    line = refused(capsys, ["bench", *argv, "--local-sync", "--no-progress", "--out", str(out)])
    initial, iterations = argv[argv.index("--initial") + 1], argv[argv.index("--iterations") + 1]
    assert f"--initial {initial} is not below --iterations {iterations}: every trial would be a random" in line
    assert not out.exists()


def test_robustness_initial_at_or_above_the_trials_is_one_line_naming_the_gp_rules(capsys, tmp_path):
    out = tmp_path / "campaign"
    argv = ["bench", "robustness", *ROBUSTNESS_TINY, "--initial", "6", "--local-sync", "--out", str(out)]
    line = refused(capsys, argv)
    assert "--initial 6 is not below the trials of slope-5: every trial of ts-ald, ucb-ald would be a random" in line
    assert not out.exists()


def test_the_help_of_robustness_describes_it_and_the_slurm_example_sets_glibcs_thresholds(capsys):
    for argv in (["bench", "--help"], ["bench", "robustness", "--help"]):
        with pytest.raises(SystemExit) as exit_:
            main(argv)
        assert exit_.value.code == 0
        text = capsys.readouterr().out
        if argv == ["bench", "--help"]:
            assert "job_script_prologue" in text and "MALLOC_TRIM_THRESHOLD_=67108864" in text
        else:
            _usage, description = text.split("\n\n")[:2]
            assert "held-out" in description and "ideal observer" in description, description


def test_feedback_into_a_folder_of_other_settings_names_its_own_option(tmp_path, capsys):
    argv = ["bench", "feedback", "--out", str(tmp_path / "fb"), "--seeds", "1", "--initial", "1"]
    argv += ["--rules", "duel-drop-ties", "--local-sync", "--no-progress"]
    assert main([*argv, "--iterations", "3"]) == 0
    capsys.readouterr()
    line = refused(capsys, [*argv, "--iterations", "4"])
    assert "other settings (--iterations 3 there, 4 here)" in line
