"""The session-level records the store reads and writes: a finished search's result
(:class:`ResultRecord`), a stored session (:class:`SessionInfo`), one lensopt cannot read as it
wrote it (:class:`DamagedSession`) and what happened to a session besides its answers
(:class:`SessionEvent`); the trials' records are :mod:`lensopt.store.records`. Frozen
dataclasses validated on construction, as those are."""

from __future__ import annotations

import math
import numbers
from dataclasses import dataclass, field

from lensopt.refraction.axes import axis_interval_deg
from lensopt.store.db_path import resume_command
from lensopt.store.records import STATUSES, check_eye, check_finite, check_int, check_text, to_json


def undone_suffix(n_undone: int) -> str:
    """What follows a count of answers kept when the clinician undid some (kept in the database, marked
    void, never counted among them): `` (+1 undone)``; ``""`` without any. One wording for the run's
    last line, ``lensopt sessions`` and the dashboard."""
    return f" (+{n_undone} undone)" if n_undone else ""


#: The events a session records (``session_events`` table, schema 10): its creation, each resume,
#: each clinician's note as it is typed (``detail``: ``note`` and ``for_trial``, the trial it was typed
#: before; the note is stored with that trial's answer too, so the event keeps one a crash came between)
#: and, since 4 Dec 2026, each end of its eyes' searches (``detail``: ``continue_trials``, the
#: ``--trials`` of the command that gives the eyes short of their target the trials recommended, or
#: None when none is; ``at_most``, whether that number is a ceiling: :func:`continue_advice`).
STARTED, RESUMED, NOTED, ENDED = "started", "resumed", "noted", "ended"
EVENTS = (STARTED, RESUMED, NOTED, ENDED)


@dataclass(frozen=True)
class SessionEvent:
    """Something that happened to a session besides its answers (``session_events``, schema 10):
    ``event`` (:data:`EVENTS`) at unix time ``at`` (s), after its trial ``after_trial`` (0: before
    the first), with ``detail``: ``software`` (:func:`lensopt.provenance.software`), and on a resume
    ``trials`` (the trial budget per eye it ran with) and ``trials_given`` (the ``--trials`` typed, or
    None); on a start or resume given a window option, ``options`` (`` --no-fullscreen``). An event
    name this lensopt does not know (a newer one's) is read as it is."""

    event: str
    at: float
    after_trial: int
    detail: dict = field(default_factory=dict)

    def __post_init__(self):
        owner = "SessionEvent"
        check_text(owner, "event", self.event)
        object.__setattr__(self, "at", check_finite(owner, "at", self.at))
        object.__setattr__(self, "after_trial", check_int(owner, "after_trial", self.after_trial, 0))
        if not isinstance(self.detail, dict):
            raise ValueError(f"{owner}.detail must be a dict, got {self.detail!r}")

    @property
    def software(self) -> dict:
        """The software that ran (empty when not recorded)."""
        found = self.detail.get("software")
        return found if isinstance(found, dict) else {}

    def to_dict(self) -> dict:
        """The event as JSON-ready data (``at_unix_s``: the unix time in seconds)."""
        return {"event": self.event, "at_unix_s": self.at, "after_trial": self.after_trial, "detail": self.detail}


def console_trial_numbers(eyes, void, per_eye: bool = True) -> list[int]:
    """The trial number the console (and the log) gave each stored trial (``eyes``: each trial's
    eye, ``void``: each answer undone), in the order stored: an answer kept is numbered among the
    answers kept (of its eye, ``per_eye``: the console's ``OS trial 1``; else of the session), an
    undone one (never counted) the number of the answer that replaced it — the number the console
    showed it under — so that after one undo the session's 10th answer is trial 10, not row 11."""
    counts: dict[str, int] = {}
    numbers = []
    for eye, undone in zip(eyes, void, strict=True):
        key = str(eye or "") if per_eye else ""
        kept = counts.get(key, 0)
        numbers.append(kept + 1)
        if not undone:
            counts[key] = kept + 1
    return numbers


