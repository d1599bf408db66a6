"""Robustness campaign: summary statistics, trials to criterion, held-out split, tiny campaigns."""

import json

import numpy as np
import pytest

from lensopt.bench.problems import RefractionProblem
from lensopt.bench.robustness import SUMMARY_NAME, robustness_specs
from lensopt.bench.robustness_summary import CURVES_NAME, format_summary, summarize, trials_to_criterion
from lensopt.bench.runner import HELD_OUT_FIRST_SEED, RunSpec, load_records, split_of
from lensopt.cli import main
from lensopt.observer import draw_patients, varied_patient


@pytest.mark.parametrize(
    "trajectory, expected",
    [
        ([0.0, 0.0, 0.0], 1),  # there from the first trial
        ([0.2, 0.01, 0.02], 2),  # reached at trial 2 and stayed
        ([0.01, 0.2, 0.01, 0.02], 3),  # reached, left, came back at trial 3
        ([0.01, 0.01, 0.05], 4),  # reached, then left at the end: never (budget + 1)
        ([0.3, 0.3, 0.3], 4),  # never reached
        ([0.3, 0.025, 0.025], 2),  # the criterion itself counts as reached
        ([0.01, float("nan"), 0.01], 3),  # a missing value is not "within"
    ],
)
def test_trials_to_criterion_reach_and_stay(trajectory, expected):
    assert trials_to_criterion(trajectory) == expected


def _trajectory(pieces, budget=100):
    """``[(first_trial, value), ...]``: the value from that (1-based) trial on."""
    errors = np.empty(budget)
    for first, value in pieces:
        errors[first - 1 :] = value
    return errors.tolist()


def _record(rule, seed, pieces, stopped_at=None, stop_reason=None, decision_ms=(1.0,), budget=100):
    trajectory = _trajectory(pieces, budget)
    return {
        "campaign": "robustness",
        "problem": "slope-5",
        "rule": rule,
        "seed": seed,
        "slope": 5.0,
        "lapse": 0.0,
        "n_alternatives": 26,
        "split": split_of(seed),
        "stop_confidence": 0.95,
        "min_trials": 20,
        "trajectory": trajectory,
        "stopped_at": stopped_at,
        "stop_reason": stop_reason,
        "error_at_stop": None if stopped_at is None else trajectory[stopped_at - 1],
        "decision_ms": list(decision_ms),
        "timings_ms": {
            "decision": {
                "median": float(np.median(decision_ms)) if decision_ms else None,
                "p95": None,
                "n": len(decision_ms),
            }
        },
    }


def _hand_made_records():
    s = HELD_OUT_FIRST_SEED
    return [
        # ucb-ald: trials to criterion 40, 71 (reached at 10, left at 70), never (101), 1
        _record("ucb-ald", s, [(1, 0.2), (40, 0.01)], 50, "confidence", (1.0, 2.0, 3.0)),
        _record("ucb-ald", s + 1, [(1, 0.3), (10, 0.01), (70, 0.05), (71, 0.01)], 70, "confidence", (4.0, 5.0)),
        _record("ucb-ald", s + 2, [(1, 0.3)], 100, "max_trials", (6.0,)),
        _record("ucb-ald", s + 3, [(1, 0.0)], None, None, ()),  # no ideal run for this seed
        # ideal: trials to criterion 20, 30, 25
        _record("ideal", s, [(1, 0.2), (20, 0.0)], 25, "confidence"),
        _record("ideal", s + 1, [(1, 0.2), (30, 0.0)], 35, "confidence"),
        _record("ideal", s + 2, [(1, 0.2), (25, 0.0)], 40, "confidence"),
    ]


