"""A comparison session whose store does not say how it ran (its lens order, its trust centre) is
resumed as its trials show it ran: found by an audit of old databases, where a session made after
those changes by an older lensopt installed still was resumed by its creation date with trials it
never ran with (a full-prescription duel ended 2 D of sphere away)."""

from __future__ import annotations

import json
from pathlib import Path
from types import SimpleNamespace

import pytest

from lensopt.modes.as_ran import COUNTERBALANCED_SINCE_S, ORDER_STORED_SINCE_S, as_ran, same_trial, stored_order
from lensopt.modes.presentation import presented
from lensopt.modes.registry import get_mode
from lensopt.observer import SimulatedPatient
from lensopt.refraction.duels import DuelRefractionOptimizer
from lensopt.refraction.lens import Lens
from lensopt.refraction.prescription_duels import PrescriptionDuelOptimizer, PrescriptionDuelTrial

DATA = Path(__file__).resolve().parents[1] / "refraction" / "data"
#: 7 Dec 2026: a session made now by an older lensopt installed still.
LATER_S = 1796990000.0


def _fixture(commit: str) -> dict:
    return json.loads((DATA / f"prescription-comparisons-{commit}.json").read_text())


def _duel_record(index: int, letter_logmar, first: Lens, second: Lens, answer: str):
    """A stored duel of the full prescription, as the store reads it back."""
    return SimpleNamespace(
        index=index,
        letter_logmar=letter_logmar,
        first_sphere_d=first.sphere_d,
        first_cylinder_d=first.cylinder_d,
        first_axis_deg=first.axis_deg,
        second_sphere_d=second.sphere_d,
        second_cylinder_d=second.cylinder_d,
        second_axis_deg=second.axis_deg,
        answer=answer,
    )


def _prescription_duel_records(fixture: dict) -> list:
    """The fixture's duels: those its state holds, then those that code asked after it (as asked)."""
    rows = [(row[0], Lens(*row[1:4]), Lens(*row[4:7]), row[7]) for row in fixture["duel"]["state"]["history"]]
    rows += [
        (c["letter_logmar"], Lens(*c["lenses"][0]), Lens(*c["lenses"][1]), c["answer"])
        for c in fixture["duel"]["continued"]
    ]
    return [_duel_record(i, *row) for i, row in enumerate(rows, 1)]


@pytest.mark.parametrize(("commit", "centre"), [("c1303ab", "tilted"), ("a247e62", "mean")])
def test_a_full_prescription_duel_made_later_by_an_older_lensopt_resumes_with_the_centre_its_trials_show(
    commit, centre
):
    """c1303ab's code centred by the tilted mean, a247e62's (27 Nov 13:11–15:48) by the mean; neither
    stored it. Made today by either, the settings (no prior about the start) say an older lensopt:
    the tilted centre, right for c1303ab's; a247e62's trials overrule it, and the resume says so."""
    fixture = _fixture(commit)
    records = _prescription_duel_records(fixture)
    ran = as_ran("duel", {"duel": {}}, fixture["duel"]["state"]["settings"], LATER_S, 5, records, None, "as-asked")
    assert ran.settings["trust_centre"] == centre and ran.protocol["duel"]["order"] == "as-asked"
    assert ran.settings["report_tilt_share"] == (0.5 if centre == "mean" else 1.0)
    if commit == "a247e62":
        assert ran.note.startswith(
            "its trials show it ran with its lenses shown as asked and its search centred by the mean estimate"
        )
    else:
        assert ran.note is None
    # rebuilt from what it ran with and all but the last duel, it asks the last one as that code did
    pairs = [get_mode("duel").history_pair(record) for record in records]
    opt = PrescriptionDuelOptimizer.from_settings(ran.settings, pairs[:-1])
    assert same_trial(opt.ask(), pairs[-1][0])


