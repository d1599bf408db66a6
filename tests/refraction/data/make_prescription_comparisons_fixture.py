"""Make tests/refraction/data/prescription-comparisons-COMMIT.json with the code of commit COMMIT
(`git worktree add /tmp/old COMMIT`, then from /tmp: `PYTHONPATH=/tmp/old python THIS COMMIT SEED >
FIXTURE`): a duel and a ranking session of the full prescription (seed SEED) saved after 8 answers,
then 6 more trials. The fixtures: c1303ab with seed 3 (the default), a247e62 with seed 5."""

import json
import sys

import numpy as np

from lensopt.refraction.prescription_duels import PrescriptionDuelOptimizer
from lensopt.refraction.prescription_rankings import PrescriptionRankingOptimizer

START = "-1.00 / -0.50 x 180"
COMMIT = sys.argv[1] if len(sys.argv) > 1 else "c1303ab"
SEED = int(sys.argv[2]) if len(sys.argv) > 2 else 3


def answer(kind, t):
    r = np.random.default_rng([99, t])
    return ["first", "second", "same"][r.integers(3)] if kind == "duel" else [int(i) for i in r.permutation(3)]


def lenses(q):
    got = [q.first_lens, q.second_lens] if hasattr(q, "first_lens") else list(q.lenses)
    return [[x.sphere_d, x.cylinder_d, x.axis_deg] for x in got]


out = {"commit": COMMIT, "seed": SEED, "start": START}
for kind, make in (
    ("duel", lambda: PrescriptionDuelOptimizer(seed=SEED, start=START)),
    ("ranking", lambda: PrescriptionRankingOptimizer(seed=SEED, start=START)),
):
    o = make()
    for t in range(8):
        q = o.ask()
        o.tell(q, answer(kind, t))
    state = json.loads(json.dumps(o.to_state()))
    continued = []
    for t in range(8, 14):
        q = o.ask()
        continued.append({"lenses": lenses(q), "letter_logmar": q.letter_logmar, "answer": answer(kind, t)})
        o.tell(q, answer(kind, t))
    out[kind] = {"state": state, "continued": continued, "best": o.best().to_array().tolist()}
json.dump(out, sys.stdout, indent=1)
