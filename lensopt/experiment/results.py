"""What a finished search reports: the full prescription stored and printed, or the best lens.

A search of the full prescription (letters, duels or rankings, from a starting refraction) stores its
prescription in the ``results`` table (one per eye) with its 95 % intervals. A two-parameter letter
search (sphere and a signed cylinder along the patient's axis) prints its best lens, rounded to the
phoropter, and stores it as its result too (:func:`letter_result`): in clinical notation at the
protocol's axis, so that ``lensopt sessions`` lists it and ``lensopt print`` prints it. A
two-parameter comparison (duels, rankings without a start) has no confidence or intervals and
prints its best lens only. :func:`eye_done` says when an eye's search is over, and
:func:`check_end_stored` checks, at a session's end, that the database holds its status and results.
"""

from __future__ import annotations

import math

import numpy as np

from lensopt.errors import StoreError
from lensopt.experiment.end_point import (
    best_lens_texts,
    comparison_notes,
    confidence_target,
    most_plus_notes,
    start_note,
)
from lensopt.experiment.prescription_text import certainty_line, prescription_lines
from lensopt.experiment.protocol import Protocol
from lensopt.refraction.acuity_text import measurable_acuity_logmar
from lensopt.refraction.lens import Lens, power_vector_arrays, show_lens, two_parameter_lens_text
from lensopt.refraction.phoropter import round_lens
from lensopt.refraction.prescription_duels import PrescriptionDuelOptimizer
from lensopt.refraction.prescription_letters import PrescriptionOptimizer
from lensopt.refraction.prescription_rankings import PrescriptionRankingOptimizer
from lensopt.store import ResultRecord, resume_command, stored_confidence_target

#: The optimizers of the full prescription, whose finished search stores a result (``results``).
PRESCRIPTION_OPTIMIZERS = (PrescriptionOptimizer, PrescriptionDuelOptimizer, PrescriptionRankingOptimizer)


def report_eye(store, session_id: int, optimizer, protocol: Protocol, log, eye: str | None) -> list:
    """An eye's search is over: its prescription stored and printed (full prescription), or its best lens
    printed — and, for a two-parameter letter search, stored as its result (:func:`letter_result`)."""
    if not optimizer.n_trials:
        return []
    if isinstance(optimizer, PRESCRIPTION_OPTIMIZERS):
        target = confidence_target(protocol)
        stored = store_prescription(store, session_id, optimizer, log, eye, target, protocol.lens.cylinder)
        started = start_note(optimizer, eye, protocol.lens.cylinder)
        if started:
            log(started)
        for note in comparison_notes(optimizer, protocol, [stored]):  # as the console and the record say it
            log(note)
        return [stored]
    model, phoropter = best_lens_texts(optimizer, protocol)
    line = f"best lens{f' {eye}' if eye else ''}: {model}"
    if phoropter is not None:
        line += f"; on the phoropter ({protocol.lens_step_d:g} D steps): {phoropter}"
    log(line)
    for note in comparison_notes(optimizer, protocol, []):  # a comparison's lens on the box's edge
        log(note)
    for note in most_plus_notes(optimizer, protocol):  # the relaxed eye's lens, or a warning
        log(note)
    if getattr(optimizer, "stop", None) is not None:
        log(certainty_line(optimizer, protocol.lens.axis_deg))
    if _is_letter_search(optimizer):
        return [
            _store_and_log(
                store,
                session_id,
                letter_result(optimizer, protocol, eye),
                log,
                confidence_target(protocol),
                protocol.lens.cylinder,
            )
        ]
    return []


def _is_letter_search(optimizer) -> bool:
    """A two-parameter letter search: a best lens with a confidence and intervals (``certainty``)."""
    return callable(getattr(optimizer, "certainty", None)) and not isinstance(optimizer, PRESCRIPTION_OPTIMIZERS)