def test_summary_statistics_of_hand_made_records_equal_hand_computed_values():
    summary = summarize(_hand_made_records())
    rows = {row["rule"]: row for row in summary["rows"]}
    assert [row["rule"] for row in summary["rows"]] == ["ucb-ald", "ideal"]  # rule order of the campaign
    ucb = rows["ucb-ald"]
    assert ucb["n_sessions"] == 4 and ucb["n_trials"] == 100
    # errors after 30 trials: 0.2, 0.01, 0.3, 0.0; after 60 and 100: 0.01, 0.01, 0.3, 0.0
    assert ucb["errors"]["30"]["median"] == pytest.approx(0.105)
    assert ucb["errors"]["30"]["mean"] == pytest.approx(0.1275)
    assert ucb["errors"]["60"]["median"] == pytest.approx(0.01)
    assert ucb["errors"]["100"]["mean"] == pytest.approx(0.08)
    assert "260" not in ucb["errors"]
    assert ucb["above_0.1_at_100"] == 1 and ucb["above_0.1_at_end"] == 1
    assert ucb["trials_to_criterion"] == {
        "median": 55.5,
        "never": 1,
        "never_counts_as": 101,
        "median_is_lower_bound": False,
    }
    stop = ucb["stop"]
    assert stop["median_trials_used"] == 85.0  # 50, 70, 100 and 100 (never stopped: the budget)
    assert stop["n_stopped_by_confidence"] == 2 and stop["n_stopped_at_max_trials"] == 1
    assert stop["fraction_stopped_within_criterion"] == 0.5  # 0.01 at 50, 0.05 at 70
    assert stop["fraction_stopped_within_half_line"] == 1.0  # 0.05 is half a line: within
    assert stop["worst_error_at_stop_logmar"] == 0.05
    assert stop["median_error_of_wrong_stops_logmar"] == 0.05  # the one stop not within 0.025
    assert ucb["decision_ms"]["median"] == 3.5  # pooled over 1..6 ms
    assert ucb["decision_ms"]["p95"] == pytest.approx(5.75)
    versus = ucb["versus_ideal"]  # on the three seeds both ran: 40, 71, 101 against 20, 30, 25
    assert versus["paired_sessions"] == 3
    assert versus["trials_to_criterion_median"] == 71 and versus["ideal_trials_to_criterion_median"] == 25
    assert versus["trials_to_criterion_ratio"] == pytest.approx(71 / 25)
    assert versus["failures"] == 1 and versus["ideal_failures"] == 0 and versus["failure_ratio"] is None
    ideal = rows["ideal"]
    assert ideal["trials_to_criterion"]["median"] == 25 and "versus_ideal" not in ideal
    assert ideal["stop"]["fraction_stopped_within_criterion"] == 1.0
    assert summary["split"] == "held-out"
    text = format_summary(summary)
    assert "slope-5" in text and "2.84" in text and "1 vs 0" in text and "55.5" in text
    stop_row = next(line.split() for line in text.splitlines() if line.startswith("slope-5") and "2/4" in line)
    assert "≤½ line" in text and stop_row[stop_row.index("2/4") + 1 :][:3] == ["0.500", "1.000", "0.050"]
    json.dumps(summary)


def test_a_campaign_of_another_budget_shows_its_errors_at_that_budget_and_no_column_at_100():
    s = HELD_OUT_FIRST_SEED
    records = [_record("acuity-law", s, [(1, 0.3), (12, 0.02)], budget=25)]
    summary = summarize(records)
    (row,) = summary["rows"]
    assert row["errors"]["25"] == {"median": 0.02, "mean": 0.02} and "30" not in row["errors"]
    lines = format_summary(summary).splitlines()
    assert lines[0].startswith("Robustness: 1 session, held-out patients")
    header, _, cells = lines[2].split(), lines[3], lines[4].split()
    assert header == ["condition", "rule", "n", "med@25", "mean@25", ">0.1@end"]
    assert cells == ["slope-5", "acuity-law", "1", "0.020", "0.020", "0"]


def test_held_out_split_is_the_default_and_every_spec_says_so():
    specs = robustness_specs(["slope-5", "slope-2"], ["ucb-ald", "ideal"], max_patients=3)
    assert {s.seed for s in specs} == {HELD_OUT_FIRST_SEED + i for i in range(3)}
    assert all(s.split == "held-out" for s in specs)
    assert {s.n_iterations for s in specs if s.problem == "slope-2"} == {260}
    assert {s.n_iterations for s in specs if s.problem == "slope-5"} == {100}
    tuning = robustness_specs(["slope-8"], ["ideal"], first_seed=0, max_patients=2)
    assert [(s.seed, s.split) for s in tuning] == [(0, "tuning"), (1, "tuning")]
    with pytest.raises(ValueError, match="straddle"):
        robustness_specs(["slope-8"], ["ideal"], first_seed=HELD_OUT_FIRST_SEED - 1, max_patients=2)
    with pytest.raises(ValueError, match="split"):
        RunSpec("robustness", "slope-5", "ideal", 5, 10, slope=5.0, split="held-out")


