"""The words of the printable prescription record (issue 17, "The record"), before any drawing.

:func:`build_record` turns a stored session (a ``SessionInfo`` and its results) into a frozen
:class:`PrescriptionRecord`: the session rows, one :class:`EyeRecord` per eye (the prescription in
clinical notation, the value and 95 % credible interval of sphere, cylinder, axis, M, J0 and J45,
the predicted acuity in logMAR and Snellen, the trials, why the session stopped and the confidence
in plain words), the starting refraction and the software versions, or, for a session without a
stored prescription, why there is none. :mod:`lensopt.dashboard.prescription_record` draws it;
tests read it. No matplotlib here.

An eye whose stored result fell short of the session's target confidence (its protocol's ``[stop]
confidence``, else 0.95) is no prescription, by the closing console's rule
(:func:`lensopt.stopping.enough_to_prescribe`, the target from
:func:`lensopt.store.verdict.stored_confidence_target`): its record says "No prescription: not
enough answers (confidence 0.11 < 0.95 after 8 letters)" and shows the lens only as a provisional
estimate, not for prescribing (``EyeRecord.withheld``). A record without any eye to prescribe has
no signature line, and a session not finished is marked so (``PrescriptionRecord.unfinished``).
"""

from __future__ import annotations

import textwrap
import time
from dataclasses import dataclass

from lensopt.dashboard.clinician_entries import CLINICIAN_LIMIT, clinician_entries, shortened
from lensopt.dashboard.clock import clock_text, results_clock_text
from lensopt.dashboard.series import SIMULATED_BANNER, count_text
from lensopt.dashboard.snapshot import lens_notation_from_protocol
from lensopt.dashboard.stop_text import comparison_confidence_text, confidence_statement, stop_reason
from lensopt.dashboard.unfinished_text import continue_line, missing_reason, unfinished_text
from lensopt.modes.base import EYE_STARTS
from lensopt.modes.letters import is_prescription
from lensopt.provenance import software, software_label
from lensopt.refraction.acuity_law_settings import RELAXED_LENS, accommodation_phrase, modelled_accommodation_d
from lensopt.refraction.acuity_text import logmar_text, snellen_text
from lensopt.refraction.lens import Lens, diopter_text, power_vector_arrays
from lensopt.refraction.prescription import (
    FULL_J_BOUNDS_D,
    FULL_M_BOUNDS_D,
    START_J_HALF_WIDTH_D,
    START_M_HALF_WIDTH_D,
    axis_whole_deg,
    interval_rows,
    interval_text,
)
from lensopt.refraction.shown import ReadThrough, read_through, untried_d, untried_note, untried_short
from lensopt.stopping import (
    ESTIMATE_NOT_PRESCRIPTION,
    provisional_estimate_text,
)
from lensopt.store import STARTED, stored_budget
from lensopt.store.claim import session_status
from lensopt.store.records import DUEL_KIND, EYE_NAMES, LETTERS_KIND, RANKING_KIND
from lensopt.store.tidy import session_rule
from lensopt.store.verdict import (
    NO_AXIS_REASON,
    one_trial_noun,
    stored_stop_confidence,
    stored_withheld_reason,
    trial_noun,
)

#: A result without an eye (:data:`lensopt.store.records.EYE_NAMES` names the others).
NO_EYE = "eye not recorded"
#: What the record says in place of the lens of an eye short of the target confidence.
NOT_PRESCRIBED = "No prescription: not enough answers"
#: What such a record says in place of the lens.
NO_AXIS_HEADING = "No prescription: a cylinder without an axis"
#: In its place for a session without a stopping rule (a study's fixed number of trials): its result.
ESTIMATE_HEADING = ESTIMATE_NOT_PRESCRIPTION.capitalize()
#: The title of a record with an eye's lens to prescribe: the result of a refraction, not a
#: dispensable prescription (no PD, near add, prescriber or expiry).
RESULT_TITLE = "Refraction result"
#: The title of a record none of whose eyes may be prescribed.
NOT_A_PRESCRIPTION_TITLE = "Refraction record: no prescription"
#: The intervals page 1 prints, in order: (key of ``ResultRecord.intervals``, label, unit).
INTERVAL_ROWS = interval_rows(("Sphere", "Cylinder", "Axis", "M (spherical eq.)", "J0", "J45"))


