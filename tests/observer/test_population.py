"""The clinic population (lensopt.observer.population): reproducibility, the documented distributions
(checked against independent computations with scipy), Hofstetter's amplitudes and the autorefraction."""

import math

import numpy as np
import pytest
from scipy import integrate, stats

from lensopt.observer import SimulatedPatient, autorefraction, draw_clinic_patients, draw_patients, varied_patient
from lensopt.refraction.lens import Lens

N = 4000

# The documented distributions, written out again here (not read from the module).
M_WEIGHTS, M_MEANS, M_SDS = (0.46, 0.41, 0.13), (0.25, -3.0, 2.0), (0.5, 2.5, 1.5)
CYL_MEAN, CYL_MAX = 0.6, 2.5


def _mixture_cdf(x):
    return sum(w * stats.norm.cdf(x, m, s) for w, m, s in zip(M_WEIGHTS, M_MEANS, M_SDS))


def _mixture_pdf(x):
    return sum(w * stats.norm.pdf(x, m, s) for w, m, s in zip(M_WEIGHTS, M_MEANS, M_SDS))


def _truncated_m_cdf(x):
    x = np.clip(x, -4.0, 4.0)
    return (_mixture_cdf(x) - _mixture_cdf(-4.0)) / (_mixture_cdf(4.0) - _mixture_cdf(-4.0))


def _fields(patient):
    return (
        patient.sphere_d,
        patient.cylinder_d,
        patient.axis_deg,
        patient.seed,
        patient.accommodation_d,
        patient.slope,
    )


@pytest.fixture(scope="module")
def clinic():
    return draw_clinic_patients(N, seed=2026)


def _within(sample_value, expected, standard_error, k=4.0):
    assert abs(sample_value - expected) < k * standard_error, (sample_value, expected, standard_error)


def _check_fraction(flags, p):
    _within(np.mean(flags), p, math.sqrt(p * (1 - p) / len(flags)))


def test_untruncated_mixture_has_the_nhanes_prevalences_it_is_calibrated_to():
    # Vitale et al. 2008: myopia (M <= -1 D) 33.1 %, hyperopia (M >= +3 D) 3.6 %.
    assert _mixture_cdf(-1.0) == pytest.approx(0.331, abs=0.003)
    assert 1 - _mixture_cdf(3.0) == pytest.approx(0.036, abs=0.001)


def test_draw_is_reproducible_prefix_stable_and_accommodation_keeps_the_corrections():
    first = draw_clinic_patients(30, seed=11)
    assert [_fields(p) for p in first] == [_fields(p) for p in draw_clinic_patients(30, seed=11)]
    assert [_fields(p) for p in draw_clinic_patients(7, seed=11)] == [_fields(p) for p in first[:7]]
    assert [_fields(p) for p in draw_clinic_patients(30, seed=12)] != [_fields(p) for p in first]
    seq = draw_clinic_patients(5, seed=np.random.SeedSequence(11))
    assert [_fields(p) for p in seq] == [_fields(p) for p in first[:5]]
    accommodating = draw_clinic_patients(30, seed=11, accommodation=True)
    assert [_fields(p)[:4] for p in accommodating] == [_fields(p)[:4] for p in first]
    assert all(p.accommodation_d == 0.0 for p in first)
    assert len({p.seed for p in first}) == 30


def test_spherical_equivalent_follows_the_truncated_mixture(clinic):
    m = np.array([p.sphere_d + p.cylinder_d / 2 for p in clinic])
    assert m.min() >= -4.0 and m.max() <= 4.0
    mass = _mixture_cdf(4.0) - _mixture_cdf(-4.0)
    mean = integrate.quad(lambda x: x * _mixture_pdf(x), -4, 4)[0] / mass
    var = integrate.quad(lambda x: (x - mean) ** 2 * _mixture_pdf(x), -4, 4)[0] / mass
    _within(m.mean(), mean, math.sqrt(var / N))
    _check_fraction(m <= -1.0, float(_truncated_m_cdf(-1.0)))
    _check_fraction(m >= 3.0, 1.0 - float(_truncated_m_cdf(3.0)))
    _check_fraction(np.abs(m - 0.25) <= 0.5, float(_truncated_m_cdf(0.75) - _truncated_m_cdf(-0.25)))
    assert stats.kstest(m, _truncated_m_cdf).pvalue > 1e-3
    # Leptokurtic: the truncated mixture's excess kurtosis (0.32), within 4 of its normal-theory SEs.
    fourth = integrate.quad(lambda x: (x - mean) ** 4 * _mixture_pdf(x), -4, 4)[0] / mass
    excess_kurtosis = fourth / var**2 - 3
    assert excess_kurtosis > 0.25
    _within(stats.kurtosis(m), excess_kurtosis, math.sqrt(24 / N))


