"""The clinician's console: the lens to set is drawn on the console, never on the patient's window.

A clinic session (full prescription, a simulated patient, a clinician who confirms every lens)
runs with both windows; every text drawn is recorded at the drawing level (``TextStim.draw``), and
both screens are saved as PNG frames.
"""

import re

import numpy as np
import pytest
from PIL import Image

from experiment_helpers import FAST, REPO, needs_display, write_protocol
from lensopt.experiment.console import LAST_ANSWERS_SHOWN, console_size_and_pos
from lensopt.experiment.protocol import load_protocol, protocol_from_dict
from lensopt.experiment.protocol_sections import DisplaySection, ScreensSection, show_lens
from lensopt.experiment.session import RunRequest, run_session
from lensopt.refraction.lens import Lens, diopter_text
from lensopt.stopping import confidence_text
from lensopt.store import SessionStore

CLINICAL = REPO / "protocols" / "clinical-prescription.toml"

#: Anything that reads as a lens power or axis: "-1.25", "+0.50", "x 170", "plano", "S +1", "C -0".
LENS_TEXT = re.compile(r"[+-]\d+\.\d\d|\bx \d{3}\b|plano|\b[SC] [+-]\d|lens", re.IGNORECASE)


def clinic_protocol(tmp_path, **fields):
    clinic = {
        **FAST,
        "display.window_size_px": "[640, 480]",
        "display.fullscreen": "false",
        "calibration.distance_cm": "300.0",
        "protocol.observer": '"simulated"',
        "start.refraction": '"-1.00 / -0.50 x 180"',
        "session.eye": '"OD"',  # a prescription names its eye
        **fields,
    }
    return write_protocol(tmp_path / "clinic.toml", source=CLINICAL, **clinic)


def run_with_console(window, log=lambda line: None, **request):
    """A session (``RunRequest(participant="P1", seed=3, **request)``) on ``window`` with a clinician's
    console window of its own: ``(outcome, console window)`` (closed by then; it identifies the
    console's texts among those drawn)."""
    from psychopy import visual

    console_win = visual.Window(
        size=(900, 640), pos=(700, 0), units="pix", color=(-0.85, -0.85, -0.8), checkTiming=False, winType="pyglet"
    )
    try:
        outcome = run_session(
            RunRequest(participant="P1", seed=3, **request), log=log, window=window, console_window=console_win
        )
    finally:
        console_win.close()
    return outcome, console_win


@needs_display
def test_the_patient_window_holds_no_lens_text_and_the_console_shows_each_lens(tmp_path, window, drawn_texts):
    db, frames = tmp_path / "s.db", tmp_path / "frames"
    outcome, console_win = run_with_console(
        window, db_path=db, protocol_path=clinic_protocol(tmp_path), trials=6, frames_dir=frames
    )
    assert outcome.status == "finished" and outcome.n_trials == 6
    with SessionStore(db, readonly=True) as store:
        records = store.trials(outcome.session_id)
    on_patient = [text for win, text in drawn_texts if win is window]
    on_console = [text for win, text in drawn_texts if win is console_win]
    assert on_patient and on_console
    assert not [text for text in on_patient if LENS_TEXT.search(text)], on_patient
    assert "Read the letter" in on_patient and "Done. Thank you!" in on_patient
    for record in records:  # every lens the clinician set was shown large on the console, in notation
        assert Lens(record.sphere_d, record.cylinder_d, record.axis_deg).format() in on_console
    assert any(text.startswith("Trial 6 of 6") for text in on_console)
    # both screens are saved: the patient's letter (dark on white), the console (light on dark)
    for k in range(1, 7):
        patient = np.asarray(Image.open(frames / f"trial-{k:03d}.png").convert("L"))
        console = np.asarray(Image.open(frames / f"trial-{k:03d}-console.png").convert("L"))
        assert patient.shape == (window.size[1], window.size[0]) and (patient < 128).any()
        assert console.shape == (640, 900) and (console > 128).any() and np.median(console) < 64
    assert (frames / "trial-001-lens.png").exists()


