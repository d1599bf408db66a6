"""Stratified analysis of benchmark results (Dewancker et al. 2016; seed paper §4; METHOD.md §6).

For each problem, every ordered pair of rules ``(i, j)`` gets a one-sided Mann-Whitney U test
(``scipy.stats.mannwhitneyu``, ``alternative="greater"``) at ``α = 5e-4``: "i beats j" on the final
value. A rule's wins give a partial ranking; rules tied in it are separated by the same test on
the area under the curve (AUC, the mean of the trajectory, as in the authors' ``ranking_analysis.m``)
— only comparisons inside the tied group count. The Borda score of a rule on a problem is the
number of rules ranked strictly below it; scores are summed over problems to give the table. The
win-fraction matrices (the paper's Figure S1 A and B) hold, for every pair, the fraction of
problems on which the row rule beats the column rule on the final value, resp. on the AUC.

Values are compared "higher is better": a problem whose direction is ``"min"`` (the refraction
acuity error) is negated before testing.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np
from numpy.typing import ArrayLike
from scipy.stats import mannwhitneyu

#: Significance level of every pairwise test (Dewancker et al. 2016; seed paper §4).
ALPHA = 5e-4


def competition_ranking(scores: ArrayLike) -> np.ndarray:
    """Rank 1 for the highest score; equal scores share a rank, the next rank skips ("1224")."""
    values = np.asarray(scores, dtype=float)
    return np.array([1 + int(np.sum(values > s)) for s in values])


def borda_from_ranking(ranks: ArrayLike) -> np.ndarray:
    """Borda score of each candidate: how many candidates have a strictly worse (larger) rank."""
    values = np.asarray(ranks)
    return np.array([int(np.sum(values > r)) for r in values])


def pairwise_wins(samples: Sequence[np.ndarray], alpha: float = ALPHA) -> np.ndarray:
    """``W[i, j]`` true when a one-sided Mann-Whitney U test says sample i is greater than j."""
    n = len(samples)
    wins = np.zeros((n, n), dtype=bool)
    for i in range(n):
        for j in range(n):
            if i == j:
                continue
            a, b = np.asarray(samples[i], float), np.asarray(samples[j], float)
            if np.ptp(np.concatenate([a, b])) == 0:  # all values equal: no evidence either way
                continue
            wins[i, j] = mannwhitneyu(a, b, alternative="greater").pvalue < alpha
    return wins


def problem_borda(final_wins: np.ndarray, auc_wins: np.ndarray) -> np.ndarray:
    """Borda scores on one problem: wins on the final value, ties broken by AUC wins in the tie."""
    ranks = competition_ranking(final_wins.sum(axis=1))
    borda = borda_from_ranking(ranks)
    for r in np.unique(ranks):
        tied = np.flatnonzero(ranks == r)
        if tied.size > 1:
            auc_in_tie = auc_wins[np.ix_(tied, tied)].sum(axis=1)
            borda[tied] += borda_from_ranking(competition_ranking(auc_in_tie))
    return borda


@dataclass(frozen=True, eq=False)
class StratifiedResult:
    """Borda scores, ranks and win matrices of a stratified analysis.

    Arrays are indexed by ``rules`` (and ``problems``) in the order given here.
    """

    rules: tuple[str, ...]
    problems: tuple[str, ...]
    alpha: float
    borda_per_problem: np.ndarray  # (n_problems, n_rules)
    wins_final: np.ndarray  # (n_problems, n_rules, n_rules) bool
    wins_auc: np.ndarray  # (n_problems, n_rules, n_rules) bool

    @property
    def borda(self) -> np.ndarray:
        """Borda scores summed over problems, ``(n_rules,)``."""
        return self.borda_per_problem.sum(axis=0)

    @property
    def rank(self) -> np.ndarray:
        """Competition rank of each rule on the summed Borda score (1 = best)."""
        return competition_ranking(self.borda)

    @property
    def win_fraction_final(self) -> np.ndarray:
        """Figure S1 A: fraction of problems where the row rule beats the column rule (final value)."""
        return self.wins_final.mean(axis=0)

    @property
    def win_fraction_auc(self) -> np.ndarray:
        """Figure S1 B: the same on the area under the curve."""
        return self.wins_auc.mean(axis=0)

    @property
    def order(self) -> np.ndarray:
        """Rule indices from best to worst (ties keep the input order)."""
        return np.argsort(-self.borda, kind="stable")

    def table(self) -> list[dict]:
        """The ranking table: one row per rule, best first, ``{"rule", "rank", "borda"}``."""
        borda, rank = self.borda, self.rank
        return [{"rule": self.rules[i], "rank": int(rank[i]), "borda": int(borda[i])} for i in self.order]

    def to_dict(self) -> dict:
        """JSON-able summary (table, per-problem scores and both win-fraction matrices)."""
        order = self.order
        return {
            "alpha": self.alpha,
            "rules": [self.rules[i] for i in order],
            "problems": list(self.problems),
            "table": self.table(),
            "borda_per_problem": {
                p: {self.rules[i]: int(self.borda_per_problem[k, i]) for i in order}
                for k, p in enumerate(self.problems)
            },
            "win_fraction_final": self.win_fraction_final[np.ix_(order, order)].tolist(),
            "win_fraction_auc": self.win_fraction_auc[np.ix_(order, order)].tolist(),
        }


def stratified_analysis(
    trajectories: Mapping[str, Mapping[str, np.ndarray]],
    directions: Mapping[str, str] | str = "max",
    alpha: float = ALPHA,
    rules: Sequence[str] | None = None,
) -> StratifiedResult:
    """Rank rules over problems from their trajectories.

    ``trajectories[problem][rule]`` is an array ``(n_seeds, n_iterations)``: the true value of
    the reported optimum after each iteration, one row per seed (seed counts may differ between
    rules; iteration counts must not, within a problem). ``directions`` says per problem (or for
    all) whether higher (``"max"``) or lower (``"min"``) values are better. Every problem must
    hold every rule of ``rules`` (default: the rules of the first problem, in its order).
    """
    if not 0 < alpha < 1:
        raise ValueError(f"alpha must be in (0, 1), got {alpha}")
    problems = tuple(trajectories)
    if not problems:
        raise ValueError("no results to analyse: the campaign directory holds no finished runs")
    rules = tuple(rules) if rules is not None else tuple(trajectories[problems[0]])
    if len(rules) < 2:
        raise ValueError(f"a ranking needs at least two rules, got {list(rules)}")
    n_rules = len(rules)
    borda = np.zeros((len(problems), n_rules), dtype=int)
    wins_final = np.zeros((len(problems), n_rules, n_rules), dtype=bool)
    wins_auc = np.zeros_like(wins_final)
    for k, problem in enumerate(problems):
        direction = directions if isinstance(directions, str) else directions[problem]
        if direction not in ("max", "min"):
            raise ValueError(f"direction of {problem!r} must be 'max' or 'min', got {direction!r}")
        sign = 1.0 if direction == "max" else -1.0
        missing = [r for r in rules if r not in trajectories[problem]]
        if missing:
            raise ValueError(
                f"problem {problem!r} has no runs of rule(s) {missing}; finish the campaign or pass --rules"
            )
        curves = [sign * np.atleast_2d(np.asarray(trajectories[problem][r], float)) for r in rules]
        lengths = {c.shape[1] for c in curves}
        if len(lengths) != 1:
            raise ValueError(f"problem {problem!r}: trajectories differ in length {sorted(lengths)}")
        wins_final[k] = pairwise_wins([c[:, -1] for c in curves], alpha)
        wins_auc[k] = pairwise_wins([c.mean(axis=1) for c in curves], alpha)
        borda[k] = problem_borda(wins_final[k], wins_auc[k])
    return StratifiedResult(rules, problems, alpha, borda, wins_final, wins_auc)


def trajectories_from_records(records: Sequence[Mapping]) -> tuple[dict, dict]:
    """Group run records into ``(trajectories[problem][rule] (n_seeds, n_iter), directions)``.

    Rows are sorted by seed, so two analyses of the same records are identical.
    """
    grouped: dict[str, dict[str, list]] = {}
    directions: dict[str, str] = {}
    for rec in records:
        problem, rule = rec["problem"], rec["rule"]
        previous = directions.setdefault(problem, rec["direction"])
        if previous != rec["direction"]:
            raise ValueError(f"records of {problem!r} disagree on the direction")
        grouped.setdefault(problem, {}).setdefault(rule, []).append((rec["seed"], rec["trajectory"]))
    trajectories = {
        p: {r: np.array([t for _, t in sorted(rows, key=lambda x: x[0])], dtype=float) for r, rows in by_rule.items()}
        for p, by_rule in grouped.items()
    }
    return trajectories, directions
