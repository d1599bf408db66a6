"""The bracketing rule's shared step (lensopt.refraction.bracket)."""

import numpy as np
import pytest

from lensopt.refraction.bracket import most_informative
from lensopt.refraction.letters import RefractionOptimizer


def _fitted(n_trials=15):
    optimizer = RefractionOptimizer(rule="ucb-ald", seed=3, n_candidates=64, n_starts=1)
    rng = np.random.default_rng(0)
    for _ in range(n_trials):
        trial = optimizer.ask()
        blur = np.hypot(trial.sphere_d - 0.5, trial.sphere_d + trial.cylinder_d + 1.0)
        optimizer.tell(trial, bool(rng.random() < 0.04 + 0.94 * (trial.letter_logmar > 0.4 * blur)))
    return optimizer


def test_the_most_informative_trial_is_the_best_of_a_dense_search():
    """Against BALD on 2,001 letter sizes per lens: the chosen lens is the dense search's best, its
    letter size within one coarse grid step of the dense argmax, and its information within 1 % of
    the dense maximum (and exactly BALD at the returned trial)."""
    model = _fitted().model
    lenses = np.array([[0.0, 0.0], [0.5, -1.0], [1.5, -2.5], [-1.0, 1.0]])
    chosen, letter_logmar, bits = most_informative(model, lenses, (-1.0, 2.0))
    dense = np.linspace(-1.0, 2.0, 2001)
    values = np.array([model.bald(np.column_stack([dense, np.tile(lens, (len(dense), 1))])) for lens in lenses])
    best_lens, best_letter = np.unravel_index(np.argmax(values), values.shape)
    assert chosen == best_lens
    assert abs(letter_logmar - dense[best_letter]) <= 3.0 / 63
    assert bits == pytest.approx(values.max(), rel=0.01)
    assert bits == pytest.approx(model.bald(np.array([[letter_logmar, *lenses[chosen]]]))[0], rel=1e-12)
