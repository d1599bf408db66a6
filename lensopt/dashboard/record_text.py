"""The printed record's page 1 as plain text, for a terminal (``lensopt sessions SESSION_ID``): the
same words as :func:`lensopt.dashboard.record_page.draw_record_page` draws from a
:class:`~lensopt.dashboard.prescription_text.PrescriptionRecord`, one labelled line each, so that a
clinician reads a stored result without a PDF viewer and finds it as the record prints it."""

from __future__ import annotations

from lensopt.dashboard.prescription_text import EyeRecord, PrescriptionRecord
from lensopt.store.verdict import NO_AXIS_REASON

#: Width of the label column of :func:`record_lines` (the longest label, "Patient / participant", and a gap).
LABEL_WIDTH = 23


def eyes_heading(eyes: tuple[EyeRecord, ...]) -> str:
    """The heading over the eyes' lenses: ``Prescription (minus cylinder)`` when one is prescribed,
    else ``Result (minus cylinder)``, or ``Result (sphere and signed cylinder)`` for two-parameter
    results without an axis (a sphere and a signed cylinder, in no convention)."""
    if any(e.prescribed for e in eyes):
        return "Prescription (minus cylinder)"
    no_axis = all(e.withheld == NO_AXIS_REASON for e in eyes)
    return "Result (sphere and signed cylinder)" if no_axis else "Result (minus cylinder)"


def _labelled(label: str, text: str, indent: str = "") -> str:
    return f"{indent}{label:<{LABEL_WIDTH - len(indent)}}{text}".rstrip()


def eye_lines(eye: EyeRecord) -> list[str]:
    """One eye's lines: its lens (or why it is withheld, and the lens as a provisional estimate), the
    value and 95 % interval of each row, the predicted acuity with what qualifies it, the trials, why
    the session stopped and the confidence in words."""
    if eye.prescribed:
        lines = [_labelled(eye.eye, eye.prescription)]
    else:
        lines = [_labelled(eye.eye, eye.withheld_text), _labelled("", eye.provisional)]
    width = max(len(value) for _, value, _ in eye.rows)
    lines.append(_labelled("", f"{'value':<{width}}  95 % credible interval", "  "))
    lines += [_labelled(label, f"{value:<{width}}  {interval}", "  ") for label, value, interval in eye.rows]
    if eye.no_acuity:
        lines += [_labelled("Predicted acuity", eye.acuity, "  "), _labelled("", eye.no_acuity)]
    else:
        lines.append(_labelled("Predicted acuity", f"{eye.acuity} · Snellen {eye.snellen}", "  "))
        note = eye.not_tried or eye.read_through_short  # the console's sentence on a lens not tried
        if note:
            lines.append(_labelled("", note))
    lines += [
        _labelled("Trials", eye.trials, "  "),
        _labelled("Stopped", eye.stop_reason, "  "),
        _labelled("Confidence", eye.confidence, "  "),
    ]
    return lines


def record_lines(record: PrescriptionRecord) -> list[str]:
    """Page 1 of the record as lines of text, in the page's order: the title (and, for a simulated
    patient's session, that it is not a prescription), the method, a session not finished, the
    session's rows, each eye (:func:`eye_lines`) or why none is stored, the clinician's notes, the
    starting refraction and the software."""
    title = record.title if record.banner is None else f"{record.title} — {record.banner}"
    lines = [title, record.method]
    lines += [line for line in (record.unfinished, record.continue_with) if line is not None]
    lines += ["", *(_labelled(label, value) for label, value in record.session), ""]
    if record.missing is not None:
        lines += ["No prescription stored", record.missing]
    else:
        lines.append(eyes_heading(record.eyes))
        for eye in record.eyes:
            lines += eye_lines(eye)
    lines.append("")
    lines += [_labelled(label, text) for label, text in record.clinician_lines()]
    lines += [_labelled("Starting refraction", record.start), _labelled("Software", record.software)]
    return lines
