"""`lensopt bench robustness|prescription --summary DIR` and `lensopt bench report DIR` of those
campaigns: a folder where the summary cannot be written, options --summary would ignore, a picture
not drawn, a campaign still running (lensopt.cli.handlers.bench, bench_report, bench_prescription)."""

import fcntl
import os
import shutil
import sys
from contextlib import contextmanager

import pytest
from one_line import refused

from lensopt.bench import prescription_summary, records, robustness_summary
from lensopt.cli import main

QUICK = ["--patients", "1", "--local-sync", "--no-progress"]
CAMPAIGNS = {
    "robustness": [
        *["bench", "robustness", "--conditions", "slope-5", "--trials", "8", "--min-trials", "4", "--rules", "ideal"],
        *QUICK,
    ],
    "prescription": [
        *["bench", "prescription", "--settings", "start-accommodation", "--trials", "4", "--rules", "ucb-ald"],
        *QUICK,
    ],
}
SUMMARIES = {
    "robustness": (robustness_summary, "robustness-summary.json", "robustness-curves.png"),
    "prescription": (prescription_summary, "prescription-summary.json", "prescription-bland-altman.png"),
}


@pytest.fixture(scope="module")
def campaigns(tmp_path_factory):
    base = tmp_path_factory.mktemp("summaries")
    for kind, argv in CAMPAIGNS.items():
        assert main([*argv, "--out", str(base / kind)]) == 0
    return base


@pytest.fixture
def campaign(campaigns, tmp_path):
    def copy(kind):
        shutil.copytree(campaigns / kind, tmp_path / kind)
        for name in SUMMARIES[kind][1:]:
            (tmp_path / kind / name).unlink()
        return tmp_path / kind

    return copy


def _read_only(monkeypatch, folder):
    """As if ``folder`` could not be written (the tests run as root, who writes a 0555 folder)."""
    real = records.write_json_atomic

    def write(path, data):
        if folder in path.parents:
            raise PermissionError(13, "Permission denied", str(path))
        return real(path, data)

    monkeypatch.setattr(records, "write_json_atomic", write)  # where the summaries write (finish_summary)


@pytest.mark.parametrize("kind", ["robustness", "prescription"])
@pytest.mark.parametrize("how", ["--summary", "report"])
def test_a_summary_that_cannot_be_written_is_printed_then_one_line_naming_bench_report_out(
    campaign, monkeypatch, capsys, kind, how
):
    out = campaign(kind)
    _, summary_name, picture = SUMMARIES[kind]
    _read_only(monkeypatch, out)
    argv = ["bench", kind, "--summary", str(out)] if how == "--summary" else ["bench", "report", str(out)]
    assert main(argv) == 2
    printed = capsys.readouterr()
    assert ("Robustness: 1 session" if kind == "robustness" else "Prescription: 1 session,") in printed.out
    lines = printed.err.strip().splitlines()
    assert len(lines) == 1 and "Traceback" not in printed.err, printed.err
    assert f"the summary printed above could not be written in {out} (Permission denied)" in lines[0]
    assert f"run `lensopt bench report {out} --out OTHER` with OTHER a folder you can write" in lines[0]
    assert not (out / summary_name).exists() and not (out / picture).exists()

    # the command it names writes the summary elsewhere, reading the campaign only
    other = out.parent / "other"
    assert main(["bench", "report", str(out), "--out", str(other)]) == 0
    assert f"wrote {other}/{summary_name}" in capsys.readouterr().out
    assert (other / summary_name).is_file() and (other / picture).is_file()
    assert not (out / summary_name).exists()


@pytest.mark.parametrize("kind", ["robustness", "prescription"])
@pytest.mark.parametrize(
    ("extra", "named"),
    [
        (["--out", "elsewhere"], "--out would be ignored; leave it out"),
        (["--patients", "3", "--local-sync"], "--patients, --local-sync would be ignored; leave them out"),
        (["--no-progress"], "--no-progress would be ignored"),
    ],
)
def test_summary_refuses_every_other_option_in_one_line(campaign, capsys, tmp_path, kind, extra, named):
    out = campaign(kind)
    extra = [str(tmp_path / e) if e == "elsewhere" else e for e in extra]
    line = refused(capsys, ["bench", kind, "--summary", str(out), *extra])
    assert f"--summary {out} only summarizes the campaign already in that folder, and {named}" in line
    assert "or leave out --summary to run the campaign" in line
    assert not (out / SUMMARIES[kind][1]).exists() and not (tmp_path / "elsewhere").exists()
    assert main(["bench", kind, "--summary", str(out)]) == 0  # alone, it summarizes


@pytest.mark.parametrize("kind", ["robustness", "prescription"])
def test_a_picture_not_drawn_without_matplotlib_is_said_in_one_line_on_stderr(campaign, monkeypatch, capsys, kind):
    out = campaign(kind)
    _, summary_name, picture = SUMMARIES[kind]
    monkeypatch.setitem(sys.modules, "matplotlib.backends.backend_agg", None)  # import: ImportError
    assert main(["bench", kind, "--summary", str(out)]) == 0
    printed = capsys.readouterr()
    assert printed.err.strip().splitlines() == [
        f"{picture} not drawn: matplotlib is not installed (pip install 'lensopt[bench]')"
    ]
    assert "not drawn" not in printed.out and (out / summary_name).is_file() and not (out / picture).exists()


@contextmanager
def _running(folder, pid=4242):
    """As while a command runs into ``folder``: its lock held, naming process ``pid``."""
    held = os.open(folder / records.LOCK_NAME, os.O_RDWR | os.O_CREAT, 0o600)
    try:
        fcntl.flock(held, fcntl.LOCK_EX | fcntl.LOCK_NB)
        os.write(held, str(pid).encode())
        yield
    finally:
        os.close(held)  # its program ended: the lock goes, the file stays


def _still_running_line(folder) -> str:
    return (
        f"the campaign in {folder} is still running (process 4242, which holds its campaign.lock); "
        "this summary covers the runs finished so far: run it again once that process has ended for the whole campaign"
    )


@pytest.mark.parametrize("kind", ["robustness", "prescription"])
@pytest.mark.parametrize("how", ["--summary", "report"])
def test_a_summary_of_a_campaign_still_running_says_so_on_stderr_and_summarizes_the_runs_so_far(
    campaign, capsys, kind, how
):
    out = campaign(kind)
    argv = ["bench", kind, "--summary", str(out)] if how == "--summary" else ["bench", "report", str(out)]
    with _running(out):
        assert main(argv) == 0
    printed = capsys.readouterr()
    assert printed.err.strip().splitlines() == [_still_running_line(out)]
    assert ("Robustness: 1 session" if kind == "robustness" else "Prescription: 1 session,") in printed.out
    assert (out / SUMMARIES[kind][1]).is_file()

    assert main(argv) == 0  # once it has ended (its lock file left behind), nothing is said
    assert capsys.readouterr().err == ""


def test_a_report_of_a_benchmark_campaign_still_running_says_so_on_stderr_and_reports_the_runs_so_far(tmp_path, capsys):
    out = tmp_path / "refraction"
    argv = ["bench", "refraction", "--out", str(out), "--seeds", "1", "--iterations", "3", "--initial", "1"]
    assert main([*argv, "--rules", "random", "ucb-ald", "--slopes", "5", "--local-sync", "--no-progress"]) == 0
    capsys.readouterr()
    with _running(out):
        assert main(["bench", "report", str(out)]) == 0
    printed = capsys.readouterr()
    assert printed.err.strip().splitlines() == [_still_running_line(out)]
    assert "| Random |" in printed.out and (out / "report" / "ranking.md").is_file()
