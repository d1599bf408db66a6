"""The printable prescription record: its words against the stored result, the PDF's pages, its text
and its mode, and a clear page for a session without a stored prescription."""

from __future__ import annotations

import math
import os
import re
import shutil
import subprocess
import types
from dataclasses import asdict, replace

import pytest
from dashboard_records import answered_record

from lensopt.dashboard import prescription_record
from lensopt.dashboard.prescription_record import write_prescription_record
from lensopt.dashboard.prescription_text import (
    NO_ACUITY,
    NO_EYE,
    build_record,
    confidence_statement,
    interval_text,
    no_acuity_note,
    stop_reason,
)
from lensopt.dashboard.record_page import draw_record_page
from lensopt.observer import SimulatedPatient
from lensopt.refraction.acuity_text import snellen_text
from lensopt.refraction.letters import RefractionOptimizer
from lensopt.refraction.prescription_letters import PrescriptionOptimizer
from lensopt.stopping import confidence_text
from lensopt.store import ResultRecord, SessionStore
from lensopt.store.claim import claim_session
from lensopt.store.records import LETTERS_KIND

N_TRIALS = 12


def result_of(opt) -> ResultRecord:
    """The optimizer's prescription as a stored result, as ``lensopt run`` stores it."""
    rx = opt.prescription()
    finite = lambda v: float(v) if v is not None and math.isfinite(v) else None  # noqa: E731
    return ResultRecord(
        prescription=rx.text,
        sphere_d=rx.lens.sphere_d,
        cylinder_d=rx.lens.cylinder_d,
        axis_deg=rx.lens.axis_deg,
        predicted_acuity_logmar=finite(rx.predicted_acuity_logmar),
        confidence=finite(rx.confidence),
        n_trials=rx.trials,
        intervals={k: [float(v) for v in pair] for k, pair in rx.intervals.items()},
    )


@pytest.fixture(scope="module")
def sessions_db(tmp_path_factory):
    """A full-prescription session with its stored result (finished: 12 letters, confidence ~0.1,
    short of the 0.95 target), the same search stored as if its model had been sure and a person
    had answered (confident, 0.97), the same search still running with its result stored (as the OD of an OU session is while
    OS is searched), the same search stopped without one (aborted), and a two-parameter session;
    (path, {name: session id})."""
    path = tmp_path_factory.mktemp("prescription-record") / "s.db"
    ids = {}
    with SessionStore(path) as store:
        for name, n, status in (
            ("finished", N_TRIALS, "finished"),
            ("confident", N_TRIALS, "finished"),
            ("running", N_TRIALS, "running"),
            ("aborted", 4, "aborted"),
        ):
            opt = PrescriptionOptimizer(start="-1.00 / -0.50 x 180", seed=3)
            patient = SimulatedPatient(-1.25, -0.75, slope=14.0, axis_deg=170.0, seed=3)
            protocol = {
                # the confident one stored as a person's answers: a record to sign
                "protocol": {
                    "name": "clinical-prescription",
                    "observer": "keyboard" if name == "confident" else "simulated",
                },
                "stop": {"confidence": 0.95, "min_trials": 20, "max_trials": 80},
            }
            sid = ids[name] = store.create_session("RX1", protocol, {}, opt.settings_dict(), 3)
            for i in range(1, n + 1):
                trial = opt.ask()
                correct = bool(patient.respond(trial.letter_logmar, trial.sphere_d, trial.cylinder_d, trial.axis_deg))
                opt.tell(trial, correct)
                store.append_trial(sid, answered_record(i, trial, correct))
            if name == "confident":
                store.set_result(sid, replace(result_of(opt), confidence=0.97))
            elif status != "aborted":
                store.set_result(sid, result_of(opt))
            store.set_status(sid, status)
        opt = RefractionOptimizer(rule="random", seed=3)
        patient = SimulatedPatient(-0.5, 1.0, slope=5.0, seed=3)
        sid = ids["two-parameter"] = store.create_session("P03", {}, {}, opt.settings_dict(), 3)
        for i in range(1, 9):
            trial = opt.ask()
            correct = bool(patient.respond(trial.letter_logmar, trial.sphere_d, trial.cylinder_d))
            opt.tell(trial, correct)
            store.append_trial(sid, answered_record(i, trial, correct))
        store.set_status(sid, "finished")
    return path, ids


def page_count(pdf_bytes: bytes) -> int:
    """Pages of a PDF (matplotlib writes each page object uncompressed: ``/Type /Page``)."""
    return len(re.findall(rb"/Type\s*/Page(?![a-zA-Z])", pdf_bytes))


def pdf_text(path) -> str | None:
    """The PDF's text by ``pdftotext`` (poppler-utils), or None where it is not installed."""
    tool = shutil.which("pdftotext")
    if tool is None:
        return None
    return subprocess.run([tool, "-layout", str(path), "-"], capture_output=True, text=True, check=True).stdout


# --------------------------------------------------------------------------- words


def test_the_axis_interval_passing_180_is_written_through_180():
    assert interval_text("axis_deg", 160.0, 185.0) == "160 to 005 through 180"
    assert interval_text("axis_deg", 160.4, 175.6) == "160 to 176"
    assert interval_text("sphere_d", -1.5, -0.91) == "-1.50 to -0.91 D"


def test_a_cylinder_interval_reaching_above_zero_is_said_to_be_signed_along_the_axis():
    """A two-parameter search's cylinder is signed along its axis: "-3.10 to +0.90 D" under "Result
    (minus cylinder)" read as a plus cylinder in a minus-cylinder prescription."""
    assert interval_text("cylinder_d", -3.1, 0.9) == "-3.10 to +0.90 D (signed, along the axis)"
    assert interval_text("cylinder_d", -1.5, 0.004) == "-1.50 to +0.00 D"  # written as zero: nothing to say
    assert interval_text("cylinder_d", -1.5, -0.25) == "-1.50 to -0.25 D"


def test_a_power_vector_part_the_axis_fixes_is_said_so_not_given_as_an_interval():
    """A search along 180 has J45 = −(C/2) sin 360° = 0 whatever its cylinder: its interval
    [0, 0] was printed "+0.00 to +0.00 D", as if measured; J0 = C/2 varies and keeps its interval."""
    assert interval_text("j45_d", 0.0, 1e-17) == "fixed by the axis"
    assert interval_text("j0_d", -1e-17, 0.0) == "fixed by the axis"  # along 45: J0 = −(C/2) cos 90° = 0
    assert interval_text("j0_d", 0.25, 0.75) == "+0.25 to +0.75 D"
    assert interval_text("m_d", 0.0, 0.0) == "+0.00 to +0.00 D"  # M is never fixed by an axis


def test_the_confidence_is_said_in_words_above_and_below_the_protocols_level():
    assert confidence_statement(0.96, 0.95).startswith("96 % sure this lens gives acuity within 0.025 logMAR")
    assert "0.25 D" in confidence_statement(0.96, 0.95)
    assert confidence_statement(0.62, 0.95) == "confidence 0.62 — below the protocol's 0.95; more trials recommended"
    fixed = confidence_statement(0.62, None)  # no [stop]: a study's fixed number of trials
    assert (
        fixed
        == "confidence 0.62 — below lensopt's default 0.95 after the protocol's fixed number of trials (no [stop])"
    )
    assert "more trials recommended" in confidence_statement(None, 0.95)


