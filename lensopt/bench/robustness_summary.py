"""Summary of a robustness campaign (issue 14): statistics per condition and rule, the text table,
the error curves, and the summary files written next to the records.

The statistics (:func:`summarize`) are listed in :mod:`lensopt.bench.robustness`, which runs the
sessions; this module only reads their records.
"""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

import numpy as np

from lensopt.bench.criterion import criterion_stats, median_text, ratio_text, versus_ideal
from lensopt.bench.criterion import trials_to_criterion as criterion_trials
from lensopt.bench.figures import fitted_suptitle
from lensopt.bench.records import (
    NoRuns,
    finish_summary,
    is_campaign_of,
    load_records,
    note_on_stderr,
)
from lensopt.bench.robustness import (
    ALL_ROBUSTNESS_RULES,
    CHECKPOINTS,
    CONDITIONS,
    CONDITIONS_BY_NAME,
    CRITERION_LOGMAR,
    EXTRA_CONDITIONS,
    FAILURE_LOGMAR,
    HALF_LINE_LOGMAR,
    SUMMARY_NAME,
)

#: The command that writes a campaign folder of this kind (named in errors).
COMMAND = "lensopt bench robustness"

#: The keys of a run record the summary rests on (a record without one is damaged; any other may be
#: missing from old or hand-made records, and is said unknown or left out).
ESSENTIAL_KEYS = ("problem", "rule", "seed", "slope", "trajectory")


def trials_to_criterion(trajectory, criterion=CRITERION_LOGMAR) -> int:
    """:func:`lensopt.bench.criterion.trials_to_criterion` at the letter criterion (logMAR)."""
    return criterion_trials(trajectory, criterion)


def _median(values):
    return float(np.median(values)) if len(values) else None


#: Bands of the patient's slope (per logMAR) by which the stops of varied patients are split.
SLOPE_BANDS_PER_LOGMAR = ((0.0, 3.0), (3.0, 5.0), (5.0, math.inf))


def _stop_stats(records: list[dict]) -> dict:
    """The stopping rule over ``records``: trials used, stops by confidence, and how many were right."""
    confident = [r for r in records if r.get("stop_reason") == "confidence"]
    used = [r["stopped_at"] if r.get("stopped_at") is not None else len(r["trajectory"]) for r in records]
    errors = np.array([r.get("error_at_stop") for r in confident], dtype=float)  # unknown: NaN
    return {
        "confidence": records[0].get("stop_confidence"),
        "min_trials": records[0].get("min_trials"),
        "median_trials_used": _median(used),
        "n_stopped_by_confidence": len(confident),
        "n_stopped_at_max_trials": sum(r.get("stop_reason") == "max_trials" for r in records),
        # NaN (no error recorded) counts as outside
        "fraction_stopped_within_criterion": float(np.mean(errors <= CRITERION_LOGMAR)) if errors.size else None,
        "fraction_stopped_within_half_line": float(np.mean(errors <= HALF_LINE_LOGMAR)) if errors.size else None,
        "worst_error_at_stop_logmar": float(np.max(errors)) if errors.size and not np.isnan(errors).any() else None,
        # how far off the wrong stops were (NaN errors left out): a near miss or a lost session
        "median_error_of_wrong_stops_logmar": _median(errors[errors > CRITERION_LOGMAR]),
    }


def _stops_by_slope(records: list[dict]) -> list[dict]:
    """:func:`_stop_stats` per band of the patients' slopes (varied patients), the empty bands left out."""
    bands = []
    for low, high in SLOPE_BANDS_PER_LOGMAR:
        band = [r for r in records if low <= r["patient_slope"] < high]
        if band:
            bands.append(
                {
                    "slope_low": low,
                    "slope_high": high if math.isfinite(high) else None,
                    "n_sessions": len(band),
                    **_stop_stats(band),
                }
            )
    return bands


