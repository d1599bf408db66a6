"""RefractionOptimizer: contextual BO speaking lenses (D) and letter sizes (logMAR)."""

from __future__ import annotations

import math

import numpy as np
from scipy.stats import norm

from lensopt.phoropter import check_lens_step, round_to_step
from lensopt.reference_data import REFRACTION_HYPERPARAMETERS, load_json
from lensopt.settings import KernelSpec
from lensopt.trial import Trial

#: Default letter sizes and lens ranges of the paper's experiment (METHOD.md §1).
LETTER_BOUNDS_LOGMAR = (-1.0, 2.0)
SPHERE_BOUNDS_D = (-4.0, 4.0)
CYLINDER_BOUNDS_D = (-4.0, 4.0)

#: ``(S, C) -> (S, S + C)``: the powers of a lens's two principal meridians. The blur of a residual
#: lens, ``rs² + (rs + rc)²`` (METHOD.md §1), is a round function of these, so a stationary kernel
#: on them sees the valley of equal blur the way the patient does (an ellipse tilted in (S, C)).
MERIDIAN_MAP = ((1.0, 0.0), (1.0, 1.0))

#: β of UCB_Φ for lenses: Φ⁻¹(0.99), the companion paper's value, rather than the contextual
#: paper's Φ⁻¹(0.95). With the smaller β a session whose first lucky answers point to the edge
#: of the lens box stays there (the Φ-scale bonus of a lens believed worse is squashed); on the
#: Table 3 patients Φ⁻¹(0.99) removed those stalls (docs/results/table3 and table3-paper-beta).
REFRACTION_BETA = float(norm.ppf(0.99))


def reference_kernel() -> KernelSpec:
    """The shipped psychophysics-kernel hyperparameters (fitted on simulated responses)."""
    return KernelSpec.from_dict(load_json(REFRACTION_HYPERPARAMETERS)["kernel"])