def test_the_console_sits_beside_a_windowed_patient_display_on_one_screen():
    beside = console_size_and_pos(ScreensSection(), DisplaySection(window_size_px=(1000, 800)), (1000, 800))
    assert beside == ((900, 640), (1000, 0))
    own = console_size_and_pos(ScreensSection(console=1), DisplaySection(fullscreen=True), (1920, 1080))
    assert own == ((900, 640), (0, 0))
    placed = ScreensSection(console=1, console_pos_px=[10, 20], console_size_px=[1280, 720])
    assert console_size_and_pos(placed, DisplaySection(), (1280, 720)) == ((1280, 720), (10, 20))


def test_screens_keys_are_validated_in_one_line(tmp_path):
    from lensopt.errors import ProtocolError

    path = write_protocol(tmp_path / "p.toml", source=CLINICAL, **{"screens.console": "-1"})
    with pytest.raises(ProtocolError, match=r"screens\.console must be an integer in \[0, 15\], got -1"):
        load_protocol(path)
    write_protocol(path, source=CLINICAL, **{"screens.console_size_px": "[100, 100]"})
    with pytest.raises(ProtocolError, match=r"console_size_px must be \[x, y\], whole pixels in \[320, 16384\]"):
        load_protocol(path)


def test_clinician_keys_that_would_collide_are_one_line(tmp_path):
    from lensopt.errors import ProtocolError

    path = tmp_path / "p.toml"
    text = CLINICAL.read_text()
    path.write_text(text.replace('quit = "q"', 'quit = "q"\nundo = "u"'))
    with pytest.raises(ProtocolError, match=r"keys\.undo is active while a letter is shown, so it cannot be a letter"):
        load_protocol(path)
    path.write_text(text.replace('quit = "q"', 'quit = "q"\nnote = "space"'))
    with pytest.raises(ProtocolError, match="confirm and note cannot share the key 'space'"):
        load_protocol(path)


@needs_display
def test_a_plus_cylinder_protocol_shows_every_lens_in_plus_cylinder_and_stores_minus(tmp_path, window, drawn_texts):
    """``[lens] cylinder = "plus"``: the console asks for each lens transposed to plus cylinder (the
    clinician's phoropter), the store keeps the minus-cylinder lens the optimizer asked for."""
    db, lines = tmp_path / "s.db", []
    protocol = clinic_protocol(tmp_path, **{"lens.cylinder": '"plus"'})
    outcome, console_win = run_with_console(window, log=lines.append, db_path=db, protocol_path=protocol, trials=4)
    # the start too, as written in plus cylinder (-1.00 / -0.50 x 180 is -1.50 / +0.50 x 090 by hand)
    assert any(
        line.startswith(
            "full prescription: starting refraction -1.50 / +0.50 x 090 (minus cylinder: -1.00 / -0.50 x 180);"
        )
        for line in lines
    ), lines
    with SessionStore(db, readonly=True) as store:
        records, (result,) = store.trials(outcome.session_id), store.session(outcome.session_id).results
    on_console = [text for win, text in drawn_texts if win is console_win]
    cylinders = [record.cylinder_d for record in records]
    assert any(c < 0 for c in cylinders) and all(c <= 0 for c in cylinders)  # stored in minus cylinder
    trial_lines = [line for line in lines if re.match(r"OD trial +\d+/4 ", line)]
    assert len(trial_lines) == len(records) == 4, lines
    for record, line in zip(records, trial_lines):
        lens = Lens(record.sphere_d, record.cylinder_d, record.axis_deg)
        assert lens.plus_cylinder().format() in on_console
        if lens.cylinder_d < 0:
            assert lens.format() not in on_console
        # the log writes each trial's lens as the clinician set it: in plus cylinder too
        plus = lens.plus_cylinder()
        assert f"S {plus.sphere_d:+.2f} C {plus.cylinder_d:+.2f} x {plus.axis_deg:03.0f}" in line, line
    # and the result in plus cylinder, the stored minus-cylinder form beside it
    stored = Lens(result.sphere_d, result.cylinder_d, result.axis_deg)
    assert any(f": {show_lens(stored, 'plus')}  (minus cylinder: {result.prescription})" in line for line in lines), (
        lines
    )
    # its intervals are of the stored form, and say so beside a plus-cylinder lens
    assert any(line.startswith("95% intervals (minus cylinder): S ") for line in lines), lines


