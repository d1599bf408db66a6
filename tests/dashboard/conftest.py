"""Shared by the dashboard tests: simulated duel and ranking sessions stored as the experiment stores them."""

import pytest


def _store_simulated_duels(path, n_duels, model="probit", seed=2, participant="D02"):
    """A simulated duel session in the database at ``path``; returns (session id, optimizer)."""
    from lensopt.observer import SimulatedPatient
    from lensopt.refraction.duels import DuelRefractionOptimizer
    from lensopt.store import DuelTrialRecord, SessionStore

    opt = DuelRefractionOptimizer(seed=seed, lens_step_d=0.25, model=model)
    patient = SimulatedPatient(-1.25, -0.75, seed=seed)
    with SessionStore(path) as store:
        sid = store.create_session(participant, {}, {}, opt.settings_dict(), seed, kind="duel")
        for i in range(1, n_duels + 1):
            trial = opt.ask()
            answer = patient.duel_answer(
                trial.letter_logmar, trial.first_lens_d, trial.second_lens_d, tie_threshold=1.0
            )
            opt.tell(trial, answer)
            store.append_duel_trial(
                sid,
                DuelTrialRecord(
                    i,
                    *trial.first_lens_d,
                    *trial.second_lens_d,
                    trial.letter_logmar,
                    "CDHKN",
                    answer,
                    1.0,
                    100.0 + 10.0 * i,
                    101.0 + 10.0 * i,
                ),
            )
    return sid, opt


def _store_simulated_rankings(path, n_rankings, n_lenses=3, seed=2, participant="R02"):
    """A simulated ranking session in the database at ``path``; returns (session id, optimizer)."""
    from lensopt.observer import SimulatedPatient
    from lensopt.refraction.rankings import RankingRefractionOptimizer
    from lensopt.store import RankingTrialRecord, SessionStore

    opt = RankingRefractionOptimizer(seed=seed, n_lenses=n_lenses, lens_step_d=0.25)
    patient = SimulatedPatient(-1.25, -0.75, seed=seed)
    with SessionStore(path) as store:
        sid = store.create_session(participant, {}, {}, opt.settings_dict(), seed, kind="ranking")
        for i in range(1, n_rankings + 1):
            trial = opt.ask()
            order = patient.rank_lenses(trial.letter_logmar, trial.lenses_d)
            opt.tell(trial, order)
            store.append_ranking_trial(
                sid,
                RankingTrialRecord(
                    i, trial.lenses_d, trial.letter_logmar, "CDHKN", order, 1.0, 100.0 + 10.0 * i, 101.0 + 10.0 * i
                ),
            )
    return sid, opt


@pytest.fixture(scope="session")
def store_simulated_duels():
    """``store(path, n_duels, model="probit", seed=2)``: a simulated duel session, (session id, optimizer)."""
    return _store_simulated_duels


@pytest.fixture(scope="session")
def store_simulated_rankings():
    """``store(path, n_rankings, n_lenses=3, seed=2)``: a simulated ranking session, (session id, optimizer)."""
    return _store_simulated_rankings
