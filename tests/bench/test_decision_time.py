"""`lensopt bench decision-time`: processes that import numpy first, timed ask + tell, JSON fields.

No assertion on speed: only that the benchmark runs and reports what it measured.
"""

import json
import sys

import pytest

from lensopt.bench.decision_time import (
    BLAS_ENV,
    DEFAULT_RESPONSE_MS,
    FRAME_MS,
    child_environment,
    run_decision_time,
    summarize_ms,
)
from lensopt.cli import main

SUMMARY_FIELDS = {"n", "median_ms", "p95_ms", "max_ms", "p95_frames"}
PROCESS_FIELDS = SUMMARY_FIELDS | {
    "process",
    "seed",
    "pid",
    "blas_threads_setting",
    "limit_applied_by",
    "blas_threads_inside",
    "blas_threads_inside_varied",
    "blas_threads_outside",
    "blas_libraries",
    "large_blocks_kept",
    "trials_run",
    "stopped_at",
    "cpu_median_ms",
    "cpu_p95_ms",
}
RESULT_FIELDS = {
    "rule",
    "search",
    "handler",
    "lookahead",
    "response_ms",
    "stop",
    "accommodation_d",
    "decision",
    "processes",
    "trials",
    "seed",
    "import_order",
    "blas_threads_setting",
    "limit",
    "limit_applied_by",
    "env_removed",
    "env_lensopt_blas_threads",
    "cpu_count",
    "frame_ms",
    "per_process",
    "pooled",
    "pooled_cpu",
    "within_frame",
}


def _run_json(capsys, *extra):
    code = main(["bench", "decision-time", "--processes", "1", "--trials", "5", "--json", *extra])
    out = capsys.readouterr().out
    assert code == 0
    return json.loads(out)


def test_one_process_five_trials_json(capsys, monkeypatch):
    monkeypatch.delenv("LENSOPT_BLAS_THREADS", raising=False)
    result = _run_json(capsys)
    assert set(result) == RESULT_FIELDS
    assert (result["rule"], result["processes"], result["trials"], result["seed"]) == ("ucb-ald", 1, 5, 0)
    assert result["import_order"] == "numpy-first"
    assert result["limit"] is True and result["blas_threads_setting"] == 1
    assert result["frame_ms"] == pytest.approx(FRAME_MS)
    assert set(result["pooled"]) == SUMMARY_FIELDS and result["pooled"]["n"] == 5
    (process,) = result["per_process"]
    assert set(process) == PROCESS_FIELDS
    assert process["n"] == 5 and process["seed"] == 0
    assert process["median_ms"] <= process["p95_ms"] <= process["max_ms"]
    assert process["p95_frames"] == pytest.approx(process["p95_ms"] / FRAME_MS)
    assert process["limit_applied_by"] in ("optimizer", "benchmark")
    # the proof that the limit took effect inside the timed calls
    assert process["blas_threads_inside"] and set(process["blas_threads_inside"]) == {1}
    assert len(process["blas_libraries"]) == len(process["blas_threads_outside"]) >= 1


@pytest.mark.skipif(sys.platform != "linux", reason="glibc's malloc thresholds: Linux only")
def test_acuity_law_decisions_run_with_large_blocks_kept_and_the_gp_rules_without(capsys, monkeypatch):
    for name in ("LENSOPT_MALLOC", "MALLOC_MMAP_THRESHOLD_", "MALLOC_TRIM_THRESHOLD_"):
        monkeypatch.delenv(name, raising=False)
    (law,) = _run_json(capsys, "--rule", "acuity-law")["per_process"]
    (ucb,) = _run_json(capsys)["per_process"]
    assert law["large_blocks_kept"] is True and ucb["large_blocks_kept"] is False


def test_no_limit_and_lensopt_first(capsys, monkeypatch):
    monkeypatch.delenv("LENSOPT_BLAS_THREADS", raising=False)
    result = _run_json(capsys, "--no-limit", "--lensopt-first", "--seed", "3")
    assert result["limit"] is False and result["limit_applied_by"] == "none"
    assert result["import_order"] == "lensopt-first" and result["env_lensopt_blas_threads"] == "0"
    (process,) = result["per_process"]
    assert process["seed"] == 3 and process["n"] == 5
    # lensopt imported first sets its BLAS variables before numpy loads: one thread even unlimited
    assert set(process["blas_threads_outside"]) == {1}


def test_table_output(capsys, monkeypatch):
    monkeypatch.delenv("LENSOPT_BLAS_THREADS", raising=False)
    assert main(["bench", "decision-time", "--processes", "1", "--trials", "3"]) == 0
    out = capsys.readouterr().out
    assert "median ms" in out and "p95/frame" in out and "pooled" in out and "60 Hz" in out


