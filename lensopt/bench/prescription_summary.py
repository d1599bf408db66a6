"""Summary of a prescription campaign (issue 16, item 8): statistics per setting and rule, the text
table, the Bland–Altman plot, and the summary files written next to the records.

Per setting × rule (:func:`summarize`), from the records of :mod:`lensopt.bench.prescription`:

- at 10, 20, 40, 60 and 100 trials (those within the budget, and the budget's end): Bland–Altman of each
  power-vector coordinate (M, J0, J45) against the truth — the bias (mean of reported − truth)
  and the 95 % limits of agreement (bias ± 1.96 SD, SD with ``n − 1``) — and the median blur error;
- the sessions more than 0.5 D off at the end (blur error above
  :data:`lensopt.bench.prescription.FAILURE_D` after the last trial);
- trials to reach AND STAY at a blur error ``<= 0.25 D`` (:func:`trials_to_criterion`; a session
  that ends above it counts as ``budget + 1`` and is counted as *never*), its median, and its ratio
  to the ideal observer's median in the same setting on the seeds both have run — for letter rules
  only: the ideal observer reads letters, and a duel ("one or two?") carries other information
  than a letter named or not, so its trials are not counted against the letter ideal's (duel rows
  have no ratio, and the text says so);
- with a stopping rule: median trials used, the fraction of sessions stopped by confidence (the
  rest reach the budget) and the fraction of those truly within 0.25 D blur when they stopped;
- the share of sessions whose 95 % interval of M, J0 and J45 at the end (the record's
  ``estimate.intervals``) holds the true value, and the intervals' median widths;
- the changes of the lens set between trials, summed over the sessions (all, and axis only);
- decision time per rule (``decision_ms``, the optimizer's own ``ask`` time), median and p95
  pooled over every decision: campaign workers share the machine's cores, so these are upper
  bounds on an idle machine's.

The Bland–Altman plot (:func:`lensopt.bench.prescription_plot.plot_bland_altman`) has a row per
setting with a starting refraction and a panel per coordinate at the budget's end: the difference
(reported − truth) against the mean of the two, coloured by rule, with each rule's bias and limits of
agreement in that setting. How runs are grouped, labelled and ordered:
:mod:`lensopt.bench.prescription_groups`.
"""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np

from lensopt.bench.criterion import criterion_stats, median_text, ratio_text, versus_ideal
from lensopt.bench.criterion import trials_to_criterion as criterion_trials
from lensopt.bench.prescription import (
    BLAND_ALTMAN_NAME,
    CHECKPOINTS,
    COORDINATES,
    CRITERION_D,
    FAILURE_D,
    SUMMARY_NAME,
)
from lensopt.bench.prescription_groups import LOA_Z, bland_altman, feedback_of, group_order, rule_label, rule_name
from lensopt.bench.prescription_plot import plot_bland_altman
from lensopt.bench.prescription_spec import CAMPAIGN, prescription_specs
from lensopt.bench.records import (
    NoRuns,
    finish_summary,
    is_campaign_of,
    load_records,
    note_on_stderr,
)


def trials_to_criterion(curve, criterion=CRITERION_D) -> int:
    """:func:`lensopt.bench.criterion.trials_to_criterion` at the blur criterion (D)."""
    return criterion_trials(curve, criterion)


def _median(values):
    return float(np.median(values)) if len(values) else None


def checkpoints_of(budget: int) -> list[int]:
    """The tabulated trial counts of a budget: :data:`CHECKPOINTS` within it, and the budget."""
    return sorted({t for t in CHECKPOINTS if t <= budget} | {budget})


def _decision_stats(records) -> dict | None:
    samples = [v for r in records for v in r.get("decision_ms", []) if v is not None and math.isfinite(v)]
    if not samples:
        return None
    return {"median": float(np.median(samples)), "p95": float(np.percentile(samples, 95)), "n": len(samples)}


