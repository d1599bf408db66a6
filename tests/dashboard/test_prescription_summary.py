"""The dashboard's summary and curves of a full prescription say what the printed record says: the
predicted acuity, the 95 % intervals, what the eye read through the lens, the command that
continues a session stopped before its end; its best lens is labelled unrounded on both slices;
the eyes' names are set in the face of every other label."""

from __future__ import annotations

import re
from dataclasses import replace

import pytest
from dashboard_records import answered_record
from matplotlib.figure import Figure
from matplotlib.font_manager import findfont

from lensopt.dashboard.model import snapshot_from_store
from lensopt.dashboard.panels import draw_history, draw_lens_map, draw_psychometric, summary_rows
from lensopt.dashboard.prescription_record import _draw_lens_path
from lensopt.dashboard.prescription_text import build_record
from lensopt.dashboard.unfinished_text import CEILING_WHY, MORE_TRIALS_WHY
from lensopt.observer import SimulatedPatient
from lensopt.refraction.lens import power_vector_arrays
from lensopt.refraction.prescription_letters import PrescriptionOptimizer
from lensopt.refraction.trial import Trial
from lensopt.store import ContinueAdvice, ResultRecord, SessionStore

#: Letters of the search, then letters read through its lens as the clinician checks it.
N_SEARCH, N_CHECKS = 24, 3
#: A [stop] confidence the search reaches (~0.4), so that its lens is a prescription.
LOW_STOP = {"confidence": 0.2, "min_trials": 5, "max_trials": 80}


def _result_of(opt, eye=None) -> ResultRecord:
    """The optimizer's prescription as ``lensopt run`` stores it."""
    rx = opt.prescription()
    return ResultRecord(
        prescription=rx.text,
        sphere_d=rx.lens.sphere_d,
        cylinder_d=rx.lens.cylinder_d,
        axis_deg=rx.lens.axis_deg,
        predicted_acuity_logmar=float(rx.predicted_acuity_logmar),
        confidence=float(rx.confidence),
        n_trials=rx.trials,
        intervals={k: [float(v) for v in pair] for k, pair in rx.intervals.items()},
        eye=eye,
    )


def _search(store, sid, n_search, n_checks, eye=None, first=1) -> PrescriptionOptimizer:
    """``n_search`` letters of the search, then ``n_checks`` read through its lens (the record then
    says what was read through it); returns the optimizer told them."""
    opt = PrescriptionOptimizer(start="-1.00 / -0.50 x 180", seed=3)
    patient = SimulatedPatient(-1.25, -0.75, slope=14.0, axis_deg=170.0, seed=3)
    trials = [None] * n_search + ["check"] * n_checks
    for i, kind in enumerate(trials, start=first):
        if kind is None:
            trial = opt.ask()
        else:
            lens = opt.prescription().lens
            trial = Trial(lens.sphere_d, lens.cylinder_d, 0.1 * (i % 3), axis_deg=lens.axis_deg)
        correct = bool(patient.respond(trial.letter_logmar, trial.sphere_d, trial.cylinder_d, trial.axis_deg))
        opt.tell(trial, correct)
        store.append_trial(sid, answered_record(i, trial, correct, eye))
    return opt


@pytest.fixture(scope="module")
def summary_db(tmp_path_factory):
    """A finished full prescription (OD) with its stored result, confident enough for its [stop];
    the same search killed (stored as running, no program runs it) and stopped by the clinician
    (aborted) before any result; an OU session, OD's letters then OS's; (path, {name: id})."""
    path = tmp_path_factory.mktemp("prescription-summary") / "s.db"
    ids = {}
    protocol = {"protocol": {"name": "clinical-prescription"}, "stop": LOW_STOP, "session": {"eye": "OD"}}
    with SessionStore(path) as store:
        settings = PrescriptionOptimizer(start="-1.00 / -0.50 x 180", seed=3).settings_dict()
        sid = ids["finished"] = store.create_session("RX1", protocol, {}, settings, 3)
        opt = _search(store, sid, N_SEARCH, N_CHECKS, eye="OD")
        store.set_result(sid, _result_of(opt, "OD"))
        store.set_status(sid, "finished")
        for name, status in (("killed", "running"), ("stopped", "aborted")):
            sid = ids[name] = store.create_session("RX2", protocol, {}, settings, 3)
            _search(store, sid, 1, 0, eye="OD")
            store.set_status(sid, status)
        sid = ids["both"] = store.create_session("RX3", dict(protocol, session={"eye": "OU"}), {}, settings, 3)
        _search(store, sid, 6, 0, eye="OD")
        _search(store, sid, 6, 0, eye="OS", first=7)
        store.set_status(sid, "finished")
    return path, ids


