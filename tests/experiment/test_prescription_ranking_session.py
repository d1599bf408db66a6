"""Rankings of the full prescription in a real PsychoPy window: ``lensopt run`` with a ranking
protocol and a starting refraction asks for three lenses with their axes, stores every order with
the axes, ends with a stored prescription, and resumes after a kill as the uninterrupted session
would."""

import pytest

from experiment_helpers import FAST, REPO, kill_mid_way_and_resume, needs_display, write_protocol
from lensopt.experiment.console import NO_BREAK
from lensopt.experiment.protocol import load_protocol
from lensopt.experiment.session import RunRequest, run_session
from lensopt.modes import registry
from lensopt.modes.base import eye_settings
from lensopt.modes.presentation import presented
from lensopt.refraction.lens import Lens
from lensopt.refraction.prescription_rankings import PrescriptionRankingOptimizer
from lensopt.store import SessionStore
from lensopt.store.export import export_session

PROTOCOL = REPO / "protocols" / "clinical-prescription-ranking.toml"
SIMULATED = {**FAST, "display.fullscreen": "false", "protocol.observer": '"simulated"', "session.eye": '"OD"'}
START = "-1.00 / -0.50 x 180"


def history(records):
    """The stored rankings as the optimizer is told them (the ranking mode's own history)."""
    return registry.get_mode("ranking").history(records)


def lenses(record) -> tuple[Lens, ...]:
    return tuple(Lens(S, C, a) for (S, C), a in zip(record.lenses_d, record.axes_deg, strict=True))


def test_the_shipped_protocol_needs_a_start_and_then_builds_the_prescription_ranking_optimizer():
    from lensopt.experiment.modes import mode_for

    protocol = load_protocol(PROTOCOL)
    assert protocol.feedback_mode == "ranking" and not protocol.start.given
    protocol = protocol.with_start(START)
    optimizer = mode_for(protocol).new_optimizer(protocol, seed=3, letter_bounds_logmar=(-0.3, 0.9))
    assert isinstance(optimizer, PrescriptionRankingOptimizer) and optimizer.start == Lens(-1.0, -0.5, 180.0)
    assert optimizer.settings_dict()["search"] == "prescription" and optimizer.lens_step_d == 0.25
    assert optimizer.n_lenses == 3 and optimizer.rule == "mpes-ald"


@needs_display
def test_a_simulated_prescription_ranking_session_stores_axes_and_its_prescription(tmp_path, window):
    db = tmp_path / "s.db"
    protocol = write_protocol(tmp_path / "rx-ranking.toml", PROTOCOL, **SIMULATED)
    lines = []
    outcome = run_session(
        RunRequest(db_path=db, protocol_path=protocol, participant="RXR", seed=7, trials=8, start=START),
        log=lines.append,
        window=window,
    )
    assert outcome.status == "finished" and outcome.n_trials == 8
    with SessionStore(db, readonly=True) as store:
        info = store.session(outcome.session_id)
        stored = store.ranking_trials(outcome.session_id)
        csv_text = export_session(store, outcome.session_id, "csv")
    assert info.kind == "ranking" and info.optimizer_settings["search"] == "prescription"
    assert all(r.has_axes for r in stored) and len(stored) == 8
    # what was stored is what the optimizer asked, lens for lens with the axes, in the order shown
    # (counterbalanced), told back as shown
    replay = PrescriptionRankingOptimizer.from_settings(info.optimizer_settings)
    for record, (trial, order) in zip(stored, history(stored), strict=True):
        asked = presented(replay.ask(), info.seed, record.index)
        assert asked.lenses == lenses(record) == trial.lenses
        assert asked.letter_logmar == pytest.approx(trial.letter_logmar, abs=1e-9)
        replay.tell(trial, order)
    # the registry rebuilds the same optimizer from the stored rows
    rebuilt = registry.get_mode("ranking").rebuild_optimizer(info.optimizer_settings, stored)
    assert isinstance(rebuilt, PrescriptionRankingOptimizer) and rebuilt.prescription() == replay.prescription()
    # the clinician was told each lens in clinical notation, axis included
    told = [line for line in lines if line.startswith("clinician: lens 1 ")]
    first = lenses(stored[0])
    assert len(told) == 8
    assert told[0] == f"clinician: lens 1 {first[0].format()} / lens 2 {first[1].format()} / lens 3 {first[2].format()}"
    # the result: the optimizer's prescription, stored and printed
    (result,) = info.results
    assert result.prescription == replay.prescription().text and result.n_trials == 8
    assert result.confidence is None and result.predicted_acuity_logmar is None
    assert any(result.prescription in line for line in lines)
    # 8 rankings: fewer than lensopt's accuracy was measured after, no prescription yet — as the log says it
    assert any(
        line.endswith(
            "not enough answers to prescribe; only 8 rankings; lensopt's accuracy was measured after 40; "
            "about 32 more rankings recommended"
        )
        for line in lines
    ), lines
    header, *rows = csv_text.strip().splitlines()
    assert {"lens_1_axis_deg", "lens_2_axis_deg", "lens_3_axis_deg"} <= set(header.split(",")) and len(rows) == 8


