"""Duels of the full prescription in a real PsychoPy window: ``lensopt run`` with a duel protocol and a
starting refraction asks for lenses with their axes, stores every answer with both axes, ends with
a stored prescription, and resumes after a kill as the uninterrupted session would."""

import pytest

from experiment_helpers import FAST, REPO, kill_mid_way_and_resume, needs_display, write_protocol
from lensopt.experiment.console import NO_BREAK
from lensopt.experiment.protocol import load_protocol
from lensopt.experiment.session import RunRequest, run_session
from lensopt.modes import registry
from lensopt.modes.base import eye_settings
from lensopt.modes.presentation import presented
from lensopt.refraction.lens import Lens
from lensopt.refraction.prescription_duels import PrescriptionDuelOptimizer, PrescriptionDuelTrial
from lensopt.store import SessionStore
from lensopt.store.export import export_session

PROTOCOL = REPO / "protocols" / "clinical-prescription-duel.toml"
SIMULATED = {**FAST, "display.fullscreen": "false", "protocol.observer": '"simulated"', "session.eye": '"OD"'}
START = "-1.00 / -0.50 x 180"


def history(records):
    return [
        (
            PrescriptionDuelTrial(
                Lens(r.first_sphere_d, r.first_cylinder_d, r.first_axis_deg),
                Lens(r.second_sphere_d, r.second_cylinder_d, r.second_axis_deg),
                r.letter_logmar,
            ),
            r.answer,
        )
        for r in records
    ]


def test_the_shipped_protocol_needs_a_start_and_then_builds_the_prescription_duel_optimizer():
    from lensopt.experiment.modes import mode_for

    protocol = load_protocol(PROTOCOL)
    assert protocol.feedback_mode == "duel" and not protocol.start.given
    protocol = protocol.with_start(START)
    optimizer = mode_for(protocol).new_optimizer(protocol, seed=3, letter_bounds_logmar=(-0.3, 0.9))
    assert isinstance(optimizer, PrescriptionDuelOptimizer) and optimizer.start == Lens(-1.0, -0.5, 180.0)
    assert optimizer.settings_dict()["search"] == "prescription" and optimizer.lens_step_d == 0.25


def test_the_shipped_protocols_duels_guess_among_its_sloan_letters_and_lapse_at_its_rate():
    """The acuity link's floor is the chance of naming a letter of the protocol's alphabet (1/10 for
    the ten Sloan letters, not the default 1/26), its lapse the protocol's ``[optimizer] lapse``."""
    from lensopt.experiment.modes import mode_for

    protocol = load_protocol(PROTOCOL).with_start(START)
    assert len(protocol.letters.alphabet) == 10
    optimizer = mode_for(protocol).new_optimizer(protocol, seed=3, letter_bounds_logmar=(-0.3, 0.9))
    assert optimizer.clarity_link == "acuity"
    assert optimizer.n_alternatives == 10 and optimizer.model_lapse == protocol.optimizer.lapse
    assert optimizer.settings_dict()["n_alternatives"] == 10
    duel = optimizer.ask()
    optimizer.tell(duel, "first")
    assert optimizer.model.guess_rate == pytest.approx(0.1)
    assert optimizer.model.lapse_rate == pytest.approx(protocol.optimizer.lapse)


def test_the_shipped_ranking_protocols_link_guesses_among_its_letters_and_lapses_at_its_rate():
    from lensopt.experiment.modes import mode_for

    protocol = load_protocol(REPO / "protocols" / "clinical-prescription-ranking.toml").with_start(START)
    optimizer = mode_for(protocol).new_optimizer(protocol, seed=3, letter_bounds_logmar=(-0.3, 0.9))
    assert optimizer.clarity_link == "acuity"
    assert optimizer.n_alternatives == len(protocol.letters.alphabet)
    assert optimizer.model_lapse == protocol.optimizer.lapse


def test_a_duel_protocol_with_a_start_and_the_ties_model_is_refused_in_one_line():
    with pytest.raises(Exception, match=r"duel\.model = 'probit'") as caught:
        load_protocol(REPO / "protocols" / "clinical-duel.toml").with_start(START)
    assert "\n" not in str(caught.value)


