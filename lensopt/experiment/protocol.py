"""Experiment protocols: TOML files read with ``tomllib`` and validated into frozen dataclasses.

A protocol sets the feedback mode (letters, duels or rankings), the optimizer (rule, trials, bounds,
inference, the model's lapse rate), the letters, the calibration, the display, timing, feedback,
breaks, the response keys and, optionally, when a letter session may stop early (``[stop]``) and the
starting refraction of a full-prescription letter session (``[start]``, :meth:`Protocol.with_start`). Every
section is a table of the same name; a missing required field, an out-of-range value or an
unknown key is a :class:`ProtocolError` whose one-line message names the file, the field and the
allowed values. Fields that depend on each other (a duel or ranking rule for that feedback,
distinct answer keys) are checked once all tables are read. See ``protocols/*.toml``. The tables
themselves are in :mod:`lensopt.experiment.protocol_sections`; those that configure the search,
and the rule names checked here, are defined in :mod:`lensopt.experiment.search_sections`.
"""

from __future__ import annotations

import dataclasses
import hashlib
import tomllib
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from lensopt.boxes import first_outside
from lensopt.errors import ProtocolError
from lensopt.experiment.protocol_checks import (
    box_step_problem,
    check_ranking,
    foreign_key_problem,
    foreign_table_problem,
    fractional_axis_problem,
    ignored_feedback_problem,
    ignored_optimizer_field,
    one_line_name_problem,
    phoropter_problem,
    random_only_problem,
    toml_hint,
)
from lensopt.experiment.protocol_sections import (
    DUEL_ANSWER_KEYS,
    BreaksSection,
    CalibrationSection,
    DisplaySection,
    DuelSection,
    FeedbackSection,
    KeysSection,
    LensSection,
    LettersSection,
    OptimizerSection,
    ProtocolSection,
    RankingSection,
    ScreensSection,
    SessionSection,
    SimulatedSection,
    StartSection,
    StopSection,
    TimingSection,
    _shared_key,
)
from lensopt.experiment.protocol_start import given_start, patient_outside_start_box, phoropter_start, start_of_eyes
from lensopt.experiment.search_sections import (
    _duel_rules,
    _prescription_rules,
    _rules,
)
from lensopt.reference_data import PROTOCOLS_DIR
from lensopt.refraction.lens import PHOROPTER_STEP_D
from lensopt.stopping import rebudgeted_limits

SECTIONS = {
    "protocol": ProtocolSection,
    "session": SessionSection,
    "optimizer": OptimizerSection,
    "lens": LensSection,
    "letters": LettersSection,
    "calibration": CalibrationSection,
    "display": DisplaySection,
    "screens": ScreensSection,
    "timing": TimingSection,
    "feedback": FeedbackSection,
    "breaks": BreaksSection,
    "keys": KeysSection,
    "simulated": SimulatedSection,
    "duel": DuelSection,
    "ranking": RankingSection,
    "stop": StopSection,
    "start": StartSection,
}
"""TOML table name -> dataclass. Tables whose fields all have defaults that are valid may be left out
(``[calibration]``'s defaults are not: it is required); every table and key: docs/protocols.md."""

OPTIONAL_SECTIONS = ("stop", "start")
"""Tables whose absence means "none" (the protocol's field is None) rather than their defaults."""

#: The feedback modes that search the full prescription around a starting refraction (``[start]``,
#: ``--start``): letters (:class:`~lensopt.refraction.prescription_letters.PrescriptionOptimizer`),
#: duels (:class:`~lensopt.refraction.prescription_duels.PrescriptionDuelOptimizer`) and rankings
#: (:class:`~lensopt.refraction.prescription_rankings.PrescriptionRankingOptimizer`).
START_MODES = ("letters", "duel", "ranking")


