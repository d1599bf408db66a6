"""``lensopt simulate`` of the full prescription: the handler's part (its options:
:mod:`lensopt.cli.simulate_prescription`)."""

from __future__ import annotations

import dataclasses
import json
import sys

import numpy as np
from tqdm import tqdm

from lensopt.bench.spec import split_of
from lensopt.cli.simulate_prescription import MAX_PATIENT_POWER_D
from lensopt.observer import SimulatedPatient, autorefraction, draw_clinic_patients
from lensopt.provenance import software
from lensopt.refraction.acuity_text import logmar_text
from lensopt.refraction.lens import PHOROPTER_STEP_D, Lens, diopter_text, off_step_note, parse_lens
from lensopt.refraction.prescription import (
    PHOROPTER_MAX_POWER_D,
    START_J_HALF_WIDTH_D,
    START_M_HALF_WIDTH_D,
    SearchBox,
)
from lensopt.refraction.prescription_duels import PRESCRIPTION_DUEL_RULES, PrescriptionDuelOptimizer
from lensopt.refraction.prescription_letters import PRESCRIPTION_RULES, PrescriptionOptimizer
from lensopt.refraction.prescription_rankings import PRESCRIPTION_RANKING_RULES, PrescriptionRankingOptimizer
from lensopt.simulation import simulate_prescription
from lensopt.stopping import confidence_text, stop_threshold


def what_ran(optimizer, patient: SimulatedPatient, seed: int, drawn: bool) -> dict:
    """What the JSON of a simulated session of ``--seed`` ``seed`` records of how it was computed, so
    that its numbers can be traced and reproduced: the patient's split (``tuning`` below seed 100,000,
    ``held-out`` from it on, as the campaigns'; None when the patient was given, ``drawn`` False:
    ``--true-sphere/--true-cylinder``, drawn from no seed), the patient model's answers (``slope``
    per logMAR, ``lapse``, ``n_alternatives``, ``accommodation_d``), every setting of the optimizer
    (``optimizer_settings``, as a stored session keeps them) and the software that ran."""
    return {
        "split": split_of(seed) if drawn else None,
        "patient_model": {
            "slope_per_logmar": patient.slope,
            "lapse": patient.lapse,
            "n_alternatives": patient.n_alternatives,
            "accommodation_d": patient.accommodation_d,
        },
        "optimizer_settings": optimizer.settings_dict(),
        "software": software(),
    }


def trials_bar(n_trials: int, rule: str) -> tqdm:
    """The session's progress bar on stderr, only when stderr is a terminal: a person waiting sees the
    trials go by; a script reading the JSON, or a log file of stderr, keeps a clean stderr (a
    simulated session takes seconds; its bar in a file is a line of carriage returns)."""
    return tqdm(total=n_trials, desc=f"{rule} trials", unit="trial", file=sys.stderr, disable=None)


def _check_patient_in_box(correction, start, m_half_width_d, j_half_width_d) -> None:
    """Refuse, in one line, a patient (``--true-sphere/--true-cylinder/--true-axis``) beyond a
    phoropter's range or outside the box the search will test (around ``start``, or the full box)."""
    sphere_d, cylinder_d, axis_deg = correction
    for flag, value in (("--true-sphere", sphere_d), ("--true-cylinder", cylinder_d)):
        if abs(value) > MAX_PATIENT_POWER_D:
            raise ValueError(
                f"{flag} {value:g} D is beyond a phoropter's ±{MAX_PATIENT_POWER_D:g} D; give a correction within it"
            )
    box = SearchBox(
        start,
        START_M_HALF_WIDTH_D if m_half_width_d is None else m_half_width_d,
        START_J_HALF_WIDTH_D if j_half_width_d is None else j_half_width_d,
    )
    if not box.contains(Lens(sphere_d, cylinder_d, axis_deg).power_vector()):
        (m_lo, m_hi), (j0_lo, j0_hi), (j45_lo, j45_hi) = box.bounds_d
        where = "the full box" if start is None else f"the box around --start {start.format()}"
        fix = "give a --start near the patient" if start is None else "widen --m-half-width/--j-half-width"
        raise ValueError(
            f"the patient {Lens(sphere_d, cylinder_d, axis_deg).format()} is outside {where} "
            f"(M {m_lo:+g} to {m_hi:+g} D, J0 {j0_lo:+g} to {j0_hi:+g} D, J45 {j45_lo:+g} to {j45_hi:+g} D), "
            f"where no lens could correct it; {fix} or give a patient inside it"
        )


