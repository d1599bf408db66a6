"""Choosing duels with González et al.'s (2017) Copeland model (Condorcet winner, pure
exploration, Copeland EI, dueling Thompson sampling) and the ask/tell ``CopelandOptimizer``.

The model itself, the GP over duels and its soft-Copeland scores, is in
:mod:`lensopt.preference.copeland_model`; ``CopelandModel`` and ``default_duel_kernel`` are
re-exported here.
"""

from __future__ import annotations

import time
from dataclasses import asdict, dataclass

import numpy as np

from lensopt.asktell import SETTINGS_AND_HISTORY, check_state_format
from lensopt.binary.settings import FixedSettings, check_seed
from lensopt.gp.classifier import INFERENCE_METHODS
from lensopt.gp.kernels import Kernel
from lensopt.optimize import as_bounds, scrambled_halton, uniform
from lensopt.preference.copeland_model import (
    CANDIDATES_PER_DIM,
    DEFAULT_LATENT_VARIANCE,
    DEFAULT_LENGTHSCALE_FRACTION,  # noqa: F401  (named in CopelandSettings' docstring)
    DEFAULT_N_LANDMARKS,
    CopelandModel,
    _as_duels,
    _as_points,
    _maximize_without_gradient,
    default_duel_kernel,
)
from lensopt.preference.optimizer import DuelQuery
from lensopt.threads import single_threaded

CEI_DUELS = 16
"""Candidate duels of Copeland EI (half Halton over X × X, half pairing the current winner)."""
CEI_TOP_POINTS = 8
"""Points at which the fantasized soft-Copeland maxima are taken: current top scorers + the duel."""
CEI_SCORE_CANDIDATES = 64
"""Halton points from which Copeland EI's top scorers are drawn."""
RULES = ("dueling-ts", "pure-exploration", "copeland-ei", "random")
"""Names accepted by :class:`CopelandOptimizer` and :func:`choose_duel`."""
BOUNDS_TOLERANCE = 1e-9
"""Slack when checking that a told duel lies inside the bounds."""
STATE_FORMAT = "lensopt.copeland-state/1"
"""Format tag of :meth:`CopelandOptimizer.to_state`."""


def best_challenger(model: CopelandModel, x_first, rng) -> np.ndarray:
    """``x' = argmax_x' V[Φ(f_a([x, x']))]`` for a fixed first member (González §3.3, step 2)."""
    x_first = np.asarray(x_first, dtype=float)
    return _maximize_without_gradient(
        lambda X2: model.preference_variance(np.broadcast_to(x_first, X2.shape), X2), model.bounds, rng
    )


def dueling_thompson(model: CopelandModel, rng):
    """Dueling Thompson sampling (González §3.3): ``x`` maximizes one Copeland sample, ``x'`` the
    variance of the win probability against ``x``."""
    extra = model.recent_members() if model.n_duels else None
    x_first = _maximize_without_gradient(model.copeland_samples(rng)[0], model.bounds, rng, extra)
    return x_first, best_challenger(model, x_first, rng)


def pure_exploration(model: CopelandModel, rng):
    """Pure exploration (González §3.1): the duel ``[x, x']`` of largest ``V[Φ(f_a)]`` over ``X × X``."""
    d = model.n_dims
    z = _maximize_without_gradient(
        lambda Z: model.preference_variance(Z[:, :d], Z[:, d:]),
        np.vstack([model.bounds, model.bounds]),
        rng,
        n_candidates=CANDIDATES_PER_DIM**2 * d // 2,
    )
    return z[:d], z[d:]


def copeland_expected_improvement(model: CopelandModel, X_first, X_second, points) -> np.ndarray:
    """One-step Copeland EI of each duel (González §3.2, closed form below eq. 6), ``(n,)``.

    ``α = π([x, x']) (c*_1 − c*)₊ + π([x', x]) (c*_0 − c*)₊``: ``c*_y`` is the largest soft-Copeland
    score after re-fitting with the fantasized outcome ``y`` (1 = ``x`` wins), ``c*`` the current one.
    Every maximum is taken over the same set: ``points`` ``(m, d)`` plus the duel's two members.
    """
    A, B = _as_duels(X_first, X_second, model.n_dims)
    points = _as_points(points, model.n_dims, "points")
    values = np.zeros(len(A))
    for i, (a, b, p) in enumerate(zip(A, B, model.win_probability(A, B))):
        where = np.vstack([points, a, b])
        best_now = model.soft_copeland(where).max()
        for outcome, probability in ((1, p), (0, 1.0 - p)):
            fantasy = model.conditioned_on(a[None], b[None], outcome)
            values[i] += probability * max(fantasy.soft_copeland(where).max() - best_now, 0.0)
    return values


