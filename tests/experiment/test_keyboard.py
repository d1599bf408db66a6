"""Answer sources: injected key presses and the simulated patient (no window)."""

import numpy as np
import pytest

from lensopt.experiment.keyboard import InjectedKeySource, SimulatedSource, letter_key
from lensopt.observer import SimulatedPatient
from lensopt.refraction.trial import Trial

PATIENT = dict(sphere_d=-1.0, cylinder_d=0.5, slope=5.0, lapse=0.0, va_best_logmar=0.0)
KEYS = [letter_key(c) for c in "ABCDEFGHIJKLMNOPQRSTUVWXYZ"] + ["space", "escape"]


def test_injected_keys_resolve_correct_and_wrong_against_the_shown_letter():
    source = InjectedKeySource(["<correct>", "<wrong>", "space", ("escape", 0.1)])
    trial = Trial(0.0, 0.0, 0.2)
    assert source.letter_response(trial, "K", KEYS).key == "k"
    wrong = source.letter_response(trial, "K", KEYS).key
    assert wrong != "k" and len(wrong) == 1
    assert source.letter_response(trial, "K", KEYS).key == "space"
    press = source.wait_for(["escape"])
    assert press.key == "escape" and press.rt_s == 0.1


def test_injected_keys_skip_keys_the_screen_ignores_and_refuse_to_hang():
    source = InjectedKeySource(["x", "return", "space"])
    assert source.wait_for(["space"]).key == "space"
    assert source.consumed == ["x", "return", "space"]
    with pytest.raises(RuntimeError, match="ran out"):
        source.wait_for(["space"])


def test_simulated_answers_depend_only_on_seed_and_trial_index():
    a = SimulatedSource(PATIENT, "ABCDEFGHIJKLMNOPQRSTUVWXYZ", seed=4)
    b = SimulatedSource(PATIENT, "ABCDEFGHIJKLMNOPQRSTUVWXYZ", seed=4)
    trial = Trial(-1.0, 0.5, 0.05)
    answers_a = [a.answer(trial, "H", i) for i in range(1, 40)]
    answers_b = [b.answer(trial, "H", i) for i in reversed(range(1, 40))][::-1]
    assert answers_a == answers_b
    assert answers_a != [
        SimulatedSource(PATIENT, "ABCDEFGHIJKLMNOPQRSTUVWXYZ", 5).answer(trial, "H", i) for i in range(1, 40)
    ]


def test_simulated_hit_rate_matches_the_patients_psychometric_function():
    # Monte Carlo over trial indices against SimulatedPatient.p_correct (binomial 4-sigma band)
    alphabet = "CDHKNORSVZ"
    source = SimulatedSource(PATIENT, alphabet, seed=11)
    trial = Trial(0.0, 0.0, 0.35)  # 1 D sphere and 0.5 D cylinder off: near threshold
    p = SimulatedPatient(**PATIENT, n_alternatives=10).p_correct(0.35, 0.0, 0.0)
    n = 2000
    hits = sum(source.answer(trial, "S", i) == "s" for i in range(1, n + 1))
    assert 0.2 < p < 0.8
    assert abs(hits / n - p) < 4 * np.sqrt(p * (1 - p) / n)


def test_simulated_wrong_answers_name_another_letter_of_the_alphabet():
    alphabet = "CDHKNORSVZ"
    source = SimulatedSource(PATIENT, alphabet, seed=2)
    tiny = Trial(4.0, -4.0, -1.0)  # far from the correction, tiny letter: mostly guesses
    answers = {source.answer(tiny, "O", i) for i in range(1, 300)}
    assert answers <= {letter_key(c) for c in alphabet}
    assert len(answers) == len(alphabet)  # guesses spread over the set, the shown letter included


def test_simulated_source_confirms_prompts_with_the_confirm_key():
    source = SimulatedSource(PATIENT, "ABC", seed=0, confirm_key="space")
    assert source.wait_for(["space", "escape"]).key == "space"
    assert source.human is source


def test_a_simulated_patient_slower_than_the_timeout_times_out_as_a_real_one_would():
    source = SimulatedSource(PATIENT, "ABCDEFGHIJKLMNOPQRSTUVWXYZ", seed=4, response_delay_s=0.06)
    trial = Trial(-1.0, 0.5, 0.05)
    assert source.letter_response(trial, "H", KEYS, timeout_s=0.02, index=1) is None  # 0.02 s < 0.06 s
    answered = source.letter_response(Trial(-1.0, 0.5, 0.05), "H", KEYS, timeout_s=0.5, index=2)
    assert answered.key == source.answer(trial, "H", 2) and answered.rt_s == 0.06
    assert source.letter_response(trial, "H", KEYS, index=3).key == source.answer(trial, "H", 3)  # no timeout


