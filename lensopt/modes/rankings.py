"""Rankings: three (or four) lenses, a line of letters, "put them in order, clearest first"
(:class:`lensopt.refraction.rankings.RankingRefractionOptimizer`; the full prescription's rankings,
:class:`lensopt.refraction.prescription_rankings.PrescriptionRankingOptimizer`, are answered here too)."""

from __future__ import annotations

import numbers
from dataclasses import dataclass

from lensopt.modes.base import FeedbackMode
from lensopt.modes.letters import is_prescription
from lensopt.refraction.lens import Lens
from lensopt.refraction.prescription_rankings import PrescriptionRankingOptimizer, PrescriptionRankingTrial
from lensopt.refraction.rankings import RankingRefractionOptimizer, RankingTrial
from lensopt.refraction.trial import TrialHistory


def _n_lenses(query: RankingTrial | PrescriptionRankingTrial) -> int:
    return len(query.lenses) if isinstance(query, PrescriptionRankingTrial) else len(query.lenses_d)


def _valid(query: RankingTrial | PrescriptionRankingTrial, answer) -> bool:
    """Every lens index once, clearest first."""
    return (
        isinstance(answer, (tuple, list))
        and all(isinstance(i, numbers.Integral) and not isinstance(i, bool) for i in answer)
        and sorted(answer) == list(range(_n_lenses(query)))
    )


def _respond(patient, ranking: RankingTrial | PrescriptionRankingTrial) -> tuple[int, ...]:
    """The simulated order; a full-prescription ranking's lenses each carry their axis, and each is
    compared with the patient's correction by its power-vector residual."""
    if isinstance(ranking, PrescriptionRankingTrial):
        return patient.rank_lenses(ranking.letter_logmar, ranking.lens_triples)
    return patient.rank_lenses(ranking.letter_logmar, ranking.lenses_d)


def _history_pair(record) -> tuple:
    """Every stored ranking; a ranking of the full prescription with its lenses' axes."""
    axes = getattr(record, "axes_deg", None)
    if axes is not None:
        lenses = tuple(Lens(S, C, a) for (S, C), a in zip(record.lenses_d, axes, strict=True))
        return PrescriptionRankingTrial(lenses, record.letter_logmar), record.order
    return RankingTrial(record.lenses_d, record.letter_logmar), record.order


@dataclass(frozen=True)
class RankingMode(FeedbackMode):
    """The ranking mode: rebuilds the optimizer that wrote the stored settings, the rankings of
    sphere and cylinder or of the full prescription (``"search": "prescription"``)."""

    def stored_optimizer_class(self, settings: dict) -> type[TrialHistory]:
        return PrescriptionRankingOptimizer if is_prescription(settings) else RankingRefractionOptimizer


MODE = RankingMode(
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