def test_condition_defaults_cover_the_issue_and_patients_are_paired_across_rules():
    specs = robustness_specs(
        ["slope-5", "slope-2", "slope-8", "slope-5-lapse-0.05", "slope-5-sloan"], ["ucb-ald", "ts-ald", "ideal"]
    )
    per_condition = {}
    for s in specs:
        per_condition.setdefault(s.problem, set()).add(s.seed)
    assert {k: len(v) for k, v in per_condition.items()} == {
        "slope-5": 200,
        "slope-2": 100,
        "slope-8": 100,
        "slope-5-lapse-0.05": 100,
        "slope-5-sloan": 100,
    }
    lapse = next(s for s in specs if s.problem == "slope-5-lapse-0.05")
    sloan = next(s for s in specs if s.problem == "slope-5-sloan" and s.rule == "ucb-ald")
    assert lapse.lapse == 0.05 and sloan.n_alternatives == 10
    assert sloan.optimizer_options["n_alternatives"] == 10
    patient = RefractionProblem(slope=5.0, lapse=0.05, n_alternatives=10).patient(HELD_OUT_FIRST_SEED)
    plain = RefractionProblem(slope=5.0).patient(HELD_OUT_FIRST_SEED)
    assert patient.lapse == 0.05 and patient.n_alternatives == 10
    assert patient.true_correction_d == plain.true_correction_d  # the conditions share the corrections


def test_old_records_without_the_new_fields_load_as_equal_specs():
    old = {
        "campaign": "refraction",
        "problem": "slope-5",
        "rule": "ucb-ald",
        "seed": 3,
        "n_iterations": 260,
        "n_initial": 5,
        "slope": 5.0,
        "hyperparameters": "fitted",
        "report_every": 5,
        "tie_threshold": None,
        "beta": 2.3263478740408408,
        "trajectory": [0.1],
    }
    spec = RunSpec("refraction", "slope-5", "ucb-ald", 3, 260, 5, slope=5.0, report_every=5, beta=2.3263478740408408)
    assert RunSpec.from_dict(old) == spec
    assert spec.optimizer_options == {"beta": 2.3263478740408408}  # no new keywords for old campaigns
    filled = RunSpec("robustness", "slope-5", "ideal", HELD_OUT_FIRST_SEED, 12, slope=5.0)
    assert (filled.split, filled.lapse, filled.n_alternatives, filled.min_trials) == ("held-out", 0.0, 26, 12)


def _campaign_argv(out, *extra):
    return [
        "bench",
        "robustness",
        "--out",
        str(out),
        "--patients",
        "2",
        "--trials",
        "12",
        "--min-trials",
        "5",
        "--conditions",
        "slope-5",
        "--local-sync",
        "--no-progress",
        *extra,
    ]