def test_the_stop_reason_comes_from_the_stopping_rule_the_budget_or_the_status():
    settings = {"stop": {"confidence": 0.95, "min_trials": 20, "max_trials": 80}}
    info = types.SimpleNamespace(optimizer_settings=settings, protocol={}, status="finished", kind=LETTERS_KIND)
    result = types.SimpleNamespace(n_trials=63, confidence=0.96)
    assert stop_reason(info, result) == "stopping rule: confidence 0.96 ≥ 0.95 after 63 trials"
    checked = types.SimpleNamespace(
        **{**vars(info), "optimizer_settings": {"stop": {**settings["stop"], "check_letters": 5}}}
    )
    assert stop_reason(checked, result, 5) == (
        "stopping rule: confidence 0.96 ≥ 0.95 after 63 trials, the lens read through 5 letters"
    )
    # confident, the check unfinished (a session ended another way): not the stopping rule's stop
    assert stop_reason(checked, result, 2) == "ended after 63 trials, before the stopping rule was met"
    assert stop_reason(info, types.SimpleNamespace(n_trials=80, confidence=0.7)) == "trial budget reached (80 of 80)"
    # resumed with --trials 88: the stored budget (80) was extended, not exceeded
    assert stop_reason(info, types.SimpleNamespace(n_trials=88, confidence=0.7)) == (
        "trial budget reached (88, extended from the protocol's 80 on resuming)"
    )
    info.status = "aborted"
    assert "stopped by the clinician after 30 trials" in stop_reason(
        info, types.SimpleNamespace(n_trials=30, confidence=0.5)
    )
    no_rule = types.SimpleNamespace(
        optimizer_settings={}, protocol={"optimizer": {"trials": 40}}, status="finished", kind=LETTERS_KIND
    )
    assert stop_reason(no_rule, types.SimpleNamespace(n_trials=40, confidence=0.5)) == (
        "trial budget reached (40 of 40); no stopping rule"
    )
    assert stop_reason(info, types.SimpleNamespace(n_trials=3, confidence=0.1, stop_reason="confident")) == "confident"


def test_the_stop_reason_reads_the_budget_a_resume_gave_the_session():
    """Against the budget the session last ran with (a resume's --trials, kept by the store): its
    answers reaching it are the budget reached, lowered or extended from the protocol's."""
    from lensopt.store import SessionEvent

    def resumed(*given):
        events = [SessionEvent("started", 0.0, 0)]
        events += [
            SessionEvent("resumed", 1.0 + i, 5, {"trials": g or 0, "trials_given": g}) for i, g in enumerate(given)
        ]
        return tuple(events)

    stop = {"confidence": 0.95, "min_trials": 20, "max_trials": 40}
    protocol = {"optimizer": {"trials": 40}, "stop": stop}
    info = types.SimpleNamespace(
        optimizer_settings={"stop": stop}, protocol=protocol, status="finished", events=(), kind=LETTERS_KIND
    )

    def said(n, *given, **changes):
        at = types.SimpleNamespace(**{**vars(info), "events": resumed(*given), **changes})
        return stop_reason(at, types.SimpleNamespace(n_trials=n, confidence=0.7))

    assert said(30) == "ended after 30 trials, before the stopping rule was met"
    assert (
        said(30, 30)
        == said(30, 30, None)
        == "trial budget reached (30 of 30, lowered from the protocol's 40 on resuming)"
    )
    assert said(55, 55) == "trial budget reached (55 of 55, extended from the protocol's 40 on resuming)"
    assert said(40, 30) == "trial budget reached (40, more than the 30 its last resume was given)"
    assert said(40) == "trial budget reached (40 of 40)"
    # the stopping rule's minimum follows a budget below it (20 -> 12): a confident stop at 12 is the rule's
    assert stop_reason(
        types.SimpleNamespace(**{**vars(info), "events": resumed(12)}),
        types.SimpleNamespace(n_trials=12, confidence=0.97),
    ) == ("stopping rule: confidence 0.97 ≥ 0.95 after 12 trials")
    no_rule = {"optimizer_settings": {}, "protocol": {"optimizer": {"trials": 40}}}
    assert said(25, 25, **no_rule) == (
        "trial budget reached (25 of 25, lowered from the protocol's 40 on resuming); no stopping rule"
    )
    assert said(25, **{**no_rule, "status": "aborted"}) == "stopped by the clinician after 25 trials (no stopping rule)"


def test_the_record_holds_the_stored_prescription_of_the_session(sessions_db):
    path, ids = sessions_db
    with SessionStore(path, readonly=True) as store:
        info = store.session(ids["finished"])
    result = info.result
    record = build_record(info, printed_at=1.9e9)
    assert record.missing is None and len(record.eyes) == 1
    (eye,) = record.eyes
    assert eye.eye == NO_EYE and eye.prescription == result.prescription
    rows = {label: (value, interval) for label, value, interval in eye.rows}
    assert rows["Sphere"][0] == f"{result.sphere_d:+.2f} D"
    lo, hi = result.intervals["cylinder_d"]
    assert rows["Cylinder"][1] == f"{lo:+.2f} to {hi:+.2f} D"
    assert set(rows) == {"Sphere", "Cylinder", "Axis", "M (spherical eq.)", "J0", "J45"}
    assert eye.trials == f"{N_TRIALS} letters"
    assert eye.acuity == f"{result.predicted_acuity_logmar:+.2f} logMAR"
    assert eye.snellen == " · ".join(snellen_text(result.predicted_acuity_logmar))
    assert eye.confidence == confidence_statement(result.confidence, 0.95)  # the protocol's [stop]
    texts = record.texts()
    assert f"Session {ids['finished']}" in texts and "RX1" in texts
    assert any("SIMULATED" in t for t in texts)
    assert record.start.startswith("-1.00 / -0.50 x 180")


def _drawn(fig) -> list[tuple[str, float, str]]:
    """Every text on a matplotlib figure: (text, font size, colour)."""
    from matplotlib.colors import to_hex

    return [(t.get_text(), t.get_fontsize(), to_hex(t.get_color())) for t in fig.texts]


def test_no_text_of_page_one_runs_past_the_right_margin(sessions_db):
    """The protocol row of a simulated session ("clinical-prescription · rule bracket-ald · seed 5 ·
    answers by a SIMULATED patient") ran off the page: a long value goes on two lines, whole."""
    from lensopt.dashboard.record_page import A4_PORTRAIT_IN, MARGIN_IN, draw_record_page

    path, ids = sessions_db
    with SessionStore(path, readonly=True) as store:
        info = store.session(ids["finished"])
    protocol = {**info.protocol, "protocol": {"name": "clinical-prescription", "observer": "simulated"}}
    record = build_record(replace(info, protocol=protocol), printed_at=1.9e9)
    fig = draw_record_page(record)
    fig.draw_without_rendering()
    right_px = (A4_PORTRAIT_IN[0] - MARGIN_IN) * fig.dpi + 1.0
    beyond = [t.get_text() for t in fig.texts if t.get_window_extent().x1 > right_px]
    assert beyond == []
    assert "answers by a SIMULATED patient" in " ".join(text for text, _, _ in _drawn(fig))  # whole, in order


def test_the_record_names_the_rule_of_the_protocol_snapshot_when_the_settings_name_none(sessions_db):
    """A session whose optimizer settings name no rule (a first-layout one may keep it in its
    protocol alone): ``lensopt sessions`` and the export named the protocol's rule, the record none.
    One reading serves all three (:func:`lensopt.store.tidy.session_rule`); the dashboard's header too."""
    from lensopt.dashboard.replay import rule_label

    path, ids = sessions_db
    with SessionStore(path, readonly=True) as store:
        info = store.session(ids["finished"])
    settings = {key: value for key, value in info.optimizer_settings.items() if key != "rule"}
    protocol = {**info.protocol, "optimizer": {**info.protocol.get("optimizer", {}), "rule": "ts-ald"}}
    record = build_record(replace(info, optimizer_settings=settings, protocol=protocol), printed_at=1.9e9)
    assert " · rule ts-ald · seed " in dict(record.session)["Protocol"]
    assert rule_label(settings, "ts-ald") == "ts-ald" and rule_label(settings) == "?"


def test_an_eye_short_of_the_target_confidence_is_no_prescription_on_the_record(sessions_db):
    """12 letters at confidence ~0.1 against the default 0.95: the closing console said "not enough
    answers to prescribe", so the record does not print the lens as the prescription: it says why in
    red, shows the lens small as a provisional estimate, has no signature line and is titled so."""
    from lensopt.dashboard.prescription_text import NOT_A_PRESCRIPTION_TITLE
    from lensopt.dashboard.record_page import draw_record_page

    path, ids = sessions_db
    with SessionStore(path, readonly=True) as store:
        info = store.session(ids["finished"])
    result = info.result
    assert result.confidence < 0.95
    record = build_record(info, printed_at=1.9e9)
    (eye,) = record.eyes
    why = f"confidence {confidence_text(result.confidence)} < 0.95 after {N_TRIALS} letters"
    assert not eye.prescribed and eye.withheld == why
    assert eye.withheld_text == f"No prescription: not enough answers ({why})"
    assert eye.provisional == f"provisional estimate {result.prescription}, not for prescribing"
    assert record.title == NOT_A_PRESCRIPTION_TITLE and not record.signable and record.unfinished is None
    assert result.prescription not in record.texts() and eye.provisional in record.texts()
    drawn = _drawn(draw_record_page(record))
    assert ("No prescription: not enough answers", 16, "#b2182b") in drawn and (f"({why})", 10, "#b2182b") in drawn
    assert [size for text, size, _ in drawn if result.prescription in text] == [9]  # the provisional line only
    assert not any("Signature" in text for text, _, _ in drawn)
    assert any(text.startswith("This page is not a prescription") for text, _, _ in drawn)


