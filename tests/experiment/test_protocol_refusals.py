"""A protocol file (or --start, --axis) that would run with values a clinician never meant is
refused in one line naming the field and the fix; a stored session's protocol, checked when it was
new, still loads as it ran."""

import re

import pytest

from experiment_helpers import DEMO_PROTOCOL, REPO, write_protocol
from lensopt.errors import ProtocolError
from lensopt.experiment.protocol import load_protocol, protocol_from_dict

PRESCRIPTION_PROTOCOL = REPO / "protocols" / "clinical-prescription.toml"
REFRACTION_PROTOCOL = REPO / "protocols" / "clinical-refraction.toml"


def _refusal(path) -> str:
    with pytest.raises(ProtocolError) as info:
        load_protocol(path)
    message = str(info.value)
    assert "\n" not in message
    return message


def test_a_key_outside_any_table_is_called_a_key_not_an_unknown_table(tmp_path):
    path = tmp_path / "top.toml"
    path.write_text("seed = 5\n" + DEMO_PROTOCOL.read_text())
    message = _refusal(path)
    assert "seed = 5 is a key outside any table; every setting belongs in its table" in message
    assert "unknown table" not in message


def test_a_protocol_without_its_calibration_table_is_told_the_table_is_missing(tmp_path):
    path = tmp_path / "nocal.toml"
    path.write_text(re.sub(r"^\[calibration\]\n.*?(?=^\[)", "", DEMO_PROTOCOL.read_text(), flags=re.S | re.M))
    assert "missing table [calibration] (fields: distance_cm, monitor" in _refusal(path)


@pytest.mark.parametrize(
    "fields, said",
    [
        ({"optimizer.trials": "5"}, "optimizer.n_initial (5) is not below optimizer.trials (5)"),
        ({"optimizer.trials": "5", "optimizer.n_initial": "10"}, "optimizer.n_initial (10) is not below"),
        ({"optimizer.trials": "3", "optimizer.n_initial": None}, "optimizer.n_initial (5, its default) is not below"),
    ],
)
def test_random_first_trials_taking_every_trial_are_refused(tmp_path, fields, said):
    message = _refusal(write_protocol(tmp_path / "p.toml", **fields))
    assert said in message and "lower optimizer.n_initial or raise optimizer.trials" in message


@pytest.mark.parametrize(
    ("key", "said"),
    [
        ("screen_width_cm", "give the screen's visible width in cm (e.g. 52.7)"),
        ("screen_width_px", "give its width in pixels (e.g. 1920)"),
        ("screen_height_px", "give its height in pixels (e.g. 1080)"),
    ],
)
def test_a_calibration_number_left_out_is_said_to_be_missing_not_zero(tmp_path, key, said):
    """A key left out reads as 0: it was refused with "must be a number in [1, 10000], got 0.0", a
    value the file never held."""
    text = DEMO_PROTOCOL.read_text()
    assert re.search(rf"^{key} = ", text, flags=re.M)
    path = tmp_path / "p.toml"
    path.write_text(re.sub(rf"^{key} = .*\n", "", text, flags=re.M))
    message = _refusal(path)
    assert message.endswith(f"calibration.{key} is missing (or 0): {said}, or monitor = NAME (lensopt calibrate)")


def test_random_first_trials_below_the_trials_are_accepted(tmp_path):
    assert load_protocol(write_protocol(tmp_path / "p.toml", **{"optimizer.trials": "6"})).optimizer.trials == 6


@pytest.mark.parametrize(
    "source, field", [(REFRACTION_PROTOCOL, "lens.axis_deg"), (PRESCRIPTION_PROTOCOL, "simulated.axis_deg")]
)
def test_a_fractional_axis_in_a_protocol_is_refused(tmp_path, source, field):
    message = _refusal(write_protocol(tmp_path / "p.toml", source, **{field: "90.5"}))
    assert f"{field} 90.5 is not a whole number of degrees: write one from 1 to 180 (0: " in message
    assert message.endswith("), e.g. 90")


