"""Whether a two-parameter search's lens is the most-plus one, on the closing console
(:func:`lensopt.experiment.end_point.most_plus_notes`), and the claim behind the warning."""

import dataclasses
import types

from experiment_helpers import REPO
from lensopt.experiment.end_point import end_point
from lensopt.experiment.modes import mode_for
from lensopt.experiment.protocol import load_protocol
from lensopt.observer import draw_patients
from lensopt.refraction import AcuityLawOptimizer
from lensopt.refraction.duels import DuelRefractionOptimizer
from lensopt.simulation import simulate
from lensopt.store import ResultRecord

WARNING = "may not be the most-plus lens: an eye that accommodates sees as well through more minus lenses"


def test_the_closing_console_says_it_under_a_duels_lens_and_a_letter_searchs():
    protocol = types.SimpleNamespace(
        optimizer=types.SimpleNamespace(sphere_bounds_d=(-4.0, 4.0), cylinder_bounds_d=(-4.0, 4.0)),
        lens=types.SimpleNamespace(axis_deg=180.0, cylinder="minus", step_d=0.25),
        lens_step_d=0.25,
        feedback_mode="duel",
        stop=types.SimpleNamespace(confidence=0.95),
    )
    duels = DuelRefractionOptimizer(seed=1)
    for trial in range(3):
        duels.tell(duels.ask(), "first" if trial % 2 else "second")
    ending = end_point(duels, protocol, None, [], ())
    assert ending.details[-1].startswith(WARNING) and ending.details[-1] in ending.closing_lines()
    law = AcuityLawOptimizer(seed=1, letter_bounds_logmar=(-0.3, 1.0))
    for _ in range(3):
        law.tell(law.ask(), True)
    result = ResultRecord("-1.00 / -0.50 x 180", -1.0, -0.5, 180.0, 0.0, 0.5, 3, {"sphere_d": [-1.5, -0.5]})
    letters = end_point(
        law, types.SimpleNamespace(**{**vars(protocol), "feedback_mode": "letters"}), "OD", [result], ()
    )
    assert any(line.startswith(WARNING) for line in letters.details)


def test_an_accommodating_eye_ends_too_minus_with_the_shipped_duels_as_the_warning_says():
    """The claim behind the warning, on a tuning patient (seed 500): the shipped ``clinical-duel``
    search (40 duels) ends within 0.5 D of the correction's spherical equivalent for the eye that
    does not accommodate, and more than 0.5 D too minus for the same eye with 4 D of accommodation."""
    protocol = load_protocol(REPO / "protocols" / "clinical-duel.toml")
    errors_d = []
    for amplitude_d in (0.0, 4.0):
        patient = dataclasses.replace(draw_patients(1, 500)[0], accommodation_d=amplitude_d)
        optimizer = mode_for(protocol).new_optimizer(protocol, seed=500, letter_bounds_logmar=(-0.3, 0.9))
        simulate("duel", patient, optimizer, protocol.optimizer.trials, tie_threshold=0.5)
        sphere_d, cylinder_d = optimizer.best()
        true_sphere_d, true_cylinder_d = patient.true_correction_d
        errors_d.append((sphere_d + cylinder_d / 2) - (true_sphere_d + true_cylinder_d / 2))
    relaxed, accommodating = errors_d
    assert abs(relaxed) < 0.5 and accommodating < -0.5, errors_d