@dataclass(frozen=True)
class Protocol:
    """A validated protocol. ``source`` names where it came from (file path or stored session);
    ``source_sha256`` is the SHA-256 of the file's bytes when it was read from one (:func:`load_protocol`)."""

    protocol: ProtocolSection
    optimizer: OptimizerSection
    letters: LettersSection
    calibration: CalibrationSection
    timing: TimingSection
    feedback: FeedbackSection
    breaks: BreaksSection
    keys: KeysSection
    lens: LensSection = LensSection()
    display: DisplaySection = DisplaySection()
    screens: ScreensSection = ScreensSection()  # noqa: RUF009 - frozen, so immutable (pyproject lists the others)
    session: SessionSection = SessionSection()  # noqa: RUF009 - frozen, so immutable
    simulated: SimulatedSection = SimulatedSection()
    duel: DuelSection = DuelSection()
    ranking: RankingSection = RankingSection()
    stop: StopSection | None = None
    start: StartSection | None = None
    source: str = ""
    # provenance, not content: a protocol rebuilt from a session's snapshot is the protocol it ran
    source_sha256: str = dataclasses.field(default="", compare=False)

    def __post_init__(self):
        rule, mode = self.optimizer.rule, self.feedback_mode
        if self.start is not None and mode not in START_MODES:
            raise ValueError(
                f"[start] (--start) applies to {', '.join(START_MODES)} sessions only for now (this protocol has "
                f"protocol.feedback = {mode!r}); remove it or use a protocol of one of those"
            )
        if mode != "letters" and self.start is not None and self.lens.max_step_d:
            raise ValueError(
                "lens.max_step_d (the travel limit) applies to letter sessions of the full prescription only "
                f"for now; set lens.max_step_d = 0 in this {mode} protocol"
            )
        if mode == "letters" and self.start is not None and rule not in _prescription_rules():
            raise ValueError(
                f"optimizer.rule {rule!r} does not search the full prescription from a start (--start, [start]): "
                "use --protocol clinical-prescription for sphere, cylinder and axis, or this protocol without a "
                f"start (--axis names the cylinder's axis); a letter protocol with a start needs one of "
                f"{', '.join(map(repr, _prescription_rules()))}"
            )
        if mode == "letters" and self.start is None and rule not in _rules():
            if rule in _prescription_rules():
                raise ValueError(
                    f"optimizer.rule {rule!r} searches the full prescription; add a [start] table "
                    f"(or --start) or use one of {', '.join(map(repr, _rules()))}"
                )
            raise ValueError(
                f"optimizer.rule {rule!r} is a duel rule; protocol.feedback = 'letters' needs one of "
                f"{', '.join(map(repr, _rules()))}"
            )
        if self.lens.axis_deg and self.start is not None:
            raise ValueError(
                "lens.axis_deg (the phoropter's axis of a two-parameter search) does not apply to the full "
                "prescription, which searches the axis from its [start] (--start); remove lens.axis_deg"
            )
        for only in self.lens.full_prescription_only() if self.start is None else ():
            raise ValueError(only)
        if self.stop is not None:
            self._check_stop()
        if self.session.eye == "OU" and mode != "letters":
            raise ValueError(
                f"session.eye 'OU' (both eyes, one search each) applies to letter sessions only for now "
                f"(this protocol has protocol.feedback = {mode!r}); run OD and OS as two sessions"
            )
        if mode == "letters":
            return
        if mode == "duel":
            duel_rules = _duel_rules(self.duel.model)
            if self.start is not None and (self.duel.model != "probit" or rule not in _duel_rules("probit")):
                raise ValueError(
                    f"duels of the full prescription ([start], --start) use the probit model: set "
                    f"duel.model = 'probit' and optimizer.rule to one of {', '.join(map(repr, _duel_rules('probit')))} "
                    f"(this protocol has duel.model = {self.duel.model!r}, optimizer.rule = {rule!r}; "
                    "protocols/clinical-prescription-duel.toml has them)"
                )
            if rule not in duel_rules:
                raise ValueError(
                    f"optimizer.rule {rule!r} does not work with duel.model = {self.duel.model!r}; "
                    f"protocol.feedback = 'duel' with that model needs one of "
                    f"{', '.join(map(repr, duel_rules))}"
                )
            problem = _shared_key(self.keys, (*DUEL_ANSWER_KEYS, "pause", "confirm", "quit"), prefix="keys.")
            if problem:
                raise ValueError(f"{problem} (a duel answer needs a key of its own)")
        else:
            check_ranking(self.optimizer.rule, self.ranking, self.keys)
        if self.timing.response_timeout_s:
            raise ValueError(
                f"timing.response_timeout_s must be 0 with protocol.feedback = {mode!r} (a {mode} "
                f"waits for its answer), got {self.timing.response_timeout_s:g}"
            )

    def _check_stop(self) -> None:
        """``[stop]``: letters only; ``max_trials`` defaults to, and may not exceed, ``[optimizer] trials``."""
        stop, trials = self.stop, self.optimizer.trials
        assert stop is not None  # called only for a protocol with a [stop] table
        if self.feedback_mode != "letters":
            raise ValueError(
                f"[stop] applies to protocol.feedback = 'letters' only (this protocol has "
                f"{self.feedback_mode!r}); remove the [stop] table"
            )
        if stop.max_trials > trials:
            raise ValueError(
                f"stop.max_trials ({stop.max_trials}) must not exceed optimizer.trials ({trials}); "
                "lower stop.max_trials or raise optimizer.trials"
            )
        if stop.min_trials > (stop.max_trials or trials):
            raise ValueError(
                f"stop.min_trials ({stop.min_trials}) must not exceed the session's "
                f"{stop.max_trials or trials} trials (stop.max_trials, default optimizer.trials)"
            )
        if not stop.max_trials:
            object.__setattr__(self, "stop", dataclasses.replace(stop, max_trials=trials))

    @property
    def stop_rule(self) -> dict | None:
        """The :class:`lensopt.stopping.StopRule` dict of ``[stop]``, or None (no stopping rule)."""
        return None if self.stop is None else self.stop.rule()

    @property
    def feedback_mode(self) -> str:
        """What the patient answers: ``"letters"``, ``"duel"`` or ``"ranking"`` (``[protocol] feedback``)."""
        return self.protocol.feedback

    @property
    def guess_rate(self) -> float:
        """Chance of naming the letter by guessing: 1 / number of letters."""
        return 1.0 / len(self.letters.alphabet)

    @property
    def lens_step_d(self) -> float | None:
        return self.lens.step_d or None

    def source_file(self) -> dict | None:
        """Where a protocol read from a file came from: ``{"path": its absolute path, "sha256": of its
        bytes}`` (stored with a new session's ``started`` event); None for one not read from a file."""
        if not self.source_sha256:
            return None
        return {"path": str(Path(self.source).absolute()), "sha256": self.source_sha256}

    def to_dict(self) -> dict:
        """Plain JSON-able snapshot (tuples become lists), readable by :func:`protocol_from_dict`."""
        out = {}
        for name in SECTIONS:
            if getattr(self, name) is None:  # an optional table left out
                continue
            section = dataclasses.asdict(getattr(self, name))
            if name == "stop" and not section["check_letters"]:
                del section["check_letters"]  # left out unset, so a snapshot reads as every one before it
            if name == "optimizer" and section["accommodation_d"] is None:
                del section["accommodation_d"]  # the same: left out when not said
            out[name] = {k: list(v) if isinstance(v, tuple) else v for k, v in section.items()}
        return out

    def simulated_patient_problem(self, observer: str | None = None) -> str | None:
        """The one-line problem of a *new* session's simulated patient whose correction lies outside
        the lens box of the two-parameter search (no lens there could correct it; `lensopt simulate
        --true-sphere` refuses it too), else None. ``observer`` overrides ``[protocol] observer``
        (``--observer``). Not part of validation: a stored session's protocol is not re-checked, so
        an old session keeps resuming."""
        if (observer or self.protocol.observer) != "simulated":
            return None
        if self.start is not None:
            return patient_outside_start_box(self.start, self.simulated) if self.start.given else None
        true = (self.simulated.sphere_d, self.simulated.cylinder_d)
        box = (self.optimizer.sphere_bounds_d, self.optimizer.cylinder_bounds_d)
        outside = first_outside(true, box)
        if outside is None:
            return None
        name, value, (low, high) = ("sphere", "cylinder")[outside], true[outside], box[outside]
        return (
            f"simulated.{name}_d {value:g} is outside the lens box optimizer.{name}_bounds_d "
            f"[{low:g}, {high:g}] D, where no lens could correct it; give a value inside it or widen the box"
        )

    def with_start(self, refraction: str, warn: Callable[[str], None] | None = None) -> Protocol:
        """The protocol with the starting refraction ``refraction`` (``--start``): the protocol's own
        ``[start]`` with this refraction, or a new one with the default box. A letter protocol whose
        rule is a two-parameter rule keeps it (every letter rule searches the full prescription too).
        A high power's box is narrowed to what a phoropter can set, or refused, and ``warn`` is told
        (:func:`~lensopt.experiment.protocol_start.phoropter_start`)."""
        if self.feedback_mode not in START_MODES:
            raise ProtocolError(
                f"--start applies to {', '.join(START_MODES)} sessions only for now ({self.source} has protocol.feedback = "
                f"{self.feedback_mode!r}); leave --start out or use a protocol such as clinical-prescription"
            )
        given = given_start(self.start, refraction)
        try:
            dataclasses.replace(self, start=given)  # a start this protocol cannot take: refused before any warning
        except ValueError as exc:
            raise ProtocolError(f"--start: {str(exc).removeprefix('refraction: ')}") from None
        return dataclasses.replace(self, start=phoropter_start(given, self.lens.step_d or PHOROPTER_STEP_D, warn))

    def with_eye_starts(self, warn: Callable[[str], None]) -> Protocol:
        """A new session's protocol with each eye's start for the eyes it tests (``[session] eye``,
        ``--eye``; :func:`~lensopt.experiment.protocol_start.start_of_eyes`)."""
        if self.start is None or not self.start.given:
            return self
        return dataclasses.replace(self, start=start_of_eyes(self.start, self.session.eyes, warn))

    def phoropter_problem(self) -> str | None:
        """Why the search box of a new session's start reaches lenses a phoropter cannot set
        (:func:`~lensopt.experiment.protocol_checks.phoropter_problem`), else None."""
        return phoropter_problem(self.start)

    def with_eye(self, eye: str) -> Protocol:
        """The protocol with ``[session] eye`` set to ``eye`` (``--eye``)."""
        try:
            return dataclasses.replace(self, session=SessionSection(eye=eye))
        except ValueError as exc:
            raise ProtocolError(f"--eye: {exc}") from None

    def with_lens_axis(self, axis_deg: float) -> Protocol:
        """The protocol with ``[lens] axis_deg`` set to ``axis_deg`` (``--axis``), a whole number of degrees."""
        if axis_deg != int(axis_deg):
            raise ProtocolError(
                f"--axis {axis_deg:g} is not a whole number of degrees: give one from 1 to 180, e.g. "
                f"{max(1, min(180, round(axis_deg)))}"
            )
        try:
            return dataclasses.replace(self, lens=dataclasses.replace(self.lens, axis_deg=axis_deg))
        except ValueError as exc:
            raise ProtocolError(f"--axis: {exc}") from None

    def with_trials(self, trials: int) -> Protocol:
        """The protocol with ``[optimizer] trials`` set to ``trials`` (``--trials``). A ``[stop]``
        whose ``max_trials`` was the old trial count follows the new one; otherwise the new count
        caps ``max_trials`` (and ``min_trials``)."""
        try:
            optimizer = dataclasses.replace(self.optimizer, trials=trials)
        except ValueError as exc:
            raise ProtocolError(f"--trials: {exc}") from None
        stop = self.stop
        if stop is not None:
            min_trials, max_trials = rebudgeted_limits(stop.min_trials, stop.max_trials, self.optimizer.trials, trials)
            stop = dataclasses.replace(stop, max_trials=max_trials, min_trials=min_trials)
        return dataclasses.replace(self, optimizer=optimizer, stop=stop)


