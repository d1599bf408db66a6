"""lensopt.bench.records: the timed ask/answer/tell loop every campaign runs."""

import time

from lensopt.bench.records import timed_session


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