def _decision_times(records: list[dict]) -> dict:
    """Median and p95 (ms) of every decision of ``records``: wall-clock, and — when every record has
    them (campaigns since the varied condition) — the deciding thread's CPU time, which other jobs on
    the machine do not lengthen."""
    samples = [v for r in records for v in r.get("decision_ms", [])]
    times = {"median": float(np.median(samples)), "p95": float(np.percentile(samples, 95)), "n": len(samples)}
    if all(r.get("decision_cpu_ms") for r in records):
        cpu = [v for r in records for v in r["decision_cpu_ms"]]
        times.update(cpu_median=float(np.median(cpu)), cpu_p95=float(np.percentile(cpu, 95)))
    return times


def _group_stats(records: list[dict]) -> dict:
    budget = max(len(r["trajectory"]) for r in records)
    errors = np.array([r["trajectory"] for r in records if len(r["trajectory"]) == budget], dtype=float)
    stats: dict[str, Any] = {"n_sessions": int(errors.shape[0]), "n_trials": budget, "errors": {}}
    for t in sorted({t for t in CHECKPOINTS if t <= budget} | {budget}):  # and at the budget, whatever it is
        if t <= budget:
            column = errors[:, t - 1]
            stats["errors"][str(t)] = {"median": float(np.median(column)), "mean": float(np.mean(column))}
    stats["above_0.1_at_100"] = int(np.sum(errors[:, 99] > FAILURE_LOGMAR)) if budget >= 100 else None
    stats["above_0.1_at_end"] = int(np.sum(errors[:, -1] > FAILURE_LOGMAR))
    ttc = [trials_to_criterion(row) for row in errors]
    stats["trials_to_criterion"] = criterion_stats(ttc, budget)
    stats["stop"] = _stop_stats(records)
    if records[0].get("slope_range_per_logmar") is not None and all("patient_slope" in r for r in records):
        stats["stop_by_slope"] = _stops_by_slope(records)
    if any(r.get("decision_ms") for r in records):
        stats["decision_ms"] = _decision_times(records)
    else:  # records without the per-decision list: the median of the runs' medians and p95s (those that say them)
        per_run = [d for r in records if isinstance(d := (r.get("timings_ms") or {}).get("decision"), dict)]
        stats["decision_ms"] = {
            "median": _median([d["median"] for d in per_run if "median" in d]),
            "p95": _median([d["p95"] for d in per_run if "p95" in d]),
            "n": None,
        }
    return stats


def _versus_ideal(rule_records: dict[int, dict], ideal_records: dict[int, dict]) -> dict | None:
    seeds = sorted(set(rule_records) & set(ideal_records))
    if not seeds:
        return None
    rows = [rule_records[s]["trajectory"] for s in seeds]
    ideal_rows = [ideal_records[s]["trajectory"] for s in seeds]
    failures = int(sum(row[-1] > FAILURE_LOGMAR for row in rows))
    ideal_failures = int(sum(row[-1] > FAILURE_LOGMAR for row in ideal_rows))
    return {
        **versus_ideal(rows, ideal_rows, CRITERION_LOGMAR),
        "failures": failures,
        "ideal_failures": ideal_failures,
        "failure_ratio": failures / ideal_failures if ideal_failures else None,
    }


