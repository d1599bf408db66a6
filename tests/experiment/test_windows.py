"""Where the session's windows go on the display it has: the console never on the patient's chart."""

import dataclasses

import pytest

from experiment_helpers import REPO
from lensopt.cli import main
from lensopt.experiment.protocol import load_protocol
from lensopt.experiment.protocol_sections import ScreensSection
from lensopt.experiment.windows import console_over_the_chart, on_this_display, screen_count

CLINICAL = REPO / "protocols" / "clinical-prescription.toml"


def clinical(**screens):
    protocol = load_protocol(CLINICAL)
    return dataclasses.replace(protocol, screens=dataclasses.replace(protocol.screens, **screens))


@pytest.mark.parametrize(
    ("screens", "n_screens", "fullscreen", "over"),
    [
        ({"patient": 0, "console": 1}, 2, True, False),  # the clinic: a screen each
        ({"patient": 0, "console": 1}, 1, True, True),  # the second screen missing: the console lands on the chart
        ({"patient": 0, "console": 0}, 2, True, True),  # one screen named for both
        ({"patient": 0, "console": 1}, 1, False, False),  # a windowed chart: the console beside it
        ({"patient": 0, "console": 1}, None, True, False),  # a display that cannot say: as named
    ],
)
def test_a_console_is_over_the_chart_only_when_it_shares_the_full_screen_patient_window(
    screens, n_screens, fullscreen, over
):
    problem = console_over_the_chart(clinical(**screens), fullscreen, n_screens)
    assert (problem is not None) == over
    if over:
        assert "full-screen chart" in problem and "fullscreen = false" in problem and "\n" not in problem


def test_a_protocol_without_a_clinician_has_no_console_to_misplace():
    protocol = load_protocol(REPO / "protocols" / "demo-simulated.toml")
    assert not protocol.lens.prompt
    assert console_over_the_chart(protocol, True, 1) is None


def test_a_screen_the_display_lacks_is_its_first_and_the_stored_protocol_keeps_the_screens_named():
    protocol = clinical(patient=0, console=1)
    placed = on_this_display(protocol, 1)
    assert (placed.screens.patient, placed.screens.console) == (0, 0)
    assert protocol.screens == ScreensSection(**{**dataclasses.asdict(protocol.screens)})  # unchanged
    assert (protocol.screens.patient, protocol.screens.console) == (0, 1)
    assert on_this_display(protocol, 2) is protocol and on_this_display(protocol, None) is protocol


def test_a_patient_session_whose_console_would_cover_the_chart_is_refused_and_creates_nothing(tmp_path, capsys):
    """On this one-screen display the clinical protocol's console (screen 1) would land on the
    full-screen chart: a session with a person answering is refused before anything is stored."""
    if screen_count() != 1:
        pytest.skip("needs a display of one screen (Xvfb)")
    db = tmp_path / "sessions.db"
    args = ["run", "--protocol", str(CLINICAL), "--participant", "P001", "--eye", "OD", "--db", str(db)]
    code = main([*args, "--start", "-1.00 / -0.50 x 180"])
    err = capsys.readouterr().err
    assert code == 2 and err.count("\n") == 1 and "Traceback" not in err, err
    assert "only 1 screen" in err and "full-screen chart" in err
    assert not db.exists()
