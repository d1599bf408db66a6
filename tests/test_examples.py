"""The scripts of docs/examples: their patients, their tables and short runs of their commands."""

import importlib.util
import itertools
import json
import re
import subprocess
import sys
import tarfile
from pathlib import Path

import numpy as np
import pytest

from lensopt.bench.records import load_records
from lensopt.observer import draw_patients

REPO = Path(__file__).resolve().parents[1]
EXAMPLES = REPO / "docs" / "examples"
#: the page whose Python blocks must each run alone (a literal path: the source archive's check
#: in tests/test_packaging.py finds the docs files the tests read by their literal paths)
API_GUIDE = REPO / "docs" / "python-api.md"


def load_example(name: str):
    """The module of ``docs/examples/<name>.py`` (not a package: loaded from its path)."""
    spec = importlib.util.spec_from_file_location(name, EXAMPLES / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.fixture(scope="module")
def example():
    return load_example("law_misspecified")


def test_a_blur_gain_scales_the_patients_blur_and_keeps_the_best_lens(example):
    plain = draw_patients(1, 7, slope=5.0)[0]
    scaled = example.with_blur_gain(draw_patients(1, 7, slope=5.0)[0], 1.6)
    lenses = (np.array([0.0, 1.0, -2.0]), np.array([0.0, -0.5, 1.0]))
    np.testing.assert_allclose(scaled.blur_d(*lenses), 1.6 * plain.blur_d(*lenses))
    assert scaled.visual_acuity(scaled.sphere_d, scaled.cylinder_d) == pytest.approx(scaled.best_acuity_logmar)


def test_trials_to_criterion_is_the_first_trial_from_which_the_error_stays_low(example):
    assert example.trials_to_criterion([0.2, 0.01, 0.03, 0.02, 0.01]) == 4
    assert example.trials_to_criterion([0.01, 0.02]) == 1
    assert example.trials_to_criterion([0.01, 0.2]) == 3  # never: one past the budget


def test_patients_off_the_va_grid_keep_their_correction_and_the_command_prints_a_row_per_case(example, capsys):
    plain, off = draw_patients(1, 100_000, slope=5.0)[0], draw_patients(1, 100_000, slope=5.0, va_best_logmar=0.13)[0]
    assert (off.sphere_d, off.cylinder_d, off.best_acuity_logmar) == (plain.sphere_d, plain.cylinder_d, 0.13)
    example.main(
        ["--patients", "1", "--trials", "30", "--gains", "1.0", "--va-best", "0.13", "--rules", "acuity-law", "ideal"]
    )
    rows = capsys.readouterr().out.strip().splitlines()[1:]
    assert [row.split()[:3] for row in rows] == [["acuity-law", "1.00", "+0.13"], ["ideal", "1.00", "+0.13"]]


def test_interval_coverage_counts_a_value_inside_its_interval_ends_included():
    coverage = load_example("interval_coverage")
    from lensopt.refraction.lens import PowerVector

    intervals = {"m_d": (-1.0, -0.5), "j0_d": (0.0, 0.25), "j45_d": (-0.1, 0.1)}
    assert coverage.held(intervals, PowerVector(-0.5, 0.3, 0.0)) == (True, False, True)
    assert coverage.held(intervals, PowerVector(-1.2, 0.0, 0.1)) == (False, True, True)


def test_interval_coverage_reads_each_checkpoints_intervals_of_a_short_session():
    coverage = load_example("interval_coverage")
    out = coverage.run_patient(5000, checkpoints=(4, 8))
    assert set(out) == {4, 8}
    for inside, widths in out.values():
        assert len(inside) == 3 and all(w > 0 for w in widths)  # spread over the grid's cells: never of zero width
    lines = coverage.table([out], checkpoints=(4, 8))
    assert lines[1].split()[:2] == ["4", "1"] and len(lines) == 3


def test_edge_failure_replays_the_campaigns_session_and_its_bounds_match_monte_carlo(capsys):
    edge = load_example("edge_failure")
    patient, optimizer, trials = edge.replay(7000, 12)  # a tuning patient
    assert len(trials) == 12 and optimizer.n_trials == 12
    assert all(0.0 < p < 1.0 for _, p, _ in trials)
    # the same session as the campaign's: the bench's patient of that seed, answered the same way
    from lensopt.bench.robustness import robustness_specs, spec_patient

    spec = robustness_specs(["slope-5"], ["ucb-ald"], first_seed=7000, max_patients=1)[0]
    assert spec_patient(spec).true_correction_d == patient.true_correction_d
    rows = edge.ranking(optimizer, [optimizer.best(), patient.true_correction_d])
    beta = optimizer.settings.beta
    np.testing.assert_allclose(rows["ucb_latent"], rows["mean"] + beta * rows["sd"], rtol=1e-12)
    # UCB_Φ = E[Φ(f)] + β sd[Φ(f)] for f ~ N(mean, sd²), by Monte Carlo
    from scipy.stats import norm

    f = np.random.default_rng(0).standard_normal((400_000, 1)) * rows["sd"] + rows["mean"]
    phi = norm.cdf(f)
    np.testing.assert_allclose(rows["ucb_phi"], phi.mean(axis=0) + beta * phi.std(axis=0), atol=3e-3)
    edge.main(["--seed", "7000", "--trials", "3"])
    lines = capsys.readouterr().out.strip().splitlines()
    assert lines[0].startswith("patient 7000") and [line.split()[0] for line in lines[1:4]] == ["1", "2", "3"]


def test_untried_lenses_prints_each_session_and_counts_the_lenses_not_tried(capsys):
    untried = load_example("untried_lenses")
    row = untried.session(100_000, n_trials=25)
    assert row["trials"] <= 25 and row["nearest_d"] >= 0.0
    assert row["untried"] == (round(row["nearest_d"], 2) > 0.25)  # a phoropter step, as written
    untried.main(["--patients", "1", "--trials", "25"])
    lines = capsys.readouterr().out.strip().splitlines()
    assert lines[1].split()[:2] == ["100000", str(row["trials"])]  # the same session, from its seed
    stopped = int(row["stopped"])
    assert lines[-1] == (
        f"not tried within a phoropter step: {int(row['untried'])} of 1 sessions, "
        f"{int(row['untried']) * stopped} of {stopped} that stopped"
    )


@pytest.mark.parametrize(("n_trials", "reported"), [(1, [1]), (20, [20]), (30, [30]), (31, [30, 31]), (100, [30, 100])])
def test_the_law_table_reports_trial_30_only_when_the_sessions_run_past_it_and_always_the_last(
    example, n_trials, reported
):
    assert example.reported_trials(n_trials) == reported


def test_a_law_run_shorter_than_30_trials_prints_the_error_at_its_last_trial(example, capsys):
    example.main(["--patients", "1", "--trials", "20", "--gains", "1.0", "--rules", "acuity-law"])
    header, row = capsys.readouterr().out.strip().splitlines()
    assert "err20 med (mean)" in header and "err30" not in header and "err100" not in header
    last = example.session_errors("acuity-law", 1.0, 100_000, 20)[-1]  # one patient: its median and mean
    assert row.split()[3:5] == [f"{last:.3f}", f"({last:.3f})"]


@pytest.mark.parametrize("option", ["--trials", "--patients"])
def test_a_law_run_refuses_a_count_below_one_in_one_line(example, capsys, option):
    with pytest.raises(SystemExit) as exit_:
        example.main([option, "0"])
    assert exit_.value.code == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and f"argument {option}: must be at least 1, got 0" in err


DOC_SNIPPETS = [
    (API_GUIDE.name, n) for n in range(len(re.findall(r"```python\n(.*?)```", API_GUIDE.read_text(), re.S)))
]


@pytest.mark.parametrize(("doc", "n"), DOC_SNIPPETS, ids=[f"{doc}-{n}" for doc, n in DOC_SNIPPETS])
def test_each_python_snippet_of_the_api_guide_runs_on_its_own(doc, n, tmp_path):
    """A scientist copies one block: it must run as written, its imports included (the acuity-law
    block used StopRule without importing it)."""
    code = re.findall(r"```python\n(.*?)```", API_GUIDE.read_text(), re.S)[n]
    done = subprocess.run([sys.executable, "-c", code], cwd=tmp_path, capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr[-2000:]


def test_the_slope_grid_scripts_default_session_is_the_robustness_campaigns_varied_one():
    """docs/examples/slope_grid.py, default slopes, tuning seed 3, 40 trials: the trial it stops at
    and its error are those ``lensopt bench robustness --conditions varied --rules acuity-law``
    records for that patient (an independent loop: the campaign's runner)."""
    from lensopt.bench.robustness import robustness_specs, run_robustness
    from lensopt.refraction.acuity_law_settings import SLOPES_PER_LOGMAR

    slope_grid = load_example("slope_grid")
    (spec,) = robustness_specs(["varied"], ["acuity-law"], first_seed=3, max_patients=1, n_trials=40)
    record = run_robustness(spec)
    session = slope_grid.run_session((SLOPES_PER_LOGMAR, 3, 40))
    assert session["stopped"] == (record["stop_reason"] == "confidence")
    if session["stopped"]:
        assert session["trials"] == record["stopped_at"]
        assert session["error"] == pytest.approx(record["error_at_stop"], abs=1e-12)
    else:
        assert session["trials"] == 40 and session["error"] == pytest.approx(record["trajectory"][-1], abs=1e-12)


def test_the_slope_grid_script_prints_a_row_per_grid(capsys):
    load_example("slope_grid").main(
        ["--first-seed", "0", "--patients", "1", "--trials", "21", "--slopes", "2", "4", "8", "--processes", "1"]
    )
    header, *rows = capsys.readouterr().out.strip().splitlines()
    assert header.split()[:3] == ["slopes", "patients", "stopped"]
    assert [row.split()[:3] for row in rows] == [["default", "2/4/8", "1"], ["--slopes", "2/4/8", "1"]]


def test_the_accommodation_scripts_errors_are_those_of_the_reported_lens_for_the_relaxed_and_the_accommodating_eye():
    """docs/examples/accommodation.py: a session's spherical-equivalent error and losses, recomputed
    from an optimizer run by hand on the same patient (tuning seed 506, 3 D of accommodation)."""
    from dataclasses import replace

    from lensopt.refraction import AcuityLawOptimizer

    accommodation = load_example("accommodation")
    m_error, relaxed, accommodating, _ = accommodation.run_session("acuity-law", 3.0, 506, 12, (0.0, 4.0))
    patient = draw_patients(1, 506, slope=5.0)[0]
    eye = replace(patient, accommodation_d=3.0)
    opt = AcuityLawOptimizer(seed=506, accommodation_d=(0.0, 4.0))
    for _ in range(12):
        trial = opt.ask()
        opt.tell(trial, bool(eye.respond(trial.letter_logmar, trial.sphere_d, trial.cylinder_d)))
    sphere_d, cylinder_d = opt.best()
    assert m_error == pytest.approx(sphere_d + cylinder_d / 2 - patient.sphere_d - patient.cylinder_d / 2, abs=1e-12)
    assert relaxed == pytest.approx(patient.visual_acuity(sphere_d, cylinder_d) - patient.best_acuity_logmar, abs=1e-12)
    assert accommodating == pytest.approx(eye.visual_acuity(sphere_d, cylinder_d) - eye.best_acuity_logmar, abs=1e-12)
    assert accommodating <= relaxed + 1e-12  # accommodation never blurs


def test_the_accommodation_script_prints_a_row_per_rule_and_amplitude(capsys):
    load_example("accommodation").main(
        [
            "--patients",
            "1",
            "--first-seed",
            "3",
            "--trials",
            "5",
            "--accommodation",
            "0",
            "2",
            "--rules",
            "acuity-law",
            "ucb-ald",
        ]
    )
    header, *rows = capsys.readouterr().out.strip().splitlines()
    assert header.split()[:3] == ["rule", "A", "(D)"]
    assert [row.split()[:2] for row in rows] == [
        ["acuity-law", "0.0"],
        ["acuity-law", "2.0"],
        ["ucb-ald", "0.0"],
        ["ucb-ald", "2.0"],
    ]


def test_the_accommodation_scripts_protocol_session_is_the_shipped_duels_run_by_hand():
    """``--protocol clinical-duel``: a session (cut to 6 duels) is the protocol's optimizer answered by
    hand through the patient's own duel answer at the protocol's "the same" threshold (1 logit), and
    its errors are the reported lens's."""
    from dataclasses import replace

    from lensopt.experiment.modes import mode_for
    from lensopt.experiment.protocol import load_protocol, protocol_from_dict

    shipped = load_protocol(REPO / "protocols" / "clinical-duel.toml")
    assert shipped.simulated.tie_threshold == 1.0  # the threshold the hand-run answers use
    data = shipped.to_dict()
    protocol = protocol_from_dict({**data, "optimizer": {**data["optimizer"], "trials": 6}}, source="test")
    m_error, relaxed, accommodating, _ = load_example("accommodation").run_protocol_session(protocol, 4.0, 500)
    patient = draw_patients(1, 500, slope=5.0)[0]
    eye = replace(patient, accommodation_d=4.0)
    opt = mode_for(protocol).new_optimizer(protocol, 500, protocol.optimizer.letter_bounds_logmar)
    for _ in range(6):
        duel = opt.ask()
        opt.tell(duel, eye.duel_answer(duel.letter_logmar, duel.first_lens_d, duel.second_lens_d, tie_threshold=1.0))
    sphere_d, cylinder_d = opt.best()
    assert m_error == pytest.approx(sphere_d + cylinder_d / 2 - patient.sphere_d - patient.cylinder_d / 2, abs=1e-12)
    assert relaxed == pytest.approx(patient.visual_acuity(sphere_d, cylinder_d) - patient.best_acuity_logmar, abs=1e-12)
    assert accommodating == pytest.approx(eye.visual_acuity(sphere_d, cylinder_d) - eye.best_acuity_logmar, abs=1e-12)


def test_the_accommodation_script_refuses_a_full_prescription_protocol_in_one_line():
    done = subprocess.run(
        [sys.executable, str(REPO / "docs" / "examples" / "accommodation.py"), "--protocol", "clinical-prescription"],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 2 and "--protocol clinical-prescription searches the full prescription" in done.stderr
    assert len(done.stderr.strip().splitlines()) == 1, done.stderr


def test_the_accommodation_scripts_clinical_session_is_the_protocols_stopping_rule_run_by_hand():
    """``--clinical``: a session of tuning seed 3 (2 D of accommodation, the law alone) stops where an
    optimizer with the clinical-refraction protocol's lens step, letters and stopping rule, run by hand,
    stops, and reports its relaxed eye's loss."""
    from dataclasses import replace

    from lensopt.refraction import AcuityLawOptimizer
    from lensopt.stopping import StopRule

    accommodation = load_example("accommodation")
    stopped_at, relaxed_loss = accommodation.run_clinical_session(2.0, 3)
    patient = draw_patients(1, 3, slope=5.0)[0]
    eye = replace(patient, accommodation_d=2.0)
    opt = AcuityLawOptimizer(seed=3, lens_step_d=0.25, letter_bounds_logmar=(-0.3, 1.0), stop=StopRule(0.95, 20, 80))
    for n in range(1, 81):
        trial = opt.ask()
        opt.tell(trial, bool(eye.respond(trial.letter_logmar, trial.sphere_d, trial.cylinder_d)))
        if n >= 20 and opt.confidence() >= 0.95:
            break
    assert stopped_at == (n if n < 80 or opt.confidence() >= 0.95 else None)
    assert relaxed_loss == pytest.approx(patient.visual_acuity(*opt.best()) - patient.best_acuity_logmar, abs=1e-12)


def test_the_comparison_acuity_scripts_session_is_a_duel_refraction_run_by_hand():
    """docs/examples/comparison_acuity.py, tuning seed 5002, 6 duels: the predicted acuity, its SD and
    the patient's own acuity through the prescribed lens, from the same patient refracted by a loop
    written here (the duel mode's responder)."""
    from lensopt.modes.registry import get_mode
    from lensopt.observer import autorefraction, draw_clinic_patients
    from lensopt.refraction.prescription_duels import PrescriptionDuelOptimizer

    predicted, sd, true = load_example("comparison_acuity").run_session(("duel", 5002, 6))
    patient = draw_clinic_patients(1, 5002, slope=14.0)[0]
    opt = PrescriptionDuelOptimizer(seed=5002, start=autorefraction(patient, np.random.SeedSequence([5002, 1])))
    respond = get_mode("duel").responder(patient, tie_threshold=1.0)
    for _ in range(6):
        duel = opt.ask()
        opt.tell(duel, respond(duel))
    mean, sd_here = opt.acuity_logmar(opt.best().to_array()[None, :])
    lens = opt.prescribed_lens(opt.best())
    assert (predicted, sd) == pytest.approx((mean[0], sd_here[0]), abs=1e-12)
    assert true == pytest.approx(patient.visual_acuity(lens.sphere_d, lens.cylinder_d, lens.axis_deg), abs=1e-12)


def test_the_comparison_acuity_scripts_summary_by_hand():
    """Predicted, SD, own (logMAR): differences +0.05, −0.30, +0.12; in band when |d| ≤ 1.96 SD."""
    results = np.array([[0.05, 0.1, 0.0], [-0.2, 0.1, 0.1], [0.32, 0.05, 0.2]])
    n, median, mean_abs, worst, sd, band, line = load_example("comparison_acuity").summary(results).split()
    assert (int(n), float(median), float(mean_abs), float(worst)) == (3, 0.05, 0.157, 0.3)
    assert (float(sd), int(band), int(line)) == (0.1, 1, 1)


def test_the_axis_step_scripts_session_is_scored_and_its_lens_changes_counted_by_hand():
    """docs/examples/axis_step.py, tuning seed 5000, 10 duels at 5° steps: the blur error is the
    power-vector distance of the lens prescribed from the truth, the changes those of lens 1's text."""
    axis_step = load_example("axis_step")
    from lensopt.bench.prescription import patient_and_start
    from lensopt.bench.prescription_spec import PrescriptionSpec
    from lensopt.refraction.prescription_duels import PrescriptionDuelOptimizer
    from lensopt.simulation import simulate_prescription

    row = axis_step.session(5000, "duel", 5.0, 10, 0.0)
    patient, start = patient_and_start(PrescriptionSpec("start-accommodation", "muc-ald", 5000, 10, feedback="duel"))
    by_hand = PrescriptionDuelOptimizer(rule="muc-ald", seed=5000, start=start, axis_step_deg=5.0)
    simulate_prescription(patient, by_hand, 10, checkpoints=(10,), feedback="duel", tie_threshold=0.0)
    lens = by_hand.prescription().lens
    truth = patient.correction.power_vector().to_array()
    assert row["blur_error_d"] == pytest.approx(float(np.linalg.norm(lens.power_vector().to_array() - truth)), abs=1e-6)
    assert row["axis_deg"] == lens.axis_deg and lens.axis_deg % 5 == 0
    texts = [trial.first_lens.format() for trial, _ in by_hand.history]
    assert row["changes"] == sum(a != b for a, b in itertools.pairwise(texts))
    assert 0 <= row["axis_only"] <= row["changes"]


def test_the_axis_step_script_prints_a_line_per_step(capsys):
    load_example("axis_step").main(
        ["--feedback", "letters", "--patients", "1", "--trials", "6", "--first-seed", "5000"]
    )
    lines = capsys.readouterr().out.strip().splitlines()
    assert [line.split(":")[0] for line in lines] == [
        "letters, axis step 1 degrees, 6 trials",
        "letters, axis step 5 degrees, 6 trials",
    ]
    assert all("> 0.5 D" in line and "of 1; lens changes" in line for line in lines)


@pytest.fixture(scope="module")
def short_campaign(tmp_path_factory):
    """A short campaign of ``lensopt bench prescription`` with a stopping rule (tuning seeds
    5000-5003, 25 letters, a stop at 0.5 from 20): its folder."""
    out = tmp_path_factory.mktemp("unstopped") / "campaign"
    command = [sys.executable, "-m", "lensopt", "bench", "prescription", "--out", str(out)]
    options = ["--settings", "start-no-accommodation", "--rules", "bracket-ald", "--patients", "4", "--first-seed"]
    options += ["5000", "--trials", "25", "--slope", "14", "--stop-confidence", "0.5", "--min-trials", "20"]
    run = subprocess.run(
        [*command, *options, "--local-sync", "--no-progress"], capture_output=True, text=True, timeout=600
    )
    assert run.returncode == 0, run.stderr
    return out


def test_unstopped_eyes_counts_the_stops_as_the_campaigns_summary_and_the_rest_as_short(short_campaign, capsys):
    """docs/examples/unstopped_eyes.py on a short campaign (tuning seeds 5000-5003, 25 letters, a
    stop at 0.5 from 20): its stopped eyes are the summary's, every other eye ran to the budget
    short of the threshold, and the eyes short of it are counted within the tolerances from the
    records' errors."""
    out = short_campaign
    summary = subprocess.run(
        [sys.executable, "-m", "lensopt", "bench", "prescription", "--summary", str(out)],
        capture_output=True,
        text=True,
        check=True,
        timeout=600,
    ).stdout
    stopped_in_summary = re.search(r"(\d+)/4\s+([\d.]+)", summary)
    assert stopped_in_summary is not None, summary
    unstopped = load_example("unstopped_eyes")
    (row,) = unstopped.rows(load_records(out, "lensopt bench prescription"))
    assert row["eyes"] == 4 and row["stopped"] == int(stopped_in_summary.group(1))
    assert row["stopped_within_d"] == round(float(stopped_in_summary.group(2)) * row["stopped"])
    assert row["stopped"] + row["short"] == 4
    records = load_records(out, "lensopt bench prescription")
    short = [r for r in records if r["stopped_at"] is None or r["stop_reason"] != "confidence"]
    assert all(r["confidence"] < 0.5 for r in short)  # short of the threshold at the budget
    assert row["short_within_d"] == sum(r["curves"]["blur_error_d"][-1] <= 0.25 for r in short)
    unstopped.main([str(out)])
    assert "start-no-accommodation" in capsys.readouterr().out


def test_unstopped_eyes_reads_the_campaigns_of_an_archive_from_its_tarball(short_campaign, tmp_path):
    """A folder of docs/results keeps its campaigns in runs.tar.xz (a folder per campaign, each with
    its runs/) and has no runs/: docs/examples/unstopped_eyes.py reads each campaign from the tarball,
    in memory (docs/results/prescription-printed-lens failed: "no 'runs/' directory"). Its counts
    are those of the records in the tarball, read here; nothing is written beside the tarball."""
    archive = tmp_path / "archived"
    archive.mkdir()
    with tarfile.open(archive / "runs.tar.xz", "w:xz") as tar:  # two campaigns, as the archives hold
        for name in ("no-check", "check-letters"):
            tar.add(short_campaign / "runs", arcname=f"{name}/runs")
            tar.add(short_campaign / "campaign.json", arcname=f"{name}/campaign.json")
    before = sorted(archive.rglob("*"))
    done = subprocess.run(
        [sys.executable, str(EXAMPLES / "unstopped_eyes.py"), str(archive)],
        capture_output=True,
        text=True,
        timeout=120,
        cwd=tmp_path,
    )
    assert done.returncode == 0 and "Traceback" not in done.stderr, done.stderr
    assert sorted(archive.rglob("*")) == before == [archive / "runs.tar.xz"]
    with tarfile.open(archive / "runs.tar.xz") as tar:
        records = [
            json.loads(tar.extractfile(member).read())
            for member in tar.getmembers()
            if member.name.startswith("no-check/runs/") and member.name.endswith(".json")
        ]
    assert len(records) == 4
    stopped = sum(r["stop_reason"] == "confidence" for r in records)
    within = sum(r["error_at_stop"]["blur_error_d"] <= 0.25 for r in records if r["stop_reason"] == "confidence")
    short = [r for r in records if r["stop_reason"] != "confidence"]
    header, rule, *rows = done.stdout.strip().splitlines()
    assert header.startswith("campaign") and set(rule) == {"-"}
    expected = (
        "start-no-accommodation",
        "0.00",
        "4",
        str(stopped),
        str(within),
        str(len(short)),
        str(sum(r["va_error_logmar"] <= 0.025 for r in short)),
        str(sum(r["blur_error_d"] <= 0.25 for r in short)),
    )
    assert stopped + len(short) == 4
    # a row: campaign, setting, lapse, eyes, stopped (within), short, their confidence min / med / max
    # (— when none is short), within 0.025 logMAR, within 0.25 D, worst logMAR / D (or —)
    row_pattern = (
        r"(\S+) +(\S+) +(\S+) +(\d+) +(\d+) \( *(\d+)\) +(\d+) +(?:—|\S+ / \S+ / \S+) +(\d+) +(\d+) +(?:—|\S+ / \S+)"
    )
    for name, row in zip(("check-letters", "no-check"), rows, strict=True):  # by name, one setting each
        match = re.fullmatch(row_pattern, row)
        assert match is not None and match.groups() == (name, *expected), row


#: Bad values given to the example scripts, each refused in one line (exit code 2, no traceback)
#: before any work: ``(script, arguments, a fragment of the line)``.
BAD_INVOCATIONS = [
    ("slope_grid", ["--slopes", "2", "--trials", "15"], "--trials: must be at least 20"),
    ("slope_grid", ["--slopes", "0"], "--slopes: must be a positive number"),
    ("slope_grid", ["--slopes", "nan"], "--slopes: must be a finite number"),
    ("slope_grid", ["--slopes", "2", "--first-seed", "-1"], "--first-seed: must be 0 or more"),
    ("slope_grid", ["--slopes", "2", "--processes", "1000"], "--processes: must be at most"),
    ("edge_failure", ["--trials", "0"], "--trials: must be at least 1"),
    ("edge_failure", ["--seed", "-1"], "--seed: must be 0 or more"),
    ("edge_failure", ["--rule", "acuity-law"], "--rule: invalid choice"),
    ("interval_coverage", ["--patients", "0"], "--patients: must be at least 1"),
    ("interval_coverage", ["--first-seed", "-1"], "--first-seed: must be 0 or more"),
    ("accommodation", ["--accommodation", "-1"], "--accommodation: must be 0 or more"),
    ("accommodation", ["--accommodation", "nan"], "--accommodation: must be a finite number"),
    ("accommodation", ["--rules", "foo"], "--rules: invalid choice: 'foo'"),
    ("accommodation", ["--model-accommodation", "25"], "--model-accommodation: must be an amplitude"),
    ("accommodation", ["--first-seed", "-1"], "--first-seed: must be 0 or more"),
    ("accommodation", ["--protocol", "no-such-protocol"], "--protocol: protocol file no-such-protocol not found"),
    ("comparison_acuity", ["--first-seed", "-1"], "--first-seed: must be 0 or more"),
    ("comparison_acuity", ["--patients", "0"], "--patients: must be at least 1"),
    ("law_misspecified", ["--gains", "0"], "--gains: must be a positive number"),
    ("law_misspecified", ["--gains", "inf"], "--gains: must be a finite number"),
    ("law_misspecified", ["--rules", "foo"], "--rules: invalid choice: 'foo'"),
    ("law_misspecified", ["--va-best", "nan"], "--va-best: must be a finite number"),
    ("law_misspecified", ["--first-seed", "-1"], "--first-seed: must be 0 or more"),
    ("axis_step", ["--patients", "0"], "--patients: must be at least 1"),
    ("axis_step", ["--trials", "0"], "--trials: must be at least 1"),
    ("axis_step", ["--steps", "7"], "--steps: must be whole degrees that divide 180"),
    ("axis_step", ["--steps", "nan"], "--steps: must be a finite number"),
    ("axis_step", ["--first-seed", "-1"], "--first-seed: must be 0 or more"),
    ("axis_step", ["--tie-threshold", "-1"], "--tie-threshold: must be 0 or more"),
    ("axis_step", ["--tie-threshold", "1"], "--tie-threshold: applies to --feedback duel only"),
    ("axis_step", ["--feedback", "duel", "--tie-threshold", "25"], "tie threshold must be in [0, 20]"),
    ("untried_lenses", ["--patients", "0"], "--patients: must be at least 1"),
    ("untried_lenses", ["--trials", "-3"], "--trials: must be at least 1"),
    ("untried_lenses", ["--first-seed", "-1"], "--first-seed: must be 0 or more"),
    ("unstopped_eyes", ["no-such-campaign"], "no-such-campaign is not a folder"),
    ("unstopped_eyes", ["."], "holds no benchmark runs"),
    ("lookahead_frames", ["--seed", "-1"], "--seed: must be 0 or more"),
    ("psychopy_handler", ["--seed", "-1"], "--seed: must be 0 or more"),
    ("psychopy_handler", ["--trials", "0"], "--trials: must be at least 1"),
]


@pytest.mark.parametrize(
    ("script", "arguments", "fragment"),
    BAD_INVOCATIONS,
    ids=[f"{script}{''.join(arguments)}" for script, arguments, _ in BAD_INVOCATIONS],
)
def test_each_example_refuses_a_bad_value_in_one_line_before_any_work(script, arguments, fragment, tmp_path):
    """The project's rule for every command: a bad value is one line on stderr naming it and the fix,
    exit code 2, no traceback, and nothing printed (axis_step.py printed its table of nan)."""
    done = subprocess.run(
        [sys.executable, str(EXAMPLES / f"{script}.py"), *arguments],
        capture_output=True,
        text=True,
        timeout=120,
        cwd=tmp_path,  # an empty folder: unstopped_eyes.py's "." holds no campaign
    )
    lines = done.stderr.splitlines()
    assert done.returncode == 2 and "Traceback" not in done.stderr, done.stderr[-2000:]
    assert len(lines) == 1 and lines[0].strip() and fragment in lines[0], done.stderr
    assert done.stdout == ""
