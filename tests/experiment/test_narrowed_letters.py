"""A new session whose screen set-up shows fewer letter sizes than its protocol asks for says so to
the clinician (a note on the terminal), not only in the session log."""

import pytest

from experiment_helpers import FAST, needs_display, write_protocol
from lensopt.experiment.calibration import Calibration, narrowed_letters_note
from lensopt.experiment.session import RunRequest, run_session
from lensopt.store import SessionStore


def test_the_note_names_each_narrowed_end_and_what_shows_the_rest():
    note = narrowed_letters_note((-0.3, 1.0), (-0.3, 0.63), fullscreen=False)
    assert (
        note
        == "the largest letter shown is logMAR +0.63, not +1.00 as the protocol asks (the chart full screen shows them)"
    )
    both = narrowed_letters_note((-0.5, 1.0), (-0.2, 0.9), fullscreen=True)
    assert "largest letter shown is logMAR +0.90, not +1.00" in both and "calibration.distance_cm" in both
    assert "the smallest is logMAR -0.20, not -0.50" in both
    assert narrowed_letters_note((-0.3, 1.0), (-0.3, 1.0), fullscreen=False) is None
    # narrowed by less than the note's two decimals: no note (it said "+1.74, not +1.74")
    assert narrowed_letters_note((1.6, 1.74), (1.6, 1.7396), fullscreen=False) is None
    assert narrowed_letters_note((-0.3, 1.0), (-0.2996, 1.0), fullscreen=False) is None


@needs_display
def test_a_window_too_small_for_the_largest_letters_is_noted_with_the_size_it_shows(tmp_path, window):
    """The protocol's 400 x 300 px window at the demo's 3 m draws letters up to a size its height
    allows (hand values: 1 logMAR is 50 arcmin, 158 px; 1.7 logMAR 793 px): the note gives that
    size, the one the log and the stored settings give."""
    protocol = write_protocol(tmp_path / "p.toml", **FAST, **{"optimizer.letter_bounds_logmar": "[-0.3, 1.7]"})
    notes, lines = [], []
    outcome = run_session(
        RunRequest(db_path=tmp_path / "s.db", protocol_path=protocol, participant="p", seed=3, trials=2),
        log=lines.append,
        warn=notes.append,
        window=window,
    )
    assert outcome.status == "finished"
    with SessionStore(tmp_path / "s.db", readonly=True) as store:
        low, high = store.session(outcome.session_id).optimizer_settings["letter_bounds_logmar"]
    cal = Calibration(screen_width_cm=53.0, screen_width_px=1920, screen_height_px=1080, distance_cm=300.0)
    assert 1.0 < high < 1.7 and cal.letter_height_px(high) < 300 < cal.letter_height_px(1.7)
    (note,) = [n for n in notes if "largest letter" in n]
    assert note.startswith(f"the largest letter shown is logMAR {high:+.2f}, not +1.70 as the protocol asks")
    assert any(f"letters shown from {low:+.2f} to {high:+.2f}" in line for line in lines)


@pytest.mark.parametrize("fullscreen", [False, True])
def test_no_note_when_every_size_asked_is_shown(fullscreen):
    assert narrowed_letters_note((0.0, 0.5), (0.0, 0.5), fullscreen) is None