def test_child_environment_strips_thread_variables_only():
    base = {
        "OPENBLAS_NUM_THREADS": "1",
        "OMP_NUM_THREADS": "1",
        "MKL_NUM_THREADS": "1",
        "OPENBLAS_CORETYPE": "Haswell",
        "OPENBLAS_L2_SIZE": "1048576",
        "PATH": "/bin",
    }
    env = child_environment(limit=True, base=base)
    assert not set(BLAS_ENV) & set(env)
    assert env["OPENBLAS_CORETYPE"] == "Haswell" and env["OPENBLAS_L2_SIZE"] == "1048576"
    assert "LENSOPT_BLAS_THREADS" not in env
    assert child_environment(limit=False, base=base)["LENSOPT_BLAS_THREADS"] == "0"


def test_summary():
    s = summarize_ms([1.0, 2.0, 3.0, 4.0, 100.0])
    assert s["median_ms"] == 3.0 and s["max_ms"] == 100.0 and s["n"] == 5
    assert s["p95_ms"] == pytest.approx(80.8)  # numpy's linear percentile
    assert summarize_ms([])["median_ms"] is None


def test_bad_arguments_are_one_line_errors(capsys, monkeypatch):
    assert main(["bench", "decision-time", "--rule", "nope", "--processes", "1", "--trials", "1"]) == 2
    assert "unknown rule 'nope'" in capsys.readouterr().err
    monkeypatch.setenv("LENSOPT_BLAS_THREADS", "many")
    assert main(["bench", "decision-time", "--processes", "1", "--trials", "1"]) == 2
    err = capsys.readouterr().err
    assert "LENSOPT_BLAS_THREADS must be a non-negative integer" in err and err.count("\n") == 1


def test_the_full_prescription_is_timed_with_its_own_optimizer():
    """--search prescription: three lens parameters and the letter size, asked lenses with an axis."""
    result = run_decision_time(processes=1, trials=8, seed=2, search="prescription")
    assert result["search"] == "prescription"
    (process,) = result["per_process"]
    assert process["median_ms"] > 0 and process["p95_ms"] >= process["median_ms"]


def test_an_unknown_search_is_refused():
    with pytest.raises(ValueError, match="unknown search"):
        run_decision_time(processes=1, trials=2, search="sphere")


def test_handler_decisions_with_the_stop_check_json(capsys, monkeypatch):
    """--handler --stop: every decision of the handler loop is timed (the trials' and the one that
    ends the loop), the stopping rule is reported and, from --min-trials on, checked in each."""
    monkeypatch.delenv("LENSOPT_BLAS_THREADS", raising=False)
    result = _run_json(capsys, "--handler", "--stop", "0.95", "--min-trials", "3", "--seed", "2")
    assert set(result) == RESULT_FIELDS
    assert result["handler"] is True and result["stop"] == {"confidence": 0.95, "min_trials": 3}
    assert result["decision"].startswith("addResponse")
    (process,) = result["per_process"]
    assert set(process) == PROCESS_FIELDS
    assert process["seed"] == 2 and process["limit_applied_by"] == "optimizer"
    assert set(process["blas_threads_inside"]) == {1}
    # 5 trials and the end of the loop, unless the rule stopped the session earlier
    run = process["trials_run"]
    assert 3 <= run <= 5 and process["n"] == run + 1 == result["pooled"]["n"]
    assert process["stopped_at"] == (run if run < 5 else None)
    assert 0 < process["median_ms"] <= process["p95_ms"] <= process["max_ms"]
    assert 0 < process["cpu_median_ms"] <= process["cpu_p95_ms"] and result["pooled_cpu"]["n"] == run + 1


def test_handler_decides_ahead_by_default_and_in_process_on_request(capsys, monkeypatch):
    """The handler's lookahead (a worker deciding for both answers while the patient looks) is on by
    default, with the patient answering after 300 ms; --no-lookahead times the in-process handler,
    --response-ms sets the answer time; ask + tell records neither."""
    monkeypatch.delenv("LENSOPT_BLAS_THREADS", raising=False)
    ahead = _run_json(capsys, "--handler", "--response-ms", "20")
    assert ahead["lookahead"] is True and ahead["response_ms"] == 20.0 and ahead["pooled"]["n"] == 6
    plain = _run_json(capsys, "--handler", "--no-lookahead")
    assert plain["lookahead"] is False and plain["response_ms"] == DEFAULT_RESPONSE_MS == 300.0
    asktell = _run_json(capsys)
    assert asktell["lookahead"] is False and asktell["response_ms"] is None
    argv = ["bench", "decision-time", "--processes", "1", "--trials", "3", "--handler", "--response-ms", "0"]
    assert main(argv) == 0
    assert "deciding ahead in a worker, answers after 0 ms" in capsys.readouterr().out


def test_handler_without_a_stopping_rule_and_ask_tell_with_one(capsys, monkeypatch):
    monkeypatch.delenv("LENSOPT_BLAS_THREADS", raising=False)
    handler = _run_json(capsys, "--handler")
    assert handler["stop"] is None and handler["pooled"]["n"] == 6
    assert handler["per_process"][0]["stopped_at"] is None
    plain = _run_json(capsys, "--stop", "0.9", "--min-trials", "2")
    assert plain["handler"] is False and plain["decision"] == "ask + tell"
    assert plain["pooled"]["n"] == plain["per_process"][0]["trials_run"] <= 5


