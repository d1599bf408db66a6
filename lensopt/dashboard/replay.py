"""Following one stored session and replaying it: what every kind of session shares (no Qt).

A :class:`FollowedSession` keeps the session's records in order and one optimizer told those that
count (``update`` tells only the new records: the same replay that ``from_settings`` does) — the
answers of the eye being searched, but those the clinician undid (:func:`lensopt.modes.base.told_records`,
as a resumed session rebuilds its optimizer) — and builds the snapshot after the first ``n``
records for the replay slider (rebuilding the optimizer on them, with a small cache). A record
marked void after it was told (an answer undone) has the records from it told again, as if new,
and what a subclass kept of them recomputed; the switch from OD to OS rebuilds the live optimizer.
A subclass says how to read its records from the store, how a record becomes a ``(trial,
answer)`` pair for its optimizer, and how a snapshot is built.
"""

from __future__ import annotations

from collections import OrderedDict
from pathlib import Path
from typing import Any

from lensopt.dashboard.series import SessionHeader
from lensopt.modes.as_ran import session_as_ran
from lensopt.modes.base import FeedbackMode, eye_settings, stored_session_problem, told_records
from lensopt.modes.registry import session_settings
from lensopt.refraction.acuity_law_settings import modelled_accommodation_d
from lensopt.refraction.most_plus import dashboard_advice
from lensopt.store.records import EYES
from lensopt.store.session_records import continue_advice, run_window_options
from lensopt.store.tidy import session_rule, session_values

#: Replay snapshots kept in memory (the slider revisits them).
REPLAY_CACHE_SIZE = 32


