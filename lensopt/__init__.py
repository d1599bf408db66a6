"""lensopt: find a patient's optical correction from a letter-acuity task.

The numerical core (``lensopt.gp``, ``lensopt.acquisition``, ``lensopt.optimize``,
``lensopt.observer``, ``lensopt.bench``) imports only numpy and scipy; the PsychoPy experiment
(``lensopt.experiment``) and the Qt dashboard (``lensopt.dashboard``) import the core, never the
reverse.
"""

__version__ = "0.1.0"

__all__ = ["__version__", "RefractionOptimizer", "ContextualOptimizer", "Trial"]


def __getattr__(name):  # lazy, so `import lensopt` stays cheap for the CLI
    if name in ("RefractionOptimizer", "ContextualOptimizer"):
        from lensopt import optimizer

        return getattr(optimizer, name)
    if name == "Trial":
        from lensopt.trial import Trial

        return Trial
    raise AttributeError(f"module 'lensopt' has no attribute {name!r}")
