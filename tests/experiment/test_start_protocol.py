"""``[start]``: the starting refraction of a letter protocol (the full prescription), and ``--start``."""

import pytest

from experiment_helpers import DEMO_PROTOCOL, REPO
from lensopt.errors import ProtocolError
from lensopt.experiment.modes import mode_for
from lensopt.experiment.protocol import load_protocol, protocol_from_dict
from lensopt.refraction.lens import Lens
from lensopt.refraction.letters import RefractionOptimizer
from lensopt.refraction.prescription_letters import PrescriptionOptimizer


def with_start(tmp_path, body, source=DEMO_PROTOCOL):
    path = tmp_path / "start.toml"
    path.write_text(source.read_text() + f"\n[start]\n{body}\n")
    return path


def test_a_start_given_to_the_sphere_and_cylinder_protocol_names_the_protocol_that_takes_one():
    protocol = load_protocol(REPO / "protocols" / "clinical-refraction.toml")
    with pytest.raises(ProtocolError, match=r"use --protocol clinical-prescription .* \(--axis names") as error:
        protocol.with_start("-1.00 / -0.50 x 180")
    assert "\n" not in str(error.value)


def test_the_shipped_prescription_protocol_searches_around_the_start_it_is_given():
    protocol = load_protocol(REPO / "protocols" / "clinical-prescription.toml")
    assert protocol.feedback_mode == "letters" and protocol.optimizer.rule == "bracket-ald"
    assert protocol.start is not None and not protocol.start.given  # the patient's own, from --start
    assert protocol.lens.prompt and protocol.lens_step_d == 0.25
    protocol = protocol.with_start("-1.00 / -0.50 x 180")
    optimizer = mode_for(protocol).new_optimizer(protocol, seed=1, letter_bounds_logmar=(-0.3, 1.0))
    assert isinstance(optimizer, PrescriptionOptimizer) and optimizer.stop is not None
    assert optimizer.start == Lens(-1.0, -0.5, 180.0)
    # its budget and stopping rule are those its held-out campaign measured (README's stop figures)
    commands = (REPO / "docs" / "results" / "prescription" / "commands.txt").read_text()
    campaign = next(line for line in commands.splitlines() if "--rules bracket-ald" in line)
    assert (
        f"--trials {protocol.optimizer.trials} " in campaign and optimizer.stop.max_trials == protocol.optimizer.trials
    )
    assert f"--stop-confidence {optimizer.stop.confidence:g} --min-trials {optimizer.stop.min_trials} " in campaign


def test_a_start_table_without_a_refraction_is_no_lens_until_one_is_given(tmp_path):
    protocol = load_protocol(with_start(tmp_path, "m_half_width_d = 1.5"))
    assert not protocol.start.given and protocol.start.m_half_width_d == 1.5
    with pytest.raises(ValueError, match=r"--start '-1.00 / -0.50 x 180'"):
        _ = protocol.start.lens
    again = protocol_from_dict(protocol.to_dict(), source="stored")
    assert again.start == protocol.start and not again.start.given
    assert protocol.with_start("plano").start.lens == Lens(0.0)


def test_running_the_clinical_protocol_without_a_start_is_one_line_and_creates_nothing(tmp_path, capsys):
    from lensopt.cli import main

    db = tmp_path / "sessions.db"
    protocol = REPO / "protocols" / "clinical-prescription.toml"
    code = main(["run", "--protocol", str(protocol), "--participant", "P001", "--db", str(db)])
    err = capsys.readouterr().err
    assert code == 2 and err.count("\n") == 1 and "Traceback" not in err, err
    assert "no" in err and "--start '-1.00 / -0.50 x 180'" in err and "--start plano" in err
    assert not db.exists()  # refused before the database is opened: no file, no session row


