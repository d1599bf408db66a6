"""The lines that write a session's prescription and a two-parameter lens's certainty, for the log
and the closing console (:func:`prescription_lines`, :func:`certainty_line`), and their parts,
which :mod:`lensopt.experiment.end_point` writes its end point with."""

from __future__ import annotations

from lensopt.experiment.protocol_sections import show_lens
from lensopt.refraction.acuity_text import logmar_text
from lensopt.refraction.lens import Lens, diopter_text
from lensopt.refraction.prescription import axis_whole_deg, interval_rows, interval_text
from lensopt.stopping import confidence_text, stop_threshold
from lensopt.store import ResultRecord
from lensopt.store.verdict import withheld_reason

#: Intervals of the prescription line, in order: (key of ``Prescription.intervals``, label, unit).
PRESCRIPTION_INTERVALS = interval_rows(("S", "C", "axis", "M", "J0", "J45"))


def acuity_text(result: ResultRecord, target: float | None = None) -> str:
    """``predicted acuity -0.02 logMAR, confidence 0.97 that it is within 0.025 logMAR of the best``
    (the confidence when there is one), or "" for a result without a predicted acuity."""
    acuity, confidence = result.predicted_acuity_logmar, result.confidence
    if acuity is None:
        return ""
    text = f"predicted acuity {logmar_text(acuity)}"
    return (
        text
        if confidence is None
        else f"{text}, confidence {confidence_text(confidence, target)} that it is within 0.025 logMAR of the best"
    )


def intervals_line(result: ResultRecord, lens_text: str | None = None) -> str:
    """``95% intervals: S -1.46 to -1.02 D, ..., axis 165 to 178, ...``, or "" without intervals;
    ``95% intervals (minus cylinder): ...`` beside a lens written otherwise (``lens_text``, from
    :func:`lens_text_of`: in plus cylinder): the intervals are of the stored, minus-cylinder form."""
    parts = []
    for key, label, _ in PRESCRIPTION_INTERVALS:
        if key in result.intervals:  # the axis interval may pass 180 (hi > 180): written in 1-180
            parts.append(f"{label} {interval_text(key, *result.intervals[key])}")
    label = " (minus cylinder)" if lens_text not in (None, result.prescription) else ""
    return f"95% intervals{label}: " + ", ".join(parts) if parts else ""


def prescription_lines(result: ResultRecord, target: float | None = None, cylinder: str = "minus") -> list[str]:
    """The prescription in clinical notation, its predicted acuity and confidence, and its 95 % intervals.
    Given the confidence ``target`` it must reach (:func:`lensopt.experiment.end_point.confidence_target`), a result short of it is
    written as an estimate, not a prescription (as the console and the printed record say). In a
    protocol that shows plus cylinder (``cylinder``), the lens in plus cylinder, the stored
    minus-cylinder form beside it (as the console writes it)."""
    eye = f" {result.eye}" if result.eye else ""
    lens_text = lens_text_of(result, cylinder)
    # the rule of the sessions list and the printed record (a result without a confidence: a comparison's)
    if target is not None and withheld_reason(result, target, "trials", result.confidence is None) is not None:
        head = f"estimate{eye}, not a prescription: {lens_text}"
    else:
        head = f"prescription{eye}: {lens_text}"
    acuity = acuity_text(result, target)
    if acuity:
        head += f"  ({acuity})"
    intervals = intervals_line(result, lens_text)
    return [head, intervals] if intervals else [head]


def certainty_line(optimizer, axis_deg: float = 0.0) -> str:
    """``confidence 0.96 that this lens is within 0.025 logMAR of the best; 95% interval S ..``: the
    intervals of a two-parameter search's sphere and signed cylinder, the cylinder's axis named when
    the protocol gives it (``[lens] axis_deg``)."""
    c = optimizer.certainty()
    target = stop_threshold(getattr(optimizer, "stop", None))
    (slo, shi), (clo, chi) = c.sphere_interval_d, c.cylinder_interval_d
    along = f" (cylinder along {axis_whole_deg(axis_deg):03d})" if axis_deg else ""
    return (
        f"confidence {confidence_text(c.confidence, target)} that this lens is within {c.tolerance_logmar:g} logMAR of the best; "
        f"95% interval S {diopter_text(slo)} to {diopter_text(shi)} D, C {diopter_text(clo)} to {diopter_text(chi)} D{along}"
    )


def lens_text_of(result: ResultRecord, cylinder: str) -> str:
    """A stored result's lens in the ``cylinder`` convention: as stored (minus cylinder), or in plus
    cylinder with the stored form beside it (its intervals are of the stored form)."""
    if cylinder != "plus" or result.axis_deg is None:
        return result.prescription
    plus = show_lens(Lens(result.sphere_d, result.cylinder_d, result.axis_deg), "plus")
    return result.prescription if plus == result.prescription else f"{plus}  (minus cylinder: {result.prescription})"
