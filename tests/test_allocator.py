"""lensopt.allocator: large temporaries reuse warm heap pages once the thresholds are set (Linux)."""

import os
import subprocess
import sys

import pytest

LINUX_GLIBC = sys.platform == "linux" and os.confstr("CS_GNU_LIBC_VERSION") is not None

# A child process: minor page faults per cycle of allocating, touching and freeing 2 MB arrays,
# before and after keep_large_blocks() (fresh mmap'd pages fault once per 4 kB page: ~500 a cycle).
CHILD = """
import resource, sys
import numpy as np
from lensopt.allocator import keep_large_blocks

def faults_per_cycle(n=40):
    before = resource.getrusage(resource.RUSAGE_SELF).ru_minflt
    for i in range(n):
        a = np.full(262_144, float(i))      # 2 MiB
        b = a * 2.0                         # another
        del a, b
    return (resource.getrusage(resource.RUSAGE_SELF).ru_minflt - before) / n

faults_per_cycle(5)
default = faults_per_cycle()
kept = keep_large_blocks()
faults_per_cycle(5)
print(default, kept, faults_per_cycle())
"""


def _child(env_extra):
    env = {k: v for k, v in os.environ.items() if not k.startswith("MALLOC_") and k != "LENSOPT_MALLOC"}
    env.update(env_extra)
    out = subprocess.run([sys.executable, "-c", CHILD], env=env, capture_output=True, text=True, check=True)
    default, kept, after = out.stdout.split()
    return float(default), kept == "True", float(after)


@pytest.mark.skipif(not LINUX_GLIBC, reason="glibc's malloc thresholds: Linux with glibc only")
def test_after_keep_large_blocks_two_megabyte_temporaries_no_longer_fault_in_fresh_pages():
    default, kept, after = _child({})
    assert kept
    assert default > 400  # two 2 MiB arrays of fresh pages: ~1,000 faults per cycle by default
    assert after < 10


@pytest.mark.skipif(not LINUX_GLIBC, reason="glibc's malloc thresholds: Linux with glibc only")
def test_lensopt_malloc_0_leaves_the_allocator_alone():
    _, kept, after = _child({"LENSOPT_MALLOC": "0"})
    assert not kept
    assert after > 400


@pytest.mark.skipif(not LINUX_GLIBC, reason="glibc's malloc thresholds: Linux with glibc only")
def test_a_users_own_glibc_malloc_setting_is_not_overridden():
    _, kept, _ = _child({"MALLOC_TRIM_THRESHOLD_": "131072"})
    assert not kept


def test_keep_large_blocks_runs_once_per_process(monkeypatch):
    from lensopt import allocator

    calls = []
    monkeypatch.setattr(allocator, "_state", {})
    monkeypatch.setattr(allocator, "_set_thresholds", lambda: calls.append(1) or True)
    assert allocator.keep_large_blocks() and allocator.keep_large_blocks()
    assert calls == [1]


def test_building_an_acuity_law_optimizer_sets_the_thresholds(monkeypatch):
    from lensopt import allocator
    from lensopt.refraction.acuity_law import AcuityLawOptimizer

    calls = []
    monkeypatch.setattr(allocator, "_state", {})
    monkeypatch.setattr(allocator, "_set_thresholds", lambda: calls.append(1) or True)
    AcuityLawOptimizer(seed=1)
    assert calls == [1]