@pytest.mark.parametrize("protocol_name", ["clinical-prescription", "clinical-prescription-duel"])
def test_a_prescription_without_an_eye_is_one_line_and_creates_nothing(tmp_path, capsys, protocol_name):
    """A prescription is signed for an eye: a new session with a start names one (--eye or [session] eye)."""
    from lensopt.cli import main

    db = tmp_path / "sessions.db"
    protocol = REPO / "protocols" / f"{protocol_name}.toml"
    args = ["run", "--protocol", str(protocol), "--participant", "P001", "--db", str(db), "--observer", "simulated"]
    code = main([*args, "--start", "-1.00 / -0.50 x 180"])
    err = capsys.readouterr().err
    assert code == 2 and err.count("\n") == 1 and "Traceback" not in err, err
    assert "none was named" in err and "--eye OD" in err and "[session] eye" in err
    assert ("OU" in err) == (protocol_name == "clinical-prescription")  # both eyes: letter sessions only
    assert not db.exists()  # refused before the database is opened: no file, no session row


def test_a_start_table_builds_the_prescription_optimizer_with_its_box(tmp_path):
    protocol = load_protocol(
        with_start(tmp_path, 'refraction = "-1.00 / -0.50 x 180"\nm_half_width_d = 1.5\nj_half_width_d = 0.75')
    )
    optimizer = mode_for(protocol).new_optimizer(protocol, seed=2, letter_bounds_logmar=(-0.3, 1.0))
    assert isinstance(optimizer, PrescriptionOptimizer)
    assert optimizer.start == Lens(-1.0, -0.5, 180.0)
    assert (optimizer.box.m_half_width_d, optimizer.box.j_half_width_d) == (1.5, 0.75)
    assert optimizer.settings_dict()["n_alternatives"] == 26 and optimizer.rule == "ucb-ald"  # the protocol's rule


def test_without_a_start_a_letter_protocol_runs_the_two_parameter_search():
    protocol = load_protocol(DEMO_PROTOCOL)
    assert protocol.start is None and "start" not in protocol.to_dict()
    optimizer = mode_for(protocol).new_optimizer(protocol, seed=2, letter_bounds_logmar=(-0.3, 1.0))
    assert type(optimizer) is RefractionOptimizer


def test_a_plus_cylinder_start_is_searched_transposed(tmp_path):
    start = load_protocol(with_start(tmp_path, 'refraction = "-1.50 +0.50 x 90"')).start
    assert start.transposed and start.lens == Lens(-1.0, -0.5, 180.0)
    assert not load_protocol(with_start(tmp_path, 'refraction = "-1.00 -0.50 x 180"')).start.transposed


def test_the_start_survives_the_stored_protocol_snapshot(tmp_path):
    protocol = load_protocol(with_start(tmp_path, 'refraction = "-1.00 / -0.50 x 180"'))
    again = protocol_from_dict(protocol.to_dict(), source="stored")
    assert again.start == protocol.start and again.to_dict() == protocol.to_dict()


def test_start_overrides_the_protocols_refraction_and_keeps_its_box(tmp_path):
    protocol = load_protocol(with_start(tmp_path, 'refraction = "plano"\nm_half_width_d = 1.0'))
    overridden = protocol.with_start("-2.00 / -1.00 x 10")
    assert overridden.start.lens == Lens(-2.0, -1.0, 10.0) and overridden.start.m_half_width_d == 1.0
    assert load_protocol(DEMO_PROTOCOL).with_start("-2.00 DS").start.lens == Lens(-2.0)


@pytest.mark.parametrize(
    "body, message",
    [
        ('refraction = "abc"', r"start\.refraction: cannot read 'abc' as a lens"),
        ('refraction = "-1.00 / -0.50 x 200"', r"start\.refraction: axis 200 .* is outside 1-180"),
        ('refraction = "-1.00 / -0.50"', r"start\.refraction: the cylinder -0\.50 .* has no axis"),
        ("refraction = -1.0", r"start\.refraction must be a lens in clinical notation"),
        ('refraction = "plano"\nj_half_width_d = -1', r"start\.j_half_width_d must be a number in \(0, 5\]"),
        ('refraction = "plano"\nstep = 1', r"unknown key start\.step; allowed keys in \[start\]: refraction"),
    ],
)
def test_a_bad_start_table_is_one_line_naming_the_field(tmp_path, body, message):
    with pytest.raises(ProtocolError, match=message) as caught:
        load_protocol(with_start(tmp_path, body))
    assert "\n" not in str(caught.value)


