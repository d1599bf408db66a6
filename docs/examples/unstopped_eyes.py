"""Were the eyes the stopping rule did not stop right anyway? The full prescription's confidence, held
to the truth at the end of the letter budget.

An eye whose confidence stays short of ``[stop] confidence`` (0.95) through its letter budget gets
no prescription: the console, the dashboard and the printed record say "not enough answers to
prescribe". This script reads the run records of ``lensopt bench prescription`` campaigns run with
``--stop-confidence`` and prints, per setting, how many eyes stopped (and how many of those were
truly within 0.25 D of blur where they stopped), and how many ran to the budget short of the
threshold — their final confidence, and how many of them were truly within 0.025 logMAR of the
best lens (the tolerance the confidence is of) and within 0.25 D of blur::

    .venv/bin/python docs/examples/unstopped_eyes.py bench-results/no-check bench-results/lapse-0.02
"""

from __future__ import annotations

import argparse
import statistics
from pathlib import Path

from lensopt.bench.records import load_records
from lensopt.stopping import ACUITY_TOLERANCE_LOGMAR

#: The dioptric tolerance the campaigns' summaries hold a stopped eye to ("truly within").
BLUR_TOLERANCE_D = 0.25


def rows(records: list[dict]) -> list[dict]:
    """One row per setting of a campaign's records (each run with a stopping rule)."""
    out = []
    for setting in sorted({r["setting"] for r in records}):
        runs = [r for r in records if r["setting"] == setting]
        if any(r.get("stop") is None for r in runs):
            raise SystemExit(f"setting {setting}: a run without a stopping rule (run with --stop-confidence)")
        stopped = [r for r in runs if r["stop_reason"] == "confidence"]
        short = [r for r in runs if r["stop_reason"] != "confidence"]
        confidences = [r["confidence"] for r in short]
        out.append(
            {
                "setting": setting,
                "lapse": runs[0]["lapse"],
                "eyes": len(runs),
                "stopped": len(stopped),
                "stopped_within_d": sum(r["error_at_stop"]["blur_error_d"] <= BLUR_TOLERANCE_D for r in stopped),
                "short": len(short),
                "short_confidence": (min(confidences), statistics.median(confidences), max(confidences))
                if short
                else None,
                "short_within_logmar": sum(r["va_error_logmar"] <= ACUITY_TOLERANCE_LOGMAR for r in short),
                "short_within_d": sum(r["blur_error_d"] <= BLUR_TOLERANCE_D for r in short),
                "short_worst": (max(r["va_error_logmar"] for r in short), max(r["blur_error_d"] for r in short))
                if short
                else None,
            }
        )
    return out


def table(campaigns: list[Path]) -> str:
    header = (
        f"{'campaign':<22} {'setting':<24} {'lapse':>5} {'eyes':>4} {'stopped (within 0.25 D)':>24} "
        f"{'short at budget':>15} {'their confidence min/med/max':>28} {'within 0.025 logMAR':>19} "
        f"{'within 0.25 D':>13} {'worst logMAR / D':>16}"
    )
    lines = [header, "-" * len(header)]
    for campaign in campaigns:
        for row in rows(load_records(campaign, "lensopt bench prescription")):
            conf = (
                "—" if row["short_confidence"] is None else "{:.2f} / {:.2f} / {:.2f}".format(*row["short_confidence"])
            )
            worst = "—" if row["short_worst"] is None else "{:.3f} / {:.2f}".format(*row["short_worst"])
            lines.append(
                f"{campaign.name:<22} {row['setting']:<24} {row['lapse']:>5.2f} {row['eyes']:>4} "
                f"{row['stopped']:>12} ({row['stopped_within_d']:>3})        {row['short']:>15} {conf:>28} "
                f"{row['short_within_logmar']:>19} {row['short_within_d']:>13} {worst:>16}"
            )
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("campaigns", nargs="+", type=Path, help="campaign folders of lensopt bench prescription")
    print(table(parser.parse_args(argv).campaigns))


if __name__ == "__main__":
    main()