def test_tiny_campaign_resumes_without_rerunning_finished_runs_and_reports(tmp_path, capsys):
    out = tmp_path / "robust"
    assert main(_campaign_argv(out, "--rules", "ideal")) == 0
    first = capsys.readouterr().out
    assert "2 runs: 0 already done, 2 run now" in first and "Trials to reach and stay" in first
    records = load_records(out)
    assert [r["seed"] for r in records] == [HELD_OUT_FIRST_SEED, HELD_OUT_FIRST_SEED + 1]
    for r in records:
        assert r["split"] == "held-out" and r["campaign"] == "robustness"
        assert len(r["trajectory"]) == 12 and len(r["decision_ms"]) == 12
        # the deciding thread's CPU time: never (beyond the clocks' resolution) above the wall-clock time
        assert len(r["decision_cpu_ms"]) == 12
        assert all(0 <= cpu <= wall + 1.0 for cpu, wall in zip(r["decision_cpu_ms"], r["decision_ms"]))
        assert (r["slope"], r["lapse"], r["n_alternatives"]) == (5.0, 0.0, 26)
        assert r["stopped_at"] is None or 5 <= r["stopped_at"] <= 12
        assert r["stop_reason"] in ("confidence", "max_trials")
        assert r["timings_ms"]["decision"]["p95"] >= r["timings_ms"]["decision"]["median"]
        assert r["optimizer_settings"]["rule"] == "ideal" and r["optimizer_settings"]["slope"] == 5.0
    manifest = json.loads((out / "campaign.json").read_text())
    assert manifest["split"] == "held-out" and manifest["command"].startswith("lensopt bench robustness")
    # the conditions as run (--patients 2, --trials 12), not their defaults (200 patients, 100 trials)
    (condition,) = manifest["conditions"]
    assert (condition["name"], condition["n_patients"], condition["n_trials"]) == ("slope-5", 2, 12)

    stamp = (out / "runs" / f"{records[1]['key']}.json").stat().st_mtime_ns
    (out / "runs" / f"{records[0]['key']}.json").unlink()
    assert main(_campaign_argv(out, "--rules", "ideal")) == 0
    assert "2 runs: 1 already done, 1 run now" in capsys.readouterr().out
    assert (out / "runs" / f"{records[1]['key']}.json").stat().st_mtime_ns == stamp  # not rerun
    again = {r["key"]: r["trajectory"] for r in load_records(out)}
    assert again[records[0]["key"]] == records[0]["trajectory"]  # same seed, same session

    assert main(["bench", "report", str(out)]) == 0
    report = capsys.readouterr().out
    assert "Robustness: 2 sessions, held-out patients" in report
    summary = json.loads((out / SUMMARY_NAME).read_text())
    assert summary["split"] == "held-out" and summary["rows"][0]["rule"] == "ideal"
    assert (out / CURVES_NAME).read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"  # the error curves
    # --out: the summary and the curves go there, the campaign's own are left as they were
    stamp = (out / SUMMARY_NAME).stat().st_mtime_ns
    elsewhere = tmp_path / "elsewhere" / "report"
    assert main(["bench", "report", str(out), "--out", str(elsewhere)]) == 0
    assert f"wrote {elsewhere}/{SUMMARY_NAME}" in capsys.readouterr().out
    assert json.loads((elsewhere / SUMMARY_NAME).read_text())["rows"] == summary["rows"]
    assert (elsewhere / CURVES_NAME).exists() and (out / SUMMARY_NAME).stat().st_mtime_ns == stamp


def test_tuning_flag_runs_the_tuning_patients_and_records_say_so(tmp_path, capsys):
    out = tmp_path / "tuning"
    assert main(_campaign_argv(out, "--rules", "ideal", "--tuning")) == 0
    records = load_records(out)
    assert sorted(r["seed"] for r in records) == [0, 1] and {r["split"] for r in records} == {"tuning"}
    assert json.loads((out / "campaign.json").read_text())["split"] == "tuning"


def test_tiny_campaign_with_the_letter_optimizer_pairs_patients_with_the_ideal_observer(tmp_path, capsys):
    out = tmp_path / "paired"
    assert main(_campaign_argv(out, "--rules", "ucb-ald", "ideal", "--conditions", "slope-5-sloan")) == 0
    text = capsys.readouterr().out
    assert "4 runs: 0 already done, 4 run now" in text and "ucb-ald" in text
    by_seed = {}
    for r in load_records(out):
        assert r["n_alternatives"] == 10 and r["optimizer_settings"]["n_alternatives"] == 10
        by_seed.setdefault(r["seed"], set()).add(tuple(r["true_correction_d"]))
    assert all(len(corrections) == 1 for corrections in by_seed.values())  # the same patient per seed
    summary = json.loads((out / SUMMARY_NAME).read_text())
    ucb = next(row for row in summary["rows"] if row["rule"] == "ucb-ald")
    assert ucb["versus_ideal"]["paired_sessions"] == 2


@pytest.mark.parametrize(
    "extra, message",
    [
        (["--conditions", "slope-3"], "unknown robustness condition"),
        (["--rules", "bald"], "unknown rule"),
        (["--stop-confidence", "1.5"], "--stop-confidence"),
        (["--first-seed", "99999"], "straddle"),
        (["--model-lapse", "0.6"], "--model-lapse"),
        (["--min-trials", "13"], "--min-trials 13 exceeds the trials of slope-5: the stopping rule could never stop"),
    ],
)
def test_cli_bad_values_give_one_line_and_exit_2(tmp_path, capsys, extra, message):
    assert main(_campaign_argv(tmp_path / "bad", *extra)) == 2
    err = capsys.readouterr().err
    assert message in err and len(err.strip().splitlines()) == 1


