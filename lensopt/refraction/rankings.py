"""Ranking refraction: "put these three lenses in order, clearest first", by ask/tell.

:class:`RankingRefractionOptimizer` speaks lenses (D) and letter sizes (logMAR) over
:class:`lensopt.ranking.RankingOptimizer` (Nguyen et al. 2021: Plackett–Luce rankings under Gumbel
noise on a GP of the utility, MPES for the lenses, then the letter size by mutual information).
The utility kernel is the duel refraction kernel on ``[letter_logmar, sphere_d, cylinder_d]``, on
the logit scale of the Gumbel model (:data:`lensopt.refraction.duels.MODEL_LOGIT_SCALE`).
"""

from __future__ import annotations

import itertools
import math
from dataclasses import dataclass

import numpy as np

from lensopt.asktell import SETTINGS_AND_HISTORY, check_state_format
from lensopt.binary.settings import check_seed
from lensopt.ranking import RankingOptimizer, RankingQuery
from lensopt.ranking.data import parse_outcome
from lensopt.ranking.settings import MAX_SET_SIZE, check_integer
from lensopt.refraction.duels import (
    MODEL_LOGIT_SCALE,
    UTILITY_VARIANCE,
    UtilityRefraction,
    duel_refraction_kernel,
    prior_utility,
    utility_inputs,
)
from lensopt.refraction.letters import CYLINDER_BOUNDS_D, LETTER_BOUNDS_LOGMAR, SPHERE_BOUNDS_D
from lensopt.refraction.phoropter import check_lens_step, check_room_for_lenses, distinct_phoropter_lenses
from lensopt.threads import single_threaded

#: Rules: MPES then the letter size by mutual information, or uniform random sets and sizes.
RANKING_RULES = {"mpes-ald": "mpes", "random": "random"}

#: Format tag of saved ranking refraction states.
STATE_FORMAT = "lensopt.ranking-refraction-state/1"

#: The most lenses a ranking decided ahead can have (:class:`RankingAnswers`): the lookahead worker
#: decides for every order of the lenses in turn, 3! = 6 orders in about a second with the full
#: prescription's link (a patient ranking three lenses through a phoropter takes several); 4! = 24
#: would keep an answer waiting for seconds, longer than one decision in-process.
LOOKAHEAD_MAX_LENSES = 3


class RankingAnswers:
    """The answers a ranking of ``n_lenses`` lenses can get, for a PsychoPy handler's lookahead
    (:mod:`lensopt.psychopy.lookahead`): ``SPECULATIVE_ANSWERS``, every order of the lens indices
    (none above :data:`LOOKAHEAD_MAX_LENSES` lenses: the handler then decides in its own process),
    and ``canonical_answer``, an answer of the first ``n_lenses − 1`` completed by the lens left
    (the same ranking: the last place of a Plackett–Luce ranking has probability one), which is
    also what ``tell`` gives the model, so that both spellings decide the same next trial to the bit."""

    n_lenses: int

    @property
    def SPECULATIVE_ANSWERS(self) -> tuple[tuple[int, ...], ...]:
        if self.n_lenses > LOOKAHEAD_MAX_LENSES:
            return ()
        return tuple(itertools.permutations(range(self.n_lenses)))

    def checked_order(self, n_trial_lenses: int, order) -> tuple[int, ...]:
        """``order`` as ``tell`` records it, checked: the trial has this search's ``n_lenses``
        lenses, and ``order`` lists at least ``n_lenses − 1`` distinct lens indices (integers,
        clearest first). A ValueError naming what is wrong otherwise — before anything is told."""
        if n_trial_lenses != self.n_lenses:
            raise ValueError(f"a ranking of this search has {self.n_lenses} lenses; got {n_trial_lenses}")
        given = parse_outcome(order, self.n_lenses, False)
        assert isinstance(given, tuple)  # no ties in a ranking refraction
        if len(given) < self.n_lenses - 1:
            raise ValueError(
                f"a ranking orders at least {self.n_lenses - 1} of its {self.n_lenses} lenses; got {given}"
            )
        return given

    def canonical_answer(self, order) -> tuple[int, ...]:
        given = parse_outcome(order, self.n_lenses, False)
        assert isinstance(given, tuple)  # no ties in a ranking refraction
        if len(given) != self.n_lenses - 1:
            return given
        return given + tuple(i for i in range(self.n_lenses) if i not in given)


@dataclass(frozen=True)
class RankingTrial:
    """One trial: letters of ``letter_logmar`` seen through each of ``lenses_d`` ``((S, C), ...)``."""

    lenses_d: tuple[tuple[float, float], ...]
    letter_logmar: float

    def __post_init__(self):
        lenses = tuple((float(S), float(C)) for S, C in self.lenses_d)
        if len(lenses) < 2 or not all(math.isfinite(v) for lens in lenses for v in lens):
            raise ValueError(f"RankingTrial.lenses_d must be two or more finite (S, C) pairs, got {self.lenses_d!r}")
        object.__setattr__(self, "lenses_d", lenses)
        object.__setattr__(self, "letter_logmar", float(self.letter_logmar))


