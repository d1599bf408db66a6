"""The trial loop driven by key presses: correct, wrong, pass, Escape -> pause -> resume/quit."""

import numpy as np
import pytest

import lensopt
from experiment_helpers import FAST, needs_display, write_protocol
from lensopt.experiment.keyboard import InjectedKeySource, KeyboardSource, SimulatedSource
from lensopt.experiment.session import RunRequest, run_session
from lensopt.store import SessionStore

pytestmark = needs_display


def run(tmp_path, window, keys=None, **request):
    responses = InjectedKeySource(keys) if keys is not None else None
    logged = []
    outcome = run_session(
        RunRequest(db_path=tmp_path / "s.db", **request), responses=responses, log=logged.append, window=window
    )
    return outcome, responses, logged


def test_keys_correct_wrong_pass_and_escape_then_quit_keep_every_answer(tmp_path, window, fast_protocol):
    keys = [
        "space",  # instructions
        "<correct>",
        "<wrong>",
        "space",  # trial 1 right, trial 2 wrong, trial 3 passed
        "escape",
        "space",  # trial 4: pause, resume: the same letter comes back
        ("<correct>", 0.7),
        "escape",
        "q",
    ]  # trial 5: pause, quit
    outcome, source, _ = run(
        tmp_path, window, keys, protocol_path=fast_protocol, participant="kb", observer="keyboard", seed=2, trials=8
    )
    assert source.remaining == 0
    assert outcome.status == "aborted" and outcome.n_trials == 4
    with SessionStore(tmp_path / "s.db", readonly=True) as store:
        trials = store.trials(outcome.session_id)
        assert store.session(outcome.session_id).status == "aborted"
    assert [t.index for t in trials] == [1, 2, 3, 4]
    assert [t.correct for t in trials] == [True, False, False, True]
    assert trials[0].response == trials[0].letter
    assert trials[1].response != trials[1].letter and len(trials[1].response) == 1
    assert trials[2].response == "pass"
    assert trials[3].rt_s == pytest.approx(0.7)
    assert all(t.answered_at >= t.presented_at for t in trials)
    # trial 4 was paused while its letter was up: when it was first shown is kept, and how often paused
    assert trials[3].extra["pauses"] == 1 and trials[3].extra["first_presented_at_s"] <= trials[3].presented_at
    assert trials[3].extra["first_presented_at_s"] >= trials[2].answered_at
    assert not any("pauses" in t.extra or "first_presented_at_s" in t.extra for t in trials[:3])


def test_a_quit_session_resumes_at_the_next_trial_and_finishes(tmp_path, window, fast_protocol):
    first, _, _ = run(
        tmp_path,
        window,
        ["space", "<correct>", "<wrong>", "escape", "escape"],
        protocol_path=fast_protocol,
        participant="kb",
        observer="keyboard",
        seed=3,
        trials=4,
    )
    assert first.n_trials == 2
    second, source, logged = run(tmp_path, window, ["space", "<correct>", "<correct>"], resume=first.session_id)
    assert source.remaining == 0
    assert second.session_id == first.session_id and second.status == "finished" and second.n_trials == 4
    assert any("resuming at trial 3 of 4" in line for line in logged)
    with SessionStore(tmp_path / "s.db", readonly=True) as store:
        events, trials = store.session(first.session_id).events, store.trials(first.session_id)
    # the start and the resume are recorded, each with the software that ran, between the answers
    assert [(e.event, e.after_trial) for e in events] == [("started", 0), ("resumed", 2), ("ended", 4)]
    assert events[0].at <= trials[0].presented_at and trials[1].answered_at <= events[1].at <= trials[2].presented_at
    assert events[1].detail["trials"] == 4 and events[1].detail["trials_given"] is None
    assert all(e.software["lensopt"] == lensopt.__version__ for e in events)


def test_the_clinician_is_prompted_with_quarter_diopter_lenses(tmp_path, window):
    protocol = write_protocol(tmp_path / "clinic.toml", **FAST, **{"lens.step_d": "0.25", "lens.prompt": "true"})
    outcome, _, logged = run(
        tmp_path, window, protocol_path=protocol, participant="c", observer="simulated", seed=1, trials=6
    )
    prompts = [line for line in logged if line.startswith("clinician: set lens")]
    assert 1 <= len(prompts) <= 6
    with SessionStore(tmp_path / "s.db", readonly=True) as store:
        trials = store.trials(outcome.session_id)
    lenses = np.array([[t.sphere_d, t.cylinder_d] for t in trials])
    assert np.allclose(lenses * 4, np.round(lenses * 4))
    changes = 1 + int(np.sum(np.any(np.diff(lenses, axis=0) != 0, axis=1)))
    assert len(prompts) == changes


