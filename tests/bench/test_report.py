"""Campaign report: tables agree with the analysis, regret by hand, files written, no pyplot."""

import csv
import json
import re
from pathlib import Path

import numpy as np
import pytest

import lensopt.bench
from lensopt.bench.analysis import stratified_analysis, trajectories_from_records
from lensopt.bench.report import format_duration, regret_curves, write_report
from lensopt.bench.runner import MANIFEST_NAME, write_json_atomic
from lensopt.cli import main

PNG_MAGIC = b"\x89PNG\r\n\x1a\n"


def _record(problem, rule, seed, trajectory, direction="max", optimal=3.0):
    return {
        "key": f"{problem}__{rule}__seed{seed:04d}",
        "campaign": "functions",
        "problem": problem,
        "rule": rule,
        "seed": seed,
        "n_iterations": len(trajectory),
        "n_initial": 5,
        "slope": None,
        "direction": direction,
        "optimal_value": optimal,
        "trajectory": list(trajectory),
        "final_value": trajectory[-1],
        "wall_time_s": 2.0,
        "started_at": f"2026-01-01T00:00:{seed:02d}+00:00",
        "finished_at": f"2026-01-01T00:01:{seed:02d}+00:00",
        "host": "test",
        "versions": {"lensopt": "0", "numpy": "0", "scipy": "0"},
    }


@pytest.fixture
def campaign(tmp_path):
    rng = np.random.default_rng(0)
    means = {"ucb-ald": 2.0, "random": 0.0, "bald": 1.0}
    (tmp_path / "runs").mkdir()
    for problem in ("p1", "p2"):
        for rule, mean in means.items():
            for seed in range(30):
                traj = np.linspace(-1, mean, 8) + 0.05 * rng.standard_normal(8)
                rec = _record(problem, rule, seed, traj.tolist())
                write_json_atomic(tmp_path / "runs" / f"{rec['key']}.json", rec)
    write_json_atomic(
        tmp_path / MANIFEST_NAME,
        {"rules": ["ucb-ald", "bald", "random"], "problems": ["p1", "p2"], "command": "lensopt bench x"},
    )
    return tmp_path


def test_report_writes_every_file_and_matches_the_analysis(campaign, tmp_path):
    out = tmp_path / "rep"
    summary = write_report(campaign, out)
    for name in ("ranking.md", "ranking.csv", "ranking.json", "win-final.csv", "win-auc.csv"):
        assert (out / name).stat().st_size > 0
    for png in [out / "win-final.png", out / "win-auc.png", out / "curves" / "p1.png", out / "curves" / "p2.png"]:
        assert png.read_bytes()[:8] == PNG_MAGIC
    rows = list(csv.DictReader((out / "ranking.csv").read_text().splitlines()))
    assert [r["rule"] for r in rows] == ["ucb-ald", "bald", "random"]
    assert [int(r["borda"]) for r in rows] == [4, 2, 0]
    records = [json.loads(p.read_text()) for p in (campaign / "runs").glob("*.json")]
    trajectories, directions = trajectories_from_records(records)
    expected = stratified_analysis(trajectories, directions, rules=["ucb-ald", "bald", "random"])
    assert json.loads((out / "ranking.json").read_text())["table"] == expected.table()
    assert summary["timing"]["n_runs"] == 180 and summary["timing"]["wall_time_s"] == 89.0
    md = (out / "ranking.md").read_text()
    assert "| UCB-ALD | 1 | 4 |" in md and "lensopt bench x" in md
    win = list(csv.reader((out / "win-final.csv").read_text().splitlines()))
    assert win[1][0] == "ucb-ald" and float(win[1][3]) == 1.0  # UCB-ALD beats Random on both


def test_regret_by_hand_for_both_directions():
    recs = [
        _record("f", "a", 0, [1.0, 2.5], optimal=3.0),
        _record("r", "a", 0, [0.4, 0.1], direction="min", optimal=0.0),
    ]
    curves = regret_curves(recs)
    np.testing.assert_allclose(curves["f"]["a"], [[2.0, 0.5]])
    np.testing.assert_allclose(curves["r"]["a"], [[0.4, 0.1]])


def test_empty_campaign_raises(tmp_path):
    (tmp_path / "runs").mkdir()
    with pytest.raises(ValueError, match="no finished runs"):
        write_report(tmp_path)


def test_durations_are_human_readable():
    assert format_duration(42) == "42 s" and format_duration(600) == "10.0 min"
    assert format_duration(9000) == "2.50 h"


