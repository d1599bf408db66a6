"""Golden decisions: the first trials of seeded simulated sessions of every optimizer, as JSON.

Each family below names an optimizer class, the rules (and options) recorded, how a query is
written as JSON, and how lensopt's simulated patient (:func:`lensopt.simulation.make_patient`,
seeded) answers it. A session (:func:`lensopt.asktell.run_session`) asks, lets the patient
answer, tells, for ``n_trials`` trials, then reports the optimizer's ``best()``. ``tests/golden/test_golden_decisions.py`` replays every
recorded session, telling the recorded answers, and asserts that each query and the best point
are equal (floats to :data:`REL_TOL`).

**BLAS kernels.** The decisions depend on the BLAS kernel in their last bits: OpenBLAS picks its
kernel for the processor (threadpoolctl's ``architecture``: ``Haswell`` on an AVX2 machine,
``SkylakeX`` on an AVX-512 one), a different kernel sums in another order, and the searches carry
the difference (~1e-9 after a few dozen trials) into later decisions, now and then across a near
tie. numpy's ufuncs do the same where they run AVX-512 code, whatever OpenBLAS chose, so the
kernel's name ends in ``-numpy-AVX512`` there (:func:`blas_kernel`). So each golden file holds the sessions of one kernel, ``<family>.<kernel>.json`` (its
``blas_kernel``). (The files recorded before kernels were noted, ``<family>.json``, held the sessions of
``openblas-SkylakeX-numpy-AVX512`` to the last bit, checked on such a machine on 3 Dec 2026, and were
replaced by that kernel's files.)
The test compares strictly with the file of this machine's kernel; without one, with another
kernel's where it agrees, and skips (saying how to record) where it does not.

Regenerate every file (after a change that is meant to change decisions, and say so)::

    .venv/bin/python -m tests.golden.record            # all families: this kernel's files, the others removed
    .venv/bin/python -m tests.golden.record letters    # some of them
    .venv/bin/python -m tests.golden.record --add      # a new machine, no change: add this kernel's files
"""

from __future__ import annotations

import json
import math
import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import numpy as np
from threadpoolctl import threadpool_info, threadpool_limits

from lensopt.asktell import run_session
from lensopt.binary.optimizer import ContextualOptimizer
from lensopt.modes.registry import get_mode
from lensopt.observer import autorefraction, draw_clinic_patients
from lensopt.preference import DuelQuery, PreferenceOptimizer
from lensopt.preference.copeland import CopelandOptimizer
from lensopt.ranking import RankingOptimizer, RankingQuery
from lensopt.refraction.acuity_law import AcuityLawOptimizer
from lensopt.refraction.duels import DuelRefractionOptimizer, DuelTrial
from lensopt.refraction.letters import PAPER_LETTER_MODEL, RefractionOptimizer
from lensopt.refraction.prescription_duels import PrescriptionDuelOptimizer
from lensopt.refraction.prescription_letters import PrescriptionOptimizer
from lensopt.refraction.prescription_rankings import PrescriptionRankingOptimizer
from lensopt.refraction.rankings import RankingRefractionOptimizer
from lensopt.refraction.trial import Trial
from lensopt.simulation import make_patient

FORMAT = "lensopt.golden-decisions/1"
"""Format tag of a golden file."""
FOLDER = Path(__file__).resolve().parent
"""Where the golden files live (``<family>.json``)."""
SEEDS = (0, 1, 2, 3, 4)
"""Seeds of the optimizer and of its simulated patient."""
N_TRIALS = 40
"""Trials recorded per session (fewer for a slow rule, named in its config)."""
REL_TOL = 1e-9
"""Relative tolerance of a recorded float; :data:`ABS_TOL` near zero."""
ABS_TOL = 1e-12
LENS_STEP_D = 0.25
"""Phoropter step of the refraction optimizers (their proposed lenses are rounded to it)."""
LENS_BOUNDS_D = ((-4.0, 4.0), (-4.0, 4.0))
"""Sphere and cylinder bounds of the benchmark-level optimizers (those of the refraction ones)."""
LETTER_BOUNDS_LOGMAR = ((-1.0, 2.0),)
"""Context bounds of the benchmark-level optimizers: the letter size."""
FIXED_LETTER_LOGMAR = 0.3
"""Letter size at which the patient compares lenses for an optimizer without a context."""
TIE_THRESHOLD = 0.5
"""The patient's tie threshold in duels with the tie model (some answers are "same")."""


