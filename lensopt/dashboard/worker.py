"""The dashboard's background worker: follows a session in the database, off the GUI thread.

A :class:`SessionFollower` lives in its own ``QThread``. Every ``POLL_INTERVAL_MS`` it asks the
read-only store for its change counter (``data_version``, cheap); only when it moved does it read
the trials added since the last one it saw, tell them to its :class:`SessionModel` and emit a new
:class:`DashboardSnapshot`. A session stored as running is also looked at for its program's claim
on every poll (:func:`lensopt.store.claim.session_status`): when that program ends without a word
to the database (killed, crashed) a new snapshot says ``interrupted``, and ``running`` again on a
resume. Problems (no database yet, a missing session, a newer schema, a model that cannot be
rebuilt, a kind of session this version does not know) are emitted as one-line messages, never
raised into Qt. The session's kind picks its model (:func:`lensopt.dashboard.model.session_model`):
letters, duels or rankings, followed and replayed the same way.
"""

from __future__ import annotations

import threading
from pathlib import Path

from PyQt5.QtCore import QObject, QTimer, pyqtSignal, pyqtSlot

from lensopt.dashboard.model import session_model
from lensopt.dashboard.replay import FollowedSession
from lensopt.errors import LensoptError
from lensopt.store import SessionInfo, SessionStore
from lensopt.store.claim import session_status

#: Milliseconds between two looks at the database (a new trial shows within about this long
#: plus the model update).
POLL_INTERVAL_MS = 300


class SessionFollower(QObject):
    """Polls the store and turns new trials into snapshots (run it in a ``QThread``).

    ``session_id=None`` follows the latest session of the database (``--latest``).
    ``optimizer_factory(settings, history)`` defaults to the ``from_settings`` of the session
    kind's optimizer (``RefractionOptimizer``, ``DuelRefractionOptimizer`` or
    ``RankingRefractionOptimizer``).
    """

    #: A new :class:`DashboardSnapshot` (live, or the replay asked for with :meth:`replay`).
    snapshot_ready = pyqtSignal(object)
    #: A one-line message about a problem the clinician can act on.
    problem = pyqtSignal(str)

    def __init__(
        self,
        db_path,
        session_id: int | None = None,
        *,
        poll_interval_ms: int = POLL_INTERVAL_MS,
        optimizer_factory=None,
        parent=None,
    ):
        super().__init__(parent)
        if not (isinstance(poll_interval_ms, int) and poll_interval_ms > 0):
            raise ValueError(f"poll_interval_ms must be a positive integer, got {poll_interval_ms!r}")
        self.db_path = Path(db_path)
        self.session_id = session_id
        self.poll_interval_ms = poll_interval_ms
        self._factory = optimizer_factory
        self._store: SessionStore | None = None
        self._model: FollowedSession | None = None
        self._version: int | None = None
        self._info: SessionInfo | None = None
        self._status: str | None = None  # the session's status as shown (session_status)
        self._timer: QTimer | None = None
        self._cancel = threading.Event()

    def cancel(self) -> None:
        """Ask a running model update to stop soon (thread-safe: call it from the GUI thread)."""
        self._cancel.set()

    @pyqtSlot()
    def start(self) -> None:
        """Start polling (call in the worker thread, e.g. from ``QThread.started``)."""
        self._timer = QTimer(self)
        self._timer.setInterval(self.poll_interval_ms)
        self._timer.timeout.connect(self.poll)
        self._timer.start()
        self.poll()

    @pyqtSlot()
    def stop(self) -> None:
        """Stop polling and close the database."""
        if self._timer is not None:
            self._timer.stop()
        self._close_store()

    def _close_store(self) -> None:
        if self._store is not None:
            self._store.close()
            self._store = None
        self._version = None

    @pyqtSlot()
    def poll(self) -> None:
        """One look at the database; emits a snapshot when there is something new."""
        if self._cancel.is_set():
            return
        try:
            self._poll()
        except LensoptError as exc:
            self._close_store()  # reopen on the next poll: the file may be fixed or created meanwhile
            self.problem.emit(str(exc).strip().splitlines()[0])
        except Exception as exc:  # noqa: BLE001 - a follower must never take the window down
            self.problem.emit(f"could not update the dashboard: {type(exc).__name__}: {exc}")

    def _poll(self) -> None:
        if self._store is None:
            self._store = SessionStore(self.db_path, readonly=True)
        store = self._store
        if self.session_id is None:
            latest = store.latest_session_id()
            if latest is None:
                raise LensoptError(f"no session in {self.db_path} yet; waiting for `lensopt run` to start one")
            self.session_id = int(latest)
        version = store.data_version()
        if version == self._version:
            self._look_at_the_claim()
            return
        info = store.session(self.session_id)
        status = session_status(self.db_path, self.session_id, info.status)
        if self._model is None:
            self._model = session_model(info, optimizer_factory=self._factory, db_path=self.db_path)
        # every record, not only the new ones: an answer the clinician undid is an old row marked void
        # (the session's updated_at moves); the model tells only what is new or changed
        records = self._model.read_records(store, self.session_id)
        previous = self._info
        changed = (
            previous is None
            or len(records) > self._model.n_trials
            or (info.status, info.updated_at) != (previous.status, previous.updated_at)
            or status != self._status
        )
        self._info, self._status = info, status
        if changed:
            snap = self._model.update(info, records, cancelled=self._cancel.is_set, status=status)
            if snap is None:
                return
            self.snapshot_ready.emit(snap)
        self._version = version

    def _look_at_the_claim(self) -> None:
        """Nothing new in the database: a session stored as running whose program has ended (or
        started again) still gets a snapshot with its status as shown now."""
        info, model = self._info, self._model
        if info is None or model is None or info.status != "running":
            return
        status = session_status(self.db_path, info.session_id, info.status)
        if status != self._status:
            self._status = status
            snap = model.update(info, (), cancelled=self._cancel.is_set, status=status)
            if snap is not None:
                self.snapshot_ready.emit(snap)

    @pyqtSlot(int)
    def replay(self, n_trials: int) -> None:
        """Emit the snapshot after the first ``n_trials`` trials (the replay slider)."""
        if self._model is None:
            return
        try:
            n = max(0, min(int(n_trials), self._model.n_trials))
            self.snapshot_ready.emit(self._model.snapshot(n))
        except LensoptError as exc:
            self.problem.emit(str(exc).strip().splitlines()[0])
        except Exception as exc:  # noqa: BLE001 - see poll
            self.problem.emit(f"could not replay trial {n_trials}: {type(exc).__name__}: {exc}")
