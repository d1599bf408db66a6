"""What a finished search reports: the full prescription stored and printed, or the best lens.

A search of the full prescription (letters, duels or rankings, from a starting refraction) stores its
prescription in the ``results`` table (one per eye) with its 95 % intervals; a two-parameter
search prints its best lens, rounded to the phoropter.
"""

from __future__ import annotations

import math

from lensopt.errors import StoreError
from lensopt.experiment.end_point import best_lens_texts, certainty_line, confidence_target, prescription_lines
from lensopt.experiment.protocol import Protocol
from lensopt.refraction.prescription_duels import PrescriptionDuelOptimizer
from lensopt.refraction.prescription_letters import PrescriptionOptimizer
from lensopt.refraction.prescription_rankings import PrescriptionRankingOptimizer
from lensopt.store import ResultRecord, stored_confidence_target

#: The optimizers of the full prescription, whose finished search stores a result (``results``).
PRESCRIPTION_OPTIMIZERS = (PrescriptionOptimizer, PrescriptionDuelOptimizer, PrescriptionRankingOptimizer)


def report_eye(store, session_id: int, optimizer, protocol: Protocol, log, eye: str | None) -> list:
    """An eye's search is over: its prescription stored and printed (full prescription), or its best lens printed."""
    if not optimizer.n_trials:
        return []
    if isinstance(optimizer, PRESCRIPTION_OPTIMIZERS):
        return [store_prescription(store, session_id, optimizer, log, eye, confidence_target(protocol))]
    model, phoropter = best_lens_texts(optimizer, protocol)
    line = f"best lens{f' {eye}' if eye else ''}: {model}"
    if phoropter is not None:
        line += f"; on the phoropter ({protocol.lens_step_d:g} D steps): {phoropter}"
    log(line)
    if getattr(optimizer, "stop", None) is not None:
        log(certainty_line(optimizer, protocol.lens.axis_deg))
    return []


def start_line(start) -> str:
    """``starting refraction -1.00 / -0.50 x 180 (written ..., transposed to minus cylinder); box ±2 D in M...``."""
    note = f" (written {start.written.format()}, transposed to minus cylinder)" if start.transposed else ""
    return (
        f"full prescription: starting refraction {start.lens.format()}{note}; search box "
        f"M ±{start.m_half_width_d:g} D, J0 and J45 ±{start.j_half_width_d:g} D"
    )


def store_prescription(
    store, session_id: int, optimizer, log, eye: str | None = None, target: float | None = None
) -> ResultRecord:
    """The full prescription's result (of eye ``eye``): computed, stored (``results``) and logged (as
    an estimate, not a prescription, when its confidence is short of ``target``)."""
    rx = optimizer.prescription()
    result = ResultRecord(
        prescription=rx.text,
        sphere_d=rx.lens.sphere_d,
        cylinder_d=rx.lens.cylinder_d,
        axis_deg=rx.lens.axis_deg,
        predicted_acuity_logmar=_finite_or_none(rx.predicted_acuity_logmar),
        confidence=_finite_or_none(rx.confidence),
        n_trials=rx.trials,
        intervals={k: [float(v) for v in pair] for k, pair in rx.intervals.items()},
        eye=eye,
    )
    for line in prescription_lines(result, target):
        log(line)
    try:
        store.set_result(session_id, result)
    except StoreError as exc:  # the answers are stored; the result can be recomputed from them
        log(f"the prescription could not be stored ({str(exc).splitlines()[0]}); resume the session to store it")
    return result


def result_if_any(store, info, optimizer, log, eye: str | None = None) -> ResultRecord | None:
    """A finished full-prescription search's result for ``eye`` (stored now if it was not, e.g. after
    a kill between the last answer and the result)."""
    if not isinstance(optimizer, PRESCRIPTION_OPTIMIZERS) or not optimizer.n_trials:
        return None
    stored = next((r for r in info.results if r.eye == eye), None)
    target = stored_confidence_target(info)
    if stored is not None and stored.n_trials == optimizer.n_trials:
        for line in prescription_lines(stored, target):
            log(line)
        return stored
    return store_prescription(store, info.session_id, optimizer, log, eye, target)


def _finite_or_none(value) -> float | None:
    return float(value) if value is not None and math.isfinite(value) else None
