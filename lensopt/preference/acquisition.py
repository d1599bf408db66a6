"""Acquisition functions of one duel member, for the preferential rules.

Each acquisition is a function of the free member ``x`` ``(n_points, n_system)`` at a fixed context
``s`` (the other members, if any, are fixed too), with ``value_and_gradient`` so that
:func:`lensopt.optimize.maximize_acquisition` can refine it with L-BFGS-B. Duel values are
``g(s, x, x') = f(s, x) − f(s, x')``; ``V[Φ(g)]`` is the epistemic variance (companion paper eq. 9)
and BALD the mutual information in bits (METHOD.md §3).
"""

from __future__ import annotations

import numpy as np
from scipy.special import log_ndtr, ndtr

from lensopt.acquisition.base import VARIANCE_FLOOR, chain
from lensopt.gp import uncertainty
from lensopt.gp.likelihood import inverse_mills
from lensopt.preference.kernel import duel_inputs

_LN2 = np.log(2.0)
_INV_SQRT_2PI = 1.0 / np.sqrt(2.0 * np.pi)


class _MemberAcquisition:
    """Common plumbing: the model, the fixed context ``(k,)`` and the utility inputs ``[s, x]``."""

    def __init__(self, model, context):
        self.model = model
        self.context = np.asarray(context, dtype=float).reshape(-1)
        self.k = self.context.size

    def _utility(self, X):
        X = np.atleast_2d(np.asarray(X, dtype=float))
        return np.hstack([np.broadcast_to(self.context, (X.shape[0], self.k)), X])

    def __call__(self, X):
        return self.value_and_gradient(X)[0]

    def value_and_gradient(self, X):
        raise NotImplementedError


def _expected_improvement(mean, var):
    """``E[max(u, 0)]`` for ``u ~ N(mean, var)``, with ``(∂/∂mean, ∂/∂var)``."""
    sd = np.sqrt(np.maximum(var, VARIANCE_FLOOR))
    z = mean / sd
    pdf, cdf = _INV_SQRT_2PI * np.exp(-0.5 * z * z), ndtr(z)
    return sd * pdf + mean * cdf, cdf, pdf / (2.0 * sd)


class UtilityMean(_MemberAcquisition):
    """Posterior mean utility ``μ_f(s, x)``: exploitation (the champion, the reported optimum)."""

    def __call__(self, X):
        return self.model.predict_utility(self._utility(X))[0]

    def value_and_gradient(self, X):
        mean, _, dmean, _ = self.model.predict_utility_with_gradient(self._utility(X))
        return mean, dmean[:, self.k :]


class UtilityExpectedImprovement(_MemberAcquisition):
    """``E[(f(s, x) − τ)⁺]`` over the marginal of ``f(s, x)`` (EI of Brochu et al. 2010, with the
    incumbent value ``τ = μ_f(x**)`` fixed)."""

    def __init__(self, model, context, incumbent: float):
        super().__init__(model, context)
        self.incumbent = float(incumbent)

    def value_and_gradient(self, X):
        mean, var, dmean, dvar = self.model.predict_utility_with_gradient(self._utility(X))
        value, d_mean, d_var = _expected_improvement(mean - self.incumbent, var)
        return value, chain(d_mean, d_var, dmean, dvar)[:, self.k :]


class _DuelAcquisition(_MemberAcquisition):
    """An acquisition of duels ``[s, x_i, x]`` or ``[s, x, x_i]`` against fixed members ``x_i``."""

    def __init__(self, model, context, opponents, free_second: bool):
        super().__init__(model, context)
        self.opponents = np.atleast_2d(np.asarray(opponents, dtype=float))
        self.d = self.opponents.shape[1]
        self.free_second = free_second

    def _duel_predictions(self, X):
        """Per opponent: ``(mean, var, dmean_dx, dvar_dx)`` of ``g`` with ``x`` the free member."""
        X = np.atleast_2d(np.asarray(X, dtype=float))
        free = slice(self.k + self.d, None) if self.free_second else slice(self.k, self.k + self.d)
        for opponent in self.opponents:
            Z = duel_inputs(self.context, opponent, X) if self.free_second else duel_inputs(self.context, X, opponent)
            mean, var, dmean, dvar = self.model.predict_duel_with_gradient(Z)
            yield mean, var, dmean[:, free], dvar[:, free]


class ChallengeVariance(_DuelAcquisition):
    """``Σ_i V[Φ(g(s, x_i, x))]``: the Maximally Uncertain Challenge of the fixed members ``x_i``
    by ``x`` (companion paper eq. 16; summed over members for batches, eq. 20)."""

    def __init__(self, model, context, opponents):
        super().__init__(model, context, opponents, free_second=True)

    def value_and_gradient(self, X):
        value: float | np.ndarray = 0.0  # sums of arrays over the members (pairs)
        grad: float | np.ndarray = 0.0
        for mean, var, dmean, dvar in self._duel_predictions(X):
            value = value + uncertainty.epistemic_variance(mean, var)
            grad = grad + chain(*uncertainty.epistemic_variance_grad(mean, var), dmean, dvar)
        return value, grad