@needs_display
def test_a_simulated_prescription_duel_session_stores_axes_and_its_prescription(tmp_path, window):
    db = tmp_path / "s.db"
    protocol = write_protocol(tmp_path / "rx-duel.toml", PROTOCOL, **SIMULATED)
    lines = []
    outcome = run_session(
        RunRequest(db_path=db, protocol_path=protocol, participant="RXD", seed=7, trials=10, start=START),
        log=lines.append,
        window=window,
    )
    assert outcome.status == "finished" and outcome.n_trials == 10
    with SessionStore(db, readonly=True) as store:
        info = store.session(outcome.session_id)
        stored = store.duel_trials(outcome.session_id)
        csv_text = export_session(store, outcome.session_id, "csv")
    assert info.kind == "duel" and info.optimizer_settings["search"] == "prescription"
    assert all(r.has_axes for r in stored) and len(stored) == 10
    # what was stored is what the optimizer asked, lens for lens with the axes, in the order shown
    # (counterbalanced), told back as shown
    replay = PrescriptionDuelOptimizer.from_settings(info.optimizer_settings)
    for record, (trial, answer) in zip(stored, history(stored)):
        asked = presented(replay.ask(), info.seed, record.index)
        assert (asked.first_lens, asked.second_lens) == (trial.first_lens, trial.second_lens)
        assert asked.letter_logmar == pytest.approx(trial.letter_logmar, abs=1e-9)
        replay.tell(trial, answer)
    # the registry rebuilds the same optimizer from the stored rows
    rebuilt = registry.get_mode("duel").rebuild_optimizer(info.optimizer_settings, stored)
    assert isinstance(rebuilt, PrescriptionDuelOptimizer) and rebuilt.prescription() == replay.prescription()
    # the clinician was told each lens in clinical notation, axis included
    told = [line for line in lines if line.startswith("clinician: lens 1 ")]
    first = stored[0]
    lens_1 = Lens(first.first_sphere_d, first.first_cylinder_d, first.first_axis_deg).format()
    assert len(told) == 10 and told[0].startswith(f"clinician: lens 1 {lens_1} / lens 2 ")
    # the result: the optimizer's prescription, stored
    (result,) = info.results
    assert result.prescription == replay.prescription().text and result.n_trials == 10
    assert result.confidence is None and result.predicted_acuity_logmar is None
    header, *rows = csv_text.strip().splitlines()
    assert "first_axis_deg" in header.split(",") and len(rows) == 10


@needs_display
@pytest.mark.parametrize("eye", ["OD", "OS"])
def test_a_prescription_duel_session_killed_mid_way_resumes_as_the_uninterrupted_one(tmp_path, eye):
    """Also of one eye (``--eye OS``: the left eye's own seed), whose result is stored for that eye."""
    db = tmp_path / "s.db"
    protocol = write_protocol(
        tmp_path / "rx-duel.toml", PROTOCOL, **{**SIMULATED, "timing.simulated_response_s": "0.3"}
    )
    sid, info, before, after, resumed = kill_mid_way_and_resume(
        db, protocol, lambda store, sid: store.duel_trials(sid), ("--start", START, *(("--eye", eye) if eye else ()))
    )
    settings = eye_settings(info.optimizer_settings, eye)
    k = len(before)
    assert after[:k] == before and [r.index for r in after] == list(range(1, 9))
    proposal = presented(PrescriptionDuelOptimizer.from_settings(settings, history(before)).ask(), info.seed, k + 1)
    assert (after[k].first_axis_deg, after[k].second_axis_deg) == (
        proposal.first_lens.axis_deg,
        proposal.second_lens.axis_deg,
    )
    assert Lens(after[k].first_sphere_d, after[k].first_cylinder_d, after[k].first_axis_deg) == proposal.first_lens
    with SessionStore(db, readonly=True) as store:
        (result,) = store.session(sid).results
    assert result.n_trials == 8 and result.eye == eye and "prescription" in resumed.stdout


@needs_display
def test_the_console_lists_each_duels_answer(tmp_path, window, drawn_texts):
    """The clinician's console lists the last answers of a duel session (1, 2 or S), as it does
    for letters; before, it said "none yet" to the end."""
    from psychopy import visual

    console_win = visual.Window(size=(900, 640), units="pix", checkTiming=False, winType="pyglet")
    db = tmp_path / "s.db"
    protocol = write_protocol(tmp_path / "rx-duel.toml", PROTOCOL, **SIMULATED)
    try:
        outcome = run_session(
            RunRequest(db_path=db, protocol_path=protocol, participant="C", seed=2, trials=5, start=START),
            log=lambda m: None,
            window=window,
            console_window=console_win,
        )
    finally:
        console_win.close()
    with SessionStore(db, readonly=True) as store:
        answers = [r.answer for r in store.duel_trials(outcome.session_id)]
    shown = {"first": "1", "second": "2", "same": "S"}
    on_console = [text.replace(NO_BREAK, " ") for win, text in drawn_texts if win is console_win]
    expected = "Last answers:  " + "   ".join(f"{k}: {shown[a]}" for k, a in enumerate(answers, start=1))
    assert any(text.startswith(expected) for text in on_console), on_console[-3:]