def resumed_budget(events) -> int | None:
    """The trial budget per eye of the last resume among ``events`` that was given one with
    ``--trials``, which a later resume keeps; None if no resume was."""
    for event in reversed(tuple(events)):
        given = event.detail.get("trials_given")
        if event.event == RESUMED and isinstance(given, int) and not isinstance(given, bool) and given > 0:
            return given
    return None


#: The window options a command that continues a session may carry (those ``lensopt run`` was given).
WINDOW_OPTIONS = ("", " --fullscreen", " --no-fullscreen")


def _window_options(stored) -> str:
    """Stored window ``options`` if they are those ``lensopt run`` gives (:data:`WINDOW_OPTIONS`);
    anything else another program wrote there, or nothing stored, as none."""
    return stored if isinstance(stored, str) and stored in WINDOW_OPTIONS else ""


@dataclass(frozen=True)
class ContinueAdvice:
    """What a session's end advised for its eyes short of their target: resume it with ``--trials
    trials`` (the budget per eye), a ceiling when ``at_most`` (no trend of the confidence justified a
    number), and the window ``options`` the run was given (`` --no-fullscreen``: the same set-up needs
    them again), as its closing console and log said."""

    trials: int
    at_most: bool = False
    options: str = ""

    @property
    def note(self) -> str:
        """What qualifies a ceiling's number (``at most; …``); empty for a number from the trend."""
        return "at most; the confidence so far does not say how many more" if self.at_most else ""

    def command(self, session_id: int, db_path=None, note_sep: str | None = "  ") -> str:
        """``lensopt run --resume 7 --trials 45 --no-fullscreen --db …``
        (:func:`~lensopt.store.db_path.resume_command` with ``--trials``), a ceiling's :attr:`note` in brackets after
        ``note_sep`` (None: without it): the command the closing console, the log, a resume with
        nothing to run, the printed record and ``lensopt sessions SESSION_ID`` give alike."""
        command = resume_command(session_id, db_path, f" --trials {self.trials}{self.options}")
        return f"{command}{note_sep}({self.note})" if self.note and note_sep is not None else command

    def to_detail(self) -> dict:
        """The advice as an :data:`ENDED` event's ``detail``."""
        return {"continue_trials": self.trials, "at_most": self.at_most, "options": self.options}


def run_window_options(events) -> str:
    """The window options (`` --no-fullscreen``…) the session's last run — its start or latest
    resume (a :data:`STARTED` or :data:`RESUMED` event among ``events``) — was given, which the
    command that continues a session stopped or interrupted carries (a one-screen set-up needs them
    again); empty when none was given or stored (sessions started before 6 Dec 2026)."""
    runs = [e for e in events if getattr(e, "event", None) in (STARTED, RESUMED)]
    return _window_options(runs[-1].detail.get("options") if runs and isinstance(runs[-1].detail, dict) else None)


def continue_advice(events, n_trials: int) -> ContinueAdvice | None:
    """The advice of the session's last end (an :data:`ENDED` event among ``events``) while it holds:
    no resume since and no trial stored after it (``n_trials``, the session's stored trials, undone
    ones included); None when it does not hold, advised nothing (every eye had its end point, or the
    protocol fixed its trials) or the session never stored one (ended before 4 Dec 2026)."""
    lifecycle = [e for e in events if getattr(e, "event", None) in (STARTED, RESUMED, ENDED)]
    if not lifecycle or lifecycle[-1].event != ENDED or lifecycle[-1].after_trial != n_trials:
        return None
    detail = lifecycle[-1].detail
    trials = detail.get("continue_trials")
    if isinstance(trials, bool) or not isinstance(trials, int) or trials < 1:
        return None
    return ContinueAdvice(trials, detail.get("at_most") is True, _window_options(detail.get("options")))


