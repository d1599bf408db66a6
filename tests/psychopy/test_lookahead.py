"""The handler's lookahead (lensopt.psychopy.lookahead): a worker process decides the next trial for
both answers while the patient looks, and the trials are the ones the handler would decide itself.

Each session is run twice, with the lookahead and without, on the same patient answering the same
way; the trials must be equal number for number (``==`` on floats), the stopping rule must end
both loops at the same trial, and the reported lens may differ only within the search's tolerance
(the handler's own optimizer is told every answer but fits once, from the prior, when asked, as a
resumed optimizer does; its posterior-mean search then ends a few 1e-8 D away).
"""

import os
import subprocess
import sys
import time
import warnings
from pathlib import Path

import numpy as np
import pytest

from lensopt.observer import SimulatedPatient
from lensopt.psychopy import RefractionHandler
from lensopt.psychopy.lookahead import LookaheadWorker, _serve, speculative_answers
from lensopt.refraction import DuelRefractionOptimizer, RankingRefractionOptimizer, RefractionOptimizer, Trial
from lensopt.refraction.prescription_letters import PrescriptionOptimizer
from lensopt.stopping import StopRule


def _run(handler, patient):
    """The loop of a Coder script; the patient's answers come from its own seeded stream."""
    for trial in handler:
        handler.addResponse(
            bool(patient.respond(trial["letter_logmar"], trial["sphere_d"], trial["cylinder_d"], trial.get("axis_deg")))
        )
    return handler


def _both(make_optimizer, n_trials, patient_seed=7, **patient):
    """The session without and with the lookahead; a worker that failed (and so fell back to
    in-process decisions, with a RuntimeWarning) is an error here."""
    runs = []
    for lookahead in (False, True):
        with warnings.catch_warnings():
            warnings.simplefilter("error", RuntimeWarning)
            handler = RefractionHandler(make_optimizer(), n_trials=n_trials, lookahead=lookahead)
            runs.append(_run(handler, SimulatedPatient(-1.25, -0.75, seed=patient_seed, **patient)))
    return runs


def test_the_worker_decides_the_trials_the_handler_decides_itself_number_for_number():
    stop = StopRule(confidence=0.3, min_trials=12, max_trials=200)
    plain, ahead = _both(lambda: RefractionOptimizer("ucb-ald", seed=4, stop=stop), n_trials=40)
    assert ahead._worker is None and plain._worker is None  # the loop's end stopped the worker
    assert ahead.trials == plain.trials and len(plain.trials) >= 12
    assert ahead.stopped == plain.stopped
    assert ahead.decision_ms[1:] and all(np.isfinite(ahead.decision_ms))
    np.testing.assert_allclose(ahead.best(), plain.best(), rtol=0, atol=1e-6)


def test_thompson_sampling_and_a_full_prescription_with_its_recentring_decide_the_same_ahead():
    """TS-ALD draws from ``(seed, n_trials)``; the full prescription re-centres its kernel after 30
    letters (its own ``tell`` computes ``best()``): both come out of the worker unchanged."""
    plain, ahead = _both(lambda: RefractionOptimizer("ts-ald", seed=9), n_trials=15)
    assert ahead.trials == plain.trials

    def prescription():
        return PrescriptionOptimizer(seed=3, start="-1.00 / -0.50 x 180")

    plain, ahead = _both(prescription, n_trials=33, axis_deg=175.0)
    assert ahead.trials == plain.trials and len(ahead.trials) == 33
    np.testing.assert_allclose(ahead.best().to_array(), plain.best().to_array(), rtol=0, atol=1e-6)


def test_a_resumed_optimizer_is_continued_from_its_history():
    """Rebuilt from its saved state, as lensopt resumes a session: the worker is where it is."""
    session = RefractionOptimizer(seed=6)
    for answer in (True, False, True, True, False, True, False):
        session.tell(session.ask(), answer)
    state = session.to_state()

    plain, ahead = _both(lambda: RefractionOptimizer.from_state(state), n_trials=8)
    assert ahead.trials == plain.trials and ahead.optimizer.n_trials == 15


