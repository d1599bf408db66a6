"""Preferential benchmark campaigns: records, shared outcome draws, the CLI end to end."""

import json

import numpy as np
import pytest
from scipy.stats import norm

from lensopt.bench.problems import function_problem
from lensopt.bench.runner import RunSpec, run_one
from lensopt.cli import main


@pytest.mark.parametrize(
    "campaign, rule, batch",
    [
        ("duels", "muc", 2),
        ("batch-duels", "kss", 3),
        ("contextual-duels", "muc-ald", 2),
    ],
)
def test_each_preferential_campaign_records_a_trajectory_of_true_values(campaign, rule, batch):
    record = run_one(RunSpec(campaign, "forrester", rule, 1, 7, n_initial=3).to_dict())
    problem = function_problem("forrester")
    assert record["batch_size"] == batch and len(record["trajectory"]) == 7
    # the last value is the true rescaled function at the reported point
    final = np.array(record["final_point"])[None]
    assert record["trajectory"][-1] == pytest.approx(float(problem.g(final)[0]), abs=1e-12)
    assert record["trajectory"][-1] <= problem.optimal_value + 1e-9
    assert record["timings_ms"]["decision"]["n"] == 7


def test_duel_probability_is_the_probit_of_the_scaled_difference():
    problem = function_problem("forrester")
    X1, X2 = np.array([[0.2], [0.75]]), np.array([[0.9], [0.1]])
    expected = norm.cdf(0.6 * (problem.g(X1) - problem.g(X2)))
    np.testing.assert_allclose(problem.duel_probability(0.6, X1, X2), expected, rtol=1e-12)
    np.testing.assert_allclose(problem.duel_probability(0.6, X1, X2) + problem.duel_probability(0.6, X2, X1), 1.0)


def test_same_seed_gives_the_same_preferential_record():
    spec = RunSpec("duels", "sphere", "random", 4, 5, n_initial=2).to_dict()
    a, b = run_one(spec), run_one(spec)
    assert a["trajectory"] == b["trajectory"] and a["final_point"] == b["final_point"]


def test_cli_duel_campaign_runs_resumes_and_reports(tmp_path, capsys):
    out = tmp_path / "duels"
    argv = [
        "bench",
        "duels",
        "--out",
        str(out),
        "--seeds",
        "2",
        "--iterations",
        "5",
        "--initial",
        "2",
        "--rules",
        "muc",
        "random",
        "--problems",
        "forrester",
        "--local-sync",
        "--no-progress",
    ]
    assert main(argv) == 0
    assert main(argv) == 0
    assert "4 already done, 0 run now" in capsys.readouterr().out
    manifest = json.loads((out / "campaign.json").read_text())
    assert manifest["campaign"] == "duels" and manifest["rules"] == ["muc", "random"]
    assert main(["bench", "report", str(out)]) == 0
    assert (out / "report" / "ranking.md").exists()


@pytest.mark.parametrize(
    "argv, message",
    [
        (["bench", "duels", "--rules", "muc-ald"], "choose from"),
        (["bench", "contextual-duels", "--rules", "dueling-ucb"], "choose from"),
        (["bench", "batch-duels", "--rules", "muc", "muc"], "twice"),
        (["bench", "batch-duels", "--rules", "dueling-ucb"], "choose from"),
    ],
)
def test_cli_duel_campaign_bad_rules_give_one_line_and_exit_2(argv, message, capsys, tmp_path):
    assert main(argv + ["--out", str(tmp_path / "x"), "--local-sync"]) == 2
    err = capsys.readouterr().err
    assert message in err and len(err.strip().splitlines()) == 1


# ---- letters against duels on the same patients (issue 8) ------------------------------------
def test_feedback_modes_face_the_same_patient_and_duel_ties_are_counted():
    letters = run_one(
        RunSpec("feedback", "slope-5", "letters", 2, 8, n_initial=3, slope=5.0, tie_threshold=1.0).to_dict()
    )
    duels = run_one(
        RunSpec("feedback", "slope-5", "duel-drop-ties", 2, 8, n_initial=3, slope=5.0, tie_threshold=1.0).to_dict()
    )
    never = run_one(
        RunSpec("feedback", "slope-5", "duel-drop-ties", 2, 8, n_initial=3, slope=5.0, tie_threshold=0.0).to_dict()
    )
    assert letters["true_correction_d"] == duels["true_correction_d"]
    assert letters["n_same_answers"] == 0 and never["n_same_answers"] == 0
    assert duels["n_same_answers"] > 0  # δ = 1: about half the answers to similar lenses
    assert all(v >= 0 for v in duels["trajectory"])  # an acuity error is never negative


def test_feedback_letters_follow_the_beta_of_their_spec():
    def lens(beta):
        spec = RunSpec("feedback", "slope-5", "letters", 2, 9, n_initial=3, slope=5.0, tie_threshold=1.0, beta=beta)
        return run_one(spec.to_dict())["final_point"]

    assert lens(0.0) != lens(3.0)


def test_feedback_run_needs_a_tie_threshold():
    with pytest.raises(ValueError, match="tie_threshold"):
        RunSpec("feedback", "slope-5", "letters", 0, 5, slope=5.0)


def test_cli_feedback_campaign_rejects_an_unknown_mode(capsys, tmp_path):
    assert main(["bench", "feedback", "--rules", "smoke-signals", "--out", str(tmp_path / "f"), "--local-sync"]) == 2
    assert "choose from" in capsys.readouterr().err


def test_the_cli_copies_of_the_feedback_defaults_are_the_benchmark_s():
    # `lensopt --help` shows them without importing lensopt.bench.feedback (it imports the optimizers)
    from lensopt.bench import feedback
    from lensopt.cli import defaults

    for name in ("FEEDBACK_RULES", "FEEDBACK_TRIALS", "FEEDBACK_PATIENTS", "FEEDBACK_SLOPE", "FEEDBACK_TIE_THRESHOLD"):
        assert getattr(defaults, name) == getattr(feedback, name), name
