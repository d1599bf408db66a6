"""What a letter optimizer is told must lie within its bounds, checked the same way by all three: a
letter size outside the letter bounds is refused, and so is a lens outside the box of the
two-parameter searches; the full prescription takes the lens actually set wherever it is (a
clinician may type one far outside the box, and the session replays it)."""

from __future__ import annotations

import json

import pytest

from lensopt.refraction.acuity_law import AcuityLawOptimizer
from lensopt.refraction.letters import RefractionOptimizer
from lensopt.refraction.prescription_letters import PrescriptionOptimizer
from lensopt.refraction.trial import Trial

START = "-1.00 / -0.50 x 180"
LETTER_OPTIMIZERS = {
    "refraction": lambda: RefractionOptimizer(seed=0, n_initial=2),
    "acuity-law": lambda: AcuityLawOptimizer(seed=0),
    "prescription": lambda: PrescriptionOptimizer(seed=0, start=START, n_initial=2),
}
TWO_PARAMETER = ("refraction", "acuity-law")


def _refused(optimizer, trial, message):
    with pytest.raises(ValueError) as error:
        optimizer.tell(trial, True)
    assert str(error.value).startswith(message) and "\n" not in str(error.value)
    assert optimizer.n_trials == 0  # nothing was told


@pytest.mark.parametrize("kind", LETTER_OPTIMIZERS)
@pytest.mark.parametrize("letter_logmar", [5.0, -1.5])
def test_a_letter_size_outside_the_letter_bounds_is_refused_naming_the_field_and_the_bounds(kind, letter_logmar):
    optimizer = LETTER_OPTIMIZERS[kind]()
    asked = optimizer.ask()
    trial = Trial(asked.sphere_d, asked.cylinder_d, letter_logmar, asked.axis_deg)
    _refused(
        optimizer, trial, f"letter_logmar {letter_logmar} is outside letter_bounds_logmar (-1.0, 2.0): tell a trial"
    )


@pytest.mark.parametrize("kind", TWO_PARAMETER)
def test_a_lens_outside_the_box_of_a_two_parameter_search_is_refused_naming_the_field_and_the_bounds(kind):
    optimizer = LETTER_OPTIMIZERS[kind]()
    _refused(optimizer, Trial(12.0, 1.0, 0.5), "sphere_d 12.0 is outside sphere_bounds_d (-4.0, 4.0): tell a trial")
    _refused(optimizer, Trial(1.0, -4.5, 0.5), "cylinder_d -4.5 is outside cylinder_bounds_d (-4.0, 4.0): tell a trial")
    optimizer.tell(Trial(-4.0, 4.0, 2.0), True)  # on the edges: told
    optimizer.tell(Trial(4.0, -4.0, -1.0), False)
    assert optimizer.n_trials == 2


@pytest.mark.parametrize("kind", TWO_PARAMETER)
def test_a_trial_with_an_axis_told_to_a_two_parameter_search_is_refused_rather_than_its_axis_dropped(kind):
    optimizer = LETTER_OPTIMIZERS[kind]()
    _refused(optimizer, Trial(-1.0, -0.5, 0.3, 90.0), "this optimizer searches sphere and cylinder only")
    optimizer.tell(Trial(-1.0, -0.5, 0.3), True)  # the same lens without an axis: told
    assert optimizer.history[0][0].axis_deg is None


def test_the_full_prescription_checks_the_letter_size_but_takes_a_typed_lens_far_outside_its_box():
    optimizer = LETTER_OPTIMIZERS["prescription"]()
    _refused(optimizer, Trial(-1.0, -0.5, 2.5, 180.0), "letter_logmar 2.5 is outside letter_bounds_logmar (-1.0, 2.0)")
    optimizer.tell(Trial(12.0, -2.25, 0.9, 118.0), True)  # the lens a clinician typed (L at the console)
    optimizer.tell(Trial(-9.0, -4.0, 0.3, 90.0), False)
    state = json.loads(json.dumps(optimizer.to_state()))
    rebuilt = PrescriptionOptimizer.from_state(state)
    assert rebuilt.history == optimizer.history and rebuilt.ask() == optimizer.ask()
