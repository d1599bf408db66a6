"""The letters mode carries both searches: the two-parameter one and the full prescription (axis)."""

from __future__ import annotations

from lensopt.modes.letters import is_prescription, optimizer_class_for
from lensopt.modes.registry import get_mode
from lensopt.refraction.letters import RefractionOptimizer
from lensopt.refraction.prescription_letters import PrescriptionOptimizer
from lensopt.store import TrialRecord

MODE = get_mode("letters")


def _records(optimizer, n, answers=(True, False, False, True, True, False, True)):
    records = []
    for index in range(1, n + 1):
        trial = optimizer.ask()
        correct = answers[(index - 1) % len(answers)]
        optimizer.tell(trial, correct)
        records.append(
            TrialRecord(
                index,
                trial.sphere_d,
                trial.cylinder_d,
                trial.letter_logmar,
                "K",
                "K" if correct else "D",
                correct,
                0.5,
                1000.0 + index,
                1000.5 + index,
                axis_deg=trial.axis_deg,
            )
        )
    return records


def test_the_history_of_a_prescription_session_keeps_each_lens_axis():
    optimizer = PrescriptionOptimizer(start="-1.00 / -0.50 x 180", seed=3, n_initial=3)
    records = _records(optimizer, 4)
    history = MODE.history(records)
    assert [trial for trial, _ in history] == [trial for trial, _ in optimizer.history]
    assert all(trial.axis_deg is not None for trial, _ in history)


def test_stored_prescription_settings_rebuild_the_prescription_optimizer_to_the_same_next_trial():
    optimizer = PrescriptionOptimizer(start="-1.00 / -0.50 x 180", seed=3, n_initial=3)
    records = _records(optimizer, 5)
    settings = optimizer.settings_dict()
    assert is_prescription(settings) and optimizer_class_for(settings) is PrescriptionOptimizer
    rebuilt = MODE.rebuild_optimizer(settings, records)
    assert isinstance(rebuilt, PrescriptionOptimizer) and rebuilt.n_trials == 5
    assert rebuilt.start == optimizer.start
    assert rebuilt.ask() == optimizer.ask()


def test_two_parameter_settings_and_old_records_rebuild_the_two_parameter_search():
    optimizer = RefractionOptimizer(rule="random", seed=1, lens_step_d=0.25)
    records = _records(optimizer, 4)
    settings = optimizer.settings_dict()
    assert not is_prescription(settings) and optimizer_class_for(settings) is RefractionOptimizer
    assert all(trial.axis_deg is None for trial, _ in MODE.history(records))
    rebuilt = MODE.rebuild_optimizer(settings, records)
    assert type(rebuilt) is RefractionOptimizer and rebuilt.ask() == optimizer.ask()
