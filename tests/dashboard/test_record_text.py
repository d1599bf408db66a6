"""The printed record's page 1 as text (``lensopt sessions SESSION_ID``): every word the page draws,
in its order, one labelled line each."""

from __future__ import annotations

from lensopt.dashboard.prescription_text import NO_ACUITY, EyeRecord, PrescriptionRecord, no_acuity_note
from lensopt.dashboard.record_text import LABEL_WIDTH, eyes_heading, record_lines
from lensopt.store.records import LETTERS_KIND
from lensopt.store.verdict import NO_AXIS_REASON

ROWS = (("Sphere", "-1.25 D", "-1.50 to -1.00 D"), ("Cylinder", "-0.75 D", "-1.00 to -0.50 D"))


def _eye(name: str, **changes) -> EyeRecord:
    fields = dict(
        eye=name,
        prescription="-1.25 / -0.75 x 170",
        rows=ROWS,
        acuity="-0.02 logMAR",
        snellen="≈ 6/6 · ≈ 20/20",
        trials="81 letters",
        stop_reason="stopping rule: confidence 0.95 ≥ 0.95 after 81 trials",
        confidence="95 % sure this lens gives acuity within 0.025 logMAR of the best lens",
    )
    return EyeRecord(**{**fields, **changes})


def _record(*eyes: EyeRecord, **changes) -> PrescriptionRecord:
    fields = dict(
        session_id=7,
        title="Refraction result",
        session=(("Patient / participant", "P001"), ("Session", "7 · letters · finished")),
        eyes=eyes,
        start="OD -1.00 / -0.50 x 180, OS -1.50 / -0.25 x 010",
        software="lensopt 0.2.0 (session recorded, result computed and shown)",
        notes=("OD trial 8: patient squints",),
        n_undone=1,
    )
    return PrescriptionRecord(**{**fields, **changes})


def test_every_word_of_page_one_is_a_line_of_the_text_in_the_pages_order():
    prescribed = _eye("OD (right eye)")
    withheld = _eye(
        "OS (left eye)",
        withheld="confidence 0.11 < 0.95 after 8 letters",
        acuity=NO_ACUITY,
        snellen="",
        no_acuity=no_acuity_note(LETTERS_KIND),
    )
    record = _record(prescribed, withheld, unfinished="Session not finished: stopped by the clinician")
    lines = record_lines(record)
    text = "\n".join(lines)
    words = [record.title, record.method, record.unfinished, *(v for _, v in record.session)]
    for eye in record.eyes:
        words += [w for w in eye.texts() if w != eye.acuity] + [eye.stop_reason, eye.confidence]
    words += [t for _, t in record.clinician_lines()] + [record.start, record.software]
    for word in words:
        assert word in text, word
    # in the page's order: the session, OD's lens, OD's rows, OS's withheld lens, the start
    order = [text.index(w) for w in ("P001", prescribed.prescription, "-1.50 to -1.00 D", withheld.withheld_text)]
    assert order == sorted(order) and text.index(withheld.withheld_text) < text.index(record.start)
    # the predicted acuity: OD's with its Snellen line, OS's none (why, and where to measure it)
    acuity = [line for line in lines if line.startswith("  Predicted acuity")]
    assert acuity == [
        f"  {'Predicted acuity':<{LABEL_WIDTH - 2}}-0.02 logMAR · Snellen ≈ 6/6 · ≈ 20/20",
        f"  {'Predicted acuity':<{LABEL_WIDTH - 2}}{NO_ACUITY}",
    ]
    assert text.count("Snellen") == 1
    # every value and its interval on the row's line, under one header per eye
    assert text.count("95 % credible interval") == 2
    assert f"  {'Sphere':<{LABEL_WIDTH - 2}}-1.25 D  -1.50 to -1.00 D" in lines


def test_a_simulated_sessions_title_says_it_is_not_a_prescription_and_a_missing_one_says_why():
    banner = "SIMULATED PATIENT — not a prescription"
    missing = "No prescription was stored: the session was stopped after 3 trials"
    lines = record_lines(_record(banner=banner, missing=missing, title="Refraction record: no prescription"))
    assert lines[0] == f"Refraction record: no prescription — {banner}"
    assert "No prescription stored" in lines and missing in lines and "95 % credible interval" not in lines


def test_the_heading_names_a_prescription_only_when_an_eye_is_prescribed():
    prescribed, short = _eye("OD (right eye)"), _eye("OS (left eye)", withheld="confidence 0.11 < 0.95")
    assert eyes_heading((prescribed, short)) == "Prescription (minus cylinder)"
    assert eyes_heading((short,)) == "Result (minus cylinder)"
    assert eyes_heading((_eye("", withheld=NO_AXIS_REASON),)) == "Result (sphere and signed cylinder)"
