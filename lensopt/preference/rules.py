"""The named preferential rules: how the members of a query, and its context, are chosen.

Plain preferential BO (companion paper §4.2 and supplement Table S1). ``x*`` is the argmax of the
posterior mean utility over the box, ``x**`` its argmax over the members of past duels; "TS" is
the argmax of one posterior utility draw (decoupled bases).

================  ==================================  =====================================================
rule              first member                        second member
================  ==================================  =====================================================
``muc``           x* (the champion)                   argmax_x V[Φ(g(x*, x))]  (Maximally Uncertain Challenge)
``kss``           TS                                  TS, an independent draw  (Kernel Self-Sparring, Sui 2017)
``dueling-ucb``   x*                                  argmax_x μ_g(x, x*) + β σ_g(x, x*), β = Φ⁻¹(0.95)  (Benavoli)
``duel-ts``       TS                                  argmax_x V[Φ(g(x_TS, x))]  (González 2017, as in Table S1)
``dueling-ts``    x*                                  TS  (Benavoli 2020)
``ei``            x**                                 argmax_x E[(f(x) − μ_f(x**))⁺]  (Brochu 2010)
``bivariate-ei``  x**                                 argmax_x E[(f(x) − f(x**))⁺], joint posterior  (Nielsen)
``eiig``          x*                                  argmax_x 0.1 log P(x ≻ x*) + I(c; g)  (Benavoli 2021)
``random``        uniform                             uniform
================  ==================================  =====================================================

Batches of ``m > 2`` members (companion paper §4.3): ``muc`` keeps the champion and chooses the
``m − 1`` challengers to maximize ``Σ_{i<j} V[Φ(g(x_i, x_j))]`` *greedily* — each challenger
maximizes its summed variance against the members already chosen, then one sweep of coordinate
ascent re-optimizes each challenger against all the others (kept only if the sum increases);
``kss`` takes the argmaxes of ``m`` independent draws; ``random`` draws ``m`` uniform members.

Contextual rules (seed paper §3.4, §4.2): the members are chosen as above at the reference context
``s₀``, then the context:

==============  ==========================  =============================================
rule            members at s₀               context
==============  ==========================  =============================================
``muc-ald``     MUC                         argmax_s BALD of the duel (summed over pairs)
``kss-ald``     KSS                         argmax_s BALD
``muc-random``  MUC                         uniform
``kss-random``  KSS                         uniform
``bald``        (s, x, x') jointly: argmax BALD
``random``      uniform                     uniform
==============  ==========================  =============================================

Every rule returns members no two of which are closer than ``DUPLICATE_TOLERANCE`` of the range
in every system column; a member that is (a duel of a point with itself carries no information:
two Thompson draws can peak at the same corner of the box) is replaced by a uniform random one.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np
from scipy.stats import norm

from lensopt.optimize import MaximizerSettings, maximize_acquisition, maximize_on_line, maximize_posterior_mean, uniform
from lensopt.preference import acquisition as acq
from lensopt.preference.settings import PreferenceSettings

DUELING_UCB_BETA = float(norm.ppf(0.95))
"""β of Dueling UCB: Benavoli et al. take the 95% upper credible bound of the utility."""

CONTEXT_STEP_GRID = 64
"""Grid of the one-dimensional context step (BALD over s), refined by a parabola."""

RECENT_MEMBERS = 8
"""Members of the most recent duels offered as extra candidates to every member search."""

DUPLICATE_TOLERANCE = 1e-3
"""Two members closer than this fraction of every system range count as the same point."""

BATCH_REFINEMENT_SWEEPS = 1
"""Coordinate-ascent sweeps over the challengers of a batch MUC after the greedy pass."""


@dataclass(frozen=True)
class DuelDecision:
    """What a rule may use: the fitted model, the settings, this trial's generator, ``s₀`` and the
    champion ``x*`` (a callable, so that rules which do not need it do not pay for it)."""

    model: Any  # a fitted lensopt.preference.PreferenceGP
    settings: PreferenceSettings
    rng: np.random.Generator
    reference_context: np.ndarray  # (n_context,)
    champion: Callable[[], np.ndarray]

    @property
    def system_bounds(self) -> np.ndarray:
        return np.array(self.settings.system_bounds, dtype=float)

    def maximizer(self) -> MaximizerSettings:
        return MaximizerSettings(n_candidates=self.settings.n_candidates, n_starts=self.settings.n_starts)


def training_members(model) -> np.ndarray:
    """Distinct system members of the training duels, in order of first appearance ``(p, d)``."""
    A, A2 = model.kernel.split(model.Z_train_)
    k = model.n_context
    stacked = np.stack([A[:, k:], A2[:, k:]], axis=1).reshape(-1, A.shape[1] - k)
    _, first = np.unique(stacked, axis=0, return_index=True)
    return stacked[np.sort(first)]


def _recent_members(decision: DuelDecision) -> np.ndarray:
    members = training_members(decision.model)
    return members[-2 * RECENT_MEMBERS :]


def argmax_member(decision: DuelDecision, acquisition, extra=None) -> np.ndarray:
    """The system point maximizing a member acquisition over the box (recent members as candidates)."""
    candidates = _recent_members(decision)
    if extra is not None:
        candidates = np.vstack([candidates, np.atleast_2d(extra)])
    point, _ = maximize_acquisition(
        acquisition, decision.system_bounds, decision.rng, settings=decision.maximizer(), extra_candidates=candidates
    )
    return point


class _UtilityPosteriorMean:
    """``μ_f(s, x)`` on full utility inputs ``[s, x]``, with its gradient, for
    :func:`lensopt.optimize.maximize_posterior_mean` (which pins the context)."""

    def __init__(self, model):
        self.model = model

    def __call__(self, X):
        return self.model.predict_utility(X)[0]

    def value_and_gradient(self, X):
        mean, _, dmean, _ = self.model.predict_utility_with_gradient(X)
        return mean, dmean


def posterior_mean_argmax(model, context, bounds, rng) -> np.ndarray:
    """``x* = argmax_x μ_f(s, x)`` over the box, the training members offered as candidates."""
    return maximize_posterior_mean(_UtilityPosteriorMean(model), context, bounds, rng, training_members(model))


def _thompson_argmax(decision: DuelDecision) -> np.ndarray:
    sample = decision.model.sample_utility(decision.rng, n_features=decision.settings.n_thompson_features)
    return argmax_member(decision, acq.SampledUtility(sample, decision.reference_context))


def _incumbent(decision: DuelDecision) -> np.ndarray:
    """``x**``: the past duel member with the highest posterior mean utility at ``s₀``."""
    members = training_members(decision.model)
    mean = acq.UtilityMean(decision.model, decision.reference_context)(members)
    return members[int(np.argmax(mean))]


# ---- members at the reference context ----------------------------------------------------------
def _muc(decision: DuelDecision, m: int) -> np.ndarray:
    s0, model = decision.reference_context, decision.model
    members = [decision.champion()]
    for _ in range(m - 1):
        members.append(argmax_member(decision, acq.ChallengeVariance(model, s0, members)))
    for _ in range(BATCH_REFINEMENT_SWEEPS if m > 2 else 0):
        for j in range(1, m):
            others = members[:j] + members[j + 1 :]
            objective = acq.ChallengeVariance(model, s0, others)
            candidate = argmax_member(decision, objective, extra=members[j])
            if objective(candidate[None])[0] > objective(members[j][None])[0]:
                members[j] = candidate
    return np.array(members)


def _kss(decision: DuelDecision, m: int) -> np.ndarray:
    return np.array([_thompson_argmax(decision) for _ in range(m)])


def _dueling_ucb(decision: DuelDecision, m: int) -> np.ndarray:
    champion = decision.champion()
    ucb = acq.ChampionUCB(decision.model, decision.reference_context, champion, DUELING_UCB_BETA)
    return np.array([champion, argmax_member(decision, ucb)])


def _duel_ts(decision: DuelDecision, m: int) -> np.ndarray:
    first = _thompson_argmax(decision)
    challenge = acq.ChallengeVariance(decision.model, decision.reference_context, first)
    return np.array([first, argmax_member(decision, challenge)])


def _dueling_ts(decision: DuelDecision, m: int) -> np.ndarray:
    champion = decision.champion()
    return np.array([champion, _thompson_argmax(decision)])


def _ei(decision: DuelDecision, m: int) -> np.ndarray:
    incumbent = _incumbent(decision)
    tau = acq.UtilityMean(decision.model, decision.reference_context)(incumbent[None])[0]
    ei = acq.UtilityExpectedImprovement(decision.model, decision.reference_context, tau)
    return np.array([incumbent, argmax_member(decision, ei)])


def _bivariate_ei(decision: DuelDecision, m: int) -> np.ndarray:
    incumbent = _incumbent(decision)
    ei = acq.BivariateExpectedImprovement(decision.model, decision.reference_context, incumbent)
    return np.array([incumbent, argmax_member(decision, ei)])


def _eiig(decision: DuelDecision, m: int) -> np.ndarray:
    champion = decision.champion()
    eiig = acq.ExpectedImprovementInformationGain(decision.model, decision.reference_context, champion)
    return np.array([champion, argmax_member(decision, eiig)])


def random_members(settings: PreferenceSettings, m: int, rng: np.random.Generator) -> np.ndarray:
    return uniform(settings.system_bounds, m, rng)


def _random(decision: DuelDecision, m: int) -> np.ndarray:
    return random_members(decision.settings, m, decision.rng)


# ---- contexts ----------------------------------------------------------------------------------
def _context_bald(decision: DuelDecision, members: np.ndarray) -> np.ndarray:
    objective = acq.ContextBALD(decision.model, members)
    bounds = decision.settings.context_bounds
    if len(bounds) == 1:
        point, _ = maximize_on_line(objective, bounds, 0, {}, n_points=CONTEXT_STEP_GRID)
    else:
        point, _ = maximize_acquisition(
            objective, bounds, decision.rng, settings=MaximizerSettings(n_candidates=CONTEXT_STEP_GRID, n_starts=2)
        )
    return point


def random_context(settings: PreferenceSettings, rng: np.random.Generator) -> np.ndarray:
    if not settings.context_bounds:
        return np.zeros(0)
    return uniform(settings.context_bounds, 1, rng)[0]


def _context_random(decision: DuelDecision, members: np.ndarray) -> np.ndarray:
    return random_context(decision.settings, decision.rng)


def _context_reference(decision: DuelDecision, members: np.ndarray) -> np.ndarray:
    return decision.reference_context.copy()


def _joint_bald(decision: DuelDecision, m: int):
    s = decision.settings
    box = list(s.context_bounds) + list(s.system_bounds) * 2
    point, _ = maximize_acquisition(acq.DuelBALD(decision.model), box, decision.rng, settings=decision.maximizer())
    k, d = s.n_context, s.n_system
    return point[:k], np.array([point[k : k + d], point[k + d :]])


def _sequential(member_step, context_step):
    def rule(decision: DuelDecision, m: int):
        members = member_step(decision, m)
        return context_step(decision, members), members

    return rule


def _random_query(decision: DuelDecision, m: int):
    members = _random(decision, m)
    return random_context(decision.settings, decision.rng), members


RULE_FUNCTIONS = {
    # plain preferential BO: the context (if any) is s₀
    "muc": _sequential(_muc, _context_reference),
    "kss": _sequential(_kss, _context_reference),
    "dueling-ucb": _sequential(_dueling_ucb, _context_reference),
    "duel-ts": _sequential(_duel_ts, _context_reference),
    "dueling-ts": _sequential(_dueling_ts, _context_reference),
    "ei": _sequential(_ei, _context_reference),
    "bivariate-ei": _sequential(_bivariate_ei, _context_reference),
    "eiig": _sequential(_eiig, _context_reference),
    "random": _random_query,
    # contextual preferential BO
    "muc-ald": _sequential(_muc, _context_bald),
    "kss-ald": _sequential(_kss, _context_bald),
    "muc-random": _sequential(_muc, _context_random),
    "kss-random": _sequential(_kss, _context_random),
    "bald": _joint_bald,
}


def distinct_members(members: np.ndarray, settings: PreferenceSettings, rng: np.random.Generator) -> np.ndarray:
    """Replace any member within ``DUPLICATE_TOLERANCE`` of an earlier one by a uniform random point."""
    bounds = np.array(settings.system_bounds, dtype=float)
    width = bounds[:, 1] - bounds[:, 0]
    members = np.array(members, dtype=float)
    for j in range(1, members.shape[0]):
        while np.any(np.all(np.abs(members[:j] - members[j]) < DUPLICATE_TOLERANCE * width, axis=1)):
            members[j] = uniform(bounds, 1, rng)[0]
    return members


def choose(decision: DuelDecision) -> tuple[np.ndarray, np.ndarray]:
    """``(context (n_context,), members (batch_size, n_system))`` under ``decision.settings.rule``."""
    m = decision.settings.batch_size
    context, members = RULE_FUNCTIONS[decision.settings.rule](decision, m)
    return np.asarray(context, dtype=float), distinct_members(members, decision.settings, decision.rng)
