"""The clinician's dashboard window: four live panels, a replay slider and a report export.

The panels are those of the session's kind (letters, duels or rankings:
:func:`lensopt.dashboard.panels.draw_panel`).

The window only draws: a :class:`~lensopt.dashboard.worker.SessionFollower` in a ``QThread``
reads the database and rebuilds the model, and hands over frozen snapshots through a queued
signal. Problems (missing session, newer database, no trial yet) are shown in the message line at
the top; the window never raises them.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from matplotlib.backends.backend_qt5agg import FigureCanvasQTAgg
from matplotlib.figure import Figure
from PyQt5.QtCore import QBuffer, QIODevice, Qt, QThread, QTimer, pyqtSignal
from PyQt5.QtWidgets import (
    QAction,
    QFileDialog,
    QGridLayout,
    QHBoxLayout,
    QLabel,
    QMainWindow,
    QPushButton,
    QSlider,
    QVBoxLayout,
    QWidget,
)

from lensopt.dashboard.model import followed_from_store
from lensopt.dashboard.panels import PANELS, draw_notice, draw_panel
from lensopt.dashboard.report import write_report
from lensopt.dashboard.series import count_text
from lensopt.dashboard.snapshot import WAITING_MESSAGE, DashboardSnapshot
from lensopt.dashboard.unfinished_text import unfinished_line
from lensopt.dashboard.worker import POLL_INTERVAL_MS, SessionFollower
from lensopt.private_files import private_output
from lensopt.store import SessionStore
from lensopt.store.claim import INTERRUPTED
from lensopt.store.verdict import answer_noun

#: Initial window size in pixels (fits a 1920 × 1080 second screen with room to spare).
WINDOW_SIZE_PX = (1500, 950)
#: Milliseconds the replay slider must rest before the model is replayed at its position.
SLIDER_DEBOUNCE_MS = 150
#: Milliseconds a ``--screenshot`` waits for the first model update before saving what it has.
SCREENSHOT_TIMEOUT_MS = 120_000
#: Panel titles used while a panel has nothing to draw.
PANEL_TITLES = {
    "lens_map": "Lens map",
    "psychometric": "Psychometric curve",
    "history": "History",
    "summary": "Summary",
}


class DashboardWindow(QMainWindow):
    """Follows ``session_id`` (None: the latest session) in the database at ``db_path``.

    ``replay=True`` starts the slider at the first trial instead of following the last one.
    """

    #: Asks the worker for the snapshot after the first n trials (queued to its thread).
    replay_requested = pyqtSignal(int)
    #: Asks the worker to stop (queued to its thread).
    stop_requested = pyqtSignal()

    def __init__(
        self,
        db_path,
        session_id: int | None = None,
        *,
        replay: bool = False,
        poll_interval_ms: int = POLL_INTERVAL_MS,
        optimizer_factory=None,
        parent=None,
    ):
        super().__init__(parent)
        self.db_path = Path(db_path)
        self.session_id = session_id
        self.snapshot: DashboardSnapshot | None = None  # the snapshot on screen
        self.live_snapshot: DashboardSnapshot | None = None
        self.n_updates = 0
        self._following = not replay
        self._screenshot: tuple[Path, Callable[[Path | Exception], object]] | None = None
        self._build_ui()
        self.show_message("opening the session…")

        self._thread = QThread(self)
        self.follower = SessionFollower(
            db_path, session_id, poll_interval_ms=poll_interval_ms, optimizer_factory=optimizer_factory
        )
        self.follower.moveToThread(self._thread)
        self._thread.started.connect(self.follower.start)
        self.follower.snapshot_ready.connect(self._on_snapshot)
        self.follower.problem.connect(self._on_problem)
        self.replay_requested.connect(self.follower.replay)
        self.stop_requested.connect(self.follower.stop)
        self._thread.start()

    # -- layout -------------------------------------------------------------------------------

    def _build_ui(self) -> None:
        self.setWindowTitle("lensopt dashboard")
        self.resize(*WINDOW_SIZE_PX)
        central = QWidget(self)
        column = QVBoxLayout(central)
        self.message_label = QLabel(central)
        self.message_label.setWordWrap(True)
        self.message_label.setStyleSheet("font-size: 15px; padding: 4px;")
        self.summary_label = QLabel(central)
        self.summary_label.setWordWrap(True)  # a session of both eyes: each eye's result, on two lines if need be
        self.summary_label.setStyleSheet("font-size: 15px; font-weight: bold; padding: 4px;")
        self.summary_label.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        column.addWidget(self.message_label)
        column.addWidget(self.summary_label)

        grid = QGridLayout()
        self.figures: dict[str, Figure] = {}
        self.canvases: dict[str, FigureCanvasQTAgg] = {}
        for position, name in enumerate(PANELS):
            figure = Figure(layout="constrained")
            canvas = FigureCanvasQTAgg(figure)
            canvas.setMinimumSize(320, 240)
            grid.addWidget(canvas, position // 2, position % 2)
            self.figures[name], self.canvases[name] = figure, canvas
        column.addLayout(grid, stretch=1)

        row = QHBoxLayout()
        self.slider_label = QLabel("replay: no trial yet", central)
        self.slider = QSlider(Qt.Orientation.Horizontal, central)
        self.slider.setRange(0, 0)
        self.slider.setEnabled(False)
        self.slider.setToolTip("Drag to replay the session up to a trial; the right end follows it live")
        self.slider.valueChanged.connect(self._on_slider)
        self.export_button = QPushButton("Export report…", central)
        self.export_button.setEnabled(False)
        self.export_button.clicked.connect(self._export_dialog)
        row.addWidget(self.slider_label)
        row.addWidget(self.slider, stretch=1)
        row.addWidget(self.export_button)
        column.addLayout(row)
        self.setCentralWidget(central)

        menu_bar = self.menuBar()
        assert menu_bar is not None  # a QMainWindow creates its menu bar when first asked
        menu = menu_bar.addMenu("&File")
        assert menu is not None  # addMenu(title) always returns the new menu
        self.export_action = QAction("&Export report…", self)
        self.export_action.setEnabled(False)
        self.export_action.triggered.connect(self._export_dialog)
        quit_action = QAction("&Quit", self)
        quit_action.setShortcut("Ctrl+Q")
        quit_action.triggered.connect(self.close)  # type: ignore[arg-type]  # close() returns a bool, which Qt ignores
        menu.addAction(self.export_action)
        menu.addAction(quit_action)

        self._debounce = QTimer(self)
        self._debounce.setSingleShot(True)
        self._debounce.setInterval(SLIDER_DEBOUNCE_MS)
        self._debounce.timeout.connect(self._request_replay)

    # -- messages and snapshots ---------------------------------------------------------------

    def show_message(self, text: str, problem: bool = False) -> None:
        """Show ``text`` in the message line (red for a problem)."""
        color = "#b2182b" if problem else "#333333"
        self.message_label.setStyleSheet(f"font-size: 15px; padding: 4px; color: {color};")
        self.message_label.setText(text)

    def _on_problem(self, text: str) -> None:
        if text != self.message_label.text():  # the follower repeats a lasting problem every poll
            self.show_message(text, problem=True)
            if self.snapshot is None:
                for name in PANELS:
                    draw_notice(self.figures[name], PANEL_TITLES[name], "nothing to show:\n" + text)
                    self.canvases[name].draw_idle()
        self._maybe_screenshot()

    def _on_snapshot(self, snap: DashboardSnapshot) -> None:
        self.n_updates += 1
        if snap.live:
            self.live_snapshot = snap
            total = snap.n_trials
            self.slider.blockSignals(True)
            self.slider.setRange(min(1, total), total)
            if self._following:
                self.slider.setValue(total)
            elif self.n_updates == 1:
                self.slider.setValue(min(1, total))
            self.slider.blockSignals(False)
            self.slider.setEnabled(total > 1)
            if not self._following and total > 0:
                if self.snapshot is None:
                    self._request_replay()
                self._update_slider_label()
                return
        elif snap.n_trials != self.slider.value() or self._following:
            return  # a replay the slider has moved away from
        self.show_snapshot(snap)

    def show_snapshot(self, snap: DashboardSnapshot) -> None:
        """Draw ``snap`` in every panel and update the message and summary lines."""
        self.snapshot = snap
        h = snap.header
        self.setWindowTitle(f"lensopt dashboard — session {h.session_id} ({h.who})")
        if not snap.has_model and not getattr(snap, "prescription", None):  # a comparison's prescription: live line
            self.show_message(f"Session {h.session_id} ({h.who}): {snap.message or WAITING_MESSAGE}")
        elif snap.live:
            # a session that stopped before its end: the printed record's line, with the command that continues it
            unfinished = (
                None
                if h.status == "running"
                else unfinished_line(
                    h.session_id, h.n_answers_stored, h.status, self.db_path, h.window_options, answer_noun(snap.kind)
                )
            )
            self.show_message(
                f"Session {h.session_id} ({h.who}) · {h.status} · rule {h.rule} · database {self.db_path}"
                + ("" if unfinished is None else f"\n{unfinished}")
            )
        else:
            self.show_message(
                f"Replay of session {h.session_id}: first {snap.n_answers} of "
                f"{count_text(h.n_answers_stored, self._noun(), snap.n_undone)} "
                "— drag the slider to the right end to follow live"
            )
        self.summary_label.setText(snap.summary_line())
        for name in PANELS:
            try:
                draw_panel(self.figures[name], name, snap)
            except Exception as exc:  # noqa: BLE001 - a drawing bug must not close the window
                draw_notice(self.figures[name], PANEL_TITLES[name], f"cannot draw this panel: {exc}")
            self.canvases[name].draw_idle()
        self.export_button.setEnabled(snap.n_trials > 0)
        self.export_action.setEnabled(snap.n_trials > 0)
        self._update_slider_label()
        self._maybe_screenshot()

    # -- replay -------------------------------------------------------------------------------

    def _noun(self) -> str:
        """What the slider counts: the trials of a letter session, the duels or rankings of the others."""
        return "trial" if self.snapshot is None else self.snapshot.noun

    def _update_slider_label(self) -> None:
        total = self.slider.maximum()
        if total == 0:
            self.slider_label.setText(f"replay: no {self._noun()} yet")
            return
        # the slider runs over the rows stored; it counts the answers kept, those undone said apart
        answers, undone = self._answers_up_to(self.slider.value())
        all_answers, _ = self._answers_up_to(total)
        state = f"+{undone} undone, {self._state()}" if undone else self._state()
        self.slider_label.setText(f"{self._noun()} {answers} of {all_answers} ({state})")

    def _answers_up_to(self, position: int) -> tuple[int, int]:
        """``(answers kept, answers undone)`` among the first ``position`` rows (the slider's
        positions), as the live snapshot has them (all kept before it comes)."""
        if self.live_snapshot is None:
            return position, 0
        undone = int(self.live_snapshot.void[:position].sum())
        return position - undone, undone

    def _state(self) -> str:
        """What the slider's right end shows: ``replay`` (left of it), ``latest`` (a finished session),
        ``live`` (a session a program runs now), ``interrupted`` (stored as running, run by none:
        killed or crashed, as ``lensopt sessions`` says; the worker reads it,
        :func:`lensopt.store.claim.session_status`) or ``stopped`` (quit before its end)."""
        if not self._following:
            return "replay"
        header = None if self.snapshot is None else self.snapshot.header
        if header is None or header.status == "running":
            return "live"
        if header.status == INTERRUPTED:
            return INTERRUPTED
        return "latest" if header.status == "finished" else "stopped"

    def _on_slider(self, value: int) -> None:
        self._following = value == self.slider.maximum()
        self._update_slider_label()
        self._debounce.start()

    def _request_replay(self) -> None:
        if self._following and self.live_snapshot is not None:
            self.show_snapshot(self.live_snapshot)
        else:
            self.replay_requested.emit(self.slider.value())

    def replay_to(self, n_trials: int) -> None:
        """Move the slider to ``n_trials`` (the right end follows the session live)."""
        self.slider.setValue(int(n_trials))

    # -- export and screenshot ----------------------------------------------------------------

    def export_report(self, path) -> Path:
        """Write the report of the snapshot on screen to ``path`` (.pdf or .png): following a session
        of both eyes, each eye's page, as ``lensopt dashboard --report`` writes it (the window showed
        the live eye's model only, and so did its report); a replay, the trial shown."""
        snap = self.snapshot
        if snap is None or snap.n_trials == 0:
            raise ValueError("nothing to export yet: the session has no trial")
        if snap.live and getattr(snap, "model_eye", None) is not None:
            with SessionStore(self.db_path, readonly=True) as store:
                return write_report(followed_from_store(store, snap.header.session_id).eye_pages(), path)
        return write_report(snap, path)

    def _export_dialog(self) -> None:
        if self.snapshot is None:
            return
        default = str(Path.cwd() / f"lensopt-session-{self.snapshot.header.session_id}.pdf")
        path, _ = QFileDialog.getSaveFileName(self, "Export report", default, "PDF (*.pdf);;PNG (*.png)")
        if not path:
            return
        try:
            written = self.export_report(path)
        except (ValueError, OSError) as exc:
            self.show_message(f"could not export the report: {exc}", problem=True)
        else:
            status_bar = self.statusBar()
            assert status_bar is not None  # a QMainWindow creates its status bar when first asked
            status_bar.showMessage(f"report written to {written}", 10_000)

    def save_screenshot(self, path) -> Path:
        """Render the whole window (all panels drawn now) to a PNG at ``path``."""
        for canvas in self.canvases.values():
            canvas.draw()
        path = Path(path)
        buffer = QBuffer()
        buffer.open(QIODevice.OpenModeFlag.WriteOnly)
        if not self.grab().save(buffer, "PNG"):
            raise ValueError(f"could not render the screenshot {path}")
        with private_output(path, "--screenshot") as stream:  # readable by its owner only: patient data
            stream.write(bytes(buffer.data()))
        return path

    def screenshot_when_ready(self, path, on_done: Callable[[Path | Exception], object]) -> None:
        """After the first model update (or problem), save a screenshot and call ``on_done(path | error)``."""
        self._screenshot = (Path(path), on_done)
        QTimer.singleShot(SCREENSHOT_TIMEOUT_MS, self._maybe_screenshot)

    def _maybe_screenshot(self) -> None:
        if self._screenshot is None:
            return
        path, on_done = self._screenshot
        self._screenshot = None
        QTimer.singleShot(50, lambda: self._finish_screenshot(path, on_done))

    def _finish_screenshot(self, path, on_done: Callable[[Path | Exception], object]) -> None:
        result: Path | Exception  # the screenshot written, or why it could not be (on_done tells them apart)
        try:
            result = self.save_screenshot(path)
        except Exception as exc:  # noqa: BLE001 - raised in a Qt callback it aborted the process (exit 134)
            result = exc  # a full disk, a read-only folder: private_output's LensoptError, said by the caller
        on_done(result)

    # -- lifetime -----------------------------------------------------------------------------

    def shutdown(self) -> None:
        """Stop the worker thread (idempotent)."""
        if self._thread.isRunning():
            self.follower.cancel()  # a model update in progress stops after its current trial
            self.stop_requested.emit()
            self._thread.quit()
            self._thread.wait()

    def closeEvent(self, event) -> None:  # Qt API name
        self.shutdown()
        super().closeEvent(event)
