"""Make tests/refraction/data/prescription-comparisons-c1303ab.json with the code of commit c1303ab
(`git worktree add /tmp/old c1303ab`, then from /tmp: `PYTHONPATH=/tmp/old python THIS > FIXTURE`):
a duel and a ranking session of the full prescription saved after 8 answers, then 6 more trials."""

import json
import sys

import numpy as np

from lensopt.refraction.prescription_duels import PrescriptionDuelOptimizer
from lensopt.refraction.prescription_rankings import PrescriptionRankingOptimizer

START = "-1.00 / -0.50 x 180"


def answer(kind, t):
    r = np.random.default_rng([99, t])
    return ["first", "second", "same"][r.integers(3)] if kind == "duel" else [int(i) for i in r.permutation(3)]


def lenses(q):
    got = [q.first_lens, q.second_lens] if hasattr(q, "first_lens") else list(q.lenses)
    return [[x.sphere_d, x.cylinder_d, x.axis_deg] for x in got]


out = {"commit": "c1303ab", "start": START}
for kind, make in (
    ("duel", lambda: PrescriptionDuelOptimizer(seed=3, start=START)),
    ("ranking", lambda: PrescriptionRankingOptimizer(seed=3, start=START)),
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
