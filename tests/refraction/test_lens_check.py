"""The stopping rule's check through the reported lens, in each letter optimizer."""

import json

import numpy as np
import pytest

from lensopt.modes.registry import get_mode
from lensopt.observer import autorefraction, draw_clinic_patients
from lensopt.refraction import AcuityLawOptimizer, PrescriptionOptimizer, RefractionOptimizer
from lensopt.refraction.phoropter import round_to_step
from lensopt.refraction.trial import Trial
from lensopt.simulation import make_patient
from lensopt.stopping import StopRule


def _blur_d(a, b):
    """Dioptric distance of two lenses on one meridian, by hand: b² = ½(r_S² + (r_S + r_C)²)."""
    r_s, r_c = a[0] - b[0], a[1] - b[1]
    return float(np.sqrt(0.5 * (r_s**2 + (r_s + r_c) ** 2)))


def _session(opt, patient, n_trials):
    """Run ``opt`` on ``patient``; the trials asked while a check was due, with the lens reported then."""
    respond = get_mode("letters").responder(patient)
    checks = []
    for _ in range(n_trials):
        due, best = opt.check_due(), opt.best()
        trial = opt.ask()
        if due:
            checks.append((trial, best))
        opt.tell(trial, respond(trial))
        if opt.should_stop():
            break
    return checks


@pytest.fixture(scope="module")
def checked_session():
    """A tuning patient (seed 1) whose acuity-law session reaches 0.95 with its lens untried."""
    opt = AcuityLawOptimizer(seed=1, lens_step_d=0.25, stop=StopRule(0.95, 20, 100, check_letters=5))
    checks = _session(opt, make_patient(1), 100)
    return opt, checks


def _checking(opt, lens) -> list:
    """The letters read through ``lens`` (within a phoropter step, by hand) that measure its acuity: at
    most three lines (0.3 logMAR) larger than the acuity predicted through it."""
    predicted_logmar, _ = opt.predicted_acuity_logmar(*lens)
    return [
        t
        for t, _ in opt.history
        if _blur_d((t.sphere_d, t.cylinder_d), lens) <= 0.25 + 1e-9 and t.letter_logmar <= predicted_logmar + 0.3
    ]


def test_an_acuity_law_session_stops_by_confidence_only_after_five_letters_through_its_lens(checked_session):
    opt, checks = checked_session
    assert opt.n_trials < 100 and opt.confidence() >= 0.95
    through = _checking(opt, opt.best())
    assert len(through) >= 5 and opt.letters_through_reported() == len(through)
    assert len(checks) >= 5  # the lens was not read through before the confidence was reached


def test_a_large_letter_read_through_the_reported_lens_is_not_one_of_its_check_letters(checked_session):
    """The largest letter, named through the lens the session reports (predicted to read about
    0 logMAR there), says nothing of the acuity it is prescribed for: the check counts only letters
    up to three lines above the prediction (one first told, before the session's own answers)."""
    opt, _ = checked_session
    lens, largest_logmar = opt.best(), float(opt.letter_grid_logmar[-1])
    assert opt.predicted_acuity_logmar(*lens)[0] + 0.3 < largest_logmar
    told = AcuityLawOptimizer(seed=1, lens_step_d=0.25, stop=StopRule(0.95, 20, 100, check_letters=5))
    told.tell(Trial(*lens, largest_logmar), True)
    for trial, correct in opt.history:
        told.tell(trial, correct)
    assert told.best() == lens
    near = [t for t, _ in told.history if _blur_d((t.sphere_d, t.cylinder_d), lens) <= 0.25 + 1e-9]
    assert told.letters_through_reported() == len(_checking(told, lens)) == len(near) - 1


def test_each_check_is_the_reported_lens_at_its_most_informative_letter(checked_session):
    opt, checks = checked_session
    replay = AcuityLawOptimizer(seed=1, lens_step_d=0.25)
    checked = {id(t) for t, _ in checks}
    for trial, correct in opt.history:
        if id(trial) in checked:
            assert (trial.sphere_d, trial.cylinder_d) == replay.best()
            # the exact mutual information over the whole grid, letter by letter (the rule scores it
            # from 1,000 posterior draws): the chosen letter is within a hundredth of a bit of the best
            exact = [replay.expected_information(*replay.best(), s) for s in replay.letter_grid_logmar]
            assert replay.expected_information(*replay.best(), trial.letter_logmar) >= max(exact) - 0.01
        replay.tell(trial, correct)


def test_a_session_saved_during_its_check_resumes_it(checked_session):
    opt, checks = checked_session
    first_check = next(i for i, (t, _) in enumerate(opt.history) if t is checks[0][0])
    partial = AcuityLawOptimizer.from_state({**opt.to_state(), "history": opt.to_state()["history"][: first_check + 1]})
    again = AcuityLawOptimizer.from_state(json.loads(json.dumps(partial.to_state())))
    assert again.stop.check_letters == 5
    assert again.check_due() == partial.check_due()
    assert again.ask() == partial.ask()


