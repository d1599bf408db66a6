"""What the clinician's dashboard shows, computed from stored trials (no Qt, no pyplot).

The dashboard never talks to the running experiment: it rebuilds the model from the trials in the
session database with ``RefractionOptimizer.from_settings(session.optimizer_settings, history)``
(replay by ``tell``, so the rebuilt optimizer is the experiment's optimizer) and derives every
number the panels draw into one frozen :class:`DashboardSnapshot`.

Uncertainty of the best lens
----------------------------
``best_lens()`` is the argmax of the posterior mean (METHOD.md §4, "reported solution"). Its ± in
diopters is the posterior spread of the *location* of the optimum, estimated by Thompson sampling
on a grid: joint draws of the latent ``f(s₀, S, C)`` from the GP posterior (``predict_latent`` with
``full_cov=True``) on a coarse grid over the lens bounds, then again on a finer grid around the
coarse argmaxes; each draw's argmax is one sample of the optimum. The ± is the standard deviation of
those samples (plus the grid's quantization variance ``step²/12``) and the credible region is the
95 % ellipse of their covariance (Gaussian approximation). ``s₀`` is the upper letter bound; with
the psychophysics kernel (slope term ``θ s s'`` plus a lens term) the argmax does not depend on it.
"""

from __future__ import annotations

import math
from collections import OrderedDict

import numpy as np
from scipy.special import ndtr

from lensopt.dashboard.snapshot import (
    DEFAULT_GUESS_RATE,
    NEAR_LENS_RADIUS_D,
    WAITING_MESSAGE,
    AcuityHistory,
    BestLens,
    DashboardSnapshot,
    LensMap,
    PsychometricCurve,
    SessionHeader,
    TrialSeries,
    frozen_array,
)


#: Points per axis of the lens map of predicted acuity.
LENS_MAP_POINTS = 41
#: Joint posterior draws used to sample the location of the optimum.
ARGMAX_SAMPLES = 256
#: Points per axis of each of the two grids the optimum is sampled on (coarse, then local).
ARGMAX_GRID_POINTS = 21
#: Posterior mass of the credible region drawn around the best lens.
CREDIBLE_MASS = 0.95
#: Normal quantile of the psychometric credible band (latent mean ± z·sd), 95 %.
BAND_Z = 1.959963984540054
#: Letter sizes at which the psychometric curve is drawn.
PSYCHOMETRIC_POINTS = 121
#: The best-acuity history is refit after every trial up to this many trials ...
DENSE_HISTORY_TRIALS = 60
#: ... and after every ``HISTORY_STRIDE``-th trial after that (and always at the last trial).
HISTORY_STRIDE = 5
#: Replay snapshots kept in memory (the slider revisits them).
REPLAY_CACHE_SIZE = 32

_DEFAULT_BOUNDS = {
    "sphere_bounds_d": (-4.0, 4.0),
    "cylinder_bounds_d": (-4.0, 4.0),
    "letter_bounds_logmar": (-1.0, 2.0),
}


# --------------------------------------------------------------------------- small pure helpers


def guess_rate_from_protocol(protocol: dict | None) -> float:
    """``1/n`` for an ``n``-alternative letter task, read from a protocol snapshot.

    Looks (at any depth) for ``guess_rate``, then ``n_alternatives``, then ``alphabet`` or
    ``letters`` (a string or a list of the letters the patient chooses from, as in the protocols'
    ``[letters] alphabet``); falls back to ``DEFAULT_GUESS_RATE`` (26 letters).
    """
    keys = ("guess_rate", "n_alternatives", "alphabet", "letters")
    found: dict = {}

    def walk(node):
        if isinstance(node, dict):
            for key, value in node.items():
                if key in keys and key not in found and not isinstance(value, dict):
                    found[key] = value
                walk(value)

    walk(protocol or {})
    rate = found.get("guess_rate")
    if isinstance(rate, (int, float)) and 0.0 < rate < 1.0:
        return float(rate)
    n = found.get("n_alternatives")
    if isinstance(n, int) and n >= 2:
        return 1.0 / n
    for key in ("alphabet", "letters"):
        letters = found.get(key)
        if isinstance(letters, (str, list, tuple)) and len(set(letters)) >= 2:
            return 1.0 / len(set(letters))
    return DEFAULT_GUESS_RATE