def test_a_start_in_a_ranking_protocol_searches_the_full_prescription_without_a_travel_limit():
    source = REPO / "protocols" / "clinical-ranking.toml"
    data = load_protocol(source).to_dict()
    data["start"] = {"refraction": "plano"}
    assert protocol_from_dict(data, source="ranking").start.given
    assert load_protocol(source).with_start("-1.00 / -0.50 x 180").start.lens.format() == "-1.00 / -0.50 x 180"
    data["lens"]["max_step_d"] = 0.5
    with pytest.raises(
        ProtocolError, match=r"lens\.max_step_d .* only for now; set lens\.max_step_d = 0 in this ranking"
    ):
        protocol_from_dict(data, source="ranking")


def test_a_start_in_a_duel_protocol_needs_the_probit_model_and_no_travel_limit():
    source = REPO / "protocols" / "clinical-prescription-duel.toml"
    data = load_protocol(source).to_dict()
    data["start"] = {"refraction": "plano"}
    assert protocol_from_dict(data, source="duel").start.given
    data["duel"]["model"], data["optimizer"]["rule"] = "ties", "mpes-ald"
    with pytest.raises(ProtocolError, match=r"duels of the full prescription .* use the probit model"):
        protocol_from_dict(data, source="duel")
    data["duel"]["model"], data["optimizer"]["rule"] = "probit", "muc-ald"
    data["lens"]["max_step_d"] = 0.5
    with pytest.raises(ProtocolError, match=r"lens\.max_step_d .* letter sessions of the full prescription only"):
        protocol_from_dict(data, source="duel")


def test_the_closing_prescription_lines_write_an_axis_interval_through_180():
    from lensopt.experiment.prescription_text import prescription_lines
    from lensopt.store import ResultRecord

    result = ResultRecord(
        "-1.25 / -0.75 x 170", -1.25, -0.75, 170.0, -0.02, 0.9, 40, {"axis_deg": [160.0, 185.0], "m_d": [-1.8, -1.4]}
    )
    head, intervals = prescription_lines(result)
    assert head.startswith("prescription: -1.25 / -0.75 x 170  (predicted acuity -0.02 logMAR, confidence 0.90")
    assert intervals == "95% intervals: axis 160 to 005 through 180, M -1.80 to -1.40 D"


def test_a_travel_limit_in_the_lens_table_reaches_the_prescription_optimizer_and_the_snapshot(tmp_path):
    data = load_protocol(with_start(tmp_path, 'refraction = "-1.00 / -0.50 x 180"')).to_dict()
    data["lens"]["max_step_d"] = 0.5
    protocol = protocol_from_dict(data, source="step")
    optimizer = mode_for(protocol).new_optimizer(protocol, seed=2, letter_bounds_logmar=(-0.3, 1.0))
    assert optimizer.max_step_d == 0.5 and optimizer.settings_dict()["max_step_d"] == 0.5
    assert protocol_from_dict(protocol.to_dict(), source="stored").lens.max_step_d == 0.5
    data["lens"]["max_step_d"] = 0.0  # no limit: a motorized phoropter
    protocol = protocol_from_dict(data, source="motorized")
    assert mode_for(protocol).new_optimizer(protocol, seed=2, letter_bounds_logmar=(-0.3, 1.0)).max_step_d is None