def _two_parameter_duels(order: str, n: int = 8, seed: int = 11) -> list:
    """A duel session of sphere and cylinder as the loop stores it: each duel shown in ``order``."""
    opt = DuelRefractionOptimizer(seed=seed, n_initial=3)
    patient = SimulatedPatient(-1.0, -0.5, seed=seed)
    records = []
    for index in range(1, n + 1):
        trial = presented(opt.ask(), seed, index, order)
        answer = patient.duel_answer(trial.letter_logmar, trial.first_lens_d, trial.second_lens_d)
        opt.tell(trial, answer)
        records.append(
            SimpleNamespace(
                index=index,
                first_lens_d=trial.first_lens_d,
                second_lens_d=trial.second_lens_d,
                letter_logmar=trial.letter_logmar,
                answer=answer,
            )
        )
    return records


@pytest.mark.parametrize("order", ["as-asked", "counterbalanced"])
@pytest.mark.parametrize("created_at_s", [COUNTERBALANCED_SINCE_S - 3600.0, COUNTERBALANCED_SINCE_S + 600.0, LATER_S])
def test_a_duel_session_without_a_stored_order_resumes_showing_its_lenses_as_its_trials_were_shown(order, created_at_s):
    settings = DuelRefractionOptimizer(seed=11, n_initial=3).settings_dict()
    records = _two_parameter_duels(order)
    guess = stored_order(created_at_s)
    ran = as_ran("duel", {"duel": {"letters_per_line": 5}}, settings, created_at_s, 11, records, None, guess)
    assert ran.protocol["duel"] == {"letters_per_line": 5, "order": order}
    assert (ran.note is None) == (order == guess)


def test_the_order_by_date_is_counterbalanced_only_in_the_hours_before_it_was_stored():
    assert stored_order(COUNTERBALANCED_SINCE_S - 1) == "as-asked"
    assert stored_order(COUNTERBALANCED_SINCE_S) == stored_order(ORDER_STORED_SINCE_S - 1) == "counterbalanced"
    assert stored_order(ORDER_STORED_SINCE_S) == stored_order(LATER_S) == "as-asked"  # an older lensopt's


def test_a_session_that_stores_how_it_ran_is_not_replayed_and_one_no_candidate_replays_is_said():
    settings = DuelRefractionOptimizer(seed=11, n_initial=3).settings_dict()
    records = _two_parameter_duels("counterbalanced")
    stored = as_ran("duel", {"duel": {"order": "as-asked"}}, settings, LATER_S, 11, records, None, "as-asked")
    assert stored.protocol["duel"]["order"] == "as-asked" and stored.note is None  # as stored, asked nothing
    tampered = [SimpleNamespace(**{**vars(r), "letter_logmar": 0.123}) if r.index == 2 else r for r in records]
    said = as_ran("duel", {"duel": {}}, settings, LATER_S, 11, tampered, None, "as-asked")
    assert said.protocol["duel"]["order"] == "as-asked"
    assert said.note.startswith("its store does not say how it ran, and its trials are not those of any way")


def test_trials_are_the_same_to_a_millionth_and_of_the_same_kind():
    trial = PrescriptionDuelTrial(Lens(-1.0, -0.5, 180.0), Lens(-0.75, -0.5, 180.0), 0.3)
    near = PrescriptionDuelTrial(Lens(-1.0 + 1e-8, -0.5, 180.0), Lens(-0.75, -0.5, 180.0), 0.3)
    far = PrescriptionDuelTrial(Lens(-1.0 + 1e-4, -0.5, 180.0), Lens(-0.75, -0.5, 180.0), 0.3)
    assert same_trial(trial, near) and not same_trial(trial, far)
    assert not same_trial(trial, (trial.first_lens, trial.second_lens, trial.letter_logmar))


def test_settings_no_optimizer_is_built_from_are_left_to_the_rebuild_to_refuse_with_no_note():
    """A resume of a session whose stored settings are broken said first that its trials were not
    those of any way it may have run, then that it could not be rebuilt: two lines for one problem."""
    settings = {**DuelRefractionOptimizer(seed=11, n_initial=3).settings_dict(), "rule": "bogus-rule"}
    ran = as_ran("duel", {"duel": {}}, settings, LATER_S, 11, _two_parameter_duels("as-asked"), None, "as-asked")
    assert ran.note is None and ran.settings["rule"] == "bogus-rule" and ran.protocol["duel"]["order"] == "as-asked"
    with pytest.raises(ValueError, match="bogus-rule"):
        DuelRefractionOptimizer.from_settings(ran.settings)
