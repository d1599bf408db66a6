"""A duel session's dashboard numbers: checked against the duel optimizer rebuilt on the same duels."""

from __future__ import annotations

import numpy as np
import pytest

from lensopt.dashboard.duel_model import DuelSessionModel, utility_profile
from lensopt.dashboard.duel_snapshot import WAITING_DUEL_MESSAGE, DuelSnapshot
from lensopt.dashboard.model import snapshot_from_store
from lensopt.duel_refraction import DuelRefractionOptimizer, DuelTrial
from lensopt.store import SessionStore

N_DUELS = 12


@pytest.fixture(scope="module", params=["probit", "ties"])
def session(request, tmp_path_factory, store_simulated_duels):
    path = tmp_path_factory.mktemp(f"duel-model-{request.param}") / "s.db"
    sid, opt = store_simulated_duels(path, N_DUELS, model=request.param)
    with SessionStore(path, readonly=True) as store:
        info, records = store.session(sid), store.duel_trials(sid)
    model = DuelSessionModel(info)
    return {"info": info, "records": records, "opt": opt, "model": model, "snap": model.update(info, records),
            "path": path, "sid": sid}


def _rebuilt(session, n=None):
    history = [(DuelTrial(r.first_lens_d, r.second_lens_d, r.letter_logmar), r.answer)
               for r in session["records"][:n]]
    return DuelRefractionOptimizer.from_settings(session["info"].optimizer_settings, history)


def test_snapshot_best_lens_and_answers_are_the_rebuilt_optimizers(session):
    snap, opt = session["snap"], _rebuilt(session)
    assert isinstance(snap, DuelSnapshot) and snap.live and snap.n_trials == N_DUELS
    np.testing.assert_allclose((snap.best.sphere_d, snap.best.cylinder_d), opt.best_lens(), atol=1e-12)
    counts = {a: sum(answer == a for _, answer in session["opt"].history) for a in ("first", "second", "same")}
    assert snap.duels.counts() == counts
    sphere, cylinder = opt.best_lens()
    line = snap.summary_line()
    assert f"{N_DUELS} duels (first {counts['first']}, second {counts['second']}, same {counts['same']})" in line
    assert f"best lens S {sphere:+.2f} ± " in line and f"C {cylinder:+.2f} ± " in line
    assert snap.model == session["info"].optimizer_settings["model"] and snap.elapsed_s == 10.0 * N_DUELS - 9.0


def test_utility_map_is_the_posterior_mean_at_the_reference_letters_and_peaks_near_the_best_lens(session):
    snap, opt = session["snap"], _rebuilt(session)
    um = snap.utility_map
    assert um.letter_logmar == opt.reference_letter_logmar
    s, c = np.meshgrid(um.sphere_d, um.cylinder_d)
    mean, var = opt.predict_utility(um.letter_logmar, np.column_stack([s.ravel(), c.ravel()]))
    np.testing.assert_allclose(um.mean, mean.reshape(um.mean.shape), rtol=1e-10, atol=1e-10)
    np.testing.assert_allclose(um.sd, np.sqrt(var).reshape(um.sd.shape), rtol=1e-10, atol=1e-10)
    at_best = opt.predict_utility(um.letter_logmar, [opt.best_lens()])[0][0]
    assert at_best >= um.mean.max() - 1e-6  # no grid lens beats the reported best lens


def test_best_lens_spread_is_positive_and_its_region_holds_the_samples_mean(session):
    best = session["snap"].best
    assert best.sphere_sd_d > 0 and best.cylinder_sd_d > 0
    assert best.samples_d.shape[1] == 2 and best.region_d.shape[1] == 2
    center = best.samples_d.mean(axis=0)
    assert np.all(best.region_d.min(axis=0) < center) and np.all(center < best.region_d.max(axis=0))


def test_utility_profile_is_a_difference_from_the_best_lens_with_zero_spread_there(session):
    opt = _rebuilt(session)
    reference = opt.reference_letter_logmar
    on_grid = (0.0, 0.5)  # a lens on both 81-point lines over [-4, 4]: f(x) − f(x) is exactly 0
    profile = utility_profile(opt, reference, on_grid, (-4.0, 4.0), (-4.0, 4.0))
    at = int(np.argmin(np.abs(profile.sphere_d - 0.0)))
    assert profile.sphere_mean[at] == pytest.approx(0.0, abs=1e-9)
    assert profile.sphere_sd[at] == pytest.approx(0.0, abs=1e-4)
    lenses = np.column_stack([profile.cylinder_d * 0.0, profile.cylinder_d])
    mean = opt.predict_utility(reference, lenses)[0] - opt.predict_utility(reference, [on_grid])[0][0]
    np.testing.assert_allclose(profile.cylinder_mean, mean, rtol=1e-9, atol=1e-9)
    best = session["snap"].profile
    assert best.sphere_mean.max() <= 1e-6 and best.cylinder_mean.max() <= 1e-6  # nothing beats the best


def test_replay_snapshot_is_the_optimizer_rebuilt_on_the_first_duels(session):
    snap = session["model"].snapshot(5)
    assert not snap.live and snap.n_trials == 5
    np.testing.assert_allclose((snap.best.sphere_d, snap.best.cylinder_d), _rebuilt(session, 5).best_lens(),
                               atol=1e-12)


def test_snapshot_from_store_picks_the_duel_model_for_a_duel_session(session):
    with SessionStore(session["path"], readonly=True) as store:
        snap = snapshot_from_store(store, session["sid"])
    assert isinstance(snap, DuelSnapshot) and snap.best.sphere_d == session["snap"].best.sphere_d


def test_a_duel_session_without_duels_waits_for_the_first_one(session):
    snap = DuelSessionModel(session["info"]).update(session["info"], [])
    assert snap.best is None and snap.utility_map is None and snap.message == WAITING_DUEL_MESSAGE
    assert "0 duels" in snap.summary_line() and "waiting for the first duel" in snap.summary_line()