def test_a_lens_is_shown_in_the_protocols_cylinder_convention():
    lens = Lens(-1.25, -0.75, 170.0)
    assert show_lens(lens) == "-1.25 / -0.75 x 170"
    assert show_lens(lens, "plus") == "-2.00 / +0.75 x 080"  # transposed: S + C, -C, axis ± 90
    assert show_lens(Lens(-2.0, 0.5, 90.0)) == "-1.50 / -0.50 x 180"


REFRACTION = REPO / "protocols" / "clinical-refraction.toml"


def test_a_two_parameter_lens_is_shown_in_clinical_notation_at_the_protocols_axis():
    """``[lens] axis_deg``: the signed cylinder of a two-parameter search lies along the patient's
    axis, so its lens is written in clinical notation at that axis, in the protocol's convention
    (the same optical lens: tests/refraction/test_lens.py), and sphere and cylinder without an axis."""
    from lensopt.experiment.line_loop import format_lens
    from lensopt.experiment.protocol_sections import LensSection, show_two_parameter_lens

    at_90 = LensSection(axis_deg=90.0)
    assert show_two_parameter_lens(-0.5, 1.0, at_90) == "+0.50 / -1.00 x 180"  # S + C, -C, axis ± 90
    assert show_two_parameter_lens(-0.5, 1.0, LensSection(axis_deg=90.0, cylinder="plus")) == "-0.50 / +1.00 x 090"
    assert show_two_parameter_lens(-1.25, -0.75, LensSection(axis_deg=180.0)) == "-1.25 / -0.75 x 180"
    assert show_two_parameter_lens(-0.5, 1.0, LensSection()) == "S -0.50 D  C +1.00 D"
    assert format_lens((-0.5, 1.0), at_90) == "+0.50 / -1.00 x 180"  # a duel's or ranking's lens
    assert format_lens(Lens(-1.25, -0.75, 170.0), at_90) == "-1.25 / -0.75 x 170"  # the full prescription's


def test_a_lens_axis_is_refused_outside_its_range_and_with_a_start(tmp_path):
    from lensopt.errors import ProtocolError

    path = write_protocol(tmp_path / "p.toml", source=REFRACTION, **{"lens.axis_deg": "200"})
    with pytest.raises(ProtocolError, match=r"axis_deg must be a number in \[0, 180\], got 200"):
        load_protocol(path)
    path = write_protocol(tmp_path / "p.toml", source=REFRACTION, **{"lens.axis_deg": "0.5"})
    with pytest.raises(
        ProtocolError, match=r"p\.toml: lens\.axis_deg must be 0 \(not given\) or 1-180 degrees, got 0\.5"
    ):
        load_protocol(path)
    path = write_protocol(tmp_path / "p.toml", source=CLINICAL, **{"lens.axis_deg": "90"})
    with pytest.raises(ProtocolError, match=r"lens\.axis_deg .* does not apply to the full prescription"):
        load_protocol(path)


