"""One campaign folder holds one campaign: another kind is refused before it runs, the manifest keeps
every command run into the folder, and a summary says when it holds runs outside the last command's
plan, names a run of another kind and a record cut short (lensopt.bench.runner, records, the summaries)."""

import json
import shutil

import pytest

from lensopt.bench.records import MANIFEST_NAME
from lensopt.bench.runner import run_campaign
from lensopt.bench.spec import RunSpec
from lensopt.cli import main

ROBUSTNESS = ["bench", "robustness", "--conditions", "slope-5", "--trials", "8", "--min-trials", "4"]
PRESCRIPTION = ["bench", "prescription", "--settings", "start-accommodation", "--trials", "4"]
QUICK = ["--local-sync", "--no-progress"]


def _robustness(out, patients="1", rules=("ideal",)):
    return [*ROBUSTNESS, "--out", str(out), "--patients", patients, "--rules", *rules, *QUICK]


def _prescription(out, patients="1", rules=("ucb-ald",)):
    return [*PRESCRIPTION, "--out", str(out), "--patients", patients, "--rules", *rules, *QUICK]


def _refraction(out):
    argv = ["bench", "refraction", "--out", str(out), "--seeds", "1", "--iterations", "3", "--initial", "1"]
    return [*argv, "--slopes", "5", "--rules", "random", "ucb-ald", *QUICK]


@pytest.fixture(scope="module")
def campaigns(tmp_path_factory):
    """A finished tiny robustness, prescription and refraction campaign each (copied by each test)."""
    base = tmp_path_factory.mktemp("campaigns")
    assert main(_robustness(base / "robustness")) == 0
    assert main(_prescription(base / "prescription")) == 0
    assert main(_refraction(base / "refraction")) == 0
    return base


@pytest.fixture
def copy(campaigns, tmp_path):
    def copy(kind):
        shutil.copytree(campaigns / kind, tmp_path / kind)
        return tmp_path / kind

    return copy


def _snapshot(folder):
    return {p.relative_to(folder).as_posix(): p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file()}


def _one_line_error(capsys, argv) -> str:
    code = main(argv)
    err = capsys.readouterr().err
    assert code == 2, err
    assert len(err.strip().splitlines()) == 1 and "Traceback" not in err, err
    return err.strip()


@pytest.mark.parametrize(
    ("folder", "argv", "recorded", "refused"),
    [
        ("prescription", _robustness, "prescription", "robustness"),
        ("robustness", _prescription, "robustness", "prescription"),
    ],
)
def test_a_campaign_into_the_folder_of_another_kind_is_refused_before_anything_runs(
    copy, capsys, folder, argv, recorded, refused
):
    out = copy(folder)
    before = _snapshot(out)
    line = _one_line_error(capsys, argv(out))
    assert f"holds a {recorded} campaign (campaign.json), not a {refused} one" in line
    assert f"run the {refused} campaign into another --out" in line
    assert _snapshot(out) == before  # nothing run, the manifest and its command kept


def test_a_folder_without_a_manifest_is_of_the_kind_of_its_first_record(tmp_path):
    spec = RunSpec("functions", "sphere", "random", 0, 3)
    run_campaign([spec], tmp_path, manifest={"campaign": "functions"}, local_sync=True, progress=False)
    (tmp_path / MANIFEST_NAME).unlink()
    with pytest.raises(ValueError, match=r"holds a functions campaign \(runs/sphere__random__seed0000.json\)"):
        run_campaign([spec], tmp_path, manifest={"campaign": "binary"}, local_sync=True, progress=False)
    assert not (tmp_path / MANIFEST_NAME).exists()
    assert run_campaign([spec], tmp_path, manifest={"campaign": "functions"}, local_sync=True, progress=False)


