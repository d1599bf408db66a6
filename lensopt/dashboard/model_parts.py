"""What the dashboard's model panels draw from a fitted optimizer: the lens map, the best lens and
the psychometric curve of a two-parameter search (:func:`compute_model_parts`), and the full
prescription's astigmatism plane and defocus curve (:func:`compute_prescription_view`). Functions
of the optimizer alone; :mod:`lensopt.dashboard.model` decides when they are computed."""

from __future__ import annotations

import math

import numpy as np

from lensopt.dashboard.posterior import CREDIBLE_MASS, LENS_MAP_POINTS, optimizer_bounds, spread_of_samples
from lensopt.dashboard.series import TrialSeries, frozen_array
from lensopt.dashboard.snapshot import NEAR_LENS_RADIUS_D, BestLens, LensMap, PrescriptionView, PsychometricCurve
from lensopt.refraction.acuity_text import measurable_acuity_logmar
from lensopt.refraction.lens import Lens
from lensopt.refraction.optimum_draws import lens_grid
from lensopt.refraction.shown import NO_AXIS_MERIDIAN_DEG, lens_distances_d

#: Letter sizes at which the psychometric curve is drawn.
PSYCHOMETRIC_POINTS = 121
#: Draws of the best lens from the optimizer's posterior (``optimum_draws_d``).
OPTIMUM_SAMPLES = 400
#: Points of the full prescription's astigmatism plane (along J0, along J45) and of its defocus curve.
PLANE_POINTS = (81, 61)
CURVE_POINTS = 81
#: The astigmatism plane's grid spans this many times the search box's width in J0 and in J45
#: (centred on it): the panel, wider than it is tall, shows more than the box, and the map fills it.
PLANE_SPAN = (3.5, 2.5)


def _scalar(value) -> float:
    return float(np.asarray(value, dtype=float).reshape(-1)[0])


def best_acuity(opt):
    sphere_d, cylinder_d = opt.best()
    mean, sd = opt.predicted_acuity_logmar(sphere_d, cylinder_d)
    return float(sphere_d), float(cylinder_d), _scalar(mean), _scalar(sd)


def compute_model_parts(
    opt, trials: TrialSeries, guess_rate: float, rng, floored: bool = False, lapse: float = 0.0
) -> tuple[LensMap, BestLens, PsychometricCurve, tuple[tuple[float, float], tuple[float, float], tuple[float, float]]]:
    """Lens map, best lens and psychometric curve of a fitted optimizer (``opt.model`` not None);
    ``floored`` and ``lapse``: the answer model of :func:`answer_model`."""
    sphere_b, cylinder_b = optimizer_bounds(opt, "sphere_bounds_d"), optimizer_bounds(opt, "cylinder_bounds_d")
    letter_b = optimizer_bounds(opt, "letter_bounds_logmar")
    best_s, best_c, acuity, acuity_sd = best_acuity(opt)
    if measurable_acuity_logmar(acuity, letter_b) is None:  # as the record says: "not predicted"
        # an extrapolation beyond the letters shown (after a few wrong answers, -6 logMAR, "20/0")
        acuity, acuity_sd = math.nan, math.nan

    lenses, _, _ = lens_grid(sphere_b, cylinder_b, LENS_MAP_POINTS)
    mean, sd = opt.predicted_acuity_logmar(lenses[:, 0], lenses[:, 1])
    shape = (LENS_MAP_POINTS, LENS_MAP_POINTS)
    lens_map = LensMap(
        sphere_d=frozen_array(np.linspace(*sphere_b, LENS_MAP_POINTS)),
        cylinder_d=frozen_array(np.linspace(*cylinder_b, LENS_MAP_POINTS)),
        acuity_mean_logmar=frozen_array(np.reshape(mean, shape)),
        acuity_sd_logmar=frozen_array(np.reshape(sd, shape)),
    )

    letters = np.linspace(*letter_b, PSYCHOMETRIC_POINTS)
    spread = spread_of_samples(*opt.optimum_draws_d(OPTIMUM_SAMPLES, rng))
    p_mean, p_low, p_high = (frozen_array(p) for p in opt.psychometric_band(letters, best_s, best_c, CREDIBLE_MASS))
    best = BestLens(sphere_d=best_s, cylinder_d=best_c, acuity_mean_logmar=acuity, acuity_sd_logmar=acuity_sd, **spread)
    # the trials through lenses near the best, by dioptric distance (the power vectors' — the measure of
    # "the nearest lens tried is 0.40 D from this one"): in a two-parameter search every cylinder lies
    # along one meridian, so any will do
    meridian = np.full(len(trials.sphere_d), NO_AXIS_MERIDIAN_DEG)
    tried = np.column_stack([trials.sphere_d, trials.cylinder_d, meridian])
    near = lens_distances_d(tried, (best_s, best_c, NO_AXIS_MERIDIAN_DEG)) <= NEAR_LENS_RADIUS_D
    curve = PsychometricCurve(
        letter_logmar=frozen_array(letters),
        p_mean=p_mean,
        p_low=p_low,
        p_high=p_high,
        guess_rate=guess_rate,
        threshold_logmar=acuity,
        near_letter_logmar=frozen_array(trials.letter_logmar[near]),
        near_correct=frozen_array(trials.correct[near], bool),
        floored=floored,
        lapse_rate=lapse,
    )
    return lens_map, best, curve, (sphere_b, cylinder_b, letter_b)


