"""Campaign report: ranking table (Markdown, CSV, JSON), win matrices and regret curves (PNG).

Plots use ``matplotlib.figure.Figure`` with the Agg canvas (never pyplot), so reports render
headless and from worker threads. Regret is ``g* − g(x̂)`` for the test functions and the acuity
error ``VA(x̂) − VA_best`` (logMAR) for refraction; curves show the mean over seeds with a band
of ± one standard error.
"""

from __future__ import annotations

import csv
from datetime import datetime
from pathlib import Path

import numpy as np

from lensopt.bench.analysis import ALPHA, StratifiedResult, stratified_analysis, trajectories_from_records
from lensopt.bench.binary_protocol import BINARY_RULE_LABELS
from lensopt.bench.records import (
    campaign_command,
    check_campaign_of,
    check_record_keys,
    check_trajectory,
    load_record_files,
    manifest_commands,
    plan_notes,
    read_manifest,
    write_json_atomic,
)
from lensopt.bench.spec import HELD_OUT_FIRST_SEED, PATIENT_CAMPAIGNS, split_of

#: The commands that write the campaign folders this report reads (named in errors about a folder
#: that does not say its kind; one that does names its own command).
REPORT_COMMAND = "lensopt bench functions|refraction"

#: The keys of a run record the report rests on (any other — when and where it ran, the software —
#: may be missing from old or hand-made records: it is said unknown, or left out).
ESSENTIAL_KEYS = ("problem", "rule", "seed", "direction", "trajectory")

#: Display names of the rules, as in the paper's tables.
RULE_LABELS = {
    "ucb-ald": "UCB-ALD",
    "ts-ald": "TS-ALD",
    "cbkg": "cBKG",
    "ucb-random": "UCB (random context)",
    "bald": "BALD",
    "ts-random": "TS (random context)",
    "random": "Random",
} | BINARY_RULE_LABELS  # the companion paper's Table 1 (binary BO without a context)


def rule_label(rule: str) -> str:
    return RULE_LABELS.get(rule, rule)


def regret_curves(records: list[dict]) -> dict[str, dict[str, np.ndarray]]:
    """``curves[problem][rule]`` ``(n_seeds, n_iterations)`` of regret (lower is better)."""
    curves: dict[str, dict[str, list]] = {}
    for rec in sorted(records, key=lambda r: r["seed"]):
        values = np.asarray(rec["trajectory"], dtype=float)
        regret = rec["optimal_value"] - values if rec["direction"] == "max" else values
        curves.setdefault(rec["problem"], {}).setdefault(rec["rule"], []).append(regret)
    return {p: {r: np.array(rows) for r, rows in by_rule.items()} for p, by_rule in curves.items()}


#: Trial counts at which the report tabulates the median regret (the issue's 30/60/100/260).
CHECKPOINTS = (30, 60, 100, 260)


def checkpoint_medians(curves: dict[str, dict[str, np.ndarray]], checkpoints=CHECKPOINTS) -> list[dict]:
    """Median and mean regret after ``t`` trials, per problem and rule (``t`` past the end: skipped)."""
    rows = []
    for problem, by_rule in curves.items():
        for rule, regret in by_rule.items():
            for t in checkpoints:
                if t <= regret.shape[1]:
                    column = regret[:, t - 1]
                    rows.append(
                        {
                            "problem": problem,
                            "rule": rule,
                            "trials": t,
                            "n_runs": int(column.size),
                            "median": float(np.median(column)),
                            "mean": float(np.mean(column)),
                        }
                    )
    return rows


def _moment(record: dict, key: str) -> datetime | None:
    """The time ``record[key]`` says (ISO 8601); None when the record does not say it (old or hand-made
    records) or says it in another form."""
    try:
        return datetime.fromisoformat(record[key])
    except (KeyError, TypeError, ValueError):
        return None


def campaign_timing(records: list[dict]) -> dict:
    """Wall time of the campaign (first start to last finish) and the summed run time; each None
    (unknown) unless every record says its times (old or hand-made records may not), as ``host``
    (``"unknown"``) and ``versions`` (the last record's that says them; left out when none does)."""
    starts = [_moment(r, "started_at") for r in records]
    ends = [_moment(r, "finished_at") for r in records]
    run_times = [t for r in records if isinstance(t := r.get("wall_time_s"), int | float)]
    known_times = len(run_times) == len(records)
    versions = [r["versions"] for r in records if isinstance(r.get("versions"), dict)]
    return {
        "n_runs": len(records),
        "wall_time_s": (
            (max(e for e in ends if e) - min(s for s in starts if s)).total_seconds()
            if records and None not in starts and None not in ends
            else None
        ),
        "summed_run_time_s": float(sum(run_times)) if known_times else None,
        "hosts": sorted({str(r.get("host") or "unknown") for r in records}),
        **({"versions": versions[-1]} if versions else {}),
    }