def test_the_letter_rules_check_their_lens_before_a_stop_when_asked_and_every_record_says_so(tmp_path, capsys):
    out = tmp_path / "checked"
    argv = _campaign_argv(out, "--rules", "acuity-law", "ideal", "--check-letters", "3", "--stop-confidence", "0.3")
    assert main(argv) == 0
    capsys.readouterr()
    records = {r["rule"]: r for r in load_records(out) if r["seed"] == HELD_OUT_FIRST_SEED}
    assert records["acuity-law"]["check_letters"] == 3
    assert records["acuity-law"]["optimizer_settings"]["stop"]["check_letters"] == 3
    assert records["ideal"]["check_letters"] is None  # the ideal observer has no check
    manifest = json.loads((out / "campaign.json").read_text())
    assert manifest["stop"]["check_letters"] == 3 and "--check-letters 3" in manifest["command"]
    for r in records.values():  # a stop by confidence comes only with the lens read through
        if r["stop_reason"] == "confidence" and r["rule"] == "acuity-law":
            assert r["letters_through_at_stop"] >= 3
    # without the option the runs are those of every campaign before it (no check, None)
    assert RunSpec.from_dict({**records["ideal"], "check_letters": None}) == RunSpec.from_dict(records["ideal"])
    with pytest.raises(SystemExit) as exit_info:
        main(_campaign_argv(out, "--rules", "acuity-law", "--check-letters", "11"))
    err = capsys.readouterr().err
    assert exit_info.value.code == 2 and "--check-letters: must be a whole number of letters from 0" in err


def _kernel_file(tmp_path):
    """A kernel file as `lensopt hyperparameters` writes one: the shipped kernel, shorter and
    steeper (so that a run with it is told apart from the shipped one)."""
    from lensopt.reference_data import LETTER_MODEL_HYPERPARAMETERS, load_json

    kernel = dict(load_json(LETTER_MODEL_HYPERPARAMETERS)["kernel"], lengthscales=[2.0], context_variance=25.0)
    path = tmp_path / "kernel.json"
    path.write_text(json.dumps({"kernel": kernel, "command": "by hand"}))
    return path, kernel


def test_a_kernel_file_sets_the_gp_rules_kernel_and_every_record_holds_it(tmp_path, capsys):
    path, kernel = _kernel_file(tmp_path)
    out = tmp_path / "kernel"
    assert main(_campaign_argv(out, "--rules", "ucb-ald", "acuity-law", "--hyperparameters", str(path))) == 0
    capsys.readouterr()
    records = load_records(out)
    assert {r["rule"] for r in records} == {"ucb-ald", "acuity-law"}
    for r in records:
        if r["rule"] == "ucb-ald":  # the optimizer ran with the file's kernel, and the spec says so
            assert r["kernel"] == kernel and r["optimizer_settings"]["hyperparameters"]["lengthscales"] == [2.0]
            assert r["optimizer_settings"]["hyperparameters"]["context_variance"] == 25.0
        else:  # the acuity-law optimizer has no kernel
            assert r["kernel"] is None
    manifest = json.loads((out / "campaign.json").read_text())
    assert manifest["kernel"] == kernel and f"--hyperparameters {path}" in manifest["command"]
    # the same specs resume: nothing reruns
    assert main(_campaign_argv(out, "--rules", "ucb-ald", "acuity-law", "--hyperparameters", str(path))) == 0
    assert "4 runs: 4 already done, 0 run now" in capsys.readouterr().out
    spec = robustness_specs(["slope-5"], ["ucb-ald", "ts-ald", "ideal", "ucb-ald-paper"], max_patients=1, kernel=kernel)
    assert [s.kernel for s in spec] == [kernel, kernel, None, None]  # the paper's model keeps its own
    assert RunSpec.from_dict(json.loads(json.dumps(spec[0].to_dict()))) == spec[0]  # a record reads back equal
    assert spec[0].optimizer_options["hyperparameters"] == kernel