def test_the_record_and_the_closing_console_draw_the_line_at_the_same_confidence():
    """One rule (lensopt.stopping.enough_to_prescribe): for confidences around the protocol's [stop]
    confidence (and lensopt's 0.95 without one) the console's end point is a prescription exactly
    when the record prints the lens as one."""
    from lensopt.dashboard.prescription_text import eye_record
    from lensopt.experiment.end_point import end_point

    for stop in (None, 0.6):
        target = 0.95 if stop is None else stop
        protocol = types.SimpleNamespace(
            stop=None if stop is None else types.SimpleNamespace(confidence=stop),
            lens=types.SimpleNamespace(cylinder="minus"),
            feedback_mode="letters",
        )
        info = types.SimpleNamespace(
            kind="letters",
            status="finished",
            protocol={} if stop is None else {"stop": {"confidence": stop, "min_trials": 5, "max_trials": 40}},
            optimizer_settings={},
        )
        for confidence in (target - 0.01, target - 1e-9, target, target + 1e-9, 0.999):
            result = ResultRecord("-1.25 / -0.75 x 170", -1.25, -0.75, 170.0, 0.0, confidence, 40, {}, eye="OD")
            optimizer = types.SimpleNamespace(n_trials=40, confidence=lambda c=confidence: c, history=())
            console = end_point(optimizer, protocol, "OD", [result], [])
            assert console.confident == eye_record(info, result).prescribed == (confidence >= target)


@pytest.mark.parametrize(
    "sphere_d, cylinder_d, m_text",
    [(-1.25, -0.75, "-1.63 D"), (2.0, -0.75, "+1.63 D"), (0.0, -0.25, "-0.13 D")],  # M -1.625, +1.625, -0.125
)
def test_the_spherical_equivalent_is_rounded_half_away_from_zero(sphere_d, cylinder_d, m_text):
    """M = S + C/2 of a prescription in 0.25 D steps ends in 0.125 or 0.375 D: the record wrote
    -1.625 as -1.62 (half to even), now -1.63, as its interval's ends."""
    from lensopt.dashboard.prescription_text import eye_record

    m_low, m_high = sphere_d + cylinder_d / 2 - 0.25, sphere_d + cylinder_d / 2 + 0.25
    result = ResultRecord("-", sphere_d, cylinder_d, 170.0, 0.0, 0.97, 40, {"m_d": [m_low, m_high]}, eye="OD")
    info = _session_info(protocol={"stop": {"confidence": 0.95, "min_trials": 5, "max_trials": 40}})
    rows = {label: (value, interval) for label, value, interval in eye_record(info, result).rows}
    assert rows["M (spherical eq.)"][0] == m_text
    assert rows["M (spherical eq.)"][1] == interval_text("m_d", m_low, m_high)
    assert interval_text("m_d", -1.875, -1.375) == "-1.88 to -1.38 D"


def _session_info(**fields):
    """A stored letter session as ``build_record`` reads it, finished: ``fields`` set what a test needs
    (``protocol``, ``optimizer_settings``, ``n_trials``, ``n_undone``, ``results``...); ``n_answers``
    the trials but those undone, as :class:`lensopt.store.SessionInfo` has it."""
    info = {
        "session_id": 6,
        "participant": "S01",
        "kind": "letters",
        "status": "finished",
        "created_at": 1.9e9,
        "software_version": "0.1.0",
        "protocol": {},
        "optimizer_settings": {},
        "n_trials": 0,
        "n_undone": 0,
        "result": None,
        "results": (),
        "events": (),
        **fields,
    }
    return types.SimpleNamespace(**info, n_answers=info["n_trials"] - info["n_undone"])


def test_one_eye_prescribed_and_the_other_short_of_the_target_prints_one_prescription_to_sign():
    from lensopt.dashboard.record_page import draw_record_page

    def result(eye, text, confidence):
        return ResultRecord(text, -1.25, -0.5, 170.0, 0.0, confidence, 30, {"sphere_d": [-1.5, -1.0]}, eye=eye)

    info = _session_info(
        participant="P8",
        protocol={"session": {"eye": "OU"}, "stop": {"confidence": 0.9, "min_trials": 20, "max_trials": 30}},
        optimizer_settings={"search": "prescription", "start": "plano", "m_half_width_d": 2.0, "j_half_width_d": 1.0},
        n_trials=60,
        results=(result("OD", "-1.25 / -0.50 x 170", 0.93), result("OS", "-0.75 / -0.50 x 010", 0.41)),
    )
    record = build_record(info, printed_at=1.9e9)
    od, os_ = record.eyes
    assert od.prescribed and os_.withheld == "confidence 0.41 < 0.90 after 30 letters"
    assert record.signable and record.title == "Refraction result"
    drawn = _drawn(draw_record_page(record))
    assert ("-1.25 / -0.50 x 170", 24, "#000000") in drawn  # OD: the prescription, large
    assert [size for text, size, _ in drawn if "-0.75 / -0.50 x 010" in text] == [9]  # OS: provisional, small
    assert ("OS: provisional, not for prescribing", 9, "#b2182b") in drawn
    assert any(text == "Signature" for text, _, _ in drawn)


def test_a_cylinder_without_an_axis_is_no_prescription_a_sphere_alone_is():
    """A two-parameter letter session without an axis (no --axis, no [lens] axis_deg) stores sphere and
    a signed cylinder: confident or not, a cylinder cannot be dispensed without its axis, so the
    record withholds it, says why, and offers nothing to sign, as ``lensopt sessions`` does; a
    result whose cylinder rounds to zero is a sphere, prescribed."""
    from lensopt.cli.handlers.sessions import _prescriptions
    from lensopt.dashboard.prescription_text import NO_AXIS_HEADING
    from lensopt.dashboard.record_page import A4_PORTRAIT_IN, MARGIN_IN, draw_record_page

    stop = {"confidence": 0.95, "min_trials": 20, "max_trials": 80}

    def session(cylinder_d, confidence=0.97):
        text = f"S -1.25 D  C {cylinder_d:+.2f} D"
        result = ResultRecord(text, -1.25, cylinder_d, None, 0.0, confidence, 40, {"sphere_d": [-1.5, -1.0]}, eye="OD")
        return _session_info(protocol={"session": {"eye": "OD"}, "stop": stop}, n_trials=40, results=(result,))

    record = build_record(session(-0.75), printed_at=1.9e9)
    (eye,) = record.eyes
    assert not eye.prescribed and not record.signable and record.title != "Refraction result"
    assert eye.withheld_text.startswith(
        f"{NO_AXIS_HEADING} (the cylinder's axis was not given: start a new session with --axis"
    )
    fig = draw_record_page(record)
    drawn = [text for text, _, _ in _drawn(fig)]
    assert "Signature" not in drawn and not any(text.startswith("Prescription (minus cylinder)") for text in drawn)
    assert "Result (sphere and signed cylinder)" in drawn  # no convention without an axis
    fig.draw_without_rendering()
    right_px = (A4_PORTRAIT_IN[0] - MARGIN_IN) * fig.dpi + 1.0
    reason = [t for t in fig.texts if "--axis" in t.get_text() or "clinical-prescription --start" in t.get_text()]
    assert len(reason) > 1  # broken between words: it ran past the page's edge
    assert all(t.get_window_extent().x1 <= right_px for t in reason)
    assert _prescriptions(session(-0.75)) == "OD S -1.25 D  C -0.75 D (estimate: a cylinder without an axis)"
    # short of its confidence too: the sessions list says so (it named the axis alone)
    assert _prescriptions(session(-0.75, confidence=0.62)) == (
        "OD S -1.25 D  C -0.75 D (estimate: a cylinder without an axis, confidence 0.62 < 0.95)"
    )
    sphere = build_record(session(0.0), printed_at=1.9e9)
    assert sphere.eyes[0].prescribed and sphere.signable
    assert _prescriptions(session(0.0)) == "OD S -1.25 D  C +0.00 D"