def test_a_worker_that_dies_mid_session_is_replaced_by_in_process_decisions_losing_nothing():
    patient = SimulatedPatient(-1.25, -0.75, seed=7)
    handler = RefractionHandler(RefractionOptimizer(seed=4), n_trials=12, lookahead=True)
    with pytest.warns(RuntimeWarning, match="lookahead worker"):
        for trial in handler:
            if handler.thisTrialN == 4:
                handler._worker._process.kill()
                handler._worker._process.wait()
            handler.addResponse(bool(patient.respond(trial["letter_logmar"], trial["sphere_d"], trial["cylinder_d"])))
    (plain,) = _both(lambda: RefractionOptimizer(seed=4), n_trials=12)[:1]
    assert handler.trials == plain.trials and handler.optimizer.n_trials == 12 and handler.data == plain.data


def test_leaving_the_loop_early_and_closing_stops_the_worker():
    handler = RefractionHandler(RefractionOptimizer(seed=1), n_trials=20, lookahead=True)
    next(handler)
    handler.addResponse(True)
    process = handler._worker._process
    handler.close()
    deadline = time.monotonic() + 30
    while process.poll() is None and time.monotonic() < deadline:
        time.sleep(0.05)
    assert process.poll() == 0


def test_only_optimizers_with_a_short_list_of_answers_decide_ahead():
    assert speculative_answers(RefractionOptimizer(seed=0)) == (True, False)
    assert len(speculative_answers(RankingRefractionOptimizer(seed=0))) == 6  # the orders of three lenses
    four = RankingRefractionOptimizer(seed=0, n_lenses=4)  # 24 orders: too many to decide ahead
    assert speculative_answers(four) is None
    assert RefractionHandler(four, n_trials=2)._worker is None  # automatic: off
    assert RefractionHandler(RefractionOptimizer(seed=0), n_trials=2, lookahead=False)._worker is None
    with pytest.raises(ValueError, match="use lookahead=False"):
        RefractionHandler(four, n_trials=2, lookahead=True)
    with pytest.raises(ValueError, match="True, False or None"):
        RefractionHandler(RefractionOptimizer(seed=0), n_trials=2, lookahead="yes")


def test_the_worker_protocol_in_process():
    """The worker's loop, fed its messages directly: ready after init, the first decision on request,
    one decision per answer, each the optimizer's own ``ask``; a message it does not know is an
    error reply."""
    import json

    optimizer = RefractionOptimizer(seed=2)
    twin = RefractionOptimizer(seed=2)
    first = twin.ask()
    replies = []
    init = {
        "op": "init",
        "optimizer": "lensopt.refraction.letters:RefractionOptimizer",
        "state": optimizer.to_state(),
        "check_stop": False,
    }
    query = {"class": "lensopt.refraction.trial:Trial", "fields": vars(first)}
    messages = [
        init,
        {"op": "decide", "check_stop": False},
        {"op": "speculate", "query": query},
        {"op": "answer", "answer": False},
        {"op": "frobnicate"},
        {"op": "quit"},
        {"op": "answer", "answer": True},  # after quit: never read
    ]
    _serve((json.dumps(m) for m in messages), replies.append)
    twin.tell(first, False)
    second = twin.ask()
    assert replies[0] == {"ready": True, "query": None, "n_trials": 0}
    assert replies[1]["query"] == query and replies[1]["n_trials"] == 0
    assert replies[2]["stop"] is False and replies[2]["n_trials"] == 1
    assert Trial(**replies[2]["query"]["fields"]) == second
    assert replies[3] == {"error": "ValueError: unknown message 'frobnicate'"} and len(replies) == 4


def test_an_answer_that_comes_while_the_worker_decides_ahead_is_decided_at_once():
    """The worker looks for a message between two branches: an answer already there stops the
    deciding ahead (no branch decided for the other orders) and gets its own decision, the one the
    optimizer itself takes next."""
    import json

    from lensopt.psychopy.lookahead import _query_to_json

    optimizer = RankingRefractionOptimizer(seed=2)
    twin = RankingRefractionOptimizer(seed=2)
    first = twin.ask()
    told = []
    real_tell = RankingRefractionOptimizer.tell

    def counting_tell(self, trial, order):
        told.append(tuple(order))
        real_tell(self, trial, order)

    init = {"op": "init", "optimizer": f"{RankingRefractionOptimizer.__module__}:RankingRefractionOptimizer"}
    init |= {"state": optimizer.to_state(), "check_stop": False}
    answer = json.dumps({"op": "answer", "answer": [2, 0]})  # the first two lenses only
    lines = iter([json.dumps(init), json.dumps({"op": "speculate", "query": _query_to_json(first)})])
    early = iter([answer])  # there before the first order's branch
    replies = []
    RankingRefractionOptimizer.tell = counting_tell
    try:
        _serve(lines, replies.append, lambda: next(early, None))
    finally:
        RankingRefractionOptimizer.tell = real_tell
    twin.tell(first, (2, 0))
    assert told == [(2, 0)]  # one branch, the answer's: none of the six orders was decided ahead
    assert replies[0]["ready"] and replies[1]["n_trials"] == 1
    assert replies[1]["query"]["fields"]["lenses_d"] == [list(lens) for lens in twin.ask().lenses_d]


