"""What the store's records say in words: the trials' noun of each kind of session."""

from types import SimpleNamespace

from lensopt.store.session_records import ResultRecord
from lensopt.store.verdict import stored_withheld_reason, trial_noun


def test_the_trials_of_each_kind_are_called_by_one_noun_and_an_unknown_kinds_trials():
    assert [trial_noun(kind) for kind in ("letters", "duel", "ranking", "hologram")] == [
        "letters",
        "duels",
        "rankings",
        "trials",
    ]


def test_a_stored_comparisons_verdict_counts_its_trials_by_their_noun():
    result = ResultRecord("-1.00 / -0.50 x 180", -1.0, -0.5, 180.0, None, None, 12)
    info = SimpleNamespace(kind="ranking", protocol={}, optimizer_settings={})
    assert stored_withheld_reason(info, result).startswith(f"only 12 {trial_noun('ranking')}; ")