def test_a_study_without_a_stopping_rule_prints_its_estimate_not_a_call_for_more_trials():
    """A protocol without [stop] (a study's fixed number of trials): the record says "Estimate, not a
    prescription", as the console and the log do, with no call for more trials; nothing to sign."""
    from lensopt.dashboard.record_page import draw_record_page

    result = ResultRecord("-1.25 / -0.50 x 170", -1.25, -0.5, 170.0, 0.0, 0.62, 260, {"sphere_d": [-1.5, -1.0]})
    info = _session_info(protocol={"protocol": {"name": "research-26afc"}}, n_trials=260, results=(result,))
    record = build_record(info, printed_at=1.9e9)
    (eye,) = record.eyes
    assert eye.fixed_design and not eye.prescribed and not record.signable
    assert eye.withheld_text == "Estimate, not a prescription (confidence 0.62 < 0.95 after 260 letters)"
    assert eye.provisional == "estimate -1.25 / -0.50 x 170, not for prescribing"
    assert eye.confidence == (  # the trials as the closing console names them
        "confidence 0.62 — below lensopt's default 0.95 after the protocol's 260 trials (no [stop]: a fixed number)"
    )
    assert eye.stop_reason == "ended after 260 trials (no stopping rule)"
    drawn = [text for text, _, _ in _drawn(draw_record_page(record))]
    assert "Estimate, not a prescription" in drawn and "provisional, not for prescribing" not in drawn
    assert not any("not enough answers" in text or "more trials" in text for text in drawn)
    assert "the protocol's 260 trials (no [stop]: a fixed number)" in re.sub(r"\s+", " ", " ".join(drawn))


def test_a_study_resumed_with_more_trials_names_that_budget_in_its_confidence_line():
    """A study's session without [stop] (its protocol's 6 trials) resumed with --trials 9: the
    record's confidence line said "after the protocol's fixed number of trials"; it names the budget
    the session ran with, as the closing console does, and a later resume without --trials keeps it."""
    from lensopt.dashboard.record_page import draw_record_page
    from lensopt.store import SessionEvent

    result = ResultRecord("-1.25 / -0.50 x 170", -1.25, -0.5, 170.0, 0.0, 0.62, 9, {"sphere_d": [-1.5, -1.0]})
    started = SessionEvent("started", 0.0, 0)
    resumed = SessionEvent("resumed", 1.0, 6, {"trials": 9, "trials_given": 9})
    kept = SessionEvent("resumed", 2.0, 8, {"trials": 9, "trials_given": None})
    protocol = {"protocol": {"name": "research-26afc"}, "optimizer": {"trials": 6}}
    for events in ((started, resumed), (started, resumed, kept)):
        info = _session_info(protocol=protocol, n_trials=9, results=(result,), events=events)
        record = build_record(info, printed_at=1.9e9)
        (eye,) = record.eyes
        assert eye.fixed_design and eye.confidence == (
            "confidence 0.62 — below lensopt's default 0.95 after 9 trials, the budget of --trials 9 on "
            "resuming (the protocol's 6; no [stop]: a fixed number)"
        )
        assert "fixed number of trials" not in eye.confidence
        drawn = " ".join(text for text, _, _ in _drawn(draw_record_page(record)))
        assert "the budget of --trials 9 on resuming" in re.sub(r"\s+", " ", drawn)
    # never resumed with --trials: the protocol's own number
    info = _session_info(protocol=protocol, n_trials=6, results=(replace(result, n_trials=6),), events=(started,))
    (eye,) = build_record(info, printed_at=1.9e9).eyes
    assert eye.confidence.endswith("after the protocol's 6 trials (no [stop]: a fixed number)")


def test_a_study_ended_before_its_budget_says_how_many_of_its_trials_it_ran():
    """A study's session without [stop] the clinician ended after 7 answers: its confidence line said
    "after 7 trials, the budget of --trials 9" (or, never resumed, "after the protocol's fixed number
    of trials"), as though the budget had been run; it names the 7 of the 9 (or of the protocol's 6)."""
    from lensopt.store import SessionEvent

    result = ResultRecord("-1.25 / -0.50 x 170", -1.25, -0.5, 170.0, 0.0, 0.62, 7, {"sphere_d": [-1.5, -1.0]})
    started = SessionEvent("started", 0.0, 0)
    resumed = SessionEvent("resumed", 1.0, 4, {"trials": 9, "trials_given": 9})
    protocol = {"protocol": {"name": "research-26afc"}, "optimizer": {"trials": 6}}
    info = _session_info(protocol=protocol, n_trials=7, results=(result,), events=(started, resumed))
    (eye,) = build_record(info, printed_at=1.9e9).eyes
    assert eye.confidence == (
        "confidence 0.62 — below lensopt's default 0.95 after 7 of the 9 trials of --trials 9 on resuming "
        "(the protocol's 6; no [stop]: a fixed number; ended early)"
    )
    never_resumed = replace(result, n_trials=4)
    info = _session_info(protocol=protocol, n_trials=4, results=(never_resumed,), events=(started,))
    (eye,) = build_record(info, printed_at=1.9e9).eyes
    assert eye.confidence.endswith("after 4 of the protocol's 6 trials (no [stop]: a fixed number; ended early)")


def test_a_session_not_finished_is_marked_so_on_its_record(sessions_db, tmp_path):
    path, ids = sessions_db
    with SessionStore(path, readonly=True) as store:
        info = store.session(ids["running"])
        finished = build_record(store.session(ids["finished"]))
        write_prescription_record(store, ids["running"], tmp_path / "running.pdf")
    running = build_record(info, status="running")  # a program runs it (holds its claim)
    assert running.unfinished == f"Session not finished: still running ({N_TRIALS} trials so far); results may change."
    assert running.unfinished in running.texts() and finished.unfinished is None
    interrupted = build_record(info, status="interrupted")  # stored as running, run by none
    assert interrupted.unfinished == (
        f"Session not finished: interrupted after {N_TRIALS} trials, its program closed or crashed "
        f"(lensopt run --resume {ids['running']} continues it)."
    )
    assert ("Session", f"{ids['running']} · letters · interrupted") in interrupted.session
    aborted = build_record(replace(info, status="aborted"))
    assert aborted.unfinished.startswith(f"Session not finished: stopped after {N_TRIALS} trials")
    assert f"lensopt run --resume {ids['running']}" in aborted.unfinished
    text = pdf_text(tmp_path / "running.pdf")
    if text is not None:
        assert "Session not finished: interrupted" in text and "No prescription: not enough answers" in text
        assert "Signature" not in text and "provisional estimate" in text


def test_the_printed_record_of_a_running_session_says_interrupted_unless_a_program_runs_it(
    sessions_db, tmp_path, monkeypatch
):
    """The record's status is the one ``lensopt sessions`` shows (lensopt.store.claim.session_status):
    the session here is stored as running, and only a program holding its claim makes it so."""
    drawn = []

    def keep(record, n_pages):
        drawn.append(record)
        return draw_record_page(record, n_pages)

    monkeypatch.setattr(prescription_record, "draw_record_page", keep)
    path, ids = sessions_db
    sid = ids["running"]
    with SessionStore(path, readonly=True) as store:
        write_prescription_record(store, sid, tmp_path / "killed.pdf")
        with claim_session(path, sid):  # as lensopt run holds the session it runs
            write_prescription_record(store, sid, tmp_path / "running.pdf")
    killed, running = drawn
    assert dict(killed.session)["Session"].endswith("· interrupted")
    assert killed.unfinished is not None and f"interrupted after {N_TRIALS} trials" in killed.unfinished
    assert f"lensopt run --resume {sid} --db {path} continues it" in killed.unfinished  # not the default database
    assert dict(running.session)["Session"].endswith("· running")
    assert running.unfinished is not None and "still running" in running.unfinished
    assert "interrupted" not in running.unfinished


