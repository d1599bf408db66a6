"""Protocol files: the shipped ones load; every bad field is a one-line ProtocolError."""

import re

import pytest

from experiment_helpers import DEMO_PROTOCOL, REPO, write_protocol
from lensopt.errors import ProtocolError
from lensopt.experiment.optotypes import ALPHABET, SLOAN_LETTERS
from lensopt.experiment.protocol import load_protocol, protocol_from_dict
from lensopt.reference_data import PROTOCOLS_DIR

PROTOCOLS = REPO / "protocols"


@pytest.mark.parametrize(
    "name", ["clinical-refraction", "research-26afc", "sloan-10afc", "demo-simulated", "clinical-duel"]
)
def test_shipped_protocols_load_and_round_trip_through_their_snapshot(name):
    protocol = load_protocol(PROTOCOLS / f"{name}.toml")
    assert protocol.protocol.name == name
    again = protocol_from_dict(protocol.to_dict(), source="snapshot")
    assert again.to_dict() == protocol.to_dict()


@pytest.mark.parametrize("path", sorted(PROTOCOLS.glob("clinical-*.toml")), ids=lambda p: p.stem)
def test_every_clinical_protocol_puts_the_console_on_a_screen_of_its_own(path):
    """A full-screen patient window and the clinician's console (the lenses to set, the answers) on
    one screen would show the patient the console: every shipped clinical protocol puts the console
    on the second screen (the comparison protocols had no [screens] and shared screen 0)."""
    protocol = load_protocol(path)
    assert protocol.lens.prompt and protocol.display.fullscreen
    assert protocol.screens.console != protocol.screens.patient


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


def test_n_initial_may_be_left_out_and_is_then_the_optimizers_default_five(tmp_path):
    path = write_protocol(tmp_path / "p.toml", **{"optimizer.n_initial": None})
    assert "n_initial" not in path.read_text()
    assert load_protocol(path).optimizer.n_initial == 5


def test_a_missing_table_is_named(tmp_path):
    path = tmp_path / "p.toml"
    path.write_text(DEMO_PROTOCOL.read_text().replace("[keys]", "[keys_]"))
    with pytest.raises(ProtocolError, match=r"unknown table \[keys_\]"):
        load_protocol(path)


@pytest.mark.parametrize(
    "field, value, allowed",
    [
        ("optimizer.trials", "0", r"optimizer\.trials must be an integer in \[1, 5000\], got 0"),
        (
            "optimizer.rule",
            '"ucb"',
            r"optimizer\.rule 'ucb' is not a lensopt rule; by protocol\.feedback — letters: 'ucb-ald'",
        ),
        ("optimizer.letter_bounds_logmar", "[1.0, -0.3]", r"letter_bounds_logmar must be two numbers \[low, high\]"),
        ("calibration.distance_cm", "-1", r"calibration\.distance_cm must be a number in \[5, 100000\]"),
        ("timing.feedback_s", '"fast"', r"timing\.feedback_s must be a number"),
        ("keys.pass_key", '"k"', r"keys\.pass_key is active while a letter is shown"),
        ("letters.alphabet", '"AAB"', r"letters\.alphabet must be 2 to 26 distinct capital letters"),
        ("feedback.enabled", "1", r"feedback\.enabled must be true or false"),
    ],
)
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


def _with_stop(path, source=DEMO_PROTOCOL, stop="", **fields):
    path = write_protocol(path, source, **fields)
    path.write_text(path.read_text() + f"\n[stop]\n{stop}\n")
    return path


def test_letter_protocols_use_ep_and_the_clinical_one_stops_at_95_percent_after_20_to_80_trials():
    for name in ("clinical-refraction", "research-26afc", "sloan-10afc", "demo-simulated"):
        optimizer = load_protocol(PROTOCOLS / f"{name}.toml").optimizer
        assert optimizer.inference == "ep" and optimizer.lapse == 0.02
    clinical = load_protocol(PROTOCOLS / "clinical-refraction.toml")
    assert clinical.stop_rule == {"confidence": 0.95, "min_trials": 20, "max_trials": clinical.optimizer.trials}
    assert load_protocol(DEMO_PROTOCOL).stop is None and load_protocol(DEMO_PROTOCOL).stop_rule is None


