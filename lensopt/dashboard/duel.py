"""What the dashboard says about a duel session (no Qt): one line with the best lens and the answers.

The dashboard's four panels (lens map of predicted acuity, psychometric curve, acuity history) are
letter-session panels; a duel session has no acuity model to draw them from. For a duel session the
dashboard shows :func:`duel_summary` in its message line instead: the number of comparisons and of
each answer, the last letter size, and the best lens of the duel model rebuilt from the stored
duels (``DuelRefractionOptimizer.from_settings(settings, history).best_lens()``, ties included).
"""

from __future__ import annotations

from lensopt.store.records import DUEL_ANSWERS


def duel_summary(info, records) -> str:
    """One line describing the duel session ``info`` after its duels ``records`` (store records)."""
    head = f"duel session {info.session_id} ({info.participant}, {info.status})"
    advice = f"the panels show letter sessions only; every answer: `lensopt export {info.session_id} --format json`"
    if not records:
        return f"{head}: no comparison yet; {advice}"
    from lensopt.duel_refraction import DuelRefractionOptimizer, DuelTrial

    counts = ", ".join(f"{answer} {sum(r.answer == answer for r in records)}" for answer in DUEL_ANSWERS)
    history = [(DuelTrial(r.first_lens_d, r.second_lens_d, r.letter_logmar), r.answer) for r in records]
    sphere_d, cylinder_d = DuelRefractionOptimizer.from_settings(info.optimizer_settings, history).best_lens()
    return (f"{head}: {len(records)} comparisons ({counts}), last letters {records[-1].letter_logmar:+.2f} logMAR; "
            f"best lens S {sphere_d:+.2f} D  C {cylinder_d:+.2f} D; {advice}")
