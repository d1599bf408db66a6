"""Page 1 of the printable prescription record: the record a clinician signs.

Who and which session, when, the prescription of each eye in clinical notation with its 95 %
credible intervals, the predicted acuity (logMAR and Snellen; "not tried" when the eye read through
no lens within a phoropter step of it), the trials and why the session stopped, the confidence in
plain words, what the clinician did (notes, lenses set differently from the ones asked, answers
undone), the starting refraction, the software versions and a signature line — or, for an eye
short of its target, "No prescription" with its lens only as a provisional estimate; a simulated
patient's session is marked so under the title and has nothing to sign. The words come
from :func:`lensopt.dashboard.prescription_text.build_record`; this module lays them out on an A4
page (matplotlib's object API only). :mod:`lensopt.dashboard.prescription_record` writes the PDF.

Every text is measured as drawn: a long value is broken between words to the room it has (the
right margin, or its eye's column), a short one set smaller where it would not fit, and the page's
body — everything above the block at its foot (the signature line, or "This page is not a
prescription") — is drawn again, spaced and set proportionally smaller, until its lowest text
clears that block (:data:`FOOT_GAP_IN`). The foot stays where it is: a long record never pushes the
signature line off the page.
"""

from __future__ import annotations

import itertools

from matplotlib.figure import Figure
from matplotlib.font_manager import FontProperties
from matplotlib.lines import Line2D
from matplotlib.text import Text
from matplotlib.textpath import TextToPath

from lensopt.dashboard.drawing import FONT_SIZE, fitted_size
from lensopt.dashboard.prescription_text import EyeRecord, PrescriptionRecord
from lensopt.dashboard.record_text import eyes_heading

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
#: Space kept clear right of a text in a column (inches): a label before its value, an eye's column
#: before the next eye's.
GUTTER_IN = 0.12
#: The font of numbers (signs and decimals aligned) and the grey of labels.
MONO = "DejaVu Sans Mono"
GREY = "0.35"
#: The red of "no prescription" and "not finished".
ALERT = "#b2182b"
#: Where the block at the foot of the page starts (inches from the top edge is the page's height
#: less these): the signature's rule, or the rule over "This page is not a prescription".
SIGNATURE_FROM_BOTTOM_IN = 1.5
NOT_A_PRESCRIPTION_FROM_BOTTOM_IN = 1.1
#: The lowest a text may reach on a page without a foot block (inches from the bottom edge).
BOTTOM_MARGIN_IN = 0.5
#: Space kept between the body's lowest text and the foot block (inches).
FOOT_GAP_IN = 0.15
#: The share of a text's room it is fitted to: measured from the font's outlines, a line is drawn a
#: little wider on a raster (hinted glyphs).
ROOM_USED = 0.97
#: A small note under an eye's acuity is set down to this fraction of its size to keep to one line
#: of its column, and broken between words beyond.
NOTE_SHRINK = 0.85
#: The body is set no smaller than this fraction of its sizes and spacing (a longer record runs on
#: into the foot rather than into unreadable print; no realistic record comes near it).
MIN_SCALE = 0.5


def text_width_pt(text: str, size: float, family=None, weight="normal") -> float:
    """The width (points) of ``text`` set in ``size`` points, measured from the font's outlines."""
    font = FontProperties(size=size, family=family, weight=weight)
    width_pt, _, _ = TextToPath().get_text_width_height_descent(str(text), font, ismath=False)
    return float(width_pt)


def lines_within(text: str, size: float, room_pt: float, family=None, weight="normal") -> list[str]:
    """``text`` broken between words into lines at most ``room_pt`` wide in the font of ``size``
    points (measured as drawn; a single word wider than that keeps a line of its own)."""
    lines: list[str] = []
    for word in text.split(" "):
        joined = f"{lines[-1]} {word}" if lines else word
        if lines and fitted_size(joined, size, room_pt, family=family, weight=weight) < size:
            lines.append(word)
        else:
            lines[-1:] = [joined]
    return lines or [""]