@pytest.mark.parametrize("source, field", [(REFRACTION_PROTOCOL, "lens"), (PRESCRIPTION_PROTOCOL, "simulated")])
def test_an_axis_of_0_in_a_protocol_is_none_as_its_refusal_of_a_fraction_says(tmp_path, source, field):
    """``axis_deg = 0`` is the documented 'none' of [lens] (not given) and [simulated] (a patient without an
    axis, read as 180 in a full prescription), and the default: accepted, and the refusal of 90.5 names it."""
    protocol = load_protocol(write_protocol(tmp_path / "p.toml", source, **{f"{field}.axis_deg": "0"}))
    assert getattr(protocol, field).axis_deg == 0.0


def test_a_fractional_axis_option_is_refused_naming_it():
    with pytest.raises(ProtocolError, match=r"^--axis 90.5 is not a whole number of degrees"):
        load_protocol(REFRACTION_PROTOCOL).with_lens_axis(90.5)


def test_a_start_whose_box_reaches_past_the_phoropter_is_refused(tmp_path):
    wide = write_protocol(tmp_path / "p.toml", PRESCRIPTION_PROTOCOL, **{"start.m_half_width_d": "10.0"})
    with pytest.raises(ProtocolError) as info:
        load_protocol(wide).with_start("-19.00 DS")
    assert str(info.value) == (
        "--start: the search box around -19.00 DS (M ±10 D, J0 and J45 ±1 D) reaches -30.41 D in a meridian, "
        "beyond a phoropter's ±20 D; narrow [start] j_half_width_d and m_half_width_d, or refract this eye with "
        "trial lenses"
    )
    assert load_protocol(PRESCRIPTION_PROTOCOL).with_start("-16.00 DS").start.refraction == "-16.00 DS"


def test_a_high_start_given_for_a_patient_has_its_box_narrowed_within_the_phoropter_and_says_so():
    """-17.00 DS with the shipped box (M ±2 D, J ±1 D) would ask for -20.41 D: the M half-width is
    narrowed until no lens of the box has a meridian beyond ±20 D (corners checked by hand)."""
    said = []
    start = load_protocol(PRESCRIPTION_PROTOCOL).with_start("-17.00 DS", said.append).start
    assert start.j_half_width_d == 1.0 and 0.25 <= start.m_half_width_d < 2.0
    m = -17.0
    corners = [
        (m + dm, j0, j45)
        for dm in (-start.m_half_width_d, start.m_half_width_d)
        for j0 in (-1.0, 1.0)
        for j45 in (-1.0, 1.0)
    ]
    meridians = [mm + s * (j0**2 + j45**2) ** 0.5 for mm, j0, j45 in corners for s in (-1.0, 1.0)]
    assert max(abs(p) for p in meridians) <= 20.0 + 1e-9
    assert max(abs(p) for p in meridians) > 20.0 - 0.02  # as wide as fits, to the hundredth
    (line,) = said
    assert f"narrowed from 2 to {start.m_half_width_d:g} D" in line and "±20 D" in line


def test_a_protocol_files_start_whose_box_reaches_past_the_phoropter_is_refused(tmp_path):
    path = write_protocol(
        tmp_path / "p.toml",
        PRESCRIPTION_PROTOCOL,
        **{"start.refraction": '"+17.00 / -2.00 x 90"', "simulated.sphere_d": "17.0"},
    )
    message = _refusal(path)
    assert "the search box around +17.00 / -2.00 x 090" in message and "reaches +20.24 D in a meridian" in message


