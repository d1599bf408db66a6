"""Page 1 of the printable prescription record: the record a clinician signs.

Who and which session, when, the prescription of each eye in clinical notation with its 95 %
credible intervals, the predicted acuity (logMAR and Snellen; "not tried" when the eye read through
no lens within a phoropter step of it), the trials and why the session stopped, the confidence in
plain words, the starting refraction, the software versions and a signature line — or, for an eye
short of its target, "No prescription" with its lens only as a provisional estimate. The words come
from :func:`lensopt.dashboard.prescription_text.build_record`; this module lays them out on an A4
page (matplotlib's object API only). :mod:`lensopt.dashboard.prescription_record` writes the PDF.
"""

from __future__ import annotations

from matplotlib.figure import Figure
from matplotlib.lines import Line2D

from lensopt.dashboard.drawing import FONT_SIZE, fitted_size
from lensopt.dashboard.prescription_text import EyeRecord, PrescriptionRecord, wrapped
from lensopt.store.verdict import NO_AXIS_REASON

#: Page size in inches: A4 portrait (the record, the full prescription's curves; the dashboard
#: report's four panels keep their own A4 landscape).
A4_PORTRAIT_IN = (8.27, 11.69)
#: Left and right margins of page 1 (inches).
MARGIN_IN = 0.75


#: Where page 1's values start (inches from the left edge), the width of one eye's column, and
#: where an interval starts within it (one eye; two eyes share the width).
VALUE_X_IN = MARGIN_IN + 1.6
EYE_COLUMN_IN = 2.65
INTERVAL_OFFSET_IN = 0.95
#: The font of numbers (signs and decimals aligned) and the grey of labels.
MONO = "DejaVu Sans Mono"
GREY = "0.35"
#: The red of "no prescription" and "not finished".
ALERT = "#b2182b"


class _Page:
    """Text placed from the top of a portrait page in inches (``y_in`` moves down as rows are added)."""

    def __init__(self, fig: Figure):
        self.fig = fig
        self.width_in, self.height_in = fig.get_size_inches()
        self.y_in = 0.0

    def text(self, x_in: float, text: str, size: float = FONT_SIZE + 1, **kwargs) -> None:
        kwargs.setdefault("va", "top")
        self.fig.text(x_in / self.width_in, 1.0 - self.y_in / self.height_in, text, fontsize=size, **kwargs)

    def rule(self, gap_in: float = 0.12, x_in: tuple | None = None, color: str = "0.6") -> None:
        low, high = x_in or (MARGIN_IN, self.width_in - MARGIN_IN)
        y = 1.0 - (self.y_in + gap_in) / self.height_in
        self.fig.add_artist(
            Line2D(
                [low / self.width_in, high / self.width_in], [y, y], transform=self.fig.transFigure, color=color, lw=0.8
            )
        )

    def down(self, step_in: float) -> None:
        self.y_in += step_in


def lines_within(text: str, size: float, room_pt: float) -> list[str]:
    """``text`` broken between words into lines at most ``room_pt`` wide in the font of ``size``
    points (measured as drawn; a single word wider than that keeps a line of its own)."""
    lines: list[str] = []
    for word in text.split(" "):
        joined = f"{lines[-1]} {word}" if lines else word
        if lines and fitted_size(joined, size, room_pt) < size:
            lines.append(word)
        else:
            lines[-1:] = [joined]
    return lines or [""]


def _labelled(page: _Page, label: str, lines: list[str], step_in: float = 0.24, size: float = FONT_SIZE + 1) -> None:
    page.text(MARGIN_IN, label, size=FONT_SIZE, color=GREY)
    for line in lines:
        page.text(VALUE_X_IN, line, size=size)
        page.down(step_in)