@pytest.mark.parametrize(("kind", "other"), [("robustness", "prescription"), ("prescription", "robustness")])
def test_a_summary_of_a_folder_holding_two_kinds_of_runs_names_a_run_of_the_other_kind(copy, capsys, kind, other):
    out, stray = copy(kind), copy(other)
    record = next((stray / "runs").glob("*.json"))
    shutil.copy(record, out / "runs" / record.name)
    for argv in (["bench", kind, "--summary", str(out)], ["bench", "report", str(out)]):
        line = _one_line_error(capsys, argv)
        assert f"{out / 'runs' / record.name} is a run of the {other} campaign in a folder of {kind} runs" in line
        assert "move the runs of one into a folder of its own" in line


@pytest.mark.parametrize(("kind", "other"), [("robustness", "prescription"), ("prescription", "robustness")])
def test_a_summary_by_the_other_kinds_command_names_the_campaign_and_the_command_that_reads_it(
    copy, capsys, kind, other
):
    """`bench robustness --summary` of a prescription campaign's folder was blamed on "two campaigns"
    in one folder, and sent the scientist to move runs between folders."""
    out = copy(kind)
    line = _one_line_error(capsys, ["bench", other, "--summary", str(out)])
    assert line.endswith(
        f"{out} holds a {kind} campaign, not a {other} one; summarize it with `lensopt bench report {out}`"
    )
    assert main(["bench", "report", str(out)]) == 0  # the command it names reads it


def test_a_report_of_a_folder_holding_two_kinds_of_runs_names_a_run_of_the_other_kind(copy, tmp_path, capsys):
    out = tmp_path / "refraction"
    argv = ["bench", "refraction", "--out", str(out), "--seeds", "1", "--iterations", "3", "--initial", "1"]
    assert main([*argv, "--slopes", "5", "--rules", "random", "ucb-ald", *QUICK]) == 0
    record = next((copy("robustness") / "runs").glob("*.json"))
    shutil.copy(record, out / "runs" / record.name)
    line = _one_line_error(capsys, ["bench", "report", str(out)])
    assert f"{out / 'runs' / record.name} is a run of the robustness campaign in a folder of refraction runs" in line


@pytest.mark.parametrize("kind", ["robustness", "prescription"])
def test_a_record_cut_short_is_named_with_the_fix_and_the_campaign_command_redoes_it(copy, capsys, kind):
    out = copy(kind)
    record = next((out / "runs").glob("*.json"))
    whole = record.read_bytes()
    record.write_bytes(whole[:89])
    for argv in (["bench", kind, "--summary", str(out)], ["bench", "report", str(out)]):
        line = _one_line_error(capsys, argv)
        assert f"{record} is not a complete run record (cut short, or not JSON: Unterminated string" in line
        assert f"delete it (a run of the campaign's own is then redone by its `lensopt bench {kind}` command" in line
    # the fix: the campaign's command runs it again
    argv = json.loads((out / MANIFEST_NAME).read_text())["command"].split()[1:]
    argv[argv.index("--out") + 1] = str(out)  # the copy's, not the campaign's first folder
    assert main([*argv, *QUICK]) == 0
    assert "1 runs: 0 already done, 1 run now" in capsys.readouterr().out
    assert json.loads(record.read_text())["key"] == json.loads(whole)["key"]


def test_a_stray_file_among_the_runs_is_named_with_the_fix_that_works(copy, capsys):
    """A file that is no run of the campaign was told "run the campaign's command again, which redoes
    it": the command never touches it, and failed the same way each time. Deleting it is the fix."""
    out = copy("robustness")
    stray = out / "runs" / "stray.json"
    stray.write_text("[1, 2]")
    line = _one_line_error(capsys, ["bench", "robustness", "--summary", str(out)])
    assert line.endswith(
        f"{stray} is not a run record (not a JSON object); delete it (a run of the campaign's own "
        "is then redone by its `lensopt bench robustness` command, the one in campaign.json)"
    ), line
    stray.unlink()
    assert main(["bench", "robustness", "--summary", str(out)]) == 0