def test_cylinder_is_minus_truncated_exponential(clinic):
    c = -np.array([p.cylinder_d for p in clinic])
    assert c.min() >= 0.0 and c.max() <= CYL_MAX
    kept = 1 - math.exp(-CYL_MAX / CYL_MEAN)

    def pdf(x):
        return math.exp(-x / CYL_MEAN) / CYL_MEAN / kept

    mean = integrate.quad(lambda x: x * pdf(x), 0, CYL_MAX)[0]
    var = integrate.quad(lambda x: (x - mean) ** 2 * pdf(x), 0, CYL_MAX)[0]
    _within(c.mean(), mean, math.sqrt(var / N))
    _check_fraction(c > 0.5, integrate.quad(pdf, 0.5, CYL_MAX)[0])
    _check_fraction(c < 1.5, integrate.quad(pdf, 0, 1.5)[0])
    assert stats.kstest(c, lambda x: np.clip((1 - np.exp(-np.asarray(x) / CYL_MEAN)) / kept, 0, 1)).pvalue > 1e-3


def test_axes_are_whole_degrees_with_the_documented_rule_fractions(clinic):
    axes = np.array([p.axis_deg for p in clinic])
    assert np.all((axes >= 1) & (axes <= 180)) and np.all(axes == np.round(axes))
    from_180 = np.minimum(axes, 180 - axes)  # angular distance from the horizontal
    wtr, atr = from_180 <= 30, np.abs(axes - 90) <= 30
    oblique = ~(wtr | atr)
    _check_fraction(wtr, 0.60)
    _check_fraction(atr, 0.25)
    _check_fraction(oblique, 0.15)
    assert wtr.mean() > atr.mean() > oblique.mean()
    # Oblique axes: uniform on 31-59 and 121-149 (58 values).
    _check_fraction(axes[oblique] > 90, 0.5)
    assert set(np.unique(axes[oblique])) <= set(range(31, 60)) | set(range(121, 150))
    # WTR offsets from 180: normal SD 10 deg truncated at +-30 (rounded), so their SD is close to 10.
    offsets = np.where(axes[wtr] > 90, axes[wtr] - 180, axes[wtr])
    truncated_sd = stats.truncnorm(-30.5 / 10, 30.5 / 10, scale=10).std()
    assert abs(offsets.mean()) < 4 * truncated_sd / math.sqrt(offsets.size)
    assert offsets.std() == pytest.approx(math.sqrt(truncated_sd**2 + 1 / 12), rel=0.06)


def test_accommodation_is_hofstetters_average_for_a_uniform_age():
    patients = draw_clinic_patients(N, seed=7, accommodation=True)
    amplitude = np.array([p.accommodation_d for p in patients])
    low, high = 18.5 - 0.3 * 45, 18.5 - 0.3 * 18
    assert amplitude.min() >= low and amplitude.max() <= high
    _within(amplitude.mean(), (low + high) / 2, (high - low) / math.sqrt(12 * N))
    assert stats.kstest(amplitude, stats.uniform(low, high - low).cdf).pvalue > 1e-3


def test_patient_kwargs_pass_through_and_forbidden_ones_are_refused():
    patients = draw_clinic_patients(3, seed=1, slope=14.0, n_alternatives=10, lapse=0.02, va_best_logmar=-0.1)
    assert all((p.slope, p.n_alternatives, p.lapse, p.va_best_logmar) == (14.0, 10, 0.02, -0.1) for p in patients)
    assert draw_clinic_patients(0, seed=1) == []
    # A second seed cannot reach the patients: Python itself refuses it (seed is a named parameter).
    with pytest.raises(TypeError, match="seed"):
        draw_clinic_patients(2, 0, **{"seed": 3})
    for kwargs, word in (
        ({"axis_deg": 90.0}, "axis_deg="),
        ({"accommodation_d": 1.0}, "accommodation_d="),
        ({"n": -1}, "n must"),
        ({"n": 2.0}, "n must"),
        ({"seed": None}, "seed must"),
        ({"seed": -5}, "seed"),
        ({"accommodation": 1}, "accommodation"),
    ):
        arguments = {"n": 2, "seed": 0, **kwargs}
        with pytest.raises(ValueError, match=word) as error:
            draw_clinic_patients(**arguments)
        assert "\n" not in str(error.value)