def test_a_simulated_patients_time_runs_on_when_the_letter_is_hidden_after_letter_s():
    """The loop asks for the answer twice when ``letter_s`` hides the letter first: within ``letter_s``,
    then for the rest of the timeout; the patient's 0.06 s run from the letter's onset."""
    source = SimulatedSource(PATIENT, "ABCDEFGHIJKLMNOPQRSTUVWXYZ", seed=4, response_delay_s=0.06)
    trial = Trial(-1.0, 0.5, 0.05)
    assert source.letter_response(trial, "H", KEYS, timeout_s=0.02, index=1) is None  # still looking
    answer = source.letter_response(trial, "H", KEYS, timeout_s=None, index=1)  # the letter hidden
    assert answer.key == source.answer(trial, "H", 1) and answer.rt_s == 0.06
    # letter_s 0.02 and a timeout of 0.04 in all: the rest (0.02 s) ends before the patient answers
    later = Trial(-1.0, 0.5, 0.1)
    assert source.letter_response(later, "H", KEYS, timeout_s=0.02, index=2) is None
    assert source.letter_response(later, "H", KEYS, timeout_s=0.02, index=2) is None


def test_an_answer_the_store_refuses_is_kept_in_a_rescue_file(tmp_path):
    import json

    from lensopt.errors import StoreError
    from lensopt.experiment.rescue import recorder as _recorder
    from lensopt.store import TrialRecord

    class LockedStore:
        def append_trial(self, session_id, record):
            raise StoreError("database s.db is locked by another program; close it")

    rescue = tmp_path / "s.db.session-3.unsaved.jsonl"
    record = TrialRecord(4, -1.0, 0.25, 0.3, "K", "pass", False, 1.2, 1.7e9, 1.7e9 + 1.2)
    with pytest.raises(StoreError, match=r"locked .*trial 4 was saved to .*unsaved\.jsonl"):
        _recorder(LockedStore(), 3, [rescue])(record)
    saved = json.loads(rescue.read_text())
    assert TrialRecord(**saved) == record


DUEL_KEYS = {"first": "1", "second": "2", "same": "s"}


def test_simulated_duel_answers_depend_only_on_seed_and_trial_index():
    from lensopt.experiment.keyboard import SimulatedDuelSource
    from lensopt.refraction.duels import DuelTrial

    def source(seed):
        return SimulatedDuelSource(PATIENT, "CDHKNORSVZ", seed, DUEL_KEYS, tie_threshold=1.0)

    trial = DuelTrial((-1.0, 0.5), (0.0, 0.5), 0.3)
    forward = [source(4).duel_response(trial, "CDHKN", ["1", "2", "s", "escape"], index=i).key for i in range(1, 40)]
    backward = [source(4).duel_response(trial, "CDHKN", ["1", "2", "s"], index=i).key for i in reversed(range(1, 40))]
    assert forward == backward[::-1] and set(forward) <= {"1", "2", "s"}
    assert forward != [source(5).duel_response(trial, "CDHKN", ["1"], index=i).key for i in range(1, 40)]


def test_simulated_duel_answer_rates_match_the_patients_tie_model():
    # Monte Carlo over trial indices against SimulatedPatient.p_choice_outcomes (4-sigma bands)
    from lensopt.experiment.keyboard import SimulatedDuelSource
    from lensopt.refraction.duels import DuelTrial

    source = SimulatedDuelSource(PATIENT, "CDHKNORSVZ", 9, DUEL_KEYS, tie_threshold=1.0)
    trial = DuelTrial((-1.0, 0.5), (0.0, 0.0), 0.3)  # lens 1 is the correction
    p = SimulatedPatient(**PATIENT, n_alternatives=10).p_choice_outcomes(
        0.3, [trial.first_lens_d, trial.second_lens_d], tie_threshold=1.0
    )
    n = 3000
    answers = [source.duel_answer(trial, i) for i in range(1, n + 1)]
    for k, answer in enumerate(("first", "second", "same")):
        rate = answers.count(answer) / n
        assert abs(rate - p[k]) < 4 * np.sqrt(p[k] * (1 - p[k]) / n) + 1e-9, (answer, rate, p[k])
    assert p[2] > 0.05  # ties are a real outcome here