#: The intervals of a full prescription as the dashboard's summaries and the closing console give
#: them under its lens: two lines of ``(key, label)`` — the lens as written, then its power vector.
INTERVAL_LINES = (
    (("sphere_d", "S"), ("cylinder_d", "C"), ("axis_deg", "axis")),
    (("m_d", "M"), ("j0_d", "J0"), ("j45_d", "J45")),
)


def interval_lines(intervals) -> list[str]:
    """The lines of :data:`INTERVAL_LINES` (``S -1.60 to -0.70 D, C …, axis 155 to 019 through
    180``) of ``intervals`` (``(key, low, high)`` triples), each with the keys it has; none without."""
    given = {key: (low, high) for key, low, high in intervals}
    lines = [
        ", ".join(f"{label} {interval_text(key, *given[key])}" for key, label in line if key in given)
        for line in INTERVAL_LINES
    ]
    return [line for line in lines if line]


def interval_summary_rows(intervals) -> list[tuple[str, str]]:
    """The summary panel's rows of :func:`interval_lines`: ``("95% intervals", line)``, then ``("", line)``."""
    return [("" if i else "95% intervals", line) for i, line in enumerate(interval_lines(intervals))]


def _power_text(value_d: float) -> str:
    return f"{diopter_text(value_d)} D"


#: Per session kind: what a trial is called, and how the refraction was done (the record's subtitle).
METHODS = {
    LETTERS_KIND: "Subjective refraction from letter acuity (lensopt)",
    DUEL_KIND: "Subjective refraction from duels of lenses, \u201cone or two?\u201d (lensopt)",
    RANKING_KIND: "Subjective refraction from rankings of lenses, clearest first (lensopt)",
}


#: The record's acuity in place of a value when none is predicted (:func:`no_acuity_note` says why).
NO_ACUITY = "not predicted"


def no_acuity_note(kind: str) -> str:
    """Why a stored result of a session of ``kind`` has no predicted acuity, and where to measure it:
    comparisons rank lenses (page 2's acuity is only roughly placed); a letter session's model placed it beyond the
    letter sizes the session showed (:data:`lensopt.refraction.acuity_text.ACUITY_MARGIN_LOGMAR`)."""
    if kind == LETTERS_KIND:
        return "beyond the letter sizes shown: measure it on a chart through this lens"
    return f"{trial_noun(kind)} say which lens is clearer, not how well the eye sees: measure it on a chart through this lens"