class RankingRefractionOptimizer(RankingAnswers, UtilityRefraction):
    """ask/tell ranking refraction: ``ask() -> RankingTrial`` of ``n_lenses`` lenses,
    ``tell(trial, order)`` with ``order`` the lens indices clearest first (all of them, or the
    first ``n_lenses − 1``), ``best()`` the lens (:class:`lensopt.asktell.AskTellOptimizer`).

    ``lens_step_d`` rounds the proposed lenses to a phoropter step, keeping them distinct
    (:func:`lensopt.refraction.phoropter.distinct_phoropter_lenses`). ``settings_dict()`` and
    ``from_settings(settings, history)`` rebuild the optimizer of a stored session, ``to_state()``
    and ``from_state(state)`` from one JSON object."""

    def __init__(
        self,
        rule="mpes-ald",
        seed=0,
        *,
        n_lenses=3,
        sphere_bounds_d=SPHERE_BOUNDS_D,
        cylinder_bounds_d=CYLINDER_BOUNDS_D,
        letter_bounds_logmar=LETTER_BOUNDS_LOGMAR,
        n_initial=5,
        lens_step_d=None,
    ):
        if rule not in RANKING_RULES:
            raise ValueError(f"unknown ranking rule {rule!r}; choose from: {', '.join(RANKING_RULES)}")
        seed = check_seed(seed)
        n_lenses = check_integer("n_lenses", n_lenses, 2, MAX_SET_SIZE)
        self.rule, self.seed, self.n_lenses = rule, seed, n_lenses
        self.lens_step_d = check_lens_step(lens_step_d)
        check_room_for_lenses(
            n_lenses, self.lens_step_d, (tuple(sphere_bounds_d), tuple(cylinder_bounds_d)), f"a ranking of {n_lenses}"
        )
        self._system_bounds = (tuple(sphere_bounds_d), tuple(cylinder_bounds_d))
        self._settings = {
            "rule": rule,
            "seed": seed,
            "n_lenses": n_lenses,
            "sphere_bounds_d": list(sphere_bounds_d),
            "cylinder_bounds_d": list(cylinder_bounds_d),
            "letter_bounds_logmar": list(letter_bounds_logmar),
            "n_initial": n_initial,
            "lens_step_d": self.lens_step_d,
        }
        self._core = RankingOptimizer(
            self._system_bounds,
            (tuple(letter_bounds_logmar),),
            set_size=n_lenses,
            allow_ties=False,
            top_k=n_lenses - 1,
            seed=seed,
            n_initial=n_initial,
            rule=RANKING_RULES[rule],
            kernel=duel_refraction_kernel(variance=UTILITY_VARIANCE * MODEL_LOGIT_SCALE**2),
        )
        self._history: list[tuple[RankingTrial, tuple[int, ...]]] = []
        self.last_decision_ms = math.nan

    def to_state(self) -> dict:
        """A JSON-able state from which :meth:`from_state` rebuilds an identical optimizer."""
        return {
            "format": STATE_FORMAT,
            "settings": self.settings_dict(),
            "history": [
                {
                    "letter_logmar": t.letter_logmar,
                    "lenses_d": [list(lens) for lens in t.lenses_d],
                    "order": list(order),
                }
                for t, order in self._history
            ],
        }

    @classmethod
    @single_threaded
    def from_state(cls, state: dict) -> RankingRefractionOptimizer:
        check_state_format(state, STATE_FORMAT, "ranking refraction", SETTINGS_AND_HISTORY)
        try:
            history = [
                (RankingTrial(tuple(map(tuple, row["lenses_d"])), row["letter_logmar"]), tuple(row["order"]))
                for row in state["history"]
            ]
        except (TypeError, KeyError) as error:
            raise ValueError(
                f"a ranking refraction history row needs letter_logmar, lenses_d and order ({error})"
            ) from None
        return cls.from_settings(state["settings"], history)

    @single_threaded
    def ask(self) -> RankingTrial:
        query = self._core.ask()
        self.last_decision_ms = self._core.last_decision_ms
        lenses = distinct_phoropter_lenses(np.asarray(query.members, float), self.lens_step_d, self._system_bounds)
        return RankingTrial(lenses, float(query.context[0]))

    @single_threaded
    def tell(self, trial: RankingTrial, order) -> None:
        if not isinstance(trial, RankingTrial):
            raise ValueError(f"trial must be a RankingTrial; got {type(trial).__name__}")
        order = self.checked_order(len(trial.lenses_d), order)
        self._check_lenses_in_bounds(trial.lenses_d, trial.letter_logmar)
        self._core.tell(
            RankingQuery(context=np.array([trial.letter_logmar]), members=np.array(trial.lenses_d, dtype=float)),
            self.canonical_answer(order),
        )
        self._history.append((trial, order))

    @single_threaded
    def predict_utility(self, letter_logmar, lenses_d, full_cov: bool = False):
        """Posterior mean ``(n,)`` and variance ``(n,)`` (or covariance ``(n, n)``) of the utility of
        ``lenses_d`` ``(n, 2)`` (columns ``sphere_d, cylinder_d``) at letters of ``letter_logmar``.

        The ranking model's own prediction (``RankingGP.predict``, logit scale of the Gumbel noise),
        or the prior before any ranking. As for duels, only differences between lenses are meaningful.
        """
        X = utility_inputs(letter_logmar, lenses_d)
        model = self._core.model
        if model is None:
            return prior_utility(self._core.kernel, X, full_cov)
        return model.predict(X, full_cov=full_cov)