def history_checkpoints(n_trials: int, dense_until: int = DENSE_HISTORY_TRIALS,
                        stride: int = HISTORY_STRIDE) -> np.ndarray:
    """Trial counts after which the best-acuity history is refit: every trial up to
    ``dense_until``, then every ``stride``-th, and always ``n_trials`` itself."""
    if n_trials <= 0:
        return np.zeros(0, dtype=int)
    dense = np.arange(1, min(n_trials, dense_until) + 1)
    sparse = np.arange(dense_until + stride, n_trials + 1, stride)
    return np.unique(np.concatenate([dense, sparse, [n_trials]])).astype(int)


def credible_ellipse(center, covariance, mass: float = CREDIBLE_MASS, n_points: int = 121) -> np.ndarray:
    """Boundary ``(n_points, 2)`` of the Gaussian credible ellipse holding ``mass``.

    For a 2-D Gaussian, ``(x−m)ᵀ Σ⁻¹ (x−m)`` is χ² with 2 degrees of freedom, whose quantile is
    ``−2 ln(1 − mass)``.
    """
    if not 0.0 < mass < 1.0:
        raise ValueError(f"mass must be in (0, 1), got {mass!r}")
    radius = math.sqrt(-2.0 * math.log1p(-mass))
    values, vectors = np.linalg.eigh(np.asarray(covariance, dtype=float))
    root = vectors * np.sqrt(np.clip(values, 0.0, None))
    angle = np.linspace(0.0, 2.0 * math.pi, n_points)
    circle = np.stack([np.cos(angle), np.sin(angle)])
    return np.asarray(center, dtype=float) + radius * (root @ circle).T


def _joint_latent_samples(model, X, rng, n_samples) -> np.ndarray:
    """``(n_samples, n_points)`` joint draws of the latent at ``X`` (eigendecomposition: robust to
    the near-singular covariance of a dense grid)."""
    mean, cov = model.predict_latent(X, full_cov=True)
    values, vectors = np.linalg.eigh(0.5 * (cov + cov.T))
    root = vectors * np.sqrt(np.clip(values, 0.0, None))
    return mean + rng.standard_normal((n_samples, len(mean))) @ root.T


def _lens_grid(sphere_range, cylinder_range, n):
    s = np.linspace(*sphere_range, n)
    c = np.linspace(*cylinder_range, n)
    ss, cc = np.meshgrid(s, c)
    step_s, step_c = (s[1] - s[0], c[1] - c[0]) if n > 1 else (0.0, 0.0)
    return np.column_stack([ss.ravel(), cc.ravel()]), step_s, step_c


def sample_optimum_d(model, sphere_bounds_d, cylinder_bounds_d, reference_logmar, rng,
                     n_samples: int = ARGMAX_SAMPLES, grid_points: int = ARGMAX_GRID_POINTS):
    """Thompson samples of the optimal lens: ``(samples (n, 2), quantization variance (2,))``.

    Stage 1 draws on a grid over the bounds; stage 2 on a grid spanning the stage-1 argmaxes
    (± one coarse step, clipped to the bounds). ``model`` needs ``predict_latent(X, full_cov=True)``
    with columns ``[letter_logmar, sphere_d, cylinder_d]``.
    """
    sphere_range, cylinder_range = tuple(sphere_bounds_d), tuple(cylinder_bounds_d)
    samples = None
    for _stage in range(2):
        lenses, step_s, step_c = _lens_grid(sphere_range, cylinder_range, grid_points)
        X = np.column_stack([np.full(len(lenses), reference_logmar), lenses])
        draws = _joint_latent_samples(model, X, rng, n_samples)
        samples = lenses[np.argmax(draws, axis=1)]
        low, high = samples.min(axis=0), samples.max(axis=0)
        sphere_range = (max(low[0] - step_s, sphere_bounds_d[0]),
                        min(high[0] + step_s, sphere_bounds_d[1]))
        cylinder_range = (max(low[1] - step_c, cylinder_bounds_d[0]),
                          min(high[1] + step_c, cylinder_bounds_d[1]))
    return samples, np.array([step_s**2, step_c**2]) / 12.0


def _bounds(opt, name):
    settings = getattr(opt, "settings", None)
    value = getattr(settings, name, None)
    if value is None:
        try:
            value = opt.settings_dict().get(name)
        except Exception:  # noqa: BLE001 - fall back to the paper's bounds
            value = None
    low, high = value if value is not None else _DEFAULT_BOUNDS[name]
    return float(low), float(high)


