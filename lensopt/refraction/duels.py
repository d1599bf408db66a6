"""Duel refraction: "which lens makes the letters clearer, one or two?" by ask/tell.

:class:`DuelRefractionOptimizer` speaks lenses (D) and letter sizes (logMAR) over the generic
:class:`lensopt.preference.PreferenceOptimizer`. Model inputs are ``[letter_logmar, sphere_d,
cylinder_d]``; the latent utility ``f(s, x)`` of a lens at a letter size has the product kernel
``k_s(s, s') k_x(x, x')`` (squared exponentials), so that how much two lenses differ may depend on
the letter size (tiny letters are unreadable through both lenses; the model learns it), and the
preference is ``P(first clearer) = Φ(f(s, x₁) − f(s, x₂))`` (METHOD.md §5). The rules are the
contextual preferential rules: ``muc-ald`` (default), ``kss-ald`` and the controls.
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass
from typing import Any

import numpy as np

from lensopt.binary.settings import FixedSettings, check_seed
from lensopt.gp.kernels import Product, SquaredExponential
from lensopt.preference import DuelQuery, PreferenceOptimizer
from lensopt.ranking import RankingOptimizer, RankingQuery
from lensopt.refraction.letters import CYLINDER_BOUNDS_D, LETTER_BOUNDS_LOGMAR, SPHERE_BOUNDS_D
from lensopt.refraction.optimum_draws import utility_optimum_draws_d
from lensopt.refraction.phoropter import check_lens_step, check_room_for_lenses, distinct_phoropter_lenses
from lensopt.refraction.trial import DUEL_ANSWERS, Trial, TrialHistory, check_trial_bounds
from lensopt.threads import single_threaded

#: Prior of the utility kernel: lengthscale over letter sizes (logMAR), over lenses (D), and
#: the amplitude. Chosen from the simulated patient's utility ``Φ⁻¹(P(correct))`` at slope 5:
#: it varies over about a logMAR with the letter size and over 2–3 D with the lens.
LETTER_LENGTHSCALE_LOGMAR = 1.0
LENS_LENGTHSCALES_D = (2.5, 3.5)
UTILITY_VARIANCE = 9.0

#: The answer noise the Gumbel models assume (the tie model here, the ranking refraction): their
#: likelihoods (multinomial logit, Plackett–Luce) put unit Gumbel noise on the utility, whose
#: differences are logistic, and ``σ(1.702 x) ≈ Φ(x)`` (max error 0.01). So a utility on the probit
#: scale of :data:`UTILITY_VARIANCE` is this many logit units: their kernel variance is
#: ``UTILITY_VARIANCE · MODEL_LOGIT_SCALE²``. A modelling assumption of ours; the simulated patient
#: (:data:`lensopt.observer.patient.LOGIT_SCALE`) happens to answer with the same scale by default
#: (tests/refraction/test_duel_refraction.py checks that they agree), but no model imports the patient.
MODEL_LOGIT_SCALE = 1.702

#: Format tag of saved duel refraction states.
STATE_FORMAT = "lensopt.duel-refraction-state/1"


@dataclass(frozen=True)
class DuelTrial:
    """One duel: show letters of ``letter_logmar`` through lens 1 then lens 2 and ask which is
    clearer. Lenses are ``(sphere_d, cylinder_d)`` in diopters."""

    first_lens_d: tuple[float, float]
    second_lens_d: tuple[float, float]
    letter_logmar: float

    def __post_init__(self):
        for name in ("first_lens_d", "second_lens_d"):
            lens = tuple(getattr(self, name))
            if len(lens) != 2 or not all(isinstance(v, (int, float)) and math.isfinite(v) for v in lens):
                raise ValueError(f"DuelTrial.{name} must be (sphere_d, cylinder_d), got {lens!r}")
            object.__setattr__(self, name, (float(lens[0]), float(lens[1])))
        if not (isinstance(self.letter_logmar, (int, float)) and math.isfinite(self.letter_logmar)):
            raise ValueError(f"DuelTrial.letter_logmar must be a finite number, got {self.letter_logmar!r}")
        object.__setattr__(self, "letter_logmar", float(self.letter_logmar))


def utility_inputs(letter_logmar, lenses_d) -> np.ndarray:
    """Model inputs ``(n, 3)`` ``[letter_logmar, sphere_d, cylinder_d]`` of ``lenses_d`` ``(n, 2)``
    (columns ``sphere_d, cylinder_d``) seen at letters of one size ``letter_logmar``, validated."""
    lenses = np.asarray(lenses_d, dtype=float)
    if lenses.ndim != 2 or lenses.shape[1] != 2 or not np.isfinite(lenses).all():
        raise ValueError(f"lenses_d must be finite (n, 2) [sphere_d, cylinder_d]; got shape {lenses.shape}")
    if not (isinstance(letter_logmar, (int, float, np.floating)) and math.isfinite(letter_logmar)):
        raise ValueError(f"letter_logmar must be a finite number, got {letter_logmar!r}")
    return np.column_stack([np.full(len(lenses), float(letter_logmar)), lenses])


def prior_utility(kernel, X, full_cov: bool = False):
    """The prior of the utility at ``X``: mean 0, variance ``k(x, x)`` (or covariance ``k(X, X)``)."""
    return np.zeros(len(X)), (kernel(X) if full_cov else kernel.diag(X))


def duel_refraction_kernel(
    letter_lengthscale_logmar=LETTER_LENGTHSCALE_LOGMAR,
    lens_lengthscales_d=LENS_LENGTHSCALES_D,
    variance=UTILITY_VARIANCE,
):
    """``σ² k_SE(s, s') k_SE((S, C), (S', C'))`` over columns ``[letter_logmar, sphere_d, cylinder_d]``."""
    letters = SquaredExponential(letter_lengthscale_logmar, variance=variance, active_dims=(0,))
    lenses = SquaredExponential(lens_lengthscales_d, variance=1.0, active_dims=(1, 2), fixed=("variance",))
    return Product(letters, lenses)


#: Models of the answers: ``probit`` (GP preference learning, METHOD.md §5; a "same" answer is not
#: modelled) or ``ties`` (Nguyen et al. 2021: Gumbel noise with a tie threshold δ, every answer used).
DUEL_MODELS = ("probit", "ties")
#: Rules with the tie model (MPES for the lenses, then the letter size by mutual information),
#: and the name of each in :class:`lensopt.ranking.RankingOptimizer`.
TIE_RULES = {"mpes-ald": "mpes", "random": "random"}
DEFAULT_RULES = {"probit": "muc-ald", "ties": "mpes-ald"}


#: The columns of a duel in a saved state's history row, before its answer.
DUEL_COLUMNS = ("letter_logmar", "first_sphere_d", "first_cylinder_d", "second_sphere_d", "second_cylinder_d")


def saved_duel_answer(value: object, row: int) -> str:
    """The answer of row ``row`` of a saved duel history, as :func:`normalize_duel_answer` reads it; a
    one-line ValueError naming the row otherwise."""
    try:
        return normalize_duel_answer(value)
    except ValueError as error:
        raise ValueError(f"state history[{row}]: {error}") from None


def normalize_duel_answer(answer) -> str:
    """``"first"``, ``"second"`` or ``"same"`` from those strings or a bool (True = first). A number is
    refused: 0 read as "second", while a ranking's answers number the lenses from 0 (0 = lens 1), so a
    script answering a duel as a ranking had every answer turned round."""
    if isinstance(answer, str):
        if answer in DUEL_ANSWERS:
            return answer
    elif isinstance(answer, (bool, np.bool_)):
        return "first" if answer else "second"
    elif isinstance(answer, (int, float, np.integer, np.floating)):
        raise ValueError(
            f"a duel answer must be one of {', '.join(DUEL_ANSWERS)} or a bool (True = first), not a number "
            f"(a ranking numbers its lenses from 0; a duel's are 'first' and 'second'); got {answer!r}"
        )
    raise ValueError(f"a duel answer must be one of {', '.join(DUEL_ANSWERS)} or a bool (True = first); got {answer!r}")


class UtilityRefraction(TrialHistory, FixedSettings):
    """What the duel and ranking refraction optimizers share: a utility GP optimizer ``_core`` over
    ``(letter size, sphere, cylinder)``, the lens box ``_system_bounds`` and the constructor's
    arguments ``_settings`` (fixed when the optimizer is made: :class:`lensopt.binary.settings.FixedSettings`);
    the best lens maximizes the posterior mean utility at the reference letter size."""

    _core: Any
    _settings: dict
    _system_bounds: Any

    def settings_dict(self) -> dict:
        """The constructor's arguments as JSON-able values (stored with a session)."""
        return dict(self._settings)

    def _check_lenses_in_bounds(self, lenses_d, letter_logmar) -> None:
        """A one-line ValueError when the letter size or a lens of a told trial lies outside the
        bounds, in the words of the letter optimizers (:func:`lensopt.refraction.trial.check_trial_bounds`)."""
        bounds = {name: self._settings[name] for name in ("sphere_bounds_d", "cylinder_bounds_d")}
        trials = [Trial(sphere_d, cylinder_d, letter_logmar) for sphere_d, cylinder_d in lenses_d]
        check_trial_bounds(trials[0], letter_bounds_logmar=self._settings["letter_bounds_logmar"])
        for k, trial in enumerate(trials, 1):
            try:
                check_trial_bounds(trial, **bounds)
            except ValueError as error:
                raise ValueError(f"lens {k}: {error}") from None

    @property
    def reference_letter_logmar(self) -> float:
        """The letter size at which the best lens is reported (the upper letter bound)."""
        return float(self._core.reference_context()[0])

    @single_threaded
    def optimum_draws_d(self, n_samples: int, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
        """``(n_samples, 2)`` draws of the best lens and the variances (D²) of the grid they lie on:
        Thompson samples of the argmax of the utility (:mod:`lensopt.refraction.optimum_draws`)."""
        sphere_bounds_d, cylinder_bounds_d = self._system_bounds
        return utility_optimum_draws_d(self, sphere_bounds_d, cylinder_bounds_d, n_samples, rng)

    @single_threaded
    def best(self) -> tuple[float, float]:
        """The lens (sphere_d, cylinder_d) maximizing the posterior mean utility (at the reference
        letter size)."""
        sphere, cylinder = np.asarray(self._core.best(), float)
        return float(sphere), float(cylinder)


class DuelRefractionOptimizer(UtilityRefraction):
    """ask/tell duel refraction: ``ask() -> DuelTrial``, ``tell(trial, answer)``, ``best()`` the lens
    (:class:`lensopt.asktell.AskTellOptimizer`).

    ``model``: ``"probit"`` (rules muc-ald (default), kss-ald, muc-random, kss-random, bald, random)
    or ``"ties"`` (rules mpes-ald (default), random), see :data:`DUEL_MODELS`.
    ``lens_step_d`` rounds proposed lenses to a phoropter step."""

    #: The answers a duel can get: a PsychoPy handler decides ahead for each while the patient
    #: compares (:mod:`lensopt.psychopy.lookahead`); ``canonical_answer`` spells a given one so.
    SPECULATIVE_ANSWERS = DUEL_ANSWERS
    canonical_answer = staticmethod(normalize_duel_answer)

    def __init__(
        self,
        rule=None,
        seed=0,
        *,
        sphere_bounds_d=SPHERE_BOUNDS_D,
        cylinder_bounds_d=CYLINDER_BOUNDS_D,
        letter_bounds_logmar=LETTER_BOUNDS_LOGMAR,
        n_initial=5,
        lens_step_d=None,
        inference="laplace",
        model="probit",
    ):
        if model not in DUEL_MODELS:
            raise ValueError(f"model must be one of {', '.join(DUEL_MODELS)}, got {model!r}")
        seed = check_seed(seed)
        rule = DEFAULT_RULES[model] if rule is None else rule
        if model == "ties" and rule not in TIE_RULES:
            raise ValueError(f"rule {rule!r} is not available with the tie model; choose from: {', '.join(TIE_RULES)}")
        self.lens_step_d = check_lens_step(lens_step_d)
        check_room_for_lenses(2, self.lens_step_d, (tuple(sphere_bounds_d), tuple(cylinder_bounds_d)), "a duel")
        self._settings = {
            "rule": rule,
            "seed": seed,
            "sphere_bounds_d": list(sphere_bounds_d),
            "cylinder_bounds_d": list(cylinder_bounds_d),
            "letter_bounds_logmar": list(letter_bounds_logmar),
            "n_initial": n_initial,
            "lens_step_d": self.lens_step_d,
            "inference": inference,
            "model": model,
        }
        self._system_bounds = (tuple(sphere_bounds_d), tuple(cylinder_bounds_d))
        if model == "probit":
            self._core = PreferenceOptimizer(
                self._system_bounds,
                (tuple(letter_bounds_logmar),),
                rule=rule,
                seed=seed,
                kernel=duel_refraction_kernel(),
                n_initial=n_initial,
                inference=inference,
            )
        else:
            self._core = RankingOptimizer(
                self._system_bounds,
                (tuple(letter_bounds_logmar),),
                set_size=2,
                allow_ties=True,
                seed=seed,
                n_initial=n_initial,
                rule=TIE_RULES[rule],
                kernel=duel_refraction_kernel(variance=UTILITY_VARIANCE * MODEL_LOGIT_SCALE**2),
            )
        self._history: list[tuple[DuelTrial, str]] = []  # answers "first", "second" or "same"
        self.last_decision_ms = math.nan

    # ---------------------------------------------------------------- settings and state
    @property
    def rule(self) -> str:
        return self._settings["rule"]

    @property
    def seed(self) -> int:
        return self._settings["seed"]

    def to_state(self) -> dict:
        return {
            "format": STATE_FORMAT,
            "settings": self.settings_dict(),
            "history": [[t.letter_logmar, *t.first_lens_d, *t.second_lens_d, answer] for t, answer in self._history],
        }

    @classmethod
    @single_threaded
    def from_state(cls, state: dict) -> DuelRefractionOptimizer:
        """The optimizer of a saved state, every part checked first (:meth:`TrialHistory.from_row_state`)."""

        def trial_of(values):
            s, S1, C1, S2, C2 = values
            return DuelTrial((S1, C1), (S2, C2), s)

        return cls.from_row_state(
            state, STATE_FORMAT, "duel refraction", DUEL_COLUMNS, "answer", trial_of, saved_duel_answer
        )

    # ---------------------------------------------------------------- ask/tell
    @single_threaded
    def ask(self) -> DuelTrial:
        t0 = time.perf_counter()
        query = self._core.ask()
        self.last_decision_ms = 1e3 * (time.perf_counter() - t0)
        # rounded to the phoropter step; lens 2 moves one step if rounding merged it with lens 1
        first, second = distinct_phoropter_lenses(
            np.asarray(query.members, float)[:2], self.lens_step_d, self._system_bounds
        )
        return DuelTrial(first, second, float(np.asarray(query.context, float)[0]))

    @single_threaded
    def tell(self, trial: DuelTrial, answer) -> None:
        """Record the answer to ``trial``: ``True``/``1``/``"first"`` (lens 1 clearer),
        ``False``/``0``/``"second"``, or ``"same"``. The probit duel model has no tie outcome, so a
        ``"same"`` is kept in the history (and the saved state) but does not change the model."""
        if not isinstance(trial, DuelTrial):
            raise ValueError(f"trial must be a DuelTrial; got {type(trial).__name__}")
        answer = normalize_duel_answer(answer)
        self._check_lenses_in_bounds((trial.first_lens_d, trial.second_lens_d), trial.letter_logmar)
        if trial.first_lens_d == trial.second_lens_d:
            raise ValueError(
                f"a duel's two lenses must differ; both are {trial.first_lens_d} (sphere_d, cylinder_d): "
                "the same lens twice says nothing of which is clearer"
            )
        context = np.array([trial.letter_logmar], dtype=float)
        members = np.array([trial.first_lens_d, trial.second_lens_d], dtype=float)
        if self._settings["model"] == "ties":
            outcome = {"first": 0, "second": 1, "same": "same"}[answer]
            self._core.tell(RankingQuery(context=context, members=members), outcome)
        elif answer != "same":
            self._core.tell(DuelQuery(context=context, members=members), answer == "first")
        else:
            self._core.note_unmodelled_answer()
        self._history.append((trial, answer))

    @single_threaded
    def predict_utility(self, letter_logmar, lenses_d, full_cov: bool = False):
        """Posterior mean ``(n,)`` and variance ``(n,)`` (or covariance ``(n, n)``) of the utility of
        ``lenses_d`` ``(n, 2)`` (columns ``sphere_d, cylinder_d``) at letters of ``letter_logmar``.

        The model's own prediction (``PreferenceGP.predict_utility`` for ``probit``,
        ``RankingGP.predict`` for ``ties``), or the prior before any modelled answer. Utilities are
        identified up to a constant; only differences between lenses are meaningful.
        """
        X = utility_inputs(letter_logmar, lenses_d)
        model = self._core.model
        if model is None:
            return prior_utility(self._core.kernel, X, full_cov)
        if self._settings["model"] == "ties":
            return model.predict(X, full_cov=full_cov)
        return model.predict_utility(X, full_cov=full_cov)