@pytest.mark.parametrize(
    "value, start, message",
    [
        (0.1, True, r"lens\.max_step_d must be 0 \(no limit\) or at least one phoropter step, 0\.25 D"),
        (5.0, True, r"max_step_d must be a number in \[0, 4\]"),
        (0.5, False, r"lens\.max_step_d \(the travel limit\) applies to the full prescription only"),
    ],
)
def test_a_bad_travel_limit_is_one_line(tmp_path, value, start, message):
    protocol = load_protocol(with_start(tmp_path, 'refraction = "plano"') if start else DEMO_PROTOCOL)
    data = protocol.to_dict()
    data["lens"]["max_step_d"] = value
    with pytest.raises(ProtocolError, match=message) as caught:
        protocol_from_dict(data, source="bad")
    assert "\n" not in str(caught.value)
    assert str(caught.value).startswith("bad: lens.") and "lens.lens." not in str(caught.value)  # named once


def _axes_asked(optimizer) -> list[float]:
    """Every axis ``optimizer`` asked the clinician to set: a letter's lens, a duel's two, a ranking's."""
    axes = []
    for trial, _ in optimizer.history:
        lenses = getattr(trial, "lenses", None) or (
            getattr(trial, "first_lens", None),
            getattr(trial, "second_lens", None),
        )
        axes += [trial.axis_deg] if hasattr(trial, "axis_deg") else [lens.axis_deg for lens in lenses]
    return axes


@pytest.mark.parametrize(
    "protocol_name, feedback",
    [
        ("clinical-prescription", "letters"),
        ("clinical-prescription-duel", "duel"),
        ("clinical-prescription-ranking", "ranking"),
    ],
)
def test_an_axis_step_in_the_lens_table_rounds_every_axis_asked_for_and_prescribed(protocol_name, feedback):
    """``[lens] axis_step_deg = 5`` (a trial frame's marks): every lens asked for and the lens reported
    have an axis on the 5° marks, the session's stored settings and protocol keep it; at the default
    1° the same session asks for axes off those marks."""
    from lensopt.observer import draw_clinic_patients
    from lensopt.simulation import simulate_prescription

    data = load_protocol(REPO / "protocols" / f"{protocol_name}.toml").with_start("-1.00 / -0.75 x 047").to_dict()
    axes_by_step = {}
    for step in (1, 5):
        data["lens"]["axis_step_deg"] = step
        protocol = protocol_from_dict(data, source="trial frame")
        assert protocol_from_dict(protocol.to_dict(), source="stored").lens.axis_step_deg == step
        optimizer = mode_for(protocol).new_optimizer(protocol, seed=3, letter_bounds_logmar=(-0.3, 1.0))
        assert optimizer.settings_dict()["axis_step_deg"] == step
        patient = draw_clinic_patients(1, 11)[0]
        simulate_prescription(patient, optimizer, 12, checkpoints=(12,), feedback=feedback)
        axes_by_step[step] = [*_axes_asked(optimizer), optimizer.prescription().lens.axis_deg]
    assert all(axis % 5 == 0 and 0 < axis <= 180 for axis in axes_by_step[5])
    assert any(axis % 5 != 0 for axis in axes_by_step[1])


@pytest.mark.parametrize(
    "value, step_d, start, message",
    [
        (7, 0.25, True, r"lens\.axis_step_deg must be whole degrees that divide 180 \(1: a phoropter's dial"),
        (2.5, 0.25, True, r"lens\.axis_step_deg must be whole degrees that divide 180"),
        (0.5, 0.25, True, r"axis_step_deg must be a number in \[1, 90\]"),
        (5, 0.0, True, r"lens\.step_d = 0 \(continuous powers\) rounds none; set lens\.step_d"),
        (5, 0.25, False, r"lens\.axis_step_deg \(the axis step\) applies to the full prescription only"),
    ],
)
def test_a_bad_axis_step_is_one_line(tmp_path, value, step_d, start, message):
    protocol = load_protocol(with_start(tmp_path, 'refraction = "plano"') if start else DEMO_PROTOCOL)
    data = protocol.to_dict()
    data["lens"]["axis_step_deg"], data["lens"]["step_d"] = value, step_d
    with pytest.raises(ProtocolError, match=message) as caught:
        protocol_from_dict(data, source="bad")
    assert "\n" not in str(caught.value)
    assert str(caught.value).startswith("bad: lens.") and "lens.lens." not in str(caught.value)  # named once


