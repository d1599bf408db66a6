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

A folder of docs/results that archives its campaigns in ``runs.tar.xz`` (one folder per campaign in
it, each with its ``runs/``) and has no ``runs/`` of its own is read from the archive, in memory
(nothing is unpacked), one campaign per folder in it::

    .venv/bin/python docs/examples/unstopped_eyes.py docs/results/prescription-printed-lens
"""

from __future__ import annotations

import json
import statistics
import tarfile
from pathlib import Path, PurePosixPath

from lensopt.bench.prescription_spec import CAMPAIGN
from lensopt.bench.records import NoRuns, check_campaign_of, check_record_keys, load_records
from lensopt.cli import OneLineParser
from lensopt.stopping import ACUITY_TOLERANCE_LOGMAR

#: The dioptric tolerance the campaigns' summaries hold a stopped eye to ("truly within").
BLUR_TOLERANCE_D = 0.25

#: The command whose campaigns this reads (named in the one-line errors).
COMMAND = "lensopt bench prescription"

#: The keys of a run record the table reads (a record without one is refused, in one line naming it).
ESSENTIAL = ("setting", "lapse", "stop_reason", "confidence", "va_error_logmar", "blur_error_d")

#: The archive in which a folder of docs/results keeps its campaigns' folders (each with its runs/).
ARCHIVE_NAME = "runs.tar.xz"


def rows(records: list[dict]) -> list[dict]:
    """One row per setting of a campaign's records (each run with a stopping rule)."""
    out = []
    for setting in sorted({r["setting"] for r in records}):
        runs = [r for r in records if r["setting"] == setting]
        if any(r.get("stop") is None for r in runs):
            raise ValueError(
                f"setting {setting}: a run without a stopping rule; give campaigns run with --stop-confidence"
            )
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


def archived_campaigns(archive: Path) -> list[tuple[str, list[dict]]]:
    """The campaigns in ``archive`` (a tarball of campaign folders, each with its ``runs/``), read in
    memory: ``(name, records)`` each, by name, the records sorted by file name as :func:`load_records`
    sorts them; a folder's name is the campaign's (``runs/`` at the archive's top: the archive's folder's)."""
    found: dict[str, list[tuple[str, dict]]] = {}
    with tarfile.open(archive) as tar:
        for member in tar:
            parts = PurePosixPath(member.name).parts
            if not member.isfile() or len(parts) < 2 or parts[-2] != "runs" or not parts[-1].endswith(".json"):
                continue
            path = archive / member.name  # as errors name it
            try:
                record = json.loads(tar.extractfile(member).read())
            except (UnicodeDecodeError, json.JSONDecodeError):
                raise ValueError(f"{path} is not a complete run record (cut short, or not JSON)") from None
            if not isinstance(record, dict):
                raise ValueError(f"{path} is not a run record (not a JSON object)")
            check_campaign_of(path, record, CAMPAIGN)
            check_record_keys(path, record, ESSENTIAL, COMMAND)
            name = "/".join(parts[:-2]) or archive.parent.name
            found.setdefault(name, []).append((parts[-1], record))
    if not found:
        raise NoRuns(f"{archive} holds no run records (no runs/ folder in it); give a campaign folder of `{COMMAND}`")
    return [
        (name, [record for _, record in sorted(files, key=lambda f: f[0])]) for name, files in sorted(found.items())
    ]


def campaigns_in(folder: Path) -> list[tuple[str, list[dict]]]:
    """The campaigns of ``folder``, ``(name, records)`` each: the folder itself when it holds ``runs/``
    (a campaign folder of ``lensopt bench prescription``), else those of its :data:`ARCHIVE_NAME`
    (:func:`archived_campaigns`)."""
    if not folder.is_dir():
        raise ValueError(f"{folder} is not a folder; give a campaign folder of `{COMMAND}`")
    if not (folder / "runs").is_dir() and (folder / ARCHIVE_NAME).is_file():
        return archived_campaigns(folder / ARCHIVE_NAME)
    return [(folder.name, load_records(folder, COMMAND, campaign=CAMPAIGN, essential=ESSENTIAL))]


def table(campaigns: list[Path]) -> str:
    header = (
        f"{'campaign':<22} {'setting':<24} {'lapse':>5} {'eyes':>4} {'stopped (within 0.25 D)':>24} "
        f"{'short at budget':>15} {'their confidence min/med/max':>28} {'within 0.025 logMAR':>19} "
        f"{'within 0.25 D':>13} {'worst logMAR / D':>16}"
    )
    lines = [header, "-" * len(header)]
    for name, records in (campaign for folder in campaigns for campaign in campaigns_in(folder)):
        for row in rows(records):
            conf = (
                "—" if row["short_confidence"] is None else "{:.2f} / {:.2f} / {:.2f}".format(*row["short_confidence"])
            )
            worst = "—" if row["short_worst"] is None else "{:.3f} / {:.2f}".format(*row["short_worst"])
            lines.append(
                f"{name:<22} {row['setting']:<24} {row['lapse']:>5.2f} {row['eyes']:>4} "
                f"{row['stopped']:>12} ({row['stopped_within_d']:>3})        {row['short']:>15} {conf:>28} "
                f"{row['short_within_logmar']:>19} {row['short_within_d']:>13} {worst:>16}"
            )
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> None:
    parser = OneLineParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "campaigns",
        nargs="+",
        type=Path,
        help=f"campaign folders of lensopt bench prescription, or folders of docs/results with a {ARCHIVE_NAME}",
    )
    args = parser.parse_args(argv)
    try:
        text = table(args.campaigns)
    except (ValueError, tarfile.TarError, OSError) as exc:  # not a campaign, a damaged record or archive
        parser.error(str(exc))
    print(text)


if __name__ == "__main__":
    main()
