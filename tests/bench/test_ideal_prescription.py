"""The 3-D ideal observer of the full prescription: posterior, expected information, sessions."""

import math

import numpy as np
import pytest

from lensopt.bench.ideal_prescription import PrescriptionIdealObserver
from lensopt.refraction.lens import Lens, PowerVector
from lensopt.refraction.prescription import SearchBox
from lensopt.refraction.trial import Trial
from lensopt.stopping import StopRule

TINY_BOX = SearchBox(Lens(-1.0, -0.5, 30.0), m_half_width_d=0.5, j_half_width_d=0.5)

HAND_MADE_ANSWERS = [
    (Trial(sphere_d=-0.5, cylinder_d=-0.5, letter_logmar=0.1, axis_deg=30.0), True),
    (Trial(sphere_d=-2.0, cylinder_d=0.0, letter_logmar=0.3, axis_deg=180.0), False),
    (Trial(sphere_d=0.5, cylinder_d=-1.25, letter_logmar=0.2, axis_deg=95.0), True),
    (Trial(sphere_d=-1.0, cylinder_d=0.0, letter_logmar=-0.2), False),  # no axis: a sphere
    (Trial(sphere_d=-3.25, cylinder_d=-0.75, letter_logmar=0.15, axis_deg=12.0), True),
    (Trial(sphere_d=0.0, cylinder_d=0.5, letter_logmar=1.9, axis_deg=60.0), True),  # plus cylinder
]


def _power_vector(sphere, cylinder, axis):
    """Thibos power vector by hand (math.cos/sin in radians)."""
    angle = math.radians(2.0 * (180.0 if axis is None else axis))
    return sphere + cylinder / 2.0, -cylinder / 2.0 * math.cos(angle), -cylinder / 2.0 * math.sin(angle)


def _p_correct(trial, h, slope, guess, lapse, va_best, accommodation):
    """The patient model written out in plain Python (math.erf)."""
    x = _power_vector(trial.sphere_d, trial.cylinder_d, trial.axis_deg)
    r_m, r_j0, r_j45 = (x[k] - h[k] for k in range(3))
    if r_m < 0:  # too minus: the eye adds up to `accommodation` D of plus
        r_m = min(0.0, r_m + accommodation)
    acuity = va_best + math.log10(1.0 + r_m * r_m + r_j0 * r_j0 + r_j45 * r_j45)
    phi = 0.5 * (1.0 + math.erf(slope * (trial.letter_logmar - acuity) / math.sqrt(2.0)))
    return guess + (1.0 - guess - lapse) * phi


@pytest.mark.parametrize("lapse, n_alternatives, accommodation", [(0.0, 26, 0.0), (0.05, 10, 1.5)])
def test_grid_posterior_equals_a_brute_force_product_of_likelihoods(lapse, n_alternatives, accommodation):
    kwargs = dict(slope=4.0, n_alternatives=n_alternatives, lapse=lapse, va_best_logmar=-0.1)
    observer = PrescriptionIdealObserver(**kwargs, accommodation_d=accommodation, box=TINY_BOX, grid_step_d=0.5)
    hypotheses = observer.hypotheses_d
    assert hypotheses.shape == (27, 3)
    np.testing.assert_allclose(observer.posterior(), np.full(27, 1 / 27))  # uniform prior
    for trial, correct in HAND_MADE_ANSWERS:
        observer.tell(trial, correct)
    unnormalized = []
    for h in hypotheses.tolist():
        product = 1.0
        for trial, correct in HAND_MADE_ANSWERS:
            p = _p_correct(trial, h, 4.0, 1 / n_alternatives, lapse, -0.1, accommodation)
            product *= p if correct else 1.0 - p
        unnormalized.append(product)
    expected = np.array(unnormalized) / sum(unnormalized)
    np.testing.assert_allclose(observer.posterior(), expected, rtol=1e-9, atol=1e-15)
    assert observer.n_trials == len(HAND_MADE_ANSWERS) and observer.history == tuple(HAND_MADE_ANSWERS)
    # best() is the posterior mean; confidence() the mass within 0.25 D of it
    mean = expected @ hypotheses
    assert observer.best().to_array() == pytest.approx(mean, abs=1e-9)
    near = np.sqrt(((hypotheses - mean) ** 2).sum(axis=1)) <= 0.25
    assert observer.confidence() == pytest.approx(expected[near].sum(), abs=1e-9)