def test_a_worker_that_cannot_start_is_a_warning_and_in_process_decisions(monkeypatch):
    import lensopt.psychopy.lookahead as lookahead

    def refuse(*args, **kwargs):
        raise OSError("no such interpreter")

    monkeypatch.setattr(lookahead.subprocess, "Popen", refuse)
    with pytest.warns(RuntimeWarning, match="could not start the lookahead worker"):
        worker = LookaheadWorker(RefractionOptimizer(seed=0), check_stop=False)
    assert not worker.alive
    with pytest.warns(RuntimeWarning):
        handler = RefractionHandler(RefractionOptimizer(seed=0), n_trials=3)
    _run(handler, SimulatedPatient(-1.25, -0.75, seed=7))
    assert len(handler.trials) == 3


@pytest.mark.skipif(not os.environ.get("DISPLAY"), reason="needs an X display (run under xvfb-run)")
def test_the_frame_lateness_example_counts_every_frame_of_every_letter():
    """docs/examples/lookahead_frames.py runs (a real window); its figures are not asserted: a
    timing is a benchmark's, not a test's."""
    script = Path(__file__).resolve().parents[2] / "docs" / "examples" / "lookahead_frames.py"
    result = subprocess.run([sys.executable, str(script), "--trials", "3"], capture_output=True, text=True, timeout=300)
    assert result.returncode == 0, result.stderr[-2000:]
    lines = [line.split(":")[0].strip() for line in result.stdout.splitlines()]
    assert lines == ["lookahead", "in-process"]
    assert result.stdout.count("60 frames, lateness median") == 2


def test_the_frame_lateness_examples_help_lists_its_own_options_not_psychopys(tmp_path):
    """PsychoPy parses the command line when it is imported; the script reads its options first."""
    script = Path(__file__).resolve().parents[2] / "docs" / "examples" / "lookahead_frames.py"
    result = subprocess.run(
        [sys.executable, str(script), "--help"], cwd=tmp_path, capture_output=True, text=True, timeout=120
    )
    assert result.returncode == 0, result.stderr[-2000:]
    assert "PsychoPy Preferences" not in result.stdout
    for option in ("--trials", "--seed", "--thread"):
        assert option in result.stdout


def test_duels_decide_ahead_for_first_second_and_same_whatever_the_answers_spelling():
    """A two-parameter duel has three answers: the worker decides for each; an answer given as a
    bool (True = first) is the same branch as its word."""
    runs = []
    for lookahead in (False, True):
        patient = SimulatedPatient(-1.25, -0.75, seed=5)
        with warnings.catch_warnings():
            warnings.simplefilter("error", RuntimeWarning)  # a failed worker would fall back with a warning
            handler = RefractionHandler(DuelRefractionOptimizer(seed=2), n_trials=10, lookahead=lookahead)
            for n, _ in enumerate(handler):
                query = handler.query
                answer = patient.duel_answer(query.letter_logmar, query.first_lens_d, query.second_lens_d, 0.05)
                handler.addResponse({"first": True, "second": False}.get(answer, answer) if n % 2 else answer)
        runs.append(handler)
    plain, ahead = runs
    assert plain._worker is None and ahead.trials == plain.trials and len(ahead.trials) == 10
    assert speculative_answers(DuelRefractionOptimizer(seed=0)) == ("first", "second", "same")


def test_the_acuity_law_optimizer_decides_the_same_trials_ahead():
    """The acuity-law optimizer (a grid posterior, rebuilt in the worker from its saved state) with
    its stopping rule: the same trials, the same stop, the same reported lens."""
    from lensopt.refraction.acuity_law import AcuityLawOptimizer

    stop = StopRule(confidence=0.5, min_trials=10, max_trials=200)
    plain, ahead = _both(lambda: AcuityLawOptimizer(seed=5, stop=stop), n_trials=30)
    assert ahead.trials == plain.trials and len(plain.trials) >= 10
    assert ahead.stopped == plain.stopped
    assert ahead.best() == plain.best()


