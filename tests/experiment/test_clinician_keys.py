"""The clinician's keys on the console, injected: undo (Backspace), the lens actually set (L), a
note (N), pause and resume (Escape), in a full-prescription clinic session.

An undone answer is kept in the store and marked void; the optimizer is rebuilt from the others,
so the stored prescription is the one of the answers that count, and a resumed session continues
from them. The lens the clinician types is the one told to the optimizer and stored.
"""

import csv
import io

import pytest
from test_console import clinic_protocol

from experiment_helpers import needs_display
from lensopt.experiment.keyboard import KeyPress
from lensopt.experiment.modes import answered
from lensopt.experiment.session import RunRequest, run_session
from lensopt.modes.registry import get_mode
from lensopt.refraction.lens import Lens
from lensopt.stopping import confidence_text
from lensopt.store import SessionStore
from lensopt.store.export import export_session

pytestmark = needs_display


class ClinicKeys:
    """A scripted clinic: the patient names every letter right unless ``letters[index]`` lists keys
    for trial ``index`` (``"<wrong>"`` names another letter); the clinician confirms every screen
    unless the next of ``screens`` is a key that screen accepts; ``typed`` keys go into console entries."""

    human = property(lambda self: self)

    def __init__(self, screens=(), letters=None, typed=()):
        self.screens, self.letters, self.typed = list(screens), dict(letters or {}), list(typed)

    def start_timer(self):
        pass

    def clear(self):
        pass

    def wait_for(self, keys, timeout_s=None):
        if self.screens and self.screens[0] in keys:
            return KeyPress(self.screens.pop(0), 0.4)
        return KeyPress("space" if "space" in keys else keys[0], 0.4)

    def wait_keys(self, keys, timeout_s=None):
        if not self.typed:
            raise RuntimeError(f"the typed keys ran out while waiting for one of {sorted(keys)}")
        key = self.typed.pop(0)
        assert key in keys, key
        return KeyPress(key, 0.1)

    def letter_response(self, trial, letter, keys, timeout_s=None, index=0):
        planned = self.letters.get(index) or []
        key = planned.pop(0) if planned else letter.lower()
        if key == "<wrong>":
            key = next(k for k in keys if len(k) == 1 and k != letter.lower())
        return KeyPress(key, 0.6)


def typing(text):
    """The key names that type ``text`` on the console."""
    names = {"-": "minus", "+": "equal", ".": "period", "/": "slash", " ": "space", ",": "comma"}
    return [names.get(c, c) for c in text] + ["return"]


def run(tmp_path, window, source, trials, resume=None, **fields):
    lines = []
    request = (
        RunRequest(db_path=tmp_path / "s.db", resume=resume)
        if resume is not None
        else RunRequest(
            db_path=tmp_path / "s.db",
            protocol_path=clinic_protocol(tmp_path, **{"protocol.observer": '"keyboard"', **fields}),
            participant="P1",
            seed=6,
            trials=trials,
        )
    )
    outcome = run_session(request, responses=source, log=lines.append, window=window)
    with SessionStore(tmp_path / "s.db", readonly=True) as store:
        info, records = store.session(outcome.session_id), store.trials(outcome.session_id)
    return outcome, info, records, lines


def test_backspace_voids_the_last_answer_keeps_it_and_rebuilds_the_optimizer_without_it(tmp_path, window):
    source = ClinicKeys(letters={2: ["<wrong>"], 3: ["backspace"]})
    outcome, info, records, lines = run(tmp_path, window, source, trials=5)
    assert outcome.status == "finished"
    assert [r.index for r in records] == [1, 2, 3, 4, 5, 6]
    assert [r.void for r in records] == [False, True, False, False, False, False]
    assert records[1].response is not None and not records[1].correct  # the undone answer is kept as given
    assert any(x.startswith("undo: OD trial 2 ") and x.endswith("rebuilt from 1 answer") for x in lines)
    rebuilt = get_mode("letters").rebuild_optimizer(info.optimizer_settings, answered(records))
    assert rebuilt.n_trials == 5 and info.result.n_trials == 5
    assert info.result.prescription == rebuilt.prescription().text
    # every count a person reads is of the answers kept, the undone one said apart (it said 6 trials)
    assert (info.n_trials, info.n_undone, info.n_answers) == (6, 1, 5)
    assert outcome.n_trials == 5 and outcome.stored_text() == "5 trials stored (+1 undone)"