def draw_record_page(record: PrescriptionRecord, n_pages: int = 2) -> Figure:
    """Page 1 of ``n_pages``: the prescription record of :class:`PrescriptionRecord` ``record`` on A4 portrait."""
    fig = Figure(figsize=A4_PORTRAIT_IN)
    page = _Page(fig)
    right = page.width_in - MARGIN_IN
    page.down(0.5)
    page.text(MARGIN_IN, record.title, size=22, weight="bold")
    page.down(0.45)
    page.text(MARGIN_IN, record.method, size=FONT_SIZE, color=GREY)
    page.text(right, f"Session {record.session_id}", size=13, ha="right", weight="bold")
    page.rule(0.2)
    page.down(0.45)
    for label, value in record.session:  # a long value (the protocol, rule, seed, SIMULATED) on two lines
        lines = lines_within(value, FONT_SIZE + 1, (right - VALUE_X_IN) * 72.0)
        _labelled(page, label, lines, step_in=0.235)
    page.rule(0.0)
    if record.unfinished is not None:  # in red under the rule: the results may not be the session's last
        page.down(0.12)
        for line in wrapped(record.unfinished, 76):
            page.text(MARGIN_IN, line, size=FONT_SIZE, weight="bold", color=ALERT)
            page.down(0.2)
    page.down(0.3)
    if record.missing is not None:
        page.text(MARGIN_IN, "No prescription stored", size=20, weight="bold", color=ALERT)
        page.down(0.5)
        for line in wrapped(record.missing, 78):
            page.text(MARGIN_IN, line, size=FONT_SIZE + 2)
            page.down(0.27)
        page.down(0.15)
        page.text(
            MARGIN_IN,
            "This page is not a prescription. Page 2 shows the session as the dashboard draws it.",
            size=FONT_SIZE + 1,
            color=GREY,
        )
        page.down(0.5)
        _labelled(page, "Starting refraction", [record.start])
        _labelled(page, "Software", wrapped(record.software, 62), step_in=0.22, size=FONT_SIZE)
        return fig
    _draw_eyes(page, record.eyes)
    page.down(0.1)
    _labelled(page, "Starting refraction", [record.start])
    _labelled(page, "Software", wrapped(record.software, 62), step_in=0.22, size=FONT_SIZE)
    if record.signable:
        _draw_signature(page, n_pages)
    else:
        _draw_not_a_prescription(page, any(eye.fixed_design for eye in record.eyes))
    return fig


def _draw_eyes(page: _Page, eyes: tuple[EyeRecord, ...]) -> None:
    """The large prescription line of each eye (or, for an eye short of the target confidence, "No
    prescription: not enough answers" — a fixed design's "Estimate, not a prescription" — in red and
    its lens small as a provisional estimate), the interval table (one column per eye, a withheld
    eye's in grey under "provisional" or "estimate"), acuity,
    trials, then each eye's stop reason and confidence in words."""
    # a two-parameter search without an axis has a sphere and a signed cylinder, in no convention
    no_axis = all(e.withheld == NO_AXIS_REASON for e in eyes)
    heading = (
        "Prescription (minus cylinder)"
        if any(e.prescribed for e in eyes)
        else ("Result (sphere and signed cylinder)" if no_axis else "Result (minus cylinder)")
    )
    page.text(MARGIN_IN, heading, size=FONT_SIZE + 3, weight="bold")
    page.down(0.58 if len(eyes) == 1 else 0.48)
    big = 28 if len(eyes) == 1 else 24
    for eye in eyes:
        page.text(MARGIN_IN, eye.eye, size=FONT_SIZE + 2, color=GREY, va="center")
        if eye.prescribed:
            page.text(VALUE_X_IN, eye.prescription, size=big, weight="bold", family=MONO, va="center")
            page.down(0.56 if len(eyes) == 1 else 0.46)
            continue
        assert eye.withheld is not None  # not prescribed: withheld says why
        page.text(VALUE_X_IN, eye.withheld_heading, size=FONT_SIZE + 6, weight="bold", color=ALERT, va="center")
        page.down(0.22)
        for line in wrapped(f"({eye.withheld})", 70):  # a long reason (no axis: what to do) on its own lines
            page.text(VALUE_X_IN, line, size=FONT_SIZE, color=ALERT)
            page.down(0.17)
        page.text(VALUE_X_IN, eye.provisional, size=FONT_SIZE - 1, color=GREY)
        page.down(0.32)
    page.down(0.0 if eyes[-1].prescribed else 0.07)  # clear of the small provisional line
    page.rule(-0.2, color="0.8")
    page.down(0.1)
    columns = [VALUE_X_IN + k * EYE_COLUMN_IN for k in range(len(eyes))]
    offset_in, interval_size = (INTERVAL_OFFSET_IN, FONT_SIZE - 0.5) if len(eyes) == 1 else (0.75, FONT_SIZE - 1)
    withheld = any(not eye.prescribed for eye in eyes)
    if len(eyes) > 1 or withheld:
        for x, eye in zip(columns, eyes):
            name = eye.eye if len(eyes) > 1 else ""
            if eye.prescribed:
                page.text(x, name, size=FONT_SIZE, weight="bold")
            else:
                short = name.split()[0] + ": " if name else ""
                label = "estimate" if eye.fixed_design else "provisional"
                page.text(x, f"{short}{label}, not for prescribing", size=FONT_SIZE - 1, color=ALERT)
        page.down(0.22)
    for x in columns:
        page.text(x, "value", size=FONT_SIZE - 1, color=GREY)
        page.text(x + offset_in, "95 % credible interval", size=FONT_SIZE - 1, color=GREY)
    page.down(0.24)
    ink = ["black" if eye.prescribed else GREY for eye in eyes]
    for k, (label, _, _) in enumerate(eyes[0].rows):
        page.text(MARGIN_IN, label, size=FONT_SIZE, color=GREY)
        for x, eye, color in zip(columns, eyes, ink):
            _, value, interval = eye.rows[k]
            page.text(x, value, size=FONT_SIZE + 0.5, family=MONO, color=color)
            page.text(x + offset_in, interval, size=interval_size, family=MONO, color=color)
        page.down(0.25 if len(eyes) == 1 else 0.23)
    page.down(0.1)
    page.text(MARGIN_IN, "Predicted acuity", size=FONT_SIZE, color=GREY)
    for x, eye, color in zip(columns, eyes, ink):
        page.text(x, eye.acuity, size=FONT_SIZE + 3, weight="bold", family=MONO, color=color)
        page.y_in += 0.3
        page.text(x, f"Snellen {eye.snellen}", size=FONT_SIZE + 1, color=color)
        note = eye.not_tried_short or eye.read_through_short  # under the acuity it qualifies
        if note:
            page.y_in += 0.25
            page.text(x, note, size=FONT_SIZE - 1, color=ALERT if eye.not_tried_short else color)
            page.y_in -= 0.25
        page.y_in -= 0.3
    noted = any(e.not_tried_short or e.read_through_short for e in eyes)
    page.down((0.6 if len(eyes) == 1 else 0.56) + (0.25 if noted else 0.0))
    page.text(MARGIN_IN, "Trials", size=FONT_SIZE, color=GREY)
    for x, eye in zip(columns, eyes):
        page.text(x, eye.trials, size=FONT_SIZE + 1)
    page.down(0.32)
    for name, field in (("Stopped", "stop_reason"), ("Confidence", "confidence")):
        for eye in eyes:
            label = name if len(eyes) == 1 else f"{name} ({eye.eye.split()[0]})"
            weight = "bold" if field == "confidence" else "normal"
            page.text(MARGIN_IN, label, size=FONT_SIZE, color=GREY)
            for line in wrapped(getattr(eye, field), 54 if field == "confidence" else 62):
                page.text(VALUE_X_IN, line, size=FONT_SIZE + 1, weight=weight)
                page.down(0.23 if len(eyes) == 1 else 0.21)
            page.down(0.06 if len(eyes) == 1 else 0.03)


