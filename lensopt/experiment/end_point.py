"""The end point of a session, per eye: the prescription, or "not enough answers to prescribe".

The lines that write a prescription and a lens's certainty are
:mod:`lensopt.experiment.prescription_text`'s.

A search ends by its stopping rule (``[stop]``: the model is ``confidence`` sure that its lens is
within 0.025 logMAR of the best) or at its last trial. Its end point is the prescription with its
95 % intervals and predicted acuity when the confidence reached the target (``[stop] confidence``,
0.95 without a ``[stop]`` table); otherwise the lens the model would report is not shown as a
prescription (late in a search without enough answers it can be a corner of the box) and the
console says "not enough answers to prescribe" with, when the confidence trend justifies one, an
estimate of the trials still needed (:func:`more_trials_estimate`). A protocol without ``[stop]``
runs a fixed number of trials by design (a study's, like ``research-26afc.toml``): its end short of
the target is the study's estimate, labelled as such with its confidence and intervals, and neither
recommends more trials nor prints a command to continue.
"""

from __future__ import annotations

import contextlib
import dataclasses
import math
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from lensopt.errors import StoreError
from lensopt.experiment.prescription_text import (
    acuity_text,
    certainty_line,
    intervals_line,
    lens_text_of,
)
from lensopt.experiment.protocol import Protocol
from lensopt.experiment.protocol_sections import show_lens, show_two_parameter_lens
from lensopt.experiment.search_sections import MAX_TRIALS
from lensopt.refraction.lens import Lens
from lensopt.refraction.most_plus import accommodation_note
from lensopt.refraction.phoropter import round_to_step
from lensopt.refraction.shown import COMPARISON_WITHOUT_START, read_through, untried_d, untried_note
from lensopt.refraction.shown import box_edge_warning as shown_box_edge_warning
from lensopt.stopping import (
    COMPARISONS_EVALUATED,
    ESTIMATE_NOT_PRESCRIPTION,
    comparisons_shortfall,
    confidence_text,
    enough_to_prescribe,
    prescription_target,
    provisional_estimate_text,
    threshold_text,
)
from lensopt.store import ENDED, ContinueAdvice, ResultRecord, StoredBudget, fixed_trials_text
from lensopt.store.verdict import NO_AXIS_REASON, cylinder_without_axis, trial_noun

TREND_POINTS = 10
"""How many of the last confidences (one per answer) the trend is fitted on."""

MIN_TREND_POINTS = 5
"""Fewer confidences than this: no trend, no number of trials."""

MAX_EXTRAPOLATION = 2.0
"""The trend is not extrapolated further than this many times the answers it rests on."""


def more_trials_estimate(confidences: Sequence[tuple[int, float]], target: float) -> int | None:
    """About how many more answers the confidence needs to reach ``target``: the least-squares line
    through the last :data:`TREND_POINTS` ``(n_answers, confidence)`` pairs, extrapolated to the
    target. None (say "more trials" without a number) with fewer than :data:`MIN_TREND_POINTS`
    points, a trend that does not rise, or a target further than :data:`MAX_EXTRAPOLATION` times the
    answers so far. A straight line is the simplest reading of a noisy, saturating curve: the number
    is an order of magnitude, and the console says "about"."""
    points = list(confidences)[-TREND_POINTS:]
    if len(points) < MIN_TREND_POINTS:
        return None
    n, c = (np.asarray(v, dtype=float) for v in zip(*points))
    slope = float(np.polyfit(n, c, 1)[0])
    if not slope > 0:
        return None
    needed = math.ceil(max(target - c[-1], 0.0) / slope)
    return needed if needed <= MAX_EXTRAPOLATION * n[-1] else None


def confidence_target(protocol) -> float:
    """The confidence an end point needs: the protocol's ``[stop] confidence``, else 0.95
    (:func:`lensopt.stopping.prescription_target`, which the dashboard and the printed record use too)."""
    stop = getattr(protocol, "stop", None)  # a protocol, or a stand-in with the lens settings only
    return prescription_target(stop.confidence if stop is not None else None)


