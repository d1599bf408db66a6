"""The dashboard on a duel session: a summary line (best lens, answers), never a crash."""

import pytest

from lensopt.cli import main
from lensopt.duel_refraction import DuelRefractionOptimizer
from lensopt.observer import SimulatedPatient
from lensopt.store import DuelTrialRecord, SessionStore

N_DUELS = 8


@pytest.fixture(scope="module")
def duel_db(tmp_path_factory):
    """A simulated duel session stored as the experiment stores it; returns (path, id, optimizer)."""
    path = tmp_path_factory.mktemp("duel-dashboard") / "s.db"
    opt = DuelRefractionOptimizer(seed=2, lens_step_d=0.25)
    patient = SimulatedPatient(-1.25, -0.75, seed=2)
    with SessionStore(path) as store:
        sid = store.create_session("D02", {}, {}, opt.settings_dict(), 2, kind="duel")
        for i in range(1, N_DUELS + 1):
            trial = opt.ask()
            answer = patient.duel_answer(trial.letter_logmar, trial.first_lens_d, trial.second_lens_d, tie_threshold=1.0)
            opt.tell(trial, answer)
            store.append_duel_trial(sid, DuelTrialRecord(
                i, *trial.first_lens_d, *trial.second_lens_d, trial.letter_logmar, "CDHKN", answer, 1.0,
                10.0 * i, 10.0 * i + 1))
    return path, sid, opt


def test_the_duel_summary_names_the_answers_and_the_rebuilt_best_lens(duel_db):
    from lensopt.dashboard.duel import duel_summary

    path, sid, opt = duel_db
    with SessionStore(path, readonly=True) as store:
        line = duel_summary(store.session(sid), store.duel_trials(sid))
    counts = {a: sum(answer == a for _, answer in opt.history) for a in ("first", "second", "same")}
    sphere_d, cylinder_d = opt.best_lens()
    assert line.startswith(f"duel session {sid} (D02, running): {N_DUELS} comparisons")
    assert f"first {counts['first']}, second {counts['second']}, same {counts['same']}" in line
    assert f"best lens S {sphere_d:+.2f} D  C {cylinder_d:+.2f} D" in line and "\n" not in line


def test_a_duel_report_is_one_line_with_the_summary(duel_db, tmp_path, capsys):
    path, sid, _ = duel_db
    assert main(["dashboard", str(sid), "--db", str(path), "--report", str(tmp_path / "r.pdf")]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "no report or screenshot of a duel session yet" in err and "best lens S" in err


def test_the_window_shows_the_duel_summary_instead_of_crashing(qtbot, duel_db):
    pytest.importorskip("pytestqt")
    from lensopt.dashboard.window import DashboardWindow

    path, sid, _ = duel_db
    window = DashboardWindow(path, sid, poll_interval_ms=100)
    qtbot.addWidget(window)
    window.show()
    qtbot.waitUntil(lambda: "duel session" in window.message_label.text(), timeout=60_000)
    assert "best lens S" in window.message_label.text() and window.isVisible()
    window.shutdown()
