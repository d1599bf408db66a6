"""ask/tell Bayesian optimization from rankings and ties of small compared sets (Nguyen et al. 2021).

Like :class:`lensopt.preference.PreferenceOptimizer`, a :class:`RankingOptimizer` is rebuilt exactly
from its settings, kernel and history: the model is refitted from the prior on every new history
(no warm start, so the posterior is a function of the history alone), and the randomness of the
query after ``t`` observations comes from ``numpy.random.default_rng([seed, t])`` only. So the same
settings and history propose the same next query, and :meth:`RankingOptimizer.to_state` is plain JSON.
"""

from __future__ import annotations

import time

import numpy as np

from lensopt.asktell import SETTINGS_AND_HISTORY, check_state_format
from lensopt.binary.settings import FixedSettings
from lensopt.optimize import maximize_posterior_mean
from lensopt.preference.optimizer import DuelQuery
from lensopt.preference.settings import kernel_to_dict, resolve_kernel
from lensopt.ranking import search
from lensopt.ranking.data import RankingObservation, parse_outcome
from lensopt.ranking.model import RankingGP
from lensopt.ranking.settings import MAX_SET_SIZE, RankingSettings
from lensopt.threads import single_threaded

STATE_FORMAT = "lensopt.ranking-state/1"
"""Format tag of saved ranking optimizer states."""

BOUNDS_TOLERANCE = 1e-9
"""Tolerance when checking that a told member or context lies inside the bounds."""


class RankingQuery(DuelQuery):
    """One query: a ``context`` ``(n_context,)`` (empty without a context) and ``members``
    ``(m, n_system)`` to compare (a :class:`lensopt.preference.DuelQuery` that knows its inputs)."""

    def inputs(self) -> np.ndarray:
        """Full inputs ``[s, x]`` of the members ``(m, n_context + n_system)``."""
        return np.hstack([np.broadcast_to(self.context, (self.members.shape[0], self.context.size)), self.members])


class _PosteriorMean:
    """``μ(s, x)`` on full inputs ``[s, x]``, with its gradient, for
    :func:`lensopt.optimize.maximize_posterior_mean` (which pins the context)."""

    def __init__(self, model):
        self.model = model

    def __call__(self, X):
        return self.model.predict(X)[0]

    def value_and_gradient(self, X):
        return self.model.predict_mean_with_gradient(X)


