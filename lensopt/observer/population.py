"""Simulated patients who look like an adult optometry clinic, and their autorefraction.

:func:`draw_clinic_patients` draws true corrections from the distributions below (each patient from its
own child of ``np.random.SeedSequence(seed).spawn(n)``, as :func:`lensopt.observer.draw_patients`);
:func:`autorefraction` gives a starting refraction: the truth plus a measurement error.

The distributions (parameters in the module constants; the tests check samples against them):

- **Spherical equivalent M** (D): adult refractive error is leptokurtic, peaked slightly on the plus
  side of emmetropia with a long myopic tail (Sorsby et al. 1957, *Emmetropia and its aberrations*, MRC
  Special Report Series 293; Flitcroft 2014, Eye 28:169–179). Modelled as a three-component normal
  mixture: the emmetropic peak ``0.46 N(+0.25, 0.5²)``, a myopic tail ``0.41 N(−3.0, 2.5²)`` and a
  hyperopic tail ``0.13 N(+2.0, 1.5²)`` (excess kurtosis 0.67). The parameters are ours, chosen so that
  the untruncated mixture has the US adult (≥ 20 years) prevalences of NHANES 1999–2004 (Vitale et al.
  2008, Arch Ophthalmol 126:1111–1119): myopia ``M ≤ −1.0`` D 33.1 % (mixture: 32.9 %), hyperopia
  ``M ≥ +3.0`` D 3.6 % (mixture: 3.6 %); a calibration to two fractions, not a fit to the survey's
  histogram. **Truncated to** ``[−4, +4]`` D (the no-start search box is M in ±4 D): draws outside are
  redrawn, i.e. the mixture conditioned on the box (it keeps 85 % of the mass; then mean ≈ −0.14 D,
  SD ≈ 1.58 D, excess kurtosis ≈ 0.32, P(M ≤ −1) ≈ 22 %, P(M ≥ +3) ≈ 2.8 %).
- **Cylinder** (D, minus cylinder): ``C = −c`` with ``c`` exponential of mean 0.6 D truncated at
  2.5 D (inverse CDF on ``[0, 2.5]``; mean after truncation ≈ 0.56 D). It gives P(c > 0.5 D) ≈ 43 %,
  the adult prevalence of astigmatism in the meta-analysis of Hashemi et al. 2018 (J Curr Ophthalmol
  30:3–22: 40.4 %; the pooled studies' thresholds vary), and P(c ≥ 1.0 D) ≈ 18 %,
  below NHANES's 36.2 % (Vitale et al. 2008), which counts the worse of two eyes and adults to 85,
  whose astigmatism is larger.
- **Axis** (minus-cylinder axis, whole degrees 1–180): with-the-rule astigmatism (axis within 30° of
  180) is the most common in young adults, against-the-rule (within 30° of 90) less, oblique the least;
  the rule shifts towards against-the-rule after about 40 (Read, Collins & Carney 2007, Clin Exp Optom
  90:5–19). Modelled as a mixture of the three classes with probabilities 0.60 (WTR), 0.25 (ATR) and
  0.15 (oblique): WTR and ATR axes 180 or 90 plus a normal offset of SD 10° kept within ±30°, oblique
  axes uniform on 31–59 or 121–149. The class probabilities and the 10° spread are our choice, in the
  order the review reports, not a fit.
- **Varied observers** (:func:`varied_patient`, not the clinic's corrections): the robustness
  benchmark's patients (true correction uniform in [−3, 3]² D, :func:`lensopt.observer.draw_patients`)
  with a psychometric slope log-uniform on :data:`VARIED_SLOPE_RANGE_PER_LOGMAR` (2–8 per logMAR, the
  acuity-law optimizer's prior range) and a best acuity uniform on :data:`VARIED_VA_BEST_RANGE_LOGMAR`
  (−0.1 to 0.3 logMAR), so that a stopping rule is judged on observers who differ as patients do.
- **Accommodation** (``accommodation=True``): an age uniform on 18–45 years and Hofstetter's average
  amplitude ``18.5 − 0.3 × age`` D (Hofstetter 1950, "A useful age-amplitude formula", Optom World
  38:42–45), so 5.0–13.1 D. Otherwise 0 (the age is drawn anyway, so that a patient's correction and
  response seed are the same with and without accommodation).

The autorefraction error (default SD 0.4 D in M, 0.2 D in each of J0 and J45, independent Gaussians)
is the issue's choice, of the order of autorefractor–subjective differences, not fitted to a study.
"""