def test_a_stop_table_round_trips_and_its_max_trials_defaults_to_the_optimizers_trials(tmp_path):
    protocol = load_protocol(_with_stop(tmp_path / "p.toml", stop="confidence = 0.9\nmin_trials = 10"))
    assert protocol.stop_rule == {"confidence": 0.9, "min_trials": 10, "max_trials": protocol.optimizer.trials}
    snapshot = protocol.to_dict()
    assert snapshot["stop"] == protocol.stop_rule  # no check_letters unset: as every snapshot before it
    assert protocol_from_dict(snapshot, source="snapshot").to_dict() == snapshot
    defaults = load_protocol(_with_stop(tmp_path / "q.toml"))
    assert defaults.stop_rule == {"confidence": 0.95, "min_trials": 20, "max_trials": defaults.optimizer.trials}
    without = load_protocol(DEMO_PROTOCOL).to_dict()
    assert "stop" not in without and protocol_from_dict(without).stop is None


def test_a_stop_table_may_ask_for_letters_through_the_reported_lens_and_keeps_them_with_new_trials(tmp_path):
    protocol = load_protocol(_with_stop(tmp_path / "p.toml", stop="check_letters = 5"))
    assert protocol.stop_rule == {
        "confidence": 0.95,
        "min_trials": 20,
        "max_trials": protocol.optimizer.trials,
        "check_letters": 5,
    }
    assert protocol_from_dict(protocol.to_dict(), source="snapshot").stop_rule == protocol.stop_rule
    assert protocol.with_trials(60).stop_rule["check_letters"] == 5


def test_an_old_protocol_snapshot_without_lapse_or_stop_loads_with_the_defaults():
    snapshot = load_protocol(DEMO_PROTOCOL).to_dict()
    del snapshot["optimizer"]["lapse"]
    snapshot["optimizer"]["inference"] = "laplace"
    protocol = protocol_from_dict(snapshot, source="stored protocol")
    assert protocol.optimizer.lapse == 0.02 and protocol.optimizer.inference == "laplace" and protocol.stop is None


def test_with_trials_moves_a_default_max_trials_and_caps_an_explicit_one(tmp_path):
    follows = load_protocol(_with_stop(tmp_path / "p.toml", stop="min_trials = 20"))  # max = trials (36)
    assert follows.with_trials(60).stop_rule["max_trials"] == 60
    assert follows.with_trials(10).stop_rule == {"confidence": 0.95, "min_trials": 10, "max_trials": 10}
    explicit = load_protocol(_with_stop(tmp_path / "q.toml", stop="min_trials = 5\nmax_trials = 30"))
    assert explicit.with_trials(60).stop_rule["max_trials"] == 30
    assert explicit.with_trials(12).stop_rule["max_trials"] == 12


@pytest.mark.parametrize(
    "stop, message",
    [
        ("confidence = 1.5", r"p\.toml: stop\.confidence must be a number in \(0, 1\), e\.g\. 0\.95, got 1\.5"),
        ("confidence = 0", r"p\.toml: stop\.confidence must be a number in \(0, 1\)"),
        ('confidence = "high"', r"p\.toml: stop\.confidence must be a number in \(0, 1\)"),
        ("min_trials = 0", r"p\.toml: stop\.min_trials must be an integer in \[1, 5000\], got 0"),
        ("min_trials = 2.5", r"p\.toml: stop\.min_trials must be an integer"),
        ("max_trials = 100", r"p\.toml: stop\.max_trials \(100\) must not exceed optimizer\.trials \(36\)"),
        ("min_trials = 30\nmax_trials = 20", r"p\.toml: stop\.min_trials \(30\) must not exceed max_trials \(20\)"),
        ("min_trials = 40", r"p\.toml: stop\.min_trials \(40\) must not exceed the session's 36 trials"),
        (
            "patience = 3",
            r"p\.toml: unknown key stop\.patience; allowed keys in \[stop\]: confidence, min_trials, max_trials, "
            r"check_letters",
        ),
        ("check_letters = 11", r"p\.toml: stop\.check_letters must be an integer in \[0, 10\], got 11"),
        ("check_letters = 2.5", r"p\.toml: stop\.check_letters must be an integer"),
    ],
)
def test_a_bad_stop_table_is_one_line_naming_the_file_and_the_field(tmp_path, stop, message):
    with pytest.raises(ProtocolError, match=message) as info:
        load_protocol(_with_stop(tmp_path / "p.toml", stop=stop))
    assert "\n" not in str(info.value)


