"""Where ``lensopt run --dashboard`` opens the clinician's dashboard: beside the console, never over it.

The dashboard (a Qt window of its own process) opened at the top left of the console's screen,
1500 × 950 px, right over the console (900 × 640 px at that same top left): the clinician lost the
lens to set until they moved a window, and the keyboard went to the dashboard. Here its place is
the largest free rectangle of the console's screen once the console (and, on a shared screen, the
patient's window) is kept clear; the dashboard opens there without taking the keyboard
(``lensopt dashboard --geometry … --no-activate``). Also whether ``[screens]`` places the patient's
window or the console beyond its screen (:func:`off_screen_problem`). Pure geometry, in the screen's
pixels from its top left, as ``[screens]`` and PsychoPy place windows; no display needed.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from dataclasses import dataclass

from lensopt.experiment.console import console_size_and_pos, wants_console
from lensopt.experiment.protocol import Protocol

#: The smallest place for the dashboard (px) where its panels, legends and summary stay readable
#: (its screenshots at 900 × 800 and 1540 × 736: yes; at its own minimum, 664 × 628, the summary's
#: lines overlap). A 1920 × 1080 screen shared with the patient's window and the console, or a
#: 1280 × 1024 console screen, has no such place: the dashboard opens minimized.
MIN_DASHBOARD_PX = (900, 720)
#: Room kept for a window's title bar (px) below a window the dashboard must not cover, and taken off
#: the dashboard's own height: a window manager draws it outside the size asked (side borders are a
#: few px, and windows side by side already leave them).
FRAME_PX = 32


@dataclass(frozen=True)
class Rect:
    """A window's rectangle on its screen, px from the screen's top left."""

    left_px: int
    top_px: int
    width_px: int
    height_px: int

    @property
    def right_px(self) -> int:
        return self.left_px + self.width_px

    @property
    def bottom_px(self) -> int:
        return self.top_px + self.height_px

    def overlaps(self, other: Rect) -> bool:
        return (
            self.left_px < other.right_px
            and other.left_px < self.right_px
            and self.top_px < other.bottom_px
            and other.top_px < self.bottom_px
        )


@dataclass(frozen=True)
class DashboardPlace:
    """The dashboard's screen, its rectangle there, and the screen's top left on the desktop
    (``origin_px``: where the screens' numbers may differ, Qt's from pyglet's, the desktop's
    coordinates name one place for both)."""

    screen: int
    rect: Rect
    origin_px: tuple[int, int] = (0, 0)

    @property
    def desktop_geometry(self) -> str:
        """The rectangle on the desktop as X11 writes it, ``WIDTHxHEIGHT+LEFT+TOP``
        (``lensopt dashboard --geometry``)."""
        r = self.rect
        return f"{r.width_px}x{r.height_px}+{r.left_px + self.origin_px[0]}+{r.top_px + self.origin_px[1]}"


def largest_free_rect(
    screen_px: tuple[int, int], occupied: Sequence[Rect], min_px: tuple[int, int] = MIN_DASHBOARD_PX
) -> Rect | None:
    """The largest rectangle of a ``screen_px`` (width, height) screen that overlaps none of
    ``occupied`` and is at least ``min_px``, or None. A largest free rectangle has each edge on the
    screen's edge or on an occupied rectangle's, so those edges are the only candidates tried."""
    width_px, height_px = screen_px

    def clip(value: int, limit: int) -> int:
        return min(max(value, 0), limit)

    lefts = {0, *(clip(r.right_px, width_px) for r in occupied)}
    rights = {width_px, *(clip(r.left_px, width_px) for r in occupied)}
    tops = {0, *(clip(r.bottom_px, height_px) for r in occupied)}
    bottoms = {height_px, *(clip(r.top_px, height_px) for r in occupied)}
    best: Rect | None = None
    for left in lefts:
        for right in (r for r in rights if r - left >= min_px[0]):
            for top in tops:
                for bottom in (b for b in bottoms if b - top >= min_px[1]):
                    candidate = Rect(left, top, right - left, bottom - top)
                    area = candidate.width_px * candidate.height_px
                    if (best is None or area > best.width_px * best.height_px) and not any(
                        candidate.overlaps(r) for r in occupied
                    ):
                        best = candidate
    return best


def _framed(rect: Rect) -> Rect:
    """``rect`` with room for its window's title bar below it (:data:`FRAME_PX`)."""
    return dataclasses.replace(rect, height_px=rect.height_px + FRAME_PX)


def patient_pos_px(protocol: Protocol, fullscreen: bool) -> tuple[int, int] | None:
    """Where the patient's window opens (px from its screen's top left): ``[screens] patient_pos_px``,
    else the top left when a console shares its windowed screen (the console goes to its right),
    else None (PsychoPy's choice)."""
    screens = protocol.screens
    if screens.patient_pos_px is None and wants_console(protocol) and screens.console == screens.patient:
        return None if fullscreen else (0, 0)
    return screens.patient_pos_px