def test_the_lens_actually_set_is_told_to_the_optimizer_and_stored_and_a_note_kept(tmp_path, window):
    source = ClinicKeys(
        screens=["space", "n", "l"],  # instructions; at the first lens prompt a note, then the lens set
        typed=[*typing("tired"), *typing("abc"), "backspace", "backspace", "backspace", *typing("-1.50 -0.50 x 90")],
    )
    outcome, info, records, lines = run(tmp_path, window, source, trials=3)
    assert outcome.status == "finished" and not source.typed
    first = records[0]
    assert (first.sphere_d, first.cylinder_d, first.axis_deg) == (-1.5, -0.5, 90.0)
    assert first.extra["lens_set_by_clinician"] is True and first.extra["note"] == "tired"
    asked = Lens.parse(first.extra["asked_lens"])
    assert (asked.sphere_d, asked.cylinder_d, asked.axis_deg) != (-1.5, -0.5, 90.0)
    assert any("entry 'abc' not accepted" in x for x in lines)  # refused on the console, nothing lost
    assert "clinician: lens actually set -1.50 / -0.50 x 090 (asked " + first.extra["asked_lens"] + ")" in lines
    assert all("note" not in r.extra for r in records[1:])
    with SessionStore(tmp_path / "s.db", readonly=True) as store:
        rows = list(csv.DictReader(io.StringIO(export_session(store, outcome.session_id, "csv"))))
    assert rows[0]["note"] == "tired" and rows[0]["asked_lens"] == first.extra["asked_lens"]
    assert [r["note"] for r in rows[1:]] == [""] * 2
    # the optimizer was told the lens set: rebuilt from the stored records, it reports the same prescription
    rebuilt = get_mode("letters").rebuild_optimizer(info.optimizer_settings, records)
    assert rebuilt.history[0][0].sphere_d == -1.5 and info.result.prescription == rebuilt.prescription().text


def test_pause_resumes_at_the_prompt_and_a_quit_session_resumes_with_undo(tmp_path, window):
    source_quit = ClinicKeys(screens=["space", "escape", "space"], letters={3: ["escape"]})
    source_quit.screens += ["q"]  # after the pause and resume at the first prompt, quit at trial 3's letter
    outcome, info, records, lines = run(tmp_path, window, source_quit, trials=4)
    assert outcome.status == "aborted" and [r.index for r in records] == [1, 2]
    assert lines.count("paused") == 2 and not source_quit.screens
    # resume: at the first letter, Backspace voids trial 2, stored before the quit
    resumed = ClinicKeys(letters={3: ["backspace"]})
    outcome, info, records, lines = run(tmp_path, window, resumed, trials=None, resume=outcome.session_id)
    assert outcome.status == "finished"
    assert [r.void for r in records] == [False, True, False, False, False]
    assert info.result.n_trials == 4
    assert any("resuming at eye OD, trial 3 of 4" in x for x in lines)


def test_a_note_no_answer_followed_is_kept_with_the_last_answer_when_the_session_quits(tmp_path, window):
    """A note is stored with the next answer; the one explaining why the session stops has none (it
    was lost): it is kept with the last answered trial, as ``note_after``, and the export shows it."""
    source = ClinicKeys(screens=["space", "space", "n", "escape", "q"], typed=typing("headache"))
    outcome, _info, records, lines = run(tmp_path, window, source, trials=4)
    assert outcome.status == "aborted" and [r.index for r in records] == [1] and not source.screens
    assert records[0].extra["note_after"] == "headache" and "note" not in records[0].extra
    assert "clinician: note 'headache' kept with OD trial 1, the last answered" in lines
    with SessionStore(tmp_path / "s.db", readonly=True) as store:
        rows = list(csv.DictReader(io.StringIO(export_session(store, outcome.session_id, "csv"))))
    assert rows[0]["note_after"] == "headache"


def test_a_note_kept_with_the_last_answer_after_an_undo_is_logged_with_the_consoles_trial_number(tmp_path, window):
    """The log named the stored row ("trial 3 of the session") where the console says trial 2: the
    first answer undone, the note is kept with the second answer, OD trial 2."""
    source = ClinicKeys(screens=["space"] * 5 + ["n", "escape", "q"], letters={2: ["backspace"]})
    source.typed = typing("headache")
    _outcome, _info, records, lines = run(tmp_path, window, source, trials=4)
    assert [r.void for r in records] == [True, False, False] and records[-1].extra["note_after"] == "headache"
    assert "clinician: note 'headache' kept with OD trial 2, the last answered" in lines