def test_a_stop_table_in_a_duel_protocol_is_refused(tmp_path):
    path = tmp_path / "duel.toml"
    path.write_text((PROTOCOLS / "clinical-duel.toml").read_text() + "\n[stop]\nconfidence = 0.9\n")
    with pytest.raises(ProtocolError, match=r"duel\.toml: \[stop\] applies to protocol\.feedback = 'letters' only"):
        load_protocol(path)


@pytest.mark.parametrize(
    "value, message",
    [
        ("0.5", r"p\.toml: optimizer\.lapse must be a rate in \[0, 0\.5\), e\.g\. 0\.02, got 0\.5"),
        ("-0.01", r"p\.toml: optimizer\.lapse must be a rate in \[0, 0\.5\)"),
        ("true", r"p\.toml: optimizer\.lapse must be a rate"),
    ],
)
def test_a_bad_model_lapse_is_one_line_naming_the_field(tmp_path, value, message):
    with pytest.raises(ProtocolError, match=message):
        load_protocol(write_protocol(tmp_path / "p.toml", **{"optimizer.lapse": value}))


def test_the_letters_mode_builds_its_optimizer_with_the_protocols_answer_model_and_stop_rule(tmp_path):
    from lensopt.experiment.modes import mode_for

    protocol = load_protocol(
        _with_stop(
            tmp_path / "p.toml",
            PROTOCOLS / "sloan-10afc.toml",
            stop="confidence = 0.9\nmin_trials = 15",
            **{"optimizer.lapse": "0.05"},
        )
    )
    optimizer = mode_for(protocol).new_optimizer(protocol, seed=3, letter_bounds_logmar=(-0.3, 1.0))
    settings = optimizer.settings_dict()
    assert settings["n_alternatives"] == 10 and settings["lapse"] == 0.05 and settings["inference"] == "ep"
    assert settings["likelihood"] == "floored"
    assert settings["stop"] == {"confidence": 0.9, "min_trials": 15, "max_trials": 150}
    plain = load_protocol(DEMO_PROTOCOL)
    assert mode_for(plain).new_optimizer(plain, seed=3, letter_bounds_logmar=(-0.3, 1.0)).stop is None


def test_an_unreadable_protocol_is_one_line_naming_the_file(tmp_path, monkeypatch):
    """Permission denied (root reads a mode-000 file anyway, so the refusal is simulated)."""
    import lensopt.experiment.protocol as protocol_module
    from lensopt.errors import ProtocolError

    path = tmp_path / "p.toml"
    path.write_text("[protocol]\n")

    def denied(*args, **kwargs):
        raise PermissionError(13, "Permission denied", str(path))

    monkeypatch.setattr(protocol_module, "open", denied, raising=False)
    with pytest.raises(ProtocolError, match=r"protocol file .*p\.toml cannot be read \(permission denied\)") as caught:
        protocol_module.load_protocol(path)
    assert "\n" not in str(caught.value)


def test_a_protocol_saved_with_a_byte_order_mark_loads_as_without_one(tmp_path):
    """Notepad's "UTF-8 with BOM" puts U+FEFF first: tomllib refused it ("Invalid statement at line 1")."""
    with_bom = tmp_path / "bom.toml"
    with_bom.write_bytes(b"\xef\xbb\xbf" + DEMO_PROTOCOL.read_bytes())
    assert load_protocol(with_bom).to_dict() == load_protocol(DEMO_PROTOCOL).to_dict()


def test_a_protocol_path_that_is_a_pipe_is_refused_without_blocking(tmp_path):
    import os

    fifo = tmp_path / "p.toml"
    os.mkfifo(fifo)
    with pytest.raises(ProtocolError, match="is not a regular file"):
        load_protocol(fifo)


