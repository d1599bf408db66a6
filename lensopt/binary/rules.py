"""The named sequential rules: how a trial's system parameters and context are chosen.

Seed paper §3.3: first choose the system parameters ``x`` by Bayesian optimization at a
reference context ``s₀``, then the context ``s`` by Bayesian active learning (BALD) at that ``x``.
The controls of the paper replace one step by a random choice, or choose ``(s, x)`` jointly.

=============  =============================================  =======================
rule           x-step                                         s-step
=============  =============================================  =======================
``ucb-ald``    argmax UCB_Φ(s₀, x)                            argmax BALD(s, x)
``ts-ald``     argmax of one posterior draw f̃(s₀, x)          argmax BALD(s, x)
``cbkg``       (s, x) jointly: argmax contextual binary KG
``ucb-random`` argmax UCB_Φ(s₀, x)                            uniform
``bald``       (s, x) jointly: argmax BALD
``ts-random``  argmax f̃(s₀, x)                                uniform
``random``     uniform                                        uniform
``ucbf-ald``   argmax latent UCB μ + σ at s₀                  argmax BALD(s, x)
``ei-ald``     argmax binary EI at s₀                         argmax BALD(s, x)
=============  =============================================  =======================

With the psychophysics kernel a posterior draw is ``w̃ s + g̃(x)``: its argmax over ``x`` is the
same at every ``s``, so the draw rules may pin the cheaper threshold at the last tested lens
instead of the adaptive ``s₀`` (:func:`x_step_free_of_context`; the letter model's default,
``draws_at_last_threshold``). Every rule returns one full input ``[s..., x...]``. The first
``n_initial`` trials of every rule are uniform random. No stalls: when BALD's best letter size at
the chosen ``x`` carries less than ``settings.min_information_bits`` (the answer would be nearly
certain), the sequential rules take the jointly most informative ``(s, x)`` instead (0 = never,
the papers' rules).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from lensopt.acquisition import (
    BALD,
    BinaryExpectedImprovement,
    ContextualKnowledgeGradient,
    LatentUCB,
    ProbitUCB,
    ThompsonSample,
)
from lensopt.binary.settings import OptimizerSettings
from lensopt.gp import uncertainty
from lensopt.optimize import (
    MaximizerSettings,
    maximize_acquisition,
    maximize_on_line,
    scrambled_halton,
    uniform,
)

#: Grid of the one-dimensional s-step (BALD over the letter size), refined by a parabola.
CONTEXT_STEP_GRID = 64
#: Most recent training inputs offered as extra candidates to the x-step (recent trials are
#: where the search currently is; all of them would cost a prediction each).
RECENT_CANDIDATES = 8
#: Candidates (s, x) at which cBKG is evaluated, and inner points of its maximum.
KG_OUTER_CANDIDATES = 64
KG_INNER_POINTS = 128


@dataclass(frozen=True)
class Decision:
    """What a rule may use to choose the next input."""

    model: Any  # a fitted lensopt.gp.GPClassifier
    settings: OptimizerSettings
    rng: np.random.Generator
    reference_context: np.ndarray  # (n_context,): the s₀ the x-step pins

    @property
    def context_dims(self) -> range:
        return range(self.settings.n_context)

    @property
    def system_dims(self) -> range:
        k = self.settings.n_context
        return range(k, k + self.settings.n_system)

    @property
    def objective(self):
        """The model the x-step maximizes over (:func:`objective_model`)."""
        return objective_model(self.model, self.settings)

    def maximizer(self, n_candidates=None) -> MaximizerSettings:
        return MaximizerSettings(
            n_candidates=n_candidates or self.settings.n_candidates,
            n_starts=self.settings.n_starts,
            tolerance=self.settings.search_tolerance,
        )


class TiltedObjective:
    """The model as the x-step sees it when the settings prefer some system points among equals
    (``objective_tilt``): the latent ``f(z) + t · z`` (``t`` zero on the context columns) in its full
    and its mean-only predictions, its variance unchanged; every other attribute is the model's."""

    def __init__(self, model, tilt: np.ndarray):
        self.model = model
        self.objective_tilt = np.asarray(tilt, dtype=float)

    def __getattr__(self, name):
        return getattr(self.model, name)

    def predict_latent(self, X, full_cov: bool = False):
        mean, cov = self.model.predict_latent(X, full_cov=full_cov)
        return mean + np.asarray(X, dtype=float) @ self.objective_tilt, cov

    def predict_latent_with_gradient(self, X):
        mean, var, dmean, dvar = self.model.predict_latent_with_gradient(X)
        return mean + np.asarray(X, dtype=float) @ self.objective_tilt, var, dmean + self.objective_tilt, dvar

    def predict_latent_mean(self, X):
        return self.model.predict_latent_mean(X) + np.asarray(X, dtype=float) @ self.objective_tilt

    def predict_latent_mean_with_gradient(self, X):
        mean, dmean = self.model.predict_latent_mean_with_gradient(X)
        return mean + np.asarray(X, dtype=float) @ self.objective_tilt, dmean + self.objective_tilt


def objective_model(model, settings: OptimizerSettings):
    """``model``, tilted by ``settings.objective_tilt`` if set (:class:`TiltedObjective`)."""
    if settings.objective_tilt is None:
        return model
    return TiltedObjective(model, np.concatenate([np.zeros(settings.n_context), settings.objective_tilt]))


