"""Stored sessions as one tidy table: one row per trial, one column per value, no JSON in any cell.

The columns of a table are the fixed columns of the session kinds it holds (:func:`fixed_columns`,
in one order whatever the mix) and then one column per value found in the trials' ``extra``
(:func:`flatten_extra`: a nested dict ``{"a": {"b": 1}}`` gives ``a_b``, a list ``{"a": [x, y]}``
gives ``a_1``, ``a_2``; a name that is a fixed column of any kind gets an ``extra_`` prefix).

Cells: an empty cell is ``None`` (or an empty string, or a missing ``extra`` key); a float is its
shortest round-trip ``repr``, so it reads back equal; ``True``/``False`` are ``1``/``0``; text is
written as it is. Times are ISO-8601 UTC (``..._utc``, to the microsecond) and unix seconds
(``..._s``, exact). A ranking's lenses are numbered from 1 as the screen numbers them, and
``rank_k_lens`` is the number of the lens put in place ``k`` (clearest first).
"""

from __future__ import annotations

import datetime as dt

from lensopt.store.records import DUEL_KIND, KINDS, LETTERS_KIND, RANKING_KIND, RANKING_SET_SIZES
from lensopt.store.session_records import STARTED, console_trial_numbers

#: Unix time 0: ``presented_at_utc`` is ``EPOCH + presented_at_s``.
EPOCH = dt.datetime(1970, 1, 1, tzinfo=dt.UTC)

#: The columns of a trial's times: ISO-8601 UTC and unix seconds (the exact stored float).
TIME_COLUMNS = ("presented_at_utc", "answered_at_utc", "presented_at_s", "answered_at_s")

#: Keys of a letter trial's ``extra`` every letter table has a column for, empty when absent (the
#: clinician's: the lens asked for when another was set, a note).
LETTER_EXTRA_COLUMNS = ("asked_lens", "note")

#: Session-level columns of PsychoPy's wide CSV (its ``ExperimentHandler.extraInfo`` as a Builder
#: experiment fills it), written last as PsychoPy does.
PSYCHOPY_COLUMNS = ("participant", "date", "expName", "psychopyVersion", "frameRate")

#: PsychoPy's ``data.getDateStr()`` layout of ``date`` (milliseconds appended).
PSYCHOPY_DATE_FORMAT = "%Y-%m-%d_%Hh%M.%S"


def lens_columns(k: int) -> tuple[str, str, str]:
    """The columns of lens ``k`` (from 1) of a ranking: sphere, cylinder and, in a ranking of the
    full prescription (schema 9), the axis (in a ranking of sphere and cylinder: its --axis, else empty)."""
    return (f"lens_{k}_sphere_d", f"lens_{k}_cylinder_d", f"lens_{k}_axis_deg")


def rank_column(k: int) -> str:
    """The column of place ``k`` (from 1, the clearest) of a ranking: the lens number put there."""
    return f"rank_{k}_lens"


#: A duel's two lenses: sphere and cylinder, and the axis of a duel of the full prescription (schema 8).
DUEL_LENS_COLUMNS = (
    "first_sphere_d",
    "first_cylinder_d",
    "first_axis_deg",
    "second_sphere_d",
    "second_cylinder_d",
    "second_axis_deg",
)


#: The session's columns on every trial's row, after ``kind``: who answered (``keyboard``, a person;
#: ``simulated``), the rule that chose the trials and the session's seed — so that pooled data tell
#: a pilot's simulated sessions from the participants' and name what reproduces each.
SESSION_COLUMNS = ("observer", "rule", "seed")


def session_values(info) -> dict:
    """:data:`SESSION_COLUMNS` of session ``info`` (its stored protocol: ``[protocol] observer``,
    ``[optimizer] rule``; empty where a hand-edited protocol lacks them)."""
    protocol = info.protocol if isinstance(info.protocol, dict) else {}

    def field(table: str, key: str):
        section = protocol.get(table)
        return section.get(key) if isinstance(section, dict) else None

    return {"observer": field("protocol", "observer"), "rule": session_rule(info), "seed": info.seed}


def session_rule(info) -> str | None:
    """The rule that chose session ``info``'s trials: its optimizer's stored settings' ``rule``, else
    its protocol snapshot's (``[optimizer] rule``, or a version-1 session's top-level ``rule``); None
    where neither names one. What ``lensopt sessions``, the export and the printed record show."""
    protocol = info.protocol if isinstance(info.protocol, dict) else {}
    table = protocol.get("optimizer")
    settings = info.optimizer_settings if isinstance(info.optimizer_settings, dict) else {}
    for rule in (settings.get("rule"), table.get("rule") if isinstance(table, dict) else None, protocol.get("rule")):
        if isinstance(rule, str) and rule:
            return rule
    return None