@pytest.mark.parametrize("lapse", [0.5, -0.01, 0.75])
def test_a_simulated_patient_lapsing_half_the_time_or_more_is_refused_as_simulate_refuses_it(tmp_path, lapse):
    path = write_protocol(tmp_path / "p.toml", **{"simulated.lapse": str(lapse)})
    with pytest.raises(ProtocolError, match=r"lapse must be a rate in \[0, 0.5\)"):
        load_protocol(path)


@pytest.mark.parametrize("field, value", [("inference", '"laplace"'), ("inference", '"ep"'), ("n_initial", "8")])
def test_a_gp_field_with_the_acuity_law_rule_is_refused_in_one_line(tmp_path, field, value):
    """``inference`` and ``n_initial`` were silently ignored with ``rule = "acuity-law"`` (no GP)."""
    fields = {"optimizer.rule": '"acuity-law"', "optimizer.inference": None, "optimizer.n_initial": None}
    path = write_protocol(tmp_path / "p.toml", **{**fields, f"optimizer.{field}": value})
    with pytest.raises(ProtocolError) as refused:
        load_protocol(path)
    message = str(refused.value)
    assert "\n" not in message and message.startswith(f"{path}: optimizer.{field} sets "), message
    assert "optimizer.rule 'acuity-law' has no GP" in message and f"remove optimizer.{field}" in message


def test_the_acuity_law_rule_without_gp_fields_loads_and_its_snapshot_too(tmp_path):
    """A stored session's snapshot holds every field (their defaults too): it still loads."""
    fields = {"optimizer.rule": '"acuity-law"', "optimizer.inference": None, "optimizer.n_initial": None}
    protocol = load_protocol(write_protocol(tmp_path / "p.toml", **fields))
    assert protocol.optimizer.rule == "acuity-law"
    assert protocol_from_dict(protocol.to_dict(), source="snapshot").to_dict() == protocol.to_dict()
    assert load_protocol(PROTOCOLS / "clinical-refraction.toml").optimizer.rule == "acuity-law"


@pytest.mark.parametrize("name", ["clinical-ranking", "clinical-prescription-ranking"])
def test_inference_in_a_ranking_protocol_is_refused_in_one_line_as_simulate_refuses_it(tmp_path, name):
    """Rankings fit their GP variationally: a protocol's ``inference = "laplace"`` was silently
    ignored (the shipped ranking protocols wrote it, with a comment saying so). The shipped ones,
    without it, load; a stored session's snapshot, which holds every field, still loads."""
    shipped = PROTOCOLS / f"{name}.toml"
    protocol = load_protocol(shipped)
    assert protocol.feedback_mode == "ranking"
    assert protocol_from_dict(protocol.to_dict(), source="snapshot").to_dict() == protocol.to_dict()
    written = tmp_path / f"{name}.toml"
    written.write_text(shipped.read_text().replace("[optimizer]\n", '[optimizer]\ninference = "laplace"\n', 1))
    with pytest.raises(ProtocolError) as refused:
        load_protocol(written)
    message = str(refused.value)
    assert "\n" not in message and message.startswith(f"{written}: optimizer.inference sets "), message
    assert "remove optimizer.inference" in message


@pytest.mark.parametrize("given", ["protocols/sloan-10afc.toml", "sloan-10afc.toml", "{tmp}/edited/sloan-10afc.toml"])
def test_a_protocol_path_that_does_not_exist_is_refused_not_replaced_by_the_shipped_protocol(
    tmp_path, monkeypatch, given
):
    """In a folder without ./protocols/, ``--protocol protocols/sloan-10afc.toml`` ran the shipped
    sloan-10afc instead of the person's edited copy: a path is a path, and the fix is named."""
    monkeypatch.chdir(tmp_path)
    with pytest.raises(ProtocolError) as refused:
        load_protocol(given.format(tmp=tmp_path))
    message = str(refused.value)
    assert "\n" not in message and f"protocol file {given.format(tmp=tmp_path)} not found" in message
    assert "check the path, or give the bare name sloan-10afc" in message


