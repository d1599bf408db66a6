"""The simulated patient: residual blur, the acuity law and letter answers (numpy only)."""

from lensopt.observer.optics import (
    accommodated_blur_d,
    acuity_logmar,
    blur_strength_d,
    normal_cdf,
    power_vector,
    psychometric_p_correct,
    residual_blur_d,
)
from lensopt.observer.patient import SimulatedPatient, check_answer_rates, draw_patients
from lensopt.observer.population import autorefraction, draw_clinic_patients, varied_patient

__all__ = [
    "SimulatedPatient",
    "accommodated_blur_d",
    "acuity_logmar",
    "autorefraction",
    "blur_strength_d",
    "check_answer_rates",
    "draw_clinic_patients",
    "draw_patients",
    "normal_cdf",
    "power_vector",
    "psychometric_p_correct",
    "residual_blur_d",
    "varied_patient",
]
