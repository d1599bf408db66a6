"""When the eye accommodates: the two-parameter letter search (sphere and cylinder along a known
axis, the ``clinical-refraction`` protocol's) on patients who can focus through a lens that is too
minus.

An eye with ``A`` D of accommodation reads as well through every lens up to ``A`` D more minus than
its correction (:func:`lensopt.observer.accommodated_blur_d`): its acuity has a plateau on the minus
side, and the lens to prescribe is the plateau's most-plus end, the correction itself. The
acuity-law optimizer's law (``VA = VA₀ + log10(1 + b²)``) and the GP rules' model have no plateau;
the full prescription's search (``clinical-prescription``) maximizes acuity plus a push to plus
(docs/prescription.md). Held-out patients (seeds from 100,000), slope 5, ``--trials`` letters (80:
the ``clinical-refraction`` protocol's budget); prints, per rule and amplitude ``A``, the reported
lens's spherical-equivalent error (reported − true ``M``, D; negative: too minus), how many
sessions ended 0.5 D or more too minus, and the acuity lost through the reported lens by the
relaxed eye (what a too-minus prescription costs a patient who stops accommodating) and through
the accommodating eye (what the chart shows)::

    .venv/bin/python docs/examples/accommodation.py --patients 40 --accommodation 0 2 4 8

``--clinical``: the acuity-law optimizer with the ``clinical-refraction`` protocol's session settings —
lenses on the phoropter's 0.25 D steps, letters from −0.3 to 1.0 logMAR, stopping once 95 % confident
from 20 letters, at the latest after 80 — but its model's amplitudes only as ``--model-accommodation``
gives them (default 0: the law alone; the protocol's own are ``0 0.5 1 2 4 8``) — and, per amplitude, how many sessions stopped by confidence,
how many of those within 0.025 logMAR of the relaxed eye's best acuity, and the relaxed eye's loss
at the end (median, mean, sessions above 0.1 logMAR)::

    .venv/bin/python docs/examples/accommodation.py --clinical --patients 40 --accommodation 0 4 \
        [--model-accommodation 0 0.5 1 2 4 8]

``--protocol clinical-duel`` (or ``clinical-ranking``, or any protocol file of a two-parameter
search): that protocol's search as it ships — its feedback, rule, trials, bounds and phoropter step,
its simulated patient's "the same" threshold — in place of ``--rules``, the same columns::

    .venv/bin/python docs/examples/accommodation.py --protocol clinical-duel --patients 40 --accommodation 0 1 3 6
"""

from __future__ import annotations

import argparse
import time
from dataclasses import replace

import numpy as np
from tqdm import tqdm

from lensopt.binary.settings import ALL_RULES
from lensopt.cli import OneLineParser
from lensopt.cli.arguments import non_negative_float, non_negative_int, positive_int
from lensopt.errors import LensoptError
from lensopt.experiment.modes import mode_for
from lensopt.experiment.protocol import load_protocol, resolve_protocol_path
from lensopt.observer import draw_patients
from lensopt.refraction import AcuityLawOptimizer, RefractionOptimizer
from lensopt.refraction.acuity_law_settings import ACUITY_LAW_RULE, MAX_ACCOMMODATION_D
from lensopt.simulation import simulate
from lensopt.stopping import ACUITY_TOLERANCE_LOGMAR, StopRule

CLINICAL = {"lens_step_d": 0.25, "letter_bounds_logmar": (-0.3, 1.0)}
"""The clinical-refraction protocol's phoropter step and letter sizes (its stopping rule:
:data:`CLINICAL_STOP`)."""
CLINICAL_STOP = StopRule(confidence=0.95, min_trials=20, max_trials=80)

TOO_MINUS_D = 0.5
"""A spherical-equivalent error this far to minus counts as a too-minus prescription (two
phoropter steps: a clinician's "over-minused")."""

#: The letter rules :func:`new_optimizer` runs: the GP optimizer's and the acuity law's.
RULES = (*ALL_RULES, ACUITY_LAW_RULE)