@dataclass(frozen=True)
class EyeRecord:
    """One eye's prescription as page 1 writes it.

    ``eye``: ``"OD (right eye)"``, ``"OS (left eye)"`` or :data:`NO_EYE`; ``prescription`` the
    clinical notation; ``rows`` one ``(label, value, 95 % interval)`` per :data:`INTERVAL_ROWS`
    entry; ``acuity`` (``"-0.02 logMAR"``) and ``snellen`` (the nearest chart line, ``"≈ 6/6 · ≈ 20/20"``);
    when none is predicted, ``acuity`` is :data:`NO_ACUITY`, ``snellen`` ``""`` and ``no_acuity`` says
    why and where to measure it; ``trials``, ``stop_reason`` and ``confidence`` (plain words). ``withheld``: None when
    the lens is the eye's prescription; for an eye whose confidence fell short of the target, why it
    is not (``confidence 0.11 < 0.95 after 8 letters``): the record then says
    :data:`NOT_PRESCRIBED` and shows ``prescription`` and the rows only as a provisional estimate;
    ``fixed_design`` (a session without a stopping rule, a study's fixed number of trials): it says
    :data:`ESTIMATE_HEADING` instead, the lens being the study's estimate, not for prescribing."""

    eye: str
    prescription: str
    rows: tuple[tuple[str, str, str], ...]
    acuity: str
    snellen: str
    trials: str
    stop_reason: str
    confidence: str
    withheld: str | None = None
    fixed_design: bool = False
    #: The dioptric distance (D) from this lens to the nearest lens the eye was tried with, when
    #: beyond a phoropter step (:func:`lensopt.refraction.shown.untried_d`: its acuity predicted, not
    #: measured); None when within one, or for a comparison (no acuity is predicted).
    untried_d: float | None = None
    #: What the eye read through this lens (:class:`lensopt.refraction.shown.ReadThrough`), when it
    #: was tried; None otherwise.
    read_through: ReadThrough | None = None
    #: Why no acuity is predicted (:func:`no_acuity_note`), or None when one is.
    no_acuity: str | None = None

    @property
    def read_through_short(self) -> str | None:
        """What the eye read through the lens, in the width of an eye's column of page 1, or None."""
        return None if self.read_through is None else self.read_through.short()

    @property
    def acuity_unsure(self) -> bool:
        """Whether the note under the acuity is an alert (printed in red): the lens was not tried, or
        was read through only with letters far larger than its predicted acuity (not
        :attr:`ReadThrough.measured`)."""
        return self.untried_d is not None or (self.read_through is not None and not self.read_through.measured)

    @property
    def not_tried(self) -> str | None:
        """The closing console's sentence on a lens not tried, or None."""
        return untried_note(self.untried_d)

    @property
    def not_tried_short(self) -> str | None:
        """:attr:`not_tried` in the width of an eye's column of page 1."""
        return untried_short(self.untried_d)

    @property
    def prescribed(self) -> bool:
        """Whether the lens is printed as this eye's prescription."""
        return self.withheld is None

    @property
    def withheld_text(self) -> str:
        """``No prescription: not enough answers (confidence 0.11 < 0.95 after 8 letters)``, or ``""``."""
        return "" if self.withheld is None else f"{self.withheld_heading} ({self.withheld})"

    @property
    def withheld_heading(self) -> str:
        """What a withheld eye's record says in place of the lens: :data:`NOT_PRESCRIBED`, or a fixed
        design's :data:`ESTIMATE_HEADING`."""
        if self.withheld == NO_AXIS_REASON:
            return NO_AXIS_HEADING
        return ESTIMATE_HEADING if self.fixed_design else NOT_PRESCRIBED

    @property
    def estimate_label(self) -> str:
        """``provisional estimate`` for a withheld eye (a fixed design's: ``estimate``, its result)."""
        return "estimate" if self.fixed_design else "provisional estimate"

    @property
    def provisional(self) -> str:
        """``provisional estimate -1.00 / -0.75 x 024, not for prescribing`` for a withheld eye
        (``estimate …`` for a fixed design's), or ``""``: the closing console's and the dashboard's
        words (:func:`lensopt.stopping.provisional_estimate_text`)."""
        return "" if self.withheld is None else provisional_estimate_text(self.prescription, self.estimate_label)

    def texts(self) -> list[str]:
        """Every string drawn for this eye (a withheld eye's lens only in its provisional estimate)."""
        cells = [cell for row in self.rows for cell in row]
        lens = [self.prescription] if self.prescribed else [self.withheld_text, self.provisional]
        notes = [note for note in (self.no_acuity, self.not_tried_short, self.read_through_short) if note]
        return [self.eye, *lens, *cells, self.acuity, *([self.snellen] if self.snellen else []), *notes, self.trials]