from __future__ import annotations

import math
import numbers

import numpy as np

from lensopt.observer.patient import _MAX_CHILD_SEED, SimulatedPatient, _check_finite, _check_seed, draw_patients
from lensopt.refraction.lens import PHOROPTER_STEP_D, Lens, PowerVector

__all__ = ["autorefraction", "draw_clinic_patients", "varied_patient"]

#: Spherical-equivalent mixture: weights, means (D) and standard deviations (D) of its components.
M_MIXTURE_WEIGHTS = (0.46, 0.41, 0.13)
M_MIXTURE_MEANS_D = (0.25, -3.0, 2.0)
M_MIXTURE_SDS_D = (0.5, 2.5, 1.5)
#: The box the spherical equivalent is truncated to (D).
M_RANGE_D = (-4.0, 4.0)

#: Mean (D) of the exponential cylinder magnitude, and its truncation (D).
CYLINDER_MEAN_D = 0.6
CYLINDER_MAX_D = 2.5

#: Probabilities of with-the-rule, against-the-rule and oblique axes.
AXIS_CLASS_WEIGHTS = (0.60, 0.25, 0.15)
#: SD (degrees) of a WTR or ATR axis about 180 or 90, and the largest offset kept (degrees).
AXIS_SD_DEG = 10.0
AXIS_RULE_HALF_WIDTH_DEG = 30

#: Ages (years) of an accommodating patient, and Hofstetter's average amplitude ``a − b × age`` (D).
AGE_RANGE_YEARS = (18.0, 45.0)
HOFSTETTER_AVERAGE = (18.5, 0.3)

#: Psychometric slope (per logMAR) of a clinic patient when none is given: human letter acuity is
#: steep (the full prescription's campaigns and ``lensopt simulate`` of it).
CLINIC_SLOPE_PER_LOGMAR = 14.0

#: Ranges of a varied patient's slope (per logMAR, log-uniform) and best acuity (logMAR, uniform).
VARIED_SLOPE_RANGE_PER_LOGMAR = (2.0, 8.0)
VARIED_VA_BEST_RANGE_LOGMAR = (-0.1, 0.3)
#: Spawn key of the stream a varied patient's slope and best acuity come from (apart from its correction's).
VARIED_DRAW_STREAM = 0x5A17

#: Patient fields the population sets itself (a second ``seed=`` is already a TypeError: ``seed`` is a parameter).
_FORBIDDEN_KWARGS = {
    "axis_deg": "each patient's axis is drawn",
    "accommodation_d": "the amplitude is drawn (accommodation=True) or 0",
}


def _round_half_up(value: float) -> int:
    return math.floor(value + 0.5)


def _draw_spherical_equivalent(rng: np.random.Generator) -> float:
    """One M (D) from the mixture conditioned on ``M_RANGE_D`` (redrawn until inside)."""
    low, high = M_RANGE_D
    while True:
        k = int(rng.choice(len(M_MIXTURE_WEIGHTS), p=M_MIXTURE_WEIGHTS))
        m_d = float(rng.normal(M_MIXTURE_MEANS_D[k], M_MIXTURE_SDS_D[k]))
        if low <= m_d <= high:
            return m_d


