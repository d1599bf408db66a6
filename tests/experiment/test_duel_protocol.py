"""Duel protocols: feedback mode, duel rules, answer keys and the line of letters (no window)."""

import pytest

from experiment_helpers import DEMO_PROTOCOL, REPO, write_protocol
from lensopt.errors import ProtocolError
from lensopt.experiment.calibration import Calibration
from lensopt.experiment.optotypes import line_width_letters
from lensopt.experiment.protocol import load_protocol

DUEL_PROTOCOL = REPO / "protocols" / "clinical-duel.toml"


def test_the_clinical_duel_protocol_asks_mpes_ald_duels_on_the_tie_model_with_keys_1_2_and_s():
    protocol = load_protocol(DUEL_PROTOCOL)
    assert protocol.feedback_mode == "duel" and protocol.optimizer.rule == "mpes-ald"
    assert protocol.duel.model == "ties"
    assert (protocol.keys.first, protocol.keys.second, protocol.keys.same) == ("1", "2", "s")
    assert protocol.lens_step_d == 0.25 and protocol.lens.prompt and protocol.duel.letters_per_line == 5
    assert protocol.simulated.tie_threshold > 0
    assert "tie_threshold" not in protocol.simulated.patient_settings()


def test_letter_protocols_default_to_letter_feedback():
    assert load_protocol(DEMO_PROTOCOL).feedback_mode == "letters"


@pytest.mark.parametrize(
    "source, field, value, message",
    [
        (
            DUEL_PROTOCOL,
            "protocol.feedback",
            '"rank"',
            r"protocol\.feedback must be one of 'letters', 'duel', 'ranking', got 'rank'",
        ),
        (
            DUEL_PROTOCOL,
            "optimizer.rule",
            '"ucb-ald"',
            r"optimizer\.rule 'ucb-ald' does not work with duel\.model = 'ties'; protocol\.feedback = 'duel' with that model needs one of 'mpes-ald'",
        ),
        (DUEL_PROTOCOL, "duel.model", '"logit"', r"model must be one of 'ties', 'probit', got 'logit'"),
        (
            DEMO_PROTOCOL,
            "optimizer.rule",
            '"muc-ald"',
            r"optimizer\.rule 'muc-ald' is a duel rule; protocol\.feedback = 'letters' needs one of 'ucb-ald'",
        ),
        (DUEL_PROTOCOL, "keys.second", '"1"', r"keys\.first and keys\.second cannot share the key '1'"),
        (DUEL_PROTOCOL, "keys.same", '"escape"', r"keys\.same and keys\.pause cannot share the key 'escape'"),
        (DUEL_PROTOCOL, "keys.same", '"S"', r"keys\.same must be a PsychoPy key name"),
        (
            DUEL_PROTOCOL,
            "timing.response_timeout_s",
            "3.0",
            r"timing\.response_timeout_s must be 0 with protocol\.feedback = 'duel'",
        ),
        (DUEL_PROTOCOL, "duel.letters_per_line", "0", r"duel\.letters_per_line must be an integer in \[1, 10\]"),
        (DUEL_PROTOCOL, "simulated.tie_threshold", "-1", r"simulated\.tie_threshold must be a number in \[0, 20\]"),
    ],
)
def test_a_bad_duel_field_is_one_line_naming_it_and_the_choices(tmp_path, source, field, value, message):
    path = write_protocol(tmp_path / "p.toml", source, **{field: value})
    with pytest.raises(ProtocolError, match=message) as info:
        load_protocol(path)
    assert "\n" not in str(info.value) and str(info.value).startswith(str(path))


def test_duel_keys_may_reuse_letter_keys_in_a_letter_protocol(tmp_path):
    # the answer keys are only active in duels: a letter protocol's quit key may be "s"
    protocol = load_protocol(write_protocol(tmp_path / "p.toml", **{"keys.quit": '"s"'}))
    assert protocol.keys.quit == protocol.keys.same == "s"


def test_a_line_of_five_letters_must_fit_the_window_width():
    cal = Calibration(screen_width_cm=53.0, screen_width_px=1920, screen_height_px=1080, distance_cm=400.0)
    assert line_width_letters(5) == 9.0 and line_width_letters(1) == 1.0
    _, single = cal.renderable_logmar(1080)
    low, line = cal.renderable_logmar(1080, window_width_px=1920, line_width_letters=9.0)
    # hand computed: 0.8 * 1920 / 9 = 170.7 px tall letters at most
    assert cal.letter_height_px(line) == pytest.approx(0.8 * 1920 / 9)
    assert line < single and low == cal.renderable_logmar(1080)[0]
