"""`lensopt bench prescription --axis-step`: a trial frame's axis marks, and the lens changes a record counts."""

import itertools
import json

import pytest

from lensopt.bench.prescription import SUMMARY_NAME, lens_changes, lenses_set, patient_and_start, run_prescription
from lensopt.bench.prescription_spec import PrescriptionSpec, prescription_specs
from lensopt.bench.records import load_records
from lensopt.cli import main
from lensopt.refraction.lens import Lens
from lensopt.refraction.prescription_duels import PrescriptionDuelOptimizer
from lensopt.simulation import simulate_prescription


def test_lens_changes_count_every_change_and_the_axis_only_ones_by_hand():
    a, b = Lens(-1.0, -0.5, 90), Lens(-1.0, -0.5, 95)  # b: a dial turn from a
    c = Lens(-1.25, -0.5, 95)  # c: a sphere change from b
    assert lens_changes([a, a, b, b, c, a]) == {"all": 3, "axis_only": 1}
    assert lens_changes([a]) == {"all": 0, "axis_only": 0}


def test_an_axis_step_campaign_rounds_the_rules_axes_keeps_the_ideal_at_one_degree_and_counts_lens_changes(
    tmp_path, capsys
):
    out = tmp_path / "frame"
    argv = ["bench", "prescription", "--out", str(out), "--patients", "2", "--trials", "6"]
    argv += ["--settings", "start-accommodation", "--axis-step", "5", "--local-sync", "--no-progress"]
    assert main(argv) == 0
    text = capsys.readouterr().out
    records = load_records(out)
    rules = [r for r in records if r["rule"] != "ideal"]
    assert rules and all(r["axis_step_deg"] == 5.0 and r["key"].endswith(f"-axis5__seed{r['seed']:04d}") for r in rules)
    assert all(r["optimizer_settings"]["axis_step_deg"] == 5.0 for r in rules)
    assert all(Lens.parse(r["prescription"]).axis_deg % 5 == 0 for r in rules)
    assert all(r["axis_step_deg"] is None for r in records if r["rule"] == "ideal")
    assert "--axis-step 5" in json.loads((out / "campaign.json").read_text())["command"]
    rows = {row["rule"]: row for row in json.loads((out / SUMMARY_NAME).read_text())["rows"]}
    assert set(rows) == {"bracket-ald axis5°", "ideal"}
    total = sum(r["lens_changes"]["all"] for r in rules)
    assert rows["bracket-ald axis5°"]["lens_changes"]["all"] == total and "bracket-ald axis5°" in text
    assert all(0 <= r["lens_changes"]["axis_only"] <= r["lens_changes"]["all"] <= r["n_trials"] - 1 for r in records)
    assert main(argv) == 0  # resumed: nothing left to run, the same keys
    assert len(load_records(out)) == len(records)


def test_a_duel_records_lens_changes_are_those_of_lens_one_replayed_by_hand():
    spec = PrescriptionSpec("start-accommodation", "muc-ald", 5001, 8, feedback="duel", axis_step_deg=5.0)
    record_changes = run_prescription(spec)
    patient, start = patient_and_start(spec)
    by_hand = PrescriptionDuelOptimizer(rule="muc-ald", seed=5001, start=start, axis_step_deg=5.0)
    simulate_prescription(patient, by_hand, 8, checkpoints=(8,), feedback="duel")
    texts = [trial.first_lens.format() for trial, _ in by_hand.history]
    assert all(trial.first_lens.axis_deg % 5 == 0 for trial, _ in by_hand.history)
    assert lenses_set(by_hand.history, "duel") == [trial.first_lens for trial, _ in by_hand.history]
    assert record_changes["lens_changes"]["all"] == sum(x != y for x, y in itertools.pairwise(texts))


@pytest.mark.parametrize(
    ("step", "rule", "message"),
    [
        (7.0, "bracket-ald", "--axis-step must be whole degrees that divide 180 (e.g. 5), got 7.0"),
        (5.0, "ideal", "not the ideal"),
    ],
)
def test_a_spec_refuses_an_axis_step_that_no_trial_frame_has_or_one_for_the_ideal(step, rule, message):
    with pytest.raises(ValueError, match=message.replace("(", r"\(").replace(")", r"\)").replace("]", r"\]")):
        PrescriptionSpec("start-accommodation", rule, 5000, 6, axis_step_deg=step)


def test_specs_at_one_degree_are_the_runs_without_an_axis_step():
    with_one = prescription_specs(["start-accommodation"], ["bracket-ald"], n_patients=1, axis_step_deg=1.0)
    without = prescription_specs(["start-accommodation"], ["bracket-ald"], n_patients=1)
    assert [s.key for s in with_one] == [s.key for s in without]
