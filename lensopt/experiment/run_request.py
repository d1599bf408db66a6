"""What ``lensopt run`` is asked to do (:class:`RunRequest`, checked as it is made) and what a run
gives back (:class:`SessionOutcome`); :mod:`lensopt.experiment.session` runs it."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from lensopt.store import ResultRecord
from lensopt.store.session_records import undone_suffix

MAX_SEED = 2**31 - 1
"""Largest seed drawn when none is given (kept small so people can type it back)."""


#: The longest participant id ``lensopt run`` takes (an id, not a note: the sessions list shows it).
MAX_PARTICIPANT_LENGTH = 64


@dataclass(frozen=True)
class RunRequest:
    """What ``lensopt run`` was asked to do. ``resume`` (a session id) replaces protocol/participant;
    ``start`` (clinical notation) replaces the protocol's ``[start]`` refraction, ``axis_deg`` its
    ``[lens] axis_deg`` (``--axis``)."""

    db_path: Path
    protocol_path: Path | None = None
    participant: str | None = None
    observer: str | None = None
    seed: int | None = None
    trials: int | None = None
    frames_dir: Path | None = None
    resume: int | None = None
    fullscreen: bool | None = None
    dashboard: bool = False
    start: str | None = None
    eye: str | None = None
    axis_deg: float | None = None

    def __post_init__(self):
        if self.resume is None and self.protocol_path is None:
            raise ValueError("--protocol FILE is required for a new session (or --resume SESSION_ID)")
        if self.resume is None and not (self.participant or "").strip():
            raise ValueError("--participant ID is required for a new session (or --resume SESSION_ID)")
        if self.resume is None and self.participant is not None:
            if any("\udc80" <= c <= "\udcff" for c in self.participant):  # a byte the terminal's UTF-8 could not read
                raise ValueError(
                    "--participant is not UTF-8 text (a byte of another encoding, e.g. Latin-1): type it in a "
                    "UTF-8 terminal, or give an id in plain letters and digits (e.g. P001)"
                )
            if not self.participant.isprintable():
                raise ValueError("--participant must be one line of printable text (no tab or newline), e.g. P001")
            if len(self.participant.strip()) > MAX_PARTICIPANT_LENGTH:
                raise ValueError(
                    f"--participant is {len(self.participant.strip())} characters long; give an id of at most "
                    f"{MAX_PARTICIPANT_LENGTH} (e.g. P001)"
                )
        if self.seed is not None and not 0 <= self.seed <= 2**63 - 1:
            raise ValueError(f"--seed must be an integer in [0, 2**63 - 1], got {self.seed}")
        if self.trials is not None and self.trials < 1:
            raise ValueError(f"--trials must be at least 1, got {self.trials}")
        if self.axis_deg is not None and not 1.0 <= self.axis_deg <= 180.0:
            raise ValueError(f"--axis {self.axis_deg:g} is outside 1-180 degrees: give e.g. 180 (not 0) or 90")
        if self.axis_deg is not None and self.start is not None and self.resume is None:  # a resume ignores both
            raise ValueError(
                "--axis is the phoropter's axis of a sphere-and-cylinder search; the full prescription (--start) "
                "searches the axis itself: leave --axis out"
            )

    def started_detail(self, source_file: dict | None, file_trials: int | None) -> dict:
        """The ``started`` event's detail of the session this request creates: which protocol file,
        and which version of it, the session ran (``source_file``); its ``--trials`` and the file's
        ``[optimizer] trials`` (``file_trials``), so that its record names the budget "--trials 20 at
        the start (the protocol's 260)", not "the protocol's 20" (the stored protocol holds 20)."""
        detail: dict = {} if source_file is None else {"protocol_file": source_file}
        if self.trials is not None:
            detail.update(trials_given=self.trials, protocol_trials=file_trials)
        return self._with_window_options(detail)

    def resumed_detail(self, n_trials: int) -> dict:
        """The ``resumed`` event's detail: the budget per eye it runs with (``n_trials``), the
        ``--trials`` given, and its window options (:attr:`window_options`), which the command that
        continues the session, should this run stop too, carries."""
        return self._with_window_options({"trials": n_trials, "trials_given": self.trials})

    def _with_window_options(self, detail: dict) -> dict:
        """An event's ``detail`` with this run's window options, when it was given any."""
        return {**detail, "options": self.window_options} if self.window_options else detail

    @property
    def window_options(self) -> str:
        """The window options given (`` --no-fullscreen``, `` --fullscreen``, or none), which a command
        that continues the session carries: on a one-screen set-up without --no-fullscreen the console
        would be drawn on the chart, and the command printed would be refused."""
        if self.fullscreen is None:
            return ""
        return " --fullscreen" if self.fullscreen else " --no-fullscreen"


@dataclass(frozen=True)
class SessionOutcome:
    """What is stored: ``stopped_at`` and ``confidence`` when the optimizer's stopping rule
    (``[stop]``) ended the session before its last trial; ``result`` the prescription a finished
    full-prescription session stored (``results``: one per eye of a session of both eyes, OD first)."""

    session_id: int
    status: str
    n_trials: int
    stopped_at: int | None = None
    confidence: float | None = None
    result: ResultRecord | None = None
    results: tuple = ()
    #: The stopping rule's threshold (``[stop] confidence``), to whose decimals ``confidence`` is shown.
    confidence_target: float | None = None
    #: Answers the clinician undid (kept in the database, marked void); ``n_trials`` counts the others.
    n_undone: int = 0

    def stored_text(self) -> str:
        """``40 trials stored``, and the answers undone: ``40 trials stored (+1 undone)``."""
        return f"{self.n_trials} trials stored{undone_suffix(self.n_undone)}"