@dataclass(frozen=True)
class EndPoint:
    """One eye's end point: ``lens_text`` and ``details`` (intervals, predicted acuity) when
    ``confident``; otherwise ``more_trials`` (None: no number can be justified). ``n_trials``: the
    eye's answers so far (what a resumed session's ``--trials`` counts from). ``fixed_design``: the
    protocol has no ``[stop]`` and ran its trials by design; short of the target it reports its
    estimate instead of recommending more trials."""

    eye: str | None
    confident: bool
    confidence: float | None
    target: float
    lens_text: str
    details: tuple[str, ...] = ()
    more_trials: int | None = None
    n_trials: int = 0
    fixed_design: bool = False
    #: What a trial of this eye is called: ``"trials"``, or ``"duels"``/``"rankings"`` (whose lens has
    #: no confidence: it is held to :data:`~lensopt.stopping.COMPARISONS_EVALUATED` comparisons).
    noun: str = "trials"
    #: Why the lens is an estimate whatever its confidence — more trials would not make it a
    #: prescription: a two-parameter cylinder without an axis (no ``--axis``,
    #: :data:`~lensopt.store.verdict.NO_AXIS_REASON`), a comparison search without a start
    #: (:data:`COMPARISON_WITHOUT_START`); ``""`` otherwise.
    estimate_reason: str = ""
    #: That the patient read through no lens within a phoropter step of the reported one, so its
    #: acuity is predicted, not measured (:func:`lensopt.refraction.shown.untried_note`); ``""`` when
    #: they did.
    not_tried: str = ""
    #: What the patient read through the lens, when they did (:meth:`lensopt.refraction.shown.ReadThrough.note`:
    #: its acuity measured beside the prediction); ``""`` when they did not.
    read_through: str = ""
    #: The start the eye's full prescription was searched around (``started from -2.25 / -0.75 x 180``,
    #: each eye's own in a session of both), under its result on the closing console; ``""`` without one.
    started_from: str = ""
    #: The trial budget the session ran with (:func:`lensopt.store.stored_budget`: its protocol's, its
    #: start's or a resume's ``--trials``), which a fixed design's advice names; None: the protocol's.
    budget: StoredBudget | None = None

    @property
    def estimate_only(self) -> bool:
        """Whether the lens is shown as an estimate rather than withheld for more trials: a fixed
        design's result, or one with an :attr:`estimate_reason`."""
        return self.fixed_design or bool(self.estimate_reason)

    def shortfall_line(self) -> str | None:
        """The line the log gives an eye short of its target (``OS  not enough answers to prescribe;
        ...``), or None: a confident eye, or a fixed design's estimate, logged with its lens (unless it
        has a reason of its own, a cylinder without an axis)."""
        if self.confident or (self.fixed_design and not self.estimate_reason):
            return None
        return self.lines()[0]

    def headline(self) -> str:
        """``OD  -1.25 / -0.75 x 170``, ``OD  not enough answers to prescribe``, or, a fixed design's,
        ``OD  -1.25 / -0.75 x 170 (estimate, not a prescription)``."""
        eye = f"{self.eye}  " if self.eye else ""
        if self.confident:
            return eye + self.lens_text
        if self.estimate_only:
            return f"{eye}{self.lens_text} ({ESTIMATE_NOT_PRESCRIPTION})"
        return eye + "not enough answers to prescribe"

    def advice(self) -> str:
        """Why there is no prescription, and what to do: "about N more trials recommended"; a fixed
        design's: the confidence its trials reached."""
        if self.confident:
            return ""
        if self.estimate_reason:
            return self.estimate_reason
        if self.confidence is None:  # a comparison (duels, rankings) short of the comparisons measured
            more = "" if self.more_trials is None else f"; about {self.more_trials} more {self.noun} recommended"
            return comparisons_shortfall(self.n_trials, self.noun) + more
        reached = f"confidence {confidence_text(self.confidence, self.target)}"
        if self.fixed_design:
            return f"{reached} < {threshold_text(self.target)} after {self._fixed_trials_text()}"
        more = (
            "more trials recommended"
            if self.more_trials is None
            else f"about {self.more_trials} more trials recommended"
        )
        return f"{reached} < {threshold_text(self.target)}; {more}"

    def _fixed_trials_text(self) -> str:
        """A fixed design's trials and budget (:func:`lensopt.store.fixed_trials_text`)."""
        if self.budget is None:
            return fixed_trials_text(self.n_trials, None, None)
        return self.budget.fixed_trials_text(self.n_trials)

    @property
    def lens_details(self) -> tuple[str, ...]:
        """The lines under a lens that is shown: its details, then :attr:`not_tried` or :attr:`read_through`."""
        note = self.not_tried or self.read_through
        return (*self.details, note) if note else self.details

    def lines(self) -> list[str]:
        """The end point as the log and the console write it."""
        if self.confident:
            return [self.headline(), *self.lens_details]
        if self.estimate_only:  # an estimate: its intervals too
            return [f"{self.headline()}; {self.advice()}", *self.lens_details]
        return [f"{self.headline()}; {self.advice()}"]

    def log_under_result(self, log) -> None:
        """What the log gives under the eye's logged result: that its lens was not tried, or what the
        patient read through it (``OD: this lens was not tried: ...``), and, short of the target, the
        :meth:`shortfall_line` — at the session's end and again on a resume with nothing to do."""
        note = self.not_tried or self.read_through
        if note:
            log((f"{self.eye}: " if self.eye else "") + note)
        shortfall = self.shortfall_line()
        if shortfall is not None:
            log(shortfall)

    def provisional(self) -> str:
        """``provisional estimate -2.25 DS, not for prescribing`` for an eye short of its target, as the
        dashboard and the printed record show it (:meth:`lensopt.dashboard.verdict.EyeEstimate.provisional`):
        a clinician who must end the visit sees where the search stands; ``""`` for a prescription, an
        estimate shown as such (a fixed design's, a cylinder without an axis) or an eye without answers."""
        if self.confident or self.estimate_only or self.n_trials == 0 or not self.lens_text:
            return ""
        return provisional_estimate_text(self.lens_text)

    def closing_lines(self) -> list[str]:
        """The end point's lines under the closing console's headlines: the details of a prescription
        or of a fixed design's estimate, else the advice and the :meth:`provisional` estimate."""
        start = [self.started_from] if self.started_from else []
        if self.confident:
            return [*self.lens_details, *start]
        if self.estimate_only:
            return [self.advice(), *self.lens_details, *start]
        provisional = self.provisional()
        return [self.advice(), *([provisional] if provisional else []), *start]


