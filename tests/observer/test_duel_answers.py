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


# ---- ties and rankings (Gumbel noise) ------------------------------------------------------
LENSES = [(0.5, -0.25), (1.0, -1.0), (-0.5, 0.5)]


def _gumbel_monte_carlo(utilities, delta, n=400_000, seed=0):
    noisy = utilities + np.random.default_rng(seed).gumbel(size=(n, utilities.size))
    order = np.sort(noisy, axis=1)
    best = np.argmax(noisy, axis=1)
    clear = order[:, -1] - order[:, -2] >= delta
    return np.array([np.mean(clear & (best == i)) for i in range(utilities.size)] + [np.mean(~clear)])


@pytest.mark.parametrize("delta", [0.0, 0.4, 1.5])
def test_choice_and_tie_probabilities_match_monte_carlo_of_the_gumbel_model(delta):
    patient = SimulatedPatient(0.75, -0.5, seed=1)
    p = patient.p_choice_outcomes(0.1, LENSES, tie_threshold=delta)
    u = patient.ranking_utility(0.1, LENSES)
    np.testing.assert_allclose(p, _gumbel_monte_carlo(u, delta), atol=4e-3)
    assert p.sum() == pytest.approx(1.0)


def test_without_ties_a_pair_is_answered_like_the_probit_duel():
    patient = SimulatedPatient(0.75, -0.5, seed=1)
    for s in (-0.2, 0.1, 0.5):
        p_logit = patient.p_choice_outcomes(s, LENSES[:2])[0]
        assert p_logit == pytest.approx(patient.p_prefer_first(s, LENSES[0], LENSES[1]), abs=0.011)


def test_duel_answers_with_ties_follow_their_probabilities():
    patient = SimulatedPatient(0.75, -0.5, seed=3)
    p = patient.p_choice_outcomes(0.1, LENSES[:2], tie_threshold=0.8)
    answers = [patient.duel_answer(0.1, LENSES[0], LENSES[1], tie_threshold=0.8) for _ in range(20_000)]
    observed = [np.mean([a == name for a in answers]) for name in ("first", "second", "same")]
    np.testing.assert_allclose(observed, p, atol=0.015)


def test_rankings_follow_the_plackett_luce_probabilities():
    patient = SimulatedPatient(0.75, -0.5, seed=4)
    u = patient.ranking_utility(0.1, LENSES)
    w = np.exp(u)
    expected = w[0] / w.sum() * w[2] / (w[1] + w[2])  # P(order 0, 2, 1)
    rankings = [patient.rank_lenses(0.1, LENSES) for _ in range(20_000)]
    assert np.mean([r == (0, 2, 1) for r in rankings]) == pytest.approx(expected, abs=0.012)
    assert all(len(patient.rank_lenses(0.1, LENSES, k=1)) == 1 for _ in range(3))


def test_seeded_tie_answers_repeat():
    a = SimulatedPatient(0.75, -0.5, seed=9)
    b = SimulatedPatient(0.75, -0.5, seed=9)
    first = [a.duel_answer(0.1, *LENSES[:2], 0.5) for _ in range(30)]
    assert first == [b.duel_answer(0.1, *LENSES[:2], 0.5) for _ in range(30)]
    assert len(set(first)) == 3  # all three answers occur: the draws are not constant


@pytest.mark.parametrize("bad", [-0.1, float("nan"), "0.2", True])
def test_a_bad_tie_threshold_is_refused(bad):
    with pytest.raises(ValueError, match="tie_threshold"):
        SimulatedPatient(0.0, 0.0).duel_answer(0.1, LENSES[0], LENSES[1], tie_threshold=bad)


def test_a_bad_ranking_length_is_refused():
    with pytest.raises(ValueError, match="k must be"):
        SimulatedPatient(0.0, 0.0).rank_lenses(0.1, LENSES, k=4)


def test_the_letters_to_choose_from_change_a_duels_and_a_rankings_answers():
    """``simulate --feedback duel|ranking --n-alternatives N`` is not ignored: the clarity of a line of
    letters (``Φ⁻¹(P(correct))``) rises from the guess rate 1/N, so N changes the patient's choices."""
    lenses = [(0.0, 0.0), (1.0, -0.5), (0.5, 0.0)]
    chance = {
        n: SimulatedPatient(1.0, -0.5, slope=5.0, n_alternatives=n).p_choice_outcomes(0.3, lenses[:2]) for n in (2, 26)
    }
    assert abs(chance[2][1] - chance[26][1]) > 0.02
    utilities = {n: SimulatedPatient(1.0, -0.5, n_alternatives=n).ranking_utility(0.3, lenses) for n in (2, 26)}
    assert not np.allclose(utilities[2], utilities[26])
