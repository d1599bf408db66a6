"""What a `lensopt bench` campaign prints when its runs end, and `lensopt bench report`: the runs
done and failed, a campaign's summary (written into it and printed, with a line when the campaign
is still running), and the report of a campaign folder."""

from __future__ import annotations

import sys
from pathlib import Path

from lensopt.bench import prescription, prescription_summary, robustness, robustness_summary
from lensopt.bench.records import LOCK_NAME, MANIFEST_NAME, NoRuns, SummaryNotWritten, running_into
from lensopt.bench.report import write_report
from lensopt.cli.arguments import check_output_folder, refuse_options_besides_summary


def print_summary(write_summary, campaign_dir, out_dir=None) -> None:
    """Write a campaign's summary (``write_summary``) and print it, after a line on stderr if the
    campaign is still running (:func:`say_if_still_running`); where it cannot be written (a
    read-only folder), print it all the same, then raise the one-line error that says so."""
    try:
        _, text = write_summary(campaign_dir, out_dir)
    except SummaryNotWritten as exc:
        say_if_still_running(campaign_dir)
        print(exc.text, flush=True)
        raise
    say_if_still_running(campaign_dir)
    print(text)


def say_if_still_running(campaign_dir) -> None:
    """One line on stderr when a command still runs into ``campaign_dir`` (holds its lock): what is
    summarized are the runs finished so far, not the campaign's."""
    holder = running_into(campaign_dir)
    if holder is not None:
        print(
            f"the campaign in {campaign_dir} is still running (process {holder}, which holds its {LOCK_NAME}); "
            "this summary covers the runs finished so far: run it again once that process has ended for the whole campaign",
            file=sys.stderr,
            flush=True,
        )


def summarize_only(args, write_summary, summary_name: str) -> int:
    """``--summary DIR``: the summary of the campaign in DIR, written there and printed; any other
    option, which it would ignore, is refused in one line."""
    refuse_options_besides_summary(args)
    try:
        print_summary(write_summary, args.summary)
    except NoRuns as exc:
        if not (Path(args.summary) / "runs").is_dir():  # not a campaign's folder: that message says so
            raise
        # a campaign interrupted before its first run finished: "no robustness runs in these records"
        raise NoRuns(
            f"{args.summary} holds no finished run of this campaign yet (it was interrupted before its first "
            f"run finished, or is still starting); run its command again (the one in {args.summary}/{MANIFEST_NAME}) "
            "to run them"
        ) from exc
    print(f"summary: {args.summary}/{summary_name}")
    return 0


def summarize_after_runs(out: str, write_summary, summary_name: str, status: int) -> int:
    """After a campaign's runs: write its summary into ``out`` and print it (nothing when no run has
    finished: ``write_summary`` says so with :class:`lensopt.bench.records.NoRuns`); the runs' ``status``."""
    try:
        print_summary(write_summary, out)
    except NoRuns:  # no finished run to summarize
        return status
    print(f"summary: {out}/{summary_name}")
    return status


def report_runs(campaign: str, out: str, summary) -> int:
    """Print what a campaign run did (:class:`lensopt.bench.runner.CampaignSummary`); 1 if a run failed."""
    print(
        f"lensopt bench {campaign}: {summary.n_total} runs: {summary.n_skipped} already done, "
        f"{summary.n_done} run now ({summary.wall_time_s / 60:.1f} min), "
        f"{len(summary.failures)} failed; records in {out}/runs"
    )
    for key, message in summary.failures[:10]:
        print(f"  failed {key}: {message}", file=sys.stderr)
    if summary.failures:
        print(
            "run the same command again to retry the failed runs (LENSOPT_DEBUG=1 prints their tracebacks)",
            file=sys.stderr,
        )
        return 1
    return 0


def run_report(args) -> int:
    if Path(args.dir).exists() and not Path(args.dir).is_dir():
        raise ValueError(
            f"{args.dir} is a file, not a campaign folder; give the folder a `lensopt bench` campaign wrote (its --out)"
        )
    if args.out:
        check_output_folder("--out", args.out)
    for is_campaign, module, name in (
        (robustness_summary.is_robustness_campaign, robustness_summary, robustness.SUMMARY_NAME),
        (prescription_summary.is_prescription_campaign, prescription_summary, prescription.SUMMARY_NAME),
    ):
        if is_campaign(args.dir):  # its summary (and picture): in the campaign, or in --out
            print_summary(module.write_summary, args.dir, args.out)
            print(f"lensopt bench report: wrote {args.out or args.dir}/{name}")
            return 0

    out = Path(args.out) if args.out else Path(args.dir) / "report"
    check_output_folder("--out" if args.out else "the report folder", out)
    summary = write_report(args.dir, out, alpha=args.alpha)
    say_if_still_running(args.dir)
    notes = [summary[name] for name in ("partial", "outside_plan") if name in summary]
    if notes:  # first: the report is not (just) that of the manifest's last command
        print("; ".join(notes))
    print((out / "ranking.md").read_text())
    print(f"lensopt bench report: wrote {out}/ranking.{{md,csv,json}}, win-*.{{csv,png}}, curves/*.png")
    return 0