class _Page:
    """Text placed from the top of a portrait page in inches (``y_in`` moves down as rows are added).

    The body's font sizes and steps are multiplied by ``scale`` (the foot's, drawn with ``foot``
    set, are not); each left-aligned text is set smaller if it would run past ``room_in`` (default:
    the right margin). The body's texts are kept in ``body``, to measure."""

    def __init__(self, fig: Figure, scale: float = 1.0):
        self.fig = fig
        self.width_in, self.height_in = fig.get_size_inches()
        self.right_in = self.width_in - MARGIN_IN
        self.y_in = 0.0
        self.scale = scale
        self.foot = False
        self.body: list[Text] = []

    def size(self, size: float) -> float:
        return size * (1.0 if self.foot else self.scale)

    def text(self, x_in: float, text: str, size: float = FONT_SIZE + 1, room_in: float | None = None, **kwargs) -> Text:
        kwargs.setdefault("va", "top")
        size = self.size(size)
        if kwargs.get("ha", "left") == "left":
            room_pt = ROOM_USED * 72.0 * (self.right_in - x_in if room_in is None else room_in)
            size = fitted_size(text, size, room_pt, family=kwargs.get("family"), weight=kwargs.get("weight", "normal"))
        artist = self.fig.text(x_in / self.width_in, 1.0 - self.y_in / self.height_in, text, fontsize=size, **kwargs)
        if not self.foot:
            self.body.append(artist)
        return artist

    def lines(
        self,
        x_in: float,
        text: str,
        size: float,
        step_in: float,
        room_in: float | None = None,
        shrink: float = 1.0,
        **kwargs,
    ) -> int:
        """``text`` broken to ``room_in`` (default: to the right margin), one line per ``step_in``
        down — on one line set smaller, if no smaller than ``shrink`` of ``size`` fits it; the number
        of lines."""
        room_pt = ROOM_USED * 72.0 * (self.right_in - x_in if room_in is None else room_in)
        font = {"family": kwargs.get("family"), "weight": kwargs.get("weight", "normal")}
        size_pt = self.size(size)
        if fitted_size(text, size_pt, room_pt, **font) >= shrink * size_pt:
            lines = [text]
        else:
            lines = lines_within(text, size_pt, room_pt, **font)
        for line in lines:
            self.text(x_in, line, size, room_in, **kwargs)
            self.down(step_in)
        return len(lines)

    def rule(self, gap_in: float = 0.12, x_in: tuple | None = None, color: str = "0.6") -> None:
        low, high = x_in or (MARGIN_IN, self.right_in)
        y = 1.0 - (self.y_in + self.size(gap_in)) / self.height_in
        self.fig.add_artist(
            Line2D(
                [low / self.width_in, high / self.width_in], [y, y], transform=self.fig.transFigure, color=color, lw=0.8
            )
        )

    def down(self, step_in: float) -> None:
        self.y_in += self.size(step_in)

    def body_bottom_in(self) -> float:
        """How far from the top edge the body's lowest text reaches (inches), as drawn."""
        self.fig.draw_without_rendering()
        dpi = self.fig.dpi
        drawn = [t.get_window_extent() for t in self.body if t.get_text()]
        return max((self.height_in - box.y0 / dpi for box in drawn), default=0.0)


def _labelled(page: _Page, label: str, text: str, step_in: float = 0.24, size: float = FONT_SIZE + 1) -> None:
    """A grey label in the left column and its value, broken to the right margin."""
    page.text(MARGIN_IN, label, size=FONT_SIZE, color=GREY, room_in=VALUE_X_IN - MARGIN_IN - GUTTER_IN)
    page.lines(VALUE_X_IN, text, size, step_in)


def _foot_top_in(record: PrescriptionRecord, height_in: float) -> float:
    """Where the block at the foot of page 1 starts (inches from the top edge); for a page without
    one, the lowest its body may reach."""
    if record.missing is not None:
        return height_in - BOTTOM_MARGIN_IN
    if record.signable:
        return height_in - SIGNATURE_FROM_BOTTOM_IN
    return height_in - NOT_A_PRESCRIPTION_FROM_BOTTOM_IN


def _drawn_body(record: PrescriptionRecord, scale: float) -> tuple[_Page, bool]:
    """Page 1's body drawn at ``scale`` on a new figure, and whether it clears the foot."""
    page = _Page(Figure(figsize=A4_PORTRAIT_IN), scale)
    _draw_body(page, record)
    return page, page.body_bottom_in() <= _foot_top_in(record, page.height_in) - FOOT_GAP_IN