def test_a_note_with_an_answer_the_database_refuses_is_rescued_with_it_and_nowhere_else(tmp_path, window, monkeypatch):
    """The note goes with the answer it was typed for, into the rescue file when the store refuses
    that answer; it was also kept (or said lost) as the last answer's note_after."""
    import json

    from lensopt.errors import StoreError
    from lensopt.experiment.rescue import rescue_path
    from lensopt.store import DatabaseLockedError

    original = SessionStore.append_trial

    def locked_at_trial_2(self, session_id, record):
        if record.index == 2:
            raise DatabaseLockedError("the session database is locked by another program")
        return original(self, session_id, record)

    monkeypatch.setattr(SessionStore, "append_trial", locked_at_trial_2)
    source = ClinicKeys(screens=["space", "space", "n"], typed=typing("tired"))
    lines = []
    request = RunRequest(
        db_path=tmp_path / "s.db",
        protocol_path=clinic_protocol(tmp_path, **{"protocol.observer": '"keyboard"'}),
        participant="P1",
        seed=6,
        trials=4,
    )
    with pytest.raises(StoreError, match="trial 2 was saved to"):
        run_session(request, responses=source, log=lines.append, window=window)
    rescued = [json.loads(line) for line in rescue_path(tmp_path / "s.db", 1).read_text().splitlines()]
    assert [(r["index"], r["extra"].get("note")) for r in rescued] == [(2, "tired")]
    with SessionStore(tmp_path / "s.db", readonly=True) as store:
        (first,) = store.trials(1)
    assert "note_after" not in first.extra
    assert not any("not stored" in line or "kept with trial" in line for line in lines)


class PatientAndClinician(ClinicKeys):
    """The simulated patient names the letters; the clinician's keys are scripted (:class:`ClinicKeys`).
    ``waits`` lists the keys of every screen waited on, in order."""

    def __init__(self, patient, **script):
        super().__init__(**script)
        self.patient, self.waits = patient, []

    def wait_for(self, keys, timeout_s=None):
        self.waits.append(list(keys))
        return super().wait_for(keys, timeout_s)

    def letter_response(self, trial, letter, keys, timeout_s=None, index=0):
        if self.letters.get(index):
            return super().letter_response(trial, letter, keys, timeout_s, index)
        return self.patient.letter_response(trial, letter, keys, timeout_s, index)


def simulated_clinic(tmp_path, confidence, trials, min_trials=5):
    from lensopt.experiment.modes import mode_for
    from lensopt.experiment.protocol import load_protocol

    path = clinic_protocol(
        tmp_path,
        **{
            "protocol.observer": '"keyboard"',
            "stop.confidence": str(confidence),
            "stop.min_trials": str(min_trials),
            "stop.max_trials": str(trials),
            "optimizer.trials": str(trials),
        },
    )
    protocol = load_protocol(path)
    assert (protocol.simulated.slope, protocol.simulated.axis_deg) == (14.0, 170.0)  # the shipped patient
    return path, mode_for(protocol).simulated_source(protocol, 3, None)


def test_a_session_stops_on_confidence_and_holds_the_prescription_until_the_clinician_closes(
    tmp_path, window, drawn_texts
):
    path, patient = simulated_clinic(tmp_path, confidence=0.6, trials=40)
    source = PatientAndClinician(patient, screens=["space", "escape", "space"])  # pause and resume at a prompt
    lines = []
    outcome = run_session(
        RunRequest(db_path=tmp_path / "s.db", protocol_path=path, participant="P1", seed=3),
        responses=source,
        log=lines.append,
        window=window,
    )
    assert outcome.status == "finished" and outcome.stopped_at is not None and outcome.stopped_at < 40
    assert outcome.confidence >= 0.6 and outcome.result.n_trials == outcome.stopped_at
    assert any(x.startswith(f"stopped at {outcome.stopped_at} trials, confidence") for x in lines)
    assert "paused" in lines and not source.screens
    drawn = [text for _, text in drawn_texts]
    closing = drawn[drawn.index("Session finished") :]
    assert f"OD  {outcome.result.prescription}" in closing  # the console's closing screen: the prescription
    assert any(text.startswith("OD: predicted acuity ") and "confidence" in text for text in closing)
    assert any("95% intervals: S " in text for text in closing)
    assert source.waits[-1] == ["space", "backspace"]  # held until the clinician closes it (or undoes)
    assert "Done. Thank you!" in drawn and "not enough answers" not in " ".join(drawn)