def _check_box_within_phoropter(args, start: Lens) -> None:
    """Refuse, in one line, a box around ``start`` (``--m-half-width``/``--j-half-width``) that
    reaches lenses a phoropter cannot set (a meridian beyond ±20 D): the search would ask for them
    and could prescribe one (as ``lensopt run`` refuses such a ``[start]``)."""
    m_half = START_M_HALF_WIDTH_D if args.m_half_width is None else args.m_half_width
    j_half = START_J_HALF_WIDTH_D if args.j_half_width is None else args.j_half_width
    box = SearchBox(start, m_half, j_half)
    reach = box.meridian_reach_d()
    if abs(reach) <= PHOROPTER_MAX_POWER_D + 1e-9:
        return
    room = box.largest_m_half_width_d()
    fix = f"give --m-half-width {room:.2f} or less" if room >= 0.01 else "narrow --j-half-width and --m-half-width"
    where = "the autorefraction" if args.start.strip().lower() == "auto" else "--start"
    raise ValueError(
        f"the search box around {where} {start.format()} (M ±{m_half:g} D, J0 and J45 ±{j_half:g} D) reaches "
        f"{diopter_text(reach)} D in a meridian, beyond a phoropter's ±{PHOROPTER_MAX_POWER_D:g} D; {fix}"
    )


