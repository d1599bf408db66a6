"""Trials to criterion and their ratio to the ideal observer's, for the campaign summaries.

A session's *trials to criterion* is the first trial from which its error stays at or under the
criterion to the end (:func:`trials_to_criterion`); a session that ends above it has none and counts
as ``budget + 1`` — a censored value. A median over sessions is itself censored when at least half of
them never got there: the true median is somewhere beyond the budget, so a ratio of such a median to
the ideal observer's is a lower bound (:func:`versus_ideal` says so, and :func:`ratio_text` prints
it ``≥``), and no ratio at all when the ideal observer's median is censored too.
"""

from __future__ import annotations

import numpy as np


def trials_to_criterion(curve, criterion: float) -> int:
    """First trial (1-based) from which every error up to the last is ``<= criterion``: the
    session reached the criterion and stayed there. ``len(curve) + 1`` if the last error is above
    it (never reached, or reached and left). NaN counts as above."""
    errors = np.asarray(curve, dtype=float)
    above = np.flatnonzero(~(errors <= criterion))
    return 1 if above.size == 0 else int(above[-1]) + 2


def median_is_censored(n_sessions: int, n_never: int) -> bool:
    """Whether the median of ``n_sessions`` trials to criterion, ``n_never`` of them censored (the
    largest values), involves a censored value: the upper middle one is censored when at least
    half of the sessions never reached the criterion."""
    return n_sessions > 0 and n_never >= n_sessions - n_sessions // 2


def versus_ideal(curves: list, ideal_curves: list, criterion: float) -> dict:
    """Median trials to criterion of paired sessions (the same patients, in order), the rule's and
    the ideal observer's, and their ratio: ``ratio_is_lower_bound`` when the rule's median is
    censored and the ideal's is not; ``ratio`` None when the ideal's is censored."""
    ttc = [trials_to_criterion(c, criterion) for c in curves]
    ideal_ttc = [trials_to_criterion(c, criterion) for c in ideal_curves]
    never = sum(t > len(c) for t, c in zip(ttc, curves, strict=True))
    ideal_never = sum(t > len(c) for t, c in zip(ideal_ttc, ideal_curves, strict=True))
    median, ideal_median = float(np.median(ttc)), float(np.median(ideal_ttc))
    ideal_censored = median_is_censored(len(ideal_ttc), ideal_never)
    return {
        "paired_sessions": len(ttc),
        "trials_to_criterion_median": median,
        "ideal_trials_to_criterion_median": ideal_median,
        "trials_to_criterion_ratio": None if ideal_censored else median / ideal_median,
        "ratio_is_lower_bound": median_is_censored(len(ttc), never) and not ideal_censored,
    }


def ratio_text(versus: dict | None) -> str:
    """The ratio of :func:`versus_ideal` as a table prints it: ``2.91``, ``≥1.41`` (a lower bound),
    or ``—`` (no paired sessions, or the ideal observer's median censored)."""
    if versus is None or versus["trials_to_criterion_ratio"] is None:
        return "—"
    text = f"{versus['trials_to_criterion_ratio']:.2f}"
    return "≥" + text if versus.get("ratio_is_lower_bound") else text


def criterion_stats(ttc: list[int], budget: int) -> dict:
    """The summaries' trials to criterion of sessions ``ttc`` run to ``budget``: their ``median``
    (None without sessions), how many ``never`` settled (counted as ``never_counts_as``, budget + 1),
    and ``median_is_lower_bound`` when half or more of them never did (:func:`median_is_censored`:
    a pilot's "58.5 trials" with 2 of 4 sessions never settled is at least 58.5)."""
    never = int(sum(t > budget for t in ttc))
    return {
        "median": float(np.median(ttc)) if len(ttc) else None,
        "never": never,
        "never_counts_as": budget + 1,
        "median_is_lower_bound": median_is_censored(len(ttc), never),
    }


def median_text(stats: dict) -> str:
    """The median of :func:`criterion_stats` as a table prints it: ``46.5``, ``≥58.5`` (a lower
    bound), or ``—`` (no session)."""
    if stats["median"] is None:
        return "—"
    return ("≥" if stats.get("median_is_lower_bound") else "") + f"{stats['median']:.1f}"