def copeland_ei(model: CopelandModel, rng):
    """The duel of largest Copeland EI among a few candidates (the rule is slow, as in the paper).

    Simplifications: :data:`CEI_DUELS` candidates, half Halton duels over ``X × X`` and half duels
    of the current best scorer against Halton challengers; the maxima ``c*`` are taken over the
    :data:`CEI_TOP_POINTS` best of :data:`CEI_SCORE_CANDIDATES` Halton points (plus the duel), not
    over ``X``, so that ``c*_y − c*`` compares like with like and costs little.
    """
    d, box = model.n_dims, model.bounds
    points = scrambled_halton(box, CEI_SCORE_CANDIDATES, rng)
    top = points[np.argsort(model.soft_copeland(points))[-CEI_TOP_POINTS:]]
    half = CEI_DUELS // 2
    duels = np.vstack(
        [
            scrambled_halton(np.vstack([box, box]), CEI_DUELS - half, rng),
            np.hstack([np.tile(top[-1], (half, 1)), scrambled_halton(box, half, rng)]),
        ]
    )
    z = duels[int(np.argmax(copeland_expected_improvement(model, duels[:, :d], duels[:, d:], top)))]
    return z[:d], z[d:]


def random_duel(bounds, rng):
    """Both members uniform in the box (the paper's RANDOM control)."""
    pair = uniform(bounds, 2, rng)
    return pair[0], pair[1]


def choose_duel(model: CopelandModel, rule: str, rng):
    """The duel ``(x_first (d,), x_second (d,))`` proposed by ``rule`` (one of :data:`RULES`)."""
    if rule == "random":
        return random_duel(model.bounds, rng)
    choosers = {"dueling-ts": dueling_thompson, "pure-exploration": pure_exploration, "copeland-ei": copeland_ei}
    if rule not in choosers:
        raise ValueError(f"unknown rule {rule!r}; use one of {', '.join(RULES)}")
    return choosers[rule](model, rng)


# -------------------------------------------------------------------------------- ask/tell
@dataclass(frozen=True)
class CopelandSettings:
    """Everything that determines a :class:`CopelandOptimizer`'s choices apart from the history.

    ``lengthscales``: SE lengthscale per column of ``x`` in the bounds' units (None: a fraction
    :data:`DEFAULT_LENGTHSCALE_FRACTION` of each range); ``latent_variance``: prior variance of
    the duel latent; ``n_initial``: uniform random duels before the rule takes over.
    """

    bounds: tuple
    rule: str = "dueling-ts"
    seed: int = 0
    n_initial: int = 5
    inference: str = "laplace"
    lengthscales: tuple | None = None
    latent_variance: float = DEFAULT_LATENT_VARIANCE
    n_landmarks: int = DEFAULT_N_LANDMARKS

    def __post_init__(self):
        box = as_bounds(self.bounds)
        object.__setattr__(self, "bounds", tuple((float(lo), float(hi)) for lo, hi in box))
        if self.rule not in RULES:
            raise ValueError(f"unknown rule {self.rule!r}; use one of {', '.join(RULES)}")
        if self.inference not in INFERENCE_METHODS:
            raise ValueError(f"unknown inference {self.inference!r}; use one of {', '.join(INFERENCE_METHODS)}")
        object.__setattr__(self, "seed", check_seed(self.seed))
        for name in ("n_initial", "n_landmarks"):
            value = getattr(self, name)
            if isinstance(value, bool) or int(value) != value or value < (1 if name == "n_landmarks" else 0):
                raise ValueError(f"{name} must be an integer ≥ {1 if name == 'n_landmarks' else 0}; got {value!r}")
            object.__setattr__(self, name, int(value))
        if self.lengthscales is not None:
            scales = tuple(float(v) for v in np.atleast_1d(self.lengthscales))
            if len(scales) != len(box) or not all(np.isfinite(v) and v > 0 for v in scales):
                raise ValueError(
                    f"lengthscales must be {len(box)} positive numbers (one per column); got {self.lengthscales!r}"
                )
            object.__setattr__(self, "lengthscales", scales)
        if not (np.isfinite(self.latent_variance) and self.latent_variance > 0):
            raise ValueError(f"latent_variance must be a positive number; got {self.latent_variance!r}")

    def kernel(self) -> Kernel:
        return default_duel_kernel(self.bounds, self.lengthscales, self.latent_variance)

    def to_dict(self) -> dict:
        return asdict(self) | {
            "bounds": [list(b) for b in self.bounds],
            "lengthscales": None if self.lengthscales is None else list(self.lengthscales),
        }