@pytest.mark.parametrize(
    "content, rules, message",
    [
        ("not json", ["ucb-ald"], "cannot read hyperparameters from"),
        (
            '{"kernel": {"structure": "psychophysics", "family": "se", "lengthscales": [-1]}}',
            ["ucb-ald"],
            "bad 'kernel' entry",
        ),
        (None, ["ideal", "acuity-law"], "--rules has neither"),
    ],
)
def test_a_bad_kernel_file_or_no_gp_rule_for_it_is_one_line_and_exit_2(tmp_path, capsys, content, rules, message):
    path, _ = _kernel_file(tmp_path)
    if content is not None:
        path.write_text(content)
    assert main(_campaign_argv(tmp_path / "bad", "--rules", *rules, "--hyperparameters", str(path))) == 2
    err = capsys.readouterr().err
    assert message in err and len(err.strip().splitlines()) == 1
    assert not (tmp_path / "bad" / "runs").exists() or not any((tmp_path / "bad" / "runs").iterdir())


def test_the_papers_letter_model_runs_as_its_own_rule_on_the_same_patients(tmp_path, capsys):
    out = tmp_path / "paper"
    assert main(_campaign_argv(out, "--rules", "ucb-ald-paper")) == 0
    records = load_records(out)
    assert {r["rule"] for r in records} == {"ucb-ald-paper"}
    for r in records:
        settings = r["optimizer_settings"]
        assert (settings["likelihood"], settings["inference"], settings["prior_mean"]) == ("probit", "laplace", 0.0)
    with pytest.raises(ValueError, match="unknown rule"):
        robustness_specs(["slope-5"], ["ucb-ald-papers"])


def test_varied_patients_draw_slope_and_acuity_per_seed_and_the_ideal_observer_is_told_them(tmp_path, capsys):
    out = tmp_path / "varied"
    argv = _campaign_argv(out, "--rules", "ideal", "acuity-law")
    argv[argv.index("--conditions") + 1] = "varied"
    assert main(argv) == 0
    assert "varied" in capsys.readouterr().out
    records = load_records(out)
    assert len(records) == 4
    for r in records:
        patient = varied_patient(r["seed"], (2.0, 8.0), (-0.1, 0.3))
        assert r["slope"] is None and r["slope_range_per_logmar"] == [2.0, 8.0]
        assert r["va_best_range_logmar"] == [-0.1, 0.3]
        assert tuple(r["true_correction_d"]) == draw_patients(1, r["seed"])[0].true_correction_d
        if r["rule"] == "ideal":
            assert r["optimizer_settings"]["slope"] == patient.slope
            assert r["optimizer_settings"]["va_best_logmar"] == patient.best_acuity_logmar
        assert RunSpec.from_dict(json.loads(json.dumps(r))).key == r["key"]
    assert len({r["optimizer_settings"]["slope"] for r in records if r["rule"] == "ideal"}) == 2  # drawn per seed
    row = json.loads((out / SUMMARY_NAME).read_text())["rows"][0]
    assert row["condition"] == "varied" and row["slope_range_per_logmar"] == [2.0, 8.0]


def test_a_varied_spec_takes_both_ranges_and_no_fixed_slope():
    ranges = {"slope_range_per_logmar": [2.0, 8.0], "va_best_range_logmar": [-0.1, 0.3]}
    spec = RunSpec("robustness", "varied", "ideal", HELD_OUT_FIRST_SEED, 10, **ranges)
    assert spec.slope_range_per_logmar == (2.0, 8.0)  # a JSON list reads back as the tuple it was
    assert RunSpec.from_dict(json.loads(json.dumps(spec.to_dict()))) == spec
    with pytest.raises(ValueError, match="must be None"):
        RunSpec("robustness", "varied", "ideal", HELD_OUT_FIRST_SEED, 10, slope=5.0, **ranges)
    with pytest.raises(ValueError, match="come together"):
        RunSpec("robustness", "varied", "ideal", HELD_OUT_FIRST_SEED, 10, slope_range_per_logmar=(2.0, 8.0))
    with pytest.raises(ValueError, match="of a robustness run"):
        RunSpec("refraction", "slope-5", "ucb-ald", 1, 10, slope=5.0, **ranges)