def draw_record_page(record: PrescriptionRecord, n_pages: int = 2) -> Figure:
    """Page 1 of ``n_pages``: the prescription record of :class:`PrescriptionRecord` ``record`` on A4
    portrait, its body set smaller and closer (down to :data:`MIN_SCALE`) until it clears the foot."""
    scale, too_big = 1.0, None  # the smallest scale found too big
    page, fits = _drawn_body(record, scale)
    while not fits and scale > MIN_SCALE:
        # sizes and steps scale together: the body's height nearly in proportion, a line broken less
        limit_in = _foot_top_in(record, page.height_in) - FOOT_GAP_IN
        too_big, scale = scale, max(MIN_SCALE, min(scale - 0.02, scale * limit_in / page.body_bottom_in()))
        page, fits = _drawn_body(record, scale)
    if too_big is not None and fits:
        for _ in range(3):  # a line broken less left room: the largest scale that fits, within 1/8 of the step
            middle = 0.5 * (scale + too_big)
            larger, larger_fits = _drawn_body(record, middle)
            if larger_fits:
                page, scale = larger, middle
            else:
                too_big = middle
    page.foot = True
    if record.missing is None:
        if record.signable:
            _draw_signature(page, n_pages)
        else:
            _draw_not_a_prescription(page, any(eye.fixed_design for eye in record.eyes), record.banner is not None)
    return page.fig


def _draw_body(page: _Page, record: PrescriptionRecord) -> None:
    """Everything on page 1 above the foot block."""
    right = page.right_in
    page.down(0.5)
    page.text(MARGIN_IN, record.title, size=22, weight="bold")
    page.down(0.45)
    if record.banner is not None:  # a simulated patient's session: in red under the title, as large
        page.text(MARGIN_IN, record.banner, size=18, weight="bold", color=ALERT)
        page.down(0.4)
    session = f"Session {record.session_id}"
    session_pt = text_width_pt(session, page.size(13), weight="bold")
    page.text(MARGIN_IN, record.method, size=FONT_SIZE, color=GREY, room_in=right - MARGIN_IN - session_pt / 72.0 - 0.2)
    page.text(right, session, size=13, ha="right", weight="bold")
    page.rule(0.2)
    page.down(0.45)
    for label, value in record.session:  # a long value (the protocol, rule, seed, SIMULATED) on two lines
        _labelled(page, label, value, step_in=0.235)
    page.rule(0.0)
    # under the rule: in red, a session not finished (its results may not be its last); a finished
    # session's eyes short of their target, the command that continues it
    for line, color in ((record.unfinished, ALERT), (record.continue_with, None)):
        if line is not None:
            page.down(0.12)
            page.lines(MARGIN_IN, line, FONT_SIZE, 0.2, weight="bold", color=color)
    page.down(0.3)
    if record.missing is not None:
        page.text(MARGIN_IN, "No prescription stored", size=20, weight="bold", color=ALERT)
        page.down(0.5)
        page.lines(MARGIN_IN, record.missing, FONT_SIZE + 2, 0.27)
        page.down(0.15)
        page.lines(
            MARGIN_IN,
            "This page is not a prescription. Page 2 shows the session as the dashboard draws it.",
            FONT_SIZE + 1,
            0.22,
            color=GREY,
        )
        page.down(0.28)
    else:
        _draw_eyes(page, record.eyes)
        page.down(0.1)
    _draw_clinician(page, record)
    _labelled(page, "Starting refraction", record.start)
    _labelled(page, "Software", record.software, step_in=0.22, size=FONT_SIZE)


def _draw_clinician(page: _Page, record: PrescriptionRecord) -> None:
    """The clinician's section: the notes typed during the session, the lenses set differently from
    the ones asked and the answers undone (:meth:`PrescriptionRecord.clinician_lines`); nothing when
    there are none."""
    rows = record.clinician_lines()
    if not rows:
        return
    page.rule(-0.2, color="0.8")
    page.down(0.1)
    page.text(MARGIN_IN, "Clinician's notes", size=FONT_SIZE + 1, weight="bold")
    page.down(0.26)
    for label, text in rows:
        _labelled(page, label, text, step_in=0.2, size=FONT_SIZE)
    page.down(0.12)


