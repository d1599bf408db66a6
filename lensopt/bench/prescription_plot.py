"""The Bland–Altman plot of a prescription campaign: a row of panels per setting with a starting
refraction, a panel per power-vector coordinate (M, J0, J45) at the budget's end — reported − truth
against the mean of the two, coloured by rule, with each rule's bias and 95 % limits of agreement in
that setting (the tables' :func:`lensopt.bench.prescription_groups.bland_altman`). Drawn by
:func:`lensopt.bench.prescription_summary.write_summary` when matplotlib is installed."""

from __future__ import annotations

import numpy as np

from lensopt.bench.figures import fitted_suptitle
from lensopt.bench.prescription import COORDINATES
from lensopt.bench.prescription_groups import (
    bland_altman,
    feedback_of,
    group_order,
    rule_label,
    rule_name,
    setting_order,
)
from lensopt.bench.prescription_spec import CAMPAIGN


def bland_altman_groups(records) -> tuple[list[str], list[str], dict]:
    """What the Bland–Altman plot draws: (settings, rules, groups) for the records at the budget's end
    of the settings with a starting refraction (all settings if there is none), in the tables'
    order; ``groups[(setting, rule)][coordinate]`` holds the ``means`` of reported and truth, the
    ``differences`` reported − truth (D) and their :func:`bland_altman` — each setting's own, as the
    tables give them (settings pooled, a bias between two starts would hide both)."""
    records = [r for r in records if r.get("campaign") == CAMPAIGN and r.get("curves")]
    chosen = [r for r in records if r.get("with_start")] or records
    settings = sorted({r["setting"] for r in chosen}, key=setting_order)
    ordered = sorted(chosen, key=lambda r: group_order(("", feedback_of(r), rule_name(r))))
    rules = list(dict.fromkeys(rule_label(r) for r in ordered))
    groups: dict = {}
    for setting in settings:
        for rule in rules:
            group = [r for r in chosen if r["setting"] == setting and rule_label(r) == rule]
            if not group:
                continue
            groups[(setting, rule)] = {}
            for coord in COORDINATES:
                diffs = np.array([r["curves"][coord][-1] for r in group], dtype=float)
                truth = np.array([r["true_power_vector_d"][coord] for r in group], dtype=float)
                groups[(setting, rule)][coord] = {
                    "means": truth + diffs / 2,
                    "differences": diffs,
                    "bland_altman": bland_altman(diffs),
                }
    return settings, rules, groups


def plot_bland_altman(records, path) -> None:
    """One row of panels per setting (:func:`bland_altman_groups`), one panel per coordinate (M, J0,
    J45) at the budget's end: reported − truth against the mean of the two, coloured by rule, with
    each rule's bias (solid) and 95 % limits of agreement (dashed) in that setting; a column shares
    its scale, so the settings compare at a glance."""
    # deferred: matplotlib is optional (lensopt[bench]); write_summary skips the plot without it
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure
    from matplotlib.lines import Line2D

    settings, rules, groups = bland_altman_groups(records)
    colors = {rule: f"C{i}" for i, rule in enumerate(rules)}
    n_rows = max(1, len(settings))  # no run with curves: one empty row
    fig = Figure(figsize=(13.5, 1.0 + 3.4 * n_rows), dpi=110)
    FigureCanvasAgg(fig)
    axes = fig.subplots(n_rows, len(COORDINATES), sharex="col", sharey="col", squeeze=False)
    for row, setting in enumerate(settings):
        for col, coord in enumerate(COORDINATES):
            ax = axes[row][col]
            for rule in rules:
                group = groups.get((setting, rule), {}).get(coord)
                if group is None:
                    continue
                ba = group["bland_altman"]
                ax.scatter(group["means"], group["differences"], s=14, alpha=0.6, color=colors[rule])
                ax.axhline(ba["bias"], color=colors[rule], lw=1.2)
                for limit in (ba["loa_low"], ba["loa_high"]):
                    if limit is not None:
                        ax.axhline(limit, color=colors[rule], lw=0.9, ls="--")
            ax.axhline(0.0, color="k", lw=0.6)
            ax.set_title(f"{setting}: {coord}", fontsize=9)
            ax.set_ylabel(f"{coord}: reported − truth (D)")
            if row == len(settings) - 1:
                ax.set_xlabel(f"{coord}: mean of reported and truth (D)")
            ax.grid(alpha=0.3)
    # every rule of the campaign, whichever settings it ran in
    handles = [Line2D([], [], ls="", marker="o", alpha=0.6, color=colors[rule], label=rule) for rule in rules]
    axes[0][0].legend(handles=handles, fontsize=7, frameon=False)
    chosen = [r for r in records if r.get("campaign") == CAMPAIGN and r.get("setting") in settings]
    budgets = sorted({r["n_trials"] for r in chosen})
    splits = " + ".join(sorted({r.get("split") or "unknown" for r in chosen}))
    fitted_suptitle(
        fig,
        f"Bland–Altman after {'/'.join(map(str, budgets))} trials, {splits} patients, a row per setting: "
        "bias (solid) and 95 % limits of agreement (dashed) per rule",
        fontsize=10,
    )
    fig.savefig(path)