def test_benchmark_package_never_imports_pyplot():
    root = Path(lensopt.bench.__file__).parent
    sources = [p.read_text() for p in root.rglob("*.py")]
    pattern = re.compile(
        r"^\s*(import matplotlib\.pyplot|from matplotlib import pyplot|"
        r"from matplotlib\.pyplot import)",
        re.MULTILINE,
    )
    assert sources and not any(pattern.search(s) for s in sources)


def test_checkpoint_medians_by_hand():
    from lensopt.bench.report import checkpoint_medians

    regret = np.arange(1, 301, dtype=float)[None, :] * np.array([[1.0], [2.0], [4.0]])  # 3 runs × 300 trials
    rows = checkpoint_medians({"p": {"r": regret}}, checkpoints=(30, 260, 400))
    assert [r["trials"] for r in rows] == [30, 260]
    assert rows[0]["median"] == 60.0 and rows[0]["mean"] == pytest.approx(70.0)
    assert rows[1]["median"] == 520.0


def test_report_tabulates_checkpoints_only_where_runs_reach_them(campaign, tmp_path):
    out = tmp_path / "rep2"
    summary = write_report(campaign, out)
    rows = list(csv.DictReader((out / "checkpoints.csv").read_text().splitlines()))
    assert rows == [] and summary["checkpoints"] == []  # the fixture's runs stop after 8 trials
    assert "Median regret" not in (out / "ranking.md").read_text()


AUXILIARY = ("started_at", "finished_at", "wall_time_s", "host", "versions")


def _strip(campaign, keys, which=slice(None)):
    """Remove ``keys`` from the campaign's records (``which`` of them, sorted), as old or hand-made ones lack them."""
    paths = sorted((campaign / "runs").glob("*.json"))[which]
    for path in paths if isinstance(paths, list) else [paths]:
        record = json.loads(path.read_text())
        path.write_text(json.dumps({k: v for k, v in record.items() if k not in keys}))
    return paths


def test_records_without_their_times_hosts_or_versions_are_reported_with_them_unknown(campaign, tmp_path):
    table = write_report(campaign, tmp_path / "before")["table"]
    _strip(campaign, AUXILIARY)
    summary = write_report(campaign, tmp_path / "rep")
    timing = summary["timing"]
    assert timing["n_runs"] == 180 and timing["wall_time_s"] is None and timing["summed_run_time_s"] is None
    assert timing["hosts"] == ["unknown"] and "versions" not in timing
    text = (tmp_path / "rep" / "ranking.md").read_text()
    assert (
        "campaign wall time unknown (first start to last finish), summed run time unknown, on an unknown host" in text
    )
    assert summary["table"] == table  # the analysis is the same


def test_some_records_without_their_times_leave_the_campaigns_times_unknown_and_keep_the_others_versions(
    campaign, tmp_path
):
    _strip(campaign, AUXILIARY, slice(-1, None))  # the last record, whose versions were reported
    timing = write_report(campaign, tmp_path / "rep")["timing"]
    assert timing["wall_time_s"] is None and timing["summed_run_time_s"] is None
    assert timing["hosts"] == ["test", "unknown"] and timing["versions"] == {"lensopt": "0", "numpy": "0", "scipy": "0"}


@pytest.mark.parametrize("trajectory", [["x", 1.0], [], "0.5", [True, 1.0]])
def test_a_record_whose_trajectory_is_not_numbers_is_one_line_naming_it_and_the_fix(campaign, capsys, trajectory):
    path = sorted((campaign / "runs").glob("*.json"))[3]
    path.write_text(json.dumps({**json.loads(path.read_text()), "trajectory": trajectory}))
    assert main(["bench", "report", str(campaign)]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and "Traceback" not in err, err
    assert f"{path} is a damaged run record (its 'trajectory' is not a list of numbers); delete it" in err


@pytest.mark.parametrize("key", ["trajectory", "rule", "direction", "optimal_value"])
def test_a_record_without_a_key_the_report_rests_on_is_one_line_naming_it_and_the_fix(campaign, capsys, key):
    (path,) = _strip(campaign, (key,), slice(3, 4))
    assert main(["bench", "report", str(campaign)]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and "Traceback" not in err, err
    assert f"{path} is a damaged run record (it has no '{key}'); delete it, then run the campaign's " in err
    assert "`lensopt bench functions` command again (the one in campaign.json), which redoes it" in err
