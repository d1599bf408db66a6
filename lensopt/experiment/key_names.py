"""The key names PsychoPy's keyboard reports, which a protocol's ``[keys]`` may name.

``psychopy.event`` (:class:`lensopt.experiment.keyboard.KeyboardSource`) names a key press by
pyglet's name of its key symbol (``pyglet.window.key.symbol_string``), lower case, without a
leading underscore (``_1`` is ``"1"``), ``enter`` reported as ``"return"`` (``psychopy.event._onPygletKey``).
:data:`PSYCHOPY_KEY_NAMES` lists those names, written out (pyglet's table ``pyglet.window.key._key_names``
cannot be imported without a display, and the protocol is read where PsychoPy is not installed);
``tests/experiment/test_key_names.py`` holds it equal to the installed pyglet's table. A key named
outside it would never be reported: a ``[keys] quit = "notakey"`` left the clinician no quit key.
"""

from __future__ import annotations

PSYCHOPY_KEY_NAMES = frozenset(
    """
    0 1 2 3 4 5 6 7 8 9 a b c d e f g h i j k l m n o p q r s t u v w x y z
    ampersand apostrophe asciicircum asciitilde asterisk at backslash backspace bar begin braceleft
    braceright bracketleft bracketright break cancel capslock clear colon comma delete dollar
    doublequote down end equal escape exclamation execute
    f1 f2 f3 f4 f5 f6 f7 f8 f9 f10 f11 f12 f13 f14 f15 f16 f17 f18 f19 f20
    find function greater help home insert lalt lcommand lctrl left less linefeed lmeta loption
    lshift lwindows menu minus
    num_0 num_1 num_2 num_3 num_4 num_5 num_6 num_7 num_8 num_9 num_add num_begin num_decimal
    num_delete num_divide num_down num_end num_enter num_equal num_f1 num_f2 num_f3 num_f4 num_home
    num_insert num_left num_multiply num_page_down num_page_up num_right num_separator num_space
    num_subtract num_tab num_up numlock
    pagedown pageup parenleft parenright pause percent period plus pound print question quoteleft
    ralt rcommand rctrl redo return right rmeta roption rshift rwindows scriptswitch scrolllock
    select semicolon slash space sysreq tab underscore undo up
    """.split()  # noqa: SIM905 - 172 names, read more easily as text
)
"""Every key name ``psychopy.event.getKeys`` reports (pyglet 1.5's key symbols, as PsychoPy names them)."""

#: Names a refusal offers as examples of valid keys.
EXAMPLE_KEY_NAMES = ("space", "escape", "return", "backspace", "slash", "q", "1", "f1", "num_1")


def key_name_problem(field: str, value: object) -> str | None:
    """The one-line problem of ``value`` as the key of ``[keys] field``, else None: it must be a name
    in :data:`PSYCHOPY_KEY_NAMES`."""
    if isinstance(value, str) and value in PSYCHOPY_KEY_NAMES:
        return None
    examples = ", ".join(repr(k) for k in EXAMPLE_KEY_NAMES)
    return (
        f"{field} must be a PsychoPy key name (lower case), such as {examples}, got {value!r}, which no "
        "key reports (every name: lensopt.experiment.key_names.PSYCHOPY_KEY_NAMES)"
    )