def _simulated_session(tmp_path, window, participant: str, trials: int):
    """A new simulated session of ``trials`` duels from :data:`START` (seed 7): its database and outcome."""
    db = tmp_path / "s.db"
    protocol = write_protocol(tmp_path / "rx-duel.toml", PROTOCOL, **SIMULATED)
    request = RunRequest(
        db_path=db, protocol_path=protocol, participant=participant, seed=7, trials=trials, start=START
    )
    return db, run_session(request, log=lambda m: None, window=window)


@needs_display
def test_a_duel_session_created_on_27_nov_resumes_with_the_trust_centre_it_ran_with(tmp_path, window):
    """A session stored as those created on 27 Nov 2026 between 13:11 and 15:48 UTC were (settings
    without the trust centre, the report's tilt or the prior about the start; created then) resumes
    with the settings that code ran with, the trust region centred by the mean and the report with
    half the tilt (``session_settings``); it resumed with the tilted centre of older sessions."""
    import json
    import sqlite3

    db, first = _simulated_session(tmp_path, window, "RX27", 4)
    with SessionStore(db, readonly=True) as store:
        stored = store.session(first.session_id).optimizer_settings
    old = {k: v for k, v in stored.items() if k not in ("trust_centre", "report_tilt_share", "start_prior_depth")}
    with sqlite3.connect(db) as connection:  # a247e62's time, 27 Nov 2026 15:29 UTC
        connection.execute(
            "UPDATE sessions SET optimizer_settings = ?, created_at = ?, status = 'aborted' WHERE id = ?",
            (json.dumps(old), 1795793347.0, first.session_id),
        )
    connection.close()
    run_session(RunRequest(db_path=db, resume=first.session_id, trials=6), log=lambda m: None, window=window)
    with SessionStore(db, readonly=True) as store:
        info, after = store.session(first.session_id), store.duel_trials(first.session_id)
    assert info.optimizer_settings == old and len(after) == 6  # resuming never rewrites the stored settings
    as_ran = {**old, "trust_centre": "mean", "report_tilt_share": 0.5}
    asked, tilted = (
        presented(PrescriptionDuelOptimizer.from_settings(settings, history(after[:4])).ask(), info.seed, 5)
        for settings in (as_ran, old)
    )
    fifth = history(after[4:5])[0][0]
    assert (fifth.first_lens, fifth.second_lens) == (asked.first_lens, asked.second_lens)
    assert (tilted.first_lens, tilted.second_lens) != (asked.first_lens, asked.second_lens)


@needs_display
def test_a_new_sessions_protocol_is_given_the_start_once(tmp_path, window, monkeypatch):
    """``--start`` is applied to the protocol once, before the simulated patient is checked against
    it, and that protocol runs and is stored (it was applied again inside the run)."""
    from lensopt.experiment.protocol import Protocol

    given, with_start = [], Protocol.with_start
    monkeypatch.setattr(
        Protocol,
        "with_start",
        lambda self, refraction, *rest: given.append(refraction) or with_start(self, refraction, *rest),
    )
    db, outcome = _simulated_session(tmp_path, window, "S1", 1)
    with SessionStore(db, readonly=True) as store:
        info = store.session(outcome.session_id)
    assert given == [START] and info.optimizer_settings["start"] == Lens.parse(START).format()


@needs_display
@pytest.mark.parametrize("eye", ["OD", "OS"])
def test_the_dashboard_shows_the_prescription_and_intervals_the_session_stored(tmp_path, window, eye):
    """The dashboard rebuilds the eye's search as the session ran it (``--eye OS``: the left eye's own
    seed), so that its summary gives the 95 % intervals the console gave and the session stored;
    rebuilt with the session's seed, an OS session's intervals were other draws."""
    from lensopt.dashboard.model import snapshot_from_store

    db = tmp_path / "s.db"
    protocol = write_protocol(tmp_path / "rx-duel.toml", PROTOCOL, **{**SIMULATED, "session.eye": f'"{eye}"'})
    outcome = run_session(
        RunRequest(db_path=db, protocol_path=protocol, participant="RXD", seed=7, trials=6, start=START),
        log=lambda m: None,
        window=window,
    )
    with SessionStore(db, readonly=True) as store:
        (result,) = store.session(outcome.session_id).results
        snap = snapshot_from_store(store, outcome.session_id)
    assert result.eye == eye and snap.prescription == result.prescription
    shown = {key: (low, high) for key, low, high in snap.prescription_intervals}
    assert shown.keys() == result.intervals.keys()
    for key, (low, high) in result.intervals.items():
        assert shown[key] == pytest.approx((low, high), abs=1e-9)
