import subprocess
import sys


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