def _group_stats(records: list[dict]) -> dict:
    budget = max(r["n_trials"] for r in records)
    full = [r for r in records if len(r["curves"]["blur_error_d"]) == budget]
    stats: dict = {"n_sessions": len(full), "n_trials": budget, "at": {}}
    for t in checkpoints_of(budget):
        entry: dict = {c: bland_altman([r["curves"][c][t - 1] for r in full]) for c in COORDINATES}
        entry["blur_error_d_median"] = _median([r["curves"]["blur_error_d"][t - 1] for r in full])
        stats["at"][str(t)] = entry
    ttc = [trials_to_criterion(r["curves"]["blur_error_d"]) for r in full]
    stats["trials_to_criterion"] = criterion_stats(ttc, budget)
    stats["above_0.5_at_end"] = int(sum(r["curves"]["blur_error_d"][-1] > FAILURE_D for r in full))
    stop = full[0].get("stop") if full else None
    if stop is not None:
        used = [r["stopped_at"] if r.get("stopped_at") is not None else budget for r in full]
        confident = [r for r in full if r.get("stop_reason") == "confidence"]
        errors = [(r.get("error_at_stop") or {}).get("blur_error_d") for r in confident]
        within = [e <= CRITERION_D for e in errors if e is not None]  # of the stops that say their error
        stats["stop"] = {
            "confidence": stop.get("confidence"),
            "min_trials": stop.get("min_trials"),
            "median_trials_used": _median(used),
            "n_stopped_by_confidence": len(confident),
            "fraction_stopped": len(confident) / len(full),
            "fraction_stopped_within_criterion": float(np.mean(within)) if within else None,
        }
    else:
        stats["stop"] = None
    stats["decision_ms"] = _decision_stats(full)
    stats["interval_coverage"] = _coverage(full)
    changes: list[dict] = [r["lens_changes"] for r in full if r.get("lens_changes")]
    stats["lens_changes"] = (  # records before lens_changes do not say them
        {k: int(sum(c[k] for c in changes)) for k in ("all", "axis_only")}
        if full and len(changes) == len(full)
        else None
    )
    return stats


#: The prescription's 95 % interval of each power-vector coordinate, in a record's ``estimate``.
INTERVAL_KEYS = {"M": "m_d", "J0": "j0_d", "J45": "j45_d"}


def _coverage(records: list[dict]) -> dict | None:
    """The share of sessions whose 95 % interval of M, J0 and J45 at the end holds the truth, and the
    intervals' median widths (D); None when a record says no intervals (the ideal observer's old
    records, hand-made ones)."""
    intervals = [((r.get("estimate") or {}).get("intervals") or {}) for r in records]
    if not records or not all(all(k in i for k in INTERVAL_KEYS.values()) for i in intervals):
        return None
    out: dict = {"n": len(records)}
    for c, key in INTERVAL_KEYS.items():
        bounds = np.array([i[key] for i in intervals], dtype=float)
        truth = np.array([r["true_power_vector_d"][c] for r in records], dtype=float)
        out[c] = float(np.mean((bounds[:, 0] <= truth) & (truth <= bounds[:, 1])))
        out[f"{c}_width_median"] = float(np.median(bounds[:, 1] - bounds[:, 0]))
    return out


def _versus_ideal(rule_records: dict[int, dict], ideal_records: dict[int, dict]) -> dict | None:
    seeds = sorted(set(rule_records) & set(ideal_records))
    if not seeds:
        return None

    def curves(by_seed):
        return [by_seed[s]["curves"]["blur_error_d"] for s in seeds]

    return versus_ideal(curves(rule_records), curves(ideal_records), CRITERION_D)


def summarize(records: list[dict]) -> dict:
    """The campaign's statistics (see the module docstring) as a JSON-able dict."""
    records = [r for r in records if r.get("campaign") == CAMPAIGN]
    if not records:
        raise NoRuns("no prescription runs in these records")
    groups: dict[tuple[str, str, str], list[dict]] = {}
    for r in sorted(records, key=lambda r: r["seed"]):
        groups.setdefault((r["setting"], feedback_of(r), rule_name(r)), []).append(r)
    rows = []
    for setting, feedback, rule in sorted(groups, key=group_order):
        group = groups[(setting, feedback, rule)]
        first = group[0]
        row = {
            "setting": setting,
            "rule": rule,
            "with_start": first.get("with_start"),
            "accommodation": first.get("accommodation"),
            "slope": first["slope"],
            "lapse": first.get("lapse"),
            "feedback": feedback,
            **_group_stats(group),
        }
        ideal = groups.get((setting, "letters", "ideal"))
        if feedback == "letters" and rule != "ideal" and ideal:
            row["versus_ideal"] = _versus_ideal({r["seed"]: r for r in group}, {r["seed"]: r for r in ideal})
        rows.append(row)
    decisions = {}
    for feedback, rule in sorted(
        {(feedback_of(r), rule_name(r)) for r in records}, key=lambda k: group_order(("", *k))
    ):
        stats = _decision_stats([r for r in records if (feedback_of(r), rule_name(r)) == (feedback, rule)])
        if stats:
            decisions[rule_label({"rule": rule, "feedback": feedback})] = stats
    splits = sorted({r.get("split") or "unknown" for r in records})
    slopes = sorted({r["slope"] for r in records})
    return {
        "format": "lensopt.prescription-summary/1",
        "split": splits[0] if len(splits) == 1 else splits,
        "slope": slopes[0] if len(slopes) == 1 else slopes,
        "n_runs": len(records),
        "criterion_blur_d": CRITERION_D,
        "loa_z": LOA_Z,
        "rows": rows,
        "decision_ms_by_rule": decisions,
        "decision_ms_note": "the optimizer's ask time; campaign workers share the machine's cores",
    }