def _floats(values) -> list:
    return np.asarray(values, dtype=float).tolist()


def _best(optimizer) -> list:
    """The optimizer's best point as floats (a power vector's ``[M, J0, J45]``)."""
    best = optimizer.best()
    return _floats(best.to_array() if hasattr(best, "to_array") else best)


@dataclass(frozen=True)
class Family:
    """One optimizer class and the rules recorded with it.

    ``configs``: name → constructor options (``n_trials`` among them overrides :data:`N_TRIALS`);
    ``make(options, seed)``: the optimizer; ``encode(query)``: the query as JSON;
    ``answer(patient, query, options)``: the patient's answer, as ``optimizer.tell`` takes it;
    ``decode(answer)``: that answer from its JSON; ``patient(seed)``: the simulated patient.
    """

    name: str
    optimizer: str
    configs: dict
    make: Callable
    encode: Callable
    answer: Callable
    decode: Callable = lambda answer: answer
    notes: str = ""
    patient: Callable = make_patient  # seed -> the simulated patient who answers


# ---------------------------------------------------------------------------------- letters
def _letter_answer(patient, trial: Trial, options):
    return bool(patient.respond(trial.letter_logmar, trial.sphere_d, trial.cylinder_d))


LETTERS = Family(
    name="letters",
    optimizer="RefractionOptimizer",
    configs={
        "ucb-ald": {"rule": "ucb-ald"},
        "ts-ald": {"rule": "ts-ald"},
        "bald": {"rule": "bald"},
        "ucb-ald-paper-model": {"rule": "ucb-ald", "paper_model": True},
    },
    make=lambda o, seed: RefractionOptimizer(
        o["rule"], seed, lens_step_d=LENS_STEP_D, **(PAPER_LETTER_MODEL if o.get("paper_model") else {})
    ),
    encode=lambda t: {"letter_logmar": t.letter_logmar, "sphere_d": t.sphere_d, "cylinder_d": t.cylinder_d},
    answer=_letter_answer,
    notes="issue 14's letter model (floored, EP) unless paper_model: PAPER_LETTER_MODEL; lenses to 0.25 D",
)


ACUITY_LAW = Family(
    name="acuity-law",
    optimizer="AcuityLawOptimizer",
    configs={"acuity-law": {}},
    make=lambda o, seed: AcuityLawOptimizer(seed=seed, lens_step_d=LENS_STEP_D),
    encode=LETTERS.encode,
    answer=_letter_answer,
    notes="the acuity-law letter optimizer (grid Bayes, slopes 2/4/8, best acuity on its grid); lenses to 0.25 D",
)


# ------------------------------------------------------------------------------------ duels
def _duel_answer(patient, trial: DuelTrial, options):
    threshold = TIE_THRESHOLD if options.get("model") == "ties" else 0.0
    return patient.duel_answer(trial.letter_logmar, trial.first_lens_d, trial.second_lens_d, tie_threshold=threshold)


DUELS = Family(
    name="duels",
    optimizer="DuelRefractionOptimizer",
    configs={
        "muc-ald": {"rule": "muc-ald"},
        "kss-ald": {"rule": "kss-ald"},
        "ties-mpes-ald": {"rule": "mpes-ald", "model": "ties", "n_trials": 20},
    },
    make=lambda o, seed: DuelRefractionOptimizer(
        o["rule"], seed, lens_step_d=LENS_STEP_D, model=o.get("model", "probit")
    ),
    encode=lambda t: {
        "letter_logmar": t.letter_logmar,
        "first_lens_d": list(t.first_lens_d),
        "second_lens_d": list(t.second_lens_d),
    },
    answer=_duel_answer,
    notes=f"answers from SimulatedPatient.duel_answer (Gumbel); tie threshold {TIE_THRESHOLD} with the tie model "
    "(slow: 20 trials)",
)