def protocol_from_dict(data: dict, source: str = "protocol") -> Protocol:
    """Validate a parsed protocol (``{table: {field: value}}``); errors name ``source``."""
    if not isinstance(data, dict):
        raise ProtocolError(f"{source}: expected TOML tables, got {type(data).__name__}")
    loose = sorted(name for name, value in data.items() if not isinstance(value, dict) and name not in SECTIONS)
    if loose:
        raise ProtocolError(
            f"{source}: {loose[0]} = {data[loose[0]]!r} is a key outside any table; every setting belongs in its "
            f"table (e.g. [optimizer] trials); allowed tables: {', '.join(SECTIONS)}"
        )
    unknown = sorted(set(data) - set(SECTIONS))
    if unknown:
        raise ProtocolError(f"{source}: unknown table [{unknown[0]}]; allowed tables: {', '.join(SECTIONS)}")
    sections: dict[str, Any] = {}
    for name, cls in SECTIONS.items():
        table = data.get(name)
        fields = dataclasses.fields(cls)
        required = [f.name for f in fields if f.default is dataclasses.MISSING]
        if table is None and name in OPTIONAL_SECTIONS:
            sections[name] = None
            continue
        if table is None:
            if not required:  # a table whose fields all have defaults may be left out, unless they need values
                try:
                    cls()
                except ValueError:
                    required = [f.name for f in fields]
            if required:
                raise ProtocolError(f"{source}: missing table [{name}] (fields: {', '.join(f.name for f in fields)})")
            table = {}
        if not isinstance(table, dict):
            raise ProtocolError(f"{source}: [{name}] must be a table")
        allowed = [f.name for f in fields]
        extra = sorted(set(table) - set(allowed))
        if extra:
            raise ProtocolError(
                f"{source}: unknown key {name}.{extra[0]}; allowed keys in [{name}]: {', '.join(allowed)}"
            )
        missing = [f for f in required if f not in table]
        if missing:
            raise ProtocolError(
                f"{source}: missing field {name}.{missing[0]} (required in [{name}]: {', '.join(required)})"
            )
        try:
            sections[name] = cls(**table)
        except ValueError as exc:  # "field must be …", named in its table (once: some messages name it)
            raise ProtocolError(f"{source}: {name}.{str(exc).removeprefix(f'{name}.')}") from None
    try:
        return Protocol(**sections, source=source)
    except ValueError as exc:
        raise ProtocolError(f"{source}: {exc}") from None