def _scalar(value) -> float:
    return float(np.asarray(value, dtype=float).reshape(-1)[0])


def _default_factory(settings: dict, history):
    from lensopt.optimizer import RefractionOptimizer

    return RefractionOptimizer.from_settings(settings, history)


def _best_acuity(opt):
    sphere_d, cylinder_d = opt.best_lens()
    mean, sd = opt.predicted_acuity_logmar(sphere_d, cylinder_d)
    return float(sphere_d), float(cylinder_d), _scalar(mean), _scalar(sd)


def compute_model_parts(opt, trials: TrialSeries, guess_rate: float, rng):
    """Lens map, best lens and psychometric curve of a fitted optimizer (``opt.model`` not None)."""
    sphere_b, cylinder_b = _bounds(opt, "sphere_bounds_d"), _bounds(opt, "cylinder_bounds_d")
    letter_b = _bounds(opt, "letter_bounds_logmar")
    best_s, best_c, acuity, acuity_sd = _best_acuity(opt)

    lenses, _, _ = _lens_grid(sphere_b, cylinder_b, LENS_MAP_POINTS)
    mean, sd = opt.predicted_acuity_logmar(lenses[:, 0], lenses[:, 1])
    shape = (LENS_MAP_POINTS, LENS_MAP_POINTS)
    lens_map = LensMap(
        sphere_d=frozen_array(np.linspace(*sphere_b, LENS_MAP_POINTS)),
        cylinder_d=frozen_array(np.linspace(*cylinder_b, LENS_MAP_POINTS)),
        acuity_mean_logmar=frozen_array(np.reshape(mean, shape)),
        acuity_sd_logmar=frozen_array(np.reshape(sd, shape)),
    )

    samples, quantization = sample_optimum_d(opt.model, sphere_b, cylinder_b, letter_b[1], rng)
    covariance = np.cov(samples.T) + np.diag(quantization)
    best = BestLens(
        sphere_d=best_s, cylinder_d=best_c,
        sphere_sd_d=float(math.sqrt(covariance[0, 0])), cylinder_sd_d=float(math.sqrt(covariance[1, 1])),
        acuity_mean_logmar=acuity, acuity_sd_logmar=acuity_sd,
        samples_d=frozen_array(samples),
        region_d=frozen_array(credible_ellipse(samples.mean(axis=0), covariance)),
    )

    letters = np.linspace(*letter_b, PSYCHOMETRIC_POINTS)
    X = np.column_stack([letters, np.full_like(letters, best_s), np.full_like(letters, best_c)])
    mu, var = opt.model.predict_latent(X)
    latent_sd = np.sqrt(np.clip(var, 0.0, None))
    near = np.hypot(trials.sphere_d - best_s, trials.cylinder_d - best_c) <= NEAR_LENS_RADIUS_D
    curve = PsychometricCurve(
        letter_logmar=frozen_array(letters), p_mean=frozen_array(ndtr(mu)),
        p_low=frozen_array(ndtr(mu - BAND_Z * latent_sd)), p_high=frozen_array(ndtr(mu + BAND_Z * latent_sd)),
        guess_rate=guess_rate, threshold_logmar=acuity,
        near_letter_logmar=frozen_array(trials.letter_logmar[near]),
        near_correct=frozen_array(trials.correct[near], bool),
    )
    return lens_map, best, curve, (sphere_b, cylinder_b, letter_b)