def _draw_cylinder_magnitude(rng: np.random.Generator) -> float:
    """One cylinder magnitude (D, >= 0): exponential of mean ``CYLINDER_MEAN_D`` on ``[0, CYLINDER_MAX_D]``."""
    kept = -math.expm1(-CYLINDER_MAX_D / CYLINDER_MEAN_D)  # the exponential's mass on [0, max]
    return float(-CYLINDER_MEAN_D * math.log1p(-rng.random() * kept))


def _draw_axis(rng: np.random.Generator) -> float:
    """One minus-cylinder axis (whole degrees, 1–180) from the WTR / ATR / oblique mixture."""
    k = int(rng.choice(3, p=AXIS_CLASS_WEIGHTS))
    if k < 2:
        centre = 180 if k == 0 else 90
        while True:  # an offset that rounds to at most the half width
            offset = float(rng.normal(0.0, AXIS_SD_DEG))
            if abs(offset) < AXIS_RULE_HALF_WIDTH_DEG + 0.5:
                break
        axis = centre + _round_half_up(offset)
    else:  # oblique: uniform on [30.5, 59.5) or [120.5, 149.5), i.e. 31–59 or 121–149 after rounding
        side = 0 if rng.random() < 0.5 else 90
        axis = side + _round_half_up(rng.uniform(AXIS_RULE_HALF_WIDTH_DEG + 0.5, 90 - AXIS_RULE_HALF_WIDTH_DEG - 0.5))
    return float((axis - 1) % 180 + 1)


def draw_clinic_patients(n, seed, *, accommodation=False, **patient_kwargs) -> list[SimulatedPatient]:
    """``n`` patients of an adult optometry clinic (distributions in the module docstring).

    Patient ``i`` draws its spherical equivalent, cylinder, axis, response seed and age, in that order,
    from child ``i`` of ``np.random.SeedSequence(seed).spawn(n)``: the first ``k`` patients do not depend
    on ``n``, nor their corrections on ``accommodation``. The sphere is ``M − C/2`` (minus cylinder ``C``).
    With ``accommodation=True`` the amplitude is Hofstetter's average for the age, else 0. Further
    keyword arguments (``slope``, ``n_alternatives``, ``lapse``, ``va_best_logmar``) go to every
    :class:`~lensopt.observer.SimulatedPatient`.
    """
    owner = "draw_clinic_patients"
    if isinstance(n, bool) or not isinstance(n, numbers.Integral) or n < 0:
        raise ValueError(f"{owner}: n must be a non-negative integer, got {n!r}")
    _check_seed(owner, seed)
    if seed is None:
        raise ValueError(f"{owner}: seed must be given (an integer), so the draw can be repeated")
    if not isinstance(accommodation, bool):
        raise ValueError(f"{owner}: accommodation must be True or False, got {accommodation!r}")
    for name, why in _FORBIDDEN_KWARGS.items():
        if name in patient_kwargs:
            raise ValueError(f"{owner}: {why}; do not pass {name}=")
    root = seed if isinstance(seed, np.random.SeedSequence) else np.random.SeedSequence(seed)
    intercept_d, slope_d_per_year = HOFSTETTER_AVERAGE
    patients = []
    for child in root.spawn(int(n)):
        draws = np.random.default_rng(child)
        m_d = _draw_spherical_equivalent(draws)
        cylinder_d = -_draw_cylinder_magnitude(draws) + 0.0
        axis_deg = _draw_axis(draws)
        patient_seed = int(draws.integers(0, _MAX_CHILD_SEED, endpoint=True))
        age_years = float(draws.uniform(*AGE_RANGE_YEARS))
        amplitude_d = intercept_d - slope_d_per_year * age_years if accommodation else 0.0
        patients.append(
            SimulatedPatient(
                m_d - 0.5 * cylinder_d,
                cylinder_d,
                seed=patient_seed,
                axis_deg=axis_deg,
                accommodation_d=amplitude_d,
                **patient_kwargs,
            )
        )
    return patients