# --------------------------------------------------------------------------------- rankings
RANKINGS = Family(
    name="rankings",
    optimizer="RankingRefractionOptimizer",
    configs={"mpes-ald": {"rule": "mpes-ald", "n_trials": 20}, "random": {"rule": "random"}},
    make=lambda o, seed: RankingRefractionOptimizer(o["rule"], seed, lens_step_d=LENS_STEP_D),
    encode=lambda t: {"letter_logmar": t.letter_logmar, "lenses_d": [list(lens) for lens in t.lenses_d]},
    answer=lambda patient, t, o: patient.rank_lenses(t.letter_logmar, t.lenses_d),
    decode=tuple,
    notes="three lenses, the patient orders all of them (SimulatedPatient.rank_lenses); mpes-ald (slow) for 20 trials",
)


# -------------------------------------------------------- the full prescription, from a start
def _clinic(seed: int):
    """The clinic patient of ``seed`` (slope 14, lapse 0, accommodation) and its autorefraction,
    as ``lensopt bench prescription`` draws them."""
    patient = draw_clinic_patients(1, seed, slope=14.0)[0]
    return patient, autorefraction(patient, np.random.SeedSequence([seed, 1]))


def _lens(lens) -> list:
    return [lens.sphere_d, lens.cylinder_d, lens.axis_deg]


def _prescription_family(
    name, optimizer, rule, n_trials, mode, encode_lenses, decode=lambda a: a, slow="", variants=None
):
    """A family of the full prescription: ``optimizer(rule=, seed=, start=)`` from the clinic patient's
    autorefraction, the trial's letter size and lenses encoded, answered by lensopt's ``mode``;
    ``variants`` (config name → options) also records the rule with other options."""
    configs = {rule: {"rule": rule, "n_trials": n_trials}}
    for variant, options in (variants or {}).items():
        configs[variant] = {"rule": rule, "n_trials": n_trials, "options": options}
    return Family(
        name=name,
        optimizer=optimizer.__name__,
        configs=configs,
        make=lambda o, seed: optimizer(rule=o["rule"], seed=seed, start=_clinic(seed)[1], **o.get("options", {})),
        encode=lambda t: {"letter_logmar": t.letter_logmar, "lenses": encode_lenses(t)},
        answer=lambda patient, trial, options: get_mode(mode).respond(patient, trial),
        decode=decode,
        notes=f"clinic patients (slope 14) from their autorefraction, answered by lensopt's own mode ({mode}); "
        f"{n_trials} trials{slow}",
        patient=lambda seed: _clinic(seed)[0],
    )


PRESCRIPTION_LETTERS = _prescription_family(
    "prescription-letters",
    PrescriptionOptimizer,
    "bracket-ald",
    30,
    "letters",
    lambda t: [[t.sphere_d, t.cylinder_d, t.axis_deg]],
)
PRESCRIPTION_DUELS = _prescription_family(
    "prescription-duels",
    PrescriptionDuelOptimizer,
    "muc-ald",
    30,
    "duel",
    lambda t: [_lens(t.first_lens), _lens(t.second_lens)],
    variants={"muc-ald linear": {"clarity_link": "linear"}},
)
PRESCRIPTION_RANKINGS = _prescription_family(
    "prescription-rankings",
    PrescriptionRankingOptimizer,
    "mpes-ald",
    15,
    "ranking",
    lambda t: [_lens(lens) for lens in t.lenses],
    decode=tuple,
    slow=" (slow)",
    variants={"mpes-ald linear": {"clarity_link": "linear"}},
)