def _draw_eyes(page: _Page, eyes: tuple[EyeRecord, ...]) -> None:
    """The large prescription line of each eye (or, for an eye short of the target confidence, "No
    prescription: not enough answers" — a fixed design's "Estimate, not a prescription" — in red and
    its lens small as a provisional estimate), the interval table (one column per eye, a withheld
    eye's in grey under "provisional" or "estimate"), acuity,
    trials, then each eye's stop reason and confidence in words."""
    heading = eyes_heading(eyes)
    label_room = VALUE_X_IN - MARGIN_IN - GUTTER_IN
    page.text(MARGIN_IN, heading, size=FONT_SIZE + 3, weight="bold")
    page.down(0.58 if len(eyes) == 1 else 0.48)
    big = 28 if len(eyes) == 1 else 24
    for eye in eyes:
        page.text(MARGIN_IN, eye.eye, size=FONT_SIZE + 2, color=GREY, va="center", room_in=label_room)
        if eye.prescribed:
            page.text(VALUE_X_IN, eye.prescription, size=big, weight="bold", family=MONO, va="center")
            page.down(0.56 if len(eyes) == 1 else 0.46)
            continue
        assert eye.withheld is not None  # not prescribed: withheld says why
        page.text(VALUE_X_IN, eye.withheld_heading, size=FONT_SIZE + 6, weight="bold", color=ALERT, va="center")
        page.down(0.22)
        page.lines(VALUE_X_IN, f"({eye.withheld})", FONT_SIZE, 0.17, color=ALERT)  # a long reason on its own lines
        page.text(VALUE_X_IN, eye.provisional, size=FONT_SIZE - 1, color=GREY)
        page.down(0.32)
    page.down(0.0 if eyes[-1].prescribed else 0.07)  # clear of the small provisional line
    page.rule(-0.2, color="0.8")
    page.down(0.1)
    columns = [VALUE_X_IN + k * EYE_COLUMN_IN for k in range(len(eyes))]
    # each eye's room: to the next eye's column, the last to the right margin
    rooms = [b - a - GUTTER_IN for a, b in itertools.pairwise(columns)] + [page.right_in - columns[-1]]
    offset_in, interval_size = (INTERVAL_OFFSET_IN, FONT_SIZE - 0.5) if len(eyes) == 1 else (0.75, FONT_SIZE - 1)
    withheld = any(not eye.prescribed for eye in eyes)
    if len(eyes) > 1 or withheld:
        for x, room, eye in zip(columns, rooms, eyes):
            name = eye.eye if len(eyes) > 1 else ""
            if eye.prescribed:
                page.text(x, name, size=FONT_SIZE, weight="bold", room_in=room)
            else:
                short = name.split()[0] + ": " if name else ""
                label = "estimate" if eye.fixed_design else "provisional"
                page.text(x, f"{short}{label}, not for prescribing", size=FONT_SIZE - 1, color=ALERT, room_in=room)
        page.down(0.22)
    for x, room in zip(columns, rooms):
        page.text(x, "value", size=FONT_SIZE - 1, color=GREY, room_in=offset_in - GUTTER_IN)
        page.text(x + offset_in, "95 % credible interval", size=FONT_SIZE - 1, color=GREY, room_in=room - offset_in)
    page.down(0.24)
    ink = ["black" if eye.prescribed else GREY for eye in eyes]
    for k, (label, _, _) in enumerate(eyes[0].rows):
        page.text(MARGIN_IN, label, size=FONT_SIZE, color=GREY, room_in=label_room)
        for x, room, eye, color in zip(columns, rooms, eyes, ink):
            _, value, interval = eye.rows[k]
            page.text(x, value, size=FONT_SIZE + 0.5, family=MONO, color=color, room_in=offset_in - GUTTER_IN)
            page.text(x + offset_in, interval, size=interval_size, family=MONO, color=color, room_in=room - offset_in)
        page.down(0.25 if len(eyes) == 1 else 0.23)
    page.down(0.1)
    _draw_acuity(page, eyes, columns, rooms, ink)
    page.text(MARGIN_IN, "Trials", size=FONT_SIZE, color=GREY, room_in=label_room)
    for x, room, eye in zip(columns, rooms, eyes):
        page.text(x, eye.trials, size=FONT_SIZE + 1, room_in=room)
    page.down(0.32)
    for name, field in (("Stopped", "stop_reason"), ("Confidence", "confidence")):
        for eye in eyes:
            label = name if len(eyes) == 1 else f"{name} ({eye.eye.split()[0]})"
            weight = "bold" if field == "confidence" else "normal"
            page.text(MARGIN_IN, label, size=FONT_SIZE, color=GREY, room_in=label_room)
            page.lines(VALUE_X_IN, getattr(eye, field), FONT_SIZE + 1, 0.23 if len(eyes) == 1 else 0.21, weight=weight)
            page.down(0.06 if len(eyes) == 1 else 0.03)