def test_the_real_keyboard_source_reads_key_events_of_the_window(window):
    from pyglet.window import key

    source = KeyboardSource(window)
    source.clear()
    source.start_timer()
    window.winHandle.dispatch_event("on_key_press", key.K, 0)
    press = source.wait_keys(["k", "space"], timeout_s=1.0)
    assert press is not None and press.key == "k" and press.rt_s >= 0
    assert source.wait_keys(["k"], timeout_s=0.05) is None  # nothing else pressed: times out


def test_escape_pauses_a_simulated_session_through_the_real_keyboard(window):
    from pyglet.window import key

    from lensopt.refraction.trial import Trial

    source = SimulatedSource(
        dict(sphere_d=0.0, cylinder_d=0.0), "ABC", seed=0, response_delay_s=0.5, keyboard=KeyboardSource(window)
    )
    source.clear()
    window.winHandle.dispatch_event("on_key_press", key.ESCAPE, 0)
    press = source.letter_response(Trial(0.0, 0.0, 0.5), "A", ["a", "b", "c", "escape"], index=1)
    assert press.key == "escape"
    assert source.human is source.keyboard


def test_a_session_that_checks_its_lens_stores_and_logs_the_check_and_says_what_was_read(tmp_path, window):
    """``[stop] check_letters``: once confident, the letters are asked at the reported lens; each is
    stored with ``extra["check"]`` and its log line says so, the session stops only after three of
    them, and the end point says what the patient read through the lens."""
    from lensopt.experiment.loop import CHECK_LOG, TrialLoop

    fields = {**FAST, "optimizer.rule": '"acuity-law"', "optimizer.n_initial": None, "optimizer.inference": None}
    path = write_protocol(tmp_path / "check.toml", **fields, **{"lens.step_d": "0.25"})
    path.write_text(path.read_text() + "\n[stop]\nconfidence = 0.8\nmin_trials = 10\ncheck_letters = 3\n")
    outcome, _, logged = run(
        tmp_path, window, protocol_path=path, participant="chk", observer="simulated", seed=4, trials=80
    )
    assert outcome.status == "finished" and outcome.n_trials < 80  # stopped by its rule
    with SessionStore(tmp_path / "s.db", readonly=True) as store:
        trials = store.trials(outcome.session_id)
        result = store.session(outcome.session_id).result
    checks = [t for t in trials if t.extra.get("check")]
    assert len(checks) >= 3
    # the last three checks were through the stored lens (within 0.25 D: b² = ½(r_S² + (r_S + r_C)²))
    for t in checks[-3:]:
        r_s, r_c = t.sphere_d - result.sphere_d, t.cylinder_d - result.cylinder_d
        assert 0.5 * (r_s**2 + (r_s + r_c) ** 2) <= 0.25**2 + 1e-9
    trial_lines = [line for line in logged if line.startswith("trial")]
    assert sum(line.endswith(CHECK_LOG) for line in trial_lines) == len(checks)
    assert any(line.startswith("read through this lens: ") for line in logged)
    # the clinician's console lists a check's answer as one ("E>E ok check")
    assert TrialLoop._answer_text(None, checks[-1]).endswith(" check")
    assert not TrialLoop._answer_text(None, next(t for t in trials if not t.extra.get("check"))).endswith("check")


@pytest.mark.parametrize(
    "timing, timed_out",
    [
        ({"timing.response_timeout_s": "0.05"}, True),  # the patient's 0.15 s: over the timeout
        ({"timing.response_timeout_s": "1.0"}, False),
        ({"timing.letter_s": "0.05", "timing.response_timeout_s": "0.1"}, True),  # hidden, then 0.05 s more
        ({"timing.letter_s": "0.05"}, False),  # hidden, then answered at 0.15 s
    ],
)
def test_a_simulated_patient_slower_than_the_protocols_timeout_leaves_its_letters_unanswered(
    tmp_path, window, timing, timed_out
):
    fields = {**FAST, "timing.simulated_response_s": "0.15", **timing}
    protocol = write_protocol(tmp_path / "timeout.toml", **fields)
    outcome, _, _ = run(tmp_path, window, protocol_path=protocol, participant="sim", observer="simulated", trials=3)
    assert outcome.status == "finished" and outcome.n_trials == 3
    with SessionStore(tmp_path / "s.db", readonly=True) as store:
        trials = store.trials(outcome.session_id)
    if timed_out:  # stored without an answer, counted wrong, as a real patient's
        assert all(t.response is None and t.rt_s is None and not t.correct for t in trials)
    else:
        assert all(t.response is not None and t.rt_s == 0.15 for t in trials)