def _fmt(value, digits=3, sign=False):
    if value is None:
        return "—"
    if isinstance(value, float) and not math.isfinite(value):
        return "inf"
    if isinstance(value, float):
        return f"{value:+.{digits}f}" if sign else f"{value:.{digits}f}"
    return str(value)


def _table(header: list[str], rows: list[list[str]]) -> list[str]:
    widths = [max(len(h), *(len(r[i]) for r in rows)) for i, h in enumerate(header)]

    def line(cells):
        return "  ".join(c.rjust(w) if i > 1 else c.ljust(w) for i, (c, w) in enumerate(zip(cells, widths)))

    return [line(header), line(["-" * w for w in widths])] + [line(r) for r in rows]


def _ba_cell(ba: dict) -> str:
    if ba["loa_low"] is None:
        return f"{_fmt(ba['bias'], 2, True)} [—]"
    return f"{_fmt(ba['bias'], 2, True)} [{_fmt(ba['loa_low'], 2, True)}, {_fmt(ba['loa_high'], 2, True)}]"


def _coverage_cell(coverage: dict | None) -> str:
    if not coverage:
        return "—"
    return "/".join(f"{100 * coverage[c]:.0f}" for c in INTERVAL_KEYS)


def format_summary(summary: dict) -> str:
    """Plain-text tables of :func:`summarize`."""
    rows = summary["rows"]
    split = summary["split"]
    slope = summary["slope"]
    out = [
        f"Prescription: {summary['n_runs']} session{'' if summary['n_runs'] == 1 else 's'}, {split if isinstance(split, str) else '+'.join(split)} "
        f"patients, slope {slope if not isinstance(slope, list) else '/'.join(f'{s:g}' for s in slope)}; "
        "Bland–Altman of reported − truth (D): bias [95 % limits of agreement, bias ± 1.96 SD]",
        "",
    ]
    header = ["setting", "rule", "trials", "n", "M", "J0", "J45", "blur med"]
    body = []
    for r in rows:
        for t, entry in r["at"].items():
            body.append(
                [
                    r["setting"],
                    rule_label(r),
                    t,
                    str(r["n_sessions"]),
                    *(_ba_cell(entry[c]) for c in COORDINATES),
                    _fmt(entry["blur_error_d_median"], 3),
                ]
            )
    out += _table(header, body)
    out += [
        "",
        f"Trials to reach and stay <= {CRITERION_D} D blur (never: counted as budget + 1); "
        "stopping rule; decision time (the optimizer's ask, ms)",
        "",
    ]
    header = [
        "setting",
        "rule",
        "budget",
        "TTC med",
        "never",
        f"> {FAILURE_D} D at end",
        "TTC ×ideal",
        "stop med",
        "stopped",
        "within",
        "dec med ms",
        "dec p95 ms",
        "lens changes",
        "95% holds M/J0/J45",
    ]
    body = []
    for r in rows:
        vs = r.get("versus_ideal")
        ttc, stop, dec = r["trials_to_criterion"], r["stop"], r["decision_ms"]
        body.append(
            [
                r["setting"],
                rule_label(r),
                str(r["n_trials"]),
                median_text(ttc),
                str(ttc["never"]),
                str(r["above_0.5_at_end"]),
                ratio_text(vs),
                _fmt(stop["median_trials_used"], 1) if stop else "—",
                f"{stop['n_stopped_by_confidence']}/{r['n_sessions']}" if stop else "—",
                _fmt(stop["fraction_stopped_within_criterion"], 2) if stop else "—",
                _fmt(dec["median"], 1) if dec else "—",
                _fmt(dec["p95"], 1) if dec else "—",
                f"{r['lens_changes']['all']} ({r['lens_changes']['axis_only']})" if r.get("lens_changes") else "—",
                _coverage_cell(r.get("interval_coverage")),
            ]
        )
    out += _table(header, body)
    stop_row = next((r["stop"] for r in rows if r["stop"]), None)
    duel_note = (
        [
            "duels and rankings: no TTC ×ideal — the ideal observer reads letters, and a comparison carries other "
            "information than a letter"
        ]
        if any(r["feedback"] != "letters" for r in rows)
        else []
    )
    out += [
        "",
        *duel_note,
        f"> {FAILURE_D} D at end: sessions whose blur error (the power-vector error's length) is above "
        f"{FAILURE_D} D after the last trial; "
        "TTC ×ideal: median trials to criterion over the ideal observer's, same setting, seeds both ran "
        "(TTC med and TTC ×ideal ≥: half or more of the rule's sessions never settled, lower bounds; "
        "TTC ×ideal —: half or more of the ideal observer's never settled either, no ratio); "
        + (
            f"stop: confidence {stop_row['confidence']:g}, min {stop_row['min_trials']} trials — stopped: "
            f"sessions stopped by confidence, of all (the rest ran to the budget), within: of those, truly <= {CRITERION_D} D"
            if stop_row
            else "no stopping rule recorded (--stop-confidence)"
        ),
        "95% holds: the share of sessions whose 95 % interval of M, J0, J45 at the end holds the truth (%); "
        "lens changes: of the lens set (a letter's, a comparison's lens 1) between consecutive trials, summed "
        "over the sessions (in brackets: of the axis only, a dial turn); "
        "decision time by rule (all settings; campaign workers share cores): "
        + (
            "; ".join(
                f"{rule} median {d['median']:.1f} ms, p95 {d['p95']:.1f} ms"
                for rule, d in summary["decision_ms_by_rule"].items()
            )
            or "—"
        ),
    ]
    return "\n".join(out)


