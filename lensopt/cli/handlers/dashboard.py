"""``lensopt dashboard``'s handler: the clinician's live view of a session, or its report (its
options: :mod:`lensopt.cli.dashboard`). PyQt5 is imported only when a window opens
(:func:`_run_window`): a report needs no Qt."""

from __future__ import annotations

import os
import signal
import sys
from dataclasses import dataclass
from pathlib import Path

from lensopt.cli.arguments import check_database_not_a_folder
from lensopt.dashboard.fonts import use_text_families
from lensopt.dashboard.model import followed_from_store, session_model_class
from lensopt.dashboard.report import write_report
from lensopt.errors import LensoptError, StoreError
from lensopt.store import SessionStore, check_not_the_database, default_db_path

#: Qt platforms that need no display server.
HEADLESS_PLATFORMS = ("offscreen", "minimal", "vnc")
#: Milliseconds between two chances for Python to handle Ctrl+C while the window is open.
SIGNAL_CHECK_MS = 200


def _check_output(path_text: str, option: str, suffixes: tuple[str, ...]) -> Path:
    path = Path(path_text).expanduser()
    if path_text.endswith(("/", os.sep)):  # Path drops the slash: a folder's name would be written as a file
        raise ValueError(
            f"{option} {path_text} ends in a slash, which names a folder; give a file name ending in {' or '.join(suffixes)}"
        )
    if path.suffix.lower() not in suffixes:
        raise ValueError(f"{option} {path} must end in {' or '.join(suffixes)}")
    if path.parent.exists() and not path.parent.is_dir():
        raise ValueError(f"{option} {path}: {path.parent} is a file, not a folder; choose another path")
    if not path.parent.is_dir():
        raise ValueError(f"{option} {path}: folder {path.parent} does not exist; create it first")
    return path


def _has_display() -> bool:
    if os.environ.get("QT_QPA_PLATFORM", "").split(":")[0] in HEADLESS_PLATFORMS:
        return True
    if sys.platform in ("win32", "darwin"):
        return True
    return bool(os.environ.get("DISPLAY") or os.environ.get("WAYLAND_DISPLAY"))


def _check_window_options(args) -> None:
    """Refuse, in one line, a window's options (``--replay``, ``--screen``, ``--geometry``,
    ``--no-activate``, ``--minimized``) with ``--report`` alone: the report opens no window, they did nothing. With
    ``--screenshot`` they apply (the window rendered starts at the first trial; it is placed on, and
    sized to, the screen)."""
    if args.report and not args.screenshot:
        options = (
            ("--replay", args.replay),
            ("--screen", args.screen is not None),
            ("--geometry", args.geometry is not None),
            ("--no-activate", args.no_activate),
            ("--minimized", args.minimized),
        )
        given = [option for option, on in options if on]
        if given:
            raise ValueError(
                f"{' and '.join(given)} {'set' if len(given) > 1 else 'sets'} the dashboard's window, and --report opens "
                "none (the report covers every trial); leave "
                f"{' and '.join(given)} out, or add --screenshot FILE.png to render the window too"
            )


def run_dashboard(args) -> int:
    if args.session_id is not None and args.latest:
        raise ValueError("give either a SESSION_ID or --latest, not both")
    if args.session_id is not None and args.session_id < 1:
        raise ValueError(f"SESSION_ID must be a positive integer, got {args.session_id}")
    _check_window_options(args)
    report = _check_output(args.report, "--report", (".pdf", ".png")) if args.report else None
    screenshot = _check_output(args.screenshot, "--screenshot", (".png",)) if args.screenshot else None
    check_database_not_a_folder(args.db, default_db_path())
    db_path = Path(args.db).expanduser() if args.db else default_db_path()
    for option, path in (("--report", report), ("--screenshot", screenshot)):
        if path is not None:
            check_not_the_database(option, path, db_path)

    use_text_families()  # a participant's name in Chinese is drawn, not boxes (lensopt.dashboard.fonts)
    with SessionStore(db_path, readonly=True) as store:
        session_id = args.session_id
        if session_id is None:  # a session left running without a trial (its program died) is not offered
            session_id = store.latest_session_id(skip_empty_running=True)
        if session_id is None:
            passed_over = store.latest_session_id()  # a session whose program died before its first answer
            if passed_over is not None:
                raise StoreError(
                    f"no session in {db_path} has an answer yet (--latest passes over session {passed_over}, "
                    f"left running without one); open it with `lensopt dashboard {passed_over}`, or run "
                    "`lensopt run` first"
                )
            raise StoreError(f"no session in {db_path} yet; run `lensopt run` first or use --db to choose another file")
        info = store.session(session_id)
        session_model_class(info)  # a kind this version cannot show is said before anything else
        if report is not None:
            if info.n_trials == 0:
                raise LensoptError(f"session {session_id} has no trial yet; nothing to report")
            pages = followed_from_store(store, session_id).eye_pages()
            write_report(pages, report)
            eyes = [eye for eye, _ in pages if eye]
            layout = (
                "a page for each eye" if report.suffix.lower() == ".pdf" else "each eye's page, one under the other"
            )
            each = f" ({layout}: {', '.join(eyes)})"
            print(f"report of session {session_id} written to {report}{each if eyes else ''}")
            if screenshot is None:
                return 0

    if screenshot is not None and not _has_display():
        os.environ["QT_QPA_PLATFORM"] = "offscreen"
    if not _has_display():
        raise LensoptError(
            "no display to open the dashboard on (DISPLAY is not set); run it on a desktop, "
            "or use --screenshot FILE.png or --report FILE.pdf"
        )
    place = WindowPlace(args.screen, args.geometry, args.no_activate, args.minimized)
    return _run_window(db_path, session_id, screenshot, args.replay, place)


