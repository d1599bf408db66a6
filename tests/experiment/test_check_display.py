"""What `lensopt run` says when PsychoPy cannot start for a reason other than the display (found by a
user audit: a read-only home folder and a locale without UTF-8 were said to be "no display", under
xvfb-run already)."""

import errno
import importlib.machinery
import types

import pytest

from lensopt.errors import LensoptError
from lensopt.experiment.windows import check_display


def _psychopy_failing_with(monkeypatch, error: Exception) -> None:
    """``from psychopy import visual`` raises ``error``, as PsychoPy's start-up did."""

    def fail(name):
        raise error

    fake = types.ModuleType("psychopy")
    fake.__spec__ = importlib.machinery.ModuleSpec("psychopy", None)  # installed, as far as find_spec sees
    fake.__getattr__ = fail  # module __getattr__ (PEP 562)
    monkeypatch.setitem(__import__("sys").modules, "psychopy", fake)
    monkeypatch.setenv("DISPLAY", ":99")


def test_a_read_only_home_folder_is_named_with_its_fix(monkeypatch):
    _psychopy_failing_with(monkeypatch, OSError(errno.EROFS, "Read-only file system", "/home/p/.psychopy3"))
    with pytest.raises(LensoptError) as refused:
        check_display()
    assert str(refused.value) == (
        "PsychoPy cannot write its settings folder /home/p/.psychopy3 (Read-only file system): make the home "
        "folder writable, or set HOME to a folder that is"
    )


def test_a_locale_without_utf8_is_named_with_its_fix(monkeypatch):
    _psychopy_failing_with(monkeypatch, UnicodeDecodeError("ascii", b"\xc2", 0, 1, "ordinal not in range(128)"))
    with pytest.raises(LensoptError, match=r"set a UTF-8 locale \(LANG=C.UTF-8\) or PYTHONUTF8=1$"):
        check_display()


def test_a_display_that_refuses_is_still_said_to_be_the_display(monkeypatch):
    _psychopy_failing_with(monkeypatch, RuntimeError("Could not connect to display :99"))
    with pytest.raises(LensoptError, match="no display"):
        check_display()