def shipped_protocols() -> list[str]:
    """Names of the protocols shipped with lensopt (``protocols/*.toml``, package ``lensopt.protocols``)."""
    return sorted(p.stem for p in PROTOCOLS_DIR.glob("*.toml"))


def looks_like_a_path(path: str | Path) -> bool:
    """Whether a ``--protocol`` value names a file (a folder in it, or ending in ``.toml``) rather
    than a shipped protocol by its bare name (``sloan-10afc``)."""
    text = str(path)
    return "/" in text or "\\" in text or Path(text).suffix.lower() == ".toml"


def resolve_protocol_path(path: str | Path) -> Path:
    """``path`` if it exists; else, for a bare name (:func:`looks_like_a_path`), the shipped protocol
    of that name, from any folder and in an installed wheel too.

    A path that does not exist is never replaced by a shipped file (``protocols/sloan-10afc.toml``
    in a folder without ``protocols/`` would silently run the shipped protocol rather than the
    person's edited copy): it is returned unchanged and :func:`load_protocol` refuses it. A bare name
    that is a folder here (a ``--save-frames clinical-ranking`` folder) is not a protocol file: the
    shipped protocol of that name is meant (it was refused as "a directory").
    """
    path = Path(path)
    if looks_like_a_path(path) or (path.exists() and not path.is_dir()):
        return path
    shipped = PROTOCOLS_DIR / f"{path.name}.toml"
    if shipped.is_file():
        return shipped
    return path