def test_a_protocol_files_high_start_replaced_by_start_is_searched_around_the_start_given(tmp_path, capsys):
    """``--start`` replaces the file's refraction: the file's own, beyond the phoropter, is not what the
    session searches around and is not refused; the start given is checked (and its box is the file's)."""
    from lensopt.cli import main

    path = write_protocol(tmp_path / "p.toml", PRESCRIPTION_PROTOCOL, **{"start.refraction": '"+17.00 / -2.00 x 90"'})
    start = load_protocol(path, start_replaced=True).with_start("-2.00 / -0.50 x 180").start
    assert start.refraction == "-2.00 / -0.50 x 180" and start.lens.format() == "-2.00 / -0.50 x 180"
    assert (start.m_half_width_d, start.j_half_width_d) == (2.0, 1.0)  # the file's box, not narrowed
    with pytest.raises(ProtocolError, match=r"^--start: the search box around -19.00 DS"):
        load_protocol(path, start_replaced=True).with_start("-19.00 DS")  # too high a start given: still refused
    db = tmp_path / "sessions.db"
    args = ["run", "--protocol", str(path), "--participant", "P001", "--db", str(db), "--observer", "simulated"]
    assert main([*args, "--start", "-2.00 / -0.50 x 180"]) == 2  # on to the next check: no eye named
    err = capsys.readouterr().err
    assert "none was named" in err and "+17.00" not in err and "phoropter" not in err, err
    assert main(args) == 2 and "reaches +20.24 D in a meridian" in capsys.readouterr().err  # without --start: refused
    assert not db.exists()


@pytest.mark.parametrize(
    ("field", "value", "least"), [("m_half_width_d", "0.01", "0.25"), ("j_half_width_d", "0.1", "0.125")]
)
def test_a_start_box_narrower_than_the_phoropters_steps_is_refused(tmp_path, field, value, least):
    """A box whose M half-width is under one step, or J half-width under half a step (a cylinder one
    step off changes J by half a step), would ask for the start's powers again and again."""
    message = _refusal(write_protocol(tmp_path / "p.toml", PRESCRIPTION_PROTOCOL, **{f"start.{field}": value}))
    assert f"[start] {field} = {value} D is narrower than the phoropter's steps of 0.25 D allow" in message
    assert f"(at least {least} D)" in message and "widen it" in message


def test_a_start_box_of_one_step_or_continuous_powers_is_accepted(tmp_path):
    one_step = {"start.m_half_width_d": "0.25", "start.j_half_width_d": "0.125"}
    assert (
        load_protocol(write_protocol(tmp_path / "a.toml", PRESCRIPTION_PROTOCOL, **one_step)).start.m_half_width_d
        == 0.25
    )
    continuous = {"start.m_half_width_d": "0.01", "lens.step_d": "0.0", "lens.prompt": "false"}
    assert load_protocol(write_protocol(tmp_path / "b.toml", PRESCRIPTION_PROTOCOL, **continuous)).lens.step_d == 0.0


def test_a_stored_protocol_checked_when_new_still_loads_as_it_ran():
    """A session stored before these checks (a wide box, a J half-width under half a step, a fractional
    axis) resumes as it ran."""
    stored = load_protocol(PRESCRIPTION_PROTOCOL).with_start("-1.00 DS").to_dict()
    stored["start"].update(refraction="-19.00 DS", m_half_width_d=10.0, j_half_width_d=0.01)
    stored["simulated"]["axis_deg"] = 90.5
    stored["optimizer"]["n_initial"] = stored["optimizer"]["trials"]
    protocol = protocol_from_dict(stored, source="stored protocol of session 1")
    assert protocol.start.m_half_width_d == 10.0 and protocol.simulated.axis_deg == 90.5
    assert protocol.start.j_half_width_d == 0.01


def test_a_protocol_number_with_a_decimal_comma_is_refused_saying_to_use_a_decimal_point(tmp_path):
    message = _refusal(write_protocol(tmp_path / "comma.toml", **{"simulated.sphere_d": "-2,25   # the patient"}))
    assert "is not valid TOML" in message and message.endswith("; use a decimal point: sphere_d = -2.25")