def dashboard_place(
    protocol: Protocol, fullscreen: bool, sizes_px: Sequence[tuple[int, int]] | None
) -> DashboardPlace | None:
    """Where the dashboard of a session of ``protocol`` opens on a display of screens ``sizes_px``
    ((width, height) each; None: unknown), its patient window ``fullscreen`` or not — ``protocol``
    placed on this display as the windows are (:func:`lensopt.experiment.windows.side_by_side`).

    With a console: on the console's screen, clear of the console and of a patient window sharing
    that screen. Without one (a research session): on a screen the patient's window is not on, whole;
    else beside a windowed patient display. None when there is no room of :data:`MIN_DASHBOARD_PX`
    (it opens minimized) or no screen sizes are known."""
    if not sizes_px:
        return None
    screens, display = protocol.screens, protocol.display
    if wants_console(protocol):
        screen = screens.console
        size, pos = console_size_and_pos(
            screens, dataclasses.replace(display, fullscreen=fullscreen), display.window_size_px
        )
        occupied = [_framed(Rect(*(pos or (0, 0)), *size))]
    else:
        others = [n for n in range(len(sizes_px)) if n != screens.patient]
        screen, occupied = (others[0], []) if others else (screens.patient, [])
    if screen >= len(sizes_px):
        return None
    if screen == screens.patient:
        if fullscreen:
            return None  # the patient's chart fills the screen
        width_px, height_px = display.window_size_px
        screen_width_px, screen_height_px = sizes_px[screen]
        # PsychoPy centres a window it is given no place for
        centred = ((screen_width_px - width_px) // 2, (screen_height_px - height_px) // 2)
        occupied.append(_framed(Rect(*(patient_pos_px(protocol, fullscreen) or centred), width_px, height_px)))
    free = largest_free_rect(sizes_px[screen], occupied, (MIN_DASHBOARD_PX[0], MIN_DASHBOARD_PX[1] + FRAME_PX))
    if free is None:
        return None
    return DashboardPlace(screen, dataclasses.replace(free, height_px=free.height_px - FRAME_PX))


def off_screen_problem(protocol: Protocol, fullscreen: bool, sizes_px: Sequence[tuple[int, int]] | None) -> str | None:
    """The one-line problem of a window that ``[screens]`` places beyond its screen on a display of
    screens ``sizes_px`` ((width, height) each; None: unknown, nothing is said), else None: a
    windowed patient display at ``patient_pos_px``, or the console at ``console_pos_px`` or beside
    the patient's window. ``protocol`` is placed on this display as the windows are
    (:func:`lensopt.experiment.windows.side_by_side`). ``patient_pos_px = [32768, 32768]`` opened
    the patient's window where nobody could see it, its letters too. A window larger than its screen
    names its size's field: a console wider than the screen was said to run off it at a size cut to
    the screen's, with advice to move it that could not help."""
    if not sizes_px:
        return None
    screens, display = protocol.screens, protocol.display
    windows = []
    if not fullscreen and screens.patient_pos_px is not None:
        windows.append(
            (
                "patient window",
                "display.window_size_px",
                screens.patient,
                tuple(screens.patient_pos_px),
                display.window_size_px,
            )
        )
    beside = screens.console == screens.patient and not fullscreen
    if wants_console(protocol) and (screens.console_pos_px is not None or beside):
        size, pos = console_size_and_pos(
            screens, dataclasses.replace(display, fullscreen=fullscreen), display.window_size_px
        )
        windows.append(("console", "screens.console_size_px", screens.console, pos or (0, 0), size))
    for name, size_field, screen, (left_px, top_px), size_px in windows:
        if screen >= len(sizes_px):
            continue
        screen_width_px, screen_height_px = sizes_px[screen]
        if int(size_px[0]) > screen_width_px or int(size_px[1]) > screen_height_px:  # no place would show it whole
            return (
                f"the {name} ({int(size_px[0])} × {int(size_px[1])} px) is larger than screen {screen} "
                f"({screen_width_px} × {screen_height_px} px), where nobody would see all of it; set {size_field} "
                f"within [{screen_width_px}, {screen_height_px}]"
            )
        width_px, height_px = int(size_px[0]), int(size_px[1])
        if left_px + width_px <= screen_width_px and top_px + height_px <= screen_height_px:
            continue
        room = f"[{screen_width_px - width_px}, {screen_height_px - height_px}]"
        if name == "patient window":
            fix = f"set screens.patient_pos_px within {room}"
        elif screens.console_pos_px is not None:
            fix = f"set screens.console_pos_px within {room}"
        else:
            fix = "move screens.patient_pos_px left or give screens.console_pos_px"
        return (
            f"the {name} ({width_px} × {height_px} px at [{left_px}, {top_px}]) runs off screen {screen} "
            f"({screen_width_px} × {screen_height_px} px), where nobody would see all of it; {fix}"
        )
    return None