def _draw_acuity(page: _Page, eyes, columns, rooms, ink) -> None:
    """The predicted acuity row: each eye's logMAR, Snellen and the small line that qualifies it
    ("not tried", or what the eye read through the lens), broken to its column; the row is as tall
    as its tallest column."""
    page.text(MARGIN_IN, "Predicted acuity", size=FONT_SIZE, color=GREY, room_in=VALUE_X_IN - MARGIN_IN - GUTTER_IN)
    top_in, bottoms = page.y_in, []
    for x, room, eye, color in zip(columns, rooms, eyes, ink):
        page.y_in = top_in
        if eye.no_acuity:  # no value: why, and where to measure it
            page.text(x, eye.acuity, size=FONT_SIZE + 1, color=color, room_in=room)
            page.down(0.25)
            page.lines(x, eye.no_acuity, FONT_SIZE - 1, 0.17, room, NOTE_SHRINK, color=color)
            bottoms.append(page.y_in)
            continue
        page.text(x, eye.acuity, size=FONT_SIZE + 3, weight="bold", family=MONO, color=color, room_in=room)
        page.down(0.3)
        page.text(x, f"Snellen {eye.snellen}", size=FONT_SIZE + 1, color=color, room_in=room)
        page.down(0.25)
        note = eye.not_tried_short or eye.read_through_short  # under the acuity it qualifies
        if note:
            page.lines(x, note, FONT_SIZE - 1, 0.17, room, NOTE_SHRINK, color=ALERT if eye.acuity_unsure else color)
        bottoms.append(page.y_in)
    page.y_in = max(bottoms)
    page.down(0.07 if len(eyes) == 1 else 0.05)


def _draw_not_a_prescription(page: _Page, fixed_design: bool = False, simulated: bool = False) -> None:
    """In place of the signature block, on a page with no eye to prescribe: that it is not a
    prescription (``fixed_design``: the session ran its protocol's fixed number of trials;
    ``simulated``: the simulated observer answered it)."""
    page.y_in = page.height_in - NOT_A_PRESCRIPTION_FROM_BOTTOM_IN
    page.rule(0.0)
    page.down(0.25)
    if simulated:
        for line in (
            "This page is not a prescription: a simulated patient answered the session (its protocol's",
            "observer), so there is nothing to sign. Page 2 shows the session as the dashboard draws it.",
        ):
            page.text(MARGIN_IN, line, size=FONT_SIZE, color=ALERT)
            page.down(0.2)
        return
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
    page.y_in = page.height_in - SIGNATURE_FROM_BOTTOM_IN
    page.rule(0.0)
    page.down(0.55)
    right = page.right_in
    for label, (low, high) in (
        ("Clinician", (MARGIN_IN, MARGIN_IN + 2.6)),
        ("Signature", (MARGIN_IN + 2.9, MARGIN_IN + 5.2)),
        ("Date", (MARGIN_IN + 5.5, right)),
    ):
        page.rule(0.0, x_in=(low, high), color="0.2")
        page.y_in += 0.06
        page.text(low, label, size=FONT_SIZE - 1, color=GREY)
        page.y_in -= 0.06
    page.down(0.4)  # the footnote's last line a quarter inch clear of the bottom edge (printers' margins)
    for line in (
        "Intervals: 95 % credible intervals of the best lens (posterior draws of the session's model). Predicted",
        f"acuity: the model's letter-acuity threshold through this lens. Lenses in 0.25 D and 1° steps.  Page 1 of {n_pages}",
    ):
        page.text(MARGIN_IN, line, size=FONT_SIZE - 2, color="0.45")
        page.down(0.17)