def random_point(settings: OptimizerSettings, rng: np.random.Generator) -> np.ndarray:
    return uniform(settings.bounds, 1, rng)[0]


def _training_points(decision: Decision, last: int | None = None) -> np.ndarray:
    """Training inputs (the ``last`` ones) moved to the reference context."""
    X = np.array(decision.model.X_train_ if last is None else decision.model.X_train_[-last:], dtype=float)
    X[:, list(decision.context_dims)] = decision.reference_context
    return X


def _x_step(decision: Decision, acquisition) -> np.ndarray:
    fixed = {d: float(v) for d, v in zip(decision.context_dims, decision.reference_context)}
    point, _ = maximize_acquisition(
        acquisition,
        decision.settings.bounds,
        decision.rng,
        fixed_features=fixed,
        settings=decision.maximizer(),
        extra_candidates=_training_points(decision, last=RECENT_CANDIDATES),
    )
    return point[list(decision.system_dims)]


def _s_step_bald(decision: Decision, system: np.ndarray) -> tuple[np.ndarray, float]:
    """The most informative context at ``system``, and its information (bits)."""
    fixed = {d: float(v) for d, v in zip(decision.system_dims, system)}
    if decision.settings.n_context == 1:
        point, value = maximize_on_line(
            BALD(decision.model), decision.settings.bounds, 0, fixed, n_points=CONTEXT_STEP_GRID
        )
    else:
        point, value = maximize_acquisition(
            BALD(decision.model),
            decision.settings.bounds,
            decision.rng,
            fixed_features=fixed,
            settings=MaximizerSettings(
                n_candidates=CONTEXT_STEP_GRID, n_starts=2, tolerance=decision.settings.search_tolerance
            ),
        )
    return point[list(decision.context_dims)], float(value)


def _s_step_random(decision: Decision, system: np.ndarray) -> tuple[np.ndarray, float]:
    return uniform(decision.settings.context_bounds, 1, decision.rng)[0], np.inf


def _ucb(decision):
    return ProbitUCB(decision.objective, beta=decision.settings.beta)


def _thompson(decision):
    s = decision.settings
    return ThompsonSample(decision.objective, decision.rng, n_features=s.n_thompson_features, scale=s.thompson_scale)


def _latent_ucb(decision):
    return LatentUCB(decision.objective)


def _expected_improvement(decision):
    mu, var = decision.model.predict_latent(_training_points(decision))
    incumbent = float(np.max(uncertainty.probit_mean(mu, var)))
    return BinaryExpectedImprovement(decision.model, incumbent)


def _sequential(x_acquisition, s_step):
    def rule(decision: Decision) -> np.ndarray:
        system = _x_step(decision, x_acquisition(decision))
        context, information_bits = s_step(decision, system)
        if information_bits < decision.settings.min_information_bits:
            # No letter size is informative at this lens: every answer there is (nearly) certain
            # and would teach nothing. Rather than repeat it, take the most informative trial
            # anywhere (joint BALD over lens and letter size).
            return _joint_bald(decision)
        return np.concatenate([context, system])

    return rule


def _joint_bald(decision: Decision) -> np.ndarray:
    point, _ = maximize_acquisition(
        BALD(decision.model), decision.settings.bounds, decision.rng, settings=decision.maximizer()
    )
    return point


def _knowledge_gradient(decision: Decision) -> np.ndarray:
    settings = decision.settings
    inner = scrambled_halton(settings.bounds, KG_INNER_POINTS, decision.rng)
    inner = np.vstack([inner, _training_points(decision)])
    inner[:, list(decision.context_dims)] = decision.reference_context
    acquisition = ContextualKnowledgeGradient(decision.model, inner, decision.reference_context)
    point, _ = maximize_acquisition(
        acquisition,
        settings.bounds,
        decision.rng,
        settings=MaximizerSettings(n_candidates=KG_OUTER_CANDIDATES, n_starts=0),
    )
    return point


def _random(decision: Decision) -> np.ndarray:
    return random_point(decision.settings, decision.rng)


RULE_FUNCTIONS = {
    "ucb-ald": _sequential(_ucb, _s_step_bald),
    "ts-ald": _sequential(_thompson, _s_step_bald),
    "cbkg": _knowledge_gradient,
    "ucb-random": _sequential(_ucb, _s_step_random),
    "bald": _joint_bald,
    "ts-random": _sequential(_thompson, _s_step_random),
    "random": _random,
    "ucbf-ald": _sequential(_latent_ucb, _s_step_bald),
    "ei-ald": _sequential(_expected_improvement, _s_step_bald),
}


#: Rules whose x-step maximizes one posterior draw ``f̃(s₀, x)``.
DRAW_RULES = ("ts-ald", "ts-random")


def x_step_free_of_context(settings: OptimizerSettings) -> bool:
    """Whether the x-step's lens is the same at every reference context ``s₀``: a posterior draw of
    the psychophysics kernel ``θ s s' + k(x, x')`` is ``w̃ s + g̃(x)`` (its prior features and its
    update through the training inputs alike), so its argmax over ``x`` does not depend on ``s``
    (UCB_Φ's does: ``Φ`` bends the sum)."""
    return settings.rule in DRAW_RULES and settings.kernel.structure == "psychophysics"


def choose(decision: Decision) -> np.ndarray:
    """The next full input ``[s..., x...]`` under ``decision.settings.rule``."""
    return RULE_FUNCTIONS[decision.settings.rule](decision)
