"""Values the ``lensopt`` parsers need before any handler runs, written here as literals.

The parsers show these in ``--help`` (and use some as ``choices`` or defaults). The modules that
own them import numpy or scipy (``lensopt.binary.settings`` imports ``scipy.stats`` for ``Φ⁻¹``), which
would make ``lensopt --help`` take the better part of a second; so they are copied here, and
``tests/test_packaging.py`` checks every one of them against its source. Change both together.
"""

from __future__ import annotations

#: ``lensopt.binary.settings.ALL_RULES``: acquisition rules of the binary (letter) optimizer.
ALL_RULES = ("ucb-ald", "ts-ald", "cbkg", "ucb-random", "bald", "ts-random", "random", "ucbf-ald", "ei-ald")

#: ``lensopt.refraction.acuity_law_settings.ACUITY_LAW_RULE``: the letter rule of the acuity-law optimizer.
ACUITY_LAW_RULE = "acuity-law"

#: ``lensopt.binary.settings.INFERENCE_METHODS``.
INFERENCE_METHODS = ("laplace", "ep")

#: ``lensopt.preference.CONTEXTUAL_RULES``: rules of the contextual duel (probit) optimizer.
CONTEXTUAL_DUEL_RULES = ("muc-ald", "kss-ald", "muc-random", "kss-random", "bald", "random")

#: ``lensopt.refraction.LETTER_BETA``: β of UCB_Φ with issue 14's letter model (the default).
LETTER_BETA = 4.5

#: ``lensopt.refraction.REFRACTION_BETA``, Φ⁻¹(0.99) to 3 decimals (the probit letter model).
REFRACTION_BETA_3 = 2.326

#: ``lensopt.binary.settings.PAPER_BETA``, Φ⁻¹(0.95) to 3 decimals (the contextual paper's β).
PAPER_BETA_3 = 1.645

#: ``lensopt.observer.patient.PATIENT_SLOPE_PER_LOGMAR``: a simulated patient's slope (logMAR⁻¹).
PATIENT_SLOPE = 5.0

#: ``lensopt.observer.population.CLINIC_SLOPE_PER_LOGMAR``: a simulated clinic patient's slope (the
#: full prescription's).
CLINIC_SLOPE = 14.0

#: ``lensopt.refraction.DEFAULT_MODEL_LAPSE``.
DEFAULT_MODEL_LAPSE = 0.02

#: ``lensopt.bench.preferential.DUEL_DEFAULTS``: campaign -> (iterations, seeds, initial, rules).
DUEL_DEFAULTS = {
    "duels": (
        80,
        40,
        5,
        ("muc", "dueling-ucb", "bivariate-ei", "duel-ts", "dueling-ts", "kss", "eiig", "ei", "random"),
    ),
    "batch-duels": (30, 30, 5, ("muc", "kss", "random")),
    "contextual-duels": (60, 40, 5, ("muc-ald", "kss-ald", "kss-random", "bald", "random")),
}

#: ``lensopt.bench.feedback.FEEDBACK_RULES`` and the feedback campaign's defaults: trials per session,
#: patients, slope, tie threshold (``FEEDBACK_TRIALS``, ``FEEDBACK_PATIENTS``, ...).
FEEDBACK_RULES = ("letters", "duel-drop-ties", "duel-ties")
FEEDBACK_TRIALS, FEEDBACK_PATIENTS, FEEDBACK_SLOPE, FEEDBACK_TIE_THRESHOLD = 100, 20, 5.0, 1.0

#: ``lensopt.bench.robustness.CONDITIONS`` as (name, patients, trials), and its ``ROBUSTNESS_RULES``.
ROBUSTNESS_CONDITIONS = (
    ("slope-5", 200, 100),
    ("slope-2", 100, 260),
    ("slope-8", 100, 100),
    ("slope-5-lapse-0.05", 100, 100),
    ("slope-5-sloan", 100, 100),
)
#: ``lensopt.bench.robustness.EXTRA_CONDITIONS``: run only when named.
ROBUSTNESS_EXTRA_CONDITIONS = (("varied", 200, 100),)
ROBUSTNESS_RULES = ("ucb-ald", "ts-ald", "acuity-law", "ideal")

#: ``lensopt.bench.runner.HELD_OUT_FIRST_SEED``: patients from this seed on are held out.
HELD_OUT_FIRST_SEED = 100_000

#: ``lensopt.experiment.protocol.shipped_protocols()`` (``protocols/*.toml``), in the order ``run --help`` names them.
SHIPPED_PROTOCOLS = (
    "clinical-refraction",
    "clinical-prescription",
    "clinical-duel",
    "clinical-prescription-duel",
    "clinical-prescription-ranking",
    "clinical-ranking",
    "research-26afc",
    "sloan-10afc",
    "demo-simulated",
)

#: The benchmark campaigns' paper defaults (seed paper §4.1 and §5.3; METHOD.md §6).
FUNCTION_RULES = ("ucb-ald", "ts-ald", "cbkg", "ucb-random", "bald", "ts-random", "random")
REFRACTION_RULES = ("ucb-ald", "ts-ald", "ucb-random", "bald", "ts-random", "random")
FUNCTION_ITERATIONS, FUNCTION_SEEDS, INITIAL_SAMPLES = 60, 40, 5
REFRACTION_TRIALS, REFRACTION_REPETITIONS = 260, 20
#: The reported optimum is searched after trial 1, every REPORT_EVERY trials and the last (the
#: search costs as much as a decision; the final value and the checkpoints 30/60/100 are exact).
REPORT_EVERY = 5