def test_handler_table_output(capsys, monkeypatch):
    monkeypatch.delenv("LENSOPT_BLAS_THREADS", raising=False)
    argv = ["bench", "decision-time", "--processes", "1", "--trials", "4", "--handler", "--stop", "0.95"]
    assert main([*argv, "--min-trials", "2"]) == 0
    out = capsys.readouterr().out
    assert "addResponse -> next trial (tell, stop check, ask) through RefractionHandler" in out
    assert "stopping rule: confidence 0.95 from 2 trials" in out and "pooled p95" in out
    assert "CPU time of the same decisions" in out


@pytest.mark.parametrize(
    "extra, names",
    [
        (["--stop", "1.5"], "--stop"),
        (["--stop", "0"], "--stop"),
        (["--stop", "nan"], "--stop"),
        (["--stop", "0.9", "--min-trials", "0"], "--min-trials"),
        (["--stop", "0.9", "--min-trials", "30"], "--min-trials"),  # more than --trials 10
        (["--response-ms", "-5"], "--response-ms"),
        (["--response-ms", "1e9"], "--response-ms"),
    ],
)
def test_bad_stop_options_are_one_line_and_exit_2(capsys, extra, names):
    try:
        code = main(["bench", "decision-time", "--processes", "1", "--trials", "10", "--handler", *extra])
    except SystemExit as exc:  # argparse's refusals
        code = exc.code
    err = capsys.readouterr().err
    assert code == 2 and err.count("\n") == 1 and "Traceback" not in err
    assert names in err


def test_duels_through_the_handler_decide_ahead_for_their_three_answers(capsys, monkeypatch):
    """--search duel: the two-parameter duels (answers first, second or the same), their default
    rule muc-ald, through the handler with the lookahead; no stopping rule (--stop is refused)."""
    monkeypatch.delenv("LENSOPT_BLAS_THREADS", raising=False)
    result = _run_json(capsys, "--search", "duel", "--handler", "--response-ms", "50")
    assert result["search"] == "duel" and result["rule"] == "muc-ald" and result["lookahead"] is True
    assert result["pooled"]["n"] == 6 and result["per_process"][0]["trials_run"] == 5
    plain = _run_json(capsys, "--search", "duel", "--trials", "3")
    assert plain["decision"] == "ask + tell" and plain["pooled"]["n"] == 3
    code = main(["bench", "decision-time", "--processes", "1", "--trials", "3", "--search", "duel", "--stop", "0.9"])
    err = capsys.readouterr().err
    assert code == 2 and err.count("\n") == 1 and "duels have no stopping rule" in err


def test_the_default_rule_is_the_searchs_own(capsys):
    """Without --rule the benchmark times what a session runs: UCB-ALD in the two-parameter search,
    the bracketing rule around a start (the prescription's default), not a rule it never uses."""
    assert _run_json(capsys, "--search", "prescription", "--trials", "2")["rule"] == "bracket-ald"
    assert _run_json(capsys, "--trials", "2")["rule"] == "ucb-ald"


def test_the_help_states_the_default_answer_time(capsys):
    with pytest.raises(SystemExit) as exit_:
        main(["bench", "decision-time", "--help"])
    assert exit_.value.code == 0
    help_text = " ".join(capsys.readouterr().out.split())
    assert f"(default {DEFAULT_RESPONSE_MS:g}:" in help_text


def test_the_acuity_law_optimizer_is_timed_with_its_amplitudes_of_accommodation(capsys):
    """``--accommodation``: the clinical-refraction protocol's optimizer (its amplitudes in the prior),
    recorded in the result and named in the table; refused in one line with a GP rule or bad amplitudes."""
    result = _run_json(capsys, "--rule", "acuity-law", "--accommodation", "4", "0", "1")
    assert result["accommodation_d"] == [0.0, 1.0, 4.0] and result["pooled"]["n"] == 5
    assert _run_json(capsys, "--rule", "acuity-law")["accommodation_d"] is None
    assert (
        main(
            [
                "bench",
                "decision-time",
                "--processes",
                "1",
                "--trials",
                "2",
                "--rule",
                "acuity-law",
                "--accommodation",
                "0",
                "2",
            ]
        )
        == 0
    )
    assert "rule acuity-law (amplitudes of accommodation 0, 2 D)" in capsys.readouterr().out
    for extra in (["--accommodation", "0", "4"], ["--rule", "acuity-law", "--accommodation", "-1"]):
        try:
            code = main(["bench", "decision-time", "--processes", "1", "--trials", "2", *extra])
        except SystemExit as exc:  # argparse's refusals
            code = exc.code
        err = capsys.readouterr().err
        assert code == 2 and err.count("\n") == 1 and "accommodation" in err and "Traceback" not in err
