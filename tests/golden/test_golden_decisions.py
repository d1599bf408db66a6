"""Every optimizer still makes its recorded decisions (tests/golden/*.json, written by record.py).

Each session is replayed with the recorded answers; its queries and its final best point must
equal the recorded ones (floats to a relative 1e-9). A failure names the first trial that moved:
if the change was meant to change decisions, regenerate with ``python -m tests.golden.record
<family>`` and say so in the commit.
"""

import pytest
from record import FAMILIES, FORMAT, SEEDS, load, n_trials, replay_session


def _sessions():
    for name in FAMILIES:
        for session in load(name)["sessions"]:
            yield pytest.param(name, session, id=f"{name}-{session['config']}-seed{session['seed']}")


@pytest.mark.parametrize("name", list(FAMILIES))
def test_each_golden_file_holds_every_config_and_seed(name):
    data = load(name)
    family = FAMILIES[name]
    assert data["format"] == FORMAT and data["optimizer"] == family.optimizer
    assert data["configs"] == family.configs
    recorded = [(s["config"], s["seed"], len(s["trials"])) for s in data["sessions"]]
    assert recorded == [(c, seed, n_trials(o)) for c, o in family.configs.items() for seed in SEEDS]


@pytest.mark.parametrize(("name", "session"), list(_sessions()))
def test_the_optimizer_makes_its_recorded_decisions(name, session):
    difference = replay_session(FAMILIES[name], session)
    assert difference is None, (
        f"{name} {session['config']} seed {session['seed']}: {difference} "
        f"(regenerate with `python -m tests.golden.record {name}` only if this change is meant to change decisions)"
    )