def test_a_bare_name_is_the_shipped_protocol_and_a_file_read_knows_its_path_and_sha256(tmp_path, monkeypatch):
    import hashlib

    monkeypatch.chdir(tmp_path)
    shipped = load_protocol("sloan-10afc")
    assert shipped.source_file() == {
        "path": str((PROTOCOLS_DIR / "sloan-10afc.toml").absolute()),
        "sha256": hashlib.sha256((PROTOCOLS_DIR / "sloan-10afc.toml").read_bytes()).hexdigest(),
    }
    edited = tmp_path / "mine.toml"
    edited.write_bytes((PROTOCOLS_DIR / "sloan-10afc.toml").read_bytes() + b"# edited\n")
    assert load_protocol("mine.toml").source_file() == {
        "path": str(edited),
        "sha256": hashlib.sha256(edited.read_bytes()).hexdigest(),
    }
    assert protocol_from_dict(shipped.to_dict()).source_file() is None  # a stored snapshot is no file


def test_a_bare_name_is_the_shipped_protocol_even_beside_a_folder_of_that_name(tmp_path, monkeypatch):
    """A ``--save-frames clinical-ranking`` folder in the working folder made ``--protocol
    clinical-ranking`` fail with "protocol clinical-ranking is a directory": a bare name means the
    shipped protocol unless a file of that name is there; a folder given as a path is still refused."""
    monkeypatch.chdir(tmp_path)
    (tmp_path / "clinical-ranking").mkdir()
    assert load_protocol("clinical-ranking").source_file()["path"] == str(
        (PROTOCOLS_DIR / "clinical-ranking.toml").absolute()
    )
    with pytest.raises(ProtocolError, match=r"is a directory; give a \.toml file"):
        load_protocol(str(tmp_path / "clinical-ranking"))


@pytest.mark.parametrize(
    "key, high",
    [
        ("fixation_s", 10),
        ("letter_s", 120),
        ("response_timeout_s", 120),
        ("feedback_s", 10),
        ("iti_s", 10),
        ("simulated_response_s", 10),
    ],
)
def test_a_timing_longer_than_its_bound_is_refused_naming_the_key_the_value_and_the_range(tmp_path, key, high):
    """`[timing] feedback_s = 500` was taken: 8 minutes of "Correct" after every letter."""
    at_bound = load_protocol(write_protocol(tmp_path / "at.toml", **{f"timing.{key}": str(high)}))
    assert getattr(at_bound.timing, key) == high
    over = write_protocol(tmp_path / "over.toml", **{f"timing.{key}": "500"})
    with pytest.raises(ProtocolError) as refused:
        load_protocol(over)
    message = str(refused.value)
    assert message == f"{over}: timing.{key} must be a number of seconds in [0, {high}], got 500"


def test_a_stored_session_whose_timing_predates_the_bounds_still_builds_its_protocol(tmp_path):
    """A session stored when up to 600 s was allowed resumes with the timing it ran."""
    stored = load_protocol(write_protocol(tmp_path / "p.toml")).to_dict()
    stored["timing"] = {**stored["timing"], "feedback_s": 500.0}
    assert protocol_from_dict(stored, source="stored").timing.feedback_s == 500.0


@pytest.mark.parametrize(
    ("source", "table", "key", "mode"),
    [("research-26afc", "duel", "letters_per_line", "letters"), ("clinical-duel", "ranking", "lenses", "duel")],
)
def test_a_table_of_another_feedback_mode_is_refused_not_ignored(tmp_path, source, table, key, mode):
    """A research-26afc copy given ``[duel] letters_per_line = 5`` ran as letters, without a word of
    the table; such a table is refused in one line, as ``[stop]`` in a duel protocol is."""
    path = write_protocol(tmp_path / "p.toml", PROTOCOLS_DIR / f"{source}.toml", **{f"{table}.{key}": "3"})
    with pytest.raises(ProtocolError) as refused:
        load_protocol(path)
    assert str(refused.value) == (
        f"{path}: the [{table}] table applies to {table} protocols only (protocol.feedback = {mode!r}); "
        f"remove it, or set protocol.feedback = {table!r}"
    )


