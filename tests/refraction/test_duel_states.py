"""Saved states of the two duel optimizers (the two-parameter one and the full prescription's): a
hand-edited state that says something else than ``to_state`` writes is refused in one line naming
what is wrong and where, as a letter optimizer's is (``TrialHistory.from_row_state``)."""

from __future__ import annotations

import copy
import json

import pytest

from lensopt.refraction.duels import DuelRefractionOptimizer, DuelTrial
from lensopt.refraction.lens import Lens
from lensopt.refraction.prescription_duels import PrescriptionDuelOptimizer, PrescriptionDuelTrial

START = "-1.00 / -0.50 x 180"
DUELS = [
    (DuelTrial((0.0, -1.0), (0.5, -1.0), 0.3), "first"),
    (DuelTrial((1.0, 0.0), (1.0, -0.5), 0.1), "same"),
    (DuelTrial((-1.0, 0.5), (-0.5, 0.5), 0.5), "second"),
]
PRESCRIPTION_DUELS = [
    (PrescriptionDuelTrial(Lens(-1.0, -0.5, 180.0), Lens(-0.75, -0.5, 180.0), 0.3), "first"),
    (PrescriptionDuelTrial(Lens(-1.25, -0.5, 180.0), Lens(-1.0, -0.75, 170.0), 0.1), "same"),
    (PrescriptionDuelTrial(Lens(-1.0, -0.25, 10.0), Lens(-0.75, -0.5, 180.0), 0.5), "second"),
]
OPTIMIZERS = {
    "duel": (lambda: DuelRefractionOptimizer(seed=2), DUELS, "letter_logmar, first_sphere_d"),
    "prescription-duel": (
        lambda: PrescriptionDuelOptimizer(seed=2, start=START),
        PRESCRIPTION_DUELS,
        "letter_logmar, first_sphere_d, first_cylinder_d, first_axis_deg",
    ),
}
_STATES: dict[str, dict] = {}


def saved_state(kind: str) -> dict:
    """A JSON copy of the state of optimizer ``kind`` told three duels (built once per run)."""
    if kind not in _STATES:
        make, duels, _ = OPTIMIZERS[kind]
        optimizer = make()
        for trial, answer in duels:
            optimizer.tell(trial, answer)
        _STATES[kind] = json.loads(json.dumps(optimizer.to_state()))
    return copy.deepcopy(_STATES[kind])


def refused(kind: str, state: dict, match: str) -> str:
    cls = type(OPTIMIZERS[kind][0]())
    with pytest.raises(ValueError, match=match) as error:
        cls.from_state(state)
    assert "\n" not in str(error.value)
    return str(error.value)


@pytest.mark.parametrize("kind", OPTIMIZERS)
def test_a_duel_history_that_is_not_a_list_of_rows_is_refused_naming_the_columns(kind):
    make, duels, columns = OPTIMIZERS[kind]
    assert type(make()).from_state(saved_state(kind)).history == tuple(duels)  # as written: loaded
    for history in ("abc", 5, {"a": 1}, None):
        state = saved_state(kind)
        state["history"] = history
        refused(kind, state, rf"^state history must be a list of \[{columns}, .*answer\] rows, got ")
    state = saved_state(kind)
    state["history"][2] = state["history"][2][:-2]
    refused(kind, state, rf"^state history\[2\] must be a row \[{columns}")
    state = saved_state(kind)
    state["history"][1] = "abc"
    refused(kind, state, r"^state history\[1\] must be a row \[")


@pytest.mark.parametrize("kind", OPTIMIZERS)
def test_a_duel_row_with_a_bad_value_or_answer_is_refused_naming_the_row(kind):
    state = saved_state(kind)
    state["history"][0][1] = "1.0"
    refused(kind, state, r"^state history\[0\]: .*sphere_d.*, got .*'1\.0'")
    state = saved_state(kind)
    state["history"][0][0] = None
    refused(kind, state, r"^state history\[0\]: .*letter_logmar must be a finite number")
    for answer in ("better", 2, None):
        state = saved_state(kind)
        state["history"][1][-1] = answer
        message = refused(kind, state, r"^state history\[1\]: a duel answer must be one of first, second, same")
        assert message.endswith(repr(answer))


@pytest.mark.parametrize("kind", OPTIMIZERS)
def test_an_unknown_setting_in_a_duel_state_is_refused_naming_it_and_the_likely_one(kind):
    state = saved_state(kind)
    state["settings"]["n_initals"] = 3
    refused(kind, state, r"^unknown .*duel.* setting in the state: 'n_initals' \(did you mean 'n_initial'\?\)")
    state = saved_state(kind)
    state["settings"] = "abc"
    refused(kind, state, r"^state settings must be a JSON object")
