"""Protocol files: the shipped ones load; every bad field is a one-line ProtocolError."""

import pytest

from experiment_helpers import DEMO_PROTOCOL, REPO, write_protocol
from lensopt.errors import ProtocolError
from lensopt.experiment.optotypes import ALPHABET, SLOAN_LETTERS
from lensopt.experiment.protocol import load_protocol, protocol_from_dict

PROTOCOLS = REPO / "protocols"


@pytest.mark.parametrize("name", ["clinical-refraction", "research-26afc", "sloan-10afc", "demo-simulated",
                                  "clinical-duel"])
def test_shipped_protocols_load_and_round_trip_through_their_snapshot(name):
    protocol = load_protocol(PROTOCOLS / f"{name}.toml")
    assert protocol.protocol.name == name
    again = protocol_from_dict(protocol.to_dict(), source="snapshot")
    assert again.to_dict() == protocol.to_dict()


def test_sloan_protocol_uses_the_ten_sloan_letters_with_guess_rate_one_tenth():
    protocol = load_protocol(PROTOCOLS / "sloan-10afc.toml")
    assert sorted(protocol.letters.alphabet) == sorted(SLOAN_LETTERS)
    assert protocol.guess_rate == pytest.approx(0.1)


def test_clinical_protocol_rounds_lenses_to_quarter_diopters_and_prompts_the_clinician():
    protocol = load_protocol(PROTOCOLS / "clinical-refraction.toml")
    assert protocol.lens_step_d == 0.25 and protocol.lens.prompt
    assert protocol.letters.alphabet == ALPHABET and protocol.protocol.observer == "keyboard"


def test_demo_protocol_is_a_short_simulated_session():
    protocol = load_protocol(DEMO_PROTOCOL)
    assert protocol.protocol.observer == "simulated"
    assert 30 <= protocol.optimizer.trials <= 40
    assert protocol.lens_step_d is None


def test_a_missing_field_names_the_file_and_the_field(tmp_path):
    path = write_protocol(tmp_path / "p.toml", **{"optimizer.trials": None})
    with pytest.raises(ProtocolError, match=r"p\.toml: missing field optimizer\.trials") as info:
        load_protocol(path)
    assert "\n" not in str(info.value)


def test_a_missing_table_is_named(tmp_path):
    path = tmp_path / "p.toml"
    path.write_text(DEMO_PROTOCOL.read_text().replace("[keys]", "[keys_]"))
    with pytest.raises(ProtocolError, match=r"unknown table \[keys_\]"):
        load_protocol(path)


@pytest.mark.parametrize("field, value, allowed", [
    ("optimizer.trials", "0", r"optimizer\.trials must be an integer in \[1, 5000\], got 0"),
    ("optimizer.rule", '"ucb"', r"optimizer\.rule must be one of 'ucb-ald'"),
    ("optimizer.letter_bounds_logmar", "[1.0, -0.3]", r"letter_bounds_logmar must be two numbers \[low, high\]"),
    ("calibration.distance_cm", "-1", r"calibration\.distance_cm must be a number in \[5, 100000\]"),
    ("timing.feedback_s", '"fast"', r"timing\.feedback_s must be a number"),
    ("keys.pass_key", '"k"', r"keys\.pass_key is active while a letter is shown"),
    ("letters.alphabet", '"AAB"', r"letters\.alphabet must be 2 to 26 distinct capital letters"),
    ("feedback.enabled", "1", r"feedback\.enabled must be true or false"),
])
def test_an_out_of_range_field_names_the_field_and_the_allowed_values(tmp_path, field, value, allowed):
    path = write_protocol(tmp_path / "p.toml", **{field: value})
    with pytest.raises(ProtocolError, match=allowed):
        load_protocol(path)


def test_an_unknown_key_is_an_error_listing_the_allowed_keys(tmp_path):
    path = write_protocol(tmp_path / "p.toml", **{"timing.letter_ms": "200"})
    with pytest.raises(ProtocolError, match=r"unknown key timing\.letter_ms; allowed keys in \[timing\]: fixation_s"):
        load_protocol(path)


def test_a_file_that_is_not_toml_or_does_not_exist_is_a_protocol_error(tmp_path):
    bad = tmp_path / "bad.toml"
    bad.write_text("[optimizer\nrule = ")
    with pytest.raises(ProtocolError, match="not valid TOML"):
        load_protocol(bad)
    with pytest.raises(ProtocolError, match="not found"):
        load_protocol(tmp_path / "missing.toml")


def test_with_trials_overrides_the_count_and_validates_it():
    protocol = load_protocol(DEMO_PROTOCOL)
    assert protocol.with_trials(7).optimizer.trials == 7
    with pytest.raises(ProtocolError, match="--trials"):
        protocol.with_trials(0)