def test_without_a_check_the_optimizer_asks_what_it_asked_before():
    patient = make_patient(1)
    plain = AcuityLawOptimizer(seed=1, lens_step_d=0.25)
    stopped = AcuityLawOptimizer(seed=1, lens_step_d=0.25, stop=StopRule(0.5, 5, 100))
    respond = get_mode("letters").responder(patient)
    for _ in range(30):
        trial = plain.ask()
        assert stopped.ask() == trial and not stopped.check_due()
        answer = respond(trial)
        plain.tell(trial, answer)
        stopped.tell(trial, answer)


def _far_history(opt, patient, centre, repeats=3):
    """Answers at six lenses about 1 D of blur around ``centre`` (none near it), three letter sizes each."""
    respond = get_mode("letters").responder(patient)
    for _ in range(repeats):
        for ds, dc in [(1, 0), (-1, 0), (0, 1.5), (0, -1.5), (1, -2), (-1, 2)]:
            for letter_logmar in (0.0, 0.3, 0.6):
                trial = Trial(centre[0] + ds, centre[1] + dc, letter_logmar)
                opt.tell(trial, respond(trial))


def test_the_gp_optimizer_checks_its_rounded_lens_at_the_letter_of_most_bald():
    patient = make_patient(3, true_correction_d=(-1.0, -0.5))
    opt = RefractionOptimizer(seed=3, lens_step_d=0.25, stop=StopRule(0.01, 5, 100, check_letters=3))
    _far_history(opt, patient, (-1.0, -0.5))
    assert opt.letters_through_reported() == 0 and opt.check_due()
    best = opt.best()
    trial = opt.ask()
    bounds = opt.settings.system_bounds
    assert (trial.sphere_d, trial.cylinder_d) == tuple(round_to_step(v, 0.25, b) for v, b in zip(best, bounds))
    # BALD through that lens at 2,001 letter sizes, by the model directly
    letters = np.linspace(*opt.settings.context_bounds[0], 2001)
    grid = np.column_stack([letters, np.full_like(letters, trial.sphere_d), np.full_like(letters, trial.cylinder_d)])
    bits = opt.model.bald(grid)
    chosen = opt.model.bald(np.array([[trial.letter_logmar, trial.sphere_d, trial.cylinder_d]]))[0]
    assert chosen >= bits.max() - 1e-3
    assert not opt.should_stop()  # confident, but not read through


def test_the_full_prescription_checks_the_lens_it_would_prescribe():
    patient = draw_clinic_patients(1, 11)[0]
    opt = PrescriptionOptimizer(
        "bracket-ald", seed=11, start=autorefraction(patient, 11), stop=StopRule(0.01, 5, 100, check_letters=2)
    )
    respond = get_mode("letters").responder(patient)
    for _ in range(12):
        trial = opt.ask()
        opt.tell(trial, respond(trial))
    while not opt.check_due():  # the bracketing rule tries lenses 0.35 and 0.7 D from its best
        trial = opt.ask()
        opt.tell(trial, respond(trial))
        assert opt.n_trials < 60
    lens = opt.prescription().lens
    trial = opt.ask()
    assert (trial.sphere_d, trial.cylinder_d, trial.axis_deg) == (lens.sphere_d, lens.cylinder_d, lens.axis_deg)


def test_the_gp_optimizer_counts_the_check_at_the_lens_it_sets_on_a_coarse_phoropter():
    """With 1 D steps the unrounded best can lie 0.36 D from the lens set for the check (counted
    there, the check never ended: 25 check trials in a row at one lens): the letters are counted at
    the lens set, the reported lens on the phoropter's steps, so the check ends."""
    patient = make_patient(1)
    stop = StopRule(confidence=0.5, min_trials=15, max_trials=200, check_letters=5)
    box = {"sphere_bounds_d": (-6, 6), "cylinder_bounds_d": (-6, 6), "letter_bounds_logmar": (-1, 2)}
    opt = RefractionOptimizer(seed=1, lens_step_d=1.0, stop=stop, **box)
    respond = get_mode("letters").responder(patient)
    run = 0  # check trials in a row
    while not opt.should_stop():
        run = run + 1 if opt.check_due() else 0
        assert run <= 8, "the check did not end"
        trial = opt.ask()
        opt.tell(trial, respond(trial))
    set_lens = tuple(round_to_step(v, 1.0, (-6, 6)) for v in opt.best())
    by_hand = len(_checking(opt, set_lens))
    assert opt.letters_through_reported() == by_hand
    if opt.n_trials < 200:  # a stop by confidence: the lens read through
        assert by_hand >= 5