def summarize(records: list[dict]) -> dict:
    """The campaign's statistics (see the module docstring) as a JSON-able dict."""
    records = [r for r in records if r.get("campaign") == "robustness"]
    if not records:
        raise NoRuns("no robustness runs in these records")
    groups: dict[tuple[str, str], list[dict]] = {}
    for r in sorted(records, key=lambda r: r["seed"]):
        groups.setdefault((r["problem"], r["rule"]), []).append(r)
    order = {c.name: i for i, c in enumerate(CONDITIONS + EXTRA_CONDITIONS)}
    rule_order = {r: i for i, r in enumerate(ALL_ROBUSTNESS_RULES)}
    rows = []
    for condition, rule in sorted(groups, key=lambda k: (order.get(k[0], 99), k[0], rule_order.get(k[1], 99), k[1])):
        group = groups[(condition, rule)]
        first = group[0]
        row = {
            "condition": condition,
            "rule": rule,
            "slope": first["slope"],
            "lapse": first.get("lapse"),
            "n_alternatives": first.get("n_alternatives"),
            "slope_range_per_logmar": first.get("slope_range_per_logmar"),
            "va_best_range_logmar": first.get("va_best_range_logmar"),
            **_group_stats(group),
        }
        ideal = groups.get((condition, "ideal"))
        if rule != "ideal" and ideal:
            row["versus_ideal"] = _versus_ideal({r["seed"]: r for r in group}, {r["seed"]: r for r in ideal})
        rows.append(row)
    decisions = {}
    for rule in sorted({r["rule"] for r in records}, key=lambda r: rule_order.get(r, 99)):
        rule_records = [r for r in records if r["rule"] == rule]
        if any(r.get("decision_ms") for r in rule_records):
            decisions[rule] = _decision_times(rule_records)
    splits = sorted({r.get("split") or "unknown" for r in records})
    return {
        "format": "lensopt.robustness-summary/1",
        "split": splits[0] if len(splits) == 1 else splits,
        "n_runs": len(records),
        "criterion_logmar": CRITERION_LOGMAR,
        "failure_logmar": FAILURE_LOGMAR,
        "rows": rows,
        "decision_ms_by_rule": decisions,
    }


def _fmt(value, digits=3):
    if value is None:
        return "—"
    if isinstance(value, float) and not math.isfinite(value):
        return "inf"
    return f"{value:.{digits}f}" if isinstance(value, float) else str(value)


def _table(header: list[str], rows: list[list[str]]) -> list[str]:
    widths = [max(len(h), *(len(r[i]) for r in rows)) for i, h in enumerate(header)]

    def line(cells):
        return "  ".join(c.rjust(w) if i > 1 else c.ljust(w) for i, (c, w) in enumerate(zip(cells, widths)))

    return [line(header), line(["-" * w for w in widths])] + [line(r) for r in rows]


