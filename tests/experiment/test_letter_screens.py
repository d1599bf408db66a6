"""The letter task's instructions: the letters a patient may name, named when they are not all 26."""

import pytest

from experiment_helpers import FAST, REPO, needs_display, write_protocol
from lensopt.experiment.keyboard import InjectedKeySource
from lensopt.experiment.letter_screens import possible_letters
from lensopt.experiment.loop_screens import Screens
from lensopt.experiment.session import RunRequest, run_session


@pytest.mark.parametrize(
    ("alphabet", "said"),
    [
        ("ABCDEFGHIJKLMNOPQRSTUVWXYZ", "26 possible letters"),
        ("CDHKNORSVZ", "one of the 10 letters C D H K N O R S V Z"),
        ("EF", "one of the 2 letters E F"),
    ],
)
def test_the_letters_a_patient_may_name_are_listed_unless_they_are_all_26(alphabet, said):
    assert possible_letters(alphabet) == said


@needs_display
def test_the_sloan_tasks_instructions_name_its_ten_letters(tmp_path, window, monkeypatch):
    """Its model's guess rate, 1/10, assumes the patient knows the set; "(10 possible letters)" did
    not say which, and a key outside them did nothing."""
    shown = []
    message = Screens._message

    def recording(self, text, *args, **kwargs):
        shown.append(text)
        return message(self, text, *args, **kwargs)

    monkeypatch.setattr(Screens, "_message", recording)
    fields = {**FAST, "optimizer.letter_bounds_logmar": "[0.0, 1.0]"}  # what the small test window draws
    protocol = write_protocol(tmp_path / "sloan.toml", REPO / "protocols" / "sloan-10afc.toml", **fields)
    request = RunRequest(db_path=tmp_path / "s.db", protocol_path=protocol, participant="P1", trials=1, seed=3)
    outcome = run_session(request, responses=InjectedKeySource(["space", "c"]), log=lambda _: None, window=window)
    assert outcome.status == "finished"
    (start,) = [text for text in shown if "Press its key" in text]
    assert "Press its key (one of the 10 letters C D H K N O R S V Z)." in start
