"""Ranking protocols: feedback mode, ranking rules, lens keys and the number of lenses (no window)."""

import pytest

from experiment_helpers import REPO, write_protocol
from lensopt.errors import ProtocolError
from lensopt.experiment.modes import mode_for
from lensopt.experiment.protocol import load_protocol, protocol_from_dict

RANKING_PROTOCOL = REPO / "protocols" / "clinical-ranking.toml"


def test_the_clinical_ranking_protocol_ranks_three_lenses_by_mpes_ald_with_keys_1_2_3():
    protocol = load_protocol(RANKING_PROTOCOL)
    assert protocol.feedback_mode == "ranking" and protocol.optimizer.rule == "mpes-ald"
    assert protocol.ranking.lenses == 3 and protocol.ranking.letters_per_line == 5
    assert protocol.keys.lenses == ("1", "2", "3") and protocol.lens_step_d == 0.25 and protocol.lens.prompt
    stored = protocol_from_dict(protocol.to_dict(), source=protocol.source)  # as a session stores it
    assert stored == protocol
    assert mode_for(protocol).kind == "ranking"


def test_four_lenses_use_the_first_four_lens_keys_and_build_a_four_lens_optimizer(tmp_path):
    protocol = load_protocol(
        write_protocol(
            tmp_path / "p.toml",
            RANKING_PROTOCOL,
            **{"ranking.lenses": "4", "keys.lenses": '["1", "2", "3", "4"]', "optimizer.rule": '"random"'},
        )
    )
    optimizer = mode_for(protocol).new_optimizer(protocol, 3, (-0.3, 0.9))
    trial = optimizer.ask()
    assert len(set(trial.lenses_d)) == 4 and optimizer.settings_dict()["lens_step_d"] == 0.25


@pytest.mark.parametrize(
    "field, value, message",
    [
        ("ranking.lenses", "5", r"ranking\.lenses must be an integer in \[3, 4\], got 5"),
        ("ranking.lenses", "2", r"ranking\.lenses must be an integer in \[3, 4\], got 2"),
        ("ranking.lenses", "4", r"keys\.lenses names 3 keys but ranking\.lenses = 4 needs one per lens"),
        ("keys.lenses", '["1", "2", "2"]', r"keys\.lenses names the key '2' twice"),
        ("keys.lenses", '["1", "space", "3"]', r"keys\.lenses and keys\.confirm cannot share the key 'space'"),
        ("keys.lenses", '["1", "2", "Q"]', r"keys\.lenses must be 2 to 4 PsychoPy key names"),
        ("keys.lenses", '"123"', r"keys\.lenses must be 2 to 4 PsychoPy key names"),
        (
            "optimizer.rule",
            '"ucb-ald"',
            r"optimizer\.rule 'ucb-ald' does not rank lenses; protocol\.feedback = 'ranking' "
            r"needs one of 'mpes-ald', 'random'",
        ),
        (
            "timing.response_timeout_s",
            "3.0",
            r"timing\.response_timeout_s must be 0 with protocol\.feedback = 'ranking'",
        ),
    ],
)
def test_a_bad_ranking_field_is_one_line_naming_it(tmp_path, field, value, message):
    path = write_protocol(tmp_path / "p.toml", RANKING_PROTOCOL, **{field: value})
    with pytest.raises(ProtocolError, match=message) as info:
        load_protocol(path)
    assert "\n" not in str(info.value) and str(info.value).startswith(str(path))


def test_lens_keys_are_free_in_a_duel_protocol():
    # the lens keys are only active in rankings: a duel protocol keeps 1 and 2 for its answers
    protocol = load_protocol(REPO / "protocols" / "clinical-duel.toml")
    assert protocol.keys.lenses[:2] == (protocol.keys.first, protocol.keys.second)