@pytest.mark.parametrize("kind", ["robustness", "prescription"])
def test_the_summary_of_a_campaign_without_a_finished_run_names_its_folder_and_the_fix(copy, capsys, kind):
    """Interrupted before its first run finished, its --summary said only "no robustness runs in
    these records"."""
    out = copy(kind)
    for record in (out / "runs").glob("*.json"):
        record.unlink()
    line = _one_line_error(capsys, ["bench", kind, "--summary", str(out)])
    assert f"{out} holds no finished run of this campaign yet" in line
    assert f"run its command again (the one in {out}/{MANIFEST_NAME}) to run them" in line


def test_a_manifest_cut_short_is_named_with_the_fix(copy, capsys):
    out = copy("robustness")
    (out / MANIFEST_NAME).write_text('{"campaign": "robus')
    line = _one_line_error(capsys, ["bench", "robustness", "--summary", str(out)])
    assert f"{out / MANIFEST_NAME} is not a complete campaign manifest" in line
    assert "run the campaign's `lensopt bench robustness` command again, which rewrites it" in line


def test_the_manifest_keeps_every_command_run_into_the_folder_oldest_first(copy, capsys):
    out = copy("robustness")
    first = json.loads((out / MANIFEST_NAME).read_text())
    assert first["commands"] == [first["command"]]
    assert main(_robustness(out, patients="2")) == 0
    assert main(_robustness(out, patients="2")) == 0  # resumed: the same command is not listed twice
    assert main(_robustness(out, patients="1", rules=("acuity-law",))) == 0
    manifest = json.loads((out / MANIFEST_NAME).read_text())
    commands = manifest["commands"]
    assert len(commands) == 3 and commands[0] == first["command"] and manifest["command"] == commands[-1]
    assert "--patients 2" in commands[1] and "--rules acuity-law" in commands[2]
    assert manifest["rules"] == ["acuity-law"] and manifest["max_patients"] == 1  # the last command's plan

    # a manifest written before "commands": its one command comes first
    del manifest["commands"]
    (out / MANIFEST_NAME).write_text(json.dumps(manifest))
    assert main(_robustness(out, patients="1")) == 0
    capsys.readouterr()
    again = json.loads((out / MANIFEST_NAME).read_text())["commands"]
    assert len(again) == 2 and again[0] == commands[-1] and "--patients 1 --trials 8" in again[1]
    assert "--rules ideal" in again[1]


def test_a_robustness_summary_holding_runs_outside_the_last_commands_plan_says_so_in_its_first_line(copy, capsys):
    out = copy("robustness")
    assert main(_robustness(out, patients="2")) == 0
    assert "outside the plan" not in capsys.readouterr().out
    assert main(_robustness(out, patients="1")) == 0  # a narrower command after a wider one
    capsys.readouterr()
    assert main(["bench", "robustness", "--summary", str(out)]) == 0
    first = capsys.readouterr().out.splitlines()[0]
    assert first == (
        "1 of the 2 runs summarized are outside the plan of the last command in campaign.json "
        "(runs of earlier commands into this folder, listed in its 'commands')"
    )
    summary = json.loads((out / "robustness-summary.json").read_text())
    assert summary["outside_plan"] == first and "partial" not in summary


def test_a_prescription_summary_holding_runs_outside_the_last_commands_plan_says_so_in_its_first_line(copy, capsys):
    out = copy("prescription")
    assert main(_prescription(out, rules=("ucb-ald", "ideal"))) == 0
    capsys.readouterr()
    # the last command planned two patients of one rule: one is run, one not, one run of ideal is outside it
    (out / "runs" / "start-accommodation__ucb-ald__seed100000.json").unlink()
    manifest = json.loads((out / MANIFEST_NAME).read_text())
    manifest.update(rules=["ucb-ald"], n_patients=2)
    (out / MANIFEST_NAME).write_text(json.dumps(manifest))
    assert main(["bench", "report", str(out)]) == 0
    assert capsys.readouterr().out.splitlines()[0] == (
        "0 of 2 runs of campaign.json finished: a partial summary; 1 of the 1 runs summarized are outside the "
        "plan of the last command in campaign.json (runs of earlier commands into this folder, listed in its "
        "'commands')"
    )