def amplitude_d(text) -> float:
    """An amplitude of accommodation (D), 0 to :data:`MAX_ACCOMMODATION_D` (as a protocol's)."""
    value = non_negative_float(text)
    if value > MAX_ACCOMMODATION_D:
        raise argparse.ArgumentTypeError(
            f"must be an amplitude of accommodation from 0 to {MAX_ACCOMMODATION_D:g} D, got {text}"
        )
    return value


def new_optimizer(rule: str, seed: int, model_accommodation_d=(0.0,)):
    """The rule's optimizer; the acuity-law one with the prior's amplitudes of accommodation."""
    if rule == "acuity-law":
        return AcuityLawOptimizer(seed=seed, accommodation_d=tuple(model_accommodation_d))
    return RefractionOptimizer(rule=rule, seed=seed)


def spherical_equivalent_d(sphere_d: float, cylinder_d: float) -> float:
    """``M = S + C/2`` (D)."""
    return float(sphere_d) + 0.5 * float(cylinder_d)


def run_session(
    rule: str, accommodation_d: float, seed: int, n_trials: int, model_accommodation_d=(0.0,)
) -> tuple[float, float, float, float]:
    """One session: ``(M error D, relaxed eye's acuity loss, accommodating eye's acuity loss, median
    decision ms)`` at the reported lens after ``n_trials`` letters."""
    relaxed = draw_patients(1, seed, slope=5.0)[0]
    patient = replace(relaxed, accommodation_d=float(accommodation_d))
    opt = new_optimizer(rule, seed, model_accommodation_d)
    decision_ms = []
    for _ in range(n_trials):
        start = time.perf_counter()
        trial = opt.ask()
        asked = time.perf_counter()
        correct = bool(patient.respond(trial.letter_logmar, trial.sphere_d, trial.cylinder_d))
        told = time.perf_counter()
        opt.tell(trial, correct)
        decision_ms.append(1e3 * ((asked - start) + (time.perf_counter() - told)))
    return (*lens_errors(relaxed, patient, opt.best()), float(np.median(decision_ms)))


def lens_errors(relaxed, patient, lens_d) -> tuple[float, float, float]:
    """``(M error D, relaxed eye's acuity loss, accommodating eye's acuity loss)`` of the reported
    ``lens_d`` (sphere, cylinder) for ``patient`` and the same eye ``relaxed``."""
    sphere_d, cylinder_d = lens_d
    m_error_d = spherical_equivalent_d(sphere_d, cylinder_d) - spherical_equivalent_d(*patient.true_correction_d)
    best = patient.best_acuity_logmar
    return (
        m_error_d,
        float(relaxed.visual_acuity(sphere_d, cylinder_d) - best),
        float(patient.visual_acuity(sphere_d, cylinder_d) - best),
    )


def run_protocol_session(protocol, accommodation_d: float, seed: int) -> tuple[float, float, float, float]:
    """One session of ``protocol``'s two-parameter search as it ships (:func:`run_session`'s columns;
    the decision time the simulation's median)."""
    relaxed = draw_patients(1, seed, slope=5.0)[0]
    patient = replace(relaxed, accommodation_d=float(accommodation_d))
    opt = mode_for(protocol).new_optimizer(protocol, seed, protocol.optimizer.letter_bounds_logmar)
    mode = protocol.feedback_mode
    options = {"tie_threshold": protocol.simulated.tie_threshold} if mode == "duel" else {}
    result = simulate(mode, patient, opt, protocol.optimizer.trials, **options)
    return (*lens_errors(relaxed, patient, opt.best()), float(result.latency_ms["median"]))


def run_clinical_session(accommodation_d: float, seed: int, model_accommodation_d=(0.0,)) -> tuple[int | None, float]:
    """One session as ``clinical-refraction`` runs it: ``(the trial it stopped at by confidence, or
    None, the relaxed eye's acuity loss through the reported lens)``."""
    relaxed = draw_patients(1, seed, slope=5.0)[0]
    patient = replace(relaxed, accommodation_d=float(accommodation_d))
    opt = AcuityLawOptimizer(seed=seed, accommodation_d=tuple(model_accommodation_d), stop=CLINICAL_STOP, **CLINICAL)
    stopped_at = None
    while not opt.should_stop():
        trial = opt.ask()
        opt.tell(trial, bool(patient.respond(trial.letter_logmar, trial.sphere_d, trial.cylinder_d)))
    if opt.stop_reason() == "confidence":
        stopped_at = opt.n_trials
    return stopped_at, float(relaxed.visual_acuity(*opt.best()) - relaxed.best_acuity_logmar)


