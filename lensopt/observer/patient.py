"""A simulated patient who reads letters through trial lenses.

The patient has a true correction ``(S*, C*)`` (and optionally an astigmatism axis). Through a
lens ``(S, C)`` the residual ``r = lens − correction`` blurs the retinal image, the acuity
drops to ``VA = VA_best + log10(1 + b²)`` and a letter of size ``s`` is named correctly with
probability ``γ + (1 − γ − λ) Φ(a (s − VA))`` (see :mod:`lensopt.observer.optics`).

A patient with ``accommodation_d = A > 0`` accommodates: the spherical-equivalent part of a residual
that is too minus is offset by up to ``A`` D (:func:`lensopt.observer.optics.accommodated_blur_d`),
so every lens up to ``A`` D more minus than the correction reads as well as it. With ``A = 0`` (the
default) the patient is computed exactly as before, by the same code path.
"""

from __future__ import annotations

import math
import numbers
from dataclasses import dataclass, field
from statistics import NormalDist

import numpy as np

from lensopt.observer.optics import (
    accommodated_blur_d,
    acuity_logmar,
    blur_strength_d,
    normal_cdf,
    power_vector,
    psychometric_p_correct,
    residual_blur_d,
)
from lensopt.refraction.lens import Lens, wrap_axis_deg

#: Axis (degrees) assumed for a patient built without ``axis_deg`` when a lens axis is given.
DEFAULT_PATIENT_AXIS_DEG = 0.0

#: Smallest upper-tail probability kept when turning P(correct) into a latent utility.
_TINY_TAIL = 1e-300

#: Elementwise standard normal quantile (stdlib, accurate in both tails; the observer stays
#: scipy-free).
_normal_quantile = np.frompyfunc(NormalDist().inv_cdf, 1, 1)

#: Largest seed drawn for a patient by :func:`draw_patients` (fits a signed 64-bit SQLite INTEGER).
_MAX_CHILD_SEED = 2**63 - 1


def _check_finite(owner, name, value):
    if isinstance(value, bool) or not isinstance(value, numbers.Real) or not math.isfinite(value):
        raise ValueError(f"{owner}.{name} must be a finite number, got {value!r}")
    return float(value)


def check_answer_rates(owner: str, n_alternatives, lapse) -> tuple[int, float]:
    """A patient's answer model, checked: ``n_alternatives`` an integer ≥ 2 (guess rate
    ``γ = 1/n_alternatives``) and ``lapse`` in ``[0, 1 − γ)``, so that ``P(correct)`` rises from
    ``γ`` to ``1 − lapse``. ``owner`` prefixes the field names in the one-line errors (may be empty)."""
    prefix = f"{owner}." if owner else ""
    n = n_alternatives
    if isinstance(n, bool) or not isinstance(n, numbers.Integral) or n < 2:
        raise ValueError(f"{prefix}n_alternatives must be an integer >= 2, got {n!r}")
    ceiling = 1.0 - 1.0 / int(n)
    if isinstance(lapse, bool) or not isinstance(lapse, numbers.Real) or not 0.0 <= float(lapse) < ceiling:
        raise ValueError(f"{prefix}lapse must be in [0, 1 - 1/n_alternatives) = [0, {ceiling:.4g}), got {lapse!r}")
    return int(n), float(lapse)


#: A simulated patient's psychometric slope (logMAR⁻¹) when none is given: the paper's.
PATIENT_SLOPE_PER_LOGMAR = 5.0


def _check_seed(owner, seed):
    if seed is None or isinstance(seed, np.random.SeedSequence):
        return seed
    if isinstance(seed, bool) or not isinstance(seed, numbers.Integral) or seed < 0:
        raise ValueError(f"{owner}.seed must be None, a non-negative integer or a numpy SeedSequence, got {seed!r}")
    return int(seed)