class CopelandOptimizer(FixedSettings):
    """ask/tell preferential BO with the Copeland model (González Algorithm 1).

    ``ask() -> DuelQuery`` (no context, ``members`` ``[x_first, x_second]``); ``tell(query,
    preferred_first)``; ``best()`` is the Condorcet-winner estimate
    (:class:`lensopt.asktell.AskTellOptimizer`). The randomness of trial ``t`` comes from
    ``numpy.random.default_rng([seed, t])`` only, so the same settings and history propose the
    same next duel. ``kernel``: a duel-space :class:`Kernel` (such an optimizer cannot be saved)
    or None for :meth:`CopelandSettings.kernel`; ``options``: further :class:`CopelandSettings` fields.
    Its settings are fixed when it is made (:class:`lensopt.binary.settings.FixedSettings`).
    """

    #: The settings ``**options`` passes on.
    _option_setting_names = frozenset(CopelandSettings.__dataclass_fields__)

    def __init__(self, bounds, rule="dueling-ts", seed=0, n_initial=5, kernel=None, **options):
        self.settings = CopelandSettings(bounds=bounds, rule=rule, seed=seed, n_initial=n_initial, **options)
        self._kernel_object = kernel
        s = self.settings
        self.model = CopelandModel(
            s.bounds, kernel if kernel is not None else s.kernel(), s.inference, s.n_landmarks, s.seed
        )
        self._history: list[tuple[np.ndarray, np.ndarray, int]] = []
        self.last_decision_ms = float("nan")

    @property
    def n_trials(self) -> int:
        """Number of observed duels."""
        return len(self._history)

    def _rng(self, *stream) -> np.random.Generator:
        return np.random.default_rng([self.settings.seed, self.n_trials, *stream])

    def _fitted_model(self) -> CopelandModel:
        if self.model.n_duels != self.n_trials:
            A, B, y = (np.array(column) for column in zip(*self._history))
            self.model.fit(A, B, y)
        return self.model

    @single_threaded
    def ask(self) -> DuelQuery:
        """The next duel: ``members`` ``[x_first (d,), x_second (d,)]``, no context."""
        start = time.perf_counter()
        s, rng = self.settings, self._rng()
        if self.n_trials < s.n_initial or s.rule == "random":
            x_first, x_second = random_duel(s.bounds, rng)
        else:
            x_first, x_second = choose_duel(self._fitted_model(), s.rule, rng)
        self.last_decision_ms = 1e3 * (time.perf_counter() - start)
        return DuelQuery(context=np.empty(0), members=np.vstack([x_first, x_second]))

    @single_threaded
    def tell(self, query: DuelQuery, preferred_first) -> None:
        """Record that ``query``'s first member won (True/1) or lost (False/0) its duel against the second."""
        if not isinstance(query, DuelQuery) or query.members.shape[0] != 2 or query.context.size:
            raise ValueError(f"query must be a DuelQuery of two members and no context; got {query!r}")
        self._tell_duel(query.members[0], query.members[1], preferred_first)

    def _tell_duel(self, x_first, x_second, preferred_first) -> None:
        box = np.array(self.settings.bounds)
        points = []
        for name, x in (("x_first", x_first), ("x_second", x_second)):
            if np.ndim(x) != 1:
                raise ValueError(f"{name} must be one point of shape ({len(box)},); got shape {np.shape(x)}")
            x = _as_points(np.reshape(x, (1, -1)), len(box), name)[0]
            outside = (x < box[:, 0] - BOUNDS_TOLERANCE) | (x > box[:, 1] + BOUNDS_TOLERANCE)
            if np.any(outside):
                i = int(np.argmax(outside))
                raise ValueError(f"{name}[{i}] = {float(x[i])} is outside its bounds {tuple(box[i].tolist())}")
            points.append(x.copy())
        if isinstance(preferred_first, str) or preferred_first not in (0, 1, True, False):
            raise ValueError(f"preferred_first must be a bool or 0/1; got {preferred_first!r}")
        if np.array_equal(points[0], points[1]):
            raise ValueError(f"a duel's two members must differ; both are {points[0].tolist()}")
        self._history.append((points[0], points[1], int(preferred_first)))

    @single_threaded
    def best(self) -> np.ndarray:
        """The Condorcet winner of the current model (the centre of the box before any duel)."""
        if not self._history:
            return np.array(self.settings.bounds).mean(axis=1)
        return self._fitted_model().condorcet_winner(self._rng(1))

    def to_state(self) -> dict:
        """A JSON-able state from which :meth:`from_state` rebuilds an identical optimizer."""
        if self._kernel_object is not None:
            raise ValueError(
                "an optimizer built from a kernel object cannot be saved; use the lengthscales/"
                "latent_variance settings instead"
            )
        history = [[*map(float, a), *map(float, b), y] for a, b, y in self._history]
        return {"format": STATE_FORMAT, "settings": self.settings.to_dict(), "history": history}

    @classmethod
    def from_state(cls, state: dict) -> CopelandOptimizer:
        check_state_format(state, STATE_FORMAT, "Copeland optimizer", SETTINGS_AND_HISTORY)
        settings = dict(state["settings"])
        optimizer = cls(**settings)
        d = len(optimizer.settings.bounds)
        for row in state["history"]:
            if len(row) != 2 * d + 1:
                raise ValueError(f"history rows must hold {2 * d + 1} numbers (x_first, x_second, outcome)")
            optimizer._tell_duel(row[:d], row[d : 2 * d], row[-1])
        return optimizer