@pytest.mark.parametrize("value", ["-0.3", "nan", "inf"])
def test_a_negative_or_infinite_timing_names_the_files_range_not_600_s(tmp_path, value):
    """``fixation_s = -0.3`` said "in [0, 600]"; set to 500, the file was refused again "in [0, 10]"."""
    path = write_protocol(tmp_path / "p.toml", **{"timing.fixation_s": value})
    with pytest.raises(ProtocolError, match=r"fixation_s must be a number of seconds in \[0, 10\], got"):
        load_protocol(path)


def test_a_protocol_saved_in_latin_1_is_told_to_be_saved_as_utf_8_with_the_line(tmp_path):
    path = tmp_path / "p.toml"
    text = DEMO_PROTOCOL.read_text()
    path.write_bytes(text.encode() + "# réglé pour la salle 2\n".encode("latin-1"))
    with pytest.raises(ProtocolError) as refused:
        load_protocol(path)
    line = text.count("\n") + 1
    assert str(refused.value) == f"protocol file {path} is not UTF-8 (line {line}); save it as UTF-8 text"


@pytest.mark.parametrize(
    ("source", "key", "value", "owners", "mode"),
    [
        ("research-26afc", "same", '"s"', "duel", "letters"),
        ("research-26afc", "lenses", '["1", "2"]', "ranking", "letters"),
        ("clinical-duel", "undo", '"backspace"', "letters", "duel"),
        ("clinical-ranking", "first", '"1"', "duel", "ranking"),
    ],
)
def test_a_key_of_another_feedback_mode_is_refused_not_ignored(tmp_path, source, key, value, owners, mode):
    """``same = "s"`` in a letters protocol was taken without a word: the person would press S and
    nothing would happen. Only whole ``[duel]``/``[ranking]`` tables were refused."""
    path = write_protocol(tmp_path / "p.toml", PROTOCOLS_DIR / f"{source}.toml", **{f"keys.{key}": value})
    with pytest.raises(ProtocolError) as refused:
        load_protocol(path)
    assert str(refused.value) == (
        f"{path}: keys.{key} applies to {owners} protocols only (protocol.feedback = {mode!r}), so no trial "
        f"would read it; remove it, or set protocol.feedback = {owners!r}"
    )


def test_the_keys_every_mode_reads_are_taken_in_each_mode(tmp_path):
    """pause, confirm and quit belong to every feedback mode: no mode refuses them."""
    for source in ("research-26afc", "clinical-duel", "clinical-ranking"):
        fields = {"keys.pause": '"f12"', "keys.confirm": '"return"', "keys.quit": '"x"'}
        protocol = load_protocol(
            write_protocol(tmp_path / f"{source}.toml", PROTOCOLS_DIR / f"{source}.toml", **fields)
        )
        assert (protocol.keys.pause, protocol.keys.confirm, protocol.keys.quit) == ("f12", "return", "x")


@pytest.mark.parametrize("escape", ["\\n", "\\t"])
def test_a_protocol_name_of_more_than_one_line_is_refused_in_a_file(tmp_path, escape):
    """``name = "Clinic\\nroom 2"`` split the session's header line in the log and the listing."""
    text = DEMO_PROTOCOL.read_text()
    written, count = re.subn(r'^name = ".*"$', lambda _: f'name = "Clinic{escape}room 2"', text, count=1, flags=re.M)
    assert count == 1
    path = tmp_path / "p.toml"
    path.write_text(written)
    with pytest.raises(ProtocolError) as refused:
        load_protocol(path)
    message = str(refused.value)
    assert "\n" not in message
    assert message.startswith(f"{path}: protocol.name must be one line of text, got ")
    assert message.endswith("; write it without line breaks or tabs")


def test_a_stored_session_whose_name_or_keys_predate_the_checks_still_builds_its_protocol(tmp_path):
    """The checks are of files: a stored snapshot (every key of every mode, any name) resumes."""
    stored = load_protocol(write_protocol(tmp_path / "p.toml")).to_dict()
    stored["protocol"] = {**stored["protocol"], "name": "room\n2"}
    rebuilt = protocol_from_dict(stored, source="stored")
    assert rebuilt.protocol.name == "room\n2" and rebuilt.keys.same == "s"