def test_a_session_without_a_stored_prescription_says_why(sessions_db):
    from lensopt.dashboard.prescription_text import NOT_A_PRESCRIPTION_TITLE

    path, ids = sessions_db
    with SessionStore(path, readonly=True) as store:
        two = build_record(store.session(ids["two-parameter"]))
        aborted_info = store.session(ids["aborted"])
        aborted = build_record(aborted_info)
    assert two.eyes == () and "two-parameter" in two.missing and "--start" in two.missing
    assert f"lensopt run --resume {ids['two-parameter']} stores it" in two.missing  # finished before results
    assert aborted.eyes == () and f"lensopt run --resume {ids['aborted']}" in aborted.missing
    # none stored: the page is titled as no prescription, with nothing to sign
    for record in (two, aborted):
        assert record.title == NOT_A_PRESCRIPTION_TITLE and not record.signable
    # a session stored as running: still running while a program runs it, else interrupted
    left = replace(aborted_info, status="running")
    still = build_record(left, status="running").missing
    assert still.startswith(f"No prescription is stored yet: session {ids['aborted']} is still running (4 trials")
    assert "interrupted" not in still and "print again then" in still
    killed = build_record(left, status="interrupted").missing
    assert f"session {ids['aborted']} was interrupted after 4 trials" in killed
    assert f"Continue it to store the prescription: lensopt run --resume {ids['aborted']}." in killed


# --------------------------------------------------------------------------- the PDF


def test_the_pdf_of_a_full_prescription_has_three_pages_mode_0600_and_the_prescription_in_its_text(
    sessions_db, tmp_path
):
    path, ids = sessions_db
    out = tmp_path / "rx.pdf"
    out.write_bytes(b"an older file, readable by all")
    os.chmod(out, 0o644)
    previous = os.umask(0o022)
    try:
        with SessionStore(path, readonly=True) as store:
            assert write_prescription_record(store, ids["confident"], out) == out
            result = store.session(ids["confident"]).result
    finally:
        os.umask(previous)
    assert out.stat().st_mode & 0o777 == 0o600
    assert [p.name for p in tmp_path.iterdir()] == ["rx.pdf"]  # no temporary file left
    data = out.read_bytes()
    assert data.startswith(b"%PDF") and page_count(data) == 3
    text = pdf_text(out)
    if text is None:
        pytest.skip("pdftotext (poppler-utils) is not installed: the words are checked by build_record's test")
    assert result.prescription in text and f"Session {ids['confident']}" in text
    assert "95 % credible interval" in text and "Signature" in text and "History" in text
    assert "Page 1 of 3" in text and "page 2 of 3" in text and "each eye's model — page 3 of 3" in text
    assert "Astigmatism plane" in text and "Defocus curve" in text
    assert "No prescription" not in text and "provisional" not in text and "not finished" not in text


@pytest.mark.parametrize("name, pages", [("two-parameter", 2), ("aborted", 3)])
def test_the_pdf_of_a_session_without_a_prescription_has_the_clear_page(sessions_db, tmp_path, name, pages):
    """Without a stored result: the page saying why, the curves, and (a full prescription with
    answers, aborted) its model of the eye."""
    path, ids = sessions_db
    out = tmp_path / f"{name}.pdf"
    with SessionStore(path, readonly=True) as store:
        write_prescription_record(store, ids[name], out)
    assert page_count(out.read_bytes()) == pages
    text = pdf_text(out)
    if text is not None:
        assert "No prescription stored" in text and "Signature" not in text  # nothing to sign


def test_a_duel_session_gets_the_page_without_a_prescription_and_the_dashboards_panels(store_simulated_duels, tmp_path):
    path = tmp_path / "duels.db"
    sid, _ = store_simulated_duels(path, 6)
    out = tmp_path / "duel.pdf"
    with SessionStore(path, readonly=True) as store:
        record = build_record(store.session(sid))
        write_prescription_record(store, sid, out)
    assert record.eyes == () and "duel session of sphere and cylinder, which reports no prescription" in record.missing
    assert "clinical-prescription-duel --start RX" in record.missing
    assert page_count(out.read_bytes()) == 2
    # one whose program died after its 6 duels: the record says so, with the command that continues
    # it, as a letter session's does (it said only that such a search reports no prescription)
    with SessionStore(path, readonly=True) as store:
        info = store.session(sid)
    assert "not finished" not in build_record(replace(info, status="finished"), status="finished").missing
    missing = build_record(info, status="interrupted", db_path=path).missing
    assert missing.endswith(
        f"Session not finished: interrupted after 6 duels, its program closed or crashed "
        f"(lensopt run --resume {sid} --db {path} continues it)."
    ), missing
    text = pdf_text(out)
    if text is not None:
        assert "No prescription stored" in text and "lensopt duel refraction report" in text


def test_the_lens_path_draws_an_undone_answer_off_the_line(sessions_db):
    from matplotlib.figure import Figure

    from lensopt.dashboard.prescription_record import _draw_lens_path

    path, ids = sessions_db
    with SessionStore(path, readonly=True) as store:
        info, records = store.session(ids["finished"]), store.trials(ids["finished"])
    marked = [types.SimpleNamespace(**{**asdict(r), "void": r.index in (3, 4)}) for r in records]  # schema 6 marks
    fig = Figure()
    _draw_lens_path(fig, marked, [info.result])
    (ax,) = fig.axes
    labels = [text.get_text() for text in ax.get_legend().get_texts()]
    assert "answer undone (void, 2)" in labels
    m_line = next(line for line in ax.get_lines() if line.get_label() == "M of the lens tested")
    # numbered as the console numbers them, by the answers kept: trials 1 to 10 of 12 rows, two undone
    assert list(m_line.get_xdata()) == list(range(1, len(records) - 1))


def test_the_lens_path_draws_one_line_per_eye(sessions_db):
    from matplotlib.figure import Figure

    from lensopt.dashboard.prescription_record import _draw_lens_path

    path, ids = sessions_db
    with SessionStore(path, readonly=True) as store:
        info, records = store.session(ids["finished"]), store.trials(ids["finished"])
    half = len(records) // 2
    eyed = [types.SimpleNamespace(**{**asdict(r), "eye": "OD" if r.index <= half else "OS"}) for r in records]
    fig = Figure()
    _draw_lens_path(fig, eyed, [info.result])
    (ax,) = fig.axes
    m_color = ax.get_lines()[0].get_color()
    m_lines = [line for line in ax.get_lines() if line.get_color() == m_color and line.get_linestyle() == "-"]
    assert [list(line.get_xdata()) for line in m_lines] == [
        list(range(1, half + 1)),
        list(range(half + 1, N_TRIALS + 1)),
    ]
    assert {"OD", "OS"} <= {text.get_text() for text in ax.texts}


def test_the_stores_results_per_eye_print_od_then_os(tmp_path):
    settings = PrescriptionOptimizer(start="-1.00 / -0.50 x 180", seed=1).settings_dict()
    result = ResultRecord("-1.25 / -0.75 x 170", -1.25, -0.75, 170.0, 0.02, 0.97, 40, {"axis_deg": [160.0, 185.0]})
    with SessionStore(tmp_path / "eyes.db") as store:
        sid = store.create_session("P2", {"session": {"eye": "OU"}}, {}, settings, 1)
        store.set_result(sid, replace(result, eye="OS", prescription="-0.50 DS", cylinder_d=0.0, axis_deg=None))
        store.set_result(sid, replace(result, eye="OD"))
        record = build_record(store.session(sid))
    assert [(e.eye, e.prescription) for e in record.eyes] == [
        ("OD (right eye)", "-1.25 / -0.75 x 170"),
        ("OS (left eye)", "-0.50 DS"),
    ]
    assert dict(record.session)["Eye tested"] == "OU (both eyes)"
    od_rows, os_rows = ({label: value for label, value, _ in e.rows} for e in record.eyes)
    assert od_rows["Axis"] == "170" and os_rows["Axis"] == "-"
    assert record.eyes[0].rows[2][2] == "160 to 005 through 180"


