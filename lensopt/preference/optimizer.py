"""ask/tell preferential Bayesian optimization: duels (or batches) in, preferences out.

Like :class:`lensopt.binary.optimizer.ContextualOptimizer`, a :class:`PreferenceOptimizer` is rebuilt
exactly from its settings, kernel and history: the randomness of the query after ``t`` observed
duels comes from ``numpy.random.default_rng([seed, t])`` only, so the same settings and history
propose the same next query, and :meth:`PreferenceOptimizer.to_state` is plain JSON.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from lensopt.asktell import SETTINGS_AND_HISTORY, ArrayQuery, check_state_format
from lensopt.binary.settings import FixedSettings
from lensopt.preference import rules
from lensopt.preference.kernel import duel_inputs
from lensopt.preference.model import PreferenceGP
from lensopt.preference.settings import PreferenceSettings, kernel_to_dict, resolve_kernel
from lensopt.threads import single_threaded

STATE_FORMAT = "lensopt.preference-state/1"
"""Format tag of saved preference optimizer states."""

UNMODELLED_STREAM = 0x7E
"""Spawn word of the query randomness after answers the model does not use."""

BOUNDS_TOLERANCE = 1e-9
"""Tolerance when checking that a told member or context lies inside the bounds."""


@dataclass(frozen=True, eq=False)
class DuelQuery(ArrayQuery):
    """One query: a ``context`` ``(n_context,)`` (empty without a context) and ``members``
    ``(m, n_system)`` to compare; ``members[0]`` is the champion for MUC."""

    context: np.ndarray
    members: np.ndarray

    def __post_init__(self):
        context = np.array(self.context, dtype=float).reshape(-1)
        members = np.array(self.members, dtype=float)
        if members.ndim != 2 or members.shape[0] < 2:
            raise ValueError(f"members must be a 2-D array (m >= 2, n_system); got shape {members.shape}")
        context.setflags(write=False)
        members.setflags(write=False)
        object.__setattr__(self, "context", context)
        object.__setattr__(self, "members", members)

    @property
    def pairs(self) -> list[tuple[int, int]]:
        """Every pair ``(i, j)``, ``i < j``, of members (the comparisons of a full batch)."""
        m = self.members.shape[0]
        return [(i, j) for i in range(m) for j in range(i + 1, m)]


class PreferenceOptimizer(FixedSettings):
    """Preferential (and contextual preferential) Bayesian optimization by ask/tell: ``ask() ->
    DuelQuery``, ``tell(query, outcome)``, ``best()`` (:class:`lensopt.asktell.AskTellOptimizer`).

    ``system_bounds``: ``[(low, high), ...]`` of the parameters to optimize; ``context_bounds``:
    those of the context (empty for plain preferential BO); ``rule``: see
    :mod:`lensopt.preference.rules`; ``kernel``: the utility kernel on ``[s, x]`` (None: SE with
    lengthscales 0.2 × each range, times ``s s'`` with a context); ``batch_size``: members per query;
    ``n_initial``: duels observed before the rule takes over (uniform random queries until then);
    ``inference``: ``"laplace"`` or ``"ep"``; ``reference_context``: ``s₀`` (None: upper bounds);
    ``utility_mean``: the utility's prior mean (a :class:`lensopt.gp.mean.MeanFunction`, None: 0),
    which its owner rebuilds on resuming (it is not in :attr:`settings`); ``refit_from_prior``: fit
    the model from the prior on every duel instead of warm-starting from the previous fit, so that
    it is a function of the duels alone — a resumed session (one fit of the whole history) then
    decides bit for bit as the uninterrupted one (a chain of warm-started fits), which a Laplace fit
    stopped at its tolerance does not promise. Its settings are fixed when it is made
    (:class:`lensopt.binary.settings.FixedSettings`).
    """

    #: The settings ``**options`` passes on.
    _option_setting_names = frozenset(PreferenceSettings.__dataclass_fields__)

    def __init__(
        self,
        system_bounds,
        context_bounds=(),
        rule="muc",
        seed=0,
        kernel=None,
        batch_size=2,
        n_initial=5,
        inference="laplace",
        reference_context=None,
        utility_mean=None,
        refit_from_prior=False,
        **options,
    ):
        self.settings = PreferenceSettings(
            rule=rule,
            seed=seed,
            system_bounds=system_bounds,
            context_bounds=context_bounds,
            batch_size=batch_size,
            n_initial=n_initial,
            inference=inference,
            reference_context=reference_context,
            **options,
        )
        s = self.settings
        self.kernel, self._kernel_given = resolve_kernel(kernel, s.system_bounds, s.n_context)
        self._duels: list[np.ndarray] = []
        self._outcomes: list[int] = []
        self._model: PreferenceGP | None = None
        self.utility_mean = utility_mean
        self.refit_from_prior = bool(refit_from_prior)
        self._model_n = -1
        self._best: tuple[int, np.ndarray] | None = None
        self._n_unmodelled = 0
        self.last_decision_ms = float("nan")

    # ------------------------------------------------------------------ history
    @property
    def n_trials(self) -> int:
        """Number of observed duels (a batch query of ``m`` members adds up to ``m(m−1)/2``)."""
        return len(self._outcomes)

    @property
    def duels(self) -> np.ndarray:
        """Observed duel inputs ``[s, x, x']`` ``(n, n_context + 2 n_system)``."""
        s = self.settings
        return np.array(self._duels, dtype=float).reshape(-1, s.n_context + 2 * s.n_system)

    @property
    def outcomes(self) -> np.ndarray:
        """``(n,)`` 1 where the first member of the duel was preferred."""
        return np.array(self._outcomes, dtype=int)

    def _rng(self, *stream) -> np.random.Generator:
        if self._n_unmodelled:
            stream = (UNMODELLED_STREAM, self._n_unmodelled, *stream)
        return np.random.default_rng([self.settings.seed, self.n_trials, *stream])

    def note_unmodelled_answer(self) -> None:
        """Count an answer the model cannot use (e.g. "the same" in a probit duel model): it changes
        the randomness of the next query, so that the same duel is not simply asked again."""
        self._n_unmodelled += 1

    # -------------------------------------------------------------------- model
    @property
    def model(self) -> PreferenceGP | None:
        """The preference GP fitted on every observed duel (``None`` before the first)."""
        if self.n_trials == 0:
            return None
        if self._model_n != self.n_trials:
            if self._model is None or self.refit_from_prior:
                self._model = PreferenceGP(
                    self.kernel, self.settings.n_context, self.settings.inference, utility_mean=self.utility_mean
                )
            self._model.fit(self.duels, self.outcomes)
            self._model_n = self.n_trials
        return self._model

    def reference_context(self) -> np.ndarray:
        """``s₀`` ``(n_context,)``: where duels are chosen and the optimum is reported."""
        return self.settings.reference()

    @single_threaded
    def best(self) -> np.ndarray:
        """``argmax_x μ_f(s₀, x)``, the posterior mean utility at the reference context ``(n_system,)``
        (the centre of the box before any duel)."""
        s = self.settings
        if self.model is None:
            return np.array([(lo + hi) / 2 for lo, hi in s.system_bounds])
        if self._best is None or self._best[0] != self.n_trials:
            point = rules.posterior_mean_argmax(self.model, self.reference_context(), s.system_bounds, self._rng(1))
            self._best = (self.n_trials, point)
        return self._best[1].copy()

    # ----------------------------------------------------------------- ask/tell
    @single_threaded
    def ask(self) -> DuelQuery:
        """The next query: a context and ``batch_size`` members to compare."""
        start = time.perf_counter()
        s = self.settings
        rng = self._rng()
        if self.n_trials < max(s.n_initial, 1) or s.rule == "random":
            context = rules.random_context(s, rng)
            members = rules.distinct_members(rules.random_members(s, s.batch_size, rng), s, rng)
        else:
            decision = rules.DuelDecision(self.model, s, rng, self.reference_context(), self.best)
            context, members = rules.choose(decision)
        self.last_decision_ms = 1e3 * (time.perf_counter() - start)
        return DuelQuery(context=context, members=members)

    @single_threaded
    def tell(self, query: DuelQuery, outcome) -> None:
        """Record the answer to ``query``.

        Two members: ``outcome`` is 1 (or True) if ``members[0]`` was preferred, else 0. More: a
        sequence of ``((i, j), c)``, one per compared pair, ``c = 1`` if member ``i`` was preferred
        to member ``j``; each pair is one independent duel (companion paper eq. 18).
        """
        if not isinstance(query, DuelQuery):
            raise ValueError(f"query must be a DuelQuery; got {type(query).__name__}")
        m = query.members.shape[0]
        if m == 2:
            self._tell_duel(query.context, query.members[0], query.members[1], _binary(outcome, "outcome"))
            return
        comparisons = self._check_comparisons(outcome, m)
        for (i, j), _ in comparisons:
            self._check_point(query.context, query.members[i], query.members[j])
        for (i, j), c in comparisons:
            self._tell_duel(query.context, query.members[i], query.members[j], c)

    @single_threaded
    def tell_same(self, query: DuelQuery) -> None:
        """Record "they look the same" to a two-member ``query``, as the duel answered once each way.

        The probit model has no tie outcome; told both ways, the answer's likelihood is
        ``Φ(g) Φ(−g)`` (``g = f(s, x₁) − f(s, x₂)``), which peaks at ``g = 0`` — the two lenses
        equally clear — with the curvature of a Gaussian observation ``g = 0 ± √π / 2`` (``−∂² log
        /∂g²`` at 0 is ``2 (φ(0) / Φ(0))² = 4 / π``). Counted as two observed duels (:attr:`n_trials`).
        """
        if not isinstance(query, DuelQuery):
            raise ValueError(f"query must be a DuelQuery; got {type(query).__name__}")
        if query.members.shape[0] != 2:
            raise ValueError(f"'the same' answers a query of 2 members; this one has {query.members.shape[0]}")
        self._check_point(query.context, query.members[0], query.members[1])
        for preferred_first in (1, 0):
            self._tell_duel(query.context, query.members[0], query.members[1], preferred_first)

    def _tell_duel(self, context, first, second, preferred_first: int) -> None:
        """Record one duel: ``first`` vs ``second`` at ``context``, ``preferred_first`` its outcome."""
        context = np.array(context, dtype=float).reshape(-1)
        first, second = np.array(first, dtype=float), np.array(second, dtype=float)
        self._check_point(context, first, second)
        if np.array_equal(
            first, second
        ):  # told, the model had a duel of a point with itself; a link fit failed on every later ask
            raise ValueError(f"a duel's two members must differ; both are {first.tolist()}")
        outcome = _binary(preferred_first, "preferred_first")
        self._duels.append(duel_inputs(context, first, second)[0])
        self._outcomes.append(outcome)

    def _check_comparisons(self, outcome, m):
        if isinstance(outcome, (str, bytes)) or not isinstance(outcome, Sequence | np.ndarray):
            raise ValueError(
                f"a query of {m} members needs a sequence of ((i, j), c) comparisons as outcome; got {outcome!r}"
            )
        comparisons = []
        for item in outcome:
            try:
                (i, j), c = item
                i, j = int(i), int(j)
            except (TypeError, ValueError):
                raise ValueError(f"each comparison must be ((i, j), c); got {item!r}") from None
            if not (0 <= i < m and 0 <= j < m) or i == j:
                raise ValueError(f"comparison ({i}, {j}) needs two different member indices in 0..{m - 1}")
            comparisons.append(((i, j), _binary(c, f"outcome of comparison ({i}, {j})")))
        if not comparisons:
            raise ValueError("outcome lists no comparison; give at least one ((i, j), c)")
        return comparisons

    def _check_point(self, context, *members):
        s = self.settings
        if context.shape != (s.n_context,) or not np.all(np.isfinite(context)):
            raise ValueError(f"context must have {s.n_context} finite values; got {context!r}")
        for name, value, bounds in [("context", context, s.context_bounds)] + [
            ("member", x, s.system_bounds) for x in members
        ]:
            value = np.asarray(value, dtype=float)
            if value.shape != (len(bounds),) or not np.all(np.isfinite(value)):
                raise ValueError(f"a {name} needs {len(bounds)} finite values; got {value!r}")
            for i, (v, (lo, hi)) in enumerate(zip(value, bounds)):
                if not lo - BOUNDS_TOLERANCE <= v <= hi + BOUNDS_TOLERANCE:
                    raise ValueError(f"{name} value {v} in column {i} is outside its bounds ({lo}, {hi})")

    # -------------------------------------------------------------------- state
    def to_state(self) -> dict:
        """A JSON-serializable state; :meth:`from_state` rebuilds an identical optimizer."""
        kernel = kernel_to_dict(self.kernel) if self._kernel_given else None
        history = [list(map(float, z)) + [int(c)] for z, c in zip(self._duels, self._outcomes)]
        return {
            "format": STATE_FORMAT,
            "settings": self.settings.to_dict(),
            "kernel": kernel,
            "history": history,
            "n_unmodelled": self._n_unmodelled,
        }

    @classmethod
    def from_state(cls, state: dict) -> PreferenceOptimizer:
        check_state_format(state, STATE_FORMAT, "preference optimizer", SETTINGS_AND_HISTORY)
        settings = PreferenceSettings.from_dict(state["settings"])
        data = settings.to_dict()
        optimizer = cls(data.pop("system_bounds"), data.pop("context_bounds"), kernel=state.get("kernel"), **data)
        k, d = settings.n_context, settings.n_system
        for row in state["history"]:
            if len(row) != k + 2 * d + 1:
                raise ValueError(f"a history row needs {k + 2 * d + 1} values [s, x, x', c]; got {len(row)}")
            optimizer._tell_duel(row[:k], row[k : k + d], row[k + d : k + 2 * d], row[-1])
        optimizer._n_unmodelled = int(state.get("n_unmodelled", 0))
        return optimizer


def _binary(value, name) -> int:
    if isinstance(value, (bool, np.bool_)):
        return int(value)
    if isinstance(value, (int, float, np.integer, np.floating)) and value in (0, 1):
        return int(value)
    raise ValueError(f"{name} must be 0/1 or a bool (1 = the first member preferred); got {value!r}")