@needs_display
@pytest.mark.parametrize("eye", ["OD", "OS"])
def test_a_prescription_ranking_session_killed_mid_way_resumes_as_the_uninterrupted_one(tmp_path, eye):
    """Also of one eye (``--eye OS``: the left eye's own seed), whose result is stored for that eye."""
    db = tmp_path / "s.db"
    protocol = write_protocol(
        tmp_path / "rx-ranking.toml", PROTOCOL, **{**SIMULATED, "timing.simulated_response_s": "0.3"}
    )
    sid, info, before, after, resumed = kill_mid_way_and_resume(
        db, protocol, lambda store, sid: store.ranking_trials(sid), ("--start", START, *(("--eye", eye) if eye else ()))
    )
    settings = eye_settings(info.optimizer_settings, eye)
    k = len(before)
    assert after[:k] == before and [r.index for r in after] == list(range(1, 9))
    # the resumed session asked what the uninterrupted one would have asked next
    proposal = presented(PrescriptionRankingOptimizer.from_settings(settings, history(before)).ask(), info.seed, k + 1)
    assert lenses(after[k]) == proposal.lenses
    # and ends where a session told the same orders without a kill ends
    uninterrupted = PrescriptionRankingOptimizer.from_settings(settings, history(after))
    with SessionStore(db, readonly=True) as store:
        (result,) = store.session(sid).results
    assert result.n_trials == 8 and result.prescription == uninterrupted.prescription().text and result.eye == eye
    assert "prescription" in resumed.stdout


@needs_display
def test_the_console_names_each_lens_in_clinical_notation_and_lists_each_order(tmp_path, window, drawn_texts):
    """The clinician's console asks for the three lenses of each ranking in clinical notation,
    axis included, and lists the orders given (2>1>3)."""
    from psychopy import visual

    console_win = visual.Window(size=(900, 640), units="pix", checkTiming=False, winType="pyglet")
    db = tmp_path / "s.db"
    protocol = write_protocol(tmp_path / "rx-ranking.toml", PROTOCOL, **SIMULATED)
    try:
        outcome = run_session(
            RunRequest(db_path=db, protocol_path=protocol, participant="C", seed=2, trials=4, start=START),
            log=lambda m: None,
            window=window,
            console_window=console_win,
        )
    finally:
        console_win.close()
    with SessionStore(db, readonly=True) as store:
        stored = store.ranking_trials(outcome.session_id)
    on_console = [text.replace(NO_BREAK, " ") for win, text in drawn_texts if win is console_win]
    for record in stored:
        listed = "\n".join(f"{k}:  {lens.format()}" for k, lens in enumerate(lenses(record), start=1))
        assert any(listed in text for text in on_console), (listed, on_console[-3:])
    last = "   ".join(f"{k}: {'>'.join(str(i + 1) for i in r.order)}" for k, r in enumerate(stored, start=1))
    assert any(f"Last answers:  {last}" in text for text in on_console), on_console[-3:]
