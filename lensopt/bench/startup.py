"""How long ``lensopt --help`` takes: N runs in fresh processes, median and p95 (issue 15).

Run as ``lensopt bench cli-startup [--runs N] [--json]`` or ``python -m lensopt.bench.startup``.
Each run is a new process, as a person typing the command gets: the interpreter's start, the
``lensopt`` imports and argparse's help. One run before the timed ones warms the disk cache.
Standard library only, imported lazily: ``lensopt --help`` itself lists this command.
"""

from __future__ import annotations

import math
import os
import sys
import time
from pathlib import Path

#: Timed runs when not told otherwise.
DEFAULT_RUNS = 20

#: What ``lensopt --help`` should stay under (median, seconds; issue 15).
TARGET_S = 0.3


def default_command() -> list[str]:
    """``lensopt --help`` of this interpreter's environment (its console script, else ``-m lensopt``)."""
    script = Path(sys.executable).parent / "lensopt"
    if script.is_file() and os.access(script, os.X_OK):
        return [str(script), "--help"]
    return [sys.executable, "-m", "lensopt", "--help"]


def percentile(values, q: float) -> float:
    """The ``q``-quantile (0 ≤ q ≤ 1) by linear interpolation between order statistics."""
    ordered = sorted(values)
    if not ordered:
        raise ValueError("no values")
    position = q * (len(ordered) - 1)
    low, high = math.floor(position), math.ceil(position)
    return ordered[low] + (ordered[high] - ordered[low]) * (position - low)


def measure(runs: int = DEFAULT_RUNS, command: list[str] | None = None, warmup: int = 1) -> dict:
    """Wall-clock seconds of ``runs`` runs of ``command`` (default :func:`default_command`)."""
    import statistics
    import subprocess

    if runs < 1:
        raise ValueError(f"runs must be at least 1, got {runs}")
    command = list(command or default_command())
    times = []
    for i in range(warmup + runs):
        start = time.perf_counter()
        done = subprocess.run(command, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
        elapsed = time.perf_counter() - start
        if done.returncode != 0:
            last = (done.stderr.strip().splitlines() or ["no message"])[-1]
            raise RuntimeError(f"{' '.join(command)} exited with {done.returncode}: {last}")
        if i >= warmup:
            times.append(elapsed)
    return {
        "command": command,
        "runs": runs,
        "median_s": statistics.median(times),
        "p95_s": percentile(times, 0.95),
        "min_s": min(times),
        "max_s": max(times),
        "target_s": TARGET_S,
    }


def format_report(result: dict) -> str:
    verdict = "under" if result["median_s"] < result["target_s"] else "OVER"
    program, *rest = result["command"]
    return (
        f"{' '.join([Path(program).name, *rest])}: {result['runs']} runs, "
        f"median {result['median_s']:.3f} s, p95 {result['p95_s']:.3f} s "
        f"(min {result['min_s']:.3f}, max {result['max_s']:.3f}); {verdict} the {result['target_s']:g} s target"
    )


def main(argv: list[str] | None = None) -> int:
    import argparse
    import json

    parser = argparse.ArgumentParser(prog="python -m lensopt.bench.startup", description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=DEFAULT_RUNS, help=f"timed runs (default {DEFAULT_RUNS})")
    parser.add_argument("--json", action="store_true", help="print one JSON object")
    args = parser.parse_args(argv)
    result = measure(args.runs)
    print(json.dumps(result) if args.json else format_report(result))
    return 0


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