def test_a_full_prescription_by_duels_is_recorded_as_duels_from_its_start(tmp_path):
    """A duel session of sphere, cylinder and axis prints its stored prescription as one made by
    duels: their count, the start and the search box, and no confidence (comparisons have none)."""
    from lensopt.refraction.prescription_duels import PrescriptionDuelOptimizer
    from lensopt.store import DUEL_KIND, DuelTrialRecord

    opt = PrescriptionDuelOptimizer(start="-1.00 / -0.50 x 180", seed=4)
    patient = SimulatedPatient(-1.25, -0.75, slope=14.0, axis_deg=170.0, seed=4)
    path, n = tmp_path / "s.db", 8
    with SessionStore(path) as store:
        protocol = {"protocol": {"name": "clinical-prescription-duel"}, "session": {"eye": "OD"}}
        sid = store.create_session("RXD", protocol, {}, opt.settings_dict(), 4, kind=DUEL_KIND)
        for i in range(1, n + 1):
            duel = opt.ask()
            (s1, c1, a1), (s2, c2, a2) = lenses = [
                (x.sphere_d, x.cylinder_d, x.axis_deg) for x in (duel.first_lens, duel.second_lens)
            ]
            answer = patient.duel_answer(duel.letter_logmar, *lenses)
            opt.tell(duel, answer)
            record = DuelTrialRecord(i, s1, c1, s2, c2, duel.letter_logmar, "CDHKN", answer, 1.0, 1e9 + i, 1e9 + i + 1)
            store.append_duel_trial(sid, replace(record, first_axis_deg=a1, second_axis_deg=a2))
        store.set_result(sid, replace(result_of(opt), eye="OD"))
        store.set_status(sid, "finished")
        record = build_record(store.session(sid))
    (eye,) = record.eyes
    assert record.missing is None and eye.prescription == opt.prescription().text and eye.eye.startswith("OD")
    assert record.method.startswith("Subjective refraction from duels") and "letter" not in record.method
    assert eye.trials == f"{n} duels" and record.start.startswith("-1.00 / -0.50 x 180 (search box")
    assert dict(record.session)["Protocol"] == "clinical-prescription-duel · rule muc-ald · seed 4"  # reproducible
    assert eye.confidence.startswith("not computed for duels") and "more trials" not in eye.confidence
    assert eye.stop_reason == f"ended after {n} duels (no stopping rule)"  # by their name, as the trials row
    # no acuity scale: the acuity row says so and where to measure it, not "-" and "Snellen -"
    assert eye.acuity == NO_ACUITY and eye.snellen == "" and eye.no_acuity == no_acuity_note(DUEL_KIND)
    assert eye.no_acuity.startswith("duels say which lens is clearer") and "chart" in eye.no_acuity
    assert eye.no_acuity in eye.texts() and "" not in eye.texts()
    # from 8 duels, fewer than lensopt's accuracy was measured after (40): no prescription yet, nothing to sign
    assert not eye.prescribed and not record.signable and record.unfinished is None
    assert (
        eye.withheld_text
        == "No prescription: not enough answers (only 8 duels; lensopt's accuracy was measured after 40)"
    )
    assert eye.provisional == f"provisional estimate {opt.prescription().text}, not for prescribing"
    with SessionStore(path) as store:  # the same lens after 40 duels is the prescription, signed
        store.set_result(sid, replace(result_of(opt), eye="OD", n_trials=40))
        forty = build_record(store.session(sid))
    assert forty.eyes[0].prescribed and forty.signable and forty.eyes[0].prescription == opt.prescription().text
    drawn = [text for text, _, _ in _drawn(draw_record_page(forty))]
    assert NO_ACUITY in drawn and not any(text.startswith("Snellen") for text in drawn)


def test_a_letter_result_without_a_predicted_acuity_says_it_lies_beyond_the_letters_shown(sessions_db):
    """A letter session's model may place the acuity beyond the letter sizes it showed (the result
    stores none): the record says so and where to measure it, with no Snellen line."""
    path, ids = sessions_db
    with SessionStore(path, readonly=True) as store:
        info = store.session(ids["finished"])
    beyond = replace(info.result, predicted_acuity_logmar=None)
    info = replace(info, result=beyond, results=(beyond,))
    (eye,) = build_record(info, printed_at=1.9e9).eyes
    assert eye.acuity == NO_ACUITY and eye.snellen == "" and eye.no_acuity.startswith("beyond the letter sizes shown")
    drawn = [text for text, _, _ in _drawn(draw_record_page(build_record(info, printed_at=1.9e9)))]
    assert eye.no_acuity in drawn and not any(text.startswith("Snellen") for text in drawn)


def test_the_models_page_draws_each_eyes_plane_and_curve_in_its_own_row(sessions_db):
    """Page 3 of a session of both eyes (the stored session read as OD's first half, OS's second):
    two rows, OD above OS, each the astigmatism plane and the defocus curve of that eye's view."""
    from lensopt.dashboard.model import session_model
    from lensopt.dashboard.prescription_record import draw_models_page

    path, ids = sessions_db
    with SessionStore(path, readonly=True) as store:
        info, records = store.session(ids["finished"]), store.trials(ids["finished"])
    info = replace(info, protocol={**info.protocol, "session": {"eye": "OU"}})
    half = len(records) // 2
    followed = session_model(info)
    followed.update(info, [replace(r, eye="OD" if r.index <= half else "OS") for r in records])
    views = followed.eye_views()
    fig = draw_models_page(info, views, followed.snapshot().letter_bounds_logmar)
    fig.draw_without_rendering()  # the constrained layout places the rows
    titles = [ax.get_title(loc="left").split("\n")[0] for ax in fig.get_axes() if ax.get_title(loc="left")]
    panels = [panel for row in fig.subfigs for panel in row.subfigs]  # each row: the plane, the curve
    # the plane's title is its panel's (over the square plane, narrower than the panel, it ran off it)
    titles += [panel.get_suptitle().split("\n")[0] for panel in panels if panel.get_suptitle()]
    assert [t.split(" — ")[-1] for t in titles if t.startswith("Astigmatism plane")] == ["OD", "OS"]
    assert [t.split(" — ")[-1] for t in titles if t.startswith("Defocus curve")] == ["OD", "OS"]
    planes = [ax for ax in fig.get_axes() if ax.get_xlabel() == "J0 (D)"]
    assert (
        len(planes) == 2 and planes[0].get_window_extent().y0 > planes[1].get_window_extent().y1
    )  # OD's row above OS's


@pytest.mark.parametrize("participant", ["P001", "Maria-Fernanda Rodríguez-Villanueva de la Cruz (DOB 1957-03-14)"])
def test_the_later_pages_titles_stay_inside_their_pages_whatever_the_participants_name(sessions_db, participant):
    """Pages 2 and 3 are titled with the session and its participant; a long name ran the title off
    the page's edge: it goes onto a second line, whole, and the panels stay below it."""
    from matplotlib.backends.backend_agg import FigureCanvasAgg

    from lensopt.dashboard.model import session_model
    from lensopt.dashboard.prescription_record import draw_curves_page, draw_models_page

    path, ids = sessions_db
    with SessionStore(path, readonly=True) as store:
        info = replace(store.session(ids["finished"]), participant=participant)
        followed = session_model(info)
        followed.update(info, store.trials(ids["finished"]))
        pages = {
            2: draw_curves_page(store, info, followed, "", 3),
            3: draw_models_page(info, followed.eye_views(), followed.snapshot().letter_bounds_logmar),
        }
    for page, fig in pages.items():
        renderer = FigureCanvasAgg(fig).get_renderer()
        fig.draw(renderer)
        title = fig._suptitle
        text = title.get_text()
        assert text.replace("\n", " ").startswith(f"Session {info.session_id} ({participant}):")
        assert text.endswith(f"— page {page} of 3")
        assert ("\n" in text) == (page == 2 and len(participant) > 20)  # A4 portrait: the long name's too wide
        box = title.get_window_extent(renderer)
        assert fig.bbox.x0 <= box.x0 and box.x1 <= fig.bbox.x1 and box.y1 <= fig.bbox.y1 + 0.5, (page, box)
        axes = _every_axes(fig)  # every panel below the title
        assert axes and all(ax.get_tightbbox(renderer).y1 <= box.y0 + 0.5 for ax in axes), page