def test_a_refraction_report_holding_runs_outside_the_last_commands_plan_says_so_first(tmp_path, capsys):
    out = tmp_path / "refraction"
    argv = ["bench", "refraction", "--out", str(out), "--iterations", "3", "--initial", "1", "--slopes", "5"]
    argv += ["--rules", "random", "ucb-ald", *QUICK]
    assert main([*argv, "--seeds", "2"]) == 0
    assert main([*argv, "--seeds", "1"]) == 0  # a narrower command after a wider one
    capsys.readouterr()
    assert main(["bench", "report", str(out)]) == 0
    line = (
        "2 of the 4 runs summarized are outside the plan of the last command in campaign.json "
        "(runs of earlier commands into this folder, listed in its 'commands')"
    )
    assert capsys.readouterr().out.splitlines()[0] == line
    assert json.loads((out / "report" / "ranking.json").read_text())["outside_plan"] == line
    assert line in (out / "report" / "ranking.md").read_text()
    assert len(json.loads((out / MANIFEST_NAME).read_text())["commands"]) == 2
    assert "Commands run into this folder, oldest first:" in (out / "report" / "ranking.md").read_text()


def _cut_short(path):
    path.write_bytes(path.read_bytes()[:40])


@pytest.mark.parametrize("kind", ["prescription", "refraction", "robustness"])
def test_a_report_of_a_damaged_folder_names_the_command_of_the_folders_own_kind(copy, capsys, kind):
    out = copy(kind)
    manifest = out / MANIFEST_NAME
    whole = manifest.read_bytes()
    _cut_short(manifest)  # the kind is then read from the runs
    line = _one_line_error(capsys, ["bench", "report", str(out)])
    assert f"{manifest} is not a complete campaign manifest" in line
    assert f"run the campaign's `lensopt bench {kind}` command again, which rewrites it" in line
    manifest.write_bytes(whole)
    record = sorted((out / "runs").glob("*.json"))[0]
    _cut_short(record)
    line = _one_line_error(capsys, ["bench", "report", str(out)])
    assert f"{record} is not a complete run record" in line
    assert f"then redone by its `lensopt bench {kind}` command" in line


def test_a_report_of_a_folder_without_a_manifest_and_its_first_run_cut_short_names_the_others_kind(copy, capsys):
    out = copy("refraction")
    (out / MANIFEST_NAME).unlink()
    first = sorted((out / "runs").glob("*.json"))[0]
    _cut_short(first)
    line = _one_line_error(capsys, ["bench", "report", str(out)])
    assert f"{first} is not a complete run record" in line and "`lensopt bench refraction` command" in line


#: What old or hand-made records may lack, by campaign, and a key each summary rests on.
AUXILIARY = ("started_at", "finished_at", "wall_time_s", "host", "versions", "optimizer_settings", "format", "key")
ESSENTIAL = {"robustness": "trajectory", "prescription": "curves", "refraction": "trajectory"}


def _without(path, keys):
    record = json.loads(path.read_text())
    path.write_text(json.dumps({k: v for k, v in record.items() if k not in keys}))


@pytest.mark.parametrize("kind", ["robustness", "prescription", "refraction"])
def test_old_records_without_the_auxiliary_keys_are_reported_and_one_without_an_essential_is_named_damaged(
    copy, capsys, kind
):
    out = copy(kind)
    extra = ("timings_ms", "decision_ms", "decision_cpu_ms", "error_at_stop", "stop_reason", "stopped_at")
    for path in (out / "runs").glob("*.json"):
        _without(path, AUXILIARY + extra)
    assert main(["bench", "report", str(out)]) == 0, capsys.readouterr().err
    capsys.readouterr()
    record = sorted((out / "runs").glob("*.json"))[0]
    _without(record, (ESSENTIAL[kind],))
    line = _one_line_error(capsys, ["bench", "report", str(out)])
    assert f"{record} is a damaged run record (it has no '{ESSENTIAL[kind]}" in line
    assert f"delete it, then run the campaign's `lensopt bench {kind}` command again" in line
    # the fix: deleted, the campaign's command redoes it
    record.unlink()
    argv = json.loads((out / MANIFEST_NAME).read_text())["command"].split()[1:]
    argv[argv.index("--out") + 1] = str(out)
    assert main([*argv, *QUICK]) == 0
    assert main(["bench", "report", str(out)]) == 0
    capsys.readouterr()


