"""The printed record's first page says what the clinician did: the notes typed (N), the lenses set
differently from the ones asked (L), the answers undone; and whose answers they were (a simulated
patient's session is no prescription). Real databases, read back as ``lensopt print`` reads them."""

from __future__ import annotations

from dataclasses import replace

from dashboard_records import answered_record

from lensopt.dashboard.prescription_text import RESULT_TITLE, SIMULATED_BANNER, build_record
from lensopt.dashboard.record_page import draw_record_page
from lensopt.observer import SimulatedPatient
from lensopt.refraction.prescription_letters import PrescriptionOptimizer
from lensopt.store import NOTED, ResultRecord, SessionStore


def _session(path, n_trials=8, observer="keyboard", extras=None, undo=(), notes_typed=()):
    """A finished full-prescription letter session of the right eye stored in ``path``, with a
    confident result (a prescription); ``extras``: stored row -> its trial's ``extra``; ``undo``: the
    rows undone (each re-asked as the next row, as the console does); ``notes_typed``: ``(note,
    for_trial)`` noted events. Its id."""
    extras = extras or {}
    opt = PrescriptionOptimizer(start="-1.00 / -0.50 x 180", seed=3)
    patient = SimulatedPatient(-1.25, -0.75, slope=14.0, axis_deg=170.0, seed=3)
    protocol = {
        "protocol": {"name": "clinical-prescription", "observer": observer},
        "session": {"eye": "OD"},
        "stop": {"confidence": 0.95, "min_trials": 4, "max_trials": 80},
    }
    with SessionStore(path) as store:
        sid = store.create_session("P9", protocol, {}, opt.settings_dict(), 3)
        for i in range(1, n_trials + 1):
            trial = opt.ask()
            correct = bool(patient.respond(trial.letter_logmar, trial.sphere_d, trial.cylinder_d, trial.axis_deg))
            store.append_trial(sid, replace(answered_record(i, trial, correct, eye="OD"), extra=extras.get(i, {})))
            if i in undo:
                store.void_trial(sid, i)
            else:
                opt.tell(trial, correct)
        for note, for_trial in notes_typed:
            store.record_event(sid, NOTED, {"note": note, "for_trial": for_trial})
        rx = opt.prescription()
        store.set_result(
            sid,
            ResultRecord(
                rx.text, rx.lens.sphere_d, rx.lens.cylinder_d, rx.lens.axis_deg, 0.0, 0.99, n_trials - len(undo), {}
            ),
        )
        store.set_status(sid, "finished")
    return sid


def _record(path, sid):
    with SessionStore(path, readonly=True) as store:
        return build_record(store.session(sid), 1.9e9, trials=store.trials(sid))


def _page_text(record) -> str:
    fig = draw_record_page(record)
    return "\n".join(t.get_text() for t in fig.texts)


def test_the_clinicians_notes_lenses_set_and_undone_answers_are_on_the_first_page_by_the_consoles_trial(tmp_path):
    path = tmp_path / "s.db"
    # row 3 undone, re-asked as row 4 with the lens set by hand: the console's OD trial 3; row 8 its trial 7
    sid = _session(
        path,
        extras={
            4: {"asked_lens": "-1.00 / -0.50 x 030", "lens_set_by_clinician": True},
            8: {"note": "patient squints"},
        },
        undo=(3,),
        # one noted event its answer holds; one typed before an answer a crash never stored
        notes_typed=(("patient squints", 8), ("tears up", 9)),
    )
    record = _record(path, sid)
    assert record.notes == ("OD trial 7: patient squints", "OD trial 8 (not answered): tears up")
    (change,) = record.lens_changes
    assert change.startswith("OD trial 3: asked -1.00 / -0.50 x 030, set ")
    assert record.n_undone == 1
    text = _page_text(record)
    assert "Clinician's notes" in text and "OD trial 7: patient squints" in text and change in text
    assert "1 answer undone (kept in the database, not counted)" in text
    assert "Signature" in text and record.title == RESULT_TITLE  # a person's answers: a result to sign


def test_a_note_stored_with_a_line_break_is_printed_on_one_line_not_over_the_next_row(tmp_path):
    """A note written into the store by another program (``'tired\nsecond line'``) was drawn over the
    record's next row; the console's entry cannot type a line break, the record keeps one line."""
    path = tmp_path / "s.db"
    sid = _session(path, extras={8: {"note": "tired;\n\tsecond  line\n"}}, notes_typed=(("looks\naway", 9),))
    record = _record(path, sid)
    assert record.notes == ("OD trial 8: tired; second line", "OD trial 9 (not answered): looks away")
    drawn = [t.get_text() for t in draw_record_page(record).texts]
    assert not any("\n" in text for text in drawn if "tired" in text or "looks" in text)


def test_a_record_without_the_clinicians_doings_has_no_such_section(tmp_path):
    path = tmp_path / "s.db"
    record = _record(path, _session(path))
    assert record.clinician_lines() == []
    assert "Clinician's notes" not in _page_text(record)


def test_many_notes_are_cut_to_a_few_and_the_rest_counted_on_the_export(tmp_path):
    path = tmp_path / "s.db"
    extras = {i: {"note": f"note {i}", "asked_lens": "plano"} for i in range(1, 13)}
    record = _record(path, _session(path, n_trials=12, extras=extras))
    lines = record.clinician_lines()
    notes = [text for label, text in lines if label == "Note"]
    lenses = [text for label, text in lines if label == "Lens set"]
    assert notes == [
        "OD trial 1: note 1",
        "OD trial 2: note 2",
        "OD trial 3: note 3",
        "\u2026 and 9 more; see the export",
    ]
    assert lenses[-1] == "\u2026 and 9 more; see the export" and len(lenses) == 4
    fig = draw_record_page(record)
    assert "\u2026 and 9 more; see the export" in [t.get_text() for t in fig.texts]


def test_a_simulated_patients_session_is_marked_on_its_title_and_is_nothing_to_sign(tmp_path):
    path = tmp_path / "s.db"
    record = _record(path, _session(path, observer="simulated"))
    assert record.eyes[0].prescribed and record.banner == SIMULATED_BANNER and not record.signable
    text = _page_text(record)
    assert "SIMULATED PATIENT \u2014 not a prescription" in text and "Signature" not in text


def test_a_simulated_patients_session_is_marked_on_the_dashboards_title_and_its_report(tmp_path):
    """The record said "SIMULATED PATIENT — not a prescription"; the dashboard and its report showed
    the same lens as a plain prescription. Their title lines now say it too; a person's do not."""
    from lensopt.dashboard.model import snapshot_from_store
    from lensopt.dashboard.report import report_title

    path = tmp_path / "s.db"
    simulated, person = _session(path, observer="simulated"), _session(path, observer="keyboard")
    with SessionStore(path, readonly=True) as store:
        shown = {sid: snapshot_from_store(store, sid) for sid in (simulated, person)}
    assert f"(P9, OD, finished) · {SIMULATED_BANNER} · " in shown[simulated].summary_line()
    assert SIMULATED_BANNER in report_title(shown[simulated])[0].replace("\n", " ")
    assert SIMULATED_BANNER not in shown[person].summary_line() + report_title(shown[person])[0]