def planned_keys(manifest: dict) -> list[str] | None:
    """The run keys of a manifest's command (:func:`prescription_specs` of its settings); None if the
    manifest does not say them."""
    stop = manifest.get("stop") or {}
    try:
        specs = prescription_specs(
            [s["name"] for s in manifest["settings"]],
            manifest["rules"],
            n_patients=manifest["n_patients"],
            first_seed=manifest["first_seed"],
            n_trials=manifest["n_trials"],
            feedback=manifest.get("feedback") or "letters",
            stop_confidence=stop.get("confidence"),
            max_step_d=manifest.get("max_step_d"),
            tie_threshold=manifest.get("tie_threshold") or 0.0,
            same_answers=tuple(manifest.get("same_answers") or (None,)),
            check_letters=stop.get("check_letters"),
            axis_step_deg=manifest.get("axis_step_deg"),
        )
    except (KeyError, TypeError, ValueError):
        return None
    return [spec.key for spec in specs]


#: The command that writes a campaign folder of this kind (named in errors).
COMMAND = "lensopt bench prescription"

#: The keys of a run record the summary rests on (a record without one is damaged; any other may be
#: missing from old or hand-made records, and is said unknown or left out).
ESSENTIAL_KEYS = (
    "setting",
    "rule",
    "seed",
    "n_trials",
    "slope",
    "curves.blur_error_d",
    *(f"curves.{c}" for c in COORDINATES),
    *(f"true_power_vector_d.{c}" for c in COORDINATES),
)


def write_summary(campaign_dir, out_dir=None, note=note_on_stderr) -> tuple[dict, str]:
    """Summarize a campaign directory; write :data:`SUMMARY_NAME` there (or in ``out_dir``), and the Bland–Altman plot
    (:data:`BLAND_ALTMAN_NAME`) when matplotlib is installed (without it, ``note`` is told so in one line); return
    (summary, text), the text beginning with a line saying so when the manifest's command has runs still to run or
    the summary holds runs outside its plan (:func:`lensopt.bench.records.plan_notes`).

    Runs of another campaign in the folder are a one-line ValueError naming one; a folder where the files
    cannot be written, a :class:`lensopt.bench.records.SummaryNotWritten` holding the text."""
    campaign_dir = Path(campaign_dir)
    records = load_records(campaign_dir, COMMAND, campaign=CAMPAIGN, essential=ESSENTIAL_KEYS)
    summary = summarize(records)
    return finish_summary(
        campaign_dir,
        out_dir,
        records,
        summary,
        command=COMMAND,
        planned_keys=planned_keys,
        format_summary=format_summary,
        names=(SUMMARY_NAME, BLAND_ALTMAN_NAME),
        draw=plot_bland_altman,
        note=note,
    )


def is_prescription_campaign(campaign_dir) -> bool:
    """Whether the directory's manifest names this campaign (or, without one, its first record is of it)."""
    return is_campaign_of(campaign_dir, CAMPAIGN)