def test_the_simulated_patient_is_described_in_clinical_notation_with_its_axis():
    from lensopt.experiment.protocol_sections import SimulatedSection

    assert SimulatedSection(-1.25, -0.75, slope=14.0, axis_deg=170.0).describe() == (
        "simulated patient: correction -1.25 / -0.75 x 170, slope 14 per logMAR, lapse 0, best acuity +0.00 logMAR"
    )
    # plus cylinder written in minus; without an axis (the two-parameter patient) sphere and cylinder
    assert "correction -0.50 / -1.00 x 180," in SimulatedSection(-1.5, 1.0, axis_deg=90.0).describe()
    two = SimulatedSection(-1.25, -0.75, lapse=0.05, accommodation_d=3.0).describe()
    assert two.startswith("simulated patient: correction S -1.25 D  C -0.75 D, slope 5 per logMAR, lapse 0.05")
    assert two.endswith(", accommodation 3 D")
    # as the protocol shows its lenses: at its axis (two-parameter), in its cylinder convention
    from lensopt.experiment.protocol_sections import LensSection

    assert "correction -1.25 / -0.75 x 090," in SimulatedSection(-1.25, -0.75).describe(LensSection(axis_deg=90.0))
    plus = SimulatedSection(-1.25, -0.75, axis_deg=170.0).describe(LensSection(cylinder="plus"))
    assert "correction -2.00 / +0.75 x 080," in plus


def test_a_full_prescriptions_simulated_patient_without_an_axis_is_described_at_the_axis_it_has():
    """``[simulated] axis_deg = 0`` in a full prescription: the patient answers as one whose axis is
    180 (the observer's default), and the log says so, not sphere and cylinder without an axis."""
    from lensopt.experiment.protocol_sections import SimulatedSection
    from lensopt.observer import SimulatedPatient

    said = SimulatedSection(-1.25, -0.75).describe(full_prescription=True)
    assert "correction -1.25 / -0.75 x 180," in said
    patient = SimulatedPatient(**SimulatedSection(-1.25, -0.75).patient_settings())
    at_180 = SimulatedPatient(**SimulatedSection(-1.25, -0.75, axis_deg=180.0).patient_settings())
    for lens in [(-1.25, -0.75, 180.0), (-1.25, -0.75, 90.0), (-0.5, -1.5, 45.0)]:
        assert patient.visual_acuity(*lens) == pytest.approx(at_180.visual_acuity(*lens))


def test_a_start_written_finer_than_a_hundredth_is_searched_where_a_resume_reads_it_back():
    """A start of -1.125 / -0.375 was searched around -1.125 D and stored as '-1.13 / -0.38 x 180',
    so a resumed session searched another box: the session searches around the stored form."""
    from lensopt.experiment.search_sections import StartSection
    from lensopt.refraction.prescription import SearchBox

    for written in ("-1.125 / -0.375 x 180", "+1.125 / +0.375 x 90", "-2.004 / -0.996 x 45"):
        box = SearchBox(StartSection(written).lens)
        resumed = SearchBox.from_dict(box.to_dict())
        assert resumed.start == box.start and resumed.bounds_d == box.bounds_d
    assert StartSection("-1.125 / -0.375 x 180").lens.sphere_d == -1.13  # halves away from zero, as written