@dataclass(frozen=True)
class SimulatedPatient:
    """A patient with true correction ``sphere_d``/``cylinder_d`` who answers letter trials.

    Parameters
    ----------
    sphere_d, cylinder_d:
        The patient's true correction (D): the lens that gives the best acuity.
    slope:
        Psychometric slope ``a`` (logMAR⁻¹), > 0. The paper headlines 5; human slopes are
        nearer 14.
    n_alternatives:
        Number of letters to choose from (26 for the alphabet, 10 for Sloan letters); the
        guess rate is ``1 / n_alternatives``.
    lapse:
        Lapse rate ``λ`` in ``[0, 1 − 1/n)``: the chance of missing even a huge letter.
    va_best_logmar:
        Acuity through the true correction (logMAR).
    seed:
        Seed of the patient's own random generator (``np.random.default_rng(seed)``).
    axis_deg:
        Axis of the true cylinder (degrees). ``None``: lenses given without an axis are
        aligned with the correction (the paper's two-dimensional model), and a lens given with
        an axis is compared with a correction at ``DEFAULT_PATIENT_AXIS_DEG``.
    accommodation_d:
        Amplitude of accommodation ``A`` (D), >= 0: every lens up to ``A`` D more minus in
        spherical equivalent than the correction gives the correction's blur. 0 (the default):
        no accommodation, the model of the paper.
    """

    sphere_d: float
    cylinder_d: float
    slope: float = PATIENT_SLOPE_PER_LOGMAR
    n_alternatives: int = 26
    lapse: float = 0.0
    va_best_logmar: float = 0.0
    seed: int | np.random.SeedSequence | None = None
    axis_deg: float | None = None
    accommodation_d: float = 0.0
    _rng: np.random.Generator = field(init=False, repr=False, compare=False)

    def __post_init__(self):
        owner = type(self).__name__
        for name in ("sphere_d", "cylinder_d", "slope", "lapse", "va_best_logmar"):
            object.__setattr__(self, name, _check_finite(owner, name, getattr(self, name)))
        if self.axis_deg is not None:
            object.__setattr__(self, "axis_deg", _check_finite(owner, "axis_deg", self.axis_deg))
        object.__setattr__(self, "accommodation_d", _check_finite(owner, "accommodation_d", self.accommodation_d))
        if self.accommodation_d < 0:
            raise ValueError(f"{owner}.accommodation_d must be >= 0 (diopters), got {self.accommodation_d!r}")
        if self.slope <= 0:
            raise ValueError(f"{owner}.slope must be > 0 (logMAR⁻¹), got {self.slope!r}")
        n, lapse = check_answer_rates(owner, self.n_alternatives, self.lapse)
        object.__setattr__(self, "n_alternatives", n)
        object.__setattr__(self, "lapse", lapse)
        object.__setattr__(self, "seed", _check_seed(owner, self.seed))
        object.__setattr__(self, "_rng", np.random.default_rng(self.seed))

    # -- properties ---------------------------------------------------------------------------

    @property
    def true_correction_d(self) -> tuple[float, float]:
        """The true correction ``(sphere_d, cylinder_d)``."""
        return (self.sphere_d, self.cylinder_d)

    @property
    def correction(self) -> Lens:
        """The true correction as a minus-cylinder :class:`~lensopt.refraction.lens.Lens`, at ``axis_deg``
        (``DEFAULT_PATIENT_AXIS_DEG``, read as 180, when the patient has no axis)."""
        axis_deg = DEFAULT_PATIENT_AXIS_DEG if self.axis_deg is None else self.axis_deg
        return Lens(self.sphere_d, self.cylinder_d, float(wrap_axis_deg(axis_deg))).minus_cylinder()

    @property
    def best_acuity_logmar(self) -> float:
        """Acuity (logMAR) through the true correction."""
        return self.va_best_logmar

    @property
    def guess_rate(self) -> float:
        """Chance of naming a letter by guessing, ``γ = 1 / n_alternatives``."""
        return 1.0 / self.n_alternatives

    # -- model --------------------------------------------------------------------------------

    def blur_d(self, sphere_d, cylinder_d, axis_deg=None):
        """Blur strength ``b`` (D) of the residual ``lens − correction`` (arrays broadcast), after the
        patient accommodates (when ``accommodation_d > 0``)."""
        if self.accommodation_d > 0.0:
            return self._accommodated_blur_d(sphere_d, cylinder_d, axis_deg)
        if axis_deg is None:
            return blur_strength_d(
                np.asarray(sphere_d, dtype=float) - self.sphere_d,
                np.asarray(cylinder_d, dtype=float) - self.cylinder_d,
            )
        patient_axis_deg = DEFAULT_PATIENT_AXIS_DEG if self.axis_deg is None else self.axis_deg
        return residual_blur_d(sphere_d, cylinder_d, axis_deg, self.sphere_d, self.cylinder_d, patient_axis_deg)

    def _accommodated_blur_d(self, sphere_d, cylinder_d, axis_deg):
        """:meth:`blur_d` of an accommodating patient: the power-vector residual through
        :func:`~lensopt.observer.optics.accommodated_blur_d`. Without a lens axis the cylinders are
        aligned, so the residual is ``r_M = r_S + r_C/2`` and an astigmatism of length ``|r_C|/2``."""
        if axis_deg is None:
            r_s = np.asarray(sphere_d, dtype=float) - self.sphere_d
            r_c = np.asarray(cylinder_d, dtype=float) - self.cylinder_d
            return accommodated_blur_d(r_s + 0.5 * r_c, 0.5 * np.abs(r_c), 0.0, self.accommodation_d)
        patient_axis_deg = DEFAULT_PATIENT_AXIS_DEG if self.axis_deg is None else self.axis_deg
        lens = power_vector(sphere_d, cylinder_d, axis_deg)
        correction = power_vector(self.sphere_d, self.cylinder_d, patient_axis_deg)
        r_m, r_j0, r_j45 = (a - b for a, b in zip(lens, correction))
        return accommodated_blur_d(r_m, r_j0, r_j45, self.accommodation_d)

    def visual_acuity(self, sphere_d, cylinder_d, axis_deg=None):
        """Acuity (logMAR) through the lens ``sphere_d``/``cylinder_d`` (arrays broadcast).

        Returns a float for scalar input, an array otherwise.
        """
        va = acuity_logmar(self.blur_d(sphere_d, cylinder_d, axis_deg), self.va_best_logmar)
        return _scalar_or_array(va)

    def p_correct(self, letter_logmar, sphere_d, cylinder_d, axis_deg=None):
        """Probability of naming a letter of size ``letter_logmar`` through the lens."""
        va = acuity_logmar(self.blur_d(sphere_d, cylinder_d, axis_deg), self.va_best_logmar)
        p = psychometric_p_correct(letter_logmar, va, self.slope, self.guess_rate, self.lapse)
        return _scalar_or_array(p)

    def respond(self, letter_logmar, sphere_d, cylinder_d, axis_deg=None):
        """Whether the patient names the letter correctly: one seeded Bernoulli draw.

        Returns a ``bool`` for scalar input and a boolean array (one independent draw per
        element) for array input. Draws come from the patient's own generator, so a patient
        built with the same seed gives the same answers to the same questions.
        """
        p = np.asarray(self.p_correct(letter_logmar, sphere_d, cylinder_d, axis_deg))
        if p.ndim == 0:
            return bool(self._rng.random() < p)
        return self._rng.random(p.shape) < p

    # -- duels (preferential feedback) ------------------------------------------------------

    def duel_utility(self, letter_logmar, sphere_d, cylinder_d, axis_deg=None):
        """Latent utility of a lens at a letter size: ``f = Φ⁻¹(P(correct))``.

        Computed from the upper tail ``1 − P = λ + (1 − γ − λ) Φ(−a (s − VA))`` so that large
        letters keep their resolution (``f ≈ a (s − VA)`` there when ``λ = 0``).
        """
        va = acuity_logmar(self.blur_d(sphere_d, cylinder_d, axis_deg), self.va_best_logmar)
        z = self.slope * (np.asarray(letter_logmar, dtype=float) - va)
        upper_tail = self.lapse + (1.0 - self.guess_rate - self.lapse) * normal_cdf(-z)
        upper_tail = np.clip(upper_tail, _TINY_TAIL, 1.0)
        utility = -np.asarray(_normal_quantile(upper_tail), dtype=float)
        return _scalar_or_array(utility)

    def p_prefer_first(self, letter_logmar, first_lens, second_lens, axis_deg=None):
        """Probability that the patient calls the first lens clearer, reading letters of size
        ``letter_logmar``: ``Φ(f(s, first) − f(s, second))`` (METHOD.md §5, probit duel).

        ``first_lens``/``second_lens`` are ``(sphere_d, cylinder_d)`` pairs (arrays broadcast).
        """
        (first_sphere_d, first_cylinder_d), (second_sphere_d, second_cylinder_d) = first_lens, second_lens
        difference = self.duel_utility(letter_logmar, first_sphere_d, first_cylinder_d, axis_deg) - self.duel_utility(
            letter_logmar, second_sphere_d, second_cylinder_d, axis_deg
        )
        return _scalar_or_array(normal_cdf(difference))

    def prefer_first(self, letter_logmar, first_lens, second_lens, axis_deg=None):
        """Whether the patient prefers the first lens: one seeded Bernoulli draw (as :meth:`respond`)."""
        p = np.asarray(self.p_prefer_first(letter_logmar, first_lens, second_lens, axis_deg))
        if p.ndim == 0:
            return bool(self._rng.random() < p)
        return self._rng.random(p.shape) < p

    # -- duels with ties and rankings (Nguyen et al. 2021: Gumbel noise) --------------------

    def ranking_utility(self, letter_logmar, lenses, axis_deg=None) -> np.ndarray:
        """Utilities ``u_i = LOGIT_SCALE · Φ⁻¹(P(correct))`` of ``lenses`` ``[(sphere_d, cylinder_d), ...]``
        at one letter size, on the scale of the Gumbel-noise (multinomial logit) model: with
        Gumbel noise the difference of two noisy utilities is logistic, and ``σ(1.702 Δ) ≈ Φ(Δ)``,
        so that without ties a pair is answered as the probit duels of :meth:`p_prefer_first`.

        Lenses of three values ``(sphere_d, cylinder_d, axis_deg)`` carry their own axes (the full
        prescription's duels): each is compared with the correction by its power-vector residual,
        and ``axis_deg`` must then be None."""
        lenses = np.asarray(lenses, dtype=float)
        if lenses.ndim == 2 and lenses.shape[1] == 3:
            if axis_deg is not None:
                raise ValueError("lenses given with their own axes (sphere_d, cylinder_d, axis_deg) take no axis_deg")
            return LOGIT_SCALE * np.array([self.duel_utility(letter_logmar, S, C, a) for S, C, a in lenses])
        lenses = lenses.reshape(-1, 2)
        return LOGIT_SCALE * np.array([self.duel_utility(letter_logmar, S, C, axis_deg) for S, C in lenses])

    def p_choice_outcomes(self, letter_logmar, lenses, tie_threshold=0.0, axis_deg=None) -> np.ndarray:
        """``[P(lens 0 best), ..., P(lens m−1 best), P(same)]``: member ``i`` is called clearest when
        its noisy utility beats every other by at least ``δ = tie_threshold``, else "the same"
        (Nguyen et al. 2021 eqs. 1 and 4: ``P(i) = e^{u_i} / (e^{u_i} + Σ_{j≠i} e^{u_j + δ})``)."""
        _check_tie_threshold(tie_threshold)
        u = self.ranking_utility(letter_logmar, lenses, axis_deg)
        p = np.empty(u.size + 1)
        for i in range(u.size):
            others = np.delete(u, i) + tie_threshold - u[i]
            p[i] = 1.0 / (1.0 + np.exp(others).sum())
        p[-1] = max(0.0, 1.0 - p[:-1].sum())
        return p

    def duel_answer(self, letter_logmar, first_lens, second_lens, tie_threshold=0.0, axis_deg=None) -> str:
        """ "first", "second" or "same": one seeded draw of Gumbel-noisy utilities; "same" when
        they differ by less than ``tie_threshold``. The lenses are ``(sphere_d, cylinder_d)``, or
        ``(sphere_d, cylinder_d, axis_deg)`` each with its own axis (:meth:`ranking_utility`)."""
        _check_tie_threshold(tie_threshold)
        u = self.ranking_utility(letter_logmar, [first_lens, second_lens], axis_deg)
        noisy = u + self._rng.gumbel(size=2)
        if abs(noisy[0] - noisy[1]) < tie_threshold:
            return "same"
        return "first" if noisy[0] > noisy[1] else "second"

    def rank_lenses(self, letter_logmar, lenses, k=None, axis_deg=None) -> tuple[int, ...]:
        """The indices of the ``k`` clearest lenses, clearest first (all of them by default): one
        seeded draw of the Plackett–Luce model (Gumbel-noisy utilities sorted)."""
        u = self.ranking_utility(letter_logmar, lenses, axis_deg)
        k = u.size if k is None else k
        if isinstance(k, bool) or not isinstance(k, numbers.Integral) or not 1 <= int(k) <= u.size:
            raise ValueError(f"k must be an integer from 1 to the number of lenses ({u.size}); got {k!r}")
        noisy = u + self._rng.gumbel(size=u.size)
        return tuple(int(i) for i in np.argsort(-noisy)[:k])