def format_duration(seconds: float | None) -> str:
    """``"42 s"``, ``"3.5 min"`` or ``"2.25 h"``; ``"unknown"`` for None."""
    if seconds is None:
        return "unknown"
    if seconds < 120:
        return f"{seconds:.0f} s"
    if seconds < 7200:
        return f"{seconds / 60:.1f} min"
    return f"{seconds / 3600:.2f} h"


def patient_split(records: list[dict]) -> dict | None:
    """The split of a campaign's simulated patients (refraction, feedback: their seeds' split, which
    records before it left null) and their seeds; None for the test functions, whose seeds are not patients."""
    patients = [r for r in records if r.get("campaign") in PATIENT_CAMPAIGNS]
    if not patients:
        return None
    splits = sorted({r.get("split") or split_of(int(r["seed"])) for r in patients})
    seeds = [int(r["seed"]) for r in patients]
    return {"split": splits[0] if len(splits) == 1 else splits, "first_seed": min(seeds), "last_seed": max(seeds)}


def split_line(split: dict) -> str:
    """The report's line naming the patients' split: ``Patients: the tuning split (seeds 0–19; ...)``."""
    name = split["split"] if isinstance(split["split"], str) else " and ".join(split["split"])
    return (
        f"Patients: the {name} split (seeds {split['first_seed']:,}–{split['last_seed']:,}; "
        f"held out from {HELD_OUT_FIRST_SEED:,} on)."
    )


def markdown_table(result: StratifiedResult) -> str:
    lines = ["| Acquisition rule | Rank | Borda score |", "| --- | ---: | ---: |"]
    lines += [f"| {rule_label(row['rule'])} | {row['rank']} | {row['borda']} |" for row in result.table()]
    return "\n".join(lines) + "\n"


def markdown_matrix(result: StratifiedResult, matrix: np.ndarray) -> str:
    order = result.order
    names = [rule_label(result.rules[i]) for i in order]
    lines = ["| beats → | " + " | ".join(names) + " |", "| --- |" + " ---: |" * len(names)]
    for a, i in enumerate(order):
        cells = ["—" if i == j else f"{matrix[i, j]:.2f}" for j in order]
        lines.append(f"| {names[a]} | " + " | ".join(cells) + " |")
    return "\n".join(lines) + "\n"


def _write_csv(path: Path, header: list[str], rows: list[list]) -> None:
    with open(path, "w", newline="") as handle:
        writer = csv.writer(handle)
        writer.writerow(header)
        writer.writerows(rows)


def plot_regret(curves: dict[str, np.ndarray], title: str, ylabel: str, path: Path, rules=None) -> None:
    """Mean regret per iteration with ± one standard-error band, one line per rule."""
    from matplotlib.backends.backend_agg import FigureCanvasAgg  # deferred: matplotlib is optional (lensopt[bench])
    from matplotlib.figure import Figure

    fig = Figure(figsize=(6.0, 4.0), dpi=120)
    FigureCanvasAgg(fig)
    ax = fig.add_subplot(1, 1, 1)
    for rule in rules or curves:
        if rule not in curves:
            continue
        data = curves[rule]
        x = np.arange(1, data.shape[1] + 1)
        mean = data.mean(axis=0)
        se = data.std(axis=0, ddof=1) / np.sqrt(data.shape[0]) if data.shape[0] > 1 else 0 * mean
        (line,) = ax.plot(x, mean, lw=1.5, label=f"{rule_label(rule)} (n={data.shape[0]})")
        ax.fill_between(x, mean - se, mean + se, color=line.get_color(), alpha=0.2, lw=0)
    ax.set_xlabel("iteration")
    ax.set_ylabel(ylabel)
    ax.set_title(title)
    ax.grid(alpha=0.3)
    ax.legend(fontsize=7, frameon=False)
    fig.tight_layout()
    fig.savefig(path)