def _reported_text(result: ResultRecord, protocol) -> tuple[str, tuple[str, ...]]:
    """A stored prescription as the end point writes it: the lens (in the protocol's cylinder
    convention, the stored minus-cylinder form beside a plus one) and its predicted acuity and
    intervals, those it has."""
    lens_text = lens_text_of(result, protocol.lens.cylinder)
    acuity, intervals = acuity_text(result, confidence_target(protocol)), intervals_line(result, lens_text)
    return lens_text, tuple(x for x in (acuity, intervals) if x)


def best_lens_texts(optimizer, protocol: Protocol) -> tuple[str, str | None]:
    """A two-parameter search's best lens, ``S -0.46 D  C -3.43 D`` (in clinical notation at the
    protocol's ``[lens] axis_deg``, when it gives one), and the same rounded to the phoropter's steps
    (``[lens] step_d``; None without steps)."""
    sphere_d, cylinder_d = optimizer.best()
    model = show_two_parameter_lens(sphere_d, cylinder_d, protocol.lens)
    step_d = protocol.lens_step_d
    if step_d is None:
        return model, None
    bounds = protocol.optimizer
    return model, show_two_parameter_lens(
        round_to_step(sphere_d, step_d, bounds.sphere_bounds_d),
        round_to_step(cylinder_d, step_d, bounds.cylinder_bounds_d),
        protocol.lens,
    )


def box_edge_warning(best_d, protocol) -> str:
    """:func:`lensopt.refraction.shown.box_edge_warning` in ``protocol``'s lens box."""
    bounds = protocol.optimizer
    return shown_box_edge_warning(best_d, bounds.sphere_bounds_d, bounds.cylinder_bounds_d)


def comparison_notes(optimizer, protocol, reported: list) -> tuple[str, ...]:
    """What a comparison without a confidence (duels, rankings) says under its lens, on the closing
    console and in the log: a two-parameter best lens on the lens box's edge
    (:func:`box_edge_warning`); nothing for a search with a confidence or a stored prescription (held
    to the comparisons lensopt's accuracy was measured after instead, :func:`end_point`)."""
    if hasattr(optimizer, "confidence") or reported:
        return ()
    note = box_edge_warning(optimizer.best(), protocol)
    return (note,) if note else ()


def end_point(
    optimizer, protocol, eye: str | None, reported: list, confidences, budget: StoredBudget | None = None
) -> EndPoint | None:
    """An eye's end point (:func:`_end_point`), with the start its full prescription was searched
    around and the trial ``budget`` the session ran with (:func:`lensopt.store.stored_budget`; None:
    its protocol's)."""
    ending = _end_point(optimizer, protocol, eye, reported, confidences)
    if ending is None:
        return None
    return dataclasses.replace(
        ending,
        started_from=start_note(optimizer, None, protocol.lens.cylinder) or "",
        budget=budget,
    )