@dataclass(frozen=True)
class PrescriptionRecord:
    """The words of page 1 of session ``session_id``: ``title``, ``session`` rows ``(label, value)``,
    one :class:`EyeRecord` per stored result (none when ``missing`` says why no prescription was
    stored), the starting refraction, the software versions; ``unfinished``: for a session with a
    stored result that is still running or was stopped before its end, a line saying so (None when
    it finished)."""

    session_id: int
    title: str
    session: tuple[tuple[str, str], ...]
    eyes: tuple[EyeRecord, ...]
    start: str
    software: str
    missing: str | None = None
    method: str = METHODS[LETTERS_KIND]
    unfinished: str | None = None
    #: For a finished session whose end advised more trials (eyes short of their target), the command
    #: that gives them, as its closing console and log gave it (:func:`~lensopt.dashboard.unfinished_text.continue_line`); else None.
    continue_with: str | None = None
    #: For a session answered by the simulated observer, :data:`SIMULATED_BANNER`; else None.
    banner: str | None = None
    #: The clinician's notes (``OD trial 8: patient squints``), in the order typed.
    notes: tuple[str, ...] = ()
    #: The lenses the clinician set differently from the ones asked (``OD trial 3: asked -1.00 /
    #: -0.50 x 030, set -0.75 / -0.75 x 180``).
    lens_changes: tuple[str, ...] = ()
    #: The answers the clinician undid (kept, marked void, never counted).
    n_undone: int = 0

    @property
    def signable(self) -> bool:
        """Whether the page carries a prescription to sign: at least one eye's lens is prescribed,
        and the answers were a person's (not the simulated observer's)."""
        return self.banner is None and any(eye.prescribed for eye in self.eyes)

    def clinician_lines(self, limit: int = CLINICIAN_LIMIT) -> list[tuple[str, str]]:
        """Page 1's "Clinician" rows ``(label, text)``: the notes, the lenses set differently from
        the ones asked (at most ``limit`` of each, then ``… and N more; see the export``) and the
        number of answers undone; empty when the clinician did none of these."""
        rows = [("Note", text) for text in shortened(self.notes, limit)]
        rows += [("Lens set", text) for text in shortened(self.lens_changes, limit)]
        if self.n_undone:
            rows.append(("Undone", f"{count_text(self.n_undone, 'answer')} undone (kept in the database, not counted)"))
        return rows

    def __post_init__(self):
        if (self.missing is None) == (not self.eyes):
            raise ValueError("PrescriptionRecord needs either eyes or the reason none is stored (missing), not both")

    def texts(self) -> list[str]:
        """Every string page 1 draws (for the tests and for anyone checking a printout)."""
        out = [
            self.title,
            self.method,
            f"Session {self.session_id}",
            *(part for row in self.session for part in row),
            *([] if self.unfinished is None else [self.unfinished]),
            *([] if self.continue_with is None else [self.continue_with]),
            self.start,
            self.software,
            *([] if self.banner is None else [self.banner]),
            *(text for _, text in self.clinician_lines()),
        ]
        for eye in self.eyes:
            out += [*eye.texts(), f"{eye.eye}: {eye.stop_reason}", f"{eye.eye}: {eye.confidence}"]
        return out + ([] if self.missing is None else [self.missing])


def session_results(info) -> list:
    """The results stored for session ``info``, one per eye (OD before OS, then those without an
    eye): ``info.results`` when the store reads several, else ``info.result`` (schema 5: one)."""
    several = getattr(info, "results", None)
    results = list(several.values() if isinstance(several, dict) else several or ())
    if not results and info.result is not None:
        results = [info.result]
    order = {"OD": 0, "OS": 1, "OU": 2}
    return sorted((r for r in results if r is not None), key=lambda r: order.get(getattr(r, "eye", None) or "", 3))


def eye_record(info, result, trials=()) -> EyeRecord:
    """Page 1's words for one stored result of session ``info``; ``trials``, the session's stored
    letter trials (:meth:`lensopt.store.SessionStore.trials`), tell whether its lens was shown."""
    eye = getattr(result, "eye", None)
    reading = _read_through(info, result, trials)
    lens = Lens(result.sphere_d, result.cylinder_d, result.axis_deg if result.axis_deg is not None else 180.0)
    m_d, j0_d, j45_d = (float(v) for v in power_vector_arrays(lens.sphere_d, lens.cylinder_d, lens.axis_deg))
    values = {
        "sphere_d": _power_text(lens.sphere_d),
        "cylinder_d": _power_text(lens.cylinder_d),
        "axis_deg": "-"
        if result.axis_deg is None or lens.cylinder_d == 0.0
        else f"{axis_whole_deg(lens.axis_deg):03d}",
        "m_d": _power_text(m_d),
        # a two-parameter result without an axis (sphere and signed cylinder): J0 and J45 unknown
        "j0_d": "-" if result.axis_deg is None else _power_text(j0_d),
        "j45_d": "-" if result.axis_deg is None else _power_text(j45_d),
    }
    rows = tuple(
        (label, values[key], interval_text(key, *result.intervals[key]) if key in result.intervals else "-")
        for key, label, _ in INTERVAL_ROWS
    )
    acuity = result.predicted_acuity_logmar
    stop_confidence = stored_stop_confidence(info)
    noun = trial_noun(info.kind)
    return EyeRecord(
        eye=EYE_NAMES.get(eye or "", NO_EYE),
        prescription=result.prescription,
        rows=rows,
        acuity=NO_ACUITY if acuity is None else logmar_text(acuity),
        snellen="" if acuity is None else " · ".join(snellen_text(acuity)),
        no_acuity=None if acuity is not None else no_acuity_note(info.kind),
        trials=count_text(result.n_trials, one_trial_noun(info.kind)),  # "1 letter", "8 letters"
        stop_reason=stop_reason(info, result, None if reading is None else reading.letters),
        confidence=comparison_confidence_text(noun)
        if info.kind != LETTERS_KIND
        else confidence_statement(result.confidence, stop_confidence, result.n_trials, stored_budget(info)),
        withheld=stored_withheld_reason(info, result),
        # a study's fixed number of letters; comparisons (no confidence) are held to their count instead
        fixed_design=stop_confidence is None and info.kind == LETTERS_KIND,
        untried_d=_untried_d(info, result, trials),
        read_through=reading,
    )