def plot_win_matrix(result: StratifiedResult, matrix: np.ndarray, title: str, path: Path) -> None:
    """Figure S1 style heat map: fraction of problems where the row rule beats the column rule."""
    from matplotlib.backends.backend_agg import FigureCanvasAgg  # deferred: matplotlib is optional (lensopt[bench])
    from matplotlib.figure import Figure

    order = result.order
    names = [rule_label(result.rules[i]) for i in order]
    data = matrix[np.ix_(order, order)].astype(float)
    np.fill_diagonal(data, np.nan)
    size = max(3.5, 1.5 + 0.75 * len(names))
    fig = Figure(figsize=(size + 0.8, size), dpi=120)
    FigureCanvasAgg(fig)
    ax = fig.add_subplot(1, 1, 1)
    image = ax.imshow(np.ma.masked_invalid(data), vmin=0.0, vmax=1.0, cmap="viridis")
    for a in range(len(names)):
        for b in range(len(names)):
            if a != b:
                ax.text(
                    b,
                    a,
                    f"{data[a, b]:.2f}",
                    ha="center",
                    va="center",
                    fontsize=7,
                    color="white" if data[a, b] < 0.6 else "black",
                )
    ax.set_xticks(range(len(names)), names, rotation=45, ha="right", fontsize=7)
    ax.set_yticks(range(len(names)), names, fontsize=7)
    ax.set_title(title, fontsize=9)
    fig.colorbar(image, ax=ax, fraction=0.046)
    fig.tight_layout()
    fig.savefig(path)


def planned_keys(manifest: dict) -> list[str] | None:
    """The run keys of a manifest's command (its seeds × problems × rules); None if it does not say them."""
    try:
        problems, rules = list(manifest["problems"]), list(manifest["rules"])
        return [f"{p}__{r}__seed{seed:04d}" for seed in range(int(manifest["seeds"])) for p in problems for r in rules]
    except (KeyError, TypeError, ValueError):
        return None