def run_prescription(args, stop) -> int:
    """``lensopt simulate`` of a full prescription, with the session's :class:`StopRule` (or None)
    and ``args.trials`` already checked by :func:`lensopt.cli.handlers.simulate.run`."""
    if args.feedback not in ("letters", "duel", "ranking"):
        raise ValueError(
            "the full prescription (--true-axis, --start, --accommodation) works with --feedback letters, duel or ranking"
        )
    duel, ranking = args.feedback == "duel", args.feedback == "ranking"
    if ranking:
        rules = PRESCRIPTION_RANKING_RULES
        for flag, given in (
            ("--beta", args.beta is not None),
            ("--tie-threshold", bool(args.tie_threshold)),
            ("--duel-model", args.duel_model != "probit"),
            ("--inference", args.inference is not None),
        ):
            if given:
                raise ValueError(f"{flag} does not apply to the full prescription's rankings")
    elif duel:
        rules = PRESCRIPTION_DUEL_RULES
        if args.duel_model != "probit":
            raise ValueError("the full prescription's duels use the probit model (--duel-model probit)")
        if args.beta is not None:
            raise ValueError("--beta applies to --feedback letters only (the letter rules' exploration); leave it out")
    else:
        rules = PRESCRIPTION_RULES
        if args.tie_threshold or args.duel_model != "probit":
            raise ValueError("--tie-threshold and --duel-model apply to --feedback duel only")
    rule = args.rule
    if rule is not None and rule not in rules:
        raise ValueError(
            f"--rule {rule} does not work with the full prescription's {args.feedback}; choose from: {', '.join(rules)}"
        )
    if (args.true_sphere is None) != (args.true_cylinder is None):
        raise ValueError("give both --true-sphere and --true-cylinder, or neither")
    if args.true_axis is not None:
        if args.true_sphere is None:
            raise ValueError("--true-axis needs --true-sphere and --true-cylinder (or leave all three out)")
        if not 1.0 <= args.true_axis <= 180.0:
            raise ValueError(f"--true-axis {args.true_axis:g} is outside 1-180 degrees: give e.g. 180 (not 0) or 90")
    if args.hyperparameters is not None or args.reference_context != "adaptive":
        raise ValueError("--hyperparameters and --reference-context apply to the two-parameter search only")
    accommodation_d = args.accommodation or 0.0
    common = dict(slope=args.slope, n_alternatives=args.n_alternatives, lapse=args.lapse)
    if args.true_sphere is None:  # run SEED of lensopt bench prescription: its patient, its answers, its start
        patient = dataclasses.replace(draw_clinic_patients(1, args.seed, **common)[0], accommodation_d=accommodation_d)
        start_seed = np.random.SeedSequence([args.seed, 1])  # the campaign's (patient_and_start)
    else:
        axis = 180.0 if args.true_axis is None else args.true_axis
        patient_seed = int(np.random.SeedSequence([args.seed, 1]).generate_state(1)[0])
        patient = SimulatedPatient(
            args.true_sphere,
            args.true_cylinder,
            axis_deg=axis,
            accommodation_d=accommodation_d,
            seed=patient_seed,
            **common,
        )
        start_seed = np.random.SeedSequence([args.seed, 2])
    transposed = False
    if args.start is None:
        start = None
        if args.m_half_width is not None or args.j_half_width is not None:
            raise ValueError("--m-half-width and --j-half-width size the box around --start; give --start too")
    elif args.start.strip().lower() == "auto":
        start = autorefraction(patient, start_seed)
    else:
        written = parse_lens(args.start)
        meridian = max((written.sphere_d, written.sphere_d + written.cylinder_d), key=abs)
        if abs(meridian) > MAX_PATIENT_POWER_D:  # as lensopt run refuses it
            raise ValueError(
                f"--start {args.start!r} has a meridian of {diopter_text(meridian)} D, beyond a phoropter's "
                f"±{MAX_PATIENT_POWER_D:g} D; give a starting refraction within it"
            )
        off_step = off_step_note(written, args.lens_step or PHOROPTER_STEP_D)
        if off_step:  # searched around as typed, as lensopt run does, and said (most likely a typo)
            print(f"note: --start: {off_step}", file=sys.stderr)
        transposed = written.is_plus_cylinder
        start = written.minus_cylinder()
    if start is not None:
        _check_box_within_phoropter(args, start)
    # the patient given, or drawn from the clinic population: inside the box the search tests
    _check_patient_in_box(
        (patient.sphere_d, patient.cylinder_d, patient.axis_deg), start, args.m_half_width, args.j_half_width
    )
    options = {
        "start": start,
        "m_half_width_d": args.m_half_width,
        "j_half_width_d": args.j_half_width,
        "letter_bounds_logmar": tuple(args.letter_bounds),
        **({} if args.lens_step is None else {"lens_step_d": args.lens_step}),
    }
    optimizer: PrescriptionRankingOptimizer | PrescriptionDuelOptimizer | PrescriptionOptimizer
    comparison_model: dict = {}  # the comparison model's settings, in the JSON of a duel or ranking session
    if ranking:
        optimizer = PrescriptionRankingOptimizer(
            rule=rule,
            seed=args.seed,
            n_alternatives=args.n_alternatives,  # the acuity link's guess rate: the letters shown
            **({} if args.model_lapse is None else {"model_lapse": args.model_lapse}),
            **options,
        )
        answers = {"feedback": "ranking"}
        comparison_model = {
            "clarity_link": optimizer.clarity_link,
            "n_alternatives": optimizer.n_alternatives,
            "model_lapse": optimizer.model_lapse,
        }
    elif duel:
        optimizer = PrescriptionDuelOptimizer(
            rule=rule,
            seed=args.seed,
            inference=args.inference or "laplace",
            n_alternatives=args.n_alternatives,  # the acuity link's guess rate: the letters shown
            **({} if args.model_lapse is None else {"model_lapse": args.model_lapse}),
            **options,
        )
        answers = {"feedback": "duel", "tie_threshold": args.tie_threshold}
        comparison_model = {
            "duel_model": "probit",
            "clarity_link": optimizer.clarity_link,
            "n_alternatives": optimizer.n_alternatives,
            "model_lapse": optimizer.model_lapse,
            "tie_threshold": args.tie_threshold,
        }
    else:
        options.update(
            n_alternatives=args.n_alternatives,
            inference=args.inference or "ep",
            stop=stop,
            **({} if args.beta is None else {"beta": args.beta}),
            **({} if args.model_lapse is None else {"lapse": args.model_lapse}),
        )
        optimizer = PrescriptionOptimizer(rule=rule, seed=args.seed, **options)
        answers = {}
    rule = optimizer.rule
    with trials_bar(args.trials, rule) as bar:
        result = simulate_prescription(
            patient, optimizer, args.trials, progress=lambda t: bar.update(1), use_stop=stop is not None, **answers
        )
    if args.json:
        extra = comparison_model
        print(
            json.dumps(
                {
                    "feedback": args.feedback,
                    **extra,
                    "search": "prescription",
                    "start_transposed": transposed,
                    **result.to_dict(),
                    **what_ran(optimizer, patient, args.seed, drawn=args.true_sphere is None),
                }
            )
        )
        return 0

    d = result.to_dict()
    est = d["estimate"]
    error = d["power_vector_error_d"]
    kind = "duels" if duel else "rankings" if ranking else "trials"
    print(f"Simulated full refraction: rule {rule}, seed {args.seed}, {d['trials']} {kind}, slope {args.slope:g}")
    assert patient.axis_deg is not None  # a full prescription's patient has its axis (180 when none was given)
    given = Lens(patient.sphere_d, patient.cylinder_d, patient.axis_deg)  # as written: a drawn one is in minus
    as_given = f"   (written {given.format()}, transposed to minus cylinder)" if given.is_plus_cylinder else ""
    print(f"  patient's correction  {d['true_prescription']}   accommodation {accommodation_d:g} D{as_given}")
    if start is not None:
        note = f"   (written {parse_lens(args.start).format()}, transposed to minus cylinder)" if transposed else ""
        print(f"  starting refraction   {start.format()}{note}")
    print(f"  prescription          {d['prescription']}")
    lens_error = d["lens_error_d"]
    print(
        f"  its error             M {diopter_text(lens_error['M'])} D   J0 {diopter_text(lens_error['J0'])} D   "
        f"J45 {diopter_text(lens_error['J45'])} D   (blur {diopter_text(d['lens_blur_error_d'], signed=False)} D; the lens as written, 0.25 D steps)"
    )
    print(
        f"  estimate's error      M {diopter_text(error['M'])} D   J0 {diopter_text(error['J0'])} D   J45 {diopter_text(error['J45'])} D"
        f"   (blur {diopter_text(d['blur_error_d'], signed=False)} D; before rounding, as the benchmarks score it)"
    )
    intervals = est["intervals"]
    if intervals:
        m_lo, m_hi = intervals["m_d"]
        print(
            f"  95% interval          M {diopter_text(m_lo)} to {diopter_text(m_hi)} D   (J0, J45 in the JSON output)"
        )
    if est["predicted_acuity_logmar"] is not None:
        print(f"  predicted acuity      {logmar_text(est['predicted_acuity_logmar'])} with it")
    if est["confidence"] is not None:
        print(
            f"  confidence            {confidence_text(est['confidence'], stop_threshold(stop))} that it is within 0.025 logMAR of the best lens"
        )
    if d["stopped_at"] is not None:
        print(f"  {stop.describe_stop(d['stopped_at'], est['confidence'], d['letters_through_lens'])}")
    lat = d["latency_ms"]
    print(f"  decision time         median {lat['median']:.1f} ms, p95 {lat['p95']:.1f} ms, max {lat['max']:.1f} ms")
    return 0
