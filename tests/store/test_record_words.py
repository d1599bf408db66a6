"""What the store's records say in words: the trials' noun of each kind of session, a fixed design's budget."""

from types import SimpleNamespace

from lensopt.store.budget import fixed_trials_text
from lensopt.store.session_records import ResultRecord
from lensopt.store.verdict import one_trial_noun, stored_withheld_reason, trial_noun


def test_the_trials_of_each_kind_are_called_by_one_noun_and_an_unknown_kinds_trials():
    assert [trial_noun(kind) for kind in ("letters", "duel", "ranking", "hologram")] == [
        "letters",
        "duels",
        "rankings",
        "trials",
    ]
    assert [one_trial_noun(kind) for kind in ("letters", "duel", "ranking", "hologram")] == [
        "letter",
        "duel",
        "ranking",
        "trial",
    ]


def test_a_stored_comparisons_verdict_counts_its_trials_by_their_noun():
    result = ResultRecord("-1.00 / -0.50 x 180", -1.0, -0.5, 180.0, None, None, 12)
    info = SimpleNamespace(kind="ranking", protocol={}, optimizer_settings={})
    assert stored_withheld_reason(info, result).startswith(f"only 12 {trial_noun('ranking')}; ")


def test_a_fixed_designs_trials_name_the_budget_and_whether_it_was_run():
    assert fixed_trials_text(260, None, 260) == "the protocol's 260 trials (no [stop]: a fixed number)"
    assert fixed_trials_text(260, None, None) == "the protocol's 260 trials (no [stop]: a fixed number)"
    assert fixed_trials_text(7, None, 260) == "7 of the protocol's 260 trials (no [stop]: a fixed number; ended early)"
    assert fixed_trials_text(9, 9, 6) == (
        "9 trials, the budget of --trials 9 on resuming (the protocol's 6; no [stop]: a fixed number)"
    )
    assert fixed_trials_text(7, 9, None) == (
        "7 of the 9 trials of --trials 9 on resuming (no [stop]: a fixed number; ended early)"
    )


def test_a_fixed_designs_trials_given_at_the_start_are_named_so_not_as_the_protocols():
    """Started with --trials 20, the stored protocol holds 20: the words name the --trials and the
    protocol file's 260, not "the protocol's 20 trials"."""
    assert fixed_trials_text(20, None, 20, started_with=20, file_trials=260) == (
        "the 20 trials of --trials 20 at the start (the protocol's 260; no [stop]: a fixed number)"
    )
    assert fixed_trials_text(7, None, 20, started_with=20, file_trials=260) == (
        "7 of the 20 trials of --trials 20 at the start (the protocol's 260; no [stop]: a fixed number; ended early)"
    )
    assert fixed_trials_text(30, 30, 20, started_with=20, file_trials=260) == (
        "30 trials, the budget of --trials 30 on resuming (--trials 20 at the start, the protocol's 260; "
        "no [stop]: a fixed number)"
    )
