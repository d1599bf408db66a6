"""Outcome validation and observation records."""

import numpy as np
import pytest

from lensopt.ranking.data import RankingObservation, parse_outcome


@pytest.mark.parametrize(
    "outcome, m, ties, expected",
    [
        (1, 2, True, (1,)),
        (np.int64(0), 3, False, (0,)),
        ((2, 0), 3, False, (2, 0)),
        ([1, 0, 2], 3, False, (1, 0, 2)),
        ("same", 2, True, "same"),
        ((1,), 2, True, (1,)),
    ],
)
def test_well_formed_outcomes_are_normalized(outcome, m, ties, expected):
    assert parse_outcome(outcome, m, ties) == expected


@pytest.mark.parametrize(
    "outcome, m, ties, message",
    [
        ("tie", 2, True, "unknown outcome"),
        ("same", 2, False, "ties allowed"),
        (2, 2, True, r"0\.\.1"),
        (-1, 3, False, r"0\.\.2"),
        ((0, 0), 3, False, "repeat"),
        ((), 3, False, "at least one"),
        (1.0, 2, True, "outcome must be"),
        (True, 2, True, "outcome must be"),
        ((0, 1), 3, True, "Remark 1"),
        ((0, "a"), 3, False, "integer member indices"),
        (None, 2, True, "outcome must be"),
    ],
)
def test_malformed_outcomes_raise_a_clear_value_error(outcome, m, ties, message):
    with pytest.raises(ValueError, match=message):
        parse_outcome(outcome, m, ties)


def test_observation_orders_ranked_members_first_and_round_trips_as_a_record():
    obs = RankingObservation([[0.1], [0.5], [0.9]], (2, 0), ties_allowed=False)
    assert obs.kind == "rank" and obs.canonical_order() == (2, 0, 1)
    again = RankingObservation.from_record(obs.to_record())
    assert again.outcome == (2, 0) and np.array_equal(again.inputs, obs.inputs)
    assert RankingObservation([[0.1], [0.5]], "same", True).kind == "tie"
    assert RankingObservation([[0.1], [0.5]], 1, True).kind == "choice"


def test_observation_rejects_repeated_inputs():
    with pytest.raises(ValueError, match="distinct"):
        RankingObservation([[0.1, 0.2], [0.1, 0.2]], 0)
