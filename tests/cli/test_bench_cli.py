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