def test_without_enough_confidence_the_console_says_so_instead_of_a_lens(tmp_path, window, drawn_texts):
    path, patient = simulated_clinic(tmp_path, confidence=0.99, trials=6, min_trials=2)
    source = PatientAndClinician(patient)
    lines = []
    outcome = run_session(
        RunRequest(db_path=tmp_path / "s.db", protocol_path=path, participant="P1", seed=3),
        responses=source,
        log=lines.append,
        window=window,
    )
    assert outcome.status == "finished" and outcome.stopped_at is None and outcome.result.confidence < 0.99
    drawn = [text for _, text in drawn_texts]
    closing = drawn[drawn.index("Session finished") :]
    assert "OD  not enough answers to prescribe" in closing and f"OD  {outcome.result.prescription}" not in closing
    assert any(
        text.startswith(f"OD: confidence {confidence_text(outcome.result.confidence)} < 0.99; ") for text in closing
    )
    assert any(x.startswith("OD  not enough answers to prescribe; confidence ") for x in lines), lines
    resume = f"lensopt run --resume {outcome.session_id} --trials "
    assert any(x.startswith(f"continue with: {resume}") and str(tmp_path / "s.db") in x for x in lines)
    assert any(f"\nTo continue: {resume}" in text for text in closing)  # under the eye's advice
    assert not any("Confidence so far" in text for text in closing)  # the eye's confidence is in its line


def test_while_paused_the_console_lists_only_the_pause_screens_keys(tmp_path, window, console_states):
    """Paused at a lens prompt: the pause screen's keys, not the prompt's ("SPACE: the lens is set")
    under them; resumed, the prompt's keys again."""
    source = ClinicKeys(screens=["space", "escape", "space"])  # instructions; pause at the first prompt; resume
    outcome, _, _, lines = run(tmp_path, window, source, trials=2)
    assert outcome.status == "finished" and "paused" in lines and not source.screens
    paused = [k for k, s in enumerate(console_states) if s.heading.startswith("Paused.")]
    assert paused
    for k in paused:
        state = console_states[k]
        assert state.keys_text == "SPACE: resume   ·   Q or ESCAPE: quit (resume later with --resume)"
        assert "SPACE: resume" not in state.heading and "the lens is set" not in state.keys_text
    after = console_states[paused[-1] + 1]
    assert after.heading.startswith("Set this lens") and after.keys_text.startswith("SPACE: the lens is set")


@pytest.mark.parametrize(("axis_step_deg", "where"), [(1, "on the phoropter"), (5, "in the trial frame")])
def test_the_lens_prompt_names_a_trial_frame_when_the_axes_are_on_its_marks(
    tmp_path, window, console_states, axis_step_deg, where
):
    """``[lens] axis_step_deg = 5`` (a trial frame's 5° marks): the prompt says where the lens goes."""
    outcome, _, records, _ = run(tmp_path, window, ClinicKeys(), trials=2, **{"lens.axis_step_deg": str(axis_step_deg)})
    assert outcome.status == "finished" and all(r.axis_deg % axis_step_deg == 0 for r in records)
    prompts = [s.heading for s in console_states if s.heading.startswith("Set this lens")]
    assert prompts and all(h.startswith(f"Set this lens {where}, then press SPACE") for h in prompts), prompts


def test_after_l_the_console_shows_the_lens_actually_set_while_the_letter_is_up(tmp_path, window, console_states):
    source = ClinicKeys(screens=["space", "l"], typed=typing("-1.50 -0.50 x 90"))
    _, _, records, _ = run(tmp_path, window, source, trials=2)
    asked = records[0].extra["asked_lens"]
    assert asked != "-1.50 / -0.50 x 090"
    while_shown = [s for s in console_states if s.trial_index == 1 and s.heading.startswith("Letter ")]
    assert while_shown and all(s.lens_text == "-1.50 / -0.50 x 090" for s in while_shown), while_shown
    assert while_shown[0].message == f"Lens actually set: -1.50 / -0.50 x 090 (asked {asked})"