def _told_trials(info, result, trials) -> tuple[list, float | None] | None:
    """The answered trials of a letter session's stored ``result``'s eye that its optimizer was told
    (not those undone) and the protocol's axis, along which lie the cylinders of trials without one;
    None for a result without a predicted acuity (a comparison's) — the closing console's rule."""
    if info.kind != LETTERS_KIND or result.predicted_acuity_logmar is None:
        return None
    eye = getattr(result, "eye", None)
    tried = [t for t in trials if not t.void and (eye is None or t.eye == eye)]
    meridian_deg, _ = lens_notation_from_protocol(info.protocol if isinstance(info.protocol, dict) else None)
    return tried, meridian_deg


def _untried_d(info, result, trials) -> float | None:
    """:func:`~lensopt.refraction.shown.untried_d` of a letter session's stored ``result`` over the
    trials its optimizer was told (:func:`_told_trials`)."""
    told = _told_trials(info, result, trials)
    if told is None:
        return None
    tried, meridian_deg = told
    return untried_d(result.sphere_d, result.cylinder_d, result.axis_deg, tried, meridian_deg)


def _read_through(info, result, trials) -> ReadThrough | None:
    """What the eye read through a letter session's stored ``result`` (:func:`~lensopt.refraction.shown.read_through`
    over the trials its optimizer was told, :func:`_told_trials`)."""
    told = _told_trials(info, result, trials)
    if told is None:
        return None
    tried, meridian_deg = told
    answers = [(t, t.correct) for t in tried]
    return read_through(
        result.sphere_d, result.cylinder_d, result.axis_deg, answers, meridian_deg, result.predicted_acuity_logmar
    )


def start_text(info) -> str:
    """The starting refraction of session ``info`` (each eye's, when each eye had its own) and the
    search box around it."""
    settings = info.optimizer_settings
    if not is_prescription(settings):
        lens = (info.protocol or {}).get("lens") if isinstance(info.protocol, dict) else None
        axis_deg = lens.get("axis_deg") if isinstance(lens, dict) else None
        if isinstance(axis_deg, (int, float)) and not isinstance(axis_deg, bool) and 1.0 <= axis_deg <= 180.0:
            return f"none (two-parameter search, cylinder along {axis_whole_deg(axis_deg):03d})"
        return "none (two-parameter search)"
    start = settings.get("start")
    if not start:
        m_high, j_high = FULL_M_BOUNDS_D[1], FULL_J_BOUNDS_D[1]
        return f"none (the full box: M ±{m_high:g} D, J0 and J45 ±{j_high:g} D)"
    m_d = settings.get("m_half_width_d") or START_M_HALF_WIDTH_D
    j_d = settings.get("j_half_width_d") or START_J_HALF_WIDTH_D
    starts = settings.get(EYE_STARTS)
    if isinstance(starts, dict) and starts:  # each eye its own (a session of both eyes)
        start = ", ".join(f"{eye} {lens}" for eye, lens in starts.items())
    return f"{start} (search box M ±{m_d:g} D, J0 and J45 ±{j_d:g} D)"


def software_text(info, results, printing: str | None = None, verb: str = "printed") -> str:
    """The lensopt that recorded the session (at its start and each resume: their stored software,
    with the git commit when it ran from a checkout), computed its results and prints them
    (``printing``, default this one's; ``verb``: ``"shown"`` in a terminal)."""
    printing = software_label(software()) if printing is None else printing
    ran = [software_label(event.software) for event in info.events if event.software]
    if not info.events or info.events[0].event != STARTED:  # started before events were recorded (schema 10)
        ran.insert(0, info.software_version)
    recorded = list(dict.fromkeys(ran))
    computed = sorted({r.software_version for r in results if r.software_version})
    if set(recorded) == {printing} and set(computed) <= {printing.split(" (")[0]}:
        done = f"session recorded, result computed and {verb}" if computed else f"session recorded and {verb}"
        return f"lensopt {printing} ({done})"
    return (
        f"session recorded by lensopt {' then '.join(recorded)}"
        + (f"; result computed by lensopt {', '.join(computed)}" if computed else "")
        + f"; {verb} by lensopt {printing}"
    )


