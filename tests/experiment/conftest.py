"""Fixtures for the experiment tests: a fast protocol file and a small PsychoPy window.

Window tests skip, saying why, when there is no X display; run them with
``xvfb-run -a -s "-screen 0 1920x1080x24" .venv/bin/python -m pytest tests/experiment``.
"""

import os

import pytest

from experiment_helpers import FAST, write_protocol


@pytest.fixture
def fast_protocol(tmp_path):
    return write_protocol(tmp_path / "fast.toml", **FAST)


@pytest.fixture(scope="module")
def window():
    """One small PsychoPy window (units pix, white) shared by a module's tests."""
    if not os.environ.get("DISPLAY"):
        pytest.skip("needs an X display for a PsychoPy window: run under xvfb-run")
    from psychopy import logging, visual

    logging.console.setLevel(logging.ERROR)
    win = visual.Window(
        size=(800, 600), units="pix", color="white", colorSpace="named", checkTiming=False, winType="pyglet"
    )
    yield win
    win.close()


@pytest.fixture
def drawn_texts(monkeypatch):
    """Every ``(window, text)`` a TextStim draws during the test."""
    from psychopy import visual

    drawn = []
    original = visual.TextStim.draw

    def draw(self, *args, **kwargs):
        drawn.append((self.win, self.text))
        return original(self, *args, **kwargs)

    monkeypatch.setattr(visual.TextStim, "draw", draw)
    return drawn


@pytest.fixture
def console_states(monkeypatch):
    """Every :class:`~lensopt.experiment.console.ConsoleState` the clinician's console draws, in order."""
    from lensopt.experiment.console import ClinicianConsole

    shown = []
    original = ClinicianConsole.draw

    def draw(self):
        shown.append(self.state)
        return original(self)

    monkeypatch.setattr(ClinicianConsole, "draw", draw)
    return shown