def varied_patient(
    seed: int,
    slope_range_per_logmar=VARIED_SLOPE_RANGE_PER_LOGMAR,
    va_best_range_logmar=VARIED_VA_BEST_RANGE_LOGMAR,
    **patient_kwargs,
) -> SimulatedPatient:
    """The patient of ``seed`` whose slope and best acuity vary (module docstring): the correction and
    response seed of ``draw_patients(1, seed)``, a slope log-uniform on ``slope_range_per_logmar`` and a
    best acuity uniform on ``va_best_range_logmar``, both from ``default_rng([seed, VARIED_DRAW_STREAM])``.
    Further keyword arguments (``lapse``, ``n_alternatives``) go to the :class:`SimulatedPatient`."""
    owner = "varied_patient"
    _check_seed(owner, seed)
    if seed is None or isinstance(seed, np.random.SeedSequence):
        raise ValueError(f"{owner}: seed must be an integer, so the draw can be repeated")
    for name in ("slope", "va_best_logmar"):
        if name in patient_kwargs:
            raise ValueError(f"{owner}: the {name} is drawn; do not pass {name}=")
    (slope_low, slope_high), (va_low, va_high) = (
        tuple(_check_finite(owner, name, v) for v in bounds)
        for name, bounds in (
            ("slope_range_per_logmar", slope_range_per_logmar),
            ("va_best_range_logmar", va_best_range_logmar),
        )
    )
    if not 0 < slope_low <= slope_high:
        raise ValueError(
            f"{owner}: slope_range_per_logmar must be (low, high) with 0 < low <= high, got {slope_range_per_logmar!r}"
        )
    if va_low > va_high:
        raise ValueError(
            f"{owner}: va_best_range_logmar must be (low, high) with low <= high, got {va_best_range_logmar!r}"
        )
    draws = np.random.default_rng([seed, VARIED_DRAW_STREAM])
    slope = float(np.exp(draws.uniform(math.log(slope_low), math.log(slope_high))))
    va_best_logmar = float(draws.uniform(va_low, va_high))
    return draw_patients(1, seed, slope=slope, va_best_logmar=va_best_logmar, **patient_kwargs)[0]


def autorefraction(patient: SimulatedPatient, seed, *, m_sd_d=0.4, j_sd_d=0.2) -> Lens:
    """A starting refraction for ``patient``: the power vector of :attr:`SimulatedPatient.correction`
    plus independent Gaussian errors (SD ``m_sd_d`` in M, ``j_sd_d`` in each of J0 and J45), as a
    minus-cylinder lens rounded to the phoropter (0.25 D, axis 1°).

    Deterministic from ``seed`` (a non-negative integer or a ``np.random.SeedSequence``): the three
    standard-normal errors are drawn first and then scaled, so one seed gives errors proportional to the SDs.
    """
    owner = "autorefraction"
    if not isinstance(patient, SimulatedPatient):
        raise ValueError(f"{owner}: patient must be a SimulatedPatient, got {type(patient).__name__}")
    _check_seed(owner, seed)
    if seed is None:
        raise ValueError(f"{owner}: seed must be given (an integer or a SeedSequence), so the draw can be repeated")
    sds = []
    for name, value in (("m_sd_d", m_sd_d), ("j_sd_d", j_sd_d)):
        value = _check_finite(owner, name, value)
        if value < 0:
            raise ValueError(f"{owner}.{name} must be >= 0 (diopters), got {value!r}")
        sds.append(value)
    m_sd, j_sd = sds
    z = np.random.default_rng(seed).standard_normal(3)
    truth = patient.correction.power_vector()
    measured = PowerVector(
        truth.m_d + m_sd * float(z[0]), truth.j0_d + j_sd * float(z[1]), truth.j45_d + j_sd * float(z[2])
    )
    return Lens.from_power_vector(measured).rounded(PHOROPTER_STEP_D, 1.0)
