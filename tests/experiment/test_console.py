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
from lensopt.experiment.console import console_size_and_pos
from lensopt.experiment.protocol import load_protocol
from lensopt.experiment.protocol_sections import DisplaySection, ScreensSection, show_lens
from lensopt.experiment.session import RunRequest, run_session
from lensopt.refraction.lens import Lens
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
        **fields,
    }
    return write_protocol(tmp_path / "clinic.toml", source=CLINICAL, **clinic)


@needs_display
def test_the_patient_window_holds_no_lens_text_and_the_console_shows_each_lens(tmp_path, window, drawn_texts):
    from psychopy import visual

    console_win = visual.Window(
        size=(900, 640), pos=(700, 0), units="pix", color=(-0.85, -0.85, -0.8), checkTiming=False, winType="pyglet"
    )
    db, frames, lines = tmp_path / "s.db", tmp_path / "frames", []
    try:
        outcome = run_session(
            RunRequest(
                db_path=db,
                protocol_path=clinic_protocol(tmp_path),
                participant="P1",
                seed=3,
                trials=6,
                frames_dir=frames,
            ),
            log=lines.append,
            window=window,
            console_window=console_win,
        )
    finally:
        console_win.close()
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
    from psychopy import visual

    console_win = visual.Window(
        size=(900, 640), pos=(700, 0), units="pix", color=(-0.85, -0.85, -0.8), checkTiming=False, winType="pyglet"
    )
    db = tmp_path / "s.db"
    try:
        outcome = run_session(
            RunRequest(
                db_path=db,
                protocol_path=clinic_protocol(tmp_path, **{"lens.cylinder": '"plus"'}),
                participant="P1",
                seed=3,
                trials=4,
            ),
            log=lambda line: None,
            window=window,
            console_window=console_win,
        )
    finally:
        console_win.close()
    with SessionStore(db, readonly=True) as store:
        records = store.trials(outcome.session_id)
    on_console = [text for win, text in drawn_texts if win is console_win]
    cylinders = [record.cylinder_d for record in records]
    assert any(c < 0 for c in cylinders) and all(c <= 0 for c in cylinders)  # stored in minus cylinder
    for record in records:
        lens = Lens(record.sphere_d, record.cylinder_d, record.axis_deg)
        assert lens.plus_cylinder().format() in on_console
        if lens.cylinder_d < 0:
            assert lens.format() not in on_console


def test_a_lens_is_shown_in_the_protocols_cylinder_convention():
    lens = Lens(-1.25, -0.75, 170.0)
    assert show_lens(lens) == "-1.25 / -0.75 x 170"
    assert show_lens(lens, "plus") == "-2.00 / +0.75 x 080"  # transposed: S + C, -C, axis ± 90
    assert show_lens(Lens(-2.0, 0.5, 90.0)) == "-1.50 / -0.50 x 180"