@dataclass(frozen=True)
class ResultRecord:
    """The prescription a finished session reports, as stored (``results`` table, schema 5).

    ``prescription`` is its clinical notation (``"-1.25 / -0.75 x 170"``); ``sphere_d``,
    ``cylinder_d`` and ``axis_deg`` the lens (``axis_deg`` None for a lens without an axis);
    ``predicted_acuity_logmar`` and ``confidence`` (the posterior probability that the lens is
    within 0.025 logMAR of the best) may be None; ``n_trials`` the answers it rests on;
    ``intervals`` the 95 % intervals ``{"m_d": [lo, hi], ...}`` (D, degrees); ``recorded_at`` a
    unix time in seconds; ``software_version`` the lensopt that computed it; ``eye`` the eye it is
    for (``"OD"``/``"OS"``, None when the session named none; schema 7).
    """

    prescription: str
    sphere_d: float
    cylinder_d: float
    axis_deg: float | None
    predicted_acuity_logmar: float | None
    confidence: float | None
    n_trials: int
    intervals: dict = field(default_factory=dict)
    recorded_at: float = 0.0
    software_version: str = ""
    eye: str | None = None

    def __post_init__(self):
        owner = "ResultRecord"
        check_eye(owner, self.eye)
        check_text(owner, "prescription", self.prescription)
        for name in ("sphere_d", "cylinder_d", "recorded_at"):
            object.__setattr__(self, name, check_finite(owner, name, getattr(self, name)))
        for name in ("axis_deg", "predicted_acuity_logmar", "confidence"):
            value = getattr(self, name)
            if value is not None:
                object.__setattr__(self, name, check_finite(owner, name, value))
        object.__setattr__(self, "n_trials", check_int(owner, "n_trials", self.n_trials, 0))
        check_string(owner, "software_version", self.software_version)
        intervals = {str(k): [check_finite(owner, "intervals", v) for v in pair] for k, pair in self.intervals.items()}
        if any(len(pair) != 2 for pair in intervals.values()):
            raise ValueError(f"{owner}.intervals must map names to [low, high] pairs, got {self.intervals!r}")
        if "axis_deg" in intervals:  # one convention, results stored before it (6 Dec 2026) too: the same arc
            intervals["axis_deg"] = list(axis_interval_deg(*intervals["axis_deg"]))
        object.__setattr__(self, "intervals", intervals)

    def intervals_json(self) -> str:
        """``intervals`` as JSON text (how the store keeps it)."""
        return to_json("ResultRecord", "intervals", self.intervals)


@dataclass(frozen=True)
class SessionInfo:
    """A stored session: who, what, when, how it was configured and how many trials it holds.

    ``kind`` is the feedback mode (:data:`LETTERS_KIND`, :data:`DUEL_KIND` or :data:`RANKING_KIND`)
    and ``n_trials`` counts its stored trials (letter trials, duels or rankings), ``n_undone`` those of
    them the clinician undid (kept, marked void: :meth:`SessionStore.void_trial`), so that
    ``n_answers`` (the difference) are the answers the search rests on. ``protocol``, ``calibration`` and ``optimizer_settings`` are the dicts given to
    :meth:`SessionStore.create_session`, read back from JSON; ``created_at``/``updated_at`` are
    unix times in seconds (``updated_at`` moves with every trial and status change). ``result``:
    the prescription the session reported when it finished (:class:`ResultRecord`), or None;
    ``results`` every result it reported, one per eye (OD first), ``result`` being the first.
    ``events``: what happened to it besides its answers (:class:`SessionEvent`, oldest first: its start
    and each resume, with the software that ran; none for a session stored before schema 10);
    ``unreadable_events``: the problem of each stored event another program changed so that it cannot
    be read (``its event 2's detail is not the JSON lensopt wrote (…)``), skipped from ``events``
    (:func:`unreadable_events_text` says it in one phrase).
    """

    session_id: int
    participant: str
    kind: str
    status: str
    created_at: float
    updated_at: float
    seed: int
    software_version: str
    protocol: dict
    calibration: dict
    optimizer_settings: dict
    n_trials: int
    result: ResultRecord | None = None
    results: tuple = ()
    n_undone: int = 0
    events: tuple = ()
    unreadable_events: tuple = ()

    @property
    def n_answers(self) -> int:
        """The stored trials not undone: the answers the session's search rests on."""
        return self.n_trials - self.n_undone

    @property
    def eye(self) -> str | None:
        """The eye(s) the session tests (``"OD"``, ``"OS"``, ``"OU"``; its protocol's ``[session] eye``), or None."""
        return (self.protocol.get("session") or {}).get("eye")

    def __post_init__(self):
        owner = "SessionInfo"
        check_int(owner, "session_id", self.session_id, 1)
        check_text(owner, "participant", self.participant)
        check_text(owner, "kind", self.kind)
        if self.status not in STATUSES:
            raise ValueError(f"{owner}.status must be one of {', '.join(STATUSES)}, got {self.status!r}")
        check_finite(owner, "created_at", self.created_at)
        check_finite(owner, "updated_at", self.updated_at)
        check_int(owner, "seed", self.seed, 0)
        check_string(owner, "software_version", self.software_version)  # text, as lensopt wrote it (may be empty)
        check_int(owner, "n_trials", self.n_trials, 0)
        check_int(owner, "n_undone", self.n_undone, 0)
        if self.n_undone > self.n_trials:
            raise ValueError(f"{owner}.n_undone must be at most n_trials ({self.n_trials}), got {self.n_undone}")
        for name in ("protocol", "calibration", "optimizer_settings"):
            if not isinstance(getattr(self, name), dict):
                raise ValueError(f"{owner}.{name} must be a dict, got {getattr(self, name)!r}")
        object.__setattr__(self, "unreadable_events", tuple(self.unreadable_events))
        for problem in self.unreadable_events:
            check_text(owner, "unreadable_events", problem)