def _triple(values) -> tuple[float, float, float]:
    return float(values[0]), float(values[1]), float(values[2])


def compute_prescription_view(opt, eye: str | None) -> PrescriptionView:
    """The full prescription's model of one eye (:class:`PrescriptionView`): ``opt`` its
    ``PrescriptionOptimizer`` told its answers (its ``history``: the lenses tried, with axes,
    letters and answers), or its duels' or rankings' optimizer through the acuity link (the lenses
    compared, :func:`_tried`). Both slices run through the reported lens (``opt.best()``): the defocus
    curve across the search box, the astigmatism plane across :data:`PLANE_SPAN` times it (the
    lenses tried reach beyond it, and the panel is wider than the box); acuity from
    ``opt.acuity_logmar``."""
    best = opt.best()
    best_d = np.array([best.m_d, best.j0_d, best.j45_d])
    (m_lo, m_hi), (j0_lo, j0_hi), (j45_lo, j45_hi) = opt.box.bounds_d
    j0 = _spanned(j0_lo, j0_hi, PLANE_SPAN[0], PLANE_POINTS[0])
    j45 = _spanned(j45_lo, j45_hi, PLANE_SPAN[1], PLANE_POINTS[1])
    J0, J45 = np.meshgrid(j0, j45)  # (n_j45, n_j0)
    plane = np.column_stack([np.full(J0.size, best_d[0]), J0.ravel(), J45.ravel()])
    plane_acuity, _ = opt.acuity_logmar(plane)
    m = np.linspace(m_lo, m_hi, CURVE_POINTS)
    curve, curve_sd = opt.acuity_logmar(np.column_stack([m, np.full(m.size, best_d[1]), np.full(m.size, best_d[2])]))
    tested, letters, marks, compared = _tried(opt.history)
    start = opt.box.start
    return PrescriptionView(
        eye=eye or "",
        best_d=_triple(best_d),
        j0_d=frozen_array(j0),
        j45_d=frozen_array(j45),
        plane_acuity_logmar=frozen_array(plane_acuity.reshape(J0.shape)),
        m_d=frozen_array(m),
        curve_acuity_logmar=frozen_array(curve),
        curve_sd_logmar=frozen_array(curve_sd),
        tested_d=frozen_array(np.reshape(tested, (-1, 3))),
        tested_letter_logmar=frozen_array(letters),
        tested_correct=frozen_array(marks, bool),
        start_d=None if start is None else _triple(start.power_vector().to_array()),
        box_j0_d=(float(j0_lo), float(j0_hi)),
        box_j45_d=(float(j45_lo), float(j45_hi)),
        compared=compared,
    )


def _tried(history) -> tuple[list, list[float], list[bool], bool]:
    """``(power vectors, letter sizes, marks, compared)`` of what a full prescription's eye was shown:
    of a letter search each lens tried with its letter and whether it was read right; of a comparison
    search (duels, rankings: ``compared``) every lens of every comparison at its letter size, marked
    when it was judged the clearest (a duel's "the same": none was)."""
    lenses, letters, marks, compared = [], [], [], False
    for trial, answer in history:
        if hasattr(trial, "first_lens"):  # a duel: "first", "second" or "same"
            shown, clearest, compared = [trial.first_lens, trial.second_lens], DUEL_CLEAREST.get(answer), True
        elif hasattr(trial, "lenses"):  # a ranking: the lenses' indices, clearest first
            shown, clearest, compared = list(trial.lenses), int(answer[0]), True
        else:  # letters: read right or not
            shown, clearest = [Lens(trial.sphere_d, trial.cylinder_d, trial.axis_deg)], 0 if answer else None
        for i, lens in enumerate(shown):
            lenses.append(lens.power_vector().to_array())
            letters.append(float(trial.letter_logmar))
            marks.append(i == clearest)
    return lenses, letters, marks, compared


#: The lens of a duel judged the clearer, by the answer (none for "the same").
DUEL_CLEAREST = {"first": 0, "second": 1}


def _spanned(low: float, high: float, span: float, points: int) -> np.ndarray:
    """``points`` points over ``span`` times ``[low, high]``, centred on it."""
    centre, half = 0.5 * (low + high), 0.5 * span * (high - low)
    return np.linspace(centre - half, centre + half, points)
