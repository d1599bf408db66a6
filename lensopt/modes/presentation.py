"""The order in which a comparison trial shows its lenses: drawn from ``(seed, trial)``, so that the
PsychoPy loops, a resume's replay of a stored session and the dashboard's agree
(:mod:`lensopt.experiment.line_loop`, :mod:`lensopt.modes.as_ran`)."""

from __future__ import annotations

import dataclasses

import numpy as np

from lensopt.refraction.duels import DuelTrial
from lensopt.refraction.prescription_duels import PrescriptionDuelTrial
from lensopt.refraction.prescription_rankings import PrescriptionRankingTrial
from lensopt.refraction.rankings import RankingTrial

#: The fields holding a comparison's lenses, by its trial type: duels (two fields), rankings (one tuple).
_LENS_FIELDS: dict[type, tuple[str, ...]] = {
    DuelTrial: ("first_lens_d", "second_lens_d"),
    PrescriptionDuelTrial: ("first_lens", "second_lens"),
    RankingTrial: ("lenses_d",),
    PrescriptionRankingTrial: ("lenses",),
}


def presentation_order(seed: int, index: int, n_lenses: int) -> tuple[int, ...]:
    """The order in which trial ``index`` of a session of ``seed`` shows ``n_lenses`` lenses:
    a permutation drawn from ``(seed, index)``."""
    rng = np.random.default_rng(np.random.SeedSequence([seed, index, 5]))
    return tuple(int(i) for i in rng.permutation(n_lenses))


def presented(trial, seed: int, index: int, order: str = "counterbalanced"):
    """A duel's or ranking's ``trial`` (as the optimizer asked it) with its lenses in the order trial
    ``index`` shows them (:func:`presentation_order`): counterbalanced, so that the rule's best lens
    so far (its champion, asked first) is lens 1 no more often than lens 2 (or 3) and a patient who
    favours a position — the lens seen last, say — does not pull the result one way. The loop stores
    and tells the optimizer the trial as shown. ``order`` ``"as-asked"`` (the protocol's
    ``[duel] order`` / ``[ranking] order``; sessions stored before it): the trial unchanged."""
    if order == "as-asked":
        return trial
    fields = _LENS_FIELDS[type(trial)]
    if len(fields) == 2:  # a duel: two fields
        shown = presentation_order(seed, index, 2)
        return dataclasses.replace(trial, **{fields[k]: getattr(trial, fields[i]) for k, i in enumerate(shown)})
    lenses = getattr(trial, fields[0])
    shown = presentation_order(seed, index, len(lenses))
    return dataclasses.replace(trial, **{fields[0]: tuple(lenses[i] for i in shown)})