def clinical_table(seeds, amplitudes_d, model_accommodation_d) -> None:
    print("A (D)  stopped  right  relaxed loss med (mean)  > 0.1")
    for amplitude in amplitudes_d:
        rows = [
            run_clinical_session(amplitude, s, model_accommodation_d)
            for s in tqdm(seeds, desc=f"clinical A={amplitude:g}")
        ]
        loss = np.array([r[1] for r in rows])
        stopped = [r for r in rows if r[0] is not None]
        right = sum(r[1] <= ACUITY_TOLERANCE_LOGMAR for r in stopped)
        print(
            f"{amplitude:5.1f}  {len(stopped):>7}  {right:>5}  "
            + f"{np.median(loss):.3f} ({loss.mean():.3f})".ljust(24)
            + f"{int((loss > 0.1).sum()):>5}"
        )


def main(argv=None) -> None:
    parser = OneLineParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--patients", type=positive_int, default=40)
    parser.add_argument("--first-seed", type=non_negative_int, default=100_000)
    parser.add_argument(
        "--accommodation", type=amplitude_d, nargs="+", default=[0.0, 2.0, 4.0, 8.0], help="amplitudes, D"
    )
    parser.add_argument("--rules", nargs="+", choices=RULES, default=["acuity-law", "ucb-ald"])
    parser.add_argument("--trials", type=positive_int, default=80)
    parser.add_argument(
        "--model-accommodation",
        type=amplitude_d,
        nargs="+",
        default=[0.0],
        help="the acuity-law optimizer's prior amplitudes of accommodation, D (default 0: the law alone)",
    )
    parser.add_argument(
        "--clinical",
        action="store_true",
        help="the clinical-refraction protocol's session settings (acuity law); its model's amplitudes "
        "only with --model-accommodation 0 0.5 1 2 4 8",
    )
    parser.add_argument(
        "--protocol", help="a shipped protocol's name or a protocol file: its two-parameter search, in place of --rules"
    )
    args = parser.parse_args(argv)
    try:
        protocol = None if args.protocol is None else load_protocol(resolve_protocol_path(args.protocol))
    except LensoptError as exc:  # a protocol not found or not valid: its one line
        parser.error(f"argument --protocol: {exc}")
    if protocol is not None and protocol.start is not None:
        parser.error(f"--protocol {args.protocol} searches the full prescription; give a two-parameter search's")
    seeds = range(args.first_seed, args.first_seed + args.patients)
    if args.clinical:
        clinical_table(seeds, args.accommodation, args.model_accommodation)
        return
    print(
        f"rule          A (D)  M error med (mean), D  >= {TOO_MINUS_D} D too minus"
        "  loss relaxed med (mean)  loss accommodating med (mean)  decision ms (median)"
    )
    for rule in args.rules if protocol is None else [protocol.optimizer.rule]:
        for amplitude in args.accommodation:
            if protocol is None:
                sessions = (run_session(rule, amplitude, s, args.trials, args.model_accommodation) for s in seeds)
            else:
                sessions = (run_protocol_session(protocol, amplitude, s) for s in seeds)
            rows = np.array(list(tqdm(sessions, total=len(seeds), desc=f"{rule} A={amplitude:g}")))
            m_error, relaxed, accommodating, decision_ms = rows.T
            too_minus = int((m_error <= -TOO_MINUS_D).sum())
            print(
                f"{rule:<12} {amplitude:5.1f}  {np.median(m_error):+.2f} ({m_error.mean():+.2f})".ljust(45)
                + f"{too_minus:>3} of {len(rows):<3}".ljust(22)
                + f"{np.median(relaxed):.3f} ({relaxed.mean():.3f})".ljust(25)
                + f"{np.median(accommodating):.3f} ({accommodating.mean():.3f})".ljust(31)
                + f"{np.median(decision_ms):.1f}"
            )


if __name__ == "__main__":
    main()
