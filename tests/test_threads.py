"""lensopt.threads: one BLAS thread inside a decision, restored afterwards, nested, configurable."""

import threading

import numpy as np
import pytest
import scipy.linalg  # noqa: F401  (both BLAS libraries loaded, as in a user's script)
from threadpoolctl import threadpool_info, threadpool_limits

from lensopt import threads
from lensopt.threads import ENV_VAR, blas_single_thread, blas_threads_setting, is_single_threaded, single_threaded


def _blas_threads():
    counts = [info["num_threads"] for info in threadpool_info() if info["user_api"] == "blas"]
    assert counts, "no BLAS library found by threadpoolctl"
    return counts


@pytest.fixture(autouse=True)
def _default_setting(monkeypatch):
    monkeypatch.delenv(ENV_VAR, raising=False)


@pytest.fixture
def two_threads():
    """BLAS at 2 threads (conftest sets 1 through the environment), so the limit shows."""
    with threadpool_limits(2, user_api="blas"):
        assert set(_blas_threads()) == {2}
        yield


def test_limit_inside_and_restored_after(two_threads):
    with blas_single_thread():
        assert set(_blas_threads()) == {1}
        np.linalg.cholesky(np.eye(3) * 2.0)
    assert set(_blas_threads()) == {2}


def test_nested_blocks_keep_the_limit_until_the_outermost_ends(two_threads):
    with blas_single_thread():
        with blas_single_thread():
            assert set(_blas_threads()) == {1}
        assert set(_blas_threads()) == {1}  # the inner exit must not restore
    assert set(_blas_threads()) == {2}


def test_decorator_limits_the_call_keeps_the_function_and_restores_on_error(two_threads):
    seen = []

    @single_threaded
    def decide(x, *, factor=1):
        """Docstring kept."""
        seen.append(set(_blas_threads()))
        inner()
        return x * factor

    @single_threaded
    def inner():
        seen.append(set(_blas_threads()))

    @single_threaded
    def fails():
        raise RuntimeError("boom")

    assert decide(3, factor=2) == 6
    assert seen == [{1}, {1}]
    assert decide.__name__ == "decide" and decide.__doc__ == "Docstring kept."
    assert is_single_threaded(decide) and not is_single_threaded(lambda: None)
    with pytest.raises(RuntimeError, match="boom"):
        fails()
    assert set(_blas_threads()) == {2}


def test_setting_from_environment(monkeypatch, two_threads):
    assert blas_threads_setting() == 1
    monkeypatch.setenv(ENV_VAR, "2")
    assert blas_threads_setting() == 2
    monkeypatch.setenv(ENV_VAR, "0")  # opt out: the libraries keep their own setting
    assert blas_threads_setting() == 0
    with blas_single_thread():
        assert set(_blas_threads()) == {2}
    monkeypatch.setenv(ENV_VAR, " ")
    assert blas_threads_setting() == 1


@pytest.mark.parametrize("value", ["one", "-1", "1.5", "2x"])
def test_bad_setting_is_a_clear_value_error(monkeypatch, two_threads, value):
    monkeypatch.setenv(ENV_VAR, value)
    with (
        pytest.raises(ValueError, match=rf"^{ENV_VAR} must be a non-negative integer.*got '{value}'") as info,
        blas_single_thread(),
    ):
        pass  # pragma: no cover
    assert "\n" not in str(info.value)
    assert set(_blas_threads()) == {2}  # nothing changed, nothing left entered
    monkeypatch.delenv(ENV_VAR)
    with blas_single_thread():
        assert set(_blas_threads()) == {1}


def test_a_library_loaded_later_is_found(monkeypatch, two_threads):
    # Forget the scan; then a new import (len(sys.modules) changes) must trigger a new one.
    with blas_single_thread():
        pass
    monkeypatch.setattr(threads, "_modules_seen", -1)
    with blas_single_thread():
        assert set(_blas_threads()) == {1}
    assert set(_blas_threads()) == {2}


def test_two_threads_overlapping(two_threads):
    """A limited call in a worker thread (the dashboard's) while the main thread is in one."""
    inside_main = threading.Event()
    worker_done = threading.Event()
    worker_seen = []

    @single_threaded
    def worker_call():
        worker_seen.append(set(_blas_threads()))

    def worker():
        inside_main.wait(10)
        worker_call()
        worker_done.set()

    t = threading.Thread(target=worker)
    t.start()
    with blas_single_thread():
        inside_main.set()
        assert worker_done.wait(10)
        assert set(_blas_threads()) == {1}  # the worker's exit did not restore under us
    t.join(10)
    assert worker_seen == [{1}]
    assert set(_blas_threads()) == {2}