#: The session's protocol on every trial's row, after the fixed columns (and a letter table's
#: :data:`LETTER_EXTRA_COLUMNS`), before the other ``extra`` columns: the protocol's name
#: (``[protocol] name``), the number of letters the session drew from (``n_alternatives``: the
#: guess rate of naming a letter is ``1 / n_alternatives``) and those letters (``[letters]
#: alphabet``) — so that pooled 26-AFC and 10-AFC rows are told apart and a psychometric function
#: can be fitted with its guess rate. Appended in Dec 2026, after every column exported before.
PROTOCOL_COLUMNS = ("protocol", "n_alternatives", "alphabet")

#: The trial's number as the console and the log gave it (``OD trial 5``, ``undo: OS trial 3``):
#: among its eye's answers kept, from 1; an undone answer has the number of the one that replaced it
#: (:func:`lensopt.store.session_records.console_trial_numbers`) — ``trial_index`` counts every row
#: stored, both eyes' and the undone ones. After :data:`PROTOCOL_COLUMNS` (appended in Dec 2026, after
#: every column exported before).
EYE_TRIAL_COLUMN = "eye_trial_number"


def protocol_values(info) -> dict:
    """:data:`PROTOCOL_COLUMNS` of session ``info``, from its stored protocol snapshot (``[protocol]
    name``, ``[letters] alphabet``); ``n_alternatives`` is the alphabet's length or, without one,
    the ``n_alternatives`` the optimizer's stored settings name; each empty where neither says
    (a hand-made or early session): not guessed."""
    protocol = info.protocol if isinstance(info.protocol, dict) else {}

    def field(table: str, key: str):
        section = protocol.get(table)
        value = section.get(key) if isinstance(section, dict) else None
        return value if isinstance(value, str) and value else None

    alphabet = field("letters", "alphabet")
    settings = info.optimizer_settings if isinstance(info.optimizer_settings, dict) else {}
    stored = settings.get("n_alternatives")
    stored = stored if isinstance(stored, int) and not isinstance(stored, bool) and stored >= 2 else None
    return {
        "protocol": field("protocol", "name"),
        "n_alternatives": len(alphabet) if alphabet is not None else stored,
        "alphabet": alphabet,
    }


def fixed_columns(kinds, n_lenses: int = 0) -> tuple[str, ...]:
    """The fixed columns of a table holding sessions of ``kinds``, in order; ``n_lenses``: the
    largest ranking set. A letter table also has :data:`LETTER_EXTRA_COLUMNS` (after ``void``)."""
    kinds = {kind if kind in KINDS else LETTERS_KIND for kind in kinds}
    letters, duels, rankings = LETTERS_KIND in kinds, DUEL_KIND in kinds, RANKING_KIND in kinds
    columns = ["session_id", "participant", "kind", *SESSION_COLUMNS, "trial_index"]
    columns += ["eye"]  # a letter trial's own; a duel's or ranking's, its session's (one eye each)
    columns += ["letter"] if letters else []
    columns += ["letters"] if duels or rankings else []
    columns += ["letter_logmar"]
    columns += ["sphere_d", "cylinder_d", "axis_deg"] if letters else []
    columns += [*DUEL_LENS_COLUMNS] if duels else []
    if rankings:
        columns += ["n_lenses", *(c for k in range(1, n_lenses + 1) for c in lens_columns(k))]
    columns += ["response", "correct"] if letters else []
    columns += ["answer"] if duels else []
    columns += [rank_column(k) for k in range(1, n_lenses + 1)] if rankings else []
    columns += ["rt_s", *TIME_COLUMNS]
    columns += ["void"] if letters else []
    return tuple(columns)


#: Names an ``extra`` value never takes as they are (it gets the ``extra_`` prefix instead).
RESERVED_COLUMNS = (
    frozenset(fixed_columns(KINDS, max(RANKING_SET_SIZES)))
    | frozenset(PROTOCOL_COLUMNS)
    | frozenset(PSYCHOPY_COLUMNS)
    | {EYE_TRIAL_COLUMN}
)