class RankingOptimizer(FixedSettings):
    """Top-k ranking (and top-1 with ties) Bayesian optimization by ask/tell: ``ask() -> RankingQuery``,
    ``tell(query, outcome)``, ``best()`` (:class:`lensopt.asktell.AskTellOptimizer`).

    ``system_bounds``: ``[(low, high), ...]`` of the parameters to optimize; ``context_bounds``:
    ``[(low, high)]`` of one context column (e.g. the letter size) or empty; ``set_size``: members
    per query; ``allow_ties``: the patient may answer "same"; ``kernel``: the utility kernel on
    ``[s, x]`` (None: SE with lengthscales 0.2 × each range, times ``s s'`` with a context, as for
    duels); ``utility_mean``: the utility's prior mean (a :class:`lensopt.gp.mean.MeanFunction`,
    None: 0), which its owner rebuilds on resuming (it is not in :attr:`settings`); other options:
    :class:`RankingSettings`. Its settings are fixed when it is made
    (:class:`lensopt.binary.settings.FixedSettings`).
    """

    #: The settings ``**options`` passes on.
    _option_setting_names = frozenset(RankingSettings.__dataclass_fields__)

    def __init__(
        self,
        system_bounds,
        context_bounds=(),
        set_size=2,
        allow_ties=True,
        seed=0,
        n_initial=5,
        kernel=None,
        utility_mean=None,
        **options,
    ):
        self.settings = RankingSettings(
            system_bounds=system_bounds,
            context_bounds=context_bounds,
            set_size=set_size,
            allow_ties=allow_ties,
            seed=seed,
            n_initial=n_initial,
            **options,
        )
        s = self.settings
        self.kernel, self._kernel_given = resolve_kernel(kernel, s.system_bounds, s.n_context)
        self._history: list[RankingObservation] = []
        self._model: RankingGP | None = None
        self._model_n = -1
        self.utility_mean = utility_mean
        self._best: tuple[int, np.ndarray] | None = None
        self.last_decision_ms = float("nan")
        self.last_mpes_nats = float("nan")

    # ------------------------------------------------------------------ history
    @property
    def n_trials(self) -> int:
        """Number of observations (answered queries)."""
        return len(self._history)

    @property
    def observations(self) -> list[RankingObservation]:
        return list(self._history)

    def _rng(self, *stream) -> np.random.Generator:
        return np.random.default_rng([self.settings.seed, self.n_trials, *stream])

    # -------------------------------------------------------------------- model
    @property
    def model(self) -> RankingGP | None:
        """The ranking GP fitted (from the prior) on every observation; ``None`` before the first."""
        if self.n_trials == 0:
            return None
        if self._model_n != self.n_trials:
            s = self.settings
            model = RankingGP(
                self.kernel,
                s.tie_threshold,
                learn_kernel=s.learn_kernel,
                learn_tie_threshold=s.learn_tie_threshold,
                prior_mean=self.utility_mean,
            )
            self._model = model.fit(self._history, warm_start=False)
            self._model_n = self.n_trials
        return self._model

    def reference_context(self) -> np.ndarray:
        """``s₀`` ``(n_context,)``: where sets are chosen and the optimum is reported."""
        return self.settings.reference()

    @single_threaded
    def best(self) -> np.ndarray:
        """``argmax_x μ(s₀, x)``, the posterior mean at the reference context ``(n_system,)`` (the
        centre of the box before any observation)."""
        s = self.settings
        if self.model is None:
            return np.array([(lo + hi) / 2 for lo, hi in s.system_bounds])
        if self._best is None or self._best[0] != self.n_trials:
            inputs = self.model.inputs_  # a model exists: it was fitted
            seen = None if inputs is None else inputs[:, s.n_context :]
            point = maximize_posterior_mean(
                _PosteriorMean(self.model), self.reference_context(), s.system_bounds, self._rng(1), seen
            )
            self._best = (self.n_trials, point)
        return self._best[1].copy()

    # ----------------------------------------------------------------- ask/tell
    @single_threaded
    def ask(self) -> RankingQuery:
        """The next query: a context and ``set_size`` distinct members to compare."""
        start = time.perf_counter()
        s = self.settings
        rng = self._rng()
        if self.n_trials < max(s.n_initial, 1) or s.rule == "random":
            context, members = search.random_query(s, rng)
            self.last_mpes_nats = float("nan")
        else:
            reference = self.reference_context()
            members, self.last_mpes_nats = search.choose_members(self.model, s, rng, reference, self.best())
            context = search.choose_context(self.model, s, members, rng) if s.n_context else reference
        self.last_decision_ms = 1e3 * (time.perf_counter() - start)
        return RankingQuery(context=context, members=members)

    @single_threaded
    def tell(self, query: RankingQuery, outcome) -> None:
        """Record the answer to ``query``.

        ``outcome``: an ordering of member indices, best first (any number of them, ``top_k`` is
        what MPES plans for; a single index is the best member), or ``"same"`` when the patient
        could not tell the best (only with ``allow_ties``; then an ordering is exactly one index).
        """
        if not isinstance(query, RankingQuery):
            raise ValueError(f"query must be a RankingQuery; got {type(query).__name__}")
        self._observe(query.context, query.members, outcome)

    def _observe(self, context, members, outcome, ties_allowed: bool | None = None) -> None:
        """Record one answered comparison of explicit ``members`` ``(m, n_system)`` at ``context``;
        ``ties_allowed``: whether "same" was an allowed answer (None: the optimizer's ``allow_ties``;
        a saved state says it for each row)."""
        s = self.settings
        context = np.array(context, dtype=float).reshape(-1)
        members = np.array(members, dtype=float)
        if members.ndim != 2 or not 2 <= members.shape[0] <= MAX_SET_SIZE or members.shape[1] != s.n_system:
            raise ValueError(f"members must be (m in 2..{MAX_SET_SIZE}, {s.n_system}); got shape {members.shape}")
        self._check_point(context, members)
        if not search.distinct(members[None], s)[0]:
            raise ValueError("the members of a comparison must be distinct points")
        ties = s.allow_ties if ties_allowed is None else bool(ties_allowed)
        parse_outcome(outcome, members.shape[0], ties)  # a clear error before anything is stored
        inputs = np.hstack([np.broadcast_to(context, (members.shape[0], context.size)), members])
        self._history.append(RankingObservation(inputs, outcome, ties))

    def _check_point(self, context, members):
        s = self.settings
        if context.shape != (s.n_context,) or not np.all(np.isfinite(context)):
            raise ValueError(f"context must have {s.n_context} finite values; got {context!r}")
        if not np.all(np.isfinite(members)):
            raise ValueError("members must be finite")
        checks = [("context", context[None], s.context_bounds), ("member", members, s.system_bounds)]
        for name, values, bounds in checks:
            for i, (lo, hi) in enumerate(bounds):
                bad = (values[:, i] < lo - BOUNDS_TOLERANCE) | (values[:, i] > hi + BOUNDS_TOLERANCE)
                if np.any(bad):
                    value = values[bad, i][0]
                    raise ValueError(f"{name} value {value} in column {i} is outside its bounds ({lo}, {hi})")

    # -------------------------------------------------------------------- state
    def to_state(self) -> dict:
        """A JSON-serializable state; :meth:`from_state` rebuilds an identical optimizer."""
        kernel = kernel_to_dict(self.kernel) if self._kernel_given else None
        k = self.settings.n_context
        history = []
        for obs in self._history:
            record = obs.to_record()
            history.append(
                {
                    "context": obs.inputs[0, :k].tolist(),
                    "members": obs.inputs[:, k:].tolist(),
                    "outcome": record["outcome"],
                    "ties_allowed": obs.ties_allowed,
                }
            )
        return {"format": STATE_FORMAT, "settings": self.settings.to_dict(), "kernel": kernel, "history": history}

    @classmethod
    def from_state(cls, state: dict) -> RankingOptimizer:
        check_state_format(state, STATE_FORMAT, "ranking optimizer", SETTINGS_AND_HISTORY)
        data = RankingSettings.from_dict(state["settings"]).to_dict()
        optimizer = cls(data.pop("system_bounds"), data.pop("context_bounds"), kernel=state.get("kernel"), **data)
        for i, row in enumerate(state["history"]):
            try:
                context, members, outcome, ties = row["context"], row["members"], row["outcome"], row["ties_allowed"]
            except (TypeError, KeyError):
                raise ValueError(
                    f"history row {i} needs context, members, outcome and ties_allowed; got {row!r}"
                ) from None
            optimizer._observe(context, members, tuple(outcome) if isinstance(outcome, list) else outcome, ties)
        return optimizer