def _every_axes(fig) -> list:
    """The axes of ``fig`` and of its subfigures, however nested."""
    return [*fig.get_axes(), *(ax for sub in fig.subfigs for ax in _every_axes(sub))]


def test_the_lens_path_has_whole_trial_ticks(sessions_db):
    """Page 2's lens path counts trials: its ticks are whole trials (there were ticks at 2.5, 7.5)."""
    from matplotlib.figure import Figure

    from lensopt.dashboard.prescription_record import _draw_lens_path

    path, ids = sessions_db
    with SessionStore(path, readonly=True) as store:
        records, info = store.trials(ids["finished"]), store.session(ids["finished"])
    records = records + [replace(r, index=r.index + len(records)) for r in records[:-1]]  # 23 trials
    for results in ([], [info.result]):  # none stored yet (a killed session), or one
        fig = Figure(figsize=(8.27, 5.0))  # page 2's width
        _draw_lens_path(fig, records, results)
        fig.canvas.draw()  # the locator picks its ticks at drawing
        ticks = fig.axes[0].get_xticks()
        assert len(ticks) >= 3 and all(float(t).is_integer() for t in ticks), ticks


@pytest.mark.parametrize("n_trials", [10, 23, 30])
def test_the_lens_paths_ticks_stop_at_the_last_trial(sessions_db, n_trials):
    """The lens path's axis runs past the last trial to the prescriptions' columns: it ticked trials
    that never were (32 after 30 trials). Every tick is a whole trial from 1 to the last; without a
    prescription the axis ends after the last trial (it ended a trial before it, hiding it)."""
    from matplotlib.figure import Figure

    from lensopt.dashboard.prescription_record import _draw_lens_path

    path, ids = sessions_db
    with SessionStore(path, readonly=True) as store:
        stored, info = store.trials(ids["finished"]), store.session(ids["finished"])
    records = [replace(stored[k % len(stored)], index=k + 1) for k in range(n_trials)]
    for results in ([], [info.result], [replace(info.result, eye="OD"), replace(info.result, eye="OS")]):
        fig = Figure(figsize=(8.27, 5.0))  # page 2's width
        _draw_lens_path(fig, records, results)
        fig.canvas.draw()
        ax = fig.axes[0]
        low, high = ax.get_xlim()
        shown = [t for t in ax.get_xticks() if low <= t <= high]
        assert high >= n_trials + 0.5 and (high > n_trials + 1) == bool(results)  # the prescriptions' room
        assert len(shown) >= 3 and all(float(t).is_integer() and 1 <= t <= n_trials for t in shown), shown


def test_a_two_parameter_session_of_both_eyes_prints_each_eyes_curves(tmp_path):
    """OD then OS over (S, C): page 1, then OD's curves as they stood at its last answer, then OS's
    (only OS's model was printed: the right eye's lens map and curve were never on paper)."""
    path = tmp_path / "ou.db"
    with SessionStore(path) as store:
        settings = RefractionOptimizer(rule="random", seed=3).settings_dict()
        sid = store.create_session("P04", {"session": {"eye": "OU"}}, {}, settings, 3)
        index = 0
        for eye, (sphere_d, cylinder_d) in (("OD", (-0.5, 1.0)), ("OS", (1.0, -1.0))):
            opt = RefractionOptimizer(rule="random", seed=3 if eye == "OD" else 4)
            patient = SimulatedPatient(sphere_d, cylinder_d, slope=5.0, seed=3)
            for _ in range(8):
                index += 1
                trial = opt.ask()
                correct = bool(patient.respond(trial.letter_logmar, trial.sphere_d, trial.cylinder_d))
                opt.tell(trial, correct)
                store.append_trial(sid, answered_record(index, trial, correct, eye))
        store.set_status(sid, "finished")
        out = write_prescription_record(store, sid, tmp_path / "ou.pdf")
    assert page_count(out.read_bytes()) == 3
    text = pdf_text(out)
    if text is not None:
        od, os_ = (
            text.find("Lens map: predicted acuity — OD (right eye)"),
            text.find("Lens map: predicted acuity — OS (left eye)"),
        )
        assert 0 < od < os_, (od, os_)  # OD's page before OS's
        # OD's page is its end, not a replay of the session, and leaves OS to OS's page (it said
        # "History (replay: first 8 trials)", "8 of 16 (replay)" and "OS no answer yet")
        od_page = text.split("\f")[1]
        assert "model of OD (right eye)" in od_page and "replay" not in od_page, od_page
        assert "no answer yet" not in od_page


def test_a_lens_no_trial_came_near_is_marked_not_tried_on_the_record_as_on_the_console():
    """The record says what the closing console says of a letter session's lens that the patient read
    through no lens within a phoropter step of (its acuity predicted, not measured): the nearest lens
    tried, by the eye's answered trials (an undone one does not count: its optimizer was not told it),
    their cylinder along the protocol's axis."""
    from lensopt.dashboard.prescription_text import build_record

    result = ResultRecord("-1.50 / -0.50 x 180", -1.5, -0.5, 180.0, -0.04, 0.96, 3, {}, eye="OD")
    info = _session_info(n_trials=3, result=result, results=(result,), protocol={"stop": {"confidence": 0.95}})

    def trial(sphere_d, cylinder_d, eye="OD", void=False, correct=True, letter_logmar=0.1):
        return types.SimpleNamespace(
            sphere_d=sphere_d,
            cylinder_d=cylinder_d,
            axis_deg=None,
            eye=eye,
            void=void,
            correct=correct,
            letter_logmar=letter_logmar,
        )

    # nearest: -1.0 / -0.5 on the same meridian, a residual of 0.5 D sphere: b² = ½(0.25 + 0.25)
    far = [trial(-1.0, -0.5), trial(-3.0, 0.0), trial(-1.5, -0.5, eye="OS"), trial(-1.5, -0.5, void=True)]
    eye = build_record(info, printed_at=2e9, trials=far).eyes[0]
    assert eye.untried_d == pytest.approx(0.5)
    assert eye.not_tried_short == "not tried; nearest tried 0.50 D away"
    assert eye.not_tried is not None and "check it on the chart" in eye.not_tried
    assert eye.read_through is None and eye.read_through_short is None
    near = build_record(info, printed_at=2e9, trials=[*far, trial(-1.5, -0.25)]).eyes[0]  # 0.18 D: tried
    assert near.untried_d is None and near.not_tried is None and near.not_tried_short is None
    # what the eye read through it instead: that trial (the OS one and the undone one do not count)
    assert near.read_through_short == "read 1 of 1 right through it, +0.10 logMAR"
    more = [*far, trial(-1.5, -0.25), trial(-1.75, -0.5, correct=False, letter_logmar=0.04)]  # 0.25 D: tried
    assert build_record(info, printed_at=2e9, trials=more).eyes[0].read_through_short == (
        "read 1 of 2 right through it, +0.04 to +0.10 logMAR"
    )
    assert near.read_through_short in build_record(info, printed_at=2e9, trials=more[:-1]).texts()
    duels = _session_info(kind="duel", n_trials=3, result=result, results=(result,))
    assert build_record(duels, printed_at=2e9, trials=far).eyes[0].not_tried is None  # no acuity predicted
    # at --axis 90 the lens S -2.00 C +0.50 tried along 090 is the stored -1.50 / -0.50 x 180
    at_90 = _session_info(n_trials=1, result=result, results=(result,), protocol={"lens": {"axis_deg": 90.0}})
    assert build_record(at_90, printed_at=2e9, trials=[trial(-2.0, 0.5)]).eyes[0].untried_d is None