def test_autorefraction_errors_have_the_given_sds():
    patient = SimulatedPatient(-2.0, -1.0, axis_deg=170.0)
    truth = patient.correction.power_vector().to_array()
    lenses = [autorefraction(patient, seed) for seed in range(N)]
    assert all(lens.cylinder_d <= 0 for lens in lenses)
    assert all(round(v / 0.25) * 0.25 == v for lens in lenses for v in (lens.sphere_d, lens.cylinder_d))
    assert all(lens.axis_deg == round(lens.axis_deg) and 1 <= lens.axis_deg <= 180 for lens in lenses)
    errors = np.array([lens.power_vector().to_array() for lens in lenses]) - truth
    # Rounding S and C to 0.25 D adds about 0.25²/12 of variance to each (M = S + C/2: x 1.25; J: x 1/8).
    rounding = 0.25**2 / 12
    for column, sd, extra in ((0, 0.4, 1.25 * rounding), (1, 0.2, rounding / 8), (2, 0.2, rounding / 8)):
        expected = math.sqrt(sd**2 + extra)
        _within(errors[:, column].mean(), 0.0, expected / math.sqrt(N))
        _within(errors[:, column].std(), expected, expected / math.sqrt(2 * N))
    for i, j in ((0, 1), (0, 2), (1, 2)):
        assert abs(np.corrcoef(errors[:, i], errors[:, j])[0, 1]) < 4 / math.sqrt(N)


def test_autorefraction_is_deterministic_and_exact_without_error():
    patient = draw_clinic_patients(1, seed=3)[0]
    assert autorefraction(patient, 9) == autorefraction(patient, 9)
    assert autorefraction(patient, np.random.SeedSequence(9)) == autorefraction(patient, 9)
    assert autorefraction(patient, 9) != autorefraction(patient, 10)
    on_grid = SimulatedPatient(-1.5, -0.75, axis_deg=20.0)
    assert autorefraction(on_grid, 4, m_sd_d=0.0, j_sd_d=0.0) == Lens(-1.5, -0.75, 20.0)
    # Plus-cylinder truth: the measurement is the same lens, in minus cylinder.
    plus = SimulatedPatient(-2.0, 1.0, axis_deg=90.0)
    assert autorefraction(plus, 4, m_sd_d=0.0, j_sd_d=0.0) == Lens(-1.0, -1.0, 180.0)
    for kwargs, word in (
        ({"seed": None}, "seed"),
        ({"seed": -1}, "seed"),
        ({"m_sd_d": -0.1}, "m_sd_d"),
        ({"j_sd_d": float("nan")}, "j_sd_d"),
        ({"patient": "-1.00 DS"}, "patient"),
    ):
        arguments = {"patient": patient, "seed": 1, **kwargs}
        with pytest.raises(ValueError, match=word) as error:
            autorefraction(**arguments)
        assert "\n" not in str(error.value)


# varied observers (the robustness benchmark's `varied` condition)


def test_a_varied_patient_keeps_the_correction_of_its_seed_and_draws_its_slope_and_acuity_in_range():
    fixed = draw_patients(1, 100_003, slope=5.0)[0]
    patient = varied_patient(100_003, (2.0, 8.0), (-0.1, 0.3))
    assert (patient.sphere_d, patient.cylinder_d) == (fixed.sphere_d, fixed.cylinder_d)
    assert 2.0 <= patient.slope <= 8.0 and -0.1 <= patient.best_acuity_logmar <= 0.3
    again = varied_patient(100_003, (2.0, 8.0), (-0.1, 0.3))
    assert (again.slope, again.best_acuity_logmar) == (patient.slope, patient.best_acuity_logmar)


def test_slopes_are_log_uniform_and_best_acuities_uniform_over_many_patients():
    patients = [varied_patient(s, (2.0, 8.0), (-0.1, 0.3)) for s in range(3000)]
    slopes = np.array([p.slope for p in patients])
    va = np.array([p.best_acuity_logmar for p in patients])
    # log-uniform on [2, 8]: P(a < 4) = 1/2, P(a < 2√2) = 1/4 (binomial SD <= 0.009 with 3000 patients)
    assert np.mean(slopes < 4.0) == pytest.approx(0.5, abs=0.035)
    assert np.mean(slopes < 2.0 * np.sqrt(2.0)) == pytest.approx(0.25, abs=0.035)
    # uniform on [-0.1, 0.3]: mean 0.1, P(VA0 < 0) = 1/4
    assert va.mean() == pytest.approx(0.1, abs=0.01)
    assert np.mean(va < 0.0) == pytest.approx(0.25, abs=0.035)


def test_a_varied_patient_passes_lapse_and_letters_on_and_refuses_what_it_draws_or_cannot():
    patient = varied_patient(7, lapse=0.05, n_alternatives=10)
    assert (patient.lapse, patient.n_alternatives) == (0.05, 10)
    assert 2.0 <= patient.slope <= 8.0 and -0.1 <= patient.best_acuity_logmar <= 0.3  # the documented defaults
    for kwargs, words in (
        ({"slope": 5.0}, "slope is drawn"),
        ({"slope_range_per_logmar": (8.0, 2.0)}, "0 < low <= high"),
        ({"slope_range_per_logmar": (0.0, 2.0)}, "0 < low <= high"),
        ({"va_best_range_logmar": (0.3, -0.1)}, "low <= high"),
    ):
        with pytest.raises(ValueError, match=words):
            varied_patient(7, **kwargs)
