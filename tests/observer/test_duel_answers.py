"""The simulated patient's duels: "which lens is clearer?" follows the acuity model."""

import numpy as np
import pytest
from scipy.special import ndtr, ndtri

from lensopt.observer import SimulatedPatient


def _patient(**kwargs):
    return SimulatedPatient(-1.0, 0.5, slope=5.0, seed=4, **kwargs)


@pytest.mark.parametrize("lapse", [0.0, 0.02])
def test_duel_utility_is_the_probit_of_p_correct(lapse):
    patient = _patient(lapse=lapse)
    sizes = np.linspace(-0.5, 0.8, 14)
    p = patient.p_correct(sizes, 0.25, -0.5)
    assert np.allclose(patient.duel_utility(sizes, 0.25, -0.5), ndtri(p), atol=1e-9)


def test_duel_utility_keeps_resolution_for_large_letters():
    patient = _patient()
    va = patient.visual_acuity(1.0, 0.5)  # 2 D of defocus
    s = va + 6.0  # P(correct) rounds to 1 in double precision here
    assert patient.p_correct(s, 1.0, 0.5) == 1.0
    # 1 − P = (1 − γ) Φ(−a (s − VA)) ⇒ f = −Φ⁻¹((1 − γ) Φ(−30)), by hand with scipy
    expected = -ndtri((1 - 1 / 26) * ndtr(-30.0))
    assert patient.duel_utility(s, 1.0, 0.5) == pytest.approx(expected, rel=1e-9)


def test_duel_probability_is_antisymmetric_and_a_half_for_the_same_lens():
    patient = _patient()
    a, b = (-1.0, 0.5), (0.0, -0.25)
    for s in (-0.2, 0.3, 1.0):
        assert patient.p_prefer_first(s, a, a) == pytest.approx(0.5)
        assert patient.p_prefer_first(s, a, b) + patient.p_prefer_first(s, b, a) == pytest.approx(1.0)
        assert patient.p_prefer_first(s, a, b) > 0.5  # the true correction is clearer


def test_duels_are_uninformative_at_unreadable_sizes_and_informative_at_readable_ones():
    patient = _patient()
    a, b = (-1.0, 0.5), (0.0, 0.5)
    assert patient.p_prefer_first(-1.0, a, b) == pytest.approx(0.5, abs=0.01)  # both at chance
    big = patient.p_prefer_first(1.5, a, b)
    # far above both thresholds f ≈ a (s − VA): the preference is Φ(a ΔVA)
    delta_va = patient.visual_acuity(*b) - patient.visual_acuity(*a)
    assert big == pytest.approx(ndtr(5.0 * delta_va), abs=0.01)


def test_duel_answers_match_the_probability_within_four_standard_errors():
    patient = _patient()
    a, b = (-0.5, 0.5), (-1.0, 0.0)
    n = 4000
    p = patient.p_prefer_first(0.3, a, b)
    answers = patient.prefer_first(np.full(n, 0.3), a, b)
    assert answers.shape == (n,)
    assert abs(answers.mean() - p) < 4 * np.sqrt(p * (1 - p) / n)


def test_same_seed_gives_the_same_duel_answers():
    first, second = _patient(), _patient()
    xs = [first.prefer_first(0.2, (-1.0, 0.0), (-0.5, 0.5)) for _ in range(50)]
    ys = [second.prefer_first(0.2, (-1.0, 0.0), (-0.5, 0.5)) for _ in range(50)]
    assert xs == ys and all(isinstance(x, bool) for x in xs)
