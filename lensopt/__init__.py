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

__version__ = "0.1.0"

__all__ = ["ContextualOptimizer", "RefractionOptimizer", "Trial", "__version__"]


def __getattr__(name):  # lazy, so `import lensopt` stays cheap for the CLI
    if name in ("RefractionOptimizer", "ContextualOptimizer"):
        from lensopt import binary, refraction  # deferred: numpy/scipy, not needed by `lensopt --help`

        return getattr(refraction if name == "RefractionOptimizer" else binary, name)
    if name == "Trial":
        from lensopt.refraction.trial import Trial  # deferred: as above (PEP 562 lazy attribute)

        return Trial
    raise AttributeError(f"module 'lensopt' has no attribute {name!r}")
