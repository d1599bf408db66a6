import subprocess
import sys


def test_bench_without_a_command_names_the_commands_in_one_line_and_exits_2():
    proc = subprocess.run([sys.executable, "-m", "lensopt", "bench"], capture_output=True, text=True, timeout=120)
    assert proc.returncode == 2
    assert proc.stdout == ""
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1
    assert "name a benchmark command" in lines[0] and "robustness" in lines[0] and "decision-time" in lines[0]
