"""ContextualOptimizer: contextual binary Bayesian optimization by ask/tell (:mod:`lensopt.asktell`).

:class:`ContextualOptimizer` works on any box of system parameters and contexts (benchmarks);
:class:`lensopt.refraction.RefractionOptimizer` speaks lenses and letter sizes over it (the
experiment, the simulated patient, the dashboard). Both are rebuilt exactly from their settings and
history: the randomness of trial ``t`` is drawn from ``numpy.random.default_rng([seed, t])`` only,
so the same settings and history propose the same next trial (no generator state to save).
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass, replace

import numpy as np
from scipy.optimize import brentq

from lensopt.acquisition import PosteriorMean
from lensopt.asktell import SETTINGS_AND_HISTORY, ArrayQuery, check_state_format
from lensopt.binary import rules
from lensopt.binary.settings import FixedSettings, KernelSpec, OptimizerSettings
from lensopt.gp import GPClassifier
from lensopt.optimize import maximize_posterior_mean
from lensopt.threads import single_threaded
from lensopt.trial_cache import TrialCache

#: Tolerance when checking that a told input lies inside the bounds (after lens rounding).
BOUNDS_TOLERANCE = 1e-9
#: Format tag of saved optimizer states.
STATE_FORMAT = "lensopt.optimizer-state/1"
#: Seeded restarts of a scheduled hyperparameter re-fit.
REFIT_RESTARTS = 3
#: Recent inputs offered as extra candidates when searching the posterior mean's maximum.
RECENT_INPUTS = 16


@dataclass(frozen=True, eq=False)
class Query(ArrayQuery):
    """One input to evaluate: ``context`` (n_context,) and ``system`` (n_system,) values (read-only
    float copies); equal to a query of the same values (:class:`lensopt.asktell.ArrayQuery`)."""

    context: np.ndarray
    system: np.ndarray

    def __post_init__(self):
        for name in ("context", "system"):
            values = np.array(getattr(self, name), dtype=float).reshape(-1)
            values.setflags(write=False)
            object.__setattr__(self, name, values)

    @property
    def point(self) -> np.ndarray:
        return np.concatenate([self.context, self.system])


class ContextualOptimizer(FixedSettings):
    """Contextual binary Bayesian optimization by ask/tell, context columns first: ``ask() -> Query``,
    ``tell(query, outcome)``, ``best()`` the system point (:class:`lensopt.asktell.AskTellOptimizer`).
    Its settings are fixed when it is made (:class:`lensopt.binary.settings.FixedSettings`)."""

    #: The settings ``**options`` passes on.
    _option_setting_names = frozenset(OptimizerSettings.__dataclass_fields__)

    def __init__(
        self,
        system_bounds,
        context_bounds,
        rule="ucb-ald",
        seed=0,
        kernel=None,
        reference_context=None,
        n_initial=5,
        inference="laplace",
        **options,
    ):
        kernel_object = None
        if kernel is None:
            kernel = KernelSpec(structure="context-product", lengthscales=(1.0,))
        elif not isinstance(kernel, (KernelSpec, dict)):
            kernel_object, kernel = kernel, KernelSpec()
        self.settings = OptimizerSettings(
            rule=rule,
            seed=seed,
            system_bounds=system_bounds,
            context_bounds=context_bounds,
            kernel=kernel,
            reference_context=reference_context,
            n_initial=n_initial,
            inference=inference,
            **options,
        )
        self._kernel_object = kernel_object
        self._settings_kernel = None  # settings.kernel, built on first use
        self._inputs: list[np.ndarray] = []
        self._outcomes: list[int] = []
        self._model = None
        self._model_n = -1
        self._kernel = None
        self._kernel_fitted_at = 0
        self.target_latent = 0.0  # latent value whose context is the "threshold" (adaptive s₀)
        self.last_decision_ms = float("nan")
        self._cache = TrialCache()  # answers that depend only on the history

    # ----------------------------------------------------------------- history
    @property
    def n_trials(self) -> int:
        return len(self._outcomes)

    @property
    def inputs(self) -> np.ndarray:
        return np.array(self._inputs).reshape(-1, len(self.settings.bounds))

    @property
    def outcomes(self) -> np.ndarray:
        return np.array(self._outcomes, dtype=int)

    def _rng(self, *stream) -> np.random.Generator:
        return np.random.default_rng([self.settings.seed, self.n_trials, *stream])

    # ------------------------------------------------------------------- model
    def _base_kernel(self):
        """The kernel of the settings, built once: the model is refitted with the *same* kernel
        object after every answer, which is what lets the GP classifier warm-start its inference
        from the previous fit (a new object each time would force a cold start)."""
        if self._kernel_object is not None:
            return self._kernel_object
        if self._settings_kernel is None:
            self._settings_kernel = self.settings.kernel.build(
                self.settings.n_context, self.settings.n_system, centre=self.settings.prior_centre
            )
        return self._settings_kernel

    def centre_kernel(self, centre) -> None:
        """Centre the settings' kernel on ``centre`` (one value per system parameter) from now on: the
        acuity-bowl kernel's expansion point (:class:`lensopt.gp.kernels.bowl.AcuityBowl`), built at
        ``settings.prior_centre`` until then. The model is refitted from the prior on the whole
        history at its next use (the prior mean and the box are unchanged)."""
        if self._kernel_object is not None or self.settings.kernel.structure != "acuity-bowl":
            raise ValueError("only an optimizer built from an acuity-bowl KernelSpec has a kernel centre to move")
        centre = tuple(float(v) for v in np.asarray(centre, dtype=float).reshape(-1))
        if len(centre) != self.settings.n_system or not all(math.isfinite(v) for v in centre):
            raise ValueError(f"a kernel centre needs {self.settings.n_system} finite values, got {centre!r}")
        self._settings_kernel = self.settings.kernel.build(
            self.settings.n_context, self.settings.n_system, centre=centre
        )
        self._model, self._model_n = None, -1
        self._kernel, self._kernel_fitted_at = None, 0
        self._cache.clear()

    def _classifier(self, kernel) -> GPClassifier:
        """An unfitted classifier of the settings' answer model and inference, on ``kernel``."""
        s = self.settings
        return GPClassifier(
            kernel,
            inference=s.inference,
            guess_rate=s.guess_rate,
            lapse_rate=s.lapse_rate,
            prior_mean=s.prior_mean_function(),
            ep_tolerance=s.ep_tolerance,
            virtual=s.virtual_observations(),
            ep_match_clipped_mean=s.ep_match_clipped_mean,
        )

    def _current_kernel(self):
        """The base kernel, or its re-fit at the latest scheduled point (deterministic)."""
        s = self.settings
        base = self._base_kernel()
        if s.refit_every is None or self.n_trials < s.refit_after:
            return base
        due = s.refit_after + ((self.n_trials - s.refit_after) // s.refit_every) * s.refit_every
        if self._kernel is None or self._kernel_fitted_at != due:
            gp = self._classifier(base)
            gp.fit_hyperparameters(
                self.inputs[:due],
                self.outcomes[:due],
                n_restarts=REFIT_RESTARTS,
                seed=int(np.random.SeedSequence([s.seed, due]).generate_state(1)[0]),
            )
            self._kernel, self._kernel_fitted_at = gp.kernel_, due
        return self._kernel

    @property
    def model(self):
        """The GP classifier fitted on the whole history (``None`` before the first trial)."""
        if self.n_trials == 0:
            return None
        if self._model_n != self.n_trials:
            kernel = self._current_kernel()
            if self._model is None or self._model.kernel_ is not kernel:
                self._model = self._classifier(kernel)
            self._model.fit(self.inputs, self.outcomes)
            self._model_n = self.n_trials
        return self._model

    # ------------------------------------------------------------------ ask/tell
    @single_threaded
    def ask(self, *, system_bounds=None) -> Query:
        """The next input to evaluate. ``system_bounds``: search only this box of the system
        parameters on this trial (within the bounds; e.g. the lenses a manual phoropter reaches from
        the one set now), the random initial trials included; the model and its box are unchanged."""
        start = time.perf_counter()
        s = self.settings
        if system_bounds is not None:
            s = replace(s, system_bounds=self._within_bounds(system_bounds))
        rng = self._rng()
        if self.n_trials < max(s.n_initial, 1) or s.rule == "random":
            point = rules.random_point(s, rng)
        else:
            decision = rules.Decision(self.model, s, rng, self._x_step_context())
            point = rules.choose(decision)
        self.last_decision_ms = 1e3 * (time.perf_counter() - start)
        k = s.n_context
        return Query(context=point[:k].copy(), system=point[k:].copy())

    def _within_bounds(self, system_bounds) -> tuple[tuple[float, float], ...]:
        """``system_bounds`` intersected with the settings' (a one-line ValueError if they do not meet)."""
        box = np.asarray(self.settings.system_bounds, dtype=float)
        sub = np.asarray(system_bounds, dtype=float)
        if sub.shape != box.shape or not np.all(np.isfinite(sub)):
            raise ValueError(f"system_bounds must be {box.shape[0]} finite (low, high) pairs, got {system_bounds!r}")
        lo, hi = np.maximum(sub[:, 0], box[:, 0]), np.minimum(sub[:, 1], box[:, 1])
        if np.any(lo > hi):
            raise ValueError(
                f"system_bounds {system_bounds!r} do not meet the search box {self.settings.system_bounds}"
            )
        return tuple((float(a), float(b)) for a, b in zip(lo, hi))

    @single_threaded
    def tell(self, query: Query, outcome, *, system_in_bounds: bool = True) -> None:
        """Record the binary outcome (1/True = success) of ``query``. ``system_in_bounds=False``
        accepts system values outside the search box (a lens rounded to the phoropter, or the lens
        actually set, may lie just outside it); the context must always be inside its bounds."""
        point = np.asarray(query.point, dtype=float)
        self._check_point(point, None if system_in_bounds else self.settings.n_context)
        if outcome not in (0, 1, True, False):
            raise ValueError(f"outcome must be 0/1 or a bool, got {outcome!r}")
        self._inputs.append(point)
        self._outcomes.append(int(outcome))

    def _check_point(self, point, n_checked=None):
        bounds = np.array(self.settings.bounds)
        if point.shape != (bounds.shape[0],) or not np.all(np.isfinite(point)):
            raise ValueError(f"a query needs {bounds.shape[0]} finite values, got {point!r}")
        outside = (point < bounds[:, 0] - BOUNDS_TOLERANCE) | (point > bounds[:, 1] + BOUNDS_TOLERANCE)
        if n_checked is not None:
            outside[n_checked:] = False
        if np.any(outside):
            i = int(np.argmax(outside))
            low, high = (float(b) for b in bounds[i])
            raise ValueError(f"value {float(point[i])} in column {i} is outside its bounds ({low}, {high})")

    # ---------------------------------------------------------- reported optimum
    def _upper_context(self) -> np.ndarray:
        return np.array([hi for _, hi in self.settings.context_bounds])

    def _cached(self, key, compute):
        return self._cache.get(self.n_trials, key, compute)

    def _argmax_mean(self, context: np.ndarray, refine: bool = True, tolerance=None, n_starts=None) -> np.ndarray:
        key = ("argmax", tuple(context), refine, tolerance, n_starts)
        return self._cached(key, lambda: self._compute_argmax_mean(context, refine, tolerance, n_starts)).copy()

    def _compute_argmax_mean(self, context: np.ndarray, refine=True, tolerance=None, n_starts=None) -> np.ndarray:
        s = self.settings
        model = self.model
        if model is None:
            return np.array([(lo + hi) / 2 for lo, hi in s.system_bounds])
        recent = self.inputs[-RECENT_INPUTS:, s.n_context :]
        objective = PosteriorMean(rules.objective_model(model, s))
        candidate: list = []
        point = maximize_posterior_mean(
            objective,
            context,
            s.system_bounds,
            self._rng(1),
            recent,
            refine,
            tolerance=tolerance,
            n_starts=n_starts,
            best_candidate=candidate,
        )
        # the same candidates, from the same random stream, are the unrefined search's: the adaptive
        # reference context of the next ask() (after a best() between trials) does not search again
        self._cache.setdefault(self.n_trials, ("argmax", tuple(context), False, None, None), candidate[0])
        return point

    @single_threaded
    def search_optimum(self) -> np.ndarray:
        """:meth:`best` found as the acquisition searches are (the settings' ``search_tolerance``,
        one refinement from the best candidate): where a rule built on this optimizer centres its
        next trial, within a frame (the reported :meth:`best` keeps two refinements and scipy's
        tolerance)."""
        return self._argmax_mean(self._upper_context(), tolerance=self.settings.search_tolerance, n_starts=1)

    @single_threaded
    def best(self) -> np.ndarray:
        """The reported optimum ``(n_system,)``: argmax of the posterior mean at the reference context.

        With an adaptive reference, the upper context is used: both kernel structures make the
        argmax independent of the context, and the adaptive ``s₀`` is itself derived from it.
        """
        if self.settings.reference_context == "adaptive":
            return self._argmax_mean(self._upper_context())
        return self._argmax_mean(self.reference_context())

    @single_threaded
    def threshold_context(self, system, target_latent=None) -> float:
        """The context at which the posterior mean latent at ``system`` equals the target.

        Defined for one context column; clipped to the context bounds when there is no crossing.
        """
        target = self.target_latent if target_latent is None else target_latent
        ((lo, hi),) = self.settings.context_bounds
        model = self.model
        system = np.asarray(system, float)

        def gap(s):
            return model.predict_latent(np.concatenate([[s], system])[None])[0][0] - target

        ends = np.array([[lo, *system], [(lo + hi) / 2, *system], [hi, *system]])
        g_lo, g_mid, g_hi = model.predict_latent(ends)[0] - target
        if g_lo * g_hi > 0:
            return lo if abs(g_lo) < abs(g_hi) else hi
        if abs(g_mid - (g_lo + g_hi) / 2) <= 1e-9 * (1.0 + abs(g_lo) + abs(g_hi)):
            # the latent is linear in the context (psychophysics kernel): solve directly
            return float(lo + (hi - lo) * g_lo / (g_lo - g_hi))
        return float(brentq(gap, lo, hi, xtol=1e-6))

    def _x_step_context(self) -> np.ndarray:
        """The context the x-step pins: :meth:`reference_context`, except where it cannot change the
        lens (:func:`lensopt.binary.rules.x_step_free_of_context`) and the settings say so
        (``draws_at_last_threshold``): the adaptive ``s₀`` costs a search of the posterior mean, and
        the threshold at the last tested lens serves as well (it keeps the draw's values near the
        threshold's, the scale the refinement's relative tolerance was set for)."""
        s = self.settings
        shortcut = s.draws_at_last_threshold and s.reference_context == "adaptive" and s.n_context == 1
        if shortcut and rules.x_step_free_of_context(s):
            return np.array([self.threshold_context(self._inputs[-1][s.n_context :])])
        return self.reference_context()

    @single_threaded
    def reference_context(self) -> np.ndarray:
        ref = self.settings.reference_context
        if ref is None:
            return self._upper_context()
        if ref != "adaptive":
            return np.asarray(ref, float)
        if self.model is None or self.settings.n_context != 1:
            return self._upper_context()

        def compute():
            # s₀ only needs to sit near the threshold: the best candidate will do, unrefined
            best = self._argmax_mean(self._upper_context(), refine=False)
            return np.array([self.threshold_context(best)])

        return self._cached("reference", compute).copy()

    # ------------------------------------------------------------------- state
    def to_state(self) -> dict:
        """A JSON-able state from which :meth:`from_state` rebuilds an identical optimizer."""
        if self._kernel_object is not None:
            raise ValueError("an optimizer built from a kernel object cannot be saved; pass a KernelSpec")
        history = [list(map(float, x)) + [int(c)] for x, c in zip(self._inputs, self._outcomes)]
        return {
            "format": STATE_FORMAT,
            "class": type(self).__name__,
            "settings": self.settings.to_dict(),
            "history": history,
        }

    @classmethod
    @single_threaded
    def from_state(cls, state: dict) -> ContextualOptimizer:
        check_state_format(state, STATE_FORMAT, "optimizer", SETTINGS_AND_HISTORY)
        settings = OptimizerSettings.from_dict(state["settings"])
        opt = ContextualOptimizer.__new__(ContextualOptimizer)
        ContextualOptimizer.__init__(
            opt,
            settings.system_bounds,
            settings.context_bounds,
            **{k: v for k, v in settings.to_dict().items() if k not in ("system_bounds", "context_bounds")},
        )
        k = settings.n_context
        for row in state["history"]:
            opt.tell(Query(np.array(row[:k]), np.array(row[k:-1])), int(row[-1]))
        return opt


__all__ = ["STATE_FORMAT", "ContextualOptimizer", "Query"]