def test_a_lens_read_only_with_letters_far_larger_than_predicted_is_to_be_checked_in_red_on_the_record():
    """Predicted -0.04 logMAR through the lens: a +0.30 letter read through it measured nothing (more
    than three lines larger), and the record says so in its alert colour, as it says a lens not tried;
    a +0.10 letter measured it (in the eye's ink)."""
    from lensopt.dashboard.prescription_text import build_record
    from lensopt.dashboard.record_page import ALERT, draw_record_page

    result = ResultRecord("-1.50 / -0.50 x 180", -1.5, -0.5, 180.0, -0.04, 0.96, 3, {}, eye="OD")
    info = _session_info(n_trials=2, result=result, results=(result,), protocol={"stop": {"confidence": 0.95}})

    def trial(letter_logmar):
        fields = dict(sphere_d=-1.5, cylinder_d=-0.5, axis_deg=180.0, eye="OD", void=False, correct=True)
        return types.SimpleNamespace(**fields, letter_logmar=letter_logmar)

    large = build_record(info, printed_at=2e9, trials=[trial(0.3), trial(0.5)])
    (eye,) = large.eyes
    assert eye.untried_d is None and not eye.read_through.measured
    note = "not measured: read through it only at +0.30 to +0.50 logMAR; check it on the chart"
    assert eye.read_through_short == note
    drawn = _drawn(draw_record_page(large))
    assert {colour for text, _, colour in drawn if "not measured" in text} == {ALERT}
    near = build_record(info, printed_at=2e9, trials=[trial(0.1), trial(0.5)])
    assert near.eyes[0].read_through_short == "read 2 of 2 right through it, +0.10 to +0.50 logMAR"
    colours = {colour for text, _, colour in _drawn(draw_record_page(near)) if "right through it" in text}
    assert colours and ALERT not in colours


def test_the_records_command_to_continue_names_its_database_even_the_default(monkeypatch, tmp_path):
    """A record is read away from the machine that ran the session: its "lensopt run --resume N"
    names the database with --db, as the closing console's continue command does — the default one
    ($LENSOPT_DB here) too, which another shell may not have (and would resume another session 6)."""
    from lensopt.dashboard.prescription_text import build_record

    default = tmp_path / "sessions.db"
    monkeypatch.setenv("LENSOPT_DB", str(default))
    result = ResultRecord("-1.50 / -0.50 x 180", -1.5, -0.5, 180.0, -0.04, 0.96, 3, {}, eye="OD")
    stopped = _session_info(status="aborted", n_trials=3, result=result, results=(result,))
    other = tmp_path / "clinic" / "s.db"
    assert build_record(stopped, 2e9, db_path=other).unfinished == (
        f"Session not finished: stopped after 3 trials (lensopt run --resume 6 --db {other} continues it)."
    )
    assert f"--resume 6 --db {default} continues it" in build_record(stopped, 2e9, db_path=default).unfinished
    empty = _session_info(status="aborted", n_trials=3)
    assert build_record(empty, 2e9, db_path=other).missing.endswith(f"lensopt run --resume 6 --db {other}.")


def test_a_session_of_one_trial_is_said_in_the_singular_on_the_record():
    """ "stopped after 1 trials": one answer is "1 trial" in every sentence of the record that counts
    the session's trials (missing, not finished, stopped), and one letter is "1 letter"."""
    from lensopt.dashboard.prescription_text import build_record

    result = ResultRecord("-1.50 / -0.50 x 180", -1.5, -0.5, 180.0, -0.04, 0.96, 1, {}, eye="OD")
    words = []
    for status in ("stopped", "interrupted", "running"):
        empty = _session_info(status="aborted", n_trials=1)
        stored = _session_info(status="aborted", n_trials=1, result=result, results=(result,))
        words += [build_record(empty, 2e9, status=status).missing, build_record(stored, 2e9, status=status).unfinished]
    (eye,) = build_record(_session_info(status="finished", n_trials=1, result=result, results=(result,)), 2e9).eyes
    words += [eye.trials, eye.stop_reason]
    assert all(re.search(r"\b1 (trial|letter)\b", text) for text in words), words
    assert not [text for text in words if re.search(r"\b1 (trials|letters)\b", text)]
    assert "session 6 was stopped after 1 trial without one" in words[0]
    assert eye.trials == "1 letter"
    rule = types.SimpleNamespace(
        optimizer_settings={"stop": {"confidence": 0.95, "min_trials": 1, "max_trials": 80}},
        protocol={},
        status="aborted",
        kind=LETTERS_KIND,
    )
    unsure = types.SimpleNamespace(stop_reason=None, n_trials=1, confidence=0.2)
    assert stop_reason(rule, unsure) == "stopped by the clinician after 1 trial, before the stopping rule was met"


def test_the_records_command_to_continue_names_the_database_by_its_absolute_path(monkeypatch, tmp_path):
    """Typed relative (``--db kbC.db``), the database is named on paper by its absolute path: the
    record is read elsewhere, the command run from another folder."""
    from lensopt.dashboard.prescription_text import build_record

    monkeypatch.setenv("LENSOPT_DB", str(tmp_path / "default" / "sessions.db"))
    (tmp_path / "clinic").mkdir()
    monkeypatch.chdir(tmp_path / "clinic")
    empty = _session_info(status="aborted", n_trials=3)
    missing = build_record(empty, 2e9, db_path="kbC.db").missing
    assert missing.endswith(f"lensopt run --resume 6 --db {tmp_path / 'clinic' / 'kbC.db'}.")
    assert "--db kbC.db" not in missing
    # the default database, typed relative, is named by its absolute path as well
    monkeypatch.setenv("LENSOPT_DB", "sessions.db")
    expected = f"--db {tmp_path / 'clinic' / 'sessions.db'}."
    assert build_record(empty, 2e9, db_path="sessions.db").missing.endswith(expected)


def _session_run_by(*softwares, version="0.1.0"):
    from lensopt.store import SessionEvent, SessionInfo

    events = tuple(
        SessionEvent("started" if i == 0 else "resumed", 1.7e9 + i, 3 * i, {"software": found})
        for i, found in enumerate(softwares)
    )
    return SessionInfo(1, "P", "letters", "finished", 1.7e9, 1.7e9, 1, version, {}, {}, {}, 3, events=events)


def test_the_record_names_the_software_of_the_start_and_of_each_resume_with_its_commit():
    from lensopt.dashboard.prescription_text import software_text

    here = {"lensopt": "0.1.0", "git_commit": "bca336b4b1ae6bc94e174393a624e2bb30ce5f15"}
    later = {"lensopt": "0.1.0", "git_commit": "0123456789abcdef0123456789abcdef01234567+dirty"}
    result = ResultRecord("-1.25 / -0.75 x 170", -1.25, -0.75, 170.0, 0.0, 0.97, 40, {}, software_version="0.1.0")
    same = software_text(_session_run_by(here, here), [result], printing="0.1.0 (git bca336b)")
    assert same == "lensopt 0.1.0 (git bca336b) (session recorded, result computed and printed)"
    mixed = software_text(_session_run_by(here, later), [result], printing="0.1.0 (git bca336b)")
    assert mixed == (
        "session recorded by lensopt 0.1.0 (git bca336b) then 0.1.0 (git 0123456, modified); "
        "result computed by lensopt 0.1.0; printed by lensopt 0.1.0 (git bca336b)"
    )
    # a session stored before its software was recorded: the version it stored
    old = software_text(_session_run_by(version="0.0.9"), [], printing="0.1.0")
    assert old == "session recorded by lensopt 0.0.9; printed by lensopt 0.1.0"
    # ... and resumed since by software that records itself: both named, the stored version first
    upgraded = _session_run_by(here, version="0.0.9")
    upgraded = replace(upgraded, events=tuple(replace(e, event="resumed") for e in upgraded.events))
    assert software_text(upgraded, [], printing="0.1.0 (git bca336b)") == (
        "session recorded by lensopt 0.0.9 then 0.1.0 (git bca336b); printed by lensopt 0.1.0 (git bca336b)"
    )


def test_the_record_names_each_eyes_start_when_each_eye_had_its_own():
    from lensopt.dashboard.prescription_text import start_text

    settings = {"search": "prescription", "start": "-2.25 / -0.75 x 180", "m_half_width_d": 2.0, "j_half_width_d": 1.0}
    info = types.SimpleNamespace(optimizer_settings=settings, protocol={})
    assert start_text(info) == "-2.25 / -0.75 x 180 (search box M ±2 D, J0 and J45 ±1 D)"
    both = {**settings, "eye_starts": {"OD": "-2.25 / -0.75 x 180", "OS": "-1.00 / -0.50 x 010"}}
    assert start_text(types.SimpleNamespace(optimizer_settings=both, protocol={})) == (
        "OD -2.25 / -0.75 x 180, OS -1.00 / -0.50 x 010 (search box M ±2 D, J0 and J45 ±1 D)"
    )
