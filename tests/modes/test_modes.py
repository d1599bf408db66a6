"""Each feedback mode: its simulated answers are valid answers, and its history survives the store."""

from __future__ import annotations

import pytest

from lensopt.modes.registry import get_mode, registry
from lensopt.refraction.letters import RefractionOptimizer
from lensopt.simulation import make_patient
from lensopt.store import DuelTrialRecord, RankingTrialRecord, SessionStore, TrialRecord

N_TRIALS = 6


def _optimizer(mode, seed=0):
    return mode.new_optimizer({}, rule="random", seed=seed, lens_step_d=0.25)


def _record(kind, index, query, answer):
    """The store's record of one answered ``query`` of ``kind``, as the experiment would write it."""
    times = dict(rt_s=0.5, presented_at=1000.0 + index, answered_at=1000.5 + index)
    if kind == "letters":
        return TrialRecord(
            index, query.sphere_d, query.cylinder_d, query.letter_logmar, "K", "K" if answer else "D", answer, **times
        )
    if kind == "duel":
        return DuelTrialRecord(
            index, *query.first_lens_d, *query.second_lens_d, query.letter_logmar, "KDRSH", answer, **times
        )
    return RankingTrialRecord(index, query.lenses_d, query.letter_logmar, "KDRSH", answer, **times)


@pytest.mark.parametrize("kind", list(registry))
def test_every_simulated_answer_is_a_valid_answer(kind):
    mode = registry[kind]
    for seed in range(3):
        optimizer = _optimizer(mode, seed)
        respond = mode.responder(make_patient(seed), **dict.fromkeys(mode.answer_options, 1.0))
        for _ in range(N_TRIALS):
            query = optimizer.ask()
            assert isinstance(query, mode.query_type)
            answer = respond(query)
            assert mode.is_valid_answer(query, answer), (kind, query, answer)
            if mode.answers is not None:
                assert answer in mode.answers
            optimizer.tell(query, answer)


@pytest.mark.parametrize("kind", list(registry))
def test_a_wrong_answer_is_not_valid(kind):
    mode = registry[kind]
    query = _optimizer(mode).ask()
    for wrong in ("maybe", None, 2.5, (0, 0, 0)):
        assert not mode.is_valid_answer(query, wrong)


@pytest.mark.parametrize("kind", list(registry))
def test_the_history_round_trips_through_the_store(kind, tmp_path):
    """Answers told to an optimizer, stored as records of the mode's kind and read back, are the
    mode's history; the optimizer rebuilt from it asks the same next query."""
    mode = registry[kind]
    optimizer = _optimizer(mode, seed=2)
    respond = mode.responder(make_patient(2))
    told = []
    with SessionStore(tmp_path / "sessions.db") as store:
        session_id = store.create_session("P1", {}, {}, optimizer.settings_dict(), 2, kind=kind)
        for index in range(1, N_TRIALS + 1):
            query = optimizer.ask()
            answer = respond(query)
            optimizer.tell(query, answer)
            told.append((query, answer))
            store.append_kind_trial(kind, session_id, _record(kind, index, query, answer))
        records = store.kind_trials(kind, session_id)
        assert store.session_trials(session_id) == records
    history = mode.history(records)
    assert len(history) == N_TRIALS
    for (query, answer), (stored_query, stored_answer) in zip(told, history):
        assert isinstance(stored_query, mode.query_type)
        assert stored_query == query and stored_answer == answer
    rebuilt = mode.rebuild_optimizer(optimizer.settings_dict(), records)
    assert rebuilt.n_trials == N_TRIALS
    assert rebuilt.ask() == optimizer.ask()


def test_the_store_refuses_an_unknown_kind(tmp_path):
    with SessionStore(tmp_path / "sessions.db") as store:
        session_id = store.create_session("P1", {}, {}, {}, 0)
        with pytest.raises(ValueError, match="kind must be one of letters, duel, ranking, got 'lines'"):
            store.kind_trials("lines", session_id)
        with pytest.raises(ValueError, match="kind must be one of letters, duel, ranking, got 'lines'"):
            store.append_kind_trial("lines", session_id, None)


def test_eye_records_keep_one_eyes_letters_and_every_comparison_of_a_one_eye_session():
    from types import SimpleNamespace

    from lensopt.modes.base import eye_records

    letters = [SimpleNamespace(eye=e, index=i) for i, e in enumerate(["OD", "OD", "OS", None])]
    assert [r.index for r in eye_records(letters, "OD")] == [0, 1]
    assert [r.index for r in eye_records(letters, "OS")] == [2]
    assert [r.index for r in eye_records(letters, None)] == [3]  # a session that named no eye
    duels = [SimpleNamespace(index=i) for i in range(3)]  # a comparison's record stores no eye
    assert [r.index for r in eye_records(duels, "OS")] == [0, 1, 2] == [r.index for r in eye_records(duels, None)]


def test_a_stored_session_its_optimizer_refuses_is_said_to_be_the_stored_sessions_problem():
    """``unknown rule 5; choose one of ...`` alone read as if the command line were wrong."""
    mode = get_mode("letters")
    settings = {**RefractionOptimizer(seed=1).settings_dict(), "rule": 5}
    with pytest.raises(ValueError) as refused:
        mode.rebuild_optimizer(settings, [])
    message = str(refused.value)
    assert message.startswith("the session's stored settings and answers do not rebuild its optimizer (unknown rule 5")
    assert message.endswith("if another program changed the database, restore it from a copy")
