"""Where the dashboard says a session's stopping rule stands (lensopt.dashboard.verdict)."""

import pytest

from lensopt.dashboard.verdict import LensConfidence


def _confidence(confidence, check_letters=0, letters_through=0):
    return LensConfidence(confidence, (-1.5, -1.0), (-1.0, -0.5), 0.025, 0.95, 20, 80, check_letters, letters_through)


@pytest.mark.parametrize(
    ("confidence", "letters_through", "n_trials", "state"),
    [
        (0.90, 0, 40, "not yet"),
        (0.96, 0, 10, "not yet"),  # before min_trials
        (0.96, 2, 40, "checking the lens, 2 of 5 letters read"),
        (0.96, 5, 40, "reached"),
        (0.96, 1, 80, "reached"),  # the budget ends the check with the rest
        (0.90, 1, 80, "max trials reached"),
    ],
)
def test_a_confident_session_that_must_check_its_lens_says_how_far_the_check_is(
    confidence, letters_through, n_trials, state
):
    assert _confidence(confidence, 5, letters_through).stop_state(n_trials) == state


def test_without_a_check_a_confident_session_has_reached_its_stop():
    assert _confidence(0.96).stop_state(40) == "reached"
    assert _confidence(0.90).stop_state(40) == "not yet"


def test_a_session_resumed_past_its_stored_budget_is_not_said_to_have_reached_it():
    """``lensopt run --resume N --trials 100`` of a session stored with max_trials 80: at trial 85
    its budget (not stored) is open, and a check goes on."""
    assert _confidence(0.90).stop_state(85) == "not yet"
    assert _confidence(0.96, 5, 2).stop_state(85) == "checking the lens, 2 of 5 letters read"
    assert _confidence(0.90).stop_state(80) == "max trials reached"
    assert _confidence(0.90).budget_raised(81) and not _confidence(0.90).budget_raised(80)