def wrapped(text: str, width_chars: int) -> list[str]:
    """``text`` in lines of at most ``width_chars`` characters (a command is never cut at a hyphen)."""
    return textwrap.wrap(text, width_chars, break_on_hyphens=False) or [""]


def build_record(
    info, printed_at: float | None = None, status: str | None = None, trials=(), db_path=None, verb: str = "printed"
) -> PrescriptionRecord:
    """The words of page 1 for the stored session ``info`` (a ``SessionInfo``), printed at
    ``printed_at`` (unix seconds; default now); ``status``: the session's status as shown
    (:func:`lensopt.store.claim.session_status`), default the stored one; ``trials``: its stored
    letter trials, for whether each eye's lens was tried (:attr:`EyeRecord.not_tried`); ``db_path``:
    its database, named in a command that continues it (:func:`resume_command`); ``verb``: how the
    record is given, ``"printed"`` or ``"shown"`` (``lensopt sessions SESSION_ID``), in its rows."""
    printed_at = time.time() if printed_at is None else printed_at
    status = session_status(None, info.session_id, info.status) if status is None else status
    results = session_results(info)
    about = info.protocol.get("protocol")  # the protocol's [protocol] table, as lensopt run stores it
    about = about if isinstance(about, dict) else {}
    name, observer = about.get("name") or "-", about.get("observer")
    session = [
        ("Patient / participant", info.participant),
        ("Session", f"{info.session_id} · {info.kind} · {status}"),
        ("Session started", clock_text(info.created_at)),
    ]
    if results:
        session.append(("Result computed", results_clock_text(results)))
    rule, seed = session_rule(info), getattr(info, "seed", None)
    method = (f" · rule {rule}" if isinstance(rule, str) and rule else "") + (
        f" · seed {seed}" if seed is not None else ""
    )
    session.append(
        ("Protocol", name + method + (" · answers by a SIMULATED patient" if observer == "simulated" else ""))
    )
    amplitudes_d = modelled_accommodation_d(info.optimizer_settings)
    if amplitudes_d is not None:  # the lens is the relaxed eye's, not the most minus one it reads through
        session.append(("Model", f"allowed for {accommodation_phrase(amplitudes_d)}; the lens is {RELAXED_LENS}"))
    eyes = getattr(info, "eye", None)  # the eye(s) the session tests (schema 7), or None
    if isinstance(eyes, str) and eyes:
        done = {getattr(r, "eye", None) for r in results}
        left = [eye for eye in (("OD", "OS") if eyes == "OU" else (eyes,)) if eye not in done]
        note = f" · no prescription stored for {' and '.join(left)}" if results and left else ""
        session.append(("Eye tested", EYE_NAMES.get(eyes, eyes) + note))
    session.append((verb.capitalize(), clock_text(printed_at)))
    per_eye = tuple(eye_record(info, r, trials) for r in results)
    prescribed = any(e.prescribed for e in per_eye)  # none stored: no prescription either
    letter_trials = [t for t in trials if hasattr(t, "letter")]  # a comparison's have no notes
    notes, lens_changes = clinician_entries(letter_trials, getattr(info, "events", ()))
    return PrescriptionRecord(
        session_id=info.session_id,
        title=RESULT_TITLE if prescribed else NOT_A_PRESCRIPTION_TITLE,
        session=tuple(session),
        eyes=per_eye,
        start=start_text(info),
        software=software_text(info, results, verb=verb),
        missing=None if results else missing_reason(info, status, db_path),
        method=METHODS.get(info.kind, METHODS[LETTERS_KIND]),
        unfinished=unfinished_text(info, status, db_path) if results else None,
        continue_with=continue_line(info, status, db_path) if results else None,
        banner=SIMULATED_BANNER if observer == "simulated" else None,
        notes=notes,
        lens_changes=lens_changes,
        n_undone=sum(1 for t in trials if getattr(t, "void", False)),
    )
