"""The stored session as the dashboard reads it: who and what (:class:`SessionHeader`) and the trials
as parallel read-only arrays (:class:`TrialSeries`), with the counts' words the panels share
(:func:`count_text`: answers kept, those undone said apart).

Built by :mod:`lensopt.dashboard.model` from the store's records; part of every
:class:`~lensopt.dashboard.snapshot.DashboardSnapshot`.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from lensopt.refraction.most_plus import MAY_BE_TOO_MINUS
from lensopt.store.records import EYE_NAMES
from lensopt.store.session_records import ContinueAdvice, console_trial_numbers, undone_suffix

#: Guess rate when the protocol does not say how many letters the patient chooses from.
DEFAULT_GUESS_RATE = 1.0 / 26.0


def frozen_array(values, dtype=float) -> np.ndarray:
    """A read-only copy of ``values`` (snapshots are shared between threads)."""
    out = np.array(values, dtype=dtype)
    out.setflags(write=False)
    return out


def elapsed_s(series) -> float:
    """Seconds from the first presentation of ``series`` (trials or duels) to its last answer."""
    if len(series.index) == 0:
        return 0.0
    return float(series.answered_at[-1] - series.presented_at[0])


def count_text(n: int, noun: str = "trial", undone: int = 0) -> str:
    """``7 trials``, ``1 trial``, ``7 trials (+1 undone)``: the answers kept, those the clinician
    undid (kept, marked void) said apart, never counted among them."""
    return f"{n} {noun}{'' if n == 1 else 's'}{undone_suffix(undone)}"


def answer_numbers(eyes, void, per_eye: bool = True) -> np.ndarray:
    """:func:`lensopt.store.session_records.console_trial_numbers`, frozen: the trial number the
    console gave each stored trial (of its eye, ``per_eye``; else of the session: a plot's position
    on one axis), an undone answer the number of the one that replaced it."""
    return frozen_array(console_trial_numbers(eyes, void, per_eye), int)


#: The banner of a session answered by the simulated observer (``[protocol] observer = "simulated"``):
#: on the printed record, the dashboard's title lines and its report.
SIMULATED_BANNER = "SIMULATED PATIENT — not a prescription"


@dataclass(frozen=True)
class SessionHeader:
    """Who, what and when: the session facts the summary and the report print. ``status``: as shown
    (:func:`lensopt.store.claim.session_status`): ``running`` while a program runs the session,
    ``interrupted`` for one stored as running that none runs, ``stopped`` for one the person quit
    (stored ``aborted``), ``finished``. ``eye``: the eye(s) the session tests (``"OD"``, ``"OS"``, ``"OU"``: its
    protocol's ``[session] eye``), None when it names none. ``n_trials_stored``: the rows stored,
    ``n_undone_stored`` those of them the clinician undid (kept, marked void). ``database``: the
    file it was read from, for the command that continues it (None: not known). ``rule``: the rule,
    with the largest amplitude of accommodation its model allowed for when it allowed any
    (:func:`lensopt.dashboard.replay.rule_label`). ``most_plus_advice``: for a search of sphere and
    cylinder whose model has no accommodation, what to do about a lens that may be too minus (the
    summary's "Accommodation" row, :func:`lensopt.refraction.most_plus.dashboard_advice`); None when
    the lens is the most-plus one (the full prescription, a model told the amplitudes).
    ``continue_advice``: for a finished session whose end advised more trials (eyes short of their
    target; :func:`lensopt.store.continue_advice`), that advice, for the summary's "Continue" row.
    ``window_options``: those its last run was given (`` --no-fullscreen``,
    :func:`lensopt.store.run_window_options`), carried by the command that continues it.
    ``simulated``: the answers were the simulated observer's (:attr:`simulated_suffix`)."""

    session_id: int
    participant: str
    status: str
    rule: str
    seed: int
    n_trials_stored: int
    created_at: float
    updated_at: float
    guess_rate: float = DEFAULT_GUESS_RATE
    eye: str | None = None
    n_undone_stored: int = 0
    database: str | None = None
    most_plus_advice: str | None = None
    continue_advice: ContinueAdvice | None = None
    window_options: str = ""
    simulated: bool = False

    def __post_init__(self):
        if not 0 <= self.n_undone_stored <= self.n_trials_stored:
            raise ValueError(
                f"SessionHeader.n_undone_stored must be in [0, {self.n_trials_stored}], got {self.n_undone_stored}"
            )
        if self.eye is not None and self.eye not in EYE_NAMES:
            raise ValueError(f"SessionHeader.eye must be one of {', '.join(EYE_NAMES)} or None, got {self.eye!r}")
        if not 0.0 <= self.guess_rate < 1.0:
            raise ValueError(f"SessionHeader.guess_rate must be in [0, 1), got {self.guess_rate!r}")
        if self.n_trials_stored < 0:
            raise ValueError(f"SessionHeader.n_trials_stored must be >= 0, got {self.n_trials_stored}")

    @property
    def n_answers_stored(self) -> int:
        """The rows stored but those undone: the answers the search rests on."""
        return self.n_trials_stored - self.n_undone_stored

    @property
    def who(self) -> str:
        """``P01`` or, when the session names its eye, ``P01, OD`` (inside parentheses: its long
        name has its own, ``OD (right eye)``, which the summary panel's session row gives)."""
        return self.participant if self.eye is None else f"{self.participant}, {self.eye}"

    @property
    def simulated_suffix(self) -> str:
        """`` · SIMULATED PATIENT — not a prescription`` for a simulated observer's session, else
        nothing: after the dashboard's and the report's title lines, as the printed record heads its
        page (a simulated session's lens looked like a prescription on the dashboard)."""
        return f" · {SIMULATED_BANNER}" if self.simulated else ""

    def accommodation_rows(self) -> list[tuple]:
        """Under the lens of a search of sphere and cylinder whose model has no accommodation, the
        summary's row that it may be too minus and what to do (:attr:`most_plus_advice`, the closing
        console's warning in short); none for the full prescription or a model told the amplitudes."""
        advice = self.most_plus_advice
        return [] if advice is None else [("Accommodation", MAY_BE_TOO_MINUS, advice)]

    @property
    def session_text(self) -> str:
        """The summary panel's session row: ``3 · P01 · OD (right eye) · running``."""
        eye = "" if self.eye is None else f" · {EYE_NAMES[self.eye]}"
        return f"{self.session_id} · {self.participant}{eye} · {self.status}"


@dataclass(frozen=True)
class TrialSeries:
    """The trials shown, as parallel arrays (1-based ``index``). ``eye``: each trial's eye (``"OD"``,
    ``"OS"``, or ``""`` when the session named none); left out, no trial names one. ``void``: each
    trial's answer undone by the clinician (kept, marked void: no trial the search was told, drawn
    apart, never counted); left out, none was."""

    index: np.ndarray
    sphere_d: np.ndarray
    cylinder_d: np.ndarray
    letter_logmar: np.ndarray
    correct: np.ndarray
    presented_at: np.ndarray
    answered_at: np.ndarray
    eye: np.ndarray | None = None
    void: np.ndarray | None = None

    def __post_init__(self):
        n = len(self.index)
        if self.eye is None:
            object.__setattr__(self, "eye", frozen_array([""] * n, str))
        if self.void is None:
            object.__setattr__(self, "void", frozen_array([False] * n, bool))
        fields = ("sphere_d", "cylinder_d", "letter_logmar", "correct", "presented_at", "answered_at", "eye", "void")
        for name in fields:
            if len(getattr(self, name)) != n:
                raise ValueError(f"TrialSeries.{name} must have {n} entries like index")

    def eye_runs(self) -> list[tuple[str, int, int]]:
        """The consecutive runs of trials of one eye, ``(eye, first, last)`` as positions in the
        arrays (``[("OD", 0, 11), ("OS", 12, 23)]`` for a session of both eyes); one run of ``""``
        when no trial names an eye."""
        runs: list[tuple[str, int, int]] = []
        assert self.eye is not None  # filled in by __post_init__
        for i, eye in enumerate(self.eye.tolist()):
            if runs and runs[-1][0] == eye:
                runs[-1] = (eye, runs[-1][1], i)
            else:
                runs.append((eye, i, i))
        return runs

    @property
    def number(self) -> np.ndarray:
        """Each trial's place on a plot's axis, as the console numbers trials: by the answers kept
        (the session's, one axis for both eyes), an undone answer at the number of the answer that
        replaced it (:func:`answer_numbers`) — after one undo, the 10th answer is trial 10, not row 11."""
        assert self.void is not None  # filled in by __post_init__
        return answer_numbers(self.eye, self.void, per_eye=False)

    def answers_after_rows(self, n_rows) -> np.ndarray:
        """The answers kept among the first ``n_rows`` trials stored (each of an array of counts)."""
        assert self.void is not None  # filled in by __post_init__
        kept = np.concatenate([[0], np.cumsum(~self.void.astype(bool))])
        return kept[np.asarray(n_rows, dtype=int)]

    @property
    def n(self) -> int:
        """The trials stored (those undone too): positions in the arrays, not answers (:attr:`n_answers`)."""
        return len(self.index)

    @property
    def n_undone(self) -> int:
        """The answers undone among them."""
        assert self.void is not None  # filled in by __post_init__
        return int(self.void.sum())

    @property
    def n_answers(self) -> int:
        """The answers kept: the trials but those undone."""
        return self.n - self.n_undone

    def answered(self) -> TrialSeries:
        """The trials whose answers were kept (those undone left out): what the search was told."""
        assert self.void is not None  # filled in by __post_init__
        return self._where(~self.void)

    def _where(self, keep) -> TrialSeries:
        arrays = {name: np.asarray(getattr(self, name)) for name in self.__dataclass_fields__}
        return TrialSeries(**{name: frozen_array(a[keep], a.dtype) for name, a in arrays.items()})

    @property
    def last_eye(self) -> str:
        """The last trial's eye (``""`` without trials, or in a session that names none)."""
        assert self.eye is not None  # filled in by __post_init__
        return str(self.eye[-1]) if self.n else ""

    def of_eye(self, eye: str) -> TrialSeries:
        """The trials of ``eye`` alone (``"OD"``, ``"OS"``, or ``""`` of a session that names none)."""
        assert self.eye is not None  # filled in by __post_init__
        return self._where(self.eye == eye)

    @classmethod
    def from_records(cls, records) -> TrialSeries:
        """Arrays from store ``TrialRecord`` objects (any objects with the same attributes; without
        ``eye`` or ``void``, as records stored before them: none named, none undone)."""
        dtypes = {"index": int, "correct": bool}
        arrays = {
            name: frozen_array([getattr(r, name) for r in records], dtypes.get(name, float))
            for name in cls.__dataclass_fields__
            if name not in ("eye", "void")
        }
        return cls(
            **arrays,
            eye=frozen_array([getattr(r, "eye", None) or "" for r in records], str),
            void=frozen_array([bool(getattr(r, "void", False)) for r in records], bool),
        )