def test_accommodation_makes_a_too_minus_lens_look_sharp():
    """Through a lens at most A D more minus than h (in M), a sharp answer is as likely as with h."""
    box = SearchBox(Lens(-2.0), m_half_width_d=2.0, j_half_width_d=0.2)
    observer = PrescriptionIdealObserver(slope=8.0, accommodation_d=2.0, box=box, grid_step_d=0.2)
    lens = np.array([-3.0, 0.0, 0.0])
    p = observer.p_correct(0.3, lens)
    h = observer.hypotheses_d
    on_axis = (np.abs(h[:, 1]) < 1e-9) & (np.abs(h[:, 2]) < 1e-9)
    plateau = on_axis & (h[:, 0] >= -3.0 - 1e-9) & (h[:, 0] <= -1.0 + 1e-9)
    assert np.ptp(p[plateau]) < 1e-12 and p[plateau][0] > 0.9
    assert p[on_axis & (h[:, 0] < -3.9)].max() < p[plateau][0] - 0.3  # lens 1 D too plus: blurred
    assert p[on_axis & (h[:, 0] > -0.1)].max() < p[plateau][0] - 0.3  # 1 D more than A too minus


def _observer_with_answers(seed=3):
    box = SearchBox(Lens(-1.5, -1.0, 20.0))
    observer = PrescriptionIdealObserver(
        slope=6.0, lapse=0.02, accommodation_d=1.0, box=box, grid_step_d=0.2, seed=seed
    )
    for trial, correct in HAND_MADE_ANSWERS:
        observer.tell(trial, correct)
    return observer


def test_expected_information_matches_monte_carlo():
    observer = _observer_with_answers()
    trial = observer.ask()
    lens = observer.trial_power_vector(trial)
    exact = observer.expected_information(lens, trial.letter_logmar)
    # Monte Carlo: h from the posterior, the answer from the patient model, then
    # I = E[log2 P(c | h) − log2 P(c)] with P(c) the posterior predictive.
    rng = np.random.default_rng(12345)
    w = observer.posterior()
    hypotheses = observer.hypotheses_d
    p_all = np.array([_p_correct(trial, h, 6.0, 1 / 26, 0.02, 0.0, 1.0) for h in hypotheses.tolist()])
    predictive = w @ p_all
    draws = rng.choice(len(w), size=50_000, p=w)
    p = p_all[draws]
    correct = rng.random(len(draws)) < p
    terms = np.where(correct, np.log2(p / predictive), np.log2((1 - p) / (1 - predictive)))
    estimate, error = terms.mean(), terms.std() / math.sqrt(len(terms))
    assert exact > 0.1
    assert abs(estimate - exact) < 4 * error + 1e-3
    # the binned, pruned scoring table agrees with the exact figure, and the asked trial is its maximum
    lenses, vectors = observer.candidate_lenses()
    table = observer.information_table(vectors)
    i = next(k for k, x in enumerate(lenses) if np.allclose(vectors[k], lens))
    j = int(np.argmin(np.abs(observer.letter_grid_logmar - trial.letter_logmar)))
    assert table[i, j] == pytest.approx(exact, abs=0.01)
    assert table[i, j] == pytest.approx(table.max(), abs=1e-12)


def test_asked_lens_is_a_rounded_minus_cylinder_lens_and_the_prescription_its_estimate():
    observer = _observer_with_answers()
    for _ in range(3):
        trial = observer.ask()
        assert trial.cylinder_d <= 0.0 and trial.axis_deg is not None
        for value in (trial.sphere_d, trial.cylinder_d):
            assert value / 0.25 == pytest.approx(round(value / 0.25), abs=1e-9)
        assert trial.axis_deg == round(trial.axis_deg) and 1 <= trial.axis_deg <= 180
        assert -1.0 <= trial.letter_logmar <= 2.0
        assert observer.last_decision_ms > 0
        observer.tell(trial, True)
    result = observer.prescription()
    assert result.lens == Lens.from_power_vector(observer.best()).rounded(0.25, 1.0)
    assert result.power_vector_d == observer.best() and result.trials == 9
    assert result.confidence == observer.confidence()
    w, h = observer.posterior(), observer.hypotheses_d
    x = result.lens.power_vector().to_array()
    expected_va = w @ np.array([_p_va(x, hh, 1.0) for hh in h.tolist()])
    assert result.predicted_acuity_logmar == pytest.approx(expected_va, abs=1e-9)
    for k, name in enumerate(("m_d", "j0_d", "j45_d")):
        lo, hi = result.intervals[name]
        mean, sd = w @ h[:, k], math.sqrt(w @ (h[:, k] - w @ h[:, k]) ** 2)
        assert lo < mean < hi and (hi - lo) == pytest.approx(2 * 1.96 * sd, rel=0.35)
    assert set(result.intervals) == {"m_d", "j0_d", "j45_d", "sphere_d", "cylinder_d", "axis_deg"}


def _p_va(x, h, accommodation):
    r_m = x[0] - h[0]
    if r_m < 0:
        r_m = min(0.0, r_m + accommodation)
    return math.log10(1.0 + r_m**2 + (x[1] - h[1]) ** 2 + (x[2] - h[2]) ** 2)


