"""How often the full prescription's 95 % intervals hold the patient's correction.

The letter search of the full prescription (``PrescriptionOptimizer``, its default rule) on clinic
patients (``draw_clinic_patients``, slope 14, 26 letters, no accommodation) from an autorefraction
start, as ``lensopt simulate --start auto`` runs it. After 20, 40, 60 and 100 letters it reads the
prescription's 95 % intervals of M, J0 and J45 and counts the patients whose true value lies inside,
with the intervals' median widths (D). Seeds from 100,000 on are held out (no tuning has seen them):

    .venv/bin/python docs/examples/interval_coverage.py --patients 200 --first-seed 100000
"""

from __future__ import annotations

import sys

import numpy as np
from tqdm import tqdm

from lensopt.cli import OneLineParser
from lensopt.cli.arguments import non_negative_int, positive_int
from lensopt.observer import SimulatedPatient, autorefraction, draw_clinic_patients
from lensopt.refraction.prescription_letters import PrescriptionOptimizer
from lensopt.simulation import simulate_prescription

CHECKPOINTS = (20, 40, 60, 100)
COORDINATES = (("m_d", "M"), ("j0_d", "J0"), ("j45_d", "J45"))
SLOPE, N_ALTERNATIVES = 14.0, 26


def patient_and_start(seed: int):
    """Clinic patient ``seed`` and its autorefraction, as ``lensopt simulate --start auto --seed S``."""
    drawn = draw_clinic_patients(1, seed, slope=SLOPE, n_alternatives=N_ALTERNATIVES, lapse=0.0)[0]
    patient = SimulatedPatient(
        drawn.sphere_d,
        drawn.cylinder_d,
        axis_deg=drawn.axis_deg,
        seed=int(np.random.SeedSequence([seed, 1]).generate_state(1)[0]),
        slope=SLOPE,
        n_alternatives=N_ALTERNATIVES,
        lapse=0.0,
    )
    return patient, autorefraction(patient, np.random.SeedSequence([seed, 2]))


def held(intervals: dict, truth) -> tuple[bool, ...]:
    """Whether each of M, J0, J45 of ``truth`` (a power vector) lies in its interval."""
    values = (truth.m_d, truth.j0_d, truth.j45_d)
    return tuple(intervals[key][0] <= v <= intervals[key][1] for (key, _), v in zip(COORDINATES, values))


def run_patient(seed: int, checkpoints=CHECKPOINTS) -> dict[int, tuple[tuple[bool, ...], tuple[float, ...]]]:
    """``{n_letters: (held per coordinate, width per coordinate)}`` for patient ``seed``."""
    patient, start = patient_and_start(seed)
    optimizer = PrescriptionOptimizer(seed=seed, start=start, n_alternatives=N_ALTERNATIVES)
    truth, done, out = patient.correction.power_vector(), 0, {}
    for n in checkpoints:
        simulate_prescription(patient, optimizer, n - done)
        done = n
        intervals = optimizer.prescription().intervals
        widths = tuple(intervals[key][1] - intervals[key][0] for key, _ in COORDINATES)
        out[n] = (held(intervals, truth), widths)
    return out


def table(results: list[dict], checkpoints=CHECKPOINTS) -> list[str]:
    lines = ["letters  patients  held M / J0 / J45      median width M / J0 / J45 (D)"]
    for n in checkpoints:
        inside = np.array([r[n][0] for r in results], dtype=float)
        widths = np.array([r[n][1] for r in results])
        share = " / ".join(f"{v:.3f}" for v in inside.mean(axis=0))
        width = " / ".join(f"{v:.2f}" for v in np.median(widths, axis=0))
        lines.append(f"{n:7d}  {len(results):8d}  {share}    {width}")
    return lines


def main(argv=None) -> int:
    parser = OneLineParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--patients", type=positive_int, default=200)
    parser.add_argument("--first-seed", type=non_negative_int, default=100_000)
    args = parser.parse_args(argv)
    seeds = range(args.first_seed, args.first_seed + args.patients)
    results = [run_patient(seed) for seed in tqdm(seeds, desc="patients", unit="patient", file=sys.stderr)]
    split = "held out" if args.first_seed >= 100_000 else "TUNING seeds"
    print(
        f"seeds {seeds.start}-{seeds.stop - 1} ({split}); slope {SLOPE:g}, {N_ALTERNATIVES} letters, autorefraction start"
    )
    print("\n".join(table(results)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
