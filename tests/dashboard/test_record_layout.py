"""Page 1 of the printed record fits its A4 page, whatever it has to say: measured by matplotlib's
renderer, every text lies inside the page's margins, no two texts overlap, no rule runs through a
text, and the block at the foot (the signature line, or "This page is not a prescription") is whole.

The longest realistic page 1: both eyes of a session resumed past its protocol's budget (each
"Stopped" row "trial budget reached (124, extended from the protocol's 100 on resuming)"), long
confidence sentences, a wide axis interval, each eye's acuity qualified by a small note (what it
read through the lens, or "not tried"), a session stopped before its end with its database named,
answers by a simulated patient — prescribed, not prescribed, one of each, a fixed design's estimate.
"""

from __future__ import annotations

import itertools
import types
from dataclasses import replace

import pytest
from matplotlib.lines import Line2D

from lensopt.dashboard.prescription_text import build_record
from lensopt.dashboard.record_page import A4_PORTRAIT_IN, MARGIN_IN, draw_record_page
from lensopt.refraction.shown import ReadThrough
from lensopt.store import ResultRecord, SessionEvent

#: The lowest a text may reach (inches from the bottom edge of the page).
BOTTOM_IN = 0.25

STOP = {"confidence": 0.95, "min_trials": 20, "max_trials": 100, "check_letters": 5}

INTERVALS = {
    "sphere_d": [-10.75, -8.5],
    "cylinder_d": [-3.25, -0.25],
    "axis_deg": [128.4, 191.2],  # through 180
    "m_d": [-11.75, -9.63],
    "j0_d": [-0.18, +1.84],
    "j45_d": [-1.66, +0.2],
}


def _result(eye: str, confidence: float) -> ResultRecord:
    return ResultRecord("-10.25 / -1.75 x 167", -10.25, -1.75, 167.0, 0.22, confidence, 124, INTERVALS, 1.9e9, eye=eye)


def longest_record(confidences: tuple[float, float], fixed_design: bool = False):
    """Page 1's words for a resumed OU session of 124 letters per eye with ``confidences`` (OD, OS)."""
    stop = {} if fixed_design else {"stop": STOP}
    info = types.SimpleNamespace(
        session_id=1234,
        participant="P001-clinic-north",
        kind="letters",
        status="aborted",
        created_at=1.9e9,
        software_version="0.0.9",
        protocol={"protocol": {"name": "clinical-prescription", "observer": "simulated"}, **stop},
        optimizer_settings={
            "search": "prescription",
            "rule": "bracket-ald",
            "start": "-10.00 / -0.50 x 180",
            "m_half_width_d": 2.0,
            "j_half_width_d": 1.0,
            **stop,
        },
        seed=809578351,
        eye="OU",
        n_trials=248,
        n_answers=248,  # none undone
        result=None,
        results=(_result("OD", confidences[0]), _result("OS", confidences[1])),
        # started and resumed twice, each time by other software: the longest software line
        events=tuple(
            SessionEvent(event, 1.9e9 + k, 40 * k, {"software": {"lensopt": "0.0.9", "git_commit": commit}})
            for k, (event, commit) in enumerate(
                (("started", "a" * 40), ("resumed", "b" * 40 + "+dirty"), ("resumed", "c" * 40 + "+dirty"))
            )
        ),
    )
    record = build_record(info, printed_at=1.9e9, db_path="/srv/clinic/refraction/sessions-2026.db")
    od, os_ = record.eyes
    od = replace(od, read_through=ReadThrough(letters=12, right=11, smallest_logmar=-0.25, largest_logmar=0.34))
    os_ = replace(os_, untried_d=0.71)
    return replace(record, eyes=(od, os_))


VARIANTS = {
    "neither prescribed": longest_record((0.49, 0.86)),
    "OD prescribed": longest_record((0.97, 0.86)),
    "both prescribed": longest_record((0.97, 0.99)),
    "fixed design": longest_record((0.62, 0.41), fixed_design=True),
}


def _boxes(fig):
    """Each non-empty text of ``fig`` and its extent as drawn (pixels)."""
    fig.draw_without_rendering()
    return [(t.get_text(), t.get_window_extent()) for t in fig.texts if t.get_text().strip()]


def _overlap(a, b, tolerance_px: float = 0.5) -> bool:
    return min(a.x1, b.x1) - max(a.x0, b.x0) > tolerance_px and min(a.y1, b.y1) - max(a.y0, b.y0) > tolerance_px


@pytest.mark.parametrize("name", list(VARIANTS))
def test_the_longest_page_one_fits_its_page_without_overlaps(name):
    record = VARIANTS[name]
    assert "extended from the protocol's 100 on resuming" in record.eyes[0].stop_reason or record.eyes[0].fixed_design
    assert record.unfinished is not None and record.eyes[0].read_through_short and record.eyes[1].not_tried_short
    fig = draw_record_page(record, 3)
    boxes = _boxes(fig)
    dpi = fig.dpi
    width_px, height_px = A4_PORTRAIT_IN[0] * dpi, A4_PORTRAIT_IN[1] * dpi
    outside = [
        text
        for text, box in boxes
        if box.x0 < MARGIN_IN * dpi - 1
        or box.x1 > width_px - MARGIN_IN * dpi + 1
        or box.y0 < BOTTOM_IN * dpi
        or box.y1 > height_px
    ]
    assert outside == []
    overlapping = [(a, b) for (a, box_a), (b, box_b) in itertools.combinations(boxes, 2) if _overlap(box_a, box_b)]
    assert overlapping == []
    rules = [line for line in fig.lines if isinstance(line, Line2D)]
    crossed = []
    for line in rules:
        (x0, x1), (y, _) = line.get_xdata(), line.get_ydata()
        y_px, left_px, right_px = y * height_px, x0 * width_px, x1 * width_px
        crossed += [
            text for text, box in boxes if box.y0 + 0.5 < y_px < box.y1 - 0.5 and box.x0 < right_px and box.x1 > left_px
        ]
    assert crossed == []
    drawn = [text for text, _ in boxes]
    joined = " ".join(drawn)
    for eye in record.eyes:  # nothing left out: a long text is broken between words, whole and in order
        assert eye.stop_reason in joined and eye.confidence in joined
        assert (eye.read_through_short or eye.not_tried_short) in joined
    if record.signable:  # the foot is whole, at the foot
        assert "Signature" in drawn and any(text.endswith("Page 1 of 3") for text in drawn)
    else:
        assert any(text.startswith("This page is not a prescription") for text in drawn)
        assert any("Page 2 shows the session as the dashboard draws it." in text for text in drawn)


def test_a_record_without_a_prescription_fits_its_page():
    record = VARIANTS["neither prescribed"]
    missing = replace(
        record,
        eyes=(),
        missing="No prescription is stored: session 1234 was interrupted after 248 trials (its program was closed "
        "or crashed before the end). Continue it to store the prescription: lensopt run --resume 1234 --db "
        "/srv/clinic/refraction/sessions-2026.db.",
    )
    fig = draw_record_page(missing)
    boxes = _boxes(fig)
    dpi = fig.dpi
    assert all(
        MARGIN_IN * dpi - 1 <= box.x0 and box.x1 <= (A4_PORTRAIT_IN[0] - MARGIN_IN) * dpi + 1 and box.y0 >= 0
        for _, box in boxes
    ), boxes
    assert not [(a, b) for (a, box_a), (b, box_b) in itertools.combinations(boxes, 2) if _overlap(box_a, box_b)]