@needs_display
@pytest.mark.parametrize("given_by", ["protocol", "--axis"])
def test_a_two_parameter_session_asks_for_and_reports_its_lenses_at_the_protocols_axis(
    tmp_path, window, drawn_texts, given_by
):
    """The clinician of a two-parameter session (``clinical-refraction.toml`` with ``[lens] axis_deg =
    90``, or ``lensopt run --axis 90``) is asked for every lens in minus-cylinder notation at that
    axis, and the session ends with its best lens in the same notation, rounded to the phoropter;
    the stored protocol keeps the axis, so a resumed session shows its lenses the same way."""
    fields = {
        **FAST,
        "display.window_size_px": "[640, 480]",
        "display.fullscreen": "false",
        "calibration.distance_cm": "300.0",
        "protocol.observer": '"simulated"',
        **({"lens.axis_deg": "90.0"} if given_by == "protocol" else {}),
    }
    db, frames, lines = tmp_path / "s.db", tmp_path / "frames", []
    outcome, console_win = run_with_console(
        window,
        log=lines.append,
        db_path=db,
        protocol_path=write_protocol(tmp_path / "refraction.toml", source=REFRACTION, **fields),
        trials=4,
        frames_dir=frames,
        axis_deg=90.0 if given_by == "--axis" else None,
    )
    assert outcome.status == "finished" and outcome.n_trials == 4
    with SessionStore(db, readonly=True) as store:
        stored = protocol_from_dict(store.session(outcome.session_id).protocol)
    assert stored.lens.axis_deg == 90.0
    with SessionStore(db, readonly=True) as store:
        records = store.trials(outcome.session_id)
    on_console = [text for win, text in drawn_texts if win is console_win]
    for record in records:  # the search's signed cylinder at 90°, written in minus cylinder
        shown = Lens(record.sphere_d, record.cylinder_d, 90.0).minus_cylinder().format()
        assert shown in on_console
        assert any(line.endswith(f"clinician: set lens {shown}") for line in lines)
        as_set = Lens(record.sphere_d, record.cylinder_d, 90.0).minus_cylinder()  # the lens set, as the log writes it
        trial_line = (
            f"  S {diopter_text(as_set.sphere_d)} C {diopter_text(as_set.cylinder_d)} x {as_set.axis_deg:03.0f}  "
        )
        assert any(line.startswith(f"trial {record.index:>3}/4") and trial_line in line for line in lines), lines
    best = next(line for line in lines if line.startswith("best lens"))
    notation = r"(plano|[+-]\d+\.\d\d) / -\d+\.\d\d x \d{3}|[+-]\d+\.\d\d DS|plano"
    found = re.fullmatch(
        rf"best lens: ({notation}); on the phoropter \(0\.25 D steps\): (?P<phoropter>{notation})", best
    )
    assert found, best
    # stored as the session's result: the phoropter's lens in minus cylinder at the axis, for `lensopt print`
    with SessionStore(db, readonly=True) as store:
        (result,) = store.session(outcome.session_id).results
    assert result.prescription == found["phoropter"] and result.n_trials == 4
    assert Lens.parse(result.prescription).is_equivalent(Lens(result.sphere_d, result.cylinder_d, result.axis_deg))
    assert any(line.startswith("confidence ") and line.endswith("(cylinder along 090)") for line in lines), lines
    assert (frames / "trial-001-lens.png").exists()
    assert not any("along the patient's own axis" in line for line in lines)  # an axis given: no such note


@needs_display
def test_a_two_parameter_session_without_an_axis_says_along_which_axis_its_cylinders_lie(tmp_path, window):
    """Without an axis the console asks for sphere and a signed cylinder; the log says they lie along
    the patient's own axis, how to see them in clinical notation, and — before the first letter, not
    at the end — that a cylinder found without an axis is no prescription."""
    fields = {**FAST, "display.window_size_px": "[640, 480]", "display.fullscreen": "false"}
    fields.update({"calibration.distance_cm": "300.0", "protocol.observer": '"simulated"'})
    lines: list = []
    run_with_console(
        window,
        log=lines.append,
        db_path=tmp_path / "s.db",
        protocol_path=write_protocol(tmp_path / "refraction.toml", source=REFRACTION, **fields),
        trials=2,
    )
    assert any(
        line.startswith("lenses are shown as sphere and a signed cylinder along the patient's own axis")
        and "--axis DEG" in line
        and line.endswith("an end point with a cylinder is an estimate, not a prescription (no axis to print)")
        for line in lines
    ), lines


def _answer_lines(answers, **state):
    """The console's line(s) of last answers as pyglet lays them out, in the clinical console's size."""
    from psychopy import visual

    from lensopt.experiment.console import ClinicianConsole

    win = visual.Window(size=(900, 640), units="pix", checkTiming=False, winType="pyglet")
    try:
        console = ClinicianConsole(win)
        console.update(answers=answers, **state)
        layout = console.history._pygletTextObj
        text = layout.document.text
        return [text[line.start : line.start + line.length] for line in layout._get_lines()]
    finally:
        win.close()