class SessionModel:
    """Follows one session: tells new trials to a cached optimizer and builds snapshots.

    ``update`` extends the cached optimizer by the new trials only (the same replay that
    ``from_settings`` does) and refits the best-acuity history at the checkpoints of
    :func:`history_checkpoints`; ``snapshot(n)`` replays the first ``n`` trials for the slider.
    Not thread-safe: the dashboard's worker owns it.
    """

    def __init__(self, info, optimizer_factory=None):
        self._factory = optimizer_factory or _default_factory
        self._settings = dict(info.optimizer_settings)
        self._info = info
        self._records: list = []
        self._opt = None
        self._history: list[tuple[int, float, float]] = []
        self._cache: OrderedDict = OrderedDict()

    @property
    def n_trials(self) -> int:
        return len(self._records)

    def update(self, info, new_records=(), cancelled=None) -> DashboardSnapshot | None:
        """Add the trials not seen yet (by ``index``) and return the snapshot of all of them.

        ``cancelled()`` (optional) is checked between trials; when it turns true the trials told
        so far are kept and None is returned (the window is closing).
        """
        from lensopt.trial import Trial

        self._info = info
        last = self._records[-1].index if self._records else 0
        fresh = sorted((r for r in new_records if r.index > last), key=lambda r: r.index)
        for record in fresh:
            if cancelled is not None and cancelled():
                return None
            if self._opt is None:
                self._opt = self._factory(self._settings, [])
            self._opt.tell(Trial(record.sphere_d, record.cylinder_d, record.letter_logmar),
                           bool(record.correct))
            self._records.append(record)
            n = len(self._records)
            if n <= DENSE_HISTORY_TRIALS or (n - DENSE_HISTORY_TRIALS) % HISTORY_STRIDE == 0:
                self._history.append((n, *_best_acuity(self._opt)[2:]))
        if fresh:
            self._cache.pop(len(self._records), None)
        return self.snapshot()

    def snapshot(self, n_trials: int | None = None) -> DashboardSnapshot:
        """The snapshot after the first ``n_trials`` trials (default: all of them)."""
        total = len(self._records)
        n = total if n_trials is None else int(n_trials)
        if not 0 <= n <= total:
            raise ValueError(f"n_trials must be between 0 and {total}, got {n_trials}")
        key = (n, self._info.status, self._info.updated_at)
        cached = self._cache.get(n)
        if cached is not None and cached[0] == key:
            self._cache.move_to_end(n)
            return cached[1]
        snap = self._build(n, live=(n == total))
        self._cache[n] = (key, snap)
        while len(self._cache) > REPLAY_CACHE_SIZE:
            self._cache.popitem(last=False)
        return snap

    def _header(self) -> SessionHeader:
        info = self._info
        return SessionHeader(
            session_id=int(info.session_id), participant=str(info.participant), status=str(info.status),
            rule=str(self._settings.get("rule", "?")), seed=int(info.seed),
            n_trials_stored=max(int(info.n_trials), len(self._records)),
            created_at=float(info.created_at), updated_at=float(info.updated_at),
            guess_rate=self._guess_rate(info),
        )

    def _guess_rate(self, info) -> float:
        """The optimizer's own ``n_alternatives`` when it has one, else the protocol's letters."""
        n = self._settings.get("n_alternatives")
        if isinstance(n, int) and n >= 2:
            return 1.0 / n
        return guess_rate_from_protocol(info.protocol)

    def _build(self, n: int, live: bool) -> DashboardSnapshot:
        header = self._header()
        trials = TrialSeries.from_records(self._records[:n])
        rows = [row for row in self._history if row[0] <= n]
        if n == 0:
            bounds = tuple(self._settings.get(k, _DEFAULT_BOUNDS[k]) for k in _DEFAULT_BOUNDS)
            history = AcuityHistory(frozen_array([], int), frozen_array([]), frozen_array([]))
            return DashboardSnapshot(header, trials, history, *bounds, live=live, message=WAITING_MESSAGE)
        if n == len(self._records):
            opt = self._opt
        else:
            from lensopt.trial import Trial

            replay = [(Trial(r.sphere_d, r.cylinder_d, r.letter_logmar), bool(r.correct))
                      for r in self._records[:n]]
            opt = self._factory(self._settings, replay)
        rng = np.random.default_rng([abs(header.seed), n])
        lens_map, best, curve, bounds = compute_model_parts(opt, trials, header.guess_rate, rng)
        if not rows or rows[-1][0] != n:
            rows.append((n, best.acuity_mean_logmar, best.acuity_sd_logmar))
        columns = zip(*rows)
        history = AcuityHistory(*(frozen_array(col, dtype) for col, dtype in zip(columns, (int, float, float))))
        return DashboardSnapshot(header, trials, history, *bounds, lens_map=lens_map, best=best,
                                 psychometric=curve, live=live)


def snapshot_from_store(store, session_id: int, n_trials: int | None = None) -> DashboardSnapshot:
    """One-shot snapshot of a stored session (used by the report export)."""
    info = store.session(session_id)
    model = SessionModel(info)
    model.update(info, store.trials(session_id))
    return model.snapshot(n_trials)