def letter_result(optimizer, protocol: Protocol, eye: str | None = None) -> ResultRecord:
    """A two-parameter letter search's end point as a result: its best lens on the phoropter's
    steps (``[lens] step_d``; with continuous lens powers, ``step_d = 0``, as found), with the model's predicted
    acuity through it, its confidence and the 95 % intervals of the sphere and cylinder as written.

    At the protocol's axis (``[lens] axis_deg``) the lens is written in minus cylinder: a positive
    signed cylinder is transposed, ``(S + C, −C, axis ± 90°)``, and so are its intervals (the
    sphere's is then that of ``S + C``, :attr:`LensCertainty.meridian_interval_d`); J0 and J45 follow
    from the signed cylinder's interval at that axis, and M (``S + C/2``, the same in either form)
    from :attr:`LensCertainty.equivalent_interval_d`. Without an axis it is sphere and signed cylinder
    (``S -0.50 D  C +1.00 D``) with M's interval only, and has no axis."""
    bounds = protocol.optimizer
    sphere_d, cylinder_d = round_lens(
        optimizer.best(), protocol.lens_step_d, (bounds.sphere_bounds_d, bounds.cylinder_bounds_d)
    )
    certainty = optimizer.certainty()
    sphere_interval, cylinder_interval = certainty.sphere_interval_d, certainty.cylinder_interval_d
    axis_deg = protocol.lens.axis_deg or None
    if axis_deg is None:
        text = two_parameter_lens_text(sphere_d, cylinder_d, gap="  ")
        written = Lens(sphere_d, cylinder_d, 180.0)
    else:
        written = Lens(sphere_d, cylinder_d, axis_deg)
        if written.is_plus_cylinder:
            if certainty.meridian_interval_d is None:
                raise ValueError(
                    f"{type(certainty).__name__} has no interval of S + C to write a transposed lens's sphere"
                )
            sphere_interval, cylinder_interval = (
                certainty.meridian_interval_d,
                (-cylinder_interval[1], -cylinder_interval[0]),
            )
            written = written.minus_cylinder()
        text = written.format()
    intervals = {"sphere_d": sphere_interval, "cylinder_d": cylinder_interval}
    if certainty.equivalent_interval_d is not None:  # M: the same in either cylinder form
        intervals["m_d"] = certainty.equivalent_interval_d
    if axis_deg is not None:  # J0 and J45: linear in the signed cylinder at the known axis
        _, j0_d, j45_d = power_vector_arrays(0.0, np.asarray(certainty.cylinder_interval_d), axis_deg)
        intervals.update(j0_d=np.sort(j0_d), j45_d=np.sort(j45_d))
    acuity, _ = optimizer.predicted_acuity_logmar(sphere_d, cylinder_d)
    return ResultRecord(
        prescription=text,
        sphere_d=written.sphere_d,
        cylinder_d=written.cylinder_d,
        axis_deg=None if axis_deg is None else written.axis_deg,
        predicted_acuity_logmar=_measurable_acuity(optimizer, float(acuity)),
        confidence=_finite_or_none(certainty.confidence),
        n_trials=optimizer.n_trials,
        intervals={key: [float(v) + 0.0 for v in pair] for key, pair in intervals.items()},
        eye=eye,
    )


def start_line(start, cylinder: str = "minus") -> str:
    """``starting refraction -1.00 / -0.50 x 180 (written ..., transposed to minus cylinder); box ±2 D in M...``;
    of each eye, ``starting refraction OD -2.25 / -0.75 x 180, OS -1.50 / -0.50 x 010; box ...``. In a
    protocol of ``cylinder = "plus"``, each lens in plus cylinder, as every other lens of its log, with
    the minus-cylinder form it searches in beside it."""

    def lens_text(start) -> str:
        if cylinder == "plus":
            plus, minus = show_lens(start.lens, "plus"), start.lens.format()
            return plus if plus == minus else f"{plus} (minus cylinder: {minus})"
        note = f" (written {start.written.format()}, transposed to minus cylinder)" if start.transposed else ""
        return f"{start.lens.format()}{note}"

    lenses = ", ".join(f"{eye} {lens_text(start.for_eye(eye))}" for eye in start.eyes) or lens_text(start)
    return (
        f"full prescription: starting refraction {lenses}; search box "
        f"M ±{start.m_half_width_d:g} D, J0 and J45 ±{start.j_half_width_d:g} D"
    )


def store_prescription(
    store,
    session_id: int,
    optimizer,
    log,
    eye: str | None = None,
    target: float | None = None,
    cylinder: str = "minus",
) -> ResultRecord:
    """The full prescription's result (of eye ``eye``): computed, stored (``results``) and logged (as
    an estimate, not a prescription, when its confidence is short of ``target``; in the protocol's
    ``cylinder`` convention, the stored minus-cylinder form beside a plus one)."""
    rx = optimizer.prescription()
    result = ResultRecord(
        prescription=rx.text,
        sphere_d=rx.lens.sphere_d,
        cylinder_d=rx.lens.cylinder_d,
        axis_deg=rx.lens.axis_deg,
        predicted_acuity_logmar=_measurable_acuity(optimizer, rx.predicted_acuity_logmar),
        confidence=_finite_or_none(rx.confidence),
        n_trials=rx.trials,
        intervals={k: [float(v) for v in pair] for k, pair in rx.intervals.items()},
        eye=eye,
    )
    return _store_and_log(store, session_id, result, log, target, cylinder)


