"""Every optimizer still makes its recorded decisions (tests/golden/*.json, written by record.py).

Each session is replayed with the recorded answers; its queries and its final best point must
equal the recorded ones (floats to a relative 1e-9). A failure names the first trial that moved:
if the change was meant to change decisions, regenerate with ``python -m tests.golden.record
<family>`` and say so in the commit.

The decisions hold for one BLAS kernel (record.py): the file of this machine's kernel is compared
strictly; without one, another kernel's is compared where it agrees, and a session it does not
hold is skipped, with the command that records this kernel's file.
"""

import json

import pytest
from record import FAMILIES, FORMAT, SEEDS, blas_kernel, golden_files, load, n_trials, path, replay_session

KERNEL = blas_kernel()


def _golden(name):
    """``(data, strict)``: this kernel's file (strict), else another kernel's (not strict)."""
    if path(name, KERNEL).exists():
        return load(name, KERNEL), True
    return json.loads(golden_files(name)[0].read_text()), False


def _sessions():
    for name in FAMILIES:
        data, strict = _golden(name)
        for session in data["sessions"]:
            yield pytest.param(name, session, strict, id=f"{name}-{session['config']}-seed{session['seed']}")


@pytest.mark.parametrize("name", list(FAMILIES))
def test_each_golden_file_holds_every_config_and_seed(name):
    family = FAMILIES[name]
    files = golden_files(name)
    assert files, f"no golden file for {name}"
    for file in files:
        data = json.loads(file.read_text())
        assert data["format"] == FORMAT and data["optimizer"] == family.optimizer
        assert data["configs"] == family.configs
        kernel = data.get("blas_kernel")
        assert file == path(name, kernel), f"{file.name} holds the decisions of kernel {kernel!r}"
        recorded = [(s["config"], s["seed"], len(s["trials"])) for s in data["sessions"]]
        assert recorded == [(c, seed, n_trials(o)) for c, o in family.configs.items() for seed in SEEDS]


@pytest.mark.parametrize(("name", "session", "strict"), list(_sessions()))
def test_the_optimizer_makes_its_recorded_decisions(name, session, strict):
    difference = replay_session(FAMILIES[name], session)
    if difference is not None and not strict:
        pytest.skip(
            f"{name}: decisions recorded on another BLAS kernel (this machine's: {KERNEL}) and {difference}; "
            f"record this kernel's on a clean checkout: python -m tests.golden.record --add {name}"
        )
    assert difference is None, (
        f"{name} {session['config']} seed {session['seed']}: {difference} "
        f"(regenerate with `python -m tests.golden.record {name}` only if this change is meant to change decisions)"
    )