def start_note(optimizer, eye: str | None, cylinder: str = "minus") -> str | None:
    """``OD: started from -2.25 / -0.75 x 180``: the start of a full prescription's search (each eye's
    own in a session of both), in the log beside its result and (without ``eye``) under it on the
    closing console; None without one."""
    start = getattr(optimizer, "start", None)
    if not isinstance(start, Lens):
        return None
    return f"{f'{eye}: ' if eye else ''}started from {show_lens(start, cylinder)}"


def _end_point(optimizer, protocol, eye: str | None, reported: list, confidences) -> EndPoint | None:
    """An eye's end point (:mod:`lensopt.experiment.end_point`): its stored prescription with its
    intervals and predicted acuity, or the best lens and its intervals, if the confidence reached
    the target; else how many more trials. A search without a confidence (duels, rankings): its
    stored prescription as it is (duels of the full prescription: no acuity scale, so no confidence
    to hold it to), or, having stored none (a two-parameter comparison, without a start), its best
    lens on the phoropter's steps. None for a search without answers."""
    if not optimizer.n_trials:
        return None
    if not hasattr(optimizer, "confidence"):
        if not reported:  # a two-parameter comparison (duels, rankings without a start): its best lens
            model, phoropter = best_lens_texts(optimizer, protocol)
            rounded = "" if phoropter is None else f", rounded to {protocol.lens_step_d:g} D steps"
            found = f"best lens found: {model}{rounded}; no confidence or intervals (a search without a start)"
            return EndPoint(  # no prescription: as lensopt sessions, the export and the record say
                eye=eye,
                confident=False,
                confidence=None,
                target=math.nan,
                lens_text=model if phoropter is None else phoropter,
                details=(
                    found,
                    *comparison_notes(optimizer, protocol, reported),
                    *most_plus_notes(optimizer, protocol),
                ),
                estimate_reason=COMPARISON_WITHOUT_START,
            )
        lens_text, details = _reported_text(reported[0], protocol)
        n = int(optimizer.n_trials)
        confident = enough_to_prescribe(None, math.nan, n_comparisons=n)  # as the printed record holds it
        return EndPoint(
            eye=eye,
            confident=confident,
            confidence=None,
            target=math.nan,
            lens_text=lens_text,
            details=details,
            more_trials=None if confident else COMPARISONS_EVALUATED - n,
            n_trials=n,
            noun=trial_noun(protocol.feedback_mode),
        )
    target = confidence_target(protocol)
    confidence = float(optimizer.confidence())
    no_axis = bool(reported) and cylinder_without_axis(reported[0].cylinder_d, reported[0].axis_deg)
    if reported:
        lens_text, details = _reported_text(reported[0], protocol)
        lens = (reported[0].sphere_d, reported[0].cylinder_d, reported[0].axis_deg)  # as stored: minus cylinder
    else:
        sphere_d, cylinder_d = optimizer.best()
        lens_text, details = (
            show_two_parameter_lens(sphere_d, cylinder_d, protocol.lens),
            (certainty_line(optimizer, protocol.lens.axis_deg),),
        )
        lens = (sphere_d, cylinder_d, None)
    details = (*details, *most_plus_notes(optimizer, protocol))  # a two-parameter search's: is it the most plus?
    answers = optimizer.history  # the answers it was told: not those undone
    meridian_deg = getattr(protocol.lens, "axis_deg", None)
    note = untried_note(untried_d(*lens, (trial for trial, _ in answers), meridian_deg=meridian_deg))
    predicted_logmar = reported[0].predicted_acuity_logmar if reported else None
    reading = read_through(*lens, answers, meridian_deg=meridian_deg, predicted_logmar=predicted_logmar)
    return EndPoint(
        eye=eye,
        confident=enough_to_prescribe(confidence, target) and not no_axis,
        estimate_reason=NO_AXIS_REASON if no_axis else "",
        confidence=confidence,
        target=target,
        lens_text=lens_text,
        details=details,
        not_tried=note or "",
        read_through="" if reading is None else reading.note(),
        more_trials=more_trials_estimate(confidences, target),
        n_trials=int(optimizer.n_trials),
        fixed_design=protocol.stop is None,
    )


def most_plus_notes(optimizer, protocol) -> tuple[str, ...]:
    """Whether a two-parameter search's lens is the most-plus one, on the closing console and in the
    log (:func:`~lensopt.refraction.most_plus.accommodation_note`); nothing for the full prescription."""
    note = accommodation_note(optimizer, protocol.feedback_mode)
    return (note,) if note else ()


