"""Duels: two lenses, a line of letters, "one or two — or the same?"
(:class:`lensopt.refraction.duels.DuelRefractionOptimizer`; the full prescription's duels,
:class:`lensopt.refraction.prescription_duels.PrescriptionDuelOptimizer`, are answered here too)."""

from __future__ import annotations

from dataclasses import dataclass

from lensopt.modes.base import FeedbackMode
from lensopt.modes.letters import is_prescription
from lensopt.refraction.duels import DuelRefractionOptimizer, DuelTrial
from lensopt.refraction.lens import Lens
from lensopt.refraction.prescription_duels import PrescriptionDuelOptimizer, PrescriptionDuelTrial
from lensopt.refraction.trial import DUEL_ANSWERS, TrialHistory


def _valid(query, answer) -> bool:
    return isinstance(answer, str) and answer in DUEL_ANSWERS


def _respond(patient, duel: DuelTrial | PrescriptionDuelTrial, tie_threshold: float = 0.0) -> str:
    """The simulated answer; a full-prescription duel's lenses each carry their axis, and each is
    compared with the patient's correction by its power-vector residual."""
    if isinstance(duel, PrescriptionDuelTrial):
        lenses = [(lens.sphere_d, lens.cylinder_d, lens.axis_deg) for lens in (duel.first_lens, duel.second_lens)]
        return patient.duel_answer(duel.letter_logmar, *lenses, tie_threshold=tie_threshold)
    return patient.duel_answer(duel.letter_logmar, duel.first_lens_d, duel.second_lens_d, tie_threshold=tie_threshold)


def _history_pair(record) -> tuple:
    """Every stored answer, ties included; a duel of the full prescription with its lenses' axes."""
    if getattr(record, "first_axis_deg", None) is not None:
        first = Lens(record.first_sphere_d, record.first_cylinder_d, record.first_axis_deg)
        second = Lens(record.second_sphere_d, record.second_cylinder_d, record.second_axis_deg)
        return PrescriptionDuelTrial(first, second, record.letter_logmar), record.answer
    return DuelTrial(record.first_lens_d, record.second_lens_d, record.letter_logmar), record.answer


@dataclass(frozen=True)
class DuelMode(FeedbackMode):
    """The duel mode: rebuilds the optimizer that wrote the stored settings, the duels of sphere
    and cylinder or of the full prescription (``"search": "prescription"``)."""

    def stored_optimizer_class(self, settings: dict) -> type[TrialHistory]:
        return PrescriptionDuelOptimizer if is_prescription(settings) else DuelRefractionOptimizer


MODE = DuelMode(
    kind="duel",
    title="duel refraction",
    optimizer_class=DuelRefractionOptimizer,
    option_names=("inference", "model"),
    query_type=DuelTrial,
    answers=DUEL_ANSWERS,
    valid_answer=_valid,
    respond=_respond,
    answer_options=("tie_threshold",),
    history_pair=_history_pair,
    comparison=True,
    certainty=False,
)