# ------------------------------------------------------------- benchmark-level: binary
CONTEXTUAL = Family(
    name="contextual",
    optimizer="ContextualOptimizer",
    configs={"ucb-ald": {"rule": "ucb-ald"}, "cbkg": {"rule": "cbkg", "n_trials": 12}},
    make=lambda o, seed: ContextualOptimizer(LENS_BOUNDS_D, LETTER_BOUNDS_LOGMAR, rule=o["rule"], seed=seed),
    encode=lambda q: {"context": _floats(q.context), "system": _floats(q.system)},
    answer=lambda patient, q, o: bool(patient.respond(float(q.context[0]), *map(float, q.system))),
    notes="system = (sphere_d, cylinder_d), context = letter_logmar, default kernel and Laplace; "
    "cbkg (knowledge gradient, ~0.1 s a decision) for 12 trials",
)


# --------------------------------------------------------------------- benchmark-level: duels
def _preference_answer(patient, query: DuelQuery, options):
    letter = float(query.context[0]) if query.context.size else FIXED_LETTER_LOGMAR
    members = np.asarray(query.members, float)
    if len(members) == 2:
        return int(patient.prefer_first(letter, members[0], members[1]))
    return [((i, j), int(patient.prefer_first(letter, members[i], members[j]))) for i, j in query.pairs]


def _preference_decode(answer):
    return answer if isinstance(answer, int) else [((i, j), c) for (i, j), c in answer]


PREFERENCE = Family(
    name="preference",
    optimizer="PreferenceOptimizer",
    configs={
        "muc": {"rule": "muc", "n_trials": 20},
        "kss-batch-3": {"rule": "kss", "batch_size": 3, "n_trials": 20},
        "kss-ald": {"rule": "kss-ald", "contextual": True, "n_trials": 20},
    },
    make=lambda o, seed: PreferenceOptimizer(
        LENS_BOUNDS_D,
        LETTER_BOUNDS_LOGMAR if o.get("contextual") else (),
        rule=o["rule"],
        seed=seed,
        batch_size=o.get("batch_size", 2),
    ),
    encode=lambda q: {"context": _floats(q.context), "members": _floats(q.members)},
    answer=_preference_answer,
    decode=_preference_decode,
    notes=f"members are lenses; probit answers (SimulatedPatient.prefer_first), at {FIXED_LETTER_LOGMAR} "
    "logMAR without a context; a batch of 3 answers its 3 pairs; 20 trials (the contextual rules "
    "run 40 trials inside the duels family)",
)


COPELAND = Family(
    name="copeland",
    optimizer="CopelandOptimizer",
    configs={
        "dueling-ts": {"rule": "dueling-ts", "n_trials": 20},
        "pure-exploration": {"rule": "pure-exploration", "n_trials": 20},
        "copeland-ei": {"rule": "copeland-ei", "n_trials": 12},
    },
    make=lambda o, seed: CopelandOptimizer(LENS_BOUNDS_D, rule=o["rule"], seed=seed),
    encode=lambda q: {"members": _floats(q.members)},
    answer=lambda patient, q, o: int(patient.prefer_first(FIXED_LETTER_LOGMAR, *q.members)),
    notes=f"members are lenses compared at {FIXED_LETTER_LOGMAR} logMAR; 20 trials, copeland-ei (slow) 12",
)


# -------------------------------------------------------------------- benchmark-level: rankings
def _ranking_answer(patient, query: RankingQuery, options):
    letter, members = float(query.context[0]), np.asarray(query.members, float)
    if options.get("ties"):
        answer = patient.duel_answer(letter, members[0], members[1], tie_threshold=TIE_THRESHOLD)
        return {"first": 0, "second": 1, "same": "same"}[answer]
    return patient.rank_lenses(letter, members, k=2)


RANKING = Family(
    name="ranking",
    optimizer="RankingOptimizer",
    configs={
        "mpes-top2-of-3": {"rule": "mpes", "n_trials": 12},
        "mpes-ties": {"rule": "mpes", "ties": True, "n_trials": 12},
    },
    make=lambda o, seed: (
        RankingOptimizer(LENS_BOUNDS_D, LETTER_BOUNDS_LOGMAR, set_size=2, allow_ties=True, rule=o["rule"], seed=seed)
        if o.get("ties")
        else RankingOptimizer(
            LENS_BOUNDS_D, LETTER_BOUNDS_LOGMAR, set_size=3, allow_ties=False, top_k=2, rule=o["rule"], seed=seed
        )
    ),
    encode=lambda q: {"context": _floats(q.context), "members": _floats(q.members)},
    answer=_ranking_answer,
    decode=lambda a: a if isinstance(a, (int, str)) else tuple(a),
    notes="members are lenses, context the letter size: top-2 of 3 lenses, or duels with ties "
    f"(tie threshold {TIE_THRESHOLD}); 12 trials (the same model runs 20 trials inside the rankings "
    "and duels families)",
)