def test_optimizer_methods_are_decorated():
    from lensopt.preference.copeland import CopelandOptimizer
    from lensopt.preference.optimizer import PreferenceOptimizer
    from lensopt.ranking.optimizer import RankingOptimizer
    from lensopt.refraction.duels import DuelRefractionOptimizer
    from lensopt.refraction.rankings import RankingRefractionOptimizer

    for cls, names in (
        (DuelRefractionOptimizer, ("ask", "tell", "best")),
        (RankingRefractionOptimizer, ("ask", "tell", "best")),
        (PreferenceOptimizer, ("ask", "tell", "best")),
        (CopelandOptimizer, ("ask", "tell", "best")),
        (RankingOptimizer, ("ask", "tell", "best")),
    ):
        for name in names:
            assert is_single_threaded(getattr(cls, name)), f"{cls.__name__}.{name}"


def test_duel_refraction_decides_on_one_thread(two_threads, monkeypatch):
    """Inside a real ask/tell the BLAS threads are 1; outside they are back to 2."""
    from lensopt.preference.optimizer import PreferenceOptimizer
    from lensopt.refraction.duels import DuelRefractionOptimizer

    seen = []
    original = PreferenceOptimizer.reference_context

    def spy(self):
        seen.append(set(_blas_threads()))
        return original(self)

    monkeypatch.setattr(PreferenceOptimizer, "reference_context", spy)
    opt = DuelRefractionOptimizer(seed=0)
    for _ in range(3):
        trial = opt.ask()
        opt.tell(trial, "first")
    opt.best()
    assert seen and all(s == {1} for s in seen)
    assert set(_blas_threads()) == {2}


def test_the_entry_points_beside_the_decisions_that_do_linear_algebra_are_decorated():
    """What a resume, the dashboard, the record and a PsychoPy handler call besides ask/tell/best: the
    rebuild from a state, the certainty, the draws of the best lens, the predictions and the searches
    of the optimum, on one BLAS thread too."""
    from lensopt.binary.optimizer import ContextualOptimizer
    from lensopt.refraction.acuity_law import AcuityLawOptimizer
    from lensopt.refraction.duels import DuelRefractionOptimizer
    from lensopt.refraction.letters import RefractionOptimizer
    from lensopt.refraction.prescription_duels import PrescriptionDuelOptimizer
    from lensopt.refraction.prescription_letters import PrescriptionOptimizer
    from lensopt.refraction.prescription_rankings import PrescriptionRankingOptimizer
    from lensopt.refraction.rankings import RankingRefractionOptimizer

    draws, band, acuity = "optimum_draws_d", "psychometric_band", "predicted_acuity_logmar"
    for cls, names in (
        (RefractionOptimizer, ("from_state", "certainty", draws, band, acuity)),
        (AcuityLawOptimizer, ("from_state", "certainty", draws, band, acuity, "expected_loss_logmar")),
        (AcuityLawOptimizer, ("information_table", "confidence")),
        (PrescriptionOptimizer, ("from_state", "prescription", "acuity_logmar")),
        (DuelRefractionOptimizer, ("from_state", draws, "predict_utility")),
        (RankingRefractionOptimizer, ("from_state", draws, "predict_utility")),
        (PrescriptionDuelOptimizer, ("from_state", "prescription", "search_optimum", "plus_offset_d")),
        (PrescriptionRankingOptimizer, ("from_state", "prescription", "search_optimum", "plus_offset_d")),
        (ContextualOptimizer, ("from_state", "search_optimum", "threshold_context", "reference_context")),
    ):
        for name in names:
            assert is_single_threaded(getattr(cls, name)), f"{cls.__name__}.{name}"


def test_an_acuity_law_session_rebuilt_from_its_state_reports_on_one_thread(two_threads, monkeypatch):
    """In a process whose BLAS runs 2 threads (numpy imported first), the acuity-law optimizer's
    from_state, certainty and optimum_draws_d compute on 1 (they ran on 2); 2 again afterwards."""
    from lensopt.refraction.acuity_law import AcuityLawOptimizer
    from lensopt.refraction.grid_posterior import GridPosterior

    opt = AcuityLawOptimizer(seed=1)
    for correct in (True, False, True):
        opt.tell(opt.ask(), correct)
    state = opt.to_state()
    seen: dict[str, list] = {"init": [], "posterior": []}
    init, posterior = AcuityLawOptimizer.__init__, GridPosterior.posterior

    def init_spy(self, *args, **kwargs):
        seen["init"].append(set(_blas_threads()))
        init(self, *args, **kwargs)

    def posterior_spy(self):
        seen["posterior"].append(set(_blas_threads()))
        return posterior(self)

    monkeypatch.setattr(AcuityLawOptimizer, "__init__", init_spy)
    monkeypatch.setattr(GridPosterior, "posterior", posterior_spy)
    rebuilt = AcuityLawOptimizer.from_state(state)
    rebuilt.certainty()
    rebuilt.optimum_draws_d(8, np.random.default_rng(0))
    assert seen["init"] == [{1}] and seen["posterior"] and all(s == {1} for s in seen["posterior"])
    assert set(_blas_threads()) == {2}