def table_columns(kinds, n_lenses: int = 0) -> tuple[str, ...]:
    """The columns of a table holding sessions of ``kinds`` before its free ``extra`` columns: the
    fixed columns (:func:`fixed_columns`), a letter table's :data:`LETTER_EXTRA_COLUMNS`, then
    :data:`PROTOCOL_COLUMNS` and :data:`EYE_TRIAL_COLUMN`."""
    letters = any(kind not in (DUEL_KIND, RANKING_KIND) for kind in kinds)
    return (
        *fixed_columns(kinds, n_lenses),
        *(LETTER_EXTRA_COLUMNS if letters else ()),
        *PROTOCOL_COLUMNS,
        EYE_TRIAL_COLUMN,
    )


def flatten_extra(value, path: tuple = ()) -> list[tuple[tuple, object]]:
    """``(path, value)`` of every scalar in ``value`` (a trial's ``extra``): a dict's keys and a
    list's positions (from 1) make the path; an empty dict or list has none."""
    if isinstance(value, dict):
        return [item for key, v in value.items() for item in flatten_extra(v, (*path, str(key)))]
    if isinstance(value, (list, tuple)):
        return [item for k, v in enumerate(value, start=1) for item in flatten_extra(v, (*path, k))]
    return [(path, value)]


class ExtraColumns:
    """The column of each ``extra`` path of one table, in order of first appearance.

    A path's name is its parts joined by ``_``; a name that is a fixed column of any kind (or
    empty) gets the ``extra_`` prefix, and a name already given to another path a suffix ``_2``,
    ``_3``... (``{"a_1": 0, "a": [1]}``; the JSON export keeps such values apart).
    """

    def __init__(self, preset=()):
        self.names: dict[tuple, str] = {}
        for name in preset:
            self.names[(name,)] = name

    def name(self, path: tuple) -> str:
        if path not in self.names:
            base = "_".join(str(part) for part in path)
            base = f"extra_{base}" if not base or base in RESERVED_COLUMNS else base
            name, n, taken = base, 2, set(self.names.values())
            while name in taken:
                name, n = f"{base}_{n}", n + 1
            self.names[path] = name
        return self.names[path]

    @property
    def columns(self) -> list[str]:
        return list(self.names.values())


def cell(value) -> str:
    """``value`` as a CSV cell: empty for None, ``1``/``0`` for a bool, ``repr`` for a float."""
    if value is None:
        return ""
    if isinstance(value, bool):
        return "1" if value else "0"
    if isinstance(value, float):
        return repr(value)
    return str(value)


def _moment(unix_s: float) -> dt.datetime | None:
    try:
        return EPOCH + dt.timedelta(seconds=unix_s)
    except OverflowError:  # beyond years 1-9999: the unix seconds still say it
        return None


def iso_utc(unix_s: float) -> str:
    """``unix_s`` as ISO-8601 UTC to the microsecond (``2026-11-24T06:52:32.123456Z``), empty out of range."""
    moment = _moment(unix_s)
    return "" if moment is None else moment.replace(tzinfo=None).isoformat(timespec="microseconds") + "Z"


def psychopy_date(unix_s: float) -> str:
    """``unix_s`` in PsychoPy's ``date`` layout (``2026-11-24_06h52.32.123``), in UTC, empty out of range."""
    moment = _moment(unix_s)
    return "" if moment is None else f"{moment.strftime(PSYCHOPY_DATE_FORMAT)}.{moment.microsecond // 1000:03d}"


#: Fields of a letter trial written as they are (``correct`` and ``void`` as 1/0).
LETTER_FIELDS = ("eye", "letter", "letter_logmar", "sphere_d", "cylinder_d", "axis_deg", "response", "correct", "rt_s")

#: Fields of a duel written as they are (the axes of a duel of sphere and cylinder: its --axis, else empty).
DUEL_FIELDS = ("letters", "letter_logmar", *DUEL_LENS_COLUMNS, "answer", "rt_s")


def _times(trial) -> dict:
    return {
        "presented_at_utc": iso_utc(trial.presented_at),
        "answered_at_utc": iso_utc(trial.answered_at),
        "presented_at_s": trial.presented_at,
        "answered_at_s": trial.answered_at,
    }


def phoropter_axis_deg(protocol) -> float | None:
    """The axis the phoropter's cylinder was set to in a sphere-and-cylinder search (``--axis``,
    ``[lens] axis_deg``, as the session's ``protocol`` snapshot stored it), along which its lenses'
    signed cylinders lie; None without one (the search was along the patient's unknown axis), or in a
    full prescription, whose trials store their own axes."""
    lens = protocol.get("lens") if isinstance(protocol, dict) else None
    axis = lens.get("axis_deg") if isinstance(lens, dict) else None
    if isinstance(axis, bool) or not isinstance(axis, (int, float)) or not 0.0 < float(axis) <= 180.0:
        return None  # 0, as the protocol's default: no axis
    return float(axis)