def test_stops_of_varied_patients_are_split_by_the_patients_slope():
    records = [r for r in _hand_made_records() if r["rule"] == "ucb-ald"]
    for r, slope in zip(records, (2.5, 4.0, 4.9, 7.0)):  # bands: < 3, 3-5, 3-5, >= 5
        r.update(problem="varied", slope=None, slope_range_per_logmar=[2.0, 8.0], patient_slope=slope)
    row = summarize(records)["rows"][0]
    bands = {(b["slope_low"], b["slope_high"]): b for b in row["stop_by_slope"]}
    assert list(bands) == [(0.0, 3.0), (3.0, 5.0), (5.0, None)]
    # slope 2.5: stopped at 50 within; 4.0 and 4.9: stopped at 70 (0.05, not within) and never (budget 100)
    assert bands[(0.0, 3.0)]["n_stopped_by_confidence"] == 1
    assert bands[(0.0, 3.0)]["fraction_stopped_within_criterion"] == 1.0
    assert bands[(3.0, 5.0)]["n_sessions"] == 2 and bands[(3.0, 5.0)]["median_trials_used"] == 85.0
    assert bands[(3.0, 5.0)]["fraction_stopped_within_criterion"] == 0.0
    assert bands[(5.0, None)]["fraction_stopped_within_criterion"] is None  # never stopped by confidence
    text = format_summary(summarize(records))
    assert "by the patient's slope" in text and "3-5" in text and ">= 5" in text
    assert "stop_by_slope" not in summarize(_hand_made_records())["rows"][0]  # fixed slopes: no bands


def test_cpu_times_of_the_decisions_are_summarized_beside_the_wall_clock_times():
    records = [r for r in _hand_made_records() if r["rule"] == "ideal"]
    for r, cpu in zip(records, ([0.5], [1.0, 2.0], [3.0])):
        r["decision_cpu_ms"] = cpu
    summary = summarize(records)
    times = summary["rows"][0]["decision_ms"]
    assert times["cpu_median"] == 1.5 and times["cpu_p95"] == pytest.approx(2.85)  # of 0.5, 1, 2, 3
    assert summary["decision_ms_by_rule"]["ideal"]["cpu_p95"] == pytest.approx(2.85)
    assert "ideal median 1.0 ms, p95 1.0 ms (CPU time 1.5 ms, p95 " in format_summary(summary)
    del records[0]["decision_cpu_ms"]  # a record from before: no CPU times for the group
    assert "cpu_p95" not in summarize(records)["rows"][0]["decision_ms"]


def test_a_partial_campaigns_summary_says_how_many_of_its_runs_have_finished(tmp_path, capsys):
    out = tmp_path / "partial"
    assert main(_campaign_argv(out, "--rules", "ideal")) == 0
    assert "a partial summary" not in capsys.readouterr().out
    next((out / "runs").glob("*.json")).unlink()
    assert main(["bench", "robustness", "--summary", str(out)]) == 0
    assert capsys.readouterr().out.splitlines()[0] == "1 of 2 runs of campaign.json finished: a partial summary"


def test_each_rule_keeps_its_colour_whatever_the_rules_run_and_the_title_fits_one_condition(tmp_path):
    from lensopt.bench.robustness_summary import plot_curves

    s = HELD_OUT_FIRST_SEED

    def colours(rules):
        records = [_record(rule, s + i, [(1, 0.2), (10 + i, 0.01)]) for rule in rules for i in range(2)]
        fig = plot_curves(records, tmp_path / "curves.png")
        lines = fig.axes[0].get_lines()
        fig.canvas.draw()
        title = fig._suptitle.get_window_extent(fig.canvas.get_renderer())
        assert 0 <= title.x0 and title.x1 <= fig.bbox.width, (title, fig.bbox)  # not clipped at either edge
        return {line.get_label().split(" ")[0]: line.get_color() for line in lines if "(n=" in line.get_label()}

    first, second = colours(["ucb-ald", "acuity-law"]), colours(["acuity-law", "ideal"])
    assert first["acuity-law"] == second["acuity-law"]
    assert len({*first.values(), *second.values()}) == 3