class ChampionUCB(_DuelAcquisition):
    """``μ_g + β σ_g`` of ``g(s, x, x*) = f(s, x) − f(s, x*)``: the upper credible bound of the
    utility of ``x`` measured from the champion ``x*`` (second member of Dueling UCB).

    Duels identify the utility only up to a constant, so its marginal ``σ_f`` is nearly the same
    everywhere and ``argmax μ_f + β σ_f`` lands next to the champion (near-identical duels). From
    the champion, ``σ_g`` is zero at ``x*`` and grows with what the duels have not settled; the
    mean is ``μ_f(x) − μ_f(x*)``, so this is ``μ_f + β σ_f`` with the utility anchored at ``x*``.
    """

    def __init__(self, model, context, champion, beta: float):
        super().__init__(model, context, champion, free_second=False)
        self.beta = float(beta)

    def value_and_gradient(self, X):
        ((mean, var, dmean, dvar),) = self._duel_predictions(X)
        sd = np.sqrt(np.maximum(var, VARIANCE_FLOOR))
        return mean + self.beta * sd, dmean + (self.beta / (2.0 * sd))[:, None] * dvar


class BivariateExpectedImprovement(_DuelAcquisition):
    """``E[(f(s, x) − f(s, x**))⁺] = E[g(s, x, x**)⁺]`` over the joint posterior (Nielsen et al. 2015)."""

    def __init__(self, model, context, incumbent_member):
        super().__init__(model, context, incumbent_member, free_second=False)

    def value_and_gradient(self, X):
        ((mean, var, dmean, dvar),) = self._duel_predictions(X)
        value, d_mean, d_var = _expected_improvement(mean, var)
        return value, chain(d_mean, d_var, dmean, dvar)


EIIG_WEIGHT = 0.1
"""``k`` of EIIG (Benavoli et al. 2021): weight of the log-probability of beating the champion."""


class ExpectedImprovementInformationGain(_DuelAcquisition):
    """EIIG (Benavoli et al. 2021): ``k log P(x ≻ x*) + I(c; g | x, x*)`` (information in nats).

    The companion paper's Table S1 prints the information term with a minus sign; Benavoli's
    acquisition rewards both the probability of improving on ``x*`` and the information gained.
    """

    def __init__(self, model, context, champion, weight: float = EIIG_WEIGHT):
        super().__init__(model, context, champion, free_second=False)
        self.weight = float(weight)

    def value_and_gradient(self, X):
        ((mean, var, dmean, dvar),) = self._duel_predictions(X)
        scale = 1.0 / np.sqrt(1.0 + var)
        h = mean * scale
        r = inverse_mills(h)  # d log Φ(h) / dh
        d_mean = self.weight * r * scale + _LN2 * uncertainty.bald_bits_grad(mean, var)[0]
        d_var = self.weight * r * (-0.5 * h / (1.0 + var)) + _LN2 * uncertainty.bald_bits_grad(mean, var)[1]
        value = self.weight * log_ndtr(h) + _LN2 * uncertainty.bald_bits(mean, var)
        return value, chain(d_mean, d_var, dmean, dvar)


class SampledUtility(_MemberAcquisition):
    """One posterior utility draw ``f̃(s, x)`` (Thompson sampling)."""

    def __init__(self, sample, context):
        super().__init__(None, context)
        self.sample = sample

    def __call__(self, X):
        return self.sample(self._utility(X))

    def value_and_gradient(self, X):
        U = self._utility(X)
        return self.sample(U), self.sample.gradient(U)[:, self.k :]


class DuelBALD:
    """BALD of full duel inputs ``[s, x, x']`` (the joint control of the contextual paper)."""

    def __init__(self, model):
        self.model = model

    def __call__(self, Z):
        return self.model.duel_bald(Z)

    def value_and_gradient(self, Z):
        mean, var, dmean, dvar = self.model.predict_duel_with_gradient(Z)
        return uncertainty.bald_bits(mean, var), chain(*uncertainty.bald_bits_grad(mean, var), dmean, dvar)


class ContextBALD:
    """``Σ_{i<j} I(c_ij; g | s, x_i, x_j)`` as a function of the context ``S`` ``(n, k)``, for fixed
    members: the s-step of MUC-ALD and KSS-ALD (seed paper §3.4). For a batch, the pairs' outcomes
    are treated as independent, so their informations add."""

    def __init__(self, model, members):
        self.model = model
        members = np.asarray(members, dtype=float)
        self.pairs = [(members[i], members[j]) for i in range(len(members)) for j in range(i + 1, len(members))]

    def __call__(self, S):
        S = np.atleast_2d(np.asarray(S, dtype=float))
        return sum(self.model.duel_bald(duel_inputs(S, a, b)) for a, b in self.pairs)

    def value_and_gradient(self, S):
        S = np.atleast_2d(np.asarray(S, dtype=float))
        k = S.shape[1]
        value: float | np.ndarray = 0.0  # sums of arrays over the members (pairs)
        grad: float | np.ndarray = 0.0
        for a, b in self.pairs:
            mean, var, dmean, dvar = self.model.predict_duel_with_gradient(duel_inputs(S, a, b))
            value = value + uncertainty.bald_bits(mean, var)
            grad = grad + chain(*uncertainty.bald_bits_grad(mean, var), dmean[:, :k], dvar[:, :k])
        return value, grad