def test_a_summary_says_when_its_runs_were_made_by_more_than_one_lensopt(tmp_path, capsys):
    """A campaign resumed after a change mixed runs of two commits, and its summary said nothing."""
    out = tmp_path / "mixed"
    assert main(_robustness(out, patients="2")) == 0
    capsys.readouterr()
    summary = json.loads((out / "robustness-summary.json").read_text())
    (one,) = summary["software"]  # one version: no note
    assert one["n_runs"] == 2 and "mixed_software" not in summary
    first = sorted((out / "runs").glob("*.json"))[0]
    record = json.loads(first.read_text())
    record["versions"] = {**record["versions"], "git_commit": "0123456789abcdef+dirty"}
    first.write_text(json.dumps(record))
    assert main(["bench", "robustness", "--summary", str(out)]) == 0
    text = capsys.readouterr().out
    summary = json.loads((out / "robustness-summary.json").read_text())
    assert sorted(s["git_commit"] for s in summary["software"])[0] == "0123456789abcdef+dirty"
    assert [s["n_runs"] for s in summary["software"]] == [1, 1]
    assert text.splitlines()[0].startswith("the runs were made by 2 versions of lensopt (")
    assert f"1 by {record['versions']['lensopt']} 0123456+dirty" in text.splitlines()[0]


def test_a_campaign_of_a_modified_checkout_keeps_its_changes_and_two_states_of_it_are_two_versions(
    tmp_path, capsys, monkeypatch
):
    """Its runs said ``+dirty`` and no more: the figures of a modified checkout could not be rebuilt,
    and runs made before and after a further change read as one version."""
    import lensopt.bench.records as records
    from lensopt.provenance import software, source_diff_name

    diff = "diff --git a/lensopt/x.py b/lensopt/x.py\n--- a/lensopt/x.py\n+++ b/lensopt/x.py\n@@ -1 +1 @@\n-a = 1\n+a = 2\n \n"
    name = source_diff_name(diff)
    ran = {**software(), "git_commit": "0123456789abcdef+dirty", "source_diff": name}
    monkeypatch.setattr(records, "software", lambda: dict(ran))
    monkeypatch.setattr(records, "running_diff", lambda: diff)
    out = tmp_path / "modified"
    assert main(_robustness(out, patients="2")) == 0
    capsys.readouterr()
    assert (out / "source-diffs" / name).read_text() == diff  # as git printed it, its last line a lone space
    runs = sorted((out / "runs").glob("*.json"))
    assert [json.loads(p.read_text())["versions"]["source_diff"] for p in runs] == [name, name]
    record = json.loads(runs[0].read_text())
    record["versions"]["source_diff"] = "00000000aaaa.diff"  # made after a further change
    runs[0].write_text(json.dumps(record))
    assert main(["bench", "robustness", "--summary", str(out)]) == 0
    first = capsys.readouterr().out.splitlines()[0]
    assert first.startswith("the runs were made by 2 versions of lensopt (")
    assert "0123456+dirty (source-diffs/00000000aaaa.diff)" in first and f"(source-diffs/{name})" in first


def test_a_campaign_of_a_clean_checkout_or_a_wheel_keeps_no_changes(tmp_path, monkeypatch):
    import lensopt.bench.records as records
    import lensopt.provenance as provenance

    for commit in ("0123456789abcdef", None):
        monkeypatch.setattr(provenance, "git_commit", lambda commit=commit: commit)
        monkeypatch.setattr(provenance, "source_diff", lambda: pytest.fail("no diff is asked of a clean checkout"))
        provenance._running.cache_clear()
        assert records.keep_source_diff(tmp_path) is None
    provenance._running.cache_clear()  # this process's own again, once the patches are undone
    assert not (tmp_path / "source-diffs").exists()
