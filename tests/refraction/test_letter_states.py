"""Saved states of the three letter optimizers (the GP's, the acuity law's, the full prescription's):
a state is loaded as ``to_state`` writes it, and a hand-edited one that says something else is
refused in one line naming what is wrong and where, never read as something it does not say."""

from __future__ import annotations

import copy
import json

import pytest

from lensopt.refraction.acuity_law import AcuityLawOptimizer
from lensopt.refraction.letters import RefractionOptimizer
from lensopt.refraction.prescription_letters import PrescriptionOptimizer
from lensopt.refraction.trial import Trial

LETTER_ANSWERS = [
    (Trial(sphere_d=1.0, cylinder_d=-2.0, letter_logmar=0.3), True),
    (Trial(sphere_d=-3.0, cylinder_d=3.0, letter_logmar=1.5), False),
    (Trial(sphere_d=0.5, cylinder_d=-0.5, letter_logmar=0.1), True),
]
PRESCRIPTION_ANSWERS = [
    (Trial(sphere_d=-1.0, cylinder_d=-0.5, letter_logmar=0.3, axis_deg=180.0), True),
    (Trial(sphere_d=1.0, cylinder_d=-1.0, letter_logmar=1.5, axis_deg=90.0), False),
    (Trial(sphere_d=-0.5, cylinder_d=-0.25, letter_logmar=0.1, axis_deg=10.0), True),
]
OPTIMIZERS = {
    "refraction": (RefractionOptimizer, LETTER_ANSWERS),
    "acuity-law": (AcuityLawOptimizer, LETTER_ANSWERS),
    "prescription": (PrescriptionOptimizer, PRESCRIPTION_ANSWERS),
}
_STATES: dict[str, dict] = {}


def saved_state(name: str) -> dict:
    """A JSON copy of the state of optimizer ``name`` told three answers (built once per run)."""
    if name not in _STATES:
        cls, answers = OPTIMIZERS[name]
        optimizer = cls(seed=2, n_initial=2) if cls is not AcuityLawOptimizer else cls(seed=2)
        for trial, correct in answers:
            optimizer.tell(trial, correct)
        _STATES[name] = json.loads(json.dumps(optimizer.to_state()))
    return copy.deepcopy(_STATES[name])


def refused(name: str, state: dict, match: str) -> str:
    with pytest.raises(ValueError, match=match) as error:
        OPTIMIZERS[name][0].from_state(state)
    assert "\n" not in str(error.value)
    return str(error.value)


@pytest.mark.parametrize("name", OPTIMIZERS)
def test_saved_answers_load_as_written_1_or_0_or_true_or_false_and_nothing_else_is_read_as_one(name):
    state = saved_state(name)
    assert [row[-1] for row in state["history"]] == [1, 0, 1]  # what to_state writes
    as_bools = copy.deepcopy(state)
    for row in as_bools["history"]:
        row[-1] = bool(row[-1])
    cls = OPTIMIZERS[name][0]
    assert cls.from_state(as_bools).history == cls.from_state(state).history == tuple(OPTIMIZERS[name][1])
    for answer in ("false", "0", "no", "true", 2, -1, 0.5, 1.0, None, []):
        state["history"][1][-1] = answer
        message = refused(name, state, r"^state history\[1\]: the answer must be true or false")
        assert message.endswith(f"got {answer!r}")


@pytest.mark.parametrize("name", OPTIMIZERS)
def test_an_unknown_setting_in_a_state_is_refused_in_one_line_naming_it_and_the_likely_one(name):
    state = saved_state(name)
    state["settings"]["n_alternative"] = 10
    message = refused(
        name, state, r"^unknown .* setting in the state: 'n_alternative' \(did you mean 'n_alternatives'\?\)"
    )
    assert "remove or rename it" in message
    state = saved_state(name)
    state["settings"]["colour"] = "red"
    state["settings"]["shade"] = "dark"
    message = refused(name, state, r"^unknown .* settings in the state: 'colour', 'shade'; remove or rename them")
    assert "lens_step_d, " in message  # the settings it knows are listed


@pytest.mark.parametrize("name", OPTIMIZERS)
def test_settings_that_are_not_an_object_are_refused_naming_the_problem(name):
    for settings in ("abc", [1, 2], None):
        state = saved_state(name)
        state["settings"] = settings
        refused(name, state, r"^state settings must be a JSON object")


@pytest.mark.parametrize("name", OPTIMIZERS)
def test_a_history_that_is_not_a_list_of_rows_is_refused_naming_the_problem(name):
    for history in ("abc", 5, {"a": 1}, None):
        state = saved_state(name)
        state["history"] = history
        refused(
            name, state, r"^state history must be a list of \[letter_logmar, sphere_d, cylinder_d, .*correct\] rows"
        )
    state = saved_state(name)
    state["history"][2] = state["history"][2][:-2]
    refused(name, state, r"^state history\[2\] must be a row \[letter_logmar, sphere_d, cylinder_d, ")
    state = saved_state(name)
    state["history"][0][1] = "1.0"
    refused(name, state, r"^state history\[0\]: Trial\.sphere_d must be a finite number, got '1\.0'$")


def test_a_prescription_row_without_an_axis_is_refused_naming_the_row():
    state = saved_state("prescription")
    state["history"][1][3] = None
    refused("prescription", state, r"^state history\[1\]: a full-prescription trial needs the lens's axis_deg")