def _cells(rows) -> list[str]:
    return [cell for row in rows for cell in row[1:]]


def test_the_summary_of_a_prescription_says_its_acuity_intervals_and_what_was_read_through_it_as_the_record(
    summary_db,
):
    """The dashboard rebuilds the eye's model from the stored letters; the record prints the stored
    result: the summary shows the same predicted acuity, Snellen line, 95 % intervals and letters
    read through the lens as the record's page 1 (the closing console's and the record's words)."""
    path, ids = summary_db
    with SessionStore(path, readonly=True) as store:
        sid = ids["finished"]
        info = store.session(sid)
        snap = snapshot_from_store(store, sid)
        record = build_record(info, trials=store.trials(sid), db_path=path)
    (eye,) = record.eyes
    assert eye.prescribed and eye.read_through is not None and eye.read_through.letters >= N_CHECKS
    rows = summary_rows(snap)
    cells = " | ".join(_cells(rows))
    acuity = next(row for row in rows if row[0] == "Predicted acuity")
    assert eye.acuity in acuity[1] and eye.snellen in acuity[1]  # "-0.02 logMAR", "≈ 6/6 · ≈ 20/20"
    assert acuity[2] == eye.read_through_short  # "read 2 of 3 right through it, ..."
    for label, _, interval in eye.rows:  # S, C, axis, M, J0, J45: each interval as the record writes it
        assert interval in cells, (label, interval)
    # the numbers themselves against the stored result (the dashboard's are its rebuilt model's)
    result = _stored_result(path, sid)
    assert float(acuity[1].split()[0]) == pytest.approx(result.predicted_acuity_logmar, abs=0.005)
    for name, key in (("S", "sphere_d"), ("C", "cylinder_d"), ("M", "m_d"), ("J0", "j0_d"), ("J45", "j45_d")):
        shown = re.search(rf"\b{name} ([-+]?\d+\.\d\d) to ([-+]?\d+\.\d\d) D", cells)
        assert shown is not None, name
        assert [float(v) for v in shown.groups()] == pytest.approx(result.intervals[key], abs=0.005), name


def _stored_result(path, sid) -> ResultRecord:
    with SessionStore(path, readonly=True) as store:
        info = store.session(sid)
    return info.results[0] if getattr(info, "results", None) else info.result


def test_an_eye_short_of_its_target_shows_no_acuity_nor_intervals(summary_db):
    """Below the target the lens is no prescription: as on the console, no details under it."""
    path, ids = summary_db
    with SessionStore(path, readonly=True) as store:
        snap = snapshot_from_store(store, ids["finished"])
    short = replace(snap, eyes=tuple(replace(e, target=0.999) for e in snap.eyes))
    labels = [row[0] for row in summary_rows(short)]
    assert "Predicted acuity" not in labels and "95% intervals" not in labels