def _session(seed, accommodation, n_trials=60, slope=10.0):
    """A simulated session: the true correction at random, a start 0.5 D away, the patient's
    answers drawn from the model above with a seeded rng."""
    rng = np.random.default_rng([seed, 99])
    truth = np.array([rng.uniform(-3.0, 1.0), rng.uniform(-0.8, 0.8), rng.uniform(-0.8, 0.8)])
    offset = rng.normal(size=3)
    start = Lens.from_power_vector(PowerVector(*(truth + 0.5 * offset / np.linalg.norm(offset))))
    observer = PrescriptionIdealObserver(slope=slope, accommodation_d=accommodation, box=SearchBox(start), seed=seed)
    for _ in range(n_trials):
        trial = observer.ask()
        p = _p_correct(trial, truth.tolist(), slope, 1 / 26, 0.0, 0.0, accommodation)
        observer.tell(trial, bool(rng.random() < p))
    return observer, truth


@pytest.mark.parametrize("accommodation", [0.0, 3.0])
@pytest.mark.parametrize("seed", [1, 2, 3])
def test_simulated_session_ends_within_a_quarter_diopter(seed, accommodation):
    observer, truth = _session(seed, accommodation)
    estimate = observer.best().to_array()
    assert np.linalg.norm(estimate - truth) <= 0.25
    assert estimate[0] >= truth[0] - 0.25  # not too minus, even with accommodation
    assert observer.confidence() > 0.5
    assert observer.prescription().lens.blur_d(Lens.from_power_vector(PowerVector(*truth))) <= 0.4


def test_same_seed_same_session_and_stop_rule():
    first, _ = _session(5, 1.0, n_trials=12)
    second, _ = _session(5, 1.0, n_trials=12)
    assert first.history == second.history
    assert first.prescription() == second.prescription()
    assert first.settings.rule == "ideal" and first.settings.seed == 5
    assert first.should_stop() is False  # no stop rule
    stopping = PrescriptionIdealObserver(slope=10.0, stop={"confidence": 0.5, "min_trials": 5, "max_trials": 100})
    assert stopping.stop == StopRule(0.5, 5, 100)
    assert stopping.should_stop() is False  # before min_trials
    for trial, correct in first.history:
        stopping.tell(trial, correct)
    assert stopping.should_stop() == (stopping.confidence() >= 0.5)
    capped = PrescriptionIdealObserver(slope=10.0, stop=StopRule(0.99, 1, 3))
    for trial, correct in first.history[:3]:
        capped.tell(trial, correct)
    assert capped.should_stop() is True


@pytest.mark.parametrize(
    "kwargs",
    [
        {"slope": 0.0},
        {"slope": float("nan")},
        {"slope": True},
        {"slope": 5.0, "n_alternatives": 1},
        {"slope": 5.0, "n_alternatives": 2.5},
        {"slope": 5.0, "lapse": -0.1},
        {"slope": 5.0, "lapse": 0.97},
        {"slope": 5.0, "va_best_logmar": float("inf")},
        {"slope": 5.0, "accommodation_d": -1.0},
        {"slope": 5.0, "accommodation_d": "3"},
        {"slope": 5.0, "box": (-1, 1)},
        {"slope": 5.0, "seed": -1},
        {"slope": 5.0, "seed": 1.5},
        {"slope": 5.0, "lens_step_d": 0.0},
        {"slope": 5.0, "axis_step_deg": 7.0},
        {"slope": 5.0, "letter_bounds_logmar": (1.0, -1.0)},
        {"slope": 5.0, "letter_bounds_logmar": 1.0},
        {"slope": 5.0, "grid_step_d": -0.1},
        {"slope": 5.0, "grid_step_d": 0.01},  # too many hypotheses
        {"slope": 5.0, "stop": {"confidence": 2.0}},
        {"slope": 5.0, "stop": "yes"},
    ],
)
def test_bad_settings_are_refused(kwargs):
    with pytest.raises(ValueError) as error:
        PrescriptionIdealObserver(**kwargs)
    assert "\n" not in str(error.value)


def test_bad_answers_are_refused():
    observer = PrescriptionIdealObserver(slope=5.0, box=TINY_BOX, grid_step_d=0.5)
    trial = Trial(sphere_d=-1.0, cylinder_d=-0.5, letter_logmar=0.2, axis_deg=30.0)
    with pytest.raises(ValueError, match="correct must be True or False"):
        observer.tell(trial, "yes")
    with pytest.raises(ValueError, match=r"trial must be a lensopt\.refraction\.trial\.Trial, got "):
        observer.tell((-1.0, -0.5, 0.2), True)  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="with a cylinder needs its axis_deg"):  # a cylinder without its axis
        observer.tell(Trial(sphere_d=-1.0, cylinder_d=-0.5, letter_logmar=0.2), True)
    with pytest.raises(TypeError, match="required keyword-only argument: 'slope'"):  # slope is required, keyword-only
        PrescriptionIdealObserver()  # type: ignore[call-arg]
    assert observer.n_trials == 0