FAMILIES = {
    f.name: f
    for f in (
        LETTERS,
        ACUITY_LAW,
        DUELS,
        RANKINGS,
        PRESCRIPTION_LETTERS,
        PRESCRIPTION_DUELS,
        PRESCRIPTION_RANKINGS,
        CONTEXTUAL,
        PREFERENCE,
        COPELAND,
        RANKING,
    )
}
"""Every family, by the name of its golden file."""


# ----------------------------------------------------------------------------- record/replay
def n_trials(options: dict) -> int:
    return int(options.get("n_trials", N_TRIALS))


def record_session(family: Family, config: str, seed: int) -> dict:
    """One simulated session: its queries, the patient's answers and the best point at the end."""
    options = family.configs[config]
    optimizer = family.make(options, seed)
    patient = family.patient(seed)
    trials = []

    def on_trial(t, query, answer):
        trials.append({"query": family.encode(query), "answer": json.loads(json.dumps(answer))})

    run_session(optimizer, lambda query: family.answer(patient, query, options), n_trials(options), on_trial)
    return {"config": config, "seed": seed, "trials": trials, "best": _best(optimizer)}


def blas_kernel() -> str:
    """The kernels this process's decisions depend on in their last bits: the BLAS kernel,
    ``openblas-<architecture>`` (e.g. ``openblas-Haswell``; the library's name where it reports no
    architecture: MKL, Accelerate), followed by ``-numpy-AVX512`` where numpy dispatches its ufuncs
    (``exp``, ``log``, ``sin``, ...) to AVX-512 code. OpenBLAS may choose its AVX2 ``Haswell`` kernels
    on an AVX-512 processor (an AMD EPYC of family 26, 29 Nov 2026) while numpy uses AVX-512 there,
    and the two machines' decisions part after a few dozen trials (~1e-8), as two BLAS kernels' do."""
    name = "unknown"
    for library in threadpool_info():
        if library.get("user_api") == "blas":
            architecture = library.get("architecture")
            name = f"{library['internal_api']}-{architecture}" if architecture else str(library["internal_api"])
            break
    return name + ("-numpy-AVX512" if _numpy_dispatches_avx512() else "")


def _numpy_dispatches_avx512() -> bool:
    """Whether numpy's ufuncs run their AVX-512 (Skylake-X level) code on this processor: the
    processor has it and it is neither disabled (``NPY_DISABLE_CPU_FEATURES``) nor beyond the build.
    Read from numpy's public introspection (numpy >= 2.0): the target its float64 ``exp`` runs."""
    try:
        from numpy.lib.introspect import opt_func_info
    except ImportError:  # numpy < 2.0: its private dispatch tables
        from numpy.core._multiarray_umath import __cpu_dispatch__, __cpu_features__

        return "AVX512_SKX" in __cpu_dispatch__ and bool(__cpu_features__.get("AVX512_SKX"))
    targets = opt_func_info(func_name="exp", signature="float64").get("exp", {})
    return any(str(t.get("current", "")).startswith("AVX512_SKX") for t in targets.values())


def record_family(family: Family) -> dict:
    sessions = [record_session(family, config, seed) for config in family.configs for seed in SEEDS]
    return {
        "format": FORMAT,
        "family": family.name,
        "optimizer": family.optimizer,
        "blas_kernel": blas_kernel(),
        "configs": family.configs,
        "notes": family.notes,
        "seeds": list(SEEDS),
        "regenerate": f".venv/bin/python -m tests.golden.record {family.name}",
        "sessions": sessions,
    }


def path(name: str, kernel: str) -> Path:
    """The golden file of a family for a BLAS kernel."""
    return FOLDER / f"{name}.{kernel}.json"


