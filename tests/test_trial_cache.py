"""The per-trial cache: each value computed once per trial count, all dropped at the next count."""

from lensopt.trial_cache import TrialCache


def test_a_value_is_computed_once_per_trial_count_and_recomputed_after_an_answer():
    calls = []
    cache = TrialCache()

    def compute():
        calls.append(1)
        return len(calls)

    assert cache.get(3, "best", compute) == 1
    assert cache.get(3, "best", compute) == 1  # the same count: no second computation
    assert cache.get(4, "best", compute) == 2  # an answer came: computed again
    assert len(calls) == 2


def test_another_count_drops_every_value_at_once_and_peek_computes_nothing():
    cache = TrialCache()
    cache.get(5, "a", lambda: "a5")
    cache.get(5, "b", lambda: "b5")
    assert cache.peek(5, "a") == "a5" and cache.peek(5, "b") == "b5"
    assert cache.peek(6, "a") is None  # a later count never sees an earlier count's value
    cache.get(6, "a", lambda: "a6")
    assert cache.peek(6, "b") is None and cache.peek(5, "b") is None
    assert cache.peek(6, "missing") is None


def test_setdefault_keeps_the_first_value_and_clear_forgets_everything():
    cache = TrialCache()
    cache.setdefault(2, "argmax", 1.0)
    cache.setdefault(2, "argmax", 2.0)
    assert cache.get(2, "argmax", lambda: 3.0) == 1.0
    cache.clear()
    assert cache.peek(2, "argmax") is None
    assert cache.get(2, "argmax", lambda: 3.0) == 3.0