def format_summary(summary: dict) -> str:
    """Plain-text tables of :func:`summarize`."""
    rows = summary["rows"]
    split = summary["split"]
    out = [
        f"Robustness: {summary['n_runs']} session{'' if summary['n_runs'] == 1 else 's'}, "
        f"{split if isinstance(split, str) else '+'.join(split)} "
        f"patients; error = VA(reported lens) − VA_best (logMAR)",
        "",
    ]
    checkpoints = sorted({int(t) for r in rows for t in r["errors"]})
    at_100 = any(r["above_0.1_at_100"] is not None for r in rows)
    header = (
        ["condition", "rule", "n"]
        + [f"{k}@{t}" for t in checkpoints for k in ("med", "mean")]
        + ([">0.1@100"] if at_100 else [])
        + [">0.1@end"]
    )
    body = []
    for r in rows:
        cells = [r["condition"], r["rule"], str(r["n_sessions"])]
        for t in checkpoints:
            e = r["errors"].get(str(t))
            cells += [_fmt(e["median"]), _fmt(e["mean"])] if e else ["—", "—"]
        cells += ([_fmt(r["above_0.1_at_100"])] if at_100 else []) + [_fmt(r["above_0.1_at_end"])]
        body.append(cells)
    out += _table(header, body)
    out += [
        "",
        f"Trials to reach and stay <= {CRITERION_LOGMAR} logMAR (never: counted as budget + 1); "
        "stopping rule; decision time (ask + tell)",
        "",
    ]
    header = [
        "condition",
        "rule",
        "budget",
        "TTC med",
        "never",
        "TTC ×ideal",
        "fail vs ideal",
        "stop med",
        "stopped",
        "within",
        "≤½ line",
        "wrong med",
        "worst",
        "dec med ms",
        "dec p95 ms",
    ]
    body = []
    for r in rows:
        vs = r.get("versus_ideal")
        ttc, stop, dec = r["trials_to_criterion"], r["stop"], r["decision_ms"]
        body.append(
            [
                r["condition"],
                r["rule"],
                str(r["n_trials"]),
                median_text(ttc),
                str(ttc["never"]),
                ratio_text(vs),
                f"{vs['failures']} vs {vs['ideal_failures']}" if vs else "—",
                _fmt(stop["median_trials_used"], 1),
                f"{stop['n_stopped_by_confidence']}/{r['n_sessions']}",
                _fmt(stop["fraction_stopped_within_criterion"], 3),
                _fmt(stop["fraction_stopped_within_half_line"], 3),
                _fmt(stop["median_error_of_wrong_stops_logmar"], 3),
                _fmt(stop["worst_error_at_stop_logmar"], 3),
                _fmt(dec["median"], 1),
                _fmt(dec["p95"], 1),
            ]
        )
    out += _table(header, body)
    out += [
        "",
        "failures: sessions above 0.1 logMAR at the last trial (ratios on the seeds both rules ran); "
        "TTC med and TTC ×ideal ≥: half or more of the rule's sessions never settled, so the median and the ratio "
        "are lower bounds; TTC ×ideal —: half or more of the ideal observer's never settled either, no ratio; "
        f"stopped: by confidence (the rest at the budget); within: fraction of those truly <= {CRITERION_LOGMAR}; "
        f"≤½ line: <= {HALF_LINE_LOGMAR} logMAR; wrong med: the median error (logMAR) of the stops not within; "
        "worst: the largest error (logMAR) at a stop",
        "decision time by rule (all conditions): "
        + "; ".join(
            f"{rule} median {d['median']:.1f} ms, p95 {d['p95']:.1f} ms"
            + (f" (CPU time {d['cpu_median']:.1f} ms, p95 {d['cpu_p95']:.1f} ms)" if "cpu_p95" in d else "")
            for rule, d in summary["decision_ms_by_rule"].items()
        ),
    ]
    banded = [r for r in rows if r.get("stop_by_slope")]
    if banded:
        out += ["", "Stopping rule by the patient's slope (patients whose slope and best acuity vary)", ""]
        body = [
            [
                r["condition"],
                r["rule"],
                f"{band['slope_low']:g}-{band['slope_high']:g}" if band["slope_high"] else f">= {band['slope_low']:g}",
                str(band["n_sessions"]),
                f"{band['n_stopped_by_confidence']}/{band['n_sessions']}",
                _fmt(band["fraction_stopped_within_criterion"], 3),
                _fmt(band["median_trials_used"], 1),
            ]
            for r in banded
            for band in r["stop_by_slope"]
        ]
        out += _table(["condition", "rule", "slope", "n", "stopped", "within", "stop med"], body)
    return "\n".join(out)


#: File of the error curves, in the campaign directory.
CURVES_NAME = "robustness-curves.png"

#: Each rule's colour in the curves, whichever rules a campaign ran: matplotlib's default cycle in the
#: order of :data:`lensopt.bench.robustness.ALL_ROBUSTNESS_RULES` (the colours of a campaign of them all).
RULE_COLOURS = {"ucb-ald": "C0", "ts-ald": "C1", "acuity-law": "C2", "ideal": "C3", "ucb-ald-paper": "C4"}


