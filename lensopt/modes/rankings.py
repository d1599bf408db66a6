"""Rankings: three (or four) lenses, a line of letters, "put them in order, clearest first"
(:class:`lensopt.refraction.rankings.RankingRefractionOptimizer`)."""

from __future__ import annotations

import numbers

from lensopt.modes.base import FeedbackMode
from lensopt.refraction.rankings import RankingRefractionOptimizer, RankingTrial


def _valid(query: RankingTrial, answer) -> bool:
    """Every lens index once, clearest first."""
    return (
        isinstance(answer, (tuple, list))
        and all(isinstance(i, numbers.Integral) and not isinstance(i, bool) for i in answer)
        and sorted(answer) == list(range(len(query.lenses_d)))
    )


def _respond(patient, ranking: RankingTrial) -> tuple[int, ...]:
    return patient.rank_lenses(ranking.letter_logmar, ranking.lenses_d)


def _history_pair(record) -> tuple:
    return RankingTrial(record.lenses_d, record.letter_logmar), record.order


MODE = FeedbackMode(
    kind="ranking",
    title="ranking refraction",
    optimizer_class=RankingRefractionOptimizer,
    option_names=("n_lenses",),
    query_type=RankingTrial,
    answers=None,
    valid_answer=_valid,
    respond=_respond,
    answer_options=(),
    history_pair=_history_pair,
    comparison=True,
    certainty=False,
)
