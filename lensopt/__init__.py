"""lensopt: find a patient's optical correction from a letter-acuity task.

The numerical core (``lensopt.gp``, ``lensopt.acquisition``, ``lensopt.optimize``,
``lensopt.observer``, ``lensopt.bench``) imports only numpy and scipy (and threadpoolctl, which
``lensopt.threads`` uses to run each decision on one BLAS thread); the PsychoPy experiment
(``lensopt.experiment``) and the Qt dashboard (``lensopt.dashboard``) import the core, never the
reverse.
"""

import os as _os

# The GP matrices here are small (n ≤ a few hundred): one BLAS thread is several times faster
# than many threads competing for two cores. The real limit is applied per call, by the
# optimizers' ask/tell/best_* methods (``lensopt.threads.single_threaded``, threadpoolctl), so it
# holds whatever the import order; LENSOPT_BLAS_THREADS sets it (default 1, 0 = no limit). These
# variables are a harmless extra, for the ``lensopt`` command: they only take effect when lensopt
# is imported before numpy, and they do not override values you set yourself.
for _name in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
    _os.environ.setdefault(_name, "1")

#: The package version (pyproject.toml reads it here). Raised with every new database layout
#: (``lensopt.store.schema.FIRST_WRITTEN_BY``), so that an upgrade is one ``pip install --upgrade``.
__version__ = "0.2.0"

#: The names ``lensopt.X`` gives, and the module each lives in (loaded on first use).
_EXPORTS = {
    "AcuityLawOptimizer": "lensopt.refraction.acuity_law",
    "ContextualOptimizer": "lensopt.binary.optimizer",
    "Lens": "lensopt.refraction.lens",
    "PrescriptionOptimizer": "lensopt.refraction.prescription_letters",
    "RefractionOptimizer": "lensopt.refraction.letters",
    "StopRule": "lensopt.stopping",
    "Trial": "lensopt.refraction.trial",
}

__all__ = [*sorted(_EXPORTS), "__version__"]


def __getattr__(name):  # lazy, so `import lensopt` stays cheap for the CLI (PEP 562)
    if name not in _EXPORTS:
        raise AttributeError(f"module 'lensopt' has no attribute {name!r}")
    import importlib  # deferred with the rest: numpy/scipy, not needed by `lensopt --help`

    return getattr(importlib.import_module(_EXPORTS[name]), name)


def __dir__():  # the lazy names too, for tab completion (they are not in globals() until used)
    return sorted({*globals(), *__all__})