@pytest.mark.parametrize(
    ("old", "new", "said"),
    [
        # uncommenting a key the table already sets
        ("trials = 36\n", "trials = 36\ntrials = 40\n", "; optimizer.trials is set twice (lines 12 and 13): keep one"),
        ('rule = "ucb-ald"', 'rule = "ucb-ald', '; the text value of line 11 has no closing quote: rule = "ucb-ald"'),
        ("trials = 36", "trials =", "; trials has no value: give one (text in quotes, numbers as they are)"),
        ('rule = "ucb-ald"', "rule = ucb-ald", '; text is written in quotes: rule = "ucb-ald"'),
        ("[optimizer]\n", "[optimizer]\n[optimizer]\n", "; the table [optimizer] is written twice (lines 10 and 11)"),
    ],
    ids=["key-twice", "no-closing-quote", "no-value", "text-without-quotes", "table-twice"],
)
def test_a_toml_mistake_is_named_in_the_words_of_the_line_with_its_fix(tmp_path, old, new, said):
    """tomllib says "Cannot overwrite a value (at line 13, column 12)": the refusal adds what that
    line's mistake is and how to mend it."""
    text = DEMO_PROTOCOL.read_text()
    assert old in text
    path = tmp_path / "p.toml"
    path.write_text(text.replace(old, new, 1))
    message = _refusal(path)
    assert "is not valid TOML: " in message and "(at line " in message and said in message, message


def test_a_json_file_given_as_a_protocol_is_said_to_be_json(tmp_path):
    path = tmp_path / "p.toml"
    path.write_text('{"protocol": {"name": "demo"}}\n')
    assert _refusal(path).endswith(
        "; this is JSON, and a protocol is TOML: key = value lines under [tables], as in the shipped protocols (lensopt run --help names them)"
    )


def test_a_start_refraction_with_decimal_commas_is_refused_saying_to_use_a_decimal_point(tmp_path):
    path = tmp_path / "start.toml"
    path.write_text(
        PRESCRIPTION_PROTOCOL.read_text().replace("[start]\n", '[start]\nrefraction = "-2,25 -0,75 x 180"\n')
    )
    assert "start.refraction: cannot read '-2,25 -0,75 x 180' as a lens: use a decimal point: -2.25 -0.75 x 180" in (
        _refusal(path)
    )


def test_the_eye_is_read_in_any_case(tmp_path):
    from lensopt.experiment.protocol_sections import SessionSection

    assert [SessionSection(eye).eye for eye in ("od", "Os", "ou")] == ["OD", "OS", "OU"]
    protocol = load_protocol(write_protocol(tmp_path / "p.toml", PRESCRIPTION_PROTOCOL, **{"session.eye": '"od"'}))
    assert protocol.session.eye == "OD" and protocol.session.eyes == ("OD",)


@pytest.mark.parametrize(
    ("name", "noun"), [("clinical-duel", "a duel"), ("clinical-prescription-ranking", "a ranking")]
)
def test_feedback_asked_of_a_comparison_is_refused_not_silently_left_out(tmp_path, name, noun):
    """A duel or ranking has no right answer to show: ``[feedback] enabled = true`` in its file ran
    the session without any feedback and without a word; a stored session still loads as it ran."""
    source = REPO / "protocols" / f"{name}.toml"
    assert load_protocol(source).feedback.enabled is False  # the shipped file, as it is, loads
    path = write_protocol(tmp_path / "p.toml", source, **{"feedback.enabled": "true"})
    message = _refusal(path)
    assert f"feedback.enabled = true applies to letter sessions only: {noun} has no right answer" in message
    assert message.endswith("set feedback.enabled = false")
    stored = load_protocol(source).to_dict()
    stored["feedback"]["enabled"] = True
    assert protocol_from_dict(stored, source="session 1").feedback.enabled is True


def test_feedback_of_a_letter_protocol_is_accepted(tmp_path):
    path = write_protocol(tmp_path / "p.toml", PRESCRIPTION_PROTOCOL, **{"feedback.enabled": "true"})
    assert load_protocol(path).feedback.enabled is True