class FollowedSession:
    """Base of the session models the dashboard's worker owns (not thread-safe).

    A subclass names its :attr:`feedback` mode (:mod:`lensopt.modes.registry`), which reads its
    records (the store's table of that kind) and turns each into the optimizer's ``(trial,
    answer)``. ``optimizer_factory(settings, history)`` rebuilds the session's optimizer from the
    settings it ran with (:func:`lensopt.modes.as_ran.session_as_ran`) and ``(trial, answer)``
    pairs; it defaults to the mode's optimizer's
    ``from_settings``.
    """

    #: The feedback mode of the sessions followed.
    feedback: FeedbackMode
    #: The database the session is read from, named in the command that continues it (its header's
    #: ``database``); None when not known (a model told records by hand).
    db_path: Path | None = None

    def __init__(self, info, optimizer_factory=None):
        self._factory = optimizer_factory or self.feedback.optimizer_class.from_settings
        self._settings = session_settings(info)  # what its store says; told by its trials at the first update
        self._settings_told = False
        self._info = info
        self._status = str(info.status)  # as shown (update's ``status``): the header's
        self._records: list = []
        self._opt = None
        self._cache: OrderedDict = OrderedDict()

    @classmethod
    def read_records(cls, store, session_id: int, since_index: int = 0) -> list:
        """The stored records of ``session_id`` after ``since_index``, in order."""
        return store.kind_trials(cls.feedback.kind, session_id, since_index=since_index)

    def history_pair(self, record) -> tuple:
        """``(trial, answer)`` of one stored record, as the optimizer's ``tell`` takes them."""
        return self.feedback.history_pair(record)

    # -- what a subclass provides -------------------------------------------------------------

    def _after_tell(self) -> None:
        """Called after each new record is told to the live optimizer (e.g. to log a history)."""

    def _forget_after(self, n: int) -> None:
        """Forget what was kept after the first ``n`` records: a record after them changed (an
        answer undone), and they are told again (:meth:`_after_tell` follows each)."""

    def _build(self, n: int, live: bool):
        """The snapshot after the first ``n`` records (``live``: n is all of them)."""
        raise NotImplementedError

    # -- shared ---------------------------------------------------------------------------------

    @property
    def n_trials(self) -> int:
        return len(self._records)

    def update(self, info, new_records=(), cancelled=None, status: str | None = None, shown=None):
        """Add the records not seen yet (by ``index``) and return the snapshot of all of them.

        ``status``: the session's status as shown (:func:`lensopt.store.claim.session_status`:
        ``interrupted`` for one stored as running that no program runs), the snapshots' header's;
        default the stored ``info.status``.

        ``new_records`` may repeat records already seen: one now marked void (an answer the clinician
        undid) replaces the stored copy, and the live optimizer is rebuilt without it.
        ``cancelled()`` (optional) is checked between records; when it turns true the records told
        so far are kept and None is returned (the window is closing). ``shown(records)`` (optional)
        wraps the records as they are told (a progress bar: a long session takes seconds).
        """
        self._info = info
        self._status = str(info.status if status is None else status)
        seen = {r.index: i for i, r in enumerate(self._records)}
        voided: int | None = None  # the first record seen whose void flag changed
        for record in new_records:
            i = seen.get(record.index)
            if i is not None and bool(getattr(record, "void", False)) != bool(getattr(self._records[i], "void", False)):
                self._records[i] = record
                voided = i if voided is None else min(voided, i)
        replayed: list = []
        if voided is not None:  # told again from there, as if new: what was built on the undone answer goes
            replayed, self._records = self._records[voided:], self._records[:voided]
            self._forget_after(voided)
            self._opt = self._optimizer_for(self._records) if self._records else None
            self._cache.clear()
        last = self._records[-1].index if self._records else 0
        fresh = replayed + sorted(
            (r for r in new_records if r.index > max(last, replayed[-1].index if replayed else 0)),
            key=lambda r: r.index,
        )
        if not self._settings_told and (self._records or fresh):
            # where its store does not say how it ran, its trials tell, as a resume of it finds (the
            # dashboard and the record drew another model than the one its resume continued)
            self._settings = session_as_ran(info, self._records + fresh).settings
            self._settings_told = True
        for record in fresh if shown is None else shown(fresh):
            if cancelled is not None and cancelled():
                return None
            eye = getattr(self._records[-1], "eye", None) if self._records else None  # the eye searched so far
            self._records.append(record)
            if self._opt is None or getattr(record, "eye", None) != eye:
                self._opt = self._optimizer_for(self._records)  # the first record, or the next eye
            elif not getattr(record, "void", False):
                try:
                    self._opt.tell(*self.history_pair(record))
                except ValueError as exc:
                    raise ValueError(stored_session_problem(exc)) from exc
            self._after_tell()
        if self._opt is None and self._records:
            self._opt = self._optimizer_for(self._records)
        if fresh:
            self._cache.pop(len(self._records), None)
        return self.snapshot()

    def eye_views(self) -> tuple:
        """Each eye's model as the printed record draws it on its own page: none here (the letter
        model of a full prescription has them, :meth:`lensopt.dashboard.model.SessionModel.eye_views`)."""
        return ()

    def _optimizer_for(self, records):
        """The optimizer of the eye the last of ``records`` belongs to, told its answers not undone."""
        eye, told = told_records(records, self._info.eye if self._info.eye in EYES else None)
        try:
            return self._factory(eye_settings(self._settings, eye), [self.history_pair(r) for r in told])
        except ValueError as exc:
            raise ValueError(stored_session_problem(exc)) from exc

    def snapshot(self, n_trials: int | None = None):
        """The snapshot after the first ``n_trials`` records (default: all of them)."""
        total = len(self._records)
        n = total if n_trials is None else int(n_trials)
        if not 0 <= n <= total:
            raise ValueError(f"n_trials must be between 0 and {total}, got {n_trials}")
        key = (n, self._status, self._info.updated_at)
        cached = self._cache.get(n)
        if cached is not None and cached[0] == key:
            self._cache.move_to_end(n)
            return cached[1]
        snap = self._build(n, live=(n == total))
        self._cache[n] = (key, snap)
        while len(self._cache) > REPLAY_CACHE_SIZE:
            self._cache.popitem(last=False)
        return snap

    def eye_pages(self) -> tuple[tuple[str | None, Any], ...]:
        """What the report draws, page by page: in a session of both eyes with answers of both, each
        eye's model at the end of its search — the snapshot after its last record, drawn as the end
        it was for that eye (not as a replay of the session) — OD before OS, each with its eye
        (``"OD"``); else the session's snapshot alone, with no eye. An OU session's report showed
        only the second eye's model."""
        ends: dict[str, int] = {}
        for i, record in enumerate(self._records):
            if getattr(record, "eye", None) in EYES:
                ends[record.eye] = i + 1
        if len(ends) < 2:
            return ((None, self.snapshot()),)
        total = len(self._records)
        return tuple(
            (eye, self._page_of(self.snapshot() if ends[eye] == total else self._build(ends[eye], live=True), eye))
            for eye in EYES
            if eye in ends
        )

    def _page_of(self, snap, eye: str):
        """``snap`` as ``eye``'s page of a report of both eyes (:meth:`eye_pages`): as it is here; a
        subclass drops what the other eye's page shows."""
        return snap

    def _optimizer_after(self, n: int):
        """The optimizer told the first ``n`` records (the live one for all of them)."""
        if n == len(self._records) and self._opt is not None:
            return self._opt
        return self._optimizer_for(self._records[:n])

    def _header(self, **extra) -> SessionHeader:
        info = self._info
        return SessionHeader(
            session_id=int(info.session_id),
            participant=str(info.participant),
            status=self._status,
            rule=rule_label(self._settings, session_rule(info)),
            seed=int(info.seed),
            n_trials_stored=max(int(info.n_trials), len(self._records)),
            created_at=float(info.created_at),
            updated_at=float(info.updated_at),
            eye=info.eye,
            n_undone_stored=self._undone_stored(info),
            database=None if self.db_path is None else str(self.db_path),
            most_plus_advice=dashboard_advice(self._settings),
            continue_advice=continue_advice(getattr(info, "events", ()), int(info.n_trials)),
            window_options=run_window_options(getattr(info, "events", ())),
            simulated=session_values(info)["observer"] == "simulated",
            **extra,
        )

    def _undone_stored(self, info) -> int:
        """The answers undone among the rows stored: those of the records read (all of them when
        they are as many as ``info`` counts, else ``info.n_undone``: the session may have moved on)."""
        if len(self._records) >= int(info.n_trials):
            return sum(bool(getattr(r, "void", False)) for r in self._records)
        return int(getattr(info, "n_undone", 0))


def rule_label(settings: dict, rule: str | None = None) -> str:
    """A session's rule as the dashboard names it: ``acuity-law``, or ``acuity-law, accommodation up
    to 8 D`` when its model allowed for accommodation (the lens shown is then the relaxed eye's).
    ``rule``: the session's (:func:`lensopt.store.tidy.session_rule`, which reads the protocol
    snapshot too); else the settings' ``rule``."""
    rule = rule or str(settings.get("rule", "?"))
    amplitudes_d = modelled_accommodation_d(settings)
    return rule if amplitudes_d is None else f"{rule}, accommodation up to {max(amplitudes_d):g} D"