def test_full_prescription_duels_through_the_acuity_link_decide_the_same_duels_ahead():
    """The full prescription's duels (lenses with their axes: a query of nested dataclasses, which
    travels to the worker and back as JSON) decide ahead for their three answers, duel for duel as
    the handler would itself, through the acuity link."""
    from lensopt.psychopy.lookahead import _query_from_json, _query_to_json
    from lensopt.refraction.lens import Lens
    from lensopt.refraction.prescription_duels import PrescriptionDuelOptimizer, PrescriptionDuelTrial

    duel = PrescriptionDuelTrial(Lens(-1.25, -0.75, 170.0), Lens(-1.0, -0.5, 3.0), 0.3)
    assert _query_from_json(_query_to_json(duel)) == duel
    runs = []
    for lookahead in (False, True):
        patient = SimulatedPatient(-1.25, -0.75, slope=14.0, axis_deg=175.0, seed=5)
        optimizer = PrescriptionDuelOptimizer(seed=2, start="-1.00 / -0.50 x 180")
        assert optimizer.clarity_link == "acuity"
        with warnings.catch_warnings():
            warnings.simplefilter("error", RuntimeWarning)  # a failed worker would fall back with a warning
            handler = RefractionHandler(optimizer, n_trials=6, lookahead=lookahead)
            for _ in handler:
                lenses = [
                    (x.sphere_d, x.cylinder_d, x.axis_deg)
                    for x in (handler.query.first_lens, handler.query.second_lens)
                ]
                handler.addResponse(patient.duel_answer(handler.query.letter_logmar, *lenses, tie_threshold=1.0))
        runs.append(handler)
    plain, ahead = runs
    assert ahead._worker is None and ahead.trials == plain.trials and len(ahead.trials) == 6
    assert speculative_answers(runs[0].optimizer) == ("first", "second", "same")


def _rank_both(make_optimizer, n_trials, lenses_of, patient):
    """A ranking session without and with the lookahead; every other answer names the first two
    lenses only (the third is implied), which the worker must take for the whole order."""
    runs = []
    for lookahead in (False, True):
        with warnings.catch_warnings():
            warnings.simplefilter("error", RuntimeWarning)  # a failed worker would fall back with a warning
            handler = RefractionHandler(make_optimizer(), n_trials=n_trials, lookahead=lookahead)
            answerer = patient()
            for n, _ in enumerate(handler):
                order = answerer.rank_lenses(handler.query.letter_logmar, lenses_of(handler.query))
                handler.addResponse(list(order[:-1]) if n % 2 else tuple(order))
        runs.append(handler)
    return runs


def test_rankings_decide_ahead_for_every_order_of_three_lenses():
    """A ranking of three lenses has six answers: the worker decides for each, and a ranking given
    as its first two lenses is the branch of its whole order; the rankings are the ones the handler
    decides itself."""
    plain, ahead = _rank_both(
        lambda: RankingRefractionOptimizer(seed=2),
        8,
        lambda query: query.lenses_d,
        lambda: SimulatedPatient(-1.25, -0.75, seed=5),
    )
    assert plain._worker is None and len(ahead.trials) == 8
    assert ahead.trials == plain.trials
    assert RankingRefractionOptimizer(seed=0).canonical_answer([2, 0]) == (2, 0, 1)


def test_full_prescription_rankings_through_the_acuity_link_decide_the_same_rankings_ahead():
    """The full prescription's rankings (a tuple of lenses with their axes, which travels to the
    worker and back as nested JSON) decide ahead through the acuity link, ranking for ranking."""
    from lensopt.psychopy.lookahead import _query_from_json, _query_to_json
    from lensopt.refraction.lens import Lens
    from lensopt.refraction.prescription_rankings import PrescriptionRankingOptimizer, PrescriptionRankingTrial

    ranking = PrescriptionRankingTrial((Lens(-1.25, -0.75, 170.0), Lens(-1.0, -0.5, 3.0), Lens(-1.5, 0.0, 0.0)), 0.3)
    assert _query_from_json(_query_to_json(ranking)) == ranking
    plain, ahead = _rank_both(
        lambda: PrescriptionRankingOptimizer(seed=2, start="-1.00 / -0.50 x 180"),
        5,
        lambda query: query.lens_triples,
        lambda: SimulatedPatient(-1.25, -0.75, slope=14.0, axis_deg=175.0, seed=5),
    )
    assert plain._worker is None and len(ahead.trials) == 5
    assert ahead.trials == plain.trials