@pytest.mark.parametrize(("name", "status"), [("killed", "interrupted"), ("stopped", "stopped")])
def test_a_session_stopped_before_its_end_shows_the_records_command_to_continue_it(summary_db, name, status):
    """An interrupted (killed) or stopped session: the summary names the command that continues it,
    the one its printed record gives, with the database's absolute path."""
    path, ids = summary_db
    sid = ids[name]
    with SessionStore(path, readonly=True) as store:
        snap = snapshot_from_store(store, sid)
        record = build_record(store.session(sid), status=status, trials=store.trials(sid), db_path=path)
    assert snap.header.status == status
    command = f"lensopt run --resume {sid} --db {path.resolve()}"
    assert record.missing is not None and command in record.missing
    rows = summary_rows(snap)
    assert rows[1][:2] == ("Continue", command)
    finished = replace(snap, header=replace(snap.header, status="finished"))
    assert all(row[0] != "Continue" for row in summary_rows(finished))
    # finished short of its target: the command its end advised, a ceiling said so in the note
    for advice, note in ((ContinueAdvice(44), MORE_TRIALS_WHY), (ContinueAdvice(60, at_most=True), CEILING_WHY)):
        short = replace(snap, header=replace(snap.header, status="finished", continue_advice=advice))
        assert summary_rows(short)[1] == (
            "Continue",
            f"lensopt run --resume {sid} --trials {advice.trials} --db {path.resolve()}",
            note,
        )


def _prescription_panels(path, sid):
    with SessionStore(path, readonly=True) as store:
        snap = snapshot_from_store(store, sid)
    plane, curve = Figure(), Figure()
    draw_lens_map(plane, snap)
    draw_psychometric(curve, snap)
    return snap, plane, curve


def test_the_defocus_curve_labels_its_best_lens_unrounded_as_the_astigmatism_plane_does(summary_db):
    """The curve's dashed line and the plane's star are the model's unrounded best lens: both say
    so, the line with the M of that lens (not the M of the rounded lens the record's table gives)."""
    path, ids = summary_db
    snap, plane, curve = _prescription_panels(path, ids["finished"])
    view = snap.prescription_view
    labels = {
        name: [label for ax in fig.axes for label in ax.get_legend_handles_labels()[1] if label.startswith("best lens")]
        for name, fig in (("plane", plane), ("curve", curve))
    }
    (star,), (line,) = labels["plane"], labels["curve"]
    assert star.endswith("(unrounded)") and line.endswith("(unrounded)")
    # the line's M is the unrounded lens's (its power vector's M), not the rounded lens's S + C/2
    shown_m = float(re.search(r"M ([-+]?\d+\.\d\d) D", line).group(1))
    assert shown_m == pytest.approx(view.best_d[0], abs=0.005)
    # the record's table gives the rounded lens's M: S + C/2 of the stored prescription
    rounded = _stored_result(path, ids["finished"])
    rounded_m = float(power_vector_arrays(rounded.sphere_d, rounded.cylinder_d, rounded.axis_deg)[0])
    assert rounded_m == pytest.approx(rounded.sphere_d + rounded.cylinder_d / 2.0)


def _font_file(text) -> str:
    return findfont(text.get_fontproperties())


def test_the_eyes_names_over_the_history_and_the_lens_path_are_set_in_the_face_of_the_other_labels(summary_db):
    """OD and OS over their trials were bold (at 100 dpi DejaVu Sans Bold's hinting reads as a serif
    face, unlike every other label): now in the axis labels' own font file."""
    path, ids = summary_db
    with SessionStore(path, readonly=True) as store:
        sid = ids["both"]
        snap = snapshot_from_store(store, sid)
        records = store.trials(sid)
    fig = Figure()
    draw_history(fig, snap)
    (ax,) = fig.axes
    names = [t for t in ax.texts if t.get_text() in ("OD", "OS")]
    assert [t.get_text() for t in names] == ["OD", "OS"]
    label_font = _font_file(ax.xaxis.label)
    assert all(_font_file(t) == label_font for t in names)
    fig = Figure()
    _draw_lens_path(fig, records, [])
    (ax,) = fig.axes
    names = [t for t in ax.texts if t.get_text() in ("OD", "OS")]
    assert [t.get_text() for t in names] == ["OD", "OS"]
    assert all(_font_file(t) == _font_file(ax.xaxis.label) for t in names)