def plot_curves(records, path):
    """One panel per condition: the median acuity error of each rule after every trial (each rule in
    its colour, :data:`RULE_COLOURS`), with the band between its 25th and 75th percentiles, on a log
    scale, and the 0.025 logMAR criterion; the title (wrapped to the figure's width) names the
    patients' split (tuning, held-out) and seeds, and what the band is. Returns the figure."""
    # deferred: matplotlib is optional (lensopt[bench]); write_summary skips the curves without it
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    present = {r["problem"] for r in records}
    conditions = [c.name for c in CONDITIONS + EXTRA_CONDITIONS if c.name in present]
    conditions += sorted(present - set(CONDITIONS_BY_NAME))
    n_cols = min(3, len(conditions))
    n_rows = -(-len(conditions) // n_cols)
    fig = Figure(figsize=(4.4 * n_cols, 3.6 * n_rows), dpi=110)
    FigureCanvasAgg(fig)
    for k, name in enumerate(conditions, start=1):
        ax = fig.add_subplot(n_rows, n_cols, k)
        for rule in ALL_ROBUSTNESS_RULES:
            runs = [r["trajectory"] for r in records if r["problem"] == name and r["rule"] == rule]
            if not runs:
                continue
            data = np.maximum(np.array(runs, float), 1e-4)  # a zero error drawn at the floor of the scale
            x = np.arange(1, data.shape[1] + 1)
            low, mid, high = np.percentile(data, [25, 50, 75], axis=0)
            colour = RULE_COLOURS.get(rule, "C9")
            ax.plot(x, mid, lw=1.5, color=colour, label=f"{rule} (n={data.shape[0]})")
            ax.fill_between(x, low, high, color=colour, alpha=0.15, lw=0)
        ax.axhline(CRITERION_LOGMAR, color="k", lw=0.8, ls="--", label=f"{CRITERION_LOGMAR} logMAR")
        ax.set_yscale("log")
        ax.set_ylim(5e-4, 2.0)
        ax.set_xlabel("trial")
        if k % n_cols == 1 or n_cols == 1:
            ax.set_ylabel("acuity error (logMAR)")
        ax.set_title(name, fontsize=9)
        ax.grid(alpha=0.3, which="both")
        ax.legend(fontsize=7, frameon=False)
    seeds = sorted({int(r["seed"]) for r in records if "seed" in r})
    splits = sorted({r.get("split") or "unknown" for r in records})
    patients = f", seeds {seeds[0]:,}–{seeds[-1]:,}" if seeds else ""
    title = f"{' + '.join(splits)} patients{patients}: median acuity error per trial, band 25–75 % of sessions"
    fitted_suptitle(fig, title, fontsize=9)
    fig.savefig(path)
    return fig


def planned_keys(manifest: dict) -> list[str] | None:
    """The run keys of a manifest's command (its conditions' patients × its rules); None if the
    manifest does not say them."""
    try:
        first, cap = int(manifest["first_seed"]), manifest.get("max_patients")
        return [
            f"{c['name']}__{rule}__seed{seed:04d}"
            for c in manifest["conditions"]
            for seed in range(first, first + (c["n_patients"] if cap is None else min(c["n_patients"], cap)))
            for rule in manifest["rules"]
        ]
    except (KeyError, TypeError, ValueError):
        return None


def write_summary(campaign_dir, out_dir=None, note=note_on_stderr) -> tuple[dict, str]:
    """Summarize a campaign directory; write :data:`SUMMARY_NAME` there (or in ``out_dir``), and the error curves
    (:data:`CURVES_NAME`) when matplotlib is installed (without it, ``note`` is told so in one line); return
    (summary, text), the text beginning with a line saying so when the manifest's command has runs still to run
    or the summary holds runs outside its plan (:func:`lensopt.bench.records.plan_notes`).

    Runs of another campaign in the folder are a one-line ValueError naming one; a folder where the files
    cannot be written, a :class:`lensopt.bench.records.SummaryNotWritten` holding the text."""
    campaign_dir = Path(campaign_dir)
    records = load_records(campaign_dir, COMMAND, campaign="robustness", essential=ESSENTIAL_KEYS)
    summary = summarize(records)
    return finish_summary(
        campaign_dir,
        out_dir,
        records,
        summary,
        command=COMMAND,
        planned_keys=planned_keys,
        format_summary=format_summary,
        names=(SUMMARY_NAME, CURVES_NAME),
        draw=plot_curves,
        note=note,
    )


def is_robustness_campaign(campaign_dir) -> bool:
    """Whether the directory's manifest (or, without one, its first record) is of this campaign."""
    return is_campaign_of(campaign_dir, "robustness")