def continue_advice_for(end_points: Sequence[EndPoint], options: str = "") -> ContinueAdvice | None:
    """How to give the eyes short of their target the trials recommended. ``--trials`` is the budget
    per eye (a resumed eye continues up to it; an eye its stopping rule ended stays ended), so it is
    the largest of ``n_trials + more_trials`` over the eyes short of their target (an eye without a
    number of its own gets that budget too); where no number can be justified, the most an estimate
    would recommend (:data:`MAX_EXTRAPOLATION` times the answers so far, more), a ceiling. None when
    every eye has its end point (a comparison from enough comparisons among them), or the protocol
    fixed its trials (a study's design, not a call for more). ``options``: the window options the
    session ran with (`` --no-fullscreen``), which the command carries. Stored as the session's
    :data:`~lensopt.store.ENDED` event, for a resume with nothing to run, the record and ``lensopt
    sessions SESSION_ID``."""
    short = [e for e in end_points if not e.confident and not e.estimate_only]  # comparisons short of 40 too
    if not short:
        return None
    budgets = [e.n_trials + e.more_trials for e in short if e.more_trials is not None]
    most = max(e.n_trials for e in short)
    if not budgets or max(budgets) <= most:  # no number, or none that gives every short eye more trials
        # the most an estimate would have recommended, within the trials a session may have
        return ContinueAdvice(min(math.ceil((1 + MAX_EXTRAPOLATION) * most), MAX_TRIALS), True, options)
    return ContinueAdvice(max(budgets), False, options)


def record_end(store, session_id: int, advice: ContinueAdvice | None) -> None:
    """Store the end of session ``session_id``'s searches with its ``advice`` (an
    :data:`~lensopt.store.ENDED` event; no advice: none holds), for a resume with nothing to run,
    the record and ``lensopt sessions SESSION_ID``. Every answer is stored already: a store that
    refuses the event loses nothing but the advice, which the console and the log give anyway."""
    detail = {"continue_trials": None, "at_most": False} if advice is None else advice.to_detail()
    with contextlib.suppress(StoreError):
        store.record_event(session_id, ENDED, detail)


def console_broken(line: str) -> str:
    """A closing line broken where the console's width would otherwise break it mid-phrase: the
    confidence after the predicted acuity, the power vector's intervals after the lens's (``M`` and
    ``-1.79 to -1.16 D`` kept together); the log keeps each on one line."""
    line = line.replace(", confidence ", "\nconfidence ", 1)
    return line.replace(", M ", ",\nM ", 1) if "95% intervals" in line else line


def closing_screen(
    console,
    responses,
    protocol,
    end_points: list,
    frames_dir: Path | None = None,
    resume: str | None = None,
    undo: bool = False,
) -> bool:
    """The console's closing screen, held until the clinician presses the confirm key (the patient's
    window keeps "Done. Thank you!"): each eye's prescription with its intervals and predicted
    acuity, or "not enough answers to prescribe; about N more trials recommended" and, given
    ``resume`` (:meth:`lensopt.store.ContinueAdvice.command` of :func:`continue_advice_for`, its note on a line of its own), the command that
    continues the session. With ``undo`` (a letter session), the undo key is offered too: whether
    it was pressed (the session then undoes the last answer and continues its eye)."""
    confirm, undo_key = protocol.keys.confirm, (protocol.keys.undo if undo else None)
    lines = [console_broken((f"{e.eye}: " if e.eye else "") + line) for e in end_points for line in e.closing_lines()]
    if resume is not None:
        lines.append(f"To continue: {resume}")
    both = {"trial_index": 0, "eye": None} if len(end_points) > 1 else {}  # not "Trial 8 of 8 · eye OS"
    # over both eyes' results, whose answer the undo takes back: the last eye's (as OS's first screen
    # says "undo OD's last answer")
    whose = f"{end_points[-1].eye}'s" if both and end_points[-1].eye else "the"
    console.update(  # each eye's confidence is in its lines: not the last trial's "Confidence so far"
        **both,
        confidence=None,
        heading="Session finished",
        lens_text="\n".join(e.headline() for e in end_points),
        keys_text="\n".join(lines),
        message=f"{confirm.upper()}: close"
        + (f"   ·   {undo_key.upper()}: undo {whose} last answer" if undo_key else ""),
    )
    if frames_dir is not None:
        with contextlib.suppress(OSError):  # shown anyway; a frames folder that failed was said by the loop
            console.save_frame(Path(frames_dir) / "end-console.png")
    # a simulated session's source confirms it itself, after its delay
    press = responses.wait_for([confirm, *([undo_key] if undo_key else [])])
    return undo_key is not None and press is not None and press.key == undo_key