class RefractionOptimizer:
    """ask/tell refraction: ``ask() -> Trial``, ``tell(trial, correct)``, ``best_lens()``.

    Input columns of the model: ``[letter_logmar, sphere_d, cylinder_d]`` with the psychophysics
    kernel ``θ s s' + k_SE(x, x')`` (seed eq. 15); the shipped hyperparameters compare lenses by
    their principal-meridian powers ``(S, S + C)`` (:data:`MERIDIAN_MAP`), in which blur is round. ``lens_step_d`` rounds proposed
    lenses to a phoropter step (e.g. 0.25 D); ``n_alternatives`` sets the guess rate used to turn
    the model's latent into an acuity threshold, ``P = (1 + γ) / 2``.
    """

    def __init__(self, rule="ucb-ald", seed=0, *, sphere_bounds_d=SPHERE_BOUNDS_D,
                 cylinder_bounds_d=CYLINDER_BOUNDS_D, letter_bounds_logmar=LETTER_BOUNDS_LOGMAR,
                 n_initial=5, lens_step_d=None, inference="laplace", hyperparameters=None,
                 n_alternatives=26, reference_context="adaptive", **options):
        from lensopt.optimizer import ContextualOptimizer

        if not isinstance(n_alternatives, int) or n_alternatives < 2:
            raise ValueError(f"n_alternatives must be an integer >= 2, got {n_alternatives!r}")
        kernel = reference_kernel() if hyperparameters is None else hyperparameters
        if isinstance(kernel, dict):
            kernel = KernelSpec.from_dict(kernel)
        if isinstance(reference_context, (int, float)):
            reference_context = (float(reference_context),)
        self.lens_step_d = check_lens_step(lens_step_d)
        self.n_alternatives = n_alternatives
        options.setdefault("beta", REFRACTION_BETA)
        self._core = ContextualOptimizer(
            system_bounds=(sphere_bounds_d, cylinder_bounds_d), context_bounds=(letter_bounds_logmar,),
            rule=rule, seed=seed, kernel=kernel, reference_context=reference_context,
            n_initial=n_initial, inference=inference, **options,
        )
        self._core.target_latent = float(norm.ppf((1.0 + 1.0 / n_alternatives) / 2.0))
        self._history: list[tuple[Trial, bool]] = []

    # ---------------------------------------------------------------- settings
    @property
    def settings(self):
        return self._core.settings

    def settings_dict(self) -> dict:
        s = self.settings
        core = s.to_dict()
        return {
            "rule": s.rule, "seed": s.seed,
            "sphere_bounds_d": list(s.system_bounds[0]), "cylinder_bounds_d": list(s.system_bounds[1]),
            "letter_bounds_logmar": list(s.context_bounds[0]), "n_initial": s.n_initial,
            "lens_step_d": self.lens_step_d, "inference": s.inference, "hyperparameters": core["kernel"],
            "n_alternatives": self.n_alternatives,
            "reference_context": core["reference_context"],
            **{k: core[k] for k in ("beta", "n_candidates", "n_starts", "n_thompson_features",
                                    "refit_every", "refit_after")},
        }

    @classmethod
    def from_settings(cls, settings: dict, history=()) -> "RefractionOptimizer":
        """Rebuild from :meth:`settings_dict` and a history of ``(Trial, correct)`` pairs."""
        opt = cls(**settings)
        for trial, correct in history:
            opt.tell(trial, correct)
        return opt

    def to_state(self) -> dict:
        return {"format": "lensopt.refraction-state/1", "settings": self.settings_dict(),
                "history": [[t.letter_logmar, t.sphere_d, t.cylinder_d, int(c)] for t, c in self._history]}

    @classmethod
    def from_state(cls, state: dict) -> "RefractionOptimizer":
        if state.get("format") != "lensopt.refraction-state/1":
            raise ValueError(f"not a lensopt refraction state (format {state.get('format')!r})")
        history = [(Trial(sphere_d=S, cylinder_d=C, letter_logmar=s), bool(c)) for s, S, C, c in state["history"]]
        return cls.from_settings(state["settings"], history)

    # ----------------------------------------------------------------- history
    @property
    def n_trials(self) -> int:
        return len(self._history)

    @property
    def history(self) -> tuple:
        return tuple(self._history)

    @property
    def model(self):
        return self._core.model

    @property
    def last_decision_ms(self) -> float:
        return self._core.last_decision_ms

    # ---------------------------------------------------------------- ask/tell
    def ask(self) -> Trial:
        query = self._core.ask()
        (s,), (sphere, cylinder) = query.context, query.system
        s_bounds = self.settings.system_bounds
        return Trial(sphere_d=round_to_step(sphere, self.lens_step_d, s_bounds[0]),
                     cylinder_d=round_to_step(cylinder, self.lens_step_d, s_bounds[1]), letter_logmar=float(s))

    def tell(self, trial: Trial, correct) -> None:
        from lensopt.optimizer import Query

        if correct not in (0, 1, True, False):
            raise ValueError(f"correct must be a bool, got {correct!r}")
        self._core.tell(Query(np.array([trial.letter_logmar]), np.array([trial.sphere_d, trial.cylinder_d])),
                        int(correct))
        self._history.append((trial, bool(correct)))

    # ------------------------------------------------------------------ answers
    def best_lens(self) -> tuple[float, float]:
        """The lens (sphere_d, cylinder_d) maximizing the posterior mean."""
        sphere, cylinder = self._core.best_system()
        return float(sphere), float(cylinder)

    def predicted_acuity_logmar(self, sphere_d, cylinder_d):
        """The model's acuity threshold (logMAR) with a lens, as ``(mean, sd)``.

        The threshold is the letter size where the model's ``P(correct) = (1 + γ)/2``. With the
        psychophysics kernel the latent mean is linear in the letter size,
        ``μ(s, x) = a s + b(x)``, so the threshold is ``(z − b(x)) / a``; ``sd`` is the delta-method
        ``σ_b(x) / a`` (the slope's own uncertainty is neglected).
        """
        model = self.model
        sphere = np.asarray(sphere_d, float)
        cylinder = np.asarray(cylinder_d, float)
        shape = np.broadcast(sphere, cylinder).shape
        if model is None:
            nan = np.full(shape, math.nan)
            return nan, nan
        lens = np.column_stack([np.broadcast_to(sphere, shape).ravel(), np.broadcast_to(cylinder, shape).ravel()])
        n = lens.shape[0]
        X = np.vstack([np.column_stack([np.zeros(n), lens]), np.column_stack([np.ones(n), lens])])
        mean, var = model.predict_latent(X)
        intercept, slope = mean[:n], mean[n:] - mean[:n]
        slope = np.where(slope > 1e-9, slope, np.nan)
        threshold = (self._core.target_latent - intercept) / slope
        sd = np.sqrt(np.maximum(var[:n], 0.0)) / slope
        return threshold.reshape(shape), sd.reshape(shape)