def test_undo_is_offered_at_the_lens_prompt_only_once_there_is_an_answer_to_undo(tmp_path, window, console_states):
    outcome, _, _, _ = run(tmp_path, window, ClinicKeys(), trials=3)
    assert outcome.status == "finished"
    prompts = [s for s in console_states if s.heading.startswith("Set this lens")]
    first = [s for s in prompts if s.trial_index == 1]
    later = [s for s in prompts if s.trial_index > 1]
    assert first and later
    assert all("undo the last answer" not in s.keys_text for s in first)  # nothing to undo yet
    assert all("BACKSPACE: undo the last answer" in s.keys_text for s in later)
    # while a letter is up too (Backspace works then): listed once there is an answer to undo
    letters = [s for s in console_states if s.keys_text.startswith("Keys: the letter named")]
    assert any(s.trial_index == 1 for s in letters) and any(s.trial_index > 1 for s in letters)
    assert all(("BACKSPACE: undo the last answer" in s.keys_text) == (s.trial_index > 1) for s in letters)


def test_a_note_is_on_disk_as_it_is_typed_not_only_with_the_answer_that_follows(tmp_path, window):
    """A note waited in memory for the next answer: a crash (kill -9) before it lost the note. It is
    recorded as the session's ``noted`` event when typed, and stored with the answer too."""
    on_disk_at_the_letter = []

    class Checking(ClinicKeys):
        def letter_response(self, trial, letter, keys, timeout_s=None, index=0):
            if index == 2:  # the moment a crash would have lost it: the letter after the note is up
                with SessionStore(tmp_path / "s.db", readonly=True) as store:
                    on_disk_at_the_letter.extend(store.sessions()[0].events)
            return super().letter_response(trial, letter, keys, timeout_s, index)

    source = Checking(screens=["space", "space", "n"], typed=typing("dizzy"))  # the note at trial 2's prompt
    outcome, info, records, _lines = run(tmp_path, window, source, trials=3)
    assert outcome.status == "finished" and not source.typed
    noted = [(e.event, e.after_trial, e.detail["note"], e.detail["for_trial"]) for e in on_disk_at_the_letter[1:]]
    assert noted == [("noted", 1, "dizzy", 2)]
    assert records[1].extra["note"] == "dizzy" and "note" not in records[0].extra
    assert [e.event for e in info.events] == ["started", "noted", "ended"]


def test_a_lens_set_typed_with_decimal_commas_is_refused_with_the_fix_and_one_off_the_steps_is_noted(tmp_path, window):
    """L at the lens prompt: '-1,50 -0,50 x 90' is refused saying to use a decimal point; '-1.4 -0.6 x 90'
    (off the 0.25 D steps, a likely typo) is accepted as typed, with one line naming the nearest lens."""
    source = ClinicKeys(
        screens=["space", "l"],
        typed=[*typing("-1,50 -0,50 x 90"), *(["backspace"] * 16), *typing("-1.4 -0.6 x 90")],
    )
    outcome, _info, records, lines = run(tmp_path, window, source, trials=2)
    assert outcome.status == "finished" and not source.typed
    refused = [x for x in lines if "entry '-1,50 -0,50 x 90' not accepted" in x]
    assert len(refused) == 1 and "use a decimal point: -1.50 -0.50 x 90" in refused[0]
    assert (records[0].sphere_d, records[0].cylinder_d, records[0].axis_deg) == (-1.4, -0.6, 90.0)
    assert (
        "clinician: note: -1.40 / -0.60 x 090 is not on the phoropter's 0.25 D steps: the nearest is "
        "-1.50 / -0.50 x 090" in lines
    )


def test_the_instructions_screen_lists_its_own_keys_not_the_miss_key_beside_press_space_to_start(
    tmp_path, window, console_states
):
    """The console's start screen said "Press SPACE to start" above "SPACE: cannot read (a miss)"
    (the keys while a letter is shown): SPACE started the session and recorded no miss. It lists the
    start screen's keys; the letter keys come with the letter."""
    outcome, _, _, _ = run(tmp_path, window, ClinicKeys(), trials=2)
    assert outcome.status == "finished"
    starts = [s for s in console_states if "Press SPACE to start" in s.heading]
    assert starts and all(s.keys_text == "Keys: SPACE: start   ·   ESCAPE: pause / stop" for s in starts), starts
    letters = [s for s in console_states if s.heading.startswith("Letter ")]
    assert letters and all("SPACE: cannot read (a miss)" in s.keys_text for s in letters)