def _not_found_message(path: Path) -> str:
    stem = path.stem if path.suffix.lower() == ".toml" else path.name
    if looks_like_a_path(path) and stem in shipped_protocols():
        return (
            f"protocol file {path} not found; check the path, or give the bare name {stem} "
            f"(--protocol {stem}) for the protocol shipped with lensopt"
        )
    if looks_like_a_path(path):
        return (
            f"protocol file {path} not found; check the path, or give a shipped protocol's bare name: "
            f"{', '.join(shipped_protocols())}"
        )
    return (
        f"protocol file {path} not found; give a .toml file or a shipped protocol's name: "
        f"{', '.join(shipped_protocols())}"
    )


def load_protocol(path: str | Path, *, start_replaced: bool = False) -> Protocol:
    """Read and validate a protocol file (or a shipped protocol by name: :func:`resolve_protocol_path`).
    ``start_replaced``: the new session starts from ``--start``, not from the file's ``[start]
    refraction``, so the file's own refraction is not checked against the phoropter (the one given
    is, by :meth:`Protocol.with_start`)."""
    path = resolve_protocol_path(path)
    if Path(path).exists() and not Path(path).is_file() and not Path(path).is_dir():
        raise ProtocolError(f"protocol {path} is not a regular file (a pipe or a device); give a .toml file")
    try:
        with open(path, "rb") as fh:
            raw = fh.read()
        # a byte-order mark (Notepad's "UTF-8 with BOM") is not TOML, but it is what the person wrote
        data = tomllib.loads(raw.decode("utf-8-sig"))
    except FileNotFoundError:
        raise ProtocolError(_not_found_message(Path(path))) from None
    except IsADirectoryError:
        raise ProtocolError(f"protocol {path} is a directory; give a .toml file") from None
    except PermissionError:
        raise ProtocolError(f"protocol file {path} cannot be read (permission denied); check its permissions") from None
    except UnicodeDecodeError as exc:  # TOML is UTF-8: a Latin-1 accent, a UTF-16 file, a binary file
        line = raw[: exc.start].count(b"\n") + 1
        raise ProtocolError(f"protocol file {path} is not UTF-8 (line {line}); save it as UTF-8 text") from None
    except tomllib.TOMLDecodeError as exc:
        raise ProtocolError(f"protocol file {path} is not valid TOML: {exc}{toml_hint(raw, exc)}") from None
    protocol = dataclasses.replace(
        protocol_from_dict(data, source=str(path)), source_sha256=hashlib.sha256(raw).hexdigest()
    )
    problem = (
        ignored_optimizer_field(data["optimizer"], protocol.optimizer.rule, protocol.feedback_mode)
        or random_only_problem(protocol.optimizer, "n_initial" in data["optimizer"])
        or fractional_axis_problem(protocol.lens, protocol.simulated)
        or ignored_feedback_problem(protocol.feedback, protocol.feedback_mode)
        or foreign_table_problem(data, protocol.feedback_mode)
        or one_line_name_problem(protocol.protocol.name)
        or (None if start_replaced else protocol.phoropter_problem())
        or box_step_problem(protocol.start, protocol.lens)
        or protocol.keys.unknown_key_problem()
        or foreign_key_problem(data, protocol.feedback_mode)
        or protocol.timing.range_problem()
    )
    if problem:
        raise ProtocolError(f"{path}: {problem}")
    return protocol
