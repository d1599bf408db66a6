"""lensopt.bench.records: the timed ask/answer/tell loop every campaign runs, and the settings of a
refraction-like run's optimizer on its record."""

import time

from lensopt.bench.records import load_records, optimizer_settings, timed_session
from lensopt.cli import main
from lensopt.modes.registry import get_mode


class _Sleepy:
    """An optimizer whose ask sleeps (wall clock, no CPU) and whose tell spins (CPU)."""

    def __init__(self, sleep_s, spin_s):
        self.sleep_s, self.spin_s, self.told = sleep_s, spin_s, []
        self.last_decision_ms = float("nan")

    def ask(self):
        time.sleep(self.sleep_s)
        return len(self.told)

    def tell(self, query, answer):
        end = time.thread_time() + self.spin_s
        while time.thread_time() < end:
            pass
        self.told.append((query, answer))


def test_each_decision_is_timed_on_the_wall_clock_and_in_cpu_time_without_the_report():
    opt, reported = _Sleepy(sleep_s=0.02, spin_s=0.005), []

    def report(t, query, answer):
        reported.append((t, query, answer))
        time.sleep(0.3)  # outside the timing

    times = timed_session(opt, lambda q: q % 2 == 0, 4, report)
    assert opt.told == [(0, True), (1, False), (2, True), (3, False)]
    assert [t for t, _, _ in reported] == [1, 2, 3, 4]
    assert len(times.wall_ms) == len(times.cpu_ms) == 4
    # the ask's sleep counts on the wall clock only, the tell's spin in both, the report's 300 ms in
    # neither (bounds wide enough for a busy machine)
    assert all(20.0 <= wall < 300.0 for wall in times.wall_ms)
    assert all(5.0 <= cpu < 20.0 for cpu in times.cpu_ms)
    assert all(cpu < wall for cpu, wall in zip(times.cpu_ms, times.wall_ms))


def _tiny(campaign, out, *extra):
    """The smallest campaign of ``campaign`` the CLI runs: one patient, three trials, one random."""
    argv = ["bench", campaign, "--out", str(out), "--seeds", "1", "--iterations", "3", "--initial", "1"]
    return [*argv, *extra, "--local-sync", "--no-progress"]


def test_refraction_and_feedback_records_say_how_their_optimizer_was_configured(tmp_path, capsys):
    assert (
        main(_tiny("refraction", tmp_path / "refraction", "--slopes", "5", "--rules", "ucb-ald", "--beta", "1.5")) == 0
    )
    assert main(_tiny("feedback", tmp_path / "feedback")) == 0  # letters, duels with and without ties
    capsys.readouterr()
    records = load_records(tmp_path / "refraction") + load_records(tmp_path / "feedback")
    assert sorted(r["rule"] for r in records) == ["duel-drop-ties", "duel-ties", "letters", "ucb-ald"]
    for record in records:
        settings = record["optimizer_settings"]
        assert settings["seed"] == record["seed"] and settings["n_initial"] == 1, record["rule"]
        # the settings rebuild the optimizer the run had, as a stored session's do
        kind = "duel" if record["rule"].startswith("duel") else "letters"
        rebuilt = get_mode(kind).stored_optimizer_class(settings).from_settings(settings)
        assert optimizer_settings(rebuilt) == settings, record["rule"]
    by_rule = {r["rule"]: r["optimizer_settings"] for r in records}
    assert by_rule["ucb-ald"]["rule"] == "ucb-ald" and by_rule["ucb-ald"]["beta"] == 1.5
    assert by_rule["letters"]["rule"] == "ucb-ald"
    assert by_rule["duel-drop-ties"]["rule"] == "muc-ald" and by_rule["duel-ties"]["rule"] == "mpes-ald"