def unreadable_events_text(info, db_path=None) -> str | None:
    """What of ``info``'s events (a :class:`SessionInfo`, read from the database ``db_path``) could not
    be read and was skipped, in one phrase naming each and what to do (None when every event was
    read): what ``lensopt sessions`` and ``lensopt export`` warn of."""
    problems = info.unreadable_events
    if not problems:
        return None
    what = "an event" if len(problems) == 1 else f"{len(problems)} events"
    where = "" if db_path is None else f" in {db_path}"
    return (
        f"session {info.session_id}{where}: {what} another program changed could not be read and "
        f"{'was' if len(problems) == 1 else 'were'} skipped ({'; '.join(problems)}); its answers and results are "
        "read as stored — restore the database from a copy to get the event back"
    )


#: The status ``lensopt sessions`` shows for a session it cannot read (:class:`DamagedSession`).
DAMAGED = "damaged"


@dataclass(frozen=True)
class DamagedSession:
    """A stored session lensopt cannot read as it wrote it (another program changed its row, or one
    of its results): its id, ``problem`` (one phrase naming the field and its value: ``its status
    must be one of running, finished, aborted, got 'weird'``), and what could be read of it, to
    recognise it by (None where the stored value is not of its kind). ``status`` is the stored one."""

    session_id: int
    problem: str
    participant: str | None = None
    kind: str | None = None
    status: str | None = None
    created_at: float | None = None
    n_trials: int | None = None

    @classmethod
    def of_row(cls, session_id: int, problem: str, participant, kind, status, created_at, n_trials) -> DamagedSession:
        """The damaged session of a stored row's raw values, each kept only if it is of its kind."""

        def text(value):
            return value if isinstance(value, str) else None

        number = (
            float(created_at)
            if isinstance(created_at, numbers.Real) and not isinstance(created_at, bool) and math.isfinite(created_at)
            else None
        )
        count = n_trials if isinstance(n_trials, int) and not isinstance(n_trials, bool) else None
        return cls(session_id, problem, text(participant), text(kind), text(status), number, count)


def check_string(owner: str, name: str, value) -> str:
    """``value`` if it is a string (empty too), else a ValueError naming ``owner.name``: a field
    another program stored as a number or bytes, which JSON output could not write."""
    if not isinstance(value, str):
        raise ValueError(f"{owner}.{name} must be text, got {type(value).__name__} {value!r:.40}")
    return value