def _draw_not_a_prescription(page: _Page, fixed_design: bool = False) -> None:
    """In place of the signature block, on a page with no eye to prescribe: that it is not a
    prescription (``fixed_design``: the session ran its protocol's fixed number of trials)."""
    page.y_in = max(page.y_in + 0.1, page.height_in - 1.1)
    page.rule(0.0)
    page.down(0.25)
    if fixed_design:
        estimates = (
            "is nothing to sign. The protocol ran a fixed number of trials (no [stop]): the estimates above are",
            "its results, not for prescribing. Page 2 shows the session as the dashboard draws it.",
        )
    else:
        estimates = (
            "is nothing to sign. The estimates above are provisional, not for prescribing.",
            "Page 2 shows the session as the dashboard draws it.",
        )
    for line in (
        "This page is not a prescription: no eye's result may be prescribed (the reasons above), so there",
        *estimates,
    ):
        page.text(MARGIN_IN, line, size=FONT_SIZE, color=ALERT)
        page.down(0.2)


def _draw_signature(page: _Page, n_pages: int) -> None:
    """The signature block at the foot of the page, and the footnote."""
    page.y_in = page.height_in - 1.4
    page.rule(0.0)
    page.down(0.55)
    right = page.width_in - MARGIN_IN
    for label, (low, high) in (
        ("Clinician", (MARGIN_IN, MARGIN_IN + 2.6)),
        ("Signature", (MARGIN_IN + 2.9, MARGIN_IN + 5.2)),
        ("Date", (MARGIN_IN + 5.5, right)),
    ):
        page.rule(0.0, x_in=(low, high), color="0.2")
        page.y_in += 0.06
        page.text(low, label, size=FONT_SIZE - 1, color=GREY)
        page.y_in -= 0.06
    page.down(0.45)
    for line in (
        "Intervals: 95 % credible intervals of the best lens (posterior draws of the session's model). Predicted",
        f"acuity: the model's letter-acuity threshold through this lens. Lenses in 0.25 D and 1° steps.  Page 1 of {n_pages}",
    ):
        page.text(MARGIN_IN, line, size=FONT_SIZE - 2, color="0.45")
        page.down(0.17)