@dataclass(frozen=True)
class WindowPlace:
    """Where the window opens: ``screen`` (Qt's, 0 the first; None: the desktop's choice),
    ``geometry`` (width, height, left, top: px from that screen's top left, or, without a screen, on
    the desktop), and whether it opens without taking the keyboard (``no_activate``) or minimized
    (``minimized``)."""

    screen: int | None = None
    geometry: tuple[int, int, int, int] | None = None
    no_activate: bool = False
    minimized: bool = False


def _place_on_screen(app, window, screen: int | None, geometry: tuple[int, int, int, int] | None = None) -> None:
    """Open ``window`` at ``geometry`` (width, height, left, top: px from the top left of ``screen``,
    Qt's screens, 0 the first; with no screen, px on the desktop, on the screen holding its centre
    or else the primary one), kept within that screen's available area (its panels left out); without
    a geometry, at the screen's top left within its size. A screen this desktop does not have: the
    desktop's choice, said on stderr (the window still opens)."""
    from PyQt5.QtCore import QRect

    screens = app.screens()
    if screen is not None and not 0 <= screen < len(screens):
        print(
            f"lensopt dashboard: note: no screen {screen} (this desktop has {len(screens)}); the window opens "
            "where the desktop puts it",
            file=sys.stderr,
        )
        return
    if geometry is None:
        area = screens[screen or 0].availableGeometry()
        placed = QRect(area.topLeft(), window.size())
    else:
        width, height, left, top = geometry
        placed = QRect(left, top, width, height)
        if screen is not None:
            placed.translate(screens[screen].geometry().topLeft())
        on = screens[screen] if screen is not None else (app.screenAt(placed.center()) or app.primaryScreen())
        area = on.availableGeometry()
        if not placed.intersects(area):  # wholly off the area: at its top left
            placed.moveTopLeft(area.topLeft())
    placed = placed.intersected(area)
    window.resize(placed.width(), placed.height())
    window.move(placed.topLeft())


def _place(app, window, place: WindowPlace) -> None:
    """Place ``window`` as ``place`` says, before it is shown."""
    from PyQt5.QtCore import Qt

    if place.screen is not None or place.geometry is not None:
        _place_on_screen(app, window, place.screen, place.geometry)
    if place.no_activate:  # the console (or the patient's window) keeps the keyboard
        window.setAttribute(Qt.WidgetAttribute.WA_ShowWithoutActivating, True)


def _run_window(
    db_path: Path, session_id: int, screenshot: Path | None, replay: bool, place: WindowPlace = WindowPlace()
) -> int:
    from PyQt5.QtCore import QTimer
    from PyQt5.QtWidgets import QApplication

    from lensopt.dashboard.window import DashboardWindow  # PyQt5 again: only for a window

    app = QApplication.instance() or QApplication([sys.argv[0] if sys.argv else "lensopt"])
    window = DashboardWindow(db_path, session_id, replay=replay)
    # Ctrl+C in the terminal, SIGTERM (kill) and SIGHUP (the terminal closed) close the window (an
    # exception raised inside a Qt slot would abort the process); Qt's loop must hand Python a moment
    # now and then. A signal ignored by whoever started it (nohup) stays ignored.
    closing = [signal.SIGINT, signal.SIGTERM, *([signal.SIGHUP] if hasattr(signal, "SIGHUP") else [])]
    previous = {
        signum: signal.signal(signum, lambda *_: window.close())
        for signum in closing
        if signal.getsignal(signum) is not signal.SIG_IGN
    }
    heartbeat = QTimer(window)
    heartbeat.timeout.connect(lambda: None)
    heartbeat.start(SIGNAL_CHECK_MS)
    outcome: dict = {}
    if screenshot is not None:

        def done(result):
            outcome["result"] = result
            app.quit()

        window.screenshot_when_ready(screenshot, done)
    _place(app, window, place)
    if place.minimized:  # the session's windows fill the screen: the clinician opens it from the taskbar
        window.showMinimized()
    else:
        window.show()
    try:
        app.exec_()
    finally:
        for signum, handler in previous.items():
            signal.signal(signum, handler)
        window.shutdown()
    result = outcome.get("result")
    if isinstance(result, Exception):
        raise ValueError(f"could not write the screenshot {screenshot}: {result}")
    if screenshot is not None:
        print(f"screenshot of session {session_id} written to {screenshot}")
        if window.snapshot is None:
            raise LensoptError(f"the dashboard could not show session {session_id}: {window.message_label.text()}")
    return 0