def golden_files(name: str) -> list[Path]:
    """Every golden file of a family, one per kernel."""
    return sorted(FOLDER.glob(f"{name}.*json"))


def load(name: str, kernel: str) -> dict:
    return json.loads(path(name, kernel).read_text())


def mismatch(expected, actual, where: str = "") -> str | None:
    """Where ``actual`` differs from ``expected`` (JSON values; floats to :data:`REL_TOL`), or None."""
    if isinstance(expected, bool) or isinstance(actual, bool) or isinstance(expected, str):
        return None if expected == actual and type(expected) is type(actual) else f"{where}: {expected!r} != {actual!r}"
    if isinstance(expected, (int, float)):
        if isinstance(actual, (int, float)) and math.isclose(expected, actual, rel_tol=REL_TOL, abs_tol=ABS_TOL):
            return None
        return f"{where}: {expected!r} != {actual!r}"
    if isinstance(expected, dict):
        if not isinstance(actual, dict) or expected.keys() != actual.keys():
            return f"{where}: keys {sorted(expected)} != {actual!r}"
        for key in expected:
            found = mismatch(expected[key], actual[key], f"{where}.{key}")
            if found:
                return found
        return None
    if not isinstance(actual, (list, tuple)) or len(expected) != len(actual):
        return f"{where}: {expected!r} != {actual!r}"
    for i, (e, a) in enumerate(zip(expected, actual)):
        found = mismatch(e, a, f"{where}[{i}]")
        if found:
            return found
    return None


def replay_session(family: Family, session: dict) -> str | None:
    """Replay a recorded session, telling the recorded answers: the first difference, or None."""
    options = family.configs[session["config"]]
    optimizer = family.make(options, session["seed"])
    for t, trial in enumerate(session["trials"], start=1):
        query = optimizer.ask()
        found = mismatch(trial["query"], family.encode(query), f"trial {t} query")
        if found:
            return found
        optimizer.tell(query, family.decode(trial["answer"]))
    return mismatch(session["best"], _best(optimizer), f"best after {len(session['trials'])} trials")


def dumps(data: dict) -> str:
    """The golden file's text: one line per trial, so that a diff shows which decisions moved."""
    head = {k: v for k, v in data.items() if k != "sessions"}
    lines = ["{", *(f" {json.dumps(k)}: {json.dumps(v)}," for k, v in head.items()), ' "sessions": [']
    for i, session in enumerate(data["sessions"]):
        lines.append(f'  {{"config": {json.dumps(session["config"])}, "seed": {session["seed"]}, "trials": [')
        lines += [f"   {json.dumps(trial)}," for trial in session["trials"]]
        lines[-1] = lines[-1].rstrip(",")
        lines.append(f'  ], "best": {json.dumps(session["best"])}}}' + ("," if i + 1 < len(data["sessions"]) else ""))
    lines += [" ]", "}"]
    return "\n".join(lines) + "\n"


def main(args) -> None:
    """Record this kernel's file of each family named (all by default); without ``--add`` (a change
    meant to change decisions) the family's files of other kernels are removed: they no longer hold."""
    add = "--add" in args
    names = [a for a in args if a != "--add"]
    unknown = [n for n in names if n not in FAMILIES]
    if unknown:
        sys.exit(
            f"record: unknown famil{'ies' if len(unknown) > 1 else 'y'} {', '.join(unknown)}; choose from {', '.join(FAMILIES)}"
        )
    kernel = blas_kernel()
    for name in names or FAMILIES:
        with threadpool_limits(1, user_api="blas"):  # one thread, as the tests run (tests/conftest.py)
            data = record_family(FAMILIES[name])
        target = path(name, kernel)
        if not add:
            for stale in golden_files(name):
                if stale != target:
                    stale.unlink()
                    print(f"removed {stale} (another kernel's decisions, before this change)")
        target.write_text(dumps(data))
        print(f"wrote {target} ({len(data['sessions'])} sessions, BLAS kernel {kernel})")


if __name__ == "__main__":
    main(sys.argv[1:])