def test_a_start_off_the_phoropters_steps_is_searched_as_typed_with_one_line_naming_the_nearest():
    protocol = load_protocol(REPO / "protocols" / "clinical-prescription.toml")
    said = []
    started = protocol.with_start("-2.2 -0.7 x 33", said.append)
    assert started.start.lens == Lens(-2.2, -0.7, 33.0)
    assert said == [
        "--start: -2.20 / -0.70 x 033 is not on the phoropter's 0.25 D steps: the nearest is -2.25 / -0.75 x 033"
    ]
    said.clear()
    protocol.with_start("-2.25 -0.75 x 33", said.append)
    assert said == []


def test_a_start_with_decimal_commas_is_refused_saying_to_use_a_decimal_point():
    protocol = load_protocol(REPO / "protocols" / "clinical-prescription.toml")
    with pytest.raises(ProtocolError) as error:
        protocol.with_start("-2,25 -0,75 x 180")
    assert (
        str(error.value) == "--start: cannot read '-2,25 -0,75 x 180' as a lens: use a decimal point: -2.25 -0.75 x 180"
    )


@pytest.mark.parametrize(
    "written",
    [
        "OD -2.25 / -0.75 x 180, OS -1.50 / -0.50 x 010",
        "od: -2.25 -0.75 x 180; os: -1.50 -0.50 x 10",
        "OD -2.25 -0.75 x 180 OS -1.50 -0.50 x 10",
        "OS -1.50 -0.50 x 10, OD -2.25 -0.75 x 180",
    ],
)
def test_a_start_of_each_eye_is_read_as_a_clinician_writes_it(written):
    from lensopt.experiment.search_sections import StartSection

    start = StartSection(written)
    assert start.eyes == ("OD", "OS")
    assert start.for_eye("OD").lens == Lens(-2.25, -0.75, 180.0)
    assert start.for_eye("OS").lens == Lens(-1.5, -0.5, 10.0)


@pytest.mark.parametrize(
    "written, said",
    [
        ("OD -2.25 -0.75 x 180, OS", "names OS without its lens"),
        ("OD -1.00 DS, OD -2.00 DS", "names OD twice"),
        ("-1.00 DS OS -2.00 DS", "has '-1.00 DS' before its first eye"),
        (
            "OD -2.25 -0.75 x 180, OS -1,50 -0,50 x 10",
            "OS: cannot read '-1,50 -0,50 x 10' as a lens: use a decimal point",
        ),
        ("OD -2.25 -0.75 x 180, OS -22.00 DS", "OS: '-22.00 DS' has a meridian of -22.00 D"),
    ],
)
def test_a_start_of_each_eye_mistyped_is_one_line_naming_the_eye(tmp_path, written, said):
    with pytest.raises(ProtocolError) as error:
        load_protocol(with_start(tmp_path, f'refraction = "{written}"'))
    assert said in str(error.value) and "\n" not in str(error.value)


def test_each_eye_of_a_session_of_both_eyes_needs_its_start_and_one_eye_keeps_its_own():
    protocol = load_protocol(REPO / "protocols" / "clinical-prescription.toml")
    only_od = protocol.with_start("OD -2.25 -0.75 x 180").with_eye("OU")
    with pytest.raises(ProtocolError) as error:
        only_od.with_eye_starts(print)
    assert "names OD only, and the session tests OS: give OS's" in str(error.value)
    both = protocol.with_start("OD -2.25 -0.75 x 180, OS -1.50 -0.50 x 10")
    said = []
    assert both.with_eye("OU").with_eye_starts(said.append).start == both.start and said == []
    assert both.with_eye("OS").with_eye_starts(said.append).start.refraction == "-1.50 -0.50 x 10"
    one = protocol.with_start("-2.25 -0.75 x 180").with_eye("OU")
    assert one.with_eye_starts(said.append) == one
    assert said == [
        "both eyes start from -2.25 / -0.75 x 180 (one lens for OU): give each eye's autorefraction, e.g. "
        "--start 'OD -2.25 / -0.75 x 180, OS -1.50 / -0.50 x 010'"
    ]