def _session_columns(info) -> tuple[dict, float | None]:
    """The columns every trial row of session ``info`` shares, and its :func:`phoropter_axis_deg`:
    read once per session, not once per trial."""
    values = {"session_id": info.session_id, "participant": info.participant, "kind": info.kind}
    values.update(session_values(info))
    values.update(protocol_values(info))
    return values, phoropter_axis_deg(info.protocol)


def _trial_values(info, trial, shared: dict, axis_deg: float | None) -> dict:
    """The fixed columns of one stored trial of ``info``'s kind, after the session's ``shared`` ones
    (:func:`_session_columns`). A sphere-and-cylinder search with an axis (``axis_deg``) stores its
    lenses without one: its rows get the session's, so that each row's sphere, cylinder and axis is
    the lens that was set (a signed cylinder at that axis is a sphero-cylinder in either convention)."""
    values = dict(shared)
    values["trial_index"] = trial.index
    values["eye"] = info.eye  # a letter trial's own below (each eye of a session of both)
    if info.kind == DUEL_KIND:
        values.update({name: getattr(trial, name) for name in DUEL_FIELDS})
        if trial.first_axis_deg is None and axis_deg is not None:
            values.update(first_axis_deg=axis_deg, second_axis_deg=axis_deg)
    elif info.kind == RANKING_KIND:
        values.update(letters=trial.letters, letter_logmar=trial.letter_logmar, n_lenses=len(trial.lenses_d))
        axes = trial.axes_deg or (axis_deg,) * len(trial.lenses_d)
        for k, (lens, axis) in enumerate(zip(trial.lenses_d, axes, strict=True), start=1):
            values.update(zip(lens_columns(k), (*lens, axis), strict=True))
        values.update({rank_column(place): i + 1 for place, i in enumerate(trial.order, start=1)})
        values["rt_s"] = trial.rt_s
    else:
        values.update({name: getattr(trial, name) for name in LETTER_FIELDS})
        if trial.axis_deg is None:
            values["axis_deg"] = axis_deg
        values["void"] = trial.void
    return {**values, **_times(trial)}


def tidy_table(sessions) -> tuple[list[str], list[dict]]:
    """The columns and rows (column -> cell text) of ``sessions``: ``(SessionInfo, trials)`` pairs."""
    kinds = [info.kind for info, _ in sessions]
    n_lenses = max(
        (len(t.lenses_d) for info, trials in sessions if info.kind == RANKING_KIND for t in trials), default=0
    )
    columns = table_columns(kinds, n_lenses)
    extra = ExtraColumns(c for c in columns if c in LETTER_EXTRA_COLUMNS)
    rows = []
    for info, trials in sessions:
        eyes = [getattr(trial, "eye", None) or info.eye for trial in trials]  # a duel's or ranking's: its session's
        numbers = console_trial_numbers(eyes, [bool(getattr(trial, "void", False)) for trial in trials])
        shared, axis_deg = _session_columns(info)
        for trial, number in zip(trials, numbers, strict=True):
            row = {name: cell(value) for name, value in _trial_values(info, trial, shared, axis_deg).items()}
            row[EYE_TRIAL_COLUMN] = cell(number)
            row.update((extra.name(path), cell(value)) for path, value in flatten_extra(trial.extra))
            rows.append(row)
    return [*columns, *(c for c in extra.columns if c not in columns)], rows


def psychopy_table(sessions) -> tuple[list[str], list[dict]]:
    """:func:`tidy_table` in PsychoPy's wide layout: the trial columns, then :data:`PSYCHOPY_COLUMNS`
    (``date`` the session's start; ``expName`` its protocol's name; ``psychopyVersion`` the PsychoPy
    that ran its start, empty for a session stored before its software was (schema 10);
    ``frameRate`` empty: lensopt does not measure it)."""
    columns, rows = tidy_table(sessions)
    by_id = {info.session_id: info for info, _ in sessions}
    for row in rows:
        info = by_id[int(row["session_id"])]
        row["date"] = psychopy_date(info.created_at)
        protocol = info.protocol.get("protocol")
        name = protocol.get("name") if isinstance(protocol, dict) else None
        row["expName"] = name if isinstance(name, str) and name else "lensopt"
        started = info.events[0] if info.events and info.events[0].event == STARTED else None
        ran: dict = {} if started is None else started.software  # a session of before schema 10: not known
        row["psychopyVersion"] = ran.get("psychopy") or ""
        row["frameRate"] = ""
    return [c for c in columns if c != "participant"] + list(PSYCHOPY_COLUMNS), rows
