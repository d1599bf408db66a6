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


def _prescription_session(n_trials=30, seed=5):
    from lensopt.observer import SimulatedPatient
    from lensopt.refraction.prescription_letters import PrescriptionOptimizer

    patient = SimulatedPatient(-1.25, -0.75, slope=14.0, axis_deg=170.0, seed=seed)
    optimizer = PrescriptionOptimizer(seed=seed, start="-1.00 / -0.50 x 180")
    for _ in range(n_trials):
        trial = optimizer.ask()
        optimizer.tell(trial, patient.respond(trial.letter_logmar, trial.sphere_d, trial.cylinder_d, trial.axis_deg))
    return optimizer


def test_an_affine_model_scores_the_letter_grid_from_its_two_ends_as_the_grid_itself():
    """The acuity-bowl kernel's latent is affine in the letter size: the bracketing step's shortcut
    (two predictions per lens) gives the grid's own BALD to round-off, hence the same trial."""
    optimizer = _prescription_session()
    model, bounds = optimizer.model, optimizer.settings.context_bounds[0]
    centre = optimizer.best().to_array()
    lenses = centre + np.random.default_rng(1).normal(scale=0.5, size=(8, 3))
    letters = np.linspace(*bounds, 64)
    grid = np.column_stack([np.tile(letters, len(lenses)), np.repeat(lenses, len(letters), axis=0)])
    direct = model.bald(grid).reshape(len(lenses), len(letters))
    from lensopt.refraction.bracket import _AffineLetters

    ends = _AffineLetters(model, lenses, bounds)
    np.testing.assert_allclose(ends.bald(letters), direct, rtol=0, atol=1e-12)
    mean, var = model.predict_latent(grid)
    shortcut_mean, shortcut_var = ends.moments(letters)
    np.testing.assert_allclose(shortcut_mean.ravel(), mean, rtol=0, atol=1e-12)
    np.testing.assert_allclose(shortcut_var.ravel(), var, rtol=0, atol=1e-12)
    chosen, letter, bits = most_informative(model, lenses, bounds)
    chosen_affine, letter_affine, bits_affine = most_informative(model, lenses, bounds, affine=True)
    assert chosen_affine == chosen
    assert letter_affine == pytest.approx(letter, abs=1e-9)
    assert bits_affine == pytest.approx(bits, abs=1e-12)
    assert bits_affine == pytest.approx(model.bald(np.array([[letter_affine, *lenses[chosen]]]))[0], abs=1e-12)