#: Scale from a probit utility to the logit (Gumbel) model: ``σ(1.702 x) ≈ Φ(x)`` (max error 0.01).
LOGIT_SCALE = 1.702


def _check_tie_threshold(value):
    if isinstance(value, bool) or not isinstance(value, numbers.Real) or not math.isfinite(value) or value < 0:
        raise ValueError(f"tie_threshold must be a finite number >= 0 (utility units); got {value!r}")


def _scalar_or_array(values):
    values = np.asarray(values, dtype=float)
    return float(values) if values.ndim == 0 else values


def draw_patients(
    n, seed, sphere_range_d=(-3.0, 3.0), cylinder_range_d=(-3.0, 3.0), **patient_kwargs
) -> list[SimulatedPatient]:
    """``n`` patients with true corrections drawn uniformly from the given ranges.

    Patient ``i`` draws its correction from, and takes its own response seed from, child ``i``
    of ``np.random.SeedSequence(seed).spawn(n)``; so the first ``k`` patients do not depend on
    ``n``. Further keyword arguments (``slope``, ``n_alternatives``, ``lapse``,
    ``va_best_logmar``, ``axis_deg``) are passed to every :class:`SimulatedPatient`.
    """
    if isinstance(n, bool) or not isinstance(n, numbers.Integral) or n < 0:
        raise ValueError(f"draw_patients: n must be a non-negative integer, got {n!r}")
    _check_seed("draw_patients", seed)
    if seed is None:
        raise ValueError("draw_patients: seed must be given (an integer), so the draw can be repeated")
    for name, bounds in (("sphere_range_d", sphere_range_d), ("cylinder_range_d", cylinder_range_d)):
        low, high = (_check_finite("draw_patients", name, v) for v in bounds)
        if low > high:
            raise ValueError(f"draw_patients: {name} must be (low, high) with low <= high, got {bounds!r}")
    if "seed" in patient_kwargs:
        raise ValueError("draw_patients: each patient's seed is derived from `seed`; do not pass seed=")
    root = seed if isinstance(seed, np.random.SeedSequence) else np.random.SeedSequence(seed)
    patients = []
    for child in root.spawn(int(n)):
        draws = np.random.default_rng(child)
        sphere_d = float(draws.uniform(*sphere_range_d))
        cylinder_d = float(draws.uniform(*cylinder_range_d))
        patient_seed = int(draws.integers(0, _MAX_CHILD_SEED, endpoint=True))
        patients.append(SimulatedPatient(sphere_d, cylinder_d, seed=patient_seed, **patient_kwargs))
    return patients