@needs_display
def test_the_last_answers_of_three_digit_trials_fit_one_line_of_the_console():
    # pyglet lays the text out for real: "81: D>D ok" alone on a second line was the bug
    answers = [("Q", "Q", "ok"), ("O", "O", "ok"), ("K", "O", "x"), ("X", "K", "x"), ("D", "P", "x"), ("W", "W", "ok")]
    listed = tuple(f"{k}: {shown}>{named} {mark}" for k, (shown, named, mark) in enumerate(answers, start=115))
    lines = _answer_lines(listed, trial_index=121, n_trials=140)
    assert len(lines) == 1, lines
    shown = lines[0].replace("\u00a0", " ").removeprefix("Last answers:").strip().split("   ")
    assert shown == list(listed[-LAST_ANSWERS_SHOWN:])  # the latest, in order


@needs_display
def test_a_line_of_answers_too_wide_for_the_console_wraps_between_answers_never_inside_one():
    # answers wider than any trial's ("20:" above "W>W ok" was the bug): each line holds whole answers
    listed = tuple(f"{k}: QUITE-LONG>ANSWER ok" for k in range(15, 15 + LAST_ANSWERS_SHOWN))
    lines = _answer_lines(listed, trial_index=20, n_trials=20)
    assert len(lines) > 1  # it does wrap
    shown = [line.replace("\u00a0", " ").removeprefix("Last answers:").strip() for line in lines]
    entries = [entry for line in shown for entry in line.split("   ")]  # answers are three spaces apart
    assert entries == list(listed)


@needs_display
def test_the_confidence_so_far_says_where_the_session_stops():
    lines = _answer_lines((), confidence=0.884, confidence_target=0.95)
    text = "".join(lines).replace("\u00a0", " ")
    assert f"Confidence so far: {confidence_text(0.884, 0.95)} (stops at 0.95)" in text
    assert "stops at" not in "".join(_answer_lines((), confidence=0.884))  # no rule, no stop named


@needs_display
def test_a_break_shows_no_lens_on_the_console(tmp_path, window, console_states):
    """At a break the console lists its keys, not the last trial's lens, which would read as the next
    lens to set; the next trial shows its own lens again."""
    protocol = clinic_protocol(tmp_path, **{"breaks.every_trials": "2"})
    outcome, _ = run_with_console(window, db_path=tmp_path / "s.db", protocol_path=protocol, trials=5)
    assert outcome.status == "finished"
    breaks = [s for s in console_states if s.heading.startswith("Break:")]
    assert len(breaks) >= 2 and all(s.lens_text == "" for s in breaks)
    after = console_states[console_states.index(breaks[0]) + 1 :]
    assert any(s.lens_text for s in after if s.trial_index == 3)


def test_the_lens_prompt_leaves_the_console_as_soon_as_the_lens_is_set(tmp_path, window, console_states, monkeypatch):
    """Through the fixation the console still said "Set this lens …, then press SPACE" (the key that
    is also the patient's pass): a clinician whose press seemed not taken pressed again, onto the
    letter. From the press on, the console shows the trial's letter and answer keys."""
    import lensopt.experiment.loop_screens as loop_screens

    at_fixation = []
    real_sleep = loop_screens.time.sleep

    def sleep(seconds):
        if seconds == pytest.approx(0.05):  # the fixation's wait: what does the console say meanwhile?
            at_fixation.append(console_states[-1])
        real_sleep(seconds)

    monkeypatch.setattr(loop_screens.time, "sleep", sleep)
    protocol = clinic_protocol(tmp_path, **{"timing.fixation_s": "0.05"})
    outcome, _ = run_with_console(window, db_path=tmp_path / "s.db", protocol_path=protocol, trials=3)
    assert outcome.status == "finished" and len(at_fixation) == 3
    for state in at_fixation:
        assert state.heading.startswith("Letter ") and "type the letter the patient names" in state.heading, state
        assert "the lens is set" not in state.keys_text