def _store_and_log(
    store, session_id: int, result: ResultRecord, log, target: float | None, cylinder: str = "minus"
) -> ResultRecord:
    """``result`` stored, then logged (as an estimate when its confidence is short of ``target``; in
    the ``cylinder`` convention): stored first, so that an interrupt while it is written loses nothing."""
    try:
        store.set_result(session_id, result)
        failed = None
    except StoreError as exc:  # the answers are stored; the result can be recomputed from them
        failed = f"the prescription could not be stored ({str(exc).splitlines()[0]}); resume the session to store it"
    for line in prescription_lines(result, target, cylinder):
        log(line)
    if failed is not None:
        log(failed)
    return result


def result_if_any(store, info, optimizer, log, eye: str | None = None, protocol: Protocol | None = None):
    """A finished search's result for ``eye`` — of the full prescription, or of a two-parameter letter
    search (given its ``protocol``) — stored now if it was not (e.g. after a kill between the last
    answer and the result, or a session finished before two-parameter results were stored)."""
    letters = _is_letter_search(optimizer) and protocol is not None
    if not (isinstance(optimizer, PRESCRIPTION_OPTIMIZERS) or letters) or not optimizer.n_trials:
        return None
    stored = next((r for r in info.results if r.eye == eye), None)
    target = stored_confidence_target(info)
    cylinder = "minus" if protocol is None else protocol.lens.cylinder
    started = start_note(optimizer, eye, cylinder)
    if stored is not None and stored.n_trials == optimizer.n_trials:
        for line in prescription_lines(stored, target, cylinder):
            log(line)
        if started:
            log(started)
        return stored
    if letters:
        assert protocol is not None  # letters implies it
        return _store_and_log(store, info.session_id, letter_result(optimizer, protocol, eye), log, target, cylinder)
    result = store_prescription(store, info.session_id, optimizer, log, eye, target, cylinder)
    if started:
        log(started)
    return result


def _measurable_acuity(optimizer, acuity_logmar) -> float | None:
    """``acuity_logmar`` if it is finite and within :data:`~lensopt.refraction.acuity_text.ACUITY_MARGIN_LOGMAR` of the letter sizes
    ``optimizer`` shows (its ``letter_bounds_logmar``), else None (:func:`measurable_acuity_logmar`)."""
    bounds = optimizer.settings_dict().get("letter_bounds_logmar", (-math.inf, math.inf))
    return measurable_acuity_logmar(acuity_logmar, bounds)


def _finite_or_none(value) -> float | None:
    return float(value) if value is not None and math.isfinite(value) else None


def eye_done(search, n_trials: int):
    """Whether an eye's search is over: True after ``n_trials`` answers, its confidence (a float)
    when its stopping rule says stop, else False."""
    if search.n_trials >= n_trials:
        return True
    if search.n_trials and getattr(search, "stop", None) is not None and search.should_stop():
        return float(search.confidence())
    return False


def check_end_stored(store, session_id: int, results, status_refused: str | None, db_path, options: str = ""):
    """The finished session as stored; a one-line StoreError when its end is not what the database
    holds: its status (still ``running``: shown ``interrupted``) or an eye's result could not be
    written, or the database cannot even be read back (locked or failing at the very end). Every
    answer is stored; a resume (with the run's window ``options``) stores the end."""
    try:
        stored = store.session(session_id)
    except StoreError as exc:
        raise StoreError(
            f"session {session_id}: every answer is stored, but its end could not be checked "
            f"({str(exc).splitlines()[0]}); store it with: {resume_command(session_id, db_path, options)}"
        ) from None
    missing = [r for r in results if not any(s.eye == r.eye and s.n_trials == r.n_trials for s in stored.results)]
    if status_refused is None and not missing:
        return stored
    what = f"{' and '.join(f'the {r.eye} result' if r.eye else 'its result' for r in missing)}" if missing else ""
    what = " and ".join(part for part in (what, "" if status_refused is None else "its finished status") if part)
    why = "" if status_refused is None else f" ({status_refused})"
    raise StoreError(
        f"session {session_id}: every answer is stored, but not {what}{why}; store them with: "
        f"{resume_command(session_id, db_path, options)}"
    )