def write_report(campaign_dir, out_dir=None, alpha: float = ALPHA) -> dict:
    """Analyse a campaign directory and write every report file; returns the JSON summary.

    Files (in ``out_dir``, default ``<campaign_dir>/report``): ``ranking.md``, ``ranking.csv``,
    ``ranking.json``, ``win-final.csv``, ``win-auc.csv``, ``win-final.png``, ``win-auc.png`` and
    ``curves/<problem>.png``. The summary's ``partial`` and ``outside_plan``
    (:func:`lensopt.bench.records.plan_notes`), when the runs are not those of the manifest's last
    command, are said after the title of ``ranking.md``.
    """
    campaign_dir = Path(campaign_dir)
    out_dir = Path(out_dir) if out_dir is not None else campaign_dir / "report"
    command = campaign_command(campaign_dir, REPORT_COMMAND)  # named in the errors: the folder's own kind's
    manifest = read_manifest(campaign_dir, command) or {}
    files = load_record_files(campaign_dir, command)
    # one kind of campaign: the manifest's (or the first record's); a run of another is named
    campaign = manifest.get("campaign") or next((r["campaign"] for _, r in files if r.get("campaign")), None)
    if isinstance(campaign, str):
        for path, record in files:
            check_campaign_of(path, record, campaign)
    for path, record in files:  # a regret needs the optimum of a maximized function
        check_record_keys(path, record, ESSENTIAL_KEYS, command)
        check_record_keys(path, record, ("optimal_value",) if record["direction"] == "max" else (), command)
        check_trajectory(path, record, command)
    records = [record for _, record in files]
    if not records:
        raise ValueError(f"{campaign_dir} holds no finished runs yet")
    trajectories, directions = trajectories_from_records(records)
    # Manifest order first (the paper's order of rules), then anything else found on disk.
    present = {r["rule"] for r in records}
    rules = [r for r in manifest.get("rules", []) if r in present]
    rules += sorted(present - set(rules))
    problems = [p for p in manifest.get("problems", []) if p in trajectories]
    trajectories = {p: trajectories[p] for p in problems + sorted(set(trajectories) - set(problems))}
    result = stratified_analysis(trajectories, directions, alpha=alpha, rules=rules)

    out_dir.mkdir(parents=True, exist_ok=True)
    (out_dir / "curves").mkdir(exist_ok=True)
    timing = campaign_timing(records)
    split = patient_split(records)
    summary = {
        **result.to_dict(),
        **({"split": split["split"]} if split else {}),
        "campaign": manifest,
        "timing": timing,
        "seeds_per_problem_rule": {p: {r: int(a.shape[0]) for r, a in t.items()} for p, t in trajectories.items()},
        **plan_notes(campaign_dir, planned_keys(manifest), [r.get("key") for r in records]),
    }
    write_json_atomic(out_dir / "ranking.json", summary)
    _write_csv(
        out_dir / "ranking.csv",
        ["rule", "label", "rank", "borda"],
        [[row["rule"], rule_label(row["rule"]), row["rank"], row["borda"]] for row in result.table()],
    )
    order = result.order
    for name, matrix in (("final", result.win_fraction_final), ("auc", result.win_fraction_auc)):
        _write_csv(
            out_dir / f"win-{name}.csv",
            ["rule"] + [result.rules[j] for j in order],
            [[result.rules[i]] + [round(float(matrix[i, j]), 4) for j in order] for i in order],
        )
        what = "final value" if name == "final" else "area under the curve"
        plot_win_matrix(
            result, matrix, f"Fraction of problems where\nrow beats column ({what})", out_dir / f"win-{name}.png"
        )

    curves = regret_curves(records)
    checkpoints = checkpoint_medians(curves)
    _write_csv(
        out_dir / "checkpoints.csv",
        ["problem", "rule", "trials", "n_runs", "median", "mean"],
        [
            [r["problem"], r["rule"], r["trials"], r["n_runs"], f"{r['median']:.5g}", f"{r['mean']:.5g}"]
            for r in checkpoints
        ],
    )
    summary["checkpoints"] = checkpoints
    write_json_atomic(out_dir / "ranking.json", summary)
    for problem, by_rule in curves.items():
        ylabel = "acuity error VA(x̂) − VA_best (logMAR)" if directions[problem] == "min" else "regret g* − g(x̂)"
        plot_regret(by_rule, problem, ylabel, out_dir / "curves" / f"{problem}.png", rules=rules)

    md = [f"# Benchmark report: {campaign_dir.name}", ""]
    notes = [summary[name] for name in ("partial", "outside_plan") if name in summary]
    if notes:
        md += ["; ".join(notes), ""]
    if split:
        md += [split_line(split), ""]
    commands = manifest_commands(manifest)
    if commands:
        md += ["Command:" if len(commands) == 1 else "Commands run into this folder, oldest first:", ""]
        md += ["```", *commands, "```", ""]
    md += [
        f"{timing['n_runs']} runs on {len(result.problems)} problems; campaign wall time "
        f"{format_duration(timing['wall_time_s'])} (first start to last finish), summed run "
        f"time {format_duration(timing['summed_run_time_s'])}, on "
        f"{'an unknown host' if timing['hosts'] == ['unknown'] else ', '.join(timing['hosts'])}.",
        "",
        f"Stratified analysis (Mann-Whitney U, one-sided, α = {alpha:g}; ties broken on the "
        "area under the curve; Borda scores summed over problems):",
        "",
        markdown_table(result),
        "Fraction of problems where the row rule beats the column rule, final value (Figure S1 A):",
        "",
        markdown_matrix(result, result.win_fraction_final),
        "Same on the area under the curve (Figure S1 B):",
        "",
        markdown_matrix(result, result.win_fraction_auc),
    ]
    if checkpoints:
        md += [
            "",
            "Median regret (mean in brackets) after a number of trials "
            "(for refraction: acuity error in logMAR with the reported lens):",
            "",
        ]
        md += [
            "| problem | rule | " + " | ".join(f"{t} trials" for t in CHECKPOINTS) + " |",
            "|---|---|" + "---|" * len(CHECKPOINTS),
        ]
        table = {(r["problem"], r["rule"], r["trials"]): r for r in checkpoints}
        for problem in curves:
            for rule in rules:
                if (problem, rule, CHECKPOINTS[0]) not in table and rule not in curves[problem]:
                    continue
                cells = [
                    f"{table[k]['median']:.4f} ({table[k]['mean']:.4f})" if (k := (problem, rule, t)) in table else "–"
                    for t in CHECKPOINTS
                ]
                md.append(f"| {problem} | {rule_label(rule)} | " + " | ".join(cells) + " |")
    (out_dir / "ranking.md").write_text("\n".join(md))
    return summary
