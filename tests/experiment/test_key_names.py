"""The key names a protocol's [keys] may use: those PsychoPy's keyboard reports, and no other."""

import importlib.util
import runpy
import tomllib
from pathlib import Path

import pytest

from experiment_helpers import write_protocol
from lensopt.errors import ProtocolError
from lensopt.experiment.clinician_keys import ENTRY_ACCEPT, ENTRY_CANCEL, ENTRY_CHARACTERS, ENTRY_DELETE
from lensopt.experiment.key_names import EXAMPLE_KEY_NAMES, PSYCHOPY_KEY_NAMES
from lensopt.experiment.protocol import load_protocol, protocol_from_dict
from lensopt.experiment.protocol_sections import KeysSection


def _pyglet_key_names() -> set[str]:
    """The names ``psychopy.event`` gives key presses: pyglet's key symbol names (read from its
    ``pyglet/window/key.py``, which ``import pyglet.window`` would need a display for), lower case,
    without a leading underscore, ``enter`` as ``return`` (``psychopy.event._onPygletKey``)."""
    spec = importlib.util.find_spec("pyglet")
    if spec is None or spec.origin is None:
        pytest.skip("pyglet (PsychoPy's window library) is not installed")
    table = runpy.run_path(str(Path(spec.origin).parent / "window" / "key.py"))["_key_names"]
    names = {name.lower().lstrip("_") for name in table.values()}
    return {"return" if name == "enter" else name for name in names}


def test_the_written_out_key_names_are_the_installed_pyglets_as_psychopy_reports_them():
    assert _pyglet_key_names() == PSYCHOPY_KEY_NAMES


def test_every_key_lensopt_itself_waits_for_is_a_key_name():
    defaults = KeysSection()
    named = {getattr(defaults, f.name) for f in defaults.__dataclass_fields__.values() if f.name != "lenses"}
    waited = {*ENTRY_CHARACTERS, ENTRY_ACCEPT, ENTRY_CANCEL, ENTRY_DELETE, *defaults.lenses, *named}
    assert waited <= PSYCHOPY_KEY_NAMES
    assert set(EXAMPLE_KEY_NAMES) <= PSYCHOPY_KEY_NAMES


@pytest.mark.parametrize(
    "field, value",
    [("quit", '"notakey"'), ("pause", '"esc"'), ("confirm", '"enter"'), ("note", '"F1"'), ("undo", '"num1"')],
)
def test_a_key_no_keyboard_reports_is_refused_in_one_line_naming_it_and_some_valid_ones(tmp_path, field, value):
    """``[keys] quit = "notakey"`` was accepted (only a pattern was checked): the clinician had no quit key."""
    path = write_protocol(tmp_path / "p.toml", **{f"keys.{field}": value})
    with pytest.raises(ProtocolError) as refused:
        load_protocol(path)
    message = str(refused.value)
    assert "\n" not in message
    assert (
        f"keys.{field} must be a PsychoPy key name" in message and f"got {value.replace(chr(34), chr(39))}" in message
    )
    assert "'space', 'escape', 'return'" in message


def test_a_lens_key_no_keyboard_reports_is_named(tmp_path):
    path = write_protocol(tmp_path / "p.toml", **{"keys.lenses": '["1", "2", "three"]'})
    with pytest.raises(
        ProtocolError, match=r"keys\.lenses must be 2 to 4 PsychoPy key names.*\('three' is no PsychoPy key name\)"
    ):
        load_protocol(path)


@pytest.mark.parametrize("value", ['"slash"', '"f12"', '"num_enter"', '"return"', '"9"'])
def test_keys_psychopy_reports_are_accepted(tmp_path, value):
    assert load_protocol(write_protocol(tmp_path / "p.toml", **{"keys.quit": value})).keys.quit == value.strip('"')


def test_a_stored_sessions_protocol_with_a_key_no_keyboard_reports_still_loads(tmp_path):
    """A session stored before key names were checked resumes with the protocol it ran (rebuilt by
    protocol_from_dict from its stored tables; its other keys still work); only a protocol file is
    held to the names."""
    path = write_protocol(tmp_path / "p.toml", **{"keys.quit": '"notakey"'})
    stored = protocol_from_dict(tomllib.loads(path.read_text()), source="session 7")
    assert stored.keys.quit == "notakey"
    assert "keys.quit must be a PsychoPy key name" in (stored.keys.unknown_key_problem() or "")
    with pytest.raises(ProtocolError, match=r"keys\.quit must be a PsychoPy key name"):
        load_protocol(path)
