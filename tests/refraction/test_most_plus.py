"""Whether a two-parameter search's lens is the most-plus one: one function says it
(:func:`lensopt.refraction.most_plus.accommodation_note`) for the closing console, the log and a
PsychoPy script's result, and in short for the dashboard (:func:`~lensopt.refraction.most_plus.dashboard_advice`)."""

import types

import pytest

from lensopt.binary.optimizer import ContextualOptimizer
from lensopt.refraction import AcuityLawOptimizer, RefractionOptimizer
from lensopt.refraction.acuity_law_settings import RELAXED_LENS
from lensopt.refraction.duels import DuelRefractionOptimizer
from lensopt.refraction.most_plus import MOST_PLUS_ADVICE, accommodation_note, dashboard_advice, settings_note
from lensopt.refraction.prescription_duels import PrescriptionDuelOptimizer
from lensopt.refraction.prescription_letters import PrescriptionOptimizer
from lensopt.refraction.prescription_rankings import PrescriptionRankingOptimizer
from lensopt.refraction.rankings import RankingRefractionOptimizer

WARNING = "may not be the most-plus lens: an eye that accommodates sees as well through more minus lenses"


@pytest.mark.parametrize(
    "optimizer_class", [PrescriptionOptimizer, PrescriptionDuelOptimizer, PrescriptionRankingOptimizer]
)
def test_the_full_prescription_ends_at_the_most_plus_lens_and_says_nothing(optimizer_class):
    assert accommodation_note(optimizer_class(start="-1.00 / -0.50 x 180", seed=1), "letters") is None


def test_the_acuity_law_told_the_amplitudes_gives_the_relaxed_eyes_lens():
    note = accommodation_note(AcuityLawOptimizer(seed=1, accommodation_d=(0.0, 2.0, 8.0)), "letters")
    assert (
        note
        == f"the model allowed for accommodation up to 8 D (0, 2, 8 D): this is the relaxed eye's lens, {RELAXED_LENS}"
    )


@pytest.mark.parametrize(
    ("optimizer", "mode", "remedy"),
    [
        (AcuityLawOptimizer(seed=1), "letters", "tell the model the eye may accommodate ([optimizer] accommodation_d"),
        (RefractionOptimizer(rule="ucb-ald", seed=1), "letters", "(clinical-prescription --start RX)"),
        (DuelRefractionOptimizer(seed=1), "duel", "(clinical-prescription-duel --start RX)"),
        (RankingRefractionOptimizer(seed=1), "ranking", "(clinical-prescription-ranking --start RX)"),
    ],
)
def test_every_other_two_parameter_search_warns_and_names_what_to_do(optimizer, mode, remedy):
    note = accommodation_note(optimizer, mode)
    assert note.startswith(WARNING) and "push plus on the chart" in note and remedy in note


def test_the_acuity_law_told_the_eye_does_not_accommodate_says_its_lens_is_the_most_plus_one():
    note = accommodation_note(AcuityLawOptimizer(seed=1, accommodation_d=[0]), "letters")
    assert note == (
        "the model was told the eye does not accommodate (accommodation_d = [0]): its lens of best acuity is its "
        "most-plus lens"
    )
    # a value no session could have run with says nothing of the kind: the warning stands
    assert settings_note({**AcuityLawOptimizer(seed=1).settings_dict(), "accommodation_d": "x"}, "letters").startswith(
        WARNING
    )


def test_an_object_that_gives_no_settings_gets_no_note():
    assert accommodation_note(types.SimpleNamespace(n_trials=3), "letters") is None


@pytest.mark.parametrize(
    ("optimizer", "advice"),
    [
        (RefractionOptimizer(rule="ucb-ald", seed=1), MOST_PLUS_ADVICE),
        (DuelRefractionOptimizer(seed=1), MOST_PLUS_ADVICE),
        (RankingRefractionOptimizer(seed=1), MOST_PLUS_ADVICE),
        (AcuityLawOptimizer(seed=1), "push plus on the chart, or set [optimizer] accommodation_d"),
        (AcuityLawOptimizer(seed=1, accommodation_d=(0.0, 2.0, 8.0)), None),
        (AcuityLawOptimizer(seed=1, accommodation_d=[0]), None),  # said not to accommodate
        (PrescriptionOptimizer(start="-1.00 / -0.50 x 180", seed=1), None),
        (PrescriptionDuelOptimizer(start="-1.00 / -0.50 x 180", seed=1), None),
    ],
)
def test_the_dashboards_advice_follows_the_closing_consoles_note_in_short(optimizer, advice):
    """The dashboard reads the stored settings: it advises exactly where the console warns, shorter."""
    settings = optimizer.settings_dict()
    assert (dashboard_advice(settings) is None) == (advice is None)
    assert (settings_note(settings, "letters") or "").startswith(WARNING) == (advice is not None)
    if advice is not None:
        assert dashboard_advice(settings).endswith(advice) and "clearest lens, not the most plus" in advice + (
            dashboard_advice(settings)
        )


def test_settings_that_are_not_a_refractions_get_neither_note_nor_advice():
    """A benchmark function's optimizer (a box of system parameters, no lens) has a rule but no lens box."""
    optimizer = ContextualOptimizer(((-4.0, 4.0), (-4.0, 4.0)), ((-1.0, 2.0),), rule="ucb-ald")
    settings = optimizer.to_state()["settings"]
    assert settings["rule"] == "ucb-ald"
    assert settings_note(settings, "letters") is None and dashboard_advice(settings) is None
    assert accommodation_note(optimizer, "letters") is None  # it gives no settings_dict()
